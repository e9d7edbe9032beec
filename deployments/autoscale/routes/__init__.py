"""The autoscale API's routers, one module per resource: public (`/metrics`, `/health/check`),
`/resource/*` and `/scale/*` (both behind the API key and the rate limit)."""

from . import decisions, public, resource, scale

__all__ = ["decisions", "public", "resource", "scale"]
