"""Sending one request upstream with rotation and failover.

For each target in plan order: skip it when its breaker is open (or acquire the single
half-open probe), when its rpm/tpm lease is exhausted, or when all its keys rest after
a 429; otherwise send. Statuses in ``switch_on_status``, connection errors and timeouts
move on to the next attempt (at most ``1 + max_retries``), retrying the same endpoint
only after ``retry_delay`` with jitter or the upstream's ``Retry-After``, whichever is
longer. A stream counts as started only once the upstream status and first event have
been read, so failover also covers a stream that fails before its first byte.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import aiohttp
from yarl import URL

from deployments.llm_gateway.config import ConnectionPoolConfig, GatewayConfig
from deployments.llm_gateway.errors import GatewayError
from deployments.llm_gateway.providers import Adapter, EventReader, UpstreamStreamError, Usage, adapter_for
from deployments.llm_gateway.providers.base import StreamTranslator, UpstreamRequest
from deployments.llm_gateway.routing import Router, Target
from deployments.llm_gateway.shared_state import BreakerClient, TokenLeases
from deployments.llm_gateway.sse import SSEEvent


@dataclass
class Attempt:
    target: Target
    adapter: Adapter
    key_index: int | None
    probe: str | None
    started: float = 0.0


@dataclass
class UpstreamResult:
    """A committed upstream answer: a parsed body, or an open stream with its first events."""

    attempt: Attempt
    status: int
    body: dict[str, Any] | None = None
    raw: bytes | None = None
    usage: Usage | None = None
    upstream_ms: float = 0.0
    response: aiohttp.ClientResponse | None = None
    translator: StreamTranslator | None = None
    parser: EventReader | None = None
    first: list[bytes] = field(default_factory=list)
    first_byte_at: float = 0.0
    handle: _Releaser | None = None


class _Retryable(Exception):
    def __init__(
        self,
        status: int | None,
        message: str,
        error_class: str,
        retry_after: float | None = None,
        breaker_failure: bool = True,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.error_class = error_class
        self.retry_after = retry_after
        self.breaker_failure = breaker_failure


@dataclass
class _Plan:
    """What one request's failover has tried so far."""

    queue: list[Target]
    max_attempts: int
    attempts: int = 0
    last: _Retryable | None = None
    waits: list[float] = field(default_factory=list)
    previous: tuple[str | None, int | None] = (None, None)
    tried_keys: dict[str, set[int]] = field(default_factory=dict)
    circuit_blocked: bool = False
    headers: dict[str, str] = field(default_factory=dict)  # sent with every attempt (``traceparent``)


def _exhausted(plan: _Plan, kind: str) -> GatewayError:
    """The error of a request no attempt answered: the last upstream error, else why nothing was tried."""
    last = plan.last
    if last is not None:
        headers = {}
        if last.status in (429, 503):
            headers["Retry-After"] = str(max(1, round(last.retry_after or 1)))
        status = last.status or (504 if last.error_class == "timeout" else 502)
        return GatewayError(
            status,
            f"All upstream attempts failed; last error: {last}",
            code="upstream_timeout" if last.error_class == "timeout" else ("upstream_error" if status >= 500 else None),
            headers=headers,
            error_class=last.error_class,
        )
    if plan.waits:
        return GatewayError(
            503 if plan.circuit_blocked else 429,
            "No upstream endpoint is available right now (circuit open, rate limit or key cooldown)",
            code="no_available_endpoint",
            headers={"Retry-After": str(max(1, round(min(plan.waits))))},
            error_class="no_endpoint",
        )
    return GatewayError(400, f"No configured endpoint supports {kind} for this model", code="unsupported")


def _retry_after(resp: aiohttp.ClientResponse) -> float | None:
    value = resp.headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


