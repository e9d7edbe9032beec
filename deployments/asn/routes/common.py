"""What the ASN routers share: the state dependency, the ready store, ETags, documented errors."""

from __future__ import annotations

import hashlib
from importlib import metadata
from typing import Annotated, Any

from fastapi import Depends

from deployments.asn import schemas
from deployments.asn.errors import ApiError
from deployments.asn.state import AsnState
from deployments.asn.store import AsnStore
from rayfleet.appstate import state_of

try:
    VERSION = metadata.version("rayfleet")
except metadata.PackageNotFoundError:  # running from a source tree without installing
    VERSION = "0.0.0"

Ctx = Annotated[AsnState, Depends(state_of(AsnState))]

ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": schemas.ErrorBody, "description": "malformed input"},
    403: {"model": schemas.ErrorBody, "description": "missing or invalid X-API-Key"},
    404: {"model": schemas.ErrorBody, "description": "not in the dataset"},
    429: {"model": schemas.ErrorBody, "description": "rate limit exceeded (see Retry-After)"},
    503: {"model": schemas.ErrorBody, "description": "dataset still loading or unavailable"},
}
CACHE_CONTROL = "private, max-age=3600"


def ready_store(state: AsnState) -> AsnStore:
    """The open dataset; 503 with `Retry-After` while it loads (or after loading failed).

    Called by each lookup after it checked its own input, so a malformed request is
    400 even while the dataset loads.
    """
    holder = state.dataset
    if holder.store is None:
        message = "dataset unavailable" if holder.phase == "failed" else f"dataset is loading ({holder.phase})"
        raise ApiError(503, message, headers={"Retry-After": "5"})
    return holder.store


def etag(store: AsnStore, key: str) -> str:
    """The opaque tag of one record in this dataset (unquoted)."""
    return hashlib.sha1(f"{store.meta.get('source_fingerprint')}|{key}".encode()).hexdigest()[:16]
