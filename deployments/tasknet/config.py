"""The task network's configuration (config/tasknet.yaml, env overrides `TASKNET__KEY=value`).

Secrets never go here: each node's API token comes from the environment variable named
by `token_env` (`n1:<token>,n2:<token>,...`; `rayfleet up` generates it in var/secrets.env),
the LLM gateway key from `llm.api_key_env`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import cast

from pydantic import BaseModel, Field, field_validator, model_validator

from actors.tasknet.peering import check_peer_url
from actors.tasknet.settings import (
    DEFAULT_IMPORTS,
    LlmParams,
    NetworkParams,
    NodeSettings,
    PeerParams,
    UpgradeParams,
    WebrtcParams,
    election_ticks,
    heartbeat_ticks,
)
from rayfleet.config import load_yaml
from rayfleet.deploy import base_url
from rayfleet.paths import resolve

FLEET_GATEWAY = "fleet"


class LlmSettings(BaseModel):
    base_url: str | None = Field(
        default=FLEET_GATEWAY,
        description="OpenAI-compatible API base; `fleet` (the default) is this fleet's own LLM gateway, "
        "at /llm/v1 on the Serve address the fleet runs on ($RAYFLEET_HOST:$RAYFLEET_PORT); null turns the agent's "
        "LLM off",
    )
    api_key_env: str = "LLM_PROXY_API_KEYS"
    model: str = "tasknet-agent"
    timeout_s: float = 30.0
    max_tokens: int = 512

    def params(self) -> LlmParams:
        params = cast(LlmParams, self.model_dump())
        if self.base_url == FLEET_GATEWAY:
            env = os.environ
            serve = base_url(env.get("RAYFLEET_HOST", "127.0.0.1"), env.get("RAYFLEET_PORT", "8000"))
            params["base_url"] = serve + "/llm/v1"
        return params


class UpgradeSettings(BaseModel):
    max_package_bytes: int = 32_768
    test_timeout_s: float = 20.0
    memory_mb: int = 512
    allowed_imports: list[str] = Field(default_factory=lambda: list(DEFAULT_IMPORTS))
    python: str = Field(
        default="/usr/bin/python3", description="interpreter inside the sandbox (only /usr is visible there)"
    )
    sandbox_uid: int = Field(
        default=65534, ge=1, description="the unprivileged user tests run as when the node is root"
    )


class WebrtcSettings(BaseModel):
    enabled: bool = True
    host_addresses: list[str] = Field(default_factory=lambda: ["127.0.0.1"])


class NetworkSettings(BaseModel):
    """Genesis parameters every node of the network shares (written once by the bootstrap node)."""

    faucet_sp: int = Field(default=1000, ge=0)
    task_completion_tax: float = Field(default=0.02, ge=0, le=0.5)
    proposal_voting_period: int = Field(
        default=86_400, ge=1, description="seconds a proposal stays open; nobody closes it earlier"
    )
    proposal_quorum: float = Field(
        default=0.5, ge=0, le=1, description="share of the snapshot weight that must vote for an approval"
    )
    min_anonymity_set: int = Field(default=3, ge=1, description="smallest ring an anonymous vote may hide in")
    min_validators: int = Field(
        default=1, ge=1, le=64, description="a validator_change never leaves fewer validators than this"
    )


class PeerSettings(BaseModel):
    """A node of another cluster this deployment's node `node` dials over HTTP."""

    url: str = Field(description="the remote node's base URL, e.g. http://10.0.0.2:8000/tasknet/n1")
    node_id: str | None = Field(
        default=None, max_length=64, description="pin the remote node's id: its join answer must be signed by it"
    )
    node: str | None = Field(default=None, description="the local node that dials it (default: the bootstrap node)")

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        return check_peer_url(value)


