"""A real pve-sim over real SSH on loopback, with the client material to reach it."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

import asyncssh

from sims.pve import ThreadedSim
from sims.pve.model import NodeModel

TEMPLATE = "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst"


class SimEnv:
    """A running simulator plus the client material to reach it."""

    def __init__(
        self,
        root: Path,
        op_delay: float = 0.0,
        nodes: list[str] | None = None,
        hardware: dict[str, tuple[int, int]] | None = None,
    ) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.client_key = root / "client_key"
        if not self.client_key.exists():
            key = asyncssh.generate_private_key("ssh-ed25519")
            key.write_private_key(str(self.client_key))
            key.write_public_key(str(self.client_key) + ".pub")
        self.authorized_keys = root / "authorized_keys"
        self.authorized_keys.write_text((root / "client_key.pub").read_text())
        self.sim = ThreadedSim(root / "state", self.authorized_keys, op_delay=op_delay, nodes=nodes, hardware=hardware)
        self.port = self.sim.start()
        self.ports = self.sim.ports
        lines = []
        for name, port in self.ports.items():
            public = asyncssh.read_private_key(str(self.sim.host_keys[name])).export_public_key().decode().strip()
            lines.append(f"[127.0.0.1]:{port} {public}\n")
        self.known_hosts = root / "known_hosts"
        self.known_hosts.write_text("".join(lines))

    @property
    def model(self) -> NodeModel:
        return self.sim.host.model

    def commands(self, node: str | None = None) -> list[str]:
        return self.sim.commands(node)

    def slow_down(self, op_delay: float) -> None:
        """From now on, long operations (create, backup, snapshot, migrate) hold the container lock this long."""
        for server in self.sim.sims.values():
            server.host.op_delay = server.host.pct.op_delay = op_delay

    def node_model(self, node: str) -> NodeModel:
        return self.sim.sims[node].host.model

    def zone(self, node: str | None = None, **overrides: Any) -> dict[str, Any]:
        """The SSH coordinates of the simulator (of one node of a cluster), as a config's host entry spells them."""
        return {
            "host": "127.0.0.1",
            "port": self.ports[node] if node else self.port,
            "user": "root",
            "key_file": str(self.client_key),
            "known_hosts": str(self.known_hosts),
            **overrides,
        }

    async def connect(self, node: str | None = None) -> asyncssh.SSHClientConnection:
        """A client connection to the simulator (to one node of a cluster), host key pinned."""
        return await asyncssh.connect(
            "127.0.0.1",
            self.ports[node] if node else self.port,
            username="root",
            client_keys=[str(self.client_key)],
            known_hosts=str(self.known_hosts),
        )

    def power_off(self, node: str, ssh_only: bool = False) -> None:
        """Take one node of a cluster down: its SSH server refuses, its open connections drop, the
        other nodes report it offline (with `ssh_only`, they still see it online)."""
        self.sim.power_off(node, ssh_only)

    def power_on(self, node: str) -> None:
        self.sim.power_on(node)

    def stop(self) -> None:
        self.sim.stop()


E = TypeVar("E", bound=SimEnv)


def own_sim(kind: type[E], tmp_path: Path, nodes: list[str] | None = None) -> Iterator[E]:
    """A simulator (a cluster of `nodes`) of its own under `tmp_path` for one test (the `fresh_sim`
    and `cluster` fixtures), removed after it."""
    env = kind(tmp_path / "sim", nodes=nodes)
    yield env
    env.stop()
    shutil.rmtree(tmp_path / "sim", ignore_errors=True)
