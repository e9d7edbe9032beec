"""Response models: they document the API in /api/openapi.json.

Handlers build plain dicts and return them as JSON directly (no per-request
model validation on the hot path); tests validate real responses against these
models so the documentation cannot drift from what is served.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class Dataset(BaseModel):
    name: str | None = Field(description="input files the database was built from")
    date: str | None = Field(description="ISO date of the routing snapshot")
    package: str | None = Field(description="Debian package and version the files came from")
    source: str | None = Field(description="original RIB file named in the snapshot header")
    age_days: int | None = Field(description="days between the snapshot date and today (UTC)")
    live: bool = Field(description="always false: this is a historical snapshot")
    notice: str


class Counts(BaseModel):
    v4: int
    v6: int


class Prefixes(BaseModel):
    v4: list[str]
    v6: list[str]


class AsnRecord(BaseModel):
    asn: int = Field(examples=[15169])
    asn_text: str = Field(examples=["AS15169"])
    name: str | None = Field(description="AS name (registry handle)", examples=["GOOGLE"])
    organisation: str | None = Field(examples=["Google Inc."])
    country: str | None = Field(description="ISO 3166 code of the registration, not geolocation")
    country_code: str | None = Field(description="same as country (field name of the comparable API)")
    description: str | None = Field(description="the registry text the name and organisation come from")
    prefix_counts: Counts
    num_ips: int = Field(description="IPv4 addresses announced (union of the prefixes)")
    addresses: Counts = Field(description="addresses announced per family (IPv6 counts are large integers)")
    prefixes: Prefixes
    dataset: Dataset


class AsnSummary(BaseModel):
    asn: int
    name: str | None
    organisation: str | None
    country: str | None
    prefix_counts: Counts
    num_ips: int


class IpRecord(BaseModel):
    ip: str = Field(examples=["8.8.8.8"])
    family: int = Field(examples=[4])
    prefix: str = Field(description="longest matching announced prefix", examples=["8.8.8.0/24"])
    asn: int
    asn_text: str
    name: str | None
    organisation: str | None
    country: str | None
    prefix_counts: Counts
    num_ips: int
    dataset: Dataset


class SearchResult(BaseModel):
    query: str
    country: str | None
    count: int
    results: list[AsnSummary]
    dataset: Dataset


class CountryPrefixes(BaseModel):
    country: str = Field(description="ISO 3166 code, upper case")
    family: int | None = Field(description="4, 6, or null for both")
    count: int
    prefixes: list[str] = Field(description="announced by ASes registered in the country; v4 first, sorted")
    source: str = Field(description="how the country was derived")
    dataset: Dataset


class BulkRequest(BaseModel):
    addresses: list[str] = Field(min_length=1, max_length=10_000, examples=[["8.8.8.8", "2606:4700::1111"]])


class BulkItem(BaseModel):
    ip: str = Field(description="canonical form of the address")
    prefix: str | None = Field(description="longest matching prefix; null when none covers the address")
    asn: int | None


class AsnBrief(BaseModel):
    name: str | None
    organisation: str | None
    country: str | None


class BulkResult(BaseModel):
    count: int = Field(description="addresses looked up (the request's, in order)")
    found: int = Field(description="addresses some announced prefix covers")
    results: list[BulkItem]
    asns: dict[str, AsnBrief] = Field(description="each origin AS once, by number")
    dataset: Dataset


class ErrorBody(BaseModel):
    error: str
    code: str = Field(examples=["HTTP_403"])
    request_id: str = Field(examples=["1732280000-9f86d081"])


class Health(BaseModel):
    status: str = Field(examples=["healthy"])
    timestamp: str
    version: str
    dataset_date: str | None = Field(description="ISO date of the routing snapshot; null while loading")
    dataset_age_days: int | None
    dependencies: dict[str, dict[str, Any]]
