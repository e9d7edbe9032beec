"""Blacklists, whitelists and the egress allowlist: every change is rendered into Squid at once.

The five lists share their routes: `ListRoutes` holds one list's spec, and its handlers are bound
methods added to the module's router (the list is the handler's explicit state, not a closure).
"""

from __future__ import annotations

import abc
from typing import Any

from fastapi import APIRouter, Path, Query

from actors.webfilter.dataplane import DataPlaneError
from actors.webfilter.entries import EntryError, classify, domain_rule, ip_entry, parse_list
from deployments.webfilter.errors import AUTH_ERRORS, ApiError, errors, ok, page, public_message
from deployments.webfilter.imports import country_prefixes, import_list
from deployments.webfilter.routes.common import SIGNED_IN, Ctx, Peer
from deployments.webfilter.schemas import (
    SQLITE_MAX_INT,
    DomainBody,
    EgressBody,
    Envelope,
    GeoImportBody,
    IdsBody,
    ImportBody,
    IpBody,
    UnifiedImportBody,
)
from deployments.webfilter.state import WebfilterState
from deployments.webfilter.store import LISTS

router = APIRouter(tags=["lists"], dependencies=[SIGNED_IN], responses=AUTH_ERRORS)
IMPORT_ERRORS = errors(400, 413, 502)
Responses = dict[int | str, dict[str, Any]]


def _normalise(body: IpBody | DomainBody | EgressBody) -> tuple[str, str | None]:
    try:
        if isinstance(body, IpBody):
            return ip_entry(body.ip), None
        if isinstance(body, DomainBody):
            return domain_rule(body.domain), None
        kind, value = classify(body.entry)
        return value, kind
    except EntryError as exc:
        raise ApiError(400, str(exc)) from None


async def _changed(context: WebfilterState, ip: str, action: str, detail: str) -> dict[str, Any]:
    await context.db(context.store.audit, None, ip, action, detail)
    return await context.sync_proxy()


class ListRoutes(abc.ABC):
    """The routes of one list `/api/{name}`; `bulk` adds bulk-delete and clear-all. Subclasses name the
    body of an addition (IpBody, DomainBody or EgressBody)."""

    def __init__(self, name: str, bulk: bool) -> None:
        self.name = name
        self.spec = LISTS[name]
        self.bulk = bulk

    async def list_entries(
        self,
        context: Ctx,
        limit: int = Query(100, ge=1, le=1000),
        offset: int = Query(0, ge=0, le=SQLITE_MAX_INT),
        search: str | None = Query(None, max_length=200),
    ) -> dict[str, Any]:
        items, total = await context.db(context.store.list_entries, self.spec, limit, offset, search)
        return page(items, total, limit, offset)

    async def _add(self, context: WebfilterState, ip: str, body: IpBody | DomainBody | EgressBody) -> dict[str, Any]:
        value, kind = _normalise(body)
        row = await context.db(context.store.add_entry, self.spec, value, body.description, kind)
        if row is None:
            raise ApiError(409, f"{value} is already on the {self.name}")
        try:
            proxy = await _changed(context, ip, f"{self.name}.add", value)
        except DataPlaneError as exc:  # Squid refused the candidate: it keeps the last good one, and so do we
            await context.db(context.store.delete_entries, self.spec, [int(row["id"])])
            reason = public_message(exc, "list entry refused by the proxy")
            raise ApiError(400, f"{value} not added: {reason}") from None
        return ok(row, proxy=proxy)

    async def delete_entry(
        self, context: Ctx, ip: Peer, id: int = Path(..., ge=1, le=SQLITE_MAX_INT)
    ) -> dict[str, Any]:
        if not await context.db(context.store.delete_entries, self.spec, [id]):
            raise ApiError(404, f"no {self.name} entry with id {id}")
        return ok({"deleted": 1}, proxy=await _changed(context, ip, f"{self.name}.delete", str(id)))

    async def bulk_delete(self, context: Ctx, ip: Peer, body: IdsBody) -> dict[str, Any]:
        deleted = await context.db(context.store.delete_entries, self.spec, body.ids)
        return ok({"deleted": deleted}, proxy=await _changed(context, ip, f"{self.name}.bulk_delete", str(deleted)))

    async def clear_all(self, context: Ctx, ip: Peer) -> dict[str, Any]:
        deleted = await context.db(context.store.clear, self.spec)
        return ok({"deleted": deleted}, proxy=await _changed(context, ip, f"{self.name}.clear", str(deleted)))

    @abc.abstractmethod
    async def add_entry(self, context: Ctx, ip: Peer, body: Any) -> dict[str, Any]:
        """Each subclass declares its body model."""

    def register(self) -> None:
        """Add this list's routes to the router (bulk routes first: `/clear-all` is not an `{id}`)."""
        base = f"/api/{self.name}"
        routes: list[tuple[str, str, Any, str, Responses]] = [
            ("GET", base, self.list_entries, f"List the {self.name} (paginated)", {}),
            ("POST", base, self.add_entry, f"Add to the {self.name}", errors(400, 409)),
            ("DELETE", base + "/{id}", self.delete_entry, f"Delete one {self.name} entry", errors(404)),
        ]
        if self.bulk:
            routes[:0] = [
                ("POST", base + "/bulk-delete", self.bulk_delete, f"Delete several {self.name} entries by id", {}),
                ("DELETE", base + "/clear-all", self.clear_all, f"Empty the {self.name}", {}),
            ]
        for method, path, endpoint, summary, responses in routes:
            router.add_api_route(
                path,
                endpoint,
                methods=[method],
                name=endpoint.__name__,
                response_model=Envelope,
                summary=summary,
                responses=responses,
            )


