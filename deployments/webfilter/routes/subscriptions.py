"""List subscriptions (`/api/blacklists/subscriptions`): blocklists the proxy actor downloads and refreshes
in the background (see actors/webfilter/subscriptions.py). A route that starts a refresh (add, refresh now)
answers once that refresh is recorded, so its answer carries the entry count or the error."""

from __future__ import annotations

import asyncio
import time
from typing import Any
from urllib.parse import urlsplit

from fastapi import APIRouter, Path

from actors.webfilter.fetch import resolve
from actors.webfilter.proxy import ProxyOwner
from actors.webfilter.subscriptions import SubscriptionError, address_check, check_url
from deployments.webfilter.errors import AUTH_ERRORS, ApiError, cause, errors, ok, page
from deployments.webfilter.routes.common import SIGNED_IN, Ctx, Peer
from deployments.webfilter.schemas import SQLITE_MAX_INT, Envelope, SubscriptionBody
from deployments.webfilter.state import WebfilterState
from rayfleet.state import call

router = APIRouter(tags=["subscriptions"], dependencies=[SIGNED_IN], responses=AUTH_ERRORS)
ROUTE = "/api/blacklists/subscriptions"
FIRST_REFRESH_WAIT = 30.0  # a fetch times out after 15 s per hop; the answer then says "not yet refreshed"


async def _check_target(context: WebfilterState, url: str) -> None:
    """400 now for a URL that could never be fetched (scheme, credentials, an address outside the allowed
    ones), rather than a subscription that only ever records errors. Each refresh checks again."""
    try:
        check_url(url)
    except SubscriptionError as exc:
        raise ApiError(exc.status, exc.detail) from None
    parts = urlsplit(url)
    try:
        addresses = await resolve(parts.hostname or "", parts.port or 80)
    except OSError:
        raise ApiError(400, "the subscription URL's host does not resolve") from None
    allowed = address_check(tuple(context.config.subscriptions.allow_networks))
    if not addresses or not all(allowed(a) for a in addresses):
        raise ApiError(400, "the subscription URL resolves to a non-public address")


async def _refreshed(context: WebfilterState, view: dict[str, Any]) -> dict[str, Any]:
    """The subscription once the refresh after `view` is recorded (at most FIRST_REFRESH_WAIT seconds)."""
    deadline = time.monotonic() + FIRST_REFRESH_WAIT
    while time.monotonic() < deadline:
        current = await call(context.proxy, ProxyOwner.subscription, int(view["id"]))
        if current is None or current["refreshes"] > view["refreshes"]:
            return current or view
        await asyncio.sleep(0.05)
    return view


@router.get(ROUTE, response_model=Envelope, summary="List subscriptions with their entry counts and refresh state")
async def list_subscriptions(context: Ctx) -> dict[str, Any]:
    items = await call(context.proxy, ProxyOwner.subscriptions)
    return page(items, len(items), max(len(items), 1), 0)


@router.post(
    ROUTE, response_model=Envelope, responses=errors(400, 409), summary="Subscribe to a list URL (fetched at once)"
)
async def add_subscription(context: Ctx, ip: Peer, body: SubscriptionBody) -> dict[str, Any]:
    await _check_target(context, body.url)
    try:
        view = await call(
            context.proxy, ProxyOwner.subscribe, body.url, body.type, float(body.interval_seconds), body.description
        )
    except SubscriptionError as exc:
        original = cause(exc)
        raise ApiError(getattr(original, "status", 400), getattr(original, "detail", "subscription refused")) from None
    await context.db(context.store.audit, None, ip, "subscriptions.add", body.url)
    return ok(await _refreshed(context, view))


@router.post(
    ROUTE + "/{id}/refresh", response_model=Envelope, responses=errors(404), summary="Refresh a subscription now"
)
async def refresh_subscription(context: Ctx, id: int = Path(..., ge=1, le=SQLITE_MAX_INT)) -> dict[str, Any]:
    view = await call(context.proxy, ProxyOwner.refresh_subscription, id)
    if view is None:
        raise ApiError(404, f"no subscription with id {id}")
    return ok(await _refreshed(context, view))


@router.delete(ROUTE + "/{id}", response_model=Envelope, responses=errors(404), summary="Remove a subscription")
async def delete_subscription(context: Ctx, ip: Peer, id: int = Path(..., ge=1, le=SQLITE_MAX_INT)) -> dict[str, Any]:
    if not await call(context.proxy, ProxyOwner.unsubscribe, id):
        raise ApiError(404, f"no subscription with id {id}")
    await context.db(context.store.audit, None, ip, "subscriptions.delete", str(id))
    return ok({"deleted": 1})
