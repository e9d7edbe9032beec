"""Environment variables and their defaults."""

from __future__ import annotations

import os

import pytest

from deployments.memory.config import load_settings, parse_duration
from deployments.memory.errors import UsageError


def test_defaults():
    s = load_settings({})
    assert s.db_path == os.path.expanduser("~/.long-term-memory/memories.db")
    assert s.scope == "user" and s.debug is False and s.log_file == ""
    assert s.embedding_url == "" and s.embedding_model == "" and s.embed_disable is False
    assert s.embed_timeout == 5.0 and s.conflict_disable is False and s.serve_token == ""
    assert s.serve_port == 8080 and s.rrf_k == 60 and s.embeddings_enabled is False


def test_values_and_switches(tmp_path):
    s = load_settings(
        {
            "MEM_DB": str(tmp_path / "x.db"),
            "MEM_SCOPE": "work",
            "MEM_LOG_FILE": "/tmp/l",
            "MEM_EMBEDDING_URL": "http://h:1",
            "MEM_EMBEDDING_MODEL": "m",
            "MEM_EMBED_TIMEOUT": "3s",
            "MEM_CONFLICT_DISABLE": "1",
            "MEM_SERVE_TOKEN": "sekret",
            "MEM_SERVE_PORT": "9000",
        }
    )
    assert s.db_path == str(tmp_path / "x.db") and s.db_dir == str(tmp_path)
    assert s.scope == "work" and s.debug is True  # MEM_LOG_FILE turns debugging on
    assert s.embeddings_enabled and s.embed_timeout == 3.0 and s.conflict_disable and s.serve_port == 9000
    assert "sekret" not in repr(s)
    assert load_settings({"MEM_EMBEDDING_URL": "http://h:1", "MEM_EMBED_DISABLE": "1"}).embeddings_enabled is False
    assert load_settings({"MEM_DB": "rel/x.db"}).db_path == os.path.abspath("rel/x.db")


@pytest.mark.parametrize(
    "text,seconds", [("5s", 5), ("500ms", 0.5), ("1m30s", 90), ("2", 2), ("1.5s", 1.5), ("1h", 3600)]
)
def test_durations(text, seconds):
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "soon", "5 s", "-1", "0s", "5x"])
def test_bad_durations(text):
    with pytest.raises(UsageError):
        parse_duration(text)


@pytest.mark.parametrize(
    "env",
    [{"MEM_SERVE_PORT": "http"}, {"MEM_SERVE_PORT": "70000"}, {"MEM_RRF_K": "-1"}, {"MEM_RRF_TEXT_WEIGHT": "heavy"}],
)
def test_bad_values(env):
    with pytest.raises(UsageError):
        load_settings(env)
