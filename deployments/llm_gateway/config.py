"""Configuration models of the LLM gateway (spec 001 §A.2), with the spec's defaults.

Durations accept numbers (seconds) or strings such as ``"30s"``, ``"500ms"``, ``"2m"``.
Secrets are never part of the file: endpoints name the environment variable that holds
their keys (``api_key_env``, comma-separated for several keys).
"""

from __future__ import annotations

import os
import re
import ssl
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator

from rayfleet.config import load_yaml
from rayfleet.paths import resolve

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$")
_UNIT = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}


def parse_duration(value: Any) -> Any:
    """Turn ``"30s"``/``"500ms"``/``2`` into seconds; leave ``None`` alone."""
    if value is None or isinstance(value, (int, float)):
        return value
    if isinstance(value, str):
        match = _DURATION.match(value)
        if not match:
            raise ValueError(f"invalid duration {value!r} (use e.g. 30s, 500ms, 2m)")
        return float(match.group(1)) * _UNIT[match.group(2)]
    raise ValueError(f"invalid duration {value!r}")


Duration = Annotated[float, BeforeValidator(parse_duration)]
OptDuration = Annotated[float | None, BeforeValidator(parse_duration)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class TLSConfig(_Model):
    """HTTPS on the direct listener. Checked at load: what cannot be applied stops the start."""

    enabled: bool = False
    cert_file: str = ""
    key_file: str = ""
    min_version: str = "1.2"

    @field_validator("min_version")
    @classmethod
    def _version(cls, v: str) -> str:
        if v not in ("1.2", "1.3"):
            raise ValueError(f"server.tls.min_version must be 1.2 or 1.3, got {v!r}")
        return v

    @model_validator(mode="after")
    def _loadable(self) -> TLSConfig:
        if not self.enabled:
            return self
        if not (self.cert_file and self.key_file):
            raise ValueError("server.tls.enabled needs cert_file and key_file")
        try:
            ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(self.cert_file, self.key_file)
        except (OSError, ssl.SSLError) as exc:
            reason = exc.strerror or exc.reason if isinstance(exc, ssl.SSLError) else exc.strerror
            raise ValueError(
                f"server.tls: cannot load cert_file {self.cert_file!r} with key_file {self.key_file!r} ({reason})"
            ) from None
        return self


class AuthConfig(_Model):
    enabled: bool = True
    api_keys_env: str = "LLM_PROXY_API_KEYS"
    admin_keys_env: str = "LLM_PROXY_ADMIN_KEYS"


class ExporterConfig(_Model):
    enabled: bool = False
    port: int = 9091
    bind: str = "127.0.0.1"


class LocalModelConfig(_Model):
    """The local model served when the daily budget is exhausted.

    ``endpoint`` names an entry of ``endpoints`` and ``model`` the model it serves; when
    ``endpoint`` is empty the first endpoint whose provider is a local one (``ollama``,
    ``vllm``, ``lmstudio``, ``llamacpp``) is used.
    """

    enabled: bool = False
    model_path: str = ""
    fallback_threshold: float = 0.1
    endpoint: str = ""
    model: str = ""


class StorageConfig(_Model):
    type: Literal["sqlite", "postgres"] = "sqlite"
    dsn_env: str = "DATABASE_URL"
    dsn: str = ""
    path: str = "gateway.db"
    batch_size: int = 200
    flush_interval: Duration = 0.5


class ListenerConfig(_Model):
    """The gateway's own data-plane port (``server.host:server.port``), next to Serve's ``/llm``.

    Off by default so that embedding the app (tests, tools) never binds a port; the demo
    config turns it on. (``poll_interval`` is gone: every replica serves the port itself,
    nothing polls; the key is refused with a message saying so.)
    """

    enabled: bool = False

    @model_validator(mode="before")
    @classmethod
    def _gone(cls, data: Any) -> Any:
        if isinstance(data, dict) and "poll_interval" in data:
            raise ValueError(
                "poll_interval is no longer used (every replica serves the direct port itself, nothing polls): "
                "remove it"
            )
        return data


class ServerConfig(_Model):
    host: str = "0.0.0.0"
    port: int = 8090
    timeout: Duration = 30.0
    keep_alive: Duration = 60.0
    tls: TLSConfig = TLSConfig()
    auth: AuthConfig = AuthConfig()
    total_timeout: OptDuration = None
    metrics: ExporterConfig = ExporterConfig()
    local_model: LocalModelConfig = LocalModelConfig()
    storage: StorageConfig = StorageConfig()
    listener: ListenerConfig = ListenerConfig()

    @model_validator(mode="after")
    def _tls_needs_the_listener(self) -> ServerConfig:
        if self.tls.enabled and not self.listener.enabled:
            raise ValueError(
                "server.tls.enabled applies to the direct listener only: set server.listener.enabled "
                "(Serve's /llm route is plain HTTP behind the platform's front)"
            )
        return self


class LinkSanitization(_Model):
    enabled: bool = True
    blocked_domains: list[str] = []


class ThreatLedger(_Model):
    enabled: bool = True
    threshold: Annotated[float, Field(gt=0)] = 3.0
    window_seconds: Annotated[int, Field(ge=1)] = 600
    min_events: Annotated[int, Field(ge=1)] = 3
    max_actors: Annotated[int, Field(ge=1)] = 50000


class InjectionConfig(_Model):
    """Prompt-injection scoring (``deployments.llm_gateway.injection``); not in the spec's table."""

    enabled: bool = True
    block_score: Annotated[float, Field(gt=0)] = 1.5
    # the classifier may block a prompt in which the rules found nothing: more unseen attacks caught, and
    # some ordinary long prompts refused (README, "Injection scoring")
    classifier_alone: bool = False


class SecurityConfig(_Model):
    enabled: bool = True
    max_payload_size_kb: Annotated[int, Field(ge=1)] = 512
    max_messages: Annotated[int, Field(ge=1)] = 50
    max_nesting_depth: Annotated[int, Field(ge=0)] = 64
    link_sanitization: LinkSanitization = LinkSanitization()
    threat_ledger: ThreatLedger = ThreatLedger()
    injection: InjectionConfig = InjectionConfig()


class IdentityProvider(_Model):
    """An OpenID Connect provider. The spec gives ``{name, client_id_env}``; signing in also
    needs the ``issuer`` (its discovery document is ``<issuer>/.well-known/openid-configuration``),
    a client secret for confidential clients, and optionally the ``aud`` expected in ID tokens
    when it is not the client id."""

    name: Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9_-]{0,31}$")]
    client_id_env: str = ""
    issuer: str = ""
    client_secret_env: str = ""
    audience: str = ""

    @field_validator("issuer")
    @classmethod
    def _issuer(cls, v: str) -> str:
        if v and not re.match(r"^https?://[^/?#@\s]+(/[^?#\s]*)?$", v):
            raise ValueError("issuer must be an http(s) URL without query, fragment or credentials")
        return v.rstrip("/")


