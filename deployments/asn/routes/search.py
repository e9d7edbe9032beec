"""Search AS numbers by name or organisation (API key; mounted by app.py under its guard).

The upper bound of ``limit`` is configuration (``search_max_results``), known only when
the app is built: app.py mounts this router with ``Depends(search_params(bound))``, whose
query parameters (validated and documented as the route's own) it hands to the route.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request
from starlette.responses import JSONResponse

from deployments.asn import schemas
from deployments.asn.routes.common import ERRORS, Ctx, ready_store

router = APIRouter(prefix="/api/v1", tags=["lookup"], responses=ERRORS)


@dataclass(frozen=True)
class SearchQuery:
    q: str
    country: str | None
    limit: int


def search_params(max_results: int) -> Callable[..., None]:
    """The dependency declaring /search's query parameters, ``limit`` at most ``max_results``."""

    def params(
        request: Request,
        q: str = Query(..., min_length=2, max_length=100, description="case-insensitive substring"),
        country: str | None = Query(None, pattern="^[A-Za-z]{2}$", description="ISO 3166 code"),
        limit: int = Query(20, ge=1, le=max_results),
    ) -> None:
        request.state.search_query = SearchQuery(q, country, limit)

    return params


_UNCHECKED = SearchQuery("", None, 0)


def _query(request: Request) -> SearchQuery:
    # unset only when the parameters failed validation: FastAPI then answers 422 without calling the route
    query: SearchQuery = getattr(request.state, "search_query", _UNCHECKED)
    return query


@router.get("/search", summary="Search AS numbers by name or organisation", response_model=schemas.SearchResult)
async def search(state: Ctx, query: Annotated[SearchQuery, Depends(_query)]) -> JSONResponse:
    db = ready_store(state)
    code = query.country.upper() if query.country else None
    results = db.search(query.q.strip(), code, query.limit)
    return JSONResponse(
        {"query": query.q, "country": code, "count": len(results), "results": results, "dataset": db.dataset()}
    )
