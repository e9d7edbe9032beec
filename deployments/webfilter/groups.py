"""Client groups: the request body, its validation, and the checks across groups.

A group is a name, its source networks (CIDRs, host bits zero), its own domain blacklist and whitelist
(domain rules, validated as the global lists validate them) and optional time windows (days and
HH:MM-HH:MM, start before end) during which its blacklist applies. Two groups may not share an address:
a client belongs to at most one group, so the group a refusal names is the client's.
"""

from __future__ import annotations

import ipaddress
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from actors.webfilter.entries import EntryError, domain_rule
from actors.webfilter.grouprules import GroupPolicy
from deployments.webfilter.schemas import Body

Day = Literal["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
Clock = Annotated[
    str, Field(pattern=r"^([01][0-9]|2[0-3]):[0-5][0-9]$", description="HH:MM, 24-hour, node's local time")
]
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class WindowBody(Body):
    days: list[Day] = Field(..., min_length=1, max_length=7)
    start: Clock
    end: Clock

    @model_validator(mode="after")
    def _ordered(self) -> WindowBody:
        if self.start >= self.end:
            raise ValueError("end must be after start (a window across midnight is two windows)")
        self.days = sorted(set(self.days), key=["mon", "tue", "wed", "thu", "fri", "sat", "sun"].index)
        return self


def _rules(values: list[str]) -> list[str]:
    out: list[str] = []
    for value in values:
        try:
            rule = domain_rule(value)
        except EntryError as exc:
            raise ValueError(str(exc)) from None
        if rule not in out:
            out.append(rule)
    return out


class GroupBody(Body):
    name: str = Field(..., pattern=r"^[a-z][a-z0-9_-]{0,31}$", description="lower case; names the group in refusals")
    description: str = Field("", max_length=200)
    networks: list[str] = Field(..., min_length=1, max_length=64)
    blacklist: list[Annotated[str, Field(max_length=300)]] = Field(default_factory=list, max_length=1000)
    whitelist: list[Annotated[str, Field(max_length=300)]] = Field(default_factory=list, max_length=1000)
    windows: list[WindowBody] = Field(default_factory=list, max_length=14)

    @field_validator("networks")
    @classmethod
    def _networks(cls, values: list[str]) -> list[str]:
        parsed: list[Network] = []
        for value in values:
            try:
                network = ipaddress.ip_network(value.strip(), strict=True)
            except ValueError as exc:
                raise ValueError(f"{value[:60]!r} is not a network in CIDR form: {exc}") from None
            clash = next((other for other in parsed if overlap(network, other)), None)
            if clash is not None:
                raise ValueError(f"{network} overlaps {clash}")
            parsed.append(network)
        return [str(n) for n in parsed]

    @field_validator("blacklist", "whitelist")
    @classmethod
    def _domains(cls, values: list[str]) -> list[str]:
        return _rules(values)

    def policy(self) -> GroupPolicy:
        return {
            "name": self.name,
            "networks": self.networks,
            "blacklist": self.blacklist,
            "whitelist": self.whitelist,
            "windows": [{"days": list(w.days), "start": w.start, "end": w.end} for w in self.windows],
        }


def overlap(a: Network, b: Network) -> bool:
    return a.version == b.version and (a.subnet_of(b) or b.subnet_of(a))  # type: ignore[arg-type]


def clashes(networks: list[str], others: list[dict[str, Any]]) -> str | None:
    """Why `networks` may not be a group's next to the `others` groups (a shared address), or None."""
    mine = [ipaddress.ip_network(n) for n in networks]
    for other in others:
        for text in other["networks"]:
            theirs = ipaddress.ip_network(text)
            hit = next((n for n in mine if overlap(n, theirs)), None)
            if hit is not None:
                return f"{hit} overlaps {theirs} of the group {other['name']}"
    return None


def restored(entries: Any) -> list[tuple[GroupPolicy, str]]:
    """The groups of a backup, each checked as a POST of it is (ValueError, nothing written, on the first
    bad one): (policy, description) in the backup's order."""
    if not isinstance(entries, list):
        raise ValueError("groups must be a list")
    out: list[tuple[GroupPolicy, str]] = []
    for number, entry in enumerate(entries, 1):
        try:
            body = GroupBody.model_validate(entry)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ()))
            raise ValueError(f"group {number}: {where}: {first.get('msg', 'invalid')}") from None
        others = [{"name": g["name"], "networks": g["networks"]} for g, _ in out]
        if any(g["name"] == body.name for g, _ in out):
            raise ValueError(f"group {number}: the name {body.name} appears twice")
        clash = clashes(body.networks, others)
        if clash is not None:
            raise ValueError(f"group {number}: {clash}")
        out.append((body.policy(), body.description))
    return out
