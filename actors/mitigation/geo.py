"""Country prefixes for `geo_block`, from the ASN component's API over HTTP.

`GET {asn_url}/api/v1/country/{cc}/prefixes` with `X-API-Key` answers
`{"country": "US", "count": N, "prefixes": ["8.8.8.0/24", ...], "dataset": {...}}`;
the node writes the prefixes into its HAProxy `geo.map` (CIDR → country).
"""

from __future__ import annotations

import ipaddress
import re

import httpx

COUNTRY = re.compile(r"^[A-Z]{2}$")
MAX_PREFIXES = 500_000


class GeoError(Exception):
    """The ASN API could not give a country's prefixes (status: the HTTP status for our client)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def normalise_countries(countries: list[str]) -> list[str]:
    out = []
    for cc in countries:
        code = cc.strip().upper()
        if not COUNTRY.match(code):
            raise GeoError(422, f"countries: {cc!r} is not a two-letter country code")
        out.append(code)
    return sorted(set(out))


async def fetch_prefixes(
    asn_url: str, api_key: str, countries: list[str], timeout: float = 30.0
) -> dict[str, list[str]]:
    """{country: [prefix, ...]} for every country, or GeoError when the ASN API cannot answer."""
    if not asn_url:
        raise GeoError(409, "geo_block needs the ASN API: set asn_api.url in the mitigation config")
    out: dict[str, list[str]] = {}
    async with httpx.AsyncClient(base_url=asn_url.rstrip("/"), timeout=timeout, trust_env=False) as client:
        for cc in countries:
            try:
                response = await client.get(f"/api/v1/country/{cc}/prefixes", headers={"X-API-Key": api_key})
            except httpx.HTTPError as exc:
                raise GeoError(503, f"ASN API unreachable: {type(exc).__name__}") from None
            if response.status_code == 404:
                out[cc] = []
                continue
            if response.status_code != 200:
                raise GeoError(503, f"ASN API answered {response.status_code} for country {cc}")
            prefixes = response.json().get("prefixes", [])
            out[cc] = [str(ipaddress.ip_network(p, strict=False)) for p in prefixes[:MAX_PREFIXES]]
    return out