class IdentityConfig(_Model):
    """OIDC sign-in for the control plane (``deployments.llm_gateway.identity``)."""

    enabled: bool = False
    default_role: str = "user"
    providers: list[IdentityProvider] = []
    role_mappings: dict[str, str] = {}
    session_ttl: Annotated[int, Field(ge=60, le=30 * 86400)] = 3600
    # failed-or-pending ``POST /auth/key`` attempts per client address per minute, cluster-wide (not in the spec)
    key_sign_in_per_minute: Annotated[int, Field(ge=1, le=10_000)] = 10

    @model_validator(mode="after")
    def _providers(self) -> IdentityConfig:
        names = [p.name for p in self.providers]
        if len(set(names)) != len(names):
            raise ValueError("identity.providers: names must be unique")
        if self.enabled:
            if not self.providers:
                raise ValueError("identity.enabled needs at least one entry in identity.providers")
            for p in self.providers:
                if not p.issuer or not p.client_id_env:
                    raise ValueError(f"identity.providers.{p.name}: issuer and client_id_env are required")
        return self


class EndpointRateLimit(_Model):
    rpm: int | None = None
    tpm: int | None = None


Provider = Literal[
    "openai", "openai_compat", "vllm", "ollama", "lmstudio", "llamacpp", "anthropic", "azure", "gemini", "bedrock"
]
LOCAL_PROVIDERS = frozenset({"ollama", "vllm", "lmstudio", "llamacpp"})
# providers that need endpoint settings the registry API does not take (config file only)
CONFIG_ONLY_PROVIDERS = frozenset({"azure", "bedrock"})
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}")
# headers the gateway itself sets for every upstream request: extra_headers cannot replace them
_OWN_HEADERS = frozenset(
    {"host", "content-length", "content-type", "transfer-encoding", "connection", "authorization", "api-key"}
    | {"x-api-key", "x-goog-api-key", "anthropic-version", "traceparent", "x-amz-date", "x-amz-security-token"}
)


