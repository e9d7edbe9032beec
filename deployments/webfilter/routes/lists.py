"""Blacklists, whitelists and the egress allowlist: every change is rendered into Squid at once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Path, Query, Request

from deployments.webfilter import auth
from deployments.webfilter.context import ctx, peer
from deployments.webfilter.entries import EntryError, classify, domain_entry, ip_entry, parse_list
from deployments.webfilter.errors import AUTH_ERRORS, ApiError, errors, ok, page
from deployments.webfilter.imports import country_prefixes, import_list
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
from deployments.webfilter.store import LISTS, ListSpec

router = APIRouter(tags=["lists"], dependencies=[auth.User], responses=AUTH_ERRORS)
IMPORT_ERRORS = errors(400, 413, 502)


def _normalise(spec: ListSpec, body: Any) -> tuple[str, str | None]:
    try:
        if spec.kind == "ip":
            return ip_entry(body.ip), None
        if spec.kind == "domain":
            return domain_entry(body.domain), None
        kind, value = classify(body.entry)
        return value, kind
    except EntryError as exc:
        raise ApiError(400, str(exc)) from None


async def _changed(request: Request, action: str, detail: str) -> dict:
    context = ctx(request)
    await context.db(context.store.audit, None, peer(request), action, detail)
    return await context.sync_proxy()


def _register(name: str, body_model: type, bulk: bool) -> None:
    spec = LISTS[name]
    base = f"/api/{name}"

    async def list_entries(
        request: Request,
        limit: int = Query(100, ge=1, le=1000),
        offset: int = Query(0, ge=0, le=SQLITE_MAX_INT),
        search: str | None = Query(None, max_length=200),
    ) -> dict:
        context = ctx(request)
        items, total = await context.db(context.store.list_entries, spec, limit, offset, search)
        return page(items, total, limit, offset)

    async def add_entry(request: Request, body: Any) -> dict:
        context = ctx(request)
        value, kind = _normalise(spec, body)
        row = await context.db(context.store.add_entry, spec, value, body.description, kind)
        if row is None:
            raise ApiError(409, f"{value} is already on the {name}")
        return ok(row, proxy=await _changed(request, f"{name}.add", value))

    add_entry.__annotations__["body"] = body_model

    async def delete_entry(request: Request, id: int = Path(..., ge=1, le=SQLITE_MAX_INT)) -> dict:
        context = ctx(request)
        if not await context.db(context.store.delete_entries, spec, [id]):
            raise ApiError(404, f"no {name} entry with id {id}")
        return ok({"deleted": 1}, proxy=await _changed(request, f"{name}.delete", str(id)))

    routes: list[tuple[str, str, Callable[..., Any], str, dict[int | str, dict[str, Any]]]] = [
        ("GET", base, list_entries, f"List the {name} (paginated)", {}),
        ("POST", base, add_entry, f"Add to the {name}", errors(400, 409)),
        ("DELETE", base + "/{id}", delete_entry, f"Delete one {name} entry", errors(404)),
    ]
    if bulk:

        async def bulk_delete(request: Request, body: IdsBody) -> dict:
            context = ctx(request)
            deleted = await context.db(context.store.delete_entries, spec, body.ids)
            return ok({"deleted": deleted}, proxy=await _changed(request, f"{name}.bulk_delete", str(deleted)))

        async def clear_all(request: Request) -> dict:
            context = ctx(request)
            deleted = await context.db(context.store.clear, spec)
            return ok({"deleted": deleted}, proxy=await _changed(request, f"{name}.clear", str(deleted)))

        routes[:0] = [
            ("POST", base + "/bulk-delete", bulk_delete, f"Delete several {name} entries by id", {}),
            ("DELETE", base + "/clear-all", clear_all, f"Empty the {name}", {}),
        ]
    for method, path, endpoint, summary, responses in routes:
        router.add_api_route(
            path, endpoint, methods=[method], response_model=Envelope, summary=summary, responses=responses
        )


def _register_import(name: str, kind: str) -> None:
    async def import_entries(request: Request, body: ImportBody) -> dict:
        result = await import_list(ctx(request), kind, body.url, body.content, body.description)
        return ok(result)

    router.add_api_route(
        f"/api/{name}/import",
        import_entries,
        methods=["POST"],
        response_model=Envelope,
        responses=IMPORT_ERRORS,
        summary=f"Import into the {name} from a URL or inline content (hosts, plain, adblock, CIDR)",
    )


_register("ip-blacklist", IpBody, bulk=True)
_register("domain-blacklist", DomainBody, bulk=True)
_register("ip-whitelist", IpBody, bulk=False)
_register("domain-whitelist", DomainBody, bulk=False)
_register("egress-allowlist", EgressBody, bulk=True)
_register_import("ip-blacklist", "ip")
_register_import("domain-blacklist", "domain")


@router.post(
    "/api/blacklists/import", response_model=Envelope, responses=IMPORT_ERRORS, summary="Import an IP or domain list"
)
async def import_unified(request: Request, body: UnifiedImportBody) -> dict:
    return ok(await import_list(ctx(request), body.type, body.url, body.content, body.description))


@router.post(
    "/api/blacklists/import-geo",
    response_model=Envelope,
    responses=errors(400, 502),
    summary="Blacklist every prefix of the given countries (from the ASN API over HTTP)",
)
async def import_geo(request: Request, body: GeoImportBody) -> dict:
    context = ctx(request)
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
    sync = await _changed(request, "blacklists.import_geo", ",".join(codes))
    return ok({"added": added, "countries": per_country, "bogon_skipped": bogons, "source": "asn-api", "proxy": sync})