def _upstream_message(raw: bytes) -> str:
    try:
        obj = json.loads(raw)
    except ValueError:
        return raw[:200].decode("utf-8", errors="replace")
    err = obj.get("error") if isinstance(obj, dict) else None
    if isinstance(err, dict):
        return str(err.get("message") or err.get("type") or "upstream error")
    return str(err or obj)[:200]


def upstream_session(pool: ConnectionPoolConfig) -> aiohttp.ClientSession:
    """The data plane's HTTP client, built from ``connection_pool``: ``max_connections`` in all,
    ``max_per_host`` per upstream (requests beyond wait for a connection), idle connections
    kept ``keepalive_timeout`` seconds, name lookups cached ``dns_cache_ttl`` seconds.

    aiohttp rather than httpx here: on every request httpx's pool scans all its connections
    and polls each socket, which cost over a third of a replica's CPU under load (py-spy).
    """
    connector = aiohttp.TCPConnector(
        limit=max(1, pool.max_connections),
        limit_per_host=max(1, pool.max_per_host),
        keepalive_timeout=pool.keepalive_timeout,
        ttl_dns_cache=pool.dns_cache_ttl,
        use_dns_cache=pool.dns_cache_ttl > 0,
    )
    return aiohttp.ClientSession(connector=connector, trust_env=False)