class EndpointConfig(_Model):
    provider: Provider = "openai_compat"
    base_url: str
    api_key_env: str = ""
    models: list[str] = []
    rate_limit: EndpointRateLimit = EndpointRateLimit()
    weight: float = 1.0
    priority: int = 0
    enabled: bool = True
    # Azure OpenAI's `api-version` query parameter (required for provider azure)
    api_version: str = ""
    # AWS region a Bedrock endpoint's requests are signed for (required for provider bedrock)
    aws_region: str = ""
    # sent with every request to this endpoint (e.g. OpenRouter's HTTP-Referer, an org header)
    extra_headers: dict[str, str] = {}

    @field_validator("base_url")
    @classmethod
    def _strip_slash(cls, v: str) -> str:
        if not v.startswith(("http://", "https://")):
            raise ValueError("base_url must start with http:// or https://")
        return v.rstrip("/")

    @field_validator("api_version")
    @classmethod
    def _version(cls, v: str) -> str:
        if v and not re.fullmatch(r"[0-9A-Za-z.-]{1,40}", v):
            raise ValueError("api_version: letters, digits, '.' and '-' only (e.g. 2024-10-21)")
        return v

    @field_validator("extra_headers")
    @classmethod
    def _headers(cls, v: dict[str, str]) -> dict[str, str]:
        for name, value in v.items():
            if not _HEADER_NAME.fullmatch(name):
                raise ValueError(f"extra_headers: {name!r} is not a header name")
            if name.lower() in _OWN_HEADERS:
                raise ValueError(f"extra_headers: {name} is set by the gateway (keys come from api_key_env)")
            if any(c in value for c in "\r\n\0") or len(value) > 4096:
                raise ValueError(f"extra_headers.{name}: no CR, LF or NUL, at most 4096 characters")
        return v

    @field_validator("aws_region")
    @classmethod
    def _region(cls, v: str) -> str:
        if v and not re.fullmatch(r"[a-z]{2}(-[a-z0-9]+){1,3}", v):
            raise ValueError("aws_region: an AWS region name such as us-east-1")
        return v

    @model_validator(mode="after")
    def _provider_settings(self) -> EndpointConfig:
        if self.provider == "azure" and not self.api_version:
            raise ValueError("an azure endpoint needs api_version (e.g. 2024-10-21)")
        if self.provider == "bedrock" and not self.aws_region:
            raise ValueError("a bedrock endpoint needs aws_region (e.g. us-east-1)")
        return self

    @property
    def is_local(self) -> bool:
        return self.provider in LOCAL_PROVIDERS

    def api_keys(self) -> list[str]:
        """Keys from the named variable, comma-separated; empty list when unset."""
        if not self.api_key_env:
            return []
        raw = os.environ.get(self.api_key_env, "")
        return [k.strip() for k in raw.split(",") if k.strip()]


class FallbackTarget(_Model):
    provider: str
    model: str


class GroupMember(_Model):
    model: str
    provider: str | None = None
    weight: float = 1.0


class ModelGroup(_Model):
    strategy: Literal["cheapest", "fastest", "weighted", "random"] = "weighted"
    models: list[GroupMember]


class FailoverConfig(_Model):
    enabled: bool = True
    max_retries: Annotated[int, Field(ge=0)] = 3
    retry_delay: Duration = 1.0
    switch_on_status: list[int] = [429, 500, 503]


class RotationConfig(_Model):
    strategy: Literal["round_robin", "weighted", "least_used", "random"] = "round_robin"
    failover: FailoverConfig = FailoverConfig()
    key_cooldown: Duration = 60.0


