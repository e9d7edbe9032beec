"""The error tracker (``observability.error_tracker``): unexpected errors sent to Sentry.

``dsn_env`` names the variable holding the DSN (never in the file, never logged). With a
DSN, every unexpected exception of the request path (the ones answered with a 500) is
captured with the request id, route and model as tags; nothing else is sent: no default
integrations, no request bodies, no frame variables (they would carry prompts and keys), no performance traces. The Sentry
client is process-wide, so the replicas of one process share it.
"""

from __future__ import annotations

import os
from typing import Any

from rayfleet.logs import get_logger, register_secret

log = get_logger("llm_gateway")


class ErrorTracker:
    def __init__(self, dsn_env: str, service_name: str) -> None:
        dsn = os.environ.get(dsn_env, "").strip() if dsn_env else ""
        self.enabled = bool(dsn)
        if dsn_env and not dsn:
            log.warning(f"observability.error_tracker.dsn_env names ${dsn_env}, which is not set: errors are not sent")
        if not dsn:
            return
        import sentry_sdk

        register_secret(dsn)
        sentry_sdk.init(
            dsn=dsn,
            default_integrations=False,
            auto_enabling_integrations=False,
            include_local_variables=False,  # frame locals would carry prompts and keys
            include_source_context=False,
            traces_sample_rate=0.0,
            server_name=service_name,
            max_breadcrumbs=0,
        )

    def capture(self, exc: BaseException, tags: dict[str, Any]) -> None:
        if not self.enabled:
            return
        import sentry_sdk

        with sentry_sdk.new_scope() as scope:
            for key, value in tags.items():
                scope.set_tag(key, value)
            sentry_sdk.capture_exception(exc)

    def flush(self, timeout: float = 2.0) -> None:
        if self.enabled:
            import sentry_sdk

            sentry_sdk.flush(timeout)
