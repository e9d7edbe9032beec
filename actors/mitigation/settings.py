"""Settings of one mitigation node: what its HAProxy data plane enforces.

Plain pydantic (no Ray, no FastAPI) so the node actor, the fleet and the HTTP app
share one model. A policy (`rate_limit`, `geo_block`) updates a copy of these.
"""

from __future__ import annotations

import ipaddress
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

Mode = Literal["l7", "syn"]
EventName = Literal["attack_detected", "node_health", "rule_triggered"]
ALL_EVENTS: list[EventName] = ["attack_detected", "node_health", "rule_triggered"]


MAX_TRUSTED_PROXIES = 100


def normalise_cidrs(values: list[str]) -> list[str]:
    """Addresses and CIDRs (IPv4 or IPv6, no zone) in their canonical form, without repeats;
    ValueError names the first one that is not."""
    out: list[str] = []
    for value in values:
        if "%" in value:
            raise ValueError(f"{value!r} has a zone (%...): HAProxy matches addresses without zones")
        try:
            network = ipaddress.ip_network(value.strip(), strict=False)
        except ValueError:
            raise ValueError(f"{value!r} is not an IP address or CIDR") from None
        if str(network) not in out:
            out.append(str(network))
    return out


class WebhookSettings(BaseModel):
    """`[webhooks]` of the spec: where events go and how delivery is retried."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = False
    endpoints: list[str] = Field(default_factory=list)
    events: list[EventName] = Field(default_factory=lambda: list(ALL_EVENTS))
    max_retries: int = Field(3, ge=0, le=10)
    retry_delay_seconds: float = Field(5.0, ge=0, description="first retry delay; doubled for each later retry")
    timeout_seconds: float = Field(5.0, gt=0)


MAX_BODY_LIMIT = 64 * 1024 * 1024
MAX_EXCLUSIONS = 500


class WafSettings(BaseModel):
    """The node's WAF: the OWASP Core Rule Set in nginx + ModSecurity behind HAProxy (`crs`), or
    HAProxy's own regular-expression maps (`rules`, tuned by the node's `paranoia` and
    `anomaly_threshold`). Types are strict: `"2"` is not a level, `1` is not a boolean."""

    model_config = ConfigDict(extra="forbid", strict=True)

    engine: Literal["crs", "rules"] = Field("rules", description="crs: nginx + ModSecurity + CRS; rules: HAProxy maps")
    paranoia_level: int = Field(2, ge=1, le=4, description="crs: CRS paranoia level")
    anomaly_threshold: int = Field(5, ge=1, le=10000, description="crs: inbound anomaly score that blocks")
    body_limit: int = Field(1_048_576, ge=1024, le=MAX_BODY_LIMIT, description="crs: request-body bytes inspected")
    body_limit_action: Literal["reject", "partial"] = Field(
        "reject", description="crs, a body over body_limit: reject (413) or inspect its first body_limit bytes"
    )
    exclusions: list[int] = Field(
        default_factory=list, max_length=MAX_EXCLUSIONS, description="crs: rule ids removed (SecRuleRemoveById)"
    )
    fail_open: bool = Field(False, description="crs: while nginx is down, pass requests uninspected (else 503)")
    ban_after: int = Field(
        5, ge=0, le=100000, description="crs: blocks of one source within ban_seconds that blacklist it (0: never)"
    )

    @field_validator("exclusions")
    @classmethod
    def _rule_ids(cls, values: list[int]) -> list[int]:
        for value in values:
            if not 1 <= value <= 99_999_999:
                raise ValueError(f"exclusions: {value} is not a ModSecurity rule id (1-99999999)")
        return sorted(set(values))


class NodeSettings(BaseModel):
    """Everything a node renders into its HAProxy configuration."""

    model_config = ConfigDict(extra="forbid")

    mode: Mode = "l7"
    listen_host: str = "127.0.0.1"
    listen_port: int = Field(0, ge=0, le=65535, description="0: a free port is picked when the node starts")
    also_listen: list[str] = Field(
        default_factory=list, max_length=8, description="more addresses bound on the same port, e.g. ::1"
    )
    origin: str = Field("127.0.0.1:8000", description="host:port of the protected service")
    paranoia: int = Field(1, ge=1, le=4, description="built-in WAF rules up to this paranoia level are active")
    anomaly_threshold: int = Field(5, ge=1, description="summed rule severities that block a request (CRS: 5)")
    rate_limit_rps: int | None = Field(None, ge=1, description="per-source requests/s above which a request gets 429")
    flood_rps: int = Field(50, ge=1, description="per-source requests/s that mark the source as an HTTP flood")
    ban_seconds: int = Field(60, ge=1, description="a flooding source stays blocked this long after its last request")
    escalation_multiplier: float = Field(
        2.0, ge=1.0, le=100.0, description="a repeat flooder is blacklisted for ban_seconds x this^(offences-1)"
    )
    max_ban_seconds: int = Field(86400, ge=1, description="the longest escalated ban")
    max_conn_per_source: int = Field(100, ge=1, description="concurrent connections per source")
    syn_conn_rate: int = Field(20, ge=1, description="syn mode: new connections per source and second")
    http_request_timeout_s: float = Field(5.0, gt=0, description="headers must arrive within this (slowloris)")
    maxconn: int = Field(8000, ge=100)
    blocked_countries: list[str] = Field(default_factory=list)
    webhooks: WebhookSettings = Field(default_factory=WebhookSettings)
    waf: WafSettings = Field(default_factory=WafSettings)
    poll_interval_s: float = Field(0.25, gt=0, description="how often the node reads HAProxy's tables and stats")
    log_sample_percent: int = Field(5, ge=0, le=100, description="share of clean requests logged for latency")
    accept_proxy: bool = Field(
        False,
        strict=True,
        description="every connection starts with a PROXY protocol header (v1 or v2): its source is the client",
    )
    trusted_proxies: list[str] = Field(
        default_factory=list,
        max_length=MAX_TRUSTED_PROXIES,
        description="l7: CIDRs whose last X-Forwarded-For hop is taken as the client's address",
    )

    @field_validator("also_listen")
    @classmethod
    def _addresses(cls, values: list[str]) -> list[str]:
        out = []
        for value in values:
            try:
                if "%" in value:  # Python reads a zone, HAProxy's bind does not
                    raise ValueError(value)
                out.append(str(ipaddress.ip_address(value)))
            except ValueError:
                raise ValueError(f"{value!r} is not an IP address (without zone or prefix)") from None
        return out

    @field_validator("trusted_proxies")
    @classmethod
    def _cidrs(cls, values: list[str]) -> list[str]:
        return normalise_cidrs(values)

    @model_validator(mode="after")
    def _trusted_proxies_need_http(self) -> NodeSettings:
        if self.trusted_proxies and self.mode != "l7":
            raise ValueError("trusted_proxies: X-Forwarded-For is an HTTP header, a syn node never reads it")
        return self

    @property
    def crs(self) -> bool:
        """The node runs the CRS inspection tier (an l7 node with `waf.engine: crs`)."""
        return self.mode == "l7" and self.waf.engine == "crs"


class FleetSettings(BaseModel):
    """The orchestrator's fleet: node defaults, size limits, health tracking, ASN API for geo_block."""

    model_config = ConfigDict(extra="forbid")

    initial_nodes: int = Field(1, ge=0, le=16)
    max_nodes: int = Field(8, ge=1, le=64)
    heartbeat_interval_s: float = Field(1.0, gt=0)
    dead_after_missed: int = Field(3, ge=1, description="missed heartbeats before a node is declared dead")
    replace_dead_nodes: bool = Field(
        True, description="a dead node's actor is replaced by a new one (same id, port and kept state)"
    )
    fleet_flood_rps: int | None = Field(
        None,
        ge=1,
        description="fleet-wide counting: a source above this many requests/s summed over the nodes (or "
        "flagged by one node) is banned on every node; None: off",
    )
    fleet_count_interval_s: float = Field(0.25, gt=0, description="how often the fleet sums its nodes' rates")
    node: NodeSettings = Field(default_factory=NodeSettings)
    webhooks: WebhookSettings = Field(default_factory=WebhookSettings)
    asn_api_url: str = Field("", description="base URL of the ASN API (e.g. http://127.0.0.1:8000/asn)")
    asn_api_key: str = Field("", repr=False, exclude=True)
