"""The inference entry point: a request's rings, its refusal in the one error shape, its settlement."""

from __future__ import annotations

from starlette.responses import Response, StreamingResponse

from deployments.llm_gateway.error_tracker import ErrorTracker
from deployments.llm_gateway.errors import GatewayError, error_response
from deployments.llm_gateway.notices import Notices
from deployments.llm_gateway.pipeline import Context, Pipeline
from deployments.llm_gateway.tracing import RequestTracer
from rayfleet.logs import get_logger

log = get_logger("llm_gateway")


class RequestHandler:
    def __init__(
        self, pipeline: Pipeline, tracer: RequestTracer, notices: Notices, error_tracker: ErrorTracker
    ) -> None:
        self.pipeline = pipeline
        self.tracer = tracer
        self.notices = notices
        self.error_tracker = error_tracker

    async def handle(self, ctx: Context) -> Response:
        if self.tracer.active:
            self.tracer.claim(ctx)  # the pipeline ends the request's span, with its rings
        try:
            await self.pipeline.run(ctx)
        except GatewayError as exc:
            ctx.status, ctx.error_class = exc.status, exc.error_class
            if exc.status == 401 or exc.code == "wrong_key_scope":
                self.notices.auth_failure(exc.error_class)
            ctx.response = error_response(exc, ctx.headers)
        except Exception as exc:
            log.exception("unexpected error in the request path", extra={"request_id": ctx.request_id})
            self.error_tracker.capture(exc, {"request_id": ctx.request_id, "route": ctx.route, "model": ctx.model})
            ctx.status, ctx.error_class = 500, "internal"
            ctx.response = error_response(GatewayError(500, "Internal error"))
        response = ctx.response
        assert response is not None
        if isinstance(response, StreamingResponse) and ctx.cache_status != "HIT":
            return response  # POST_FLIGHT and BACKGROUND run when the stream ends
        await self.pipeline.finish(ctx)
        return response
