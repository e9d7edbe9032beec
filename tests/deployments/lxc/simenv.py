"""Helpers for the container API tests: a real pve-sim over real SSH on loopback (tests/sims/pve/simenv.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from deployments.lxc.config import LxcConfig
from tests.sims.pve.simenv import TEMPLATE
from tests.sims.pve.simenv import SimEnv as PveSim

API_KEY = "test-key-0123456789abcdef0123456789abcdef"


class SimEnv(PveSim):
    """The simulator plus the container API configuration that reaches it."""

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
            # the jobs of this configuration in a store of its own: xdist workers sharing the home's
            # default store would open the same stream and fence each other (rayfleet.durable.Fenced)
            "jobs_store": f"sqlite:///{tmp / 'jobs.sqlite3'}",
        }
        for key, value in overrides.items():
            if isinstance(value, dict) and isinstance(data.get(key), dict):
                data[key] = {**data[key], **value}
            else:
                data[key] = value
        return LxcConfig.model_validate(data)


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


__all__ = ["API_KEY", "TEMPLATE", "SimEnv", "create_ct", "make_client"]
