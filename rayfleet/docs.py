"""Interactive API docs that work without internet access.

FastAPI's /docs and /redoc pages load Swagger UI and ReDoc from a public CDN,
so on a self-hosted network without outbound access they render blank. This
replaces those two pages with ones that load the same assets from the
`fastapi-offline` package, served by the app itself. URLs are built from the
ASGI ``root_path``, so the pages work behind a Serve route prefix (``/asn``).
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

ASSETS_PATH = "/_rayfleet/docs-assets"


def assets_dir() -> Path:
    import fastapi_offline

    return Path(fastapi_offline.__file__).parent / "static"


def use_local_docs_assets(app: FastAPI) -> None:
    """Serve the app's `docs_url` and `redoc_url` with locally bundled assets."""
    docs_url, redoc_url, openapi_url = app.docs_url, app.redoc_url, app.openapi_url
    if not openapi_url or not (docs_url or redoc_url):
        return
    replaced = {url for url in (docs_url, redoc_url) if url}
    app.router.routes[:] = [r for r in app.router.routes if getattr(r, "path", None) not in replaced]
    app.mount(ASSETS_PATH, StaticFiles(directory=assets_dir()), name="rayfleet-docs-assets")
    title = app.title

    def urls(request: Request) -> tuple[str, str]:
        root = request.scope.get("root_path", "").rstrip("/")
        return root + openapi_url, root + ASSETS_PATH

    if docs_url:

        @app.get(docs_url, include_in_schema=False)
        async def swagger_ui(request: Request) -> HTMLResponse:
            spec, assets = urls(request)
            return get_swagger_ui_html(
                openapi_url=spec,
                title=f"{title} - docs",
                swagger_js_url=f"{assets}/swagger-ui-bundle.js",
                swagger_css_url=f"{assets}/swagger-ui.css",
                swagger_favicon_url=f"{assets}/favicon.png",
            )

    if redoc_url:

        @app.get(redoc_url, include_in_schema=False)
        async def redoc(request: Request) -> HTMLResponse:
            spec, assets = urls(request)
            return get_redoc_html(
                openapi_url=spec,
                title=f"{title} - ReDoc",
                redoc_js_url=f"{assets}/redoc.standalone.js",
                redoc_favicon_url=f"{assets}/favicon.png",
                with_google_fonts=False,
            )
