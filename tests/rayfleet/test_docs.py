import re

import httpx
from fastapi import FastAPI

from rayfleet.docs import ASSETS_PATH, use_local_docs_assets


def make_app() -> FastAPI:
    app = FastAPI(title="t", docs_url="/api/docs", redoc_url="/api/redoc", openapi_url="/api/openapi.json")

    @app.get("/api/ping")
    async def ping() -> dict:
        return {"ok": True}

    use_local_docs_assets(app)
    return app


async def test_docs_pages_load_assets_from_the_app_behind_a_prefix():
    transport = httpx.ASGITransport(make_app(), root_path="/asn")
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        for page in ("/api/docs", "/api/redoc"):
            html = (await client.get(page)).text
            assert "cdn.jsdelivr.net" not in html and "fonts.googleapis" not in html
            assert "/asn/api/openapi.json" in html
            assets = re.findall(r'(?:src|href)="(/asn' + re.escape(ASSETS_PATH) + r'/[^"]+)"', html)
            assert assets, html
            for url in assets:
                response = await client.get(url)  # ASGI: path carries root_path
                assert response.status_code == 200 and len(response.content) > 1000
        schema = (await client.get("/api/openapi.json")).json()
        assert "/api/ping" in schema["paths"] and not any(ASSETS_PATH in p for p in schema["paths"])
