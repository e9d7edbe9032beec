"""The demo host of `make up`: started once, reachable with the generated keys, stopped by pid."""

from __future__ import annotations

import asyncssh

from sims.pve.demo import ensure_demo_host, stop_demo_host
from tests.conftest import free_port


async def test_ensure_demo_host_is_idempotent(tmp_path, monkeypatch):
    monkeypatch.setenv("LXC_SIM_PORT", str(free_port()))
    monkeypatch.setenv("LXC_SIM_DIR", "unset")  # restored after the test; ensure_demo_host overwrites it
    first = ensure_demo_host(tmp_path)
    try:
        assert first["started"] is True and first["pid"]
        second = ensure_demo_host(tmp_path)
        assert second["started"] is False and second["pid"] == first["pid"] and second["port"] == first["port"]
        async with asyncssh.connect(
            first["host"],
            first["port"],
            username=first["user"],
            client_keys=[first["key_file"]],
            known_hosts=first["known_hosts"],
        ) as conn:
            result = await conn.run("pveam list local")
        assert result.exit_status == 0 and "debian-12-standard" in result.stdout
        import os

        assert os.environ["LXC_SIM_DIR"] == str((tmp_path / "lxc-sim").resolve())
    finally:
        assert stop_demo_host(tmp_path) is True
