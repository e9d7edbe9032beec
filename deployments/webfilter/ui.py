"""The admin UI at `/` (under Serve: `/webfilter/`): one HTML page and the ES modules and stylesheet of
`static/` (with the platform's shared `dom.js`), served by `rayfleet.staticpage` under its strict CSP.

The UI calls the same API routes as any client, with the bearer token `POST /api/auth/login` gives.
"""

from __future__ import annotations

from deployments.webfilter.errors import ApiError
from rayfleet.staticpage import assets, page_router

PAGE, ASSETS = assets("deployments.webfilter")
router = page_router("deployments.webfilter", missing=lambda: ApiError(404, "no such file"))
