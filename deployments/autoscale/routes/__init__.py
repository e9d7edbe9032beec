"""The autoscale API's routers, one module per resource: public (`/metrics`, `/health/check`),
`/resource/*` and `/scale/*` (both behind the API key and the rate limit)."""

from . import public, resource, scale

__all__ = ["public", "resource", "scale"]