class TasknetConfig(BaseModel):
    nodes: list[str] = Field(default_factory=lambda: ["n1", "n2", "n3"], min_length=1)
    validators: list[str] | None = Field(
        default=None,
        min_length=1,
        max_length=64,
        description="the configured nodes the genesis names validators (default: all of them); "
        "later changes go through validator_change proposals",
    )
    data_dir: Path = Path("var/tasknet")
    token_env: str = "TASKNET_NODE_TOKENS"
    public_reads: bool = True
    max_body_bytes: int = 262_144
    network: NetworkSettings = NetworkSettings()
    anti_entropy_interval_s: float = Field(
        default=0.5,
        gt=0,
        description="seconds between anti-entropy rounds after any change (a round compares log digests "
        "with a peer and pulls what differs); doubled after each round that found nothing, up to "
        "`anti_entropy_max_interval_s`",
    )
    anti_entropy_max_interval_s: float = Field(
        default=4.0,
        gt=0,
        le=600,
        description="the longest pause between anti-entropy rounds of an idle node: the repair bound of "
        "an event a node missed while nothing else changed (at least `anti_entropy_interval_s`)",
    )
    raft_tick_s: float = Field(
        default=0.05,
        gt=0,
        description="the unit Raft's timeouts count in (not a polling interval: a node wakes only for its "
        "next heartbeat, check-quorum or election timeout)",
    )
    raft_heartbeat_interval_s: float | None = Field(
        default=None,
        gt=0,
        le=60,
        description="how often a leader sends heartbeats; default 2 `raft_tick_s` ticks (0.1 s), rounded "
        "up to whole ticks; below the election timeout",
    )
    raft_election_timeout_s: float | None = Field(
        default=None,
        gt=0,
        le=600,
        description="a follower without word from a leader for this long (randomized up to twice it) "
        "campaigns, and a leader that heard from no majority for this long steps down; default 10 "
        "`raft_tick_s` ticks. Raise it on every validator when validators talk over HTTP peer links "
        "slower than that (at least 4 ticks)",
    )
    raft_snapshot_entries: int = Field(
        default=10_000,
        ge=1,
        le=10_000_000,
        description="a validator snapshots its Raft state and drops the log prefix once this many entries "
        "were applied past its last snapshot",
    )
    ratify_timeout_s: float = 10.0
    tool_allowed_hosts: list[str] = Field(default_factory=list)
    tool_timeout_s: float = 10.0
    llm: LlmSettings = LlmSettings()
    agent_enabled: bool = True
    upgrades: UpgradeSettings = UpgradeSettings()
    webrtc: WebrtcSettings = WebrtcSettings()
    ws_poll_s: float = 1.0
    anonymous_relay_max_delay_s: float = Field(
        default=2.0,
        ge=0,
        le=60,
        description="an anonymous vote enters the network through a random peer after 0..this s",
    )
    checkpoint_interval_s: float = Field(
        default=300.0, ge=1, le=86_400, description="checkpoint horizons are multiples of this on the event clock"
    )
    checkpoint_settle_s: float = Field(
        default=120.0, ge=0, le=86_400, description="a node checkpoints at a horizon this long after it passed"
    )

    peers: list[PeerSettings] = Field(default_factory=list, max_length=64)
    advertise_url: str | None = Field(
        default=None,
        description="this deployment's tasknet base URL as peers reach it (node `<node>` is `<advertise_url>/<node>`)",
    )
    genesis_author: str | None = Field(
        default=None,
        max_length=64,
        description="join the network whose bootstrap node has this id instead of writing a genesis",
    )
    peer_rate_per_s: float = Field(default=20.0, gt=0, description="requests per second per remote peer")
    peer_burst: float = Field(default=40.0, ge=1, description="requests a remote peer may send at once")

    @field_validator("advertise_url")
    @classmethod
    def _advertise(cls, value: str | None) -> str | None:
        return None if value is None else check_peer_url(value)

    @model_validator(mode="after")
    def _peer_nodes(self) -> TasknetConfig:
        for peer in self.peers:
            if peer.node is not None and peer.node not in self.nodes:
                raise ValueError(f"peer {peer.url}: node {peer.node} is not one of nodes")
        for name in self.validators or []:
            if name not in self.nodes:
                raise ValueError(f"validator {name} is not one of nodes")
        timeout = self.raft_election_timeout_s
        if timeout is not None and timeout < 4 * self.raft_tick_s:
            raise ValueError(
                f"raft_election_timeout_s ({timeout}) must be at least 4 raft_tick_s ticks "
                f"({4 * self.raft_tick_s}): a leader sends heartbeats every 2 ticks by default"
            )
        heartbeat, election = self.raft_heartbeat_ticks(), self.raft_election_ticks()
        if heartbeat * 2 > election:
            raise ValueError(
                f"raft_heartbeat_interval_s ({heartbeat} ticks) must be at most half the election timeout "
                f"({election} ticks): a follower must hear at least two heartbeats before it campaigns"
            )
        if self.anti_entropy_max_interval_s < self.anti_entropy_interval_s:
            raise ValueError(
                f"anti_entropy_max_interval_s ({self.anti_entropy_max_interval_s}) must be at least "
                f"anti_entropy_interval_s ({self.anti_entropy_interval_s})"
            )
        return self

    def raft_election_ticks(self) -> int:
        """The election timeout in ticks (10 unless `raft_election_timeout_s` is set; at least 4)."""
        if self.raft_election_timeout_s is None:
            return 10
        return election_ticks(self.raft_election_timeout_s, self.raft_tick_s)

    def raft_heartbeat_ticks(self) -> int:
        """The heartbeat interval in ticks (2 unless `raft_heartbeat_interval_s` is set; at least 1)."""
        if self.raft_heartbeat_interval_s is None:
            return 2
        return heartbeat_ticks(self.raft_heartbeat_interval_s, self.raft_tick_s)

    @property
    def default_node(self) -> str:
        return self.nodes[0]

    def node_dir(self, name: str) -> str:
        return str(resolve(self.data_dir) / name)

    def actor_settings(self, node: str | None = None) -> NodeSettings:
        """What a node actor needs (plain data: it crosses the Ray boundary); with `node`, its peer links."""
        node = node or self.default_node
        peers: list[PeerParams] = [
            {"url": p.url, "node_id": p.node_id} for p in self.peers if (p.node or self.default_node) == node
        ]
        return {
            "peers": peers,
            "advertise_url": f"{self.advertise_url}/{node}" if self.advertise_url else None,
            "peer_rate_per_s": self.peer_rate_per_s,
            "peer_burst": self.peer_burst,
            "network": cast(NetworkParams, self.network.model_dump()),
            "anti_entropy_interval_s": self.anti_entropy_interval_s,
            "anti_entropy_max_interval_s": self.anti_entropy_max_interval_s,
            "anonymous_relay_max_delay_s": self.anonymous_relay_max_delay_s,
            "raft_tick_s": self.raft_tick_s,
            "raft_election_timeout_s": self.raft_election_timeout_s,
            "raft_heartbeat_interval_s": self.raft_heartbeat_interval_s,
            "raft_snapshot_entries": self.raft_snapshot_entries,
            "ratify_timeout_s": self.ratify_timeout_s,
            "checkpoint_interval_s": self.checkpoint_interval_s,
            "checkpoint_settle_s": self.checkpoint_settle_s,
            "tool_allowed_hosts": self.tool_allowed_hosts,
            "tool_timeout_s": self.tool_timeout_s,
            "llm": self.llm.params(),
            "agent": {"enabled": self.agent_enabled},
            "upgrades": cast(UpgradeParams, self.upgrades.model_dump()),
            "webrtc": cast(WebrtcParams, self.webrtc.model_dump()),
        }


def load(path: str | Path | None = "config/tasknet.yaml") -> TasknetConfig:
    return load_yaml(path, TasknetConfig, env_prefix="TASKNET")
