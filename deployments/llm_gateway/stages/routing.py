"""ROUTING: the ``router`` stage forwards upstream and answers; a streamed answer settles when it ends.

A stream whose virtual key is revoked, rotated or expires while it runs is ended with an error
event (checked at each upstream chunk against the replica's copy of the keys); what it used is
charged. For a stream, POST_FLIGHT and BACKGROUND run (``settle``, the pipeline's ``finish``) when the
body ends, however it ends: completed, failed after the first byte, or never started because
the client left first (``SettledStream``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable

import aiohttp
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.types import Receive, Scope, Send

from deployments.llm_gateway.cache import RedisCache, SQLiteCache
from deployments.llm_gateway.errors import sse_error_event
from deployments.llm_gateway.forwarder import Forwarder, UpstreamResult, stream_rest
from deployments.llm_gateway.links import StreamLinkFilter
from deployments.llm_gateway.pipeline import Context
from deployments.llm_gateway.reload import LiveConfig
from deployments.llm_gateway.security import SecurityStages
from deployments.llm_gateway.shared_state import BreakerClient
from deployments.llm_gateway.sse import DONE
from deployments.llm_gateway.stages.common import overhead
from deployments.llm_gateway.tracing import RequestTracer
from deployments.llm_gateway.virtual_keys import VirtualKeys
from rayfleet.logs import get_logger

log = get_logger("llm_gateway")

Settle = Callable[[Context], Awaitable[None]]


class SettledStream(StreamingResponse):
    """An SSE response whose settlement runs even if its body never starts.

    A client that hangs up before the first chunk is sent makes Starlette drop the body
    iterator unstarted; an async generator that never started never runs its ``finally``,
    so the upstream connection, the budget reservation and the request's records would
    never be settled. ``on_unstarted`` does that settlement then.
    """

    def __init__(
        self,
        content: AsyncIterator[bytes],
        started: Callable[[], bool],
        on_unstarted: Callable[[], None],
        headers: dict[str, str],
    ) -> None:
        super().__init__(content, media_type="text/event-stream", headers=headers)
        self._started = started
        self._on_unstarted = on_unstarted

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            if not self._started():
                self._on_unstarted()


class KeyWithdrawn(Exception):
    """The stream's virtual key stopped being valid while the stream ran."""


async def _unwired(ctx: Context) -> None:
    raise RuntimeError("the router stage's settlement is not wired to a pipeline")