class Forwarder:
    def __init__(
        self,
        config: GatewayConfig,
        router: Router,
        session: aiohttp.ClientSession | None,
        breakers: BreakerClient,
        leases: TokenLeases,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.config = config
        self.clock = clock
        self.router = router
        self.session = session
        self.breakers = breakers
        self.leases = leases
        # Connecting and each read wait are bounded; the whole request (stream included) only by
        # ``server.total_timeout`` when it is set (null, the default: no ceiling, a stream may run long).
        self.timeout = aiohttp.ClientTimeout(
            total=config.server.total_timeout,
            connect=config.connection_pool.connect_timeout,
            sock_read=config.server.timeout,
        )
        self._host_slots: dict[str, asyncio.Semaphore] = {}

    def _slot(self, base_url: str) -> asyncio.Semaphore:
        host = urlsplit(base_url).netloc
        sem = self._host_slots.get(host)
        if sem is None:
            sem = self._host_slots[host] = asyncio.Semaphore(max(1, self.config.connection_pool.max_per_host))
        return sem

    async def _limits_ok(self, target: Target, est_tokens: int) -> float | None:
        """None when the endpoint's rpm/tpm allow the request, else seconds to wait."""
        rl = target.config.rate_limit
        if rl.rpm:
            ok, retry = await self.leases.take(f"ep-rpm:{target.endpoint}", rl.rpm, 60.0, 1.0)
            if not ok:
                return retry
        if rl.tpm:
            ok, retry = await self.leases.take(
                f"ep-tpm:{target.endpoint}", rl.tpm, 60.0, float(min(est_tokens, rl.tpm))
            )
            if not ok:
                return retry
        return None

    def charge_tokens(self, target: Target, estimated: int, actual: int) -> None:
        """Correct the endpoint's tpm bucket once the real token count is known."""
        tpm = target.config.rate_limit.tpm
        if not tpm:
            return
        key = f"ep-tpm:{target.endpoint}"
        estimated = min(estimated, tpm)
        if actual > estimated:
            self.leases.debit(key, tpm, 60.0, actual - estimated)
        elif estimated > actual:
            self.leases.credit(key, estimated - actual)

    async def forward(
        self,
        kind: str,
        body: dict[str, Any],
        targets: list[Target],
        stream: bool,
        client_wants_usage: bool,
        est_tokens: int,
        headers: dict[str, str] | None = None,
    ) -> UpstreamResult:
        """Send: the committed answer of the first attempt that succeeds, else the one error that explains why.

        ``headers`` go with every upstream attempt (the trace context)."""
        failover = self.config.rotation.failover
        plan = _Plan(
            queue=list(targets), max_attempts=1 + failover.max_retries if failover.enabled else 1, headers=headers or {}
        )
        result = await self._with_failover(kind, body, plan, stream, client_wants_usage, est_tokens)
        if result is not None:
            return result
        raise _exhausted(plan, kind)

    async def _with_failover(
        self, kind: str, body: dict[str, Any], plan: _Plan, stream: bool, client_wants_usage: bool, est_tokens: int
    ) -> UpstreamResult | None:
        """Retries and failover: one attempt per admitted target until one commits or the plan runs out."""
        while plan.queue and plan.attempts < plan.max_attempts:
            target = plan.queue.pop(0)
            attempt = await self._admit(kind, target, plan, est_tokens)
            if attempt is None:
                continue
            await self._pause_before_retry(plan, attempt)
            plan.attempts += 1
            plan.previous = (target.endpoint, attempt.key_index)
            attempt.started = time.perf_counter()
            try:
                result = await self._attempt(kind, body, attempt, stream, client_wants_usage, plan.headers)
            except _Retryable as exc:
                plan.last = exc
                await self._settle(attempt, ok=not exc.breaker_failure)
                if not self._requeue(plan, attempt, exc):
                    return None
                continue
            except GatewayError:
                await self._settle(attempt, ok=True)
                raise
            if result.status < 500:
                await self._settle(attempt, ok=True, always=True)
            return result
        return None

    async def _admit(self, kind: str, target: Target, plan: _Plan, est_tokens: int) -> Attempt | None:
        """An attempt on ``target`` when its breaker, keys and limits let one through; else None (wait noted)."""
        adapter = adapter_for(target.config.provider, target.config.api_version, target.config.aws_region)
        if kind not in adapter.kinds:
            return None
        now = self.clock()
        decision = self.breakers.decision(target.endpoint, now)
        probe = None
        if decision == "skip":
            plan.waits.append(self.breakers.retry_after([target.endpoint], now))
            plan.circuit_blocked = True
            return None
        if decision == "probe":
            probe = await self.breakers.acquire_probe(target.endpoint)
            if probe is None:
                plan.waits.append(1.0)
                plan.circuit_blocked = True
                return None
        attempt = Attempt(target, adapter, None, probe)
        ring = self.router.keyrings.get(target.endpoint)
        if ring is not None and ring.keys:
            tried = plan.tried_keys.setdefault(target.endpoint, set())
            attempt.key_index = ring.pick(self.config.rotation.strategy, time.monotonic(), tried)
            if attempt.key_index is None:
                plan.waits.append(ring.next_ready(time.monotonic()))
                await self._settle(attempt, ok=True)
                return None
        wait = await self._limits_ok(target, est_tokens)
        if wait is not None:
            plan.waits.append(wait)
            await self._settle(attempt, ok=True)
            return None
        return attempt

    async def _pause_before_retry(self, plan: _Plan, attempt: Attempt) -> None:
        """Retrying the endpoint just tried: wait ``retry_delay`` (jittered), or its Retry-After on the same key."""
        last = plan.last
        if not plan.attempts or last is None or plan.previous[0] != attempt.target.endpoint:
            return
        delay = self.config.rotation.failover.retry_delay * random.uniform(0.5, 1.5)
        if last.retry_after is not None and plan.previous[1] == attempt.key_index:
            delay = max(delay, last.retry_after)
        await asyncio.sleep(min(delay, self.config.server.timeout))

    async def _settle(self, attempt: Attempt, ok: bool, always: bool = False) -> None:
        """Report an outcome to the breaker: failures always, successes when a probe is out (or ``always``)."""
        if not ok or always or attempt.probe:
            await self.breakers.report(attempt.target.endpoint, ok, attempt.probe)

    def _requeue(self, plan: _Plan, attempt: Attempt, exc: _Retryable) -> bool:
        """Put the target back after a retryable failure; False when the status must not fail over."""
        target, key_index = attempt.target, attempt.key_index
        ring = self.router.keyrings.get(target.endpoint)
        if exc.status == 429 and key_index is not None and ring is not None:
            ring.cool(key_index, exc.retry_after or self.config.rotation.key_cooldown, time.monotonic())
        if exc.status is not None and exc.status not in self.config.rotation.failover.switch_on_status:
            return False
        tried = plan.tried_keys.setdefault(target.endpoint, set())
        if key_index is not None and ring is not None:
            tried.add(key_index)
        if ring is not None and len(tried) < len(ring.keys):
            plan.queue.insert(0, target)  # another key of the same endpoint first
        else:
            tried.clear()
            plan.queue.append(target)  # the other targets first, then this one again
        return True

    async def _first_events(
        self, kind: str, attempt: Attempt, resp: aiohttp.ClientResponse, client_wants_usage: bool
    ) -> UpstreamResult:
        """A stream counts as started once its first event is read: this is where failover stops."""
        target = attempt.target
        translator = attempt.adapter.stream(kind, target.model, client_wants_usage)  # type: ignore[arg-type]
        parser = attempt.adapter.event_reader()
        iterator = resp.content.iter_any()
        first = await _read_first(target.endpoint, iterator, parser, translator)
        first_at = time.perf_counter()
        self.router.observe_latency(target.endpoint, target.model, first_at - attempt.started)
        return UpstreamResult(
            attempt,
            resp.status,
            response=resp,
            translator=translator,
            parser=parser,
            first=first,
            first_byte_at=first_at,
            upstream_ms=(first_at - attempt.started) * 1000,
            handle=_Releaser(lambda: None, iterator),
        )

    async def _attempt(
        self,
        kind: str,
        body: dict[str, Any],
        attempt: Attempt,
        stream: bool,
        client_wants_usage: bool,
        headers: dict[str, str],
    ) -> UpstreamResult:
        """One upstream request: its host slot held until the answer is read (or the stream ends)."""
        target = attempt.target
        session = self.session
        assert session is not None, "the upstream session opens in the app's lifespan"
        req = self._request(kind, body, attempt)
        slot = self._slot(target.config.base_url)
        await slot.acquire()
        release = self._occupy(target.endpoint, slot)
        resp: aiohttp.ClientResponse | None = None
        committed = False
        try:
            signed = req.content is not None
            resp = await session.post(
                URL(req.url, encoded=True) if signed else req.url,  # a signed URL goes as it was signed
                data=req.content if req.content is not None else _json_bytes(req.body),
                headers={**headers, **req.headers, "Content-Type": "application/json"},
                timeout=self.timeout,
                allow_redirects=False,
            )
            if resp.status >= 300:
                raise self._refusal(target, resp, await resp.read())
            if not stream:
                return self._parsed(kind, attempt, resp.status, await resp.read())
            result = await self._first_events(kind, attempt, resp, client_wants_usage)
            assert result.handle is not None
            result.handle.release = release
            committed = True  # the streaming response now owns the upstream response and the slot
            return result
        except UpstreamStreamError as exc:
            raise _Retryable(None, f"{target.endpoint}: {exc}", "stream_error") from None
        except TimeoutError:
            raise _Retryable(None, f"{target.endpoint} timed out", "timeout") from None
        except (aiohttp.ClientError, ValueError) as exc:
            raise _Retryable(None, f"{target.endpoint} unreachable: {type(exc).__name__}", "connect_error") from None
        finally:
            if not committed:
                if resp is not None:
                    resp.release()  # back to the pool when read in full, else the connection is closed
                release()

    def _request(self, kind: str, body: dict[str, Any], attempt: Attempt) -> UpstreamRequest:
        target = attempt.target
        ring = self.router.keyrings.get(target.endpoint)
        key = ring.keys[attempt.key_index] if ring is not None and attempt.key_index is not None else None
        request = attempt.adapter.build(
            kind,  # type: ignore[arg-type]
            body,
            target.model,
            key,
            target.config.base_url,
            stream_usage=True,
        )
        request.headers.update(target.config.extra_headers)
        return request

    def _occupy(self, endpoint: str, slot: asyncio.Semaphore) -> Callable[[], None]:
        """Count the request in flight on ``endpoint``; the returned ``release`` (idempotent) frees the slot."""
        self.router.in_flight[endpoint] = self.router.in_flight.get(endpoint, 0) + 1
        released = False

        def release() -> None:
            nonlocal released
            if not released:
                released = True
                slot.release()
                self.router.in_flight[endpoint] -= 1
                self.router.served[endpoint] = self.router.served.get(endpoint, 0) + 1

        return release

    def _refusal(self, target: Target, resp: aiohttp.ClientResponse, raw: bytes) -> Exception:
        """An upstream status of 300 or more: retryable (failover) or the client's error, passed on."""
        message = f"{target.endpoint} returned {resp.status}: {_upstream_message(raw)}"
        if resp.status in self.config.rotation.failover.switch_on_status or resp.status >= 500:
            return _Retryable(
                resp.status,
                message,
                f"upstream_{resp.status}",
                _retry_after(resp),
                breaker_failure=resp.status >= 500,
            )
        status = resp.status if resp.status < 500 else 502
        return GatewayError(
            status,
            message,
            code="upstream_error" if status >= 500 else None,
            error_class=f"upstream_{resp.status}",
        )

    def _parsed(self, kind: str, attempt: Attempt, status: int, raw: bytes) -> UpstreamResult:
        """A whole (non-streamed) answer in the OpenAI shape; invalid JSON is retryable."""
        target = attempt.target
        try:
            data = json.loads(raw)
        except ValueError:
            raise _Retryable(None, f"{target.endpoint} returned invalid JSON", "malformed") from None
        out, usage = attempt.adapter.parse(kind, data, target.model)  # type: ignore[arg-type]
        upstream_ms = (time.perf_counter() - attempt.started) * 1000
        self.router.observe_latency(target.endpoint, target.model, upstream_ms / 1000)
        passthrough = raw if out is data else None
        return UpstreamResult(attempt, status, body=out, raw=passthrough, usage=usage, upstream_ms=upstream_ms)


def _json_bytes(body: dict[str, Any]) -> bytes:
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()


async def _read_first(
    endpoint: str, iterator: AsyncIterator[bytes], parser: EventReader, translator: StreamTranslator
) -> list[bytes]:
    """Read upstream bytes until the first client event (or the end marker); a cut before it is retryable."""
    first: list[bytes] = []
    while not first and not translator.done:
        try:
            chunk = await iterator.__anext__()
        except StopAsyncIteration:
            for event in parser.flush():
                first.extend(translator.feed(event))
            if not first and not translator.done:
                raise _Retryable(None, f"{endpoint} closed the stream before the first event", "stream_cut") from None
            break
        for event in parser.feed(chunk):
            first.extend(translator.feed(event))
    return first


class _Releaser:
    """Holds the per-host slot and the raw iterator of a committed stream."""

    def __init__(self, release: Callable[[], None], iterator: AsyncIterator[bytes]) -> None:
        self.release = release
        self.iterator = iterator


async def stream_rest(result: UpstreamResult) -> AsyncIterator[bytes]:
    """Yield the client bytes of the rest of a committed stream; raises on upstream failure."""
    translator, parser = result.translator, result.parser
    assert translator is not None and parser is not None and result.handle is not None
    iterator = result.handle.iterator
    while not translator.done:
        try:
            chunk = await iterator.__anext__()
        except StopAsyncIteration:
            events: list[SSEEvent] = parser.flush()
            for event in events:
                for out in translator.feed(event):
                    yield out
            if not translator.done:
                raise UpstreamStreamError("upstream closed the stream before its end marker") from None
            return
        for event in parser.feed(chunk):
            for out in translator.feed(event):
                yield out
