"""Request and response models of the node and orchestrator APIs (spec 002 §2 D)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from actors.mitigation.settings import MAX_TRUSTED_PROXIES, AutoscaleSettings, WafSettings, normalise_cidrs


class ErrorDetail(BaseModel):
    code: str
    message: str


class ErrorBody(BaseModel):
    error: ErrorDetail


class Connections(BaseModel):
    active: int
    total: int


class Child(BaseModel):
    """A process the node supervises (its HAProxy), as `rayfleet.supervisor.Status`."""

    name: str
    state: str = Field(description="starting, running, backoff, failed (restart burst spent) or stopped")
    pid: int | None
    restarts: int
    last_exit: int | None = Field(description="exit code of the last exit (negative: killed by that signal)")
    last_exit_reason: str | None
    last_exit_at: float | None
    since: float


class Status(BaseModel):
    status: str
    mode: str
    uptime_seconds: int
    connections: Connections
    health: str
    node_id: str
    address: str
    syn_cookies: str = Field(description="the kernel's net.ipv4.tcp_syncookies setting")
    children: list[Child] = Field(description="the node's supervised HAProxy")


class RuleIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)  # true is not a number

    pattern: str = Field(..., min_length=1, max_length=1024, description="regular expression (PCRE), case-insensitive")
    action: Literal["block", "log", "score"] = Field(
        "block", description="block: deny on match; log: count only; score: add severity to the anomaly score"
    )
    severity: Literal["critical", "high", "medium", "low"] = Field(
        "high", description="anomaly score 5 / 4 / 3 / 2 (OWASP CRS critical / error / warning / notice)"
    )


class RuleCreated(BaseModel):
    id: str
    status: str
    created_at: str


class Rule(BaseModel):
    id: str
    pattern: str
    action: str
    severity: str
    hits: int
    status: str
    created_at: str
    source: str = Field("", description="api: this node's own; fleet: the fleet's rule")


class RuleList(BaseModel):
    rules: list[Rule]
    total: int
    builtin_hits: dict[str, int] = Field(default_factory=dict, description="hits per built-in rule id")


class Deleted(BaseModel):
    id: str
    status: str
    nodes: list[str] | None = Field(None, description="fleet: nodes it was removed from")
    failed: dict[str, str] | None = Field(None, description="fleet: nodes not reached (they drop it when they answer)")


class BlacklistIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)  # true is not a number

    ip: str = Field(..., min_length=2, max_length=64, description="IPv4/IPv6 address or CIDR")
    reason: str = Field("", max_length=500)
    duration_seconds: int = Field(3600, ge=1, le=30 * 86400)


class BlacklistEntry(BaseModel):
    ip: str
    reason: str
    duration_seconds: int
    expires_at: str | None = None
    nodes: list[str] | None = None
    failed: dict[str, str] | None = Field(None, description="fleet: nodes that could not be reached (resynced later)")


class Ban(BaseModel):
    ip: str
    reason: str
    source: str = Field(description="who banned it: api, fleet, or escalation/<attack kind> (the repeat-flooder rule)")
    expires: int | float = Field(description="Unix time the ban ends")
    expires_at: str


class BanList(BaseModel):
    entries: list[Ban]
    total: int


class AllowIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    ip: str = Field(..., min_length=2, max_length=64, description="IPv4/IPv6 address or CIDR")
    reason: str = Field("", max_length=500)


class AllowEntry(BaseModel):
    ip: str
    reason: str
    source: str | None = Field(None, description="node: who added it (api: this node's route; fleet: the fleet)")
    created_at: str
    nodes: list[str] | None = None
    failed: dict[str, str] | None = None


class AllowList(BaseModel):
    entries: list[AllowEntry]
    total: int


class Removed(BaseModel):
    ip: str
    status: str
    nodes: list[str] | None = Field(None, description="fleet: nodes it was removed from")
    failed: dict[str, str] | None = Field(None, description="fleet: nodes that could not be reached")


class Stats(BaseModel):
    packets_processed: int
    attacks_blocked: int
    requests_per_second: int
    latency_ms: float
    cpu_percent: float
    memory_mb: float


class Node(BaseModel):
    id: str
    address: str = Field(description="host:port of the node's data plane (put clients in front of this)")
    status: str = Field(description="starting, healthy, unhealthy (data plane down), draining or dead")
    mode: str
    load: float = Field(description="CPU of the node's HAProxy, as a fraction of one core")
    last_heartbeat: float | None = Field(None, description="Unix time of the last answered heartbeat")
    actor_pid: int | None = Field(None, description="process id of the node's Ray actor")
    children: list[Child] = Field(default_factory=list, description="its supervised HAProxy (last heartbeat)")


class NodeList(BaseModel):
    nodes: list[Node]


class RateLimitRule(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)  # true is not a number
    type: Literal["rate_limit"]
    value: int = Field(..., ge=1, le=1_000_000, description="requests per second per source; excess gets 429")


class GeoBlockRule(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)  # true is not a number
    type: Literal["geo_block"]
    countries: list[str] = Field(..., min_length=1, max_length=250)


class ClientAddressRule(BaseModel):
    """Where a node takes its clients' addresses from when it sits behind a load balancer."""

    model_config = ConfigDict(extra="forbid", strict=True)  # "true" and 1 are not booleans
    type: Literal["client_address"]
    accept_proxy: bool = Field(False, description="every connection starts with a PROXY protocol header (v1 or v2)")
    trusted_proxies: list[str] = Field(
        default_factory=list,
        max_length=MAX_TRUSTED_PROXIES,
        description="CIDRs whose last X-Forwarded-For hop is the client's address (l7)",
    )

    @field_validator("trusted_proxies")
    @classmethod
    def _cidrs(cls, values: list[str]) -> list[str]:
        return normalise_cidrs(values)