class AuditTrail(_Model):
    """``audit.py``: the chain's HMAC key from ``$secret_env`` (else ``key_file`` under ``data_dir``);
    its head appended to ``head_file`` every ``head_export_interval`` seconds."""

    enabled: bool = True
    mask_pii: bool = True
    secret_env: str = "LLM_PROXY_AUDIT_KEY"
    key_file: str = "audit.key"
    head_file: str = "audit-heads.jsonl"
    head_export_interval: Annotated[Duration, Field(gt=0)] = 60.0


class LoggingConfig(_Model):
    level: Literal["debug", "info", "warning", "error"] = "info"
    format: Literal["json", "text"] = "json"
    output: str = ""
    audit_trail: AuditTrail = AuditTrail()


class NegativeCache(_Model):
    """Blocked prompts remembered per replica (``negative_cache.py``); 0 in either turns it off."""

    maxsize: Annotated[int, Field(ge=0)] = 50000
    ttl: Annotated[int, Field(ge=0)] = 300


class CachingConfig(_Model):
    enabled: bool = True
    db_path: str = "cache.db"
    ttl: int = 3600
    eviction_interval: int = 3600
    max_entries: int = 100000
    negative_cache: NegativeCache = NegativeCache()
    redis_socket_timeout: float = 2.0
    redis_connect_timeout: float = 2.0
    redis_url: str | None = None

    @model_validator(mode="after")
    def _timeouts(self) -> CachingConfig:
        env = os.environ.get("LLM_PROXY_REDIS_TIMEOUT")
        if env:
            try:
                value = float(env)
            except ValueError:
                value = 0.0
            if value > 0:
                self.redis_socket_timeout = self.redis_connect_timeout = value
        return self

    def socket_timeout(self) -> float:
        """Spec: a value of zero or below is ignored (the default 2.0 s applies)."""
        return self.redis_socket_timeout if self.redis_socket_timeout > 0 else 2.0

    def connect_timeout(self) -> float:
        return self.redis_connect_timeout if self.redis_connect_timeout > 0 else 2.0


class Tracing(_Model):
    """``deployments.llm_gateway.tracing``: OTLP/HTTP to ``otlp_endpoint`` and/or spans on stdout."""

    enabled: bool = True
    service_name: str = "llmproxy"
    otlp_endpoint: str | None = None
    console_exporter: bool = True


class ErrorTracker(_Model):
    dsn_env: str = ""


class Export(_Model):
    """``deployments.llm_gateway.export``: one JSON line per request, files per UTC day and process."""

    enabled: bool = False
    output_dir: str = "exports"
    scrub_pii: bool = True
    compress_on_rotate: bool = True


class ObservabilityConfig(_Model):
    tracing: Tracing = Tracing()
    error_tracker: ErrorTracker = ErrorTracker()
    export: Export = Export()


WEBHOOK_EVENTS = (
    "circuit_open",
    "budget_threshold",
    "injection_blocked",
    "endpoint_down",
    "endpoint_recovered",
    "endpoint_up",
    "auth_failure",
    "panic_activated",
)


class WebhookEndpoint(_Model):
    """One receiver: ``url_env`` names the variable holding its URL, ``secret_env`` the one holding its
    signing secret (empty: ``webhooks.secret_env``); ``events`` empty means every type."""

    name: str
    target: Literal["generic", "slack", "discord", "teams"] = "generic"
    url_env: str
    secret_env: str = ""
    events: list[str] = []

    @field_validator("events")
    @classmethod
    def _known(cls, v: list[str]) -> list[str]:
        unknown = sorted(set(v) - set(WEBHOOK_EVENTS))
        if unknown:
            raise ValueError(f"unknown event types {unknown}; known: {list(WEBHOOK_EVENTS)}")
        return v


class WebhooksConfig(_Model):
    enabled: bool = False
    secret_env: str = "LLM_PROXY_WEBHOOK_SECRET"  # the signing secret of endpoints that name none
    endpoints: list[WebhookEndpoint] = []