class Forward:
    """``router``: send to the first target that answers (``Forwarder``), clean links, store the answer."""

    def __init__(
        self,
        live: LiveConfig,
        forwarder: Forwarder,
        security: SecurityStages,
        cache: SQLiteCache | RedisCache | None,
        breakers: BreakerClient,
        tracer: RequestTracer,
        keys: VirtualKeys,
    ) -> None:
        self.live = live
        self.forwarder = forwarder
        self.security = security
        self.cache = cache
        self.breakers = breakers
        self.tracer = tracer
        self.keys = keys
        self.settle: Settle = _unwired  # the pipeline's ``finish``, wired once the pipeline exists

    async def run(self, ctx: Context) -> None:
        est = ctx.prompt_estimate + ctx.output_estimate
        trace: dict[str, str] = {}
        if self.tracer.active:
            self.tracer.inject(ctx.request.scope, trace)
        result = await self.forwarder.forward(
            ctx.kind, ctx.body, ctx.targets, ctx.stream, ctx.client_wants_usage, est, trace
        )
        ctx.result = result
        ctx.endpoint = result.attempt.target.endpoint
        ctx.model = result.attempt.target.model
        ctx.upstream_ms = result.upstream_ms
        ctx.status = 200
        headers = {"X-LLM-Endpoint": ctx.endpoint, "X-Cache": ctx.cache_status, **ctx.headers}
        if not ctx.stream:
            ctx.usage = result.usage
            ctx.cacheable_body = result.body
            raw = result.raw
            links = self.security.links
            if links.active and result.body is not None:
                replaced = links.clean_response(result.body)
                ctx.links_replaced += replaced
                raw = raw if not replaced else None  # re-encoded only when a link was replaced
            await self._store_cache(ctx)  # before the client has the answer
            headers.update(overhead(ctx, result.upstream_ms))
            if raw is not None:
                ctx.response = Response(raw, media_type="application/json", headers=headers)
            else:
                ctx.response = JSONResponse(result.body, headers=headers)
            return
        ctx.ttft = result.first_byte_at - ctx.started
        headers.update(overhead(ctx, result.upstream_ms, at=result.first_byte_at))
        headers["Cache-Control"] = "no-cache"
        body = self._stream(ctx, result)
        ctx.response = SettledStream(
            body, lambda: ctx.stream_started, lambda: self._unstarted_stream(ctx, result), headers=headers
        )

    async def _store_cache(self, ctx: Context) -> None:
        """Store a complete answer of a cache miss (the ``cache_check`` plugin decides whether there is one)."""
        if self.cache is None or ctx.cache_key is None or ctx.cache_status != "MISS" or ctx.cacheable_body is None:
            return
        try:
            await self.cache.put(ctx.cache_key, ctx.model, ctx.cacheable_body)
        except Exception:
            log.warning("cache store failed", exc_info=True)

    def _unstarted_stream(self, ctx: Context, result: UpstreamResult) -> None:
        """The client left before the first chunk was sent: settle as ``_stream``'s ``finally`` would."""
        ctx.stream_failed = True
        ctx.error_class = "client_disconnected"
        if ctx.usage is None and result.translator is not None:
            ctx.usage = result.translator.final_usage(ctx.prompt_estimate)
        asyncio.get_running_loop().create_task(self._end_stream(ctx, result))

    async def _stream(self, ctx: Context, result: UpstreamResult) -> AsyncIterator[bytes]:
        translator = result.translator
        assert translator is not None and result.handle is not None and result.response is not None
        links = StreamLinkFilter(self.security.links)
        ctx.stream_started = True
        try:
            for chunk in result.first:
                yield links.feed(chunk)
            async for chunk in stream_rest(result):
                self._check_key(ctx)
                yield links.feed(chunk)
            tail = links.flush()
            if tail:
                yield tail
            ctx.usage = translator.final_usage(ctx.prompt_estimate)
            ctx.cacheable_body = translator.reassembler.build(ctx.usage)
            if links.active:
                self.security.links.clean_response(ctx.cacheable_body)
            await self._store_cache(ctx)  # before the client reads the end of the stream
            yield DONE
        except Exception as exc:
            yield self._failed(ctx, exc)
        finally:
            ctx.links_replaced += links.replaced
            if ctx.usage is None:
                ctx.usage = translator.final_usage(ctx.prompt_estimate)
            asyncio.get_running_loop().create_task(self._end_stream(ctx, result))

    def _check_key(self, ctx: Context) -> None:
        """A virtual key revoked, rotated or expired while its stream runs ends the stream (``KeyWithdrawn``)."""
        record = ctx.virtual_key
        if record is not None and not self.keys.still_valid(record, time.time()):
            raise KeyWithdrawn

    def _failed(self, ctx: Context, exc: Exception) -> bytes:
        """The stream broke after its first byte: note it, count a breaker failure, end with an error event."""
        ctx.stream_failed = True
        ctx.cacheable_body = None
        if isinstance(exc, KeyWithdrawn):
            ctx.error_class = "key_withdrawn"
            return sse_error_event("this key was revoked, rotated or has expired", code="invalid_api_key")
        ctx.error_class = "stream_" + type(exc).__name__
        log.warning(
            "upstream stream failed after the first byte",
            extra={"endpoint": ctx.endpoint, "error": type(exc).__name__, "request_id": ctx.request_id},
        )
        asyncio.get_running_loop().create_task(self.breakers.report(ctx.endpoint, False))
        reason = type(exc).__name__
        total = self.live.current.server.total_timeout
        if isinstance(exc, TimeoutError):
            reason = "timed out waiting for the next event"
            if total is not None and not isinstance(exc, aiohttp.ServerTimeoutError):
                reason = f"server.total_timeout ({total:g} s) reached"
        return sse_error_event(f"upstream stream from {ctx.endpoint} failed: {reason}")

    async def _end_stream(self, ctx: Context, result: UpstreamResult) -> None:
        try:
            if result.response is not None:
                result.response.release()
        except Exception:
            log.warning("closing upstream stream failed", exc_info=True)
        finally:
            if result.handle is not None:
                result.handle.release()
            await self.settle(ctx)