class TLSRule(BaseModel):
    """TLS on the nodes' listener and to the origin, as `fleet.node.tls` and `fleet.node.origin_tls`. Each
    node checks it before a hitless reload (files readable there, the key the certificate's, a known
    minimum version, no h2 on a syn node): what it refuses is 422 and no node keeps it."""

    model_config = ConfigDict(extra="forbid", strict=True)
    type: Literal["tls"]
    tls: dict[str, Any] | None = Field(
        None, description="{cert_file, key_file} or {demo: true}, min_version, alpn (null: plain)"
    )
    origin_tls: dict[str, Any] | None = Field(None, description="{verify, ca_file, sni} (null: plain HTTP)")


class WafRule(WafSettings):
    """The node's WAF (engine, CRS paranoia level, anomaly threshold, body limit, exclusions,
    fail-open); every field not given takes its default."""

    type: Literal["waf"]


PolicyRule = Annotated[
    RateLimitRule | GeoBlockRule | ClientAddressRule | TLSRule | WafRule, Field(discriminator="type")
]


class PolicyIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)  # true is not a number
    name: str = Field(..., min_length=1, max_length=200)
    rules: list[PolicyRule] = Field(..., min_length=1, max_length=20)


class PolicyView(BaseModel):
    policy: PolicyIn | None = Field(
        description="the policy in force: one rule of each kind in force (a policy changes the kinds it lists and "
        "leaves the others), the latest deployed, named after the last policy deployed; null when none is"
    )
    policy_by: dict[str, str] = Field(description="the name of the policy each kind in force came from")
    rate_limit_rps: int | None = Field(description="in force on every node (None: no rate limit)")
    blocked_countries: list[str]
    geo_prefixes: int
    accept_proxy: bool = Field(description="connections start with a PROXY protocol header")
    trusted_proxies: list[str] = Field(description="CIDRs whose last X-Forwarded-For hop is believed")
    waf: WafSettings = Field(description="the WAF in force: the configuration's, or a waf policy's")
    nodes: list[str] | None = None
    failed: dict[str, str] | None = None


class PolicyDeployed(BaseModel):
    name: str
    status: str
    nodes: list[str]
    failed: dict[str, str]
    geo_prefixes: int


class ScaleIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)  # true is not a number
    action: Literal["scale_up", "scale_down"]
    count: int = Field(..., ge=1, le=16)


class Scaled(BaseModel):
    action: str
    count: int
    nodes: list[str]
    starting: list[str] = Field(
        description="nodes added that had not started within fleet.node_start_timeout_s (answered 202): in the "
        "fleet, `dead` until they answer a heartbeat, then healthy with the fleet's share"
    )
    total: int


class AutoscaleDecision(BaseModel):
    change: int = Field(..., description="+n nodes, -n nodes, or 0")
    reason: str
    at: str
    nodes: int | None = None
    live: int | None = None
    load_per_node: float | None = Field(None, description="served requests/s per live node")
    action: str | None = None
    applied: bool | None = None
    nodes_changed: list[str] | None = None
    error: str | None = None


class Autoscale(BaseModel):
    settings: AutoscaleSettings
    current: AutoscaleDecision | None = Field(None, description="the last evaluation (at each heartbeat)")
    decisions: list[AutoscaleDecision] = Field(..., description="the last changes, automatic and manual, newest first")


class Attacker(BaseModel):
    ip: str
    attacks: int


class Threats(BaseModel):
    active_threats: int
    top_attackers: list[Attacker]
    attack_types: dict[str, int]
    nodes: int


class FleetRule(Rule):
    nodes: list[str]
    failed: dict[str, str] = Field(default_factory=dict, description="nodes not reached (resynced when they answer)")


class Health(BaseModel):
    status: str
    nodes: int
    healthy_nodes: int
    data_plane: list[str] = Field(description="host:port of every healthy node: where protected traffic goes")
    children: list[Child] = Field(default_factory=list, description="every node's supervised HAProxy")


class NodeHealth(BaseModel):
    status: str
    node_id: str
    children: list[Child]


MAX_PEM_CHARS = 32 * 1024


class CertificateIn(BaseModel):
    """A new certificate for the TLS listener: PEM text (the key unencrypted; it is never echoed)."""

    model_config = ConfigDict(extra="forbid", strict=True)
    cert_pem: str = Field(..., min_length=1, max_length=MAX_PEM_CHARS, description="certificate, then its chain")
    key_pem: str = Field(..., min_length=1, max_length=MAX_PEM_CHARS, description="its private key (RSA or ECDSA)")


class Certificate(BaseModel):
    """The served certificate's public facts (never the key)."""

    enabled: bool = Field(description="the node listens with TLS")
    min_version: str | None = None
    alpn: list[str] | None = None
    source: str | None = Field(None, description="files, demo, or api (replaced at run time)")
    serial: str | None = Field(None, description="hexadecimal")
    subject: str | None = None
    not_after: str | None = None
    sha256: str | None = Field(None, description="fingerprint of the certificate (DER)")
    nodes: list[str] | None = Field(None, description="fleet: nodes that serve it now")
    failed: dict[str, str] | None = Field(None, description="fleet: nodes that did not take it")