class BudgetConfig(_Model):
    daily_limit: float = 50.0
    soft_limit: float = 40.0
    fallback_to_local_on_limit: bool = True
    default_output_tokens: int = 256


class ConnectionPoolConfig(_Model):
    max_connections: int = 100
    max_per_host: int = 30
    connect_timeout: Duration = 10.0
    keepalive_timeout: Duration = 30.0
    dns_cache_ttl: int = 300


class AdmissionConfig(_Model):
    max_in_flight: int | None = None
    queue_factor: float = 2.0
    max_queued: int | None = None
    retry_after_s: int = 1


class CircuitBreakerConfig(_Model):
    failure_threshold: Annotated[int, Field(ge=1)] = 5
    recovery_timeout: Duration = 60.0
    probe_timeout: Duration = 30.0


MAX_HEALTH_THRESHOLD = 100


class HealthCheckConfig(_Model):
    """The background health prober (``actors/llm_gateway/prober.py``): one per cluster.

    Every ``interval`` seconds, scaled by a random factor in ``[1 - jitter, 1 + jitter]``, it lists
    each endpoint's models (no inference); ``timeout`` bounds each probe. ``unhealthy_threshold``
    failed probes in a row mark an endpoint down, ``healthy_threshold`` successful ones up again
    (applied by the breaker board, which also takes the operator's probes).
    """

    enabled: bool = True
    interval: Annotated[Duration, Field(ge=0.05, le=86400)] = 30.0
    jitter: Annotated[float, Field(ge=0.0, lt=1.0)] = 0.2
    timeout: Annotated[Duration, Field(gt=0)] = 5.0
    unhealthy_threshold: Annotated[int, Field(strict=True, ge=1, le=MAX_HEALTH_THRESHOLD)] = 2
    healthy_threshold: Annotated[int, Field(strict=True, ge=1, le=MAX_HEALTH_THRESHOLD)] = 2

    @model_validator(mode="after")
    def _fits(self) -> HealthCheckConfig:
        if self.timeout > self.interval:
            raise ValueError("timeout must not be longer than interval (a round would overlap the next)")
        return self


class GdprConfig(_Model):
    auto_purge: bool = True
    retention_days: int = 90


class RateLimitingConfig(_Model):
    enabled: bool = True
    requests_per_minute: int = 60


class PriceEntry(_Model):
    input: float
    output: float


class ScanTarget(_Model):
    """One well-known local port probed by ``POST /api/v1/registry/scan`` (and the startup discovery)."""

    provider: Provider
    port: int = Field(ge=1, le=65535)
    path: str = ""

    def models_path(self) -> str:
        return self.path or ("/api/tags" if self.provider == "ollama" else "/v1/models")


def _default_scan_ports() -> list[ScanTarget]:
    return [
        ScanTarget(provider="ollama", port=11434),
        ScanTarget(provider="lmstudio", port=1234),
        ScanTarget(provider="llamacpp", port=8080),
        ScanTarget(provider="vllm", port=8001),
    ]


class RegistryConfig(_Model):
    """The endpoint registry of the control plane (``/api/v1/registry``).

    Entries live in the registry actor's durable record (``storage``'s database, or
    ``RAYFLEET_DURABLE_DSN``); their API keys are
    encrypted with the key in ``$secret_env`` (else a generated ``<data_dir>/<key_file>``,
    mode 0600). Replicas follow the registry with a long-poll (a change arrives in one actor call);
    after a failed long-poll they re-read it every ``refresh_interval`` until it answers again.
    """

    refresh_interval: Annotated[Duration, Field(gt=0)] = 1.0
    probe_timeout: Annotated[Duration, Field(gt=0)] = 3.0
    scan_host: str = "127.0.0.1"
    scan_timeout: Annotated[Duration, Field(gt=0)] = 1.5
    scan_ports: list[ScanTarget] = Field(default_factory=_default_scan_ports)
    secret_env: str = "LLM_PROXY_REGISTRY_KEY"
    key_file: str = "registry.key"


def not_built(cfg: GatewayConfig) -> list[str]:
    """Settings that would turn on a feature this gateway does not have: refused, never silently accepted."""
    checks = [
        (
            bool(cfg.server.local_model.model_path),
            "server.local_model.model_path (the gateway runs no model itself: serve the file with a local "
            "server such as Ollama, llama.cpp or vLLM, add it under endpoints, and name it in "
            "server.local_model.endpoint and .model)",
        ),
    ]
    return [name for on, name in checks if on]


