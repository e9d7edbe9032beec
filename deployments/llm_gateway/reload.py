"""The running configuration and ``POST /admin/config/reload``.

``LiveConfig`` is what the stages and routes read at request time: the file's
configuration with the reloaded sections on top. A reload is validated on the replica
that receives it, stored in the control actor, and applied by every replica when its
control poll sees the new version (``Reload.apply``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import ValidationError

from deployments.llm_gateway.config import GatewayConfig
from deployments.llm_gateway.errors import GatewayError
from deployments.llm_gateway.forwarder import Forwarder
from deployments.llm_gateway.routing import Router
from deployments.llm_gateway.security import SecurityStages
from deployments.llm_gateway.shared_state import BudgetLeases
from rayfleet.logs import get_logger

log = get_logger("llm_gateway")

# Sections ``POST /admin/config/reload`` may change at run time; any other needs a redeploy.
RELOADABLE = frozenset({"security", "rate_limiting", "rotation", "circuit_breaker", "budget"})


class LiveConfig:
    """The file's configuration (``base``), the reloaded sections and the two merged (``current``)."""

    def __init__(self, config: GatewayConfig) -> None:
        self.base = config
        self.current = config
        self.sections: dict[str, Any] = {}


class Reload:
    """Validates reload bodies and applies reloaded sections to the parts that keep derived values."""

    def __init__(
        self,
        live: LiveConfig,
        router: Router,
        forwarder: Forwarder,
        security: SecurityStages,
        budget: BudgetLeases,
        configure_actors: Callable[[GatewayConfig], Awaitable[None]],
    ) -> None:
        self.live = live
        self.router = router
        self.forwarder = forwarder
        self.security = security
        self.budget = budget
        self.configure_actors = configure_actors

    def validate(self, body: dict[str, Any]) -> dict[str, Any]:
        """The sections a reload would apply (merged into the running ones), or the error refusing it whole."""
        other = sorted(set(body) - RELOADABLE)
        if other:
            raise GatewayError(
                409,
                f"sections {other} cannot be reloaded (redeploy to change them); reloadable: {sorted(RELOADABLE)}",
                code="not_reloadable",
            )
        if not all(isinstance(v, dict) for v in body.values()):
            raise GatewayError(422, "each section must be an object", code="invalid_config")
        current = self.live.current.model_dump(mode="json")
        sections = {**self.live.sections, **{name: _merged(current[name], value) for name, value in body.items()}}
        self._merged_config(sections)
        return sections

    def _merged_config(self, sections: dict[str, Any]) -> GatewayConfig:
        try:
            # the file's keys as written (a default dumped back would count as set, e.g. a refused section)
            written = self.live.base.model_dump(mode="json", exclude_unset=True)
            return GatewayConfig.model_validate({**written, **sections})
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ())) or "config"
            raise GatewayError(422, f"{where}: {first.get('msg', 'invalid value')}", code="invalid_config") from None

    async def apply(self, sections: dict[str, Any]) -> None:
        """Apply reloaded sections on this replica (every replica does, from the control actor)."""
        config = self._merged_config(sections)
        self.live.current, self.live.sections = config, sections
        self.router.config = config
        self.forwarder.config = config
        self.security.reconfigure(config)
        self.budget.daily_limit = config.budget.daily_limit
        self.budget.chunk = max(config.budget.daily_limit / 100.0, 0.0)
        await self.configure_actors(config)
        log.info("configuration sections reloaded", extra={"sections": sorted(sections)})


def _merged(base: Any, change: Any) -> Any:
    """``change`` deep-merged into ``base`` (objects merge, anything else replaces)."""
    if isinstance(base, dict) and isinstance(change, dict):
        return {**base, **{k: _merged(base.get(k), v) for k, v in change.items()}}
    return change
