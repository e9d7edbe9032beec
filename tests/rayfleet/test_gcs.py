"""GCS fault tolerance settings, and the keeper that restarts a dead gcs_server as it was started."""

from __future__ import annotations

import os
import signal
import subprocess

import pytest

from rayfleet.gcs import DEFAULT_NAMESPACE, GcsKeeper, GcsStorage, Process, find_gcs, parse_storage, storage_from_env
from rayfleet.supervisor import RestartPolicy
from tests.polling import eventually_sync


def test_a_plain_address_uses_the_default_namespace():
    storage = parse_storage("127.0.0.1:6379")
    assert storage == GcsStorage("127.0.0.1", 6379, DEFAULT_NAMESPACE)
    assert storage.env() == {"RAY_REDIS_ADDRESS": "127.0.0.1:6379", "RAY_external_storage_namespace": "rayfleet"}
    assert storage.start_args() == []


def test_a_password_goes_to_ray_start_and_nowhere_else():
    storage = parse_storage("redis://:s3cret-pass@127.0.0.1:6380?namespace=prod-eu")
    assert storage.namespace == "prod-eu" and storage.port == 6380
    assert storage.start_args() == ["--redis-password", "s3cret-pass"]
    assert "s3cret" not in repr(storage) and "s3cret" not in str(storage.env())


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("redis://127.0.0.1:6379/3", "always uses Redis database 0"),
        ("rediss://127.0.0.1:6379", "must be a redis:// URL"),
        ("redis://127.0.0.1", "needs a host and a port"),
        ("redis://127.0.0.1:6379?namespace=a b", "letters, digits"),
    ],
)
def test_settings_ray_cannot_honour_are_refused(url, message):
    with pytest.raises(ValueError, match=message):
        parse_storage(url)


def test_the_environment_switches_it_on(monkeypatch):
    monkeypatch.delenv("RAYFLEET_GCS_REDIS", raising=False)
    assert storage_from_env() is None
    monkeypatch.setenv("RAYFLEET_GCS_REDIS", "127.0.0.1:6379")
    monkeypatch.setenv("RAYFLEET_GCS_NAMESPACE", "site-b")
    assert storage_from_env() == GcsStorage("127.0.0.1", 6379, "site-b")


@pytest.fixture
def fake_gcs(tmp_path):
    """A process that looks like a head's gcs_server: argv[0] ends in /gcs_server and names the head's folder."""
    marker = str(tmp_path / "head")
    binary = tmp_path / "head" / "bin" / "gcs_server"  # named like Ray's, inside the head's folder
    binary.parent.mkdir(parents=True)
    binary.symlink_to("/bin/sleep")
    env = {"PATH": os.environ["PATH"], "RAY_REDIS_ADDRESS": "127.0.0.1:6379", "MARKER_ENV": "kept"}
    proc = subprocess.Popen([str(binary), "600"], env=env)
    yield proc, marker
    for pid in {proc.pid, find_gcs(marker)} - {None}:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    proc.wait()


def test_the_keeper_restarts_a_killed_gcs_with_its_arguments_and_environment(fake_gcs):
    proc, marker = fake_gcs
    eventually_sync(lambda: find_gcs(marker) == proc.pid, what="the fake gcs_server found by its folder")
    keeper = GcsKeeper(marker, policy=RestartPolicy(initial_backoff=0.05, probe_interval=0.05))
    keeper.start()
    try:
        assert keeper.status()["state"] == "running"
        proc.kill()
        proc.wait()
        status = eventually_sync(
            lambda: (s := keeper.status())["restarts"] == 1 and s["state"] == "running" and s, what="restart"
        )
        new_pid = find_gcs(marker)
        assert new_pid is not None and new_pid != proc.pid and status["pid"] == new_pid
        again = Process.read(new_pid)
        assert again.argv == [f"{marker}/bin/gcs_server", "600"]
        assert again.env["MARKER_ENV"] == "kept" and again.env["RAY_REDIS_ADDRESS"] == "127.0.0.1:6379"
    finally:
        keeper.stop()


def test_a_keeper_needs_a_gcs_to_keep(tmp_path):
    with pytest.raises(RuntimeError, match="no gcs_server"):
        GcsKeeper(str(tmp_path / "nowhere"))