class GatewayConfig(_Model):
    """The whole ``config/llm_gateway.yaml``."""

    server: ServerConfig = ServerConfig()
    security: SecurityConfig = SecurityConfig()
    identity: IdentityConfig = IdentityConfig()
    endpoints: dict[str, EndpointConfig] = {}
    fallback_chains: dict[str, list[FallbackTarget]] = {}
    model_aliases: dict[str, str] = {}
    model_groups: dict[str, ModelGroup] = {}
    rotation: RotationConfig = RotationConfig()
    logging: LoggingConfig = LoggingConfig()
    caching: CachingConfig = CachingConfig()
    observability: ObservabilityConfig = ObservabilityConfig()
    webhooks: WebhooksConfig = WebhooksConfig()
    budget: BudgetConfig = BudgetConfig()
    connection_pool: ConnectionPoolConfig = ConnectionPoolConfig()
    admission: AdmissionConfig = AdmissionConfig()
    circuit_breaker: CircuitBreakerConfig = CircuitBreakerConfig()
    health_check: HealthCheckConfig = HealthCheckConfig()
    gdpr: GdprConfig = GdprConfig()
    rate_limiting: RateLimitingConfig = RateLimitingConfig()
    pricing: dict[str, PriceEntry] = {}
    registry: RegistryConfig = RegistryConfig()
    data_dir: str = "var/llm_gateway"
    discovery: bool = True

    @model_validator(mode="after")
    def _references(self) -> GatewayConfig:
        for model, chain in self.fallback_chains.items():
            for target in chain:
                if target.provider not in self.endpoints:
                    raise ValueError(f"fallback_chains.{model}: unknown endpoint {target.provider!r}")
        for name, group in self.model_groups.items():
            for member in group.models:
                if member.provider is not None and member.provider not in self.endpoints:
                    raise ValueError(f"model_groups.{name}: unknown endpoint {member.provider!r}")
        lm = self.server.local_model
        if lm.endpoint and lm.endpoint not in self.endpoints:
            raise ValueError(f"server.local_model.endpoint: unknown endpoint {lm.endpoint!r}")
        refused = not_built(self)
        if refused:
            raise ValueError(
                "these settings turn on features this gateway does not have (remove them or set them off): "
                + "; ".join(refused)
            )
        return self

    def admission_limits(self, replicas: int = 1) -> tuple[int, int]:
        """(in-flight, queued) limits for one replica; 0 in-flight disables admission.

        The configured numbers are cluster-wide; each replica takes its share.
        """
        total = self.admission.max_in_flight
        if total is None:
            total = self.connection_pool.max_connections
        if total <= 0:
            return 0, 0
        queued = self.admission.max_queued
        if queued is None:
            queued = int(total * self.admission.queue_factor)
        replicas = max(1, replicas)
        return max(1, -(-total // replicas)), max(0, -(-queued // replicas))

    def log_output(self) -> Path | None:
        """``logging.output``: None for stdout, else the file (relative to ``data_dir`` unless absolute)."""
        if not self.logging.output:
            return None
        path = Path(self.logging.output)
        return path if path.is_absolute() else resolve(Path(self.data_dir) / path)

    def export_dir(self) -> Path:
        """``observability.export.output_dir``, relative to ``data_dir`` unless absolute (not created here)."""
        path = Path(self.observability.export.output_dir)
        return path if path.is_absolute() else resolve(Path(self.data_dir) / path)

    def data_path(self, name: str) -> Path:
        path = Path(name)
        if not path.is_absolute():
            path = resolve(Path(self.data_dir) / path)
        path.parent.mkdir(parents=True, exist_ok=True)
        return path


def load(path: str | os.PathLike[str]) -> GatewayConfig:
    """Load and validate the YAML file; ``LLM_GATEWAY__SECTION__KEY`` env overrides apply."""
    return load_yaml(resolve(Path(path)), GatewayConfig, env_prefix="LLM_GATEWAY")
