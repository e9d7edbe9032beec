"""What the ASN routes share: the configuration, the dataset being loaded and the rate limiter."""

from __future__ import annotations

from dataclasses import dataclass

from actors.rate_limit import RateLimitWindow
from deployments.asn.config import AsnConfig
from deployments.asn.holder import DatasetHolder
from deployments.asn.limiter import ActorLimiter, Limiter, RedisLimiter
from rayfleet import state as rf_state
from rayfleet.state import ActorHandle


@dataclass
class AsnState:
    config: AsnConfig
    dataset: DatasetHolder
    limiter: Limiter

    @classmethod
    def from_ray(cls, config: AsnConfig) -> AsnState:
        """The background-loaded dataset and the configured limiter (Redis, else the named actor)."""
        return cls(config, start_dataset(config), build_limiter(config))


def start_dataset(config: AsnConfig) -> DatasetHolder:
    """A holder loading the dataset in the background (lookups answer 503 until it is ready)."""
    return DatasetHolder(
        config.db_path,
        config.package_dir,
        config.prefix_file,
        config.fetch_on_start,
        config.operator_prefixes,
        config.operator_names,
    ).start()


def build_limiter(config: AsnConfig, handle: ActorHandle[RateLimitWindow] | None = None) -> Limiter:
    """Redis Lua limiter when a Redis URL is configured, else the shared named actor (or ``handle``)."""
    rate = config.rate_limit
    if rate.redis_url:
        return RedisLimiter(
            rate.redis_url,
            rate.limit,
            rate.window_seconds,
            key_prefix=rate.key_prefix,
            on_store_error=rate.on_store_error,
            retry_interval=rate.redis_retry_interval,
        )
    handle = handle or rf_state.actor(RateLimitWindow, rate.actor_name)
    return ActorLimiter(handle, rate.limit, rate.window_seconds)
