"""A cap on request bodies for the whole app (api.max_body_bytes), checked before anything parses them.

A declared `Content-Length` over the cap is answered 413 at once, without reading; a body
streamed without one is counted as it arrives and refused the moment it passes the cap.
"""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .errors import too_large


class BodyTooLarge(HTTPException):
    """Raised from `receive` once a streamed body passes the cap; rendered by the app's handler as 413."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"The request body is larger than the limit of {limit} bytes (api.max_body_bytes).")


class BodyLimitMiddleware:
    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = next((v for k, v in scope.get("headers", ()) if k == b"content-length"), None)
        if declared is not None and declared.isdigit() and (len(declared) > 18 or int(declared) > self.limit):
            await too_large(self.limit)(scope, receive, send)
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise BodyTooLarge(self.limit)
            return message

        await self.app(scope, counted, send)
