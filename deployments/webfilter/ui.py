"""The admin UI at `/` (under Serve: `/webfilter/`): one HTML page and the ES modules and stylesheet of
`static/` (with the platform's shared `dom.js`), served by `rayfleet.staticpage` under its strict CSP.

The UI calls the same API routes as any client, with the bearer token `POST /api/auth/login` gives.
One module is written here rather than in `static/`: `splice-categories.js`, the built-in TLS splice
categories and their domains from `actors/webfilter/splice.py`, so the TLS page shows what the setting
`tls_splice_categories` switches without a second copy of the lists (and the API has no route for them).
"""

from __future__ import annotations

import json

from fastapi import APIRouter
from starlette.responses import Response

from actors.webfilter.splice import SPLICE_CATEGORIES
from deployments.webfilter.errors import ApiError
from rayfleet.staticpage import SECURITY_HEADERS, assets, page_router

CATEGORIES_MODULE = "splice-categories.js"
CATEGORIES_SOURCE = (
    "// The built-in TLS splice categories (actors/webfilter/splice.py), written by deployments/webfilter/ui.py.\n"
    f"export const SPLICE_CATEGORIES = {json.dumps(SPLICE_CATEGORIES, indent=2)};\n"
)

PAGE, PACKAGE_ASSETS = assets("deployments.webfilter")
ASSETS = {**PACKAGE_ASSETS, CATEGORIES_MODULE: (CATEGORIES_SOURCE, "text/javascript")}

router = APIRouter(include_in_schema=False)


@router.get(f"/static/{CATEGORIES_MODULE}")
async def splice_categories() -> Response:
    return Response(CATEGORIES_SOURCE, media_type="text/javascript", headers=SECURITY_HEADERS)


router.include_router(page_router("deployments.webfilter", missing=lambda: ApiError(404, "no such file")))
