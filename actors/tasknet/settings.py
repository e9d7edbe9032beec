"""What a node actor is configured with: plain data (it crosses the Ray boundary).

The deployment's `TasknetConfig.actor_settings()` builds a `NodeSettings`; tests and the bench
pass partial ones, so every key is optional and each reader keeps its default.
"""

from __future__ import annotations

import math
from typing import TypedDict

DEFAULT_IMPORTS = (
    "math",
    "json",
    "re",
    "statistics",
    "itertools",
    "functools",
    "collections",
    "dataclasses",
    "typing",
    "unittest",
    "heapq",
    "bisect",
)


class NetworkParams(TypedDict, total=False):
    """Genesis parameters every node of the network shares."""

    faucet_sp: int
    task_completion_tax: float
    proposal_voting_period: int
    proposal_quorum: float
    min_anonymity_set: int
    min_validators: int


class LlmParams(TypedDict, total=False):
    base_url: str | None
    api_key_env: str
    model: str
    timeout_s: float
    max_tokens: int


class AgentParams(TypedDict, total=False):
    enabled: bool


class UpgradeParams(TypedDict, total=False):
    max_package_bytes: int
    test_timeout_s: float
    memory_mb: int
    allowed_imports: list[str]
    python: str
    sandbox_uid: int


class WebrtcParams(TypedDict, total=False):
    enabled: bool
    host_addresses: list[str]


class PeerParams(TypedDict, total=False):
    url: str
    node_id: str | None


class NodeSettings(TypedDict, total=False):
    network: NetworkParams
    anti_entropy_interval_s: float
    anti_entropy_max_interval_s: float
    raft_tick_s: float
    raft_election_timeout_s: float | None
    raft_heartbeat_interval_s: float | None
    raft_snapshot_entries: int
    ratify_timeout_s: float
    tool_allowed_hosts: list[str]
    tool_timeout_s: float
    llm: LlmParams
    agent: AgentParams
    upgrades: UpgradeParams
    webrtc: WebrtcParams
    push_gossip: bool
    anonymous_relay_max_delay_s: float
    checkpoint_interval_s: float
    checkpoint_settle_s: float
    peers: list[PeerParams]
    advertise_url: str | None
    peer_rate_per_s: float
    peer_burst: float


def election_ticks(timeout_s: float, tick_s: float) -> int:
    """`raft_election_timeout_s` in ticks of `raft_tick_s`: rounded up, at least 4."""
    return max(4, math.ceil(timeout_s / tick_s - 1e-9))


def heartbeat_ticks(interval_s: float, tick_s: float) -> int:
    """`raft_heartbeat_interval_s` in ticks of `raft_tick_s`: rounded up, at least 1."""
    return max(1, math.ceil(interval_s / tick_s - 1e-9))