class IpList(ListRoutes):
    async def add_entry(self, context: Ctx, ip: Peer, body: IpBody) -> dict[str, Any]:
        return await self._add(context, ip, body)


class DomainList(ListRoutes):
    async def add_entry(self, context: Ctx, ip: Peer, body: DomainBody) -> dict[str, Any]:
        return await self._add(context, ip, body)


class EgressList(ListRoutes):
    async def add_entry(self, context: Ctx, ip: Peer, body: EgressBody) -> dict[str, Any]:
        return await self._add(context, ip, body)


class ListImport:
    """`POST /api/{name}/import` of a list of `kind` ('ip' or 'domain')."""

    def __init__(self, name: str, kind: str) -> None:
        self.name = name
        self.kind = kind

    async def import_entries(self, context: Ctx, body: ImportBody) -> dict[str, Any]:
        return ok(await import_list(context, self.kind, body.url, body.content, body.description))

    def register(self) -> None:
        router.add_api_route(
            f"/api/{self.name}/import",
            self.import_entries,
            methods=["POST"],
            name="import_entries",
            response_model=Envelope,
            responses=IMPORT_ERRORS,
            summary=f"Import into the {self.name} from a URL or inline content (hosts, plain, adblock, CIDR)",
        )


LIST_ROUTES: tuple[ListRoutes | ListImport, ...] = (
    IpList("ip-blacklist", bulk=True),
    DomainList("domain-blacklist", bulk=True),
    IpList("ip-whitelist", bulk=False),
    DomainList("domain-whitelist", bulk=False),
    EgressList("egress-allowlist", bulk=True),
    DomainList("tls-splice", bulk=True),
    ListImport("ip-blacklist", "ip"),
    ListImport("domain-blacklist", "domain"),
)
for _routes in LIST_ROUTES:
    _routes.register()


@router.post(
    "/api/blacklists/import", response_model=Envelope, responses=IMPORT_ERRORS, summary="Import an IP or domain list"
)
async def import_unified(context: Ctx, body: UnifiedImportBody) -> dict[str, Any]:
    return ok(await import_list(context, body.type, body.url, body.content, body.description))


@router.post(
    "/api/blacklists/import-geo",
    response_model=Envelope,
    responses=errors(400, 502),
    summary="Blacklist every prefix of the given countries (from the ASN API over HTTP)",
)
async def import_geo(context: Ctx, ip: Peer, body: GeoImportBody) -> dict[str, Any]:
    codes = [c.strip().upper() for c in body.countries]
    if not all(len(c) == 2 and c.isascii() and c.isalpha() for c in codes):
        raise ApiError(400, "countries must be ISO 3166 alpha-2 codes")
    per_country: dict[str, int] = {}
    added, bogons = 0, 0
    for code in codes:
        prefixes = await country_prefixes(context, code)
        parsed = parse_list("\n".join(prefixes), "ip")
        bogons += parsed.bogon_skipped
        count = await context.db(context.store.add_many, LISTS["ip-blacklist"], parsed.entries, f"GeoIP: {code}")
        per_country[code] = count
        added += count
    sync = await _changed(context, ip, "blacklists.import_geo", ",".join(codes))
    return ok({"added": added, "countries": per_country, "bogon_skipped": bogons, "source": "asn-api", "proxy": sync})
