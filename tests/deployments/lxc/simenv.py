"""Helpers for the container API tests: a real pve-sim over real SSH on loopback."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import asyncssh
import httpx

from deployments.lxc.config import LxcConfig
from deployments.lxc.sim import ThreadedSim

API_KEY = "test-key-0123456789abcdef0123456789abcdef"
TEMPLATE = "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst"


class SimEnv:
    """A running simulator plus the client material to reach it."""

    def __init__(self, root: Path, op_delay: float = 0.0) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.client_key = root / "client_key"
        if not self.client_key.exists():
            key = asyncssh.generate_private_key("ssh-ed25519")
            key.write_private_key(str(self.client_key))
            key.write_public_key(str(self.client_key) + ".pub")
        self.authorized_keys = root / "authorized_keys"
        self.authorized_keys.write_text((root / "client_key.pub").read_text())
        self.sim = ThreadedSim(root / "state", self.authorized_keys, op_delay=op_delay)
        self.port = self.sim.start()
        public = asyncssh.read_private_key(str(self.sim.host_key)).export_public_key().decode().strip()
        self.known_hosts = root / "known_hosts"
        self.known_hosts.write_text(f"[127.0.0.1]:{self.port} {public}\n")

    @property
    def model(self) -> Any:
        return self.sim.host.model

    def commands(self) -> list[str]:
        return self.sim.commands()

    def zone(self, **overrides: Any) -> dict[str, Any]:
        return {
            "host": "127.0.0.1",
            "port": self.port,
            "user": "root",
            "key_file": str(self.client_key),
            "known_hosts": str(self.known_hosts),
            **overrides,
        }

    def config(self, tmp: Path, **overrides: Any) -> LxcConfig:
        data: dict[str, Any] = {
            "api_key": API_KEY,
            "regions": {"eu-south-1": {"availability_zones": {"az1": self.zone()}}},
            "instance_sizes": {
                "small": {"memory": 512, "cpulimit": 1, "storage": "local-lvm:8"},
                "medium": {"memory": 1024, "cpulimit": 2, "storage": "local-lvm:16"},
            },
            "compose_dir": str(tmp / "compose"),
            "upload_dir": str(tmp / "uploads"),
            "conf_backup_dir": str(tmp / "conf-backups"),
            "download_dir": str(tmp / "downloads"),
            "audit_log": str(tmp / "audit.log"),
        }
        for key, value in overrides.items():
            if isinstance(value, dict) and isinstance(data.get(key), dict):
                data[key] = {**data[key], **value}
            else:
                data[key] = value
        return LxcConfig.model_validate(data)

    def stop(self) -> None:
        self.sim.stop()


def make_client(config: LxcConfig) -> tuple[httpx.AsyncClient, Any]:
    from deployments.lxc.app import create_app

    app = create_app(config, state=None)
    client = httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app, raise_app_exceptions=False),
        base_url="http://lxc.test",
        headers={"X-API-Key": API_KEY},
        timeout=30,
    )
    return client, app


async def create_ct(api: httpx.AsyncClient, **body: Any) -> str:
    payload = {"image_id": TEMPLATE, **body}
    response = await api.post("/api/v1/lxc/instances", json=payload)
    assert response.status_code == 200, response.text
    return response.json()["instance_ids"][0]
