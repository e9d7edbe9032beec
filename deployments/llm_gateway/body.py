"""Reading a request body under a size cap: refused with 413 before it is read in full."""

from __future__ import annotations

from starlette.requests import Request

from deployments.llm_gateway.errors import GatewayError


def _too_large(limit: int) -> GatewayError:
    return GatewayError(413, f"Request body exceeds {limit // 1024} KB", error_class="payload_size")


async def read_capped(request: Request, limit: int) -> bytes:
    """The body, or 413 as soon as the declared length or the bytes received pass ``limit``.

    ``limit`` <= 0 reads without a cap.
    """
    declared = request.headers.get("content-length")
    if limit > 0 and declared and declared.isdigit() and int(declared) > limit:
        raise _too_large(limit)
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if limit > 0 and size > limit:
            raise _too_large(limit)
        chunks.append(chunk)
    return b"".join(chunks)
