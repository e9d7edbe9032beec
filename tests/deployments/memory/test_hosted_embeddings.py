"""Hosted embeddings: `MEM_EMBEDDING_API_KEY` as a bearer token, OpenAI's request and answer
shapes, against a strict double on a real socket (tests/doubles/openai_embeddings.py)."""

from __future__ import annotations

import json

import pytest

from deployments.memory import embed
from deployments.memory.config import HOSTED_MODEL, HOSTED_URL, load_settings
from deployments.memory.errors import EmbeddingError
from tests.deployments.memory.conftest import run_json, run_mem
from tests.doubles.openai_embeddings import HostedEmbeddings

KEY = "sk-test-3f1c9a7e5b2d4f608e1a9c3b5d7f9e2a"


@pytest.fixture
def hosted():
    with HostedEmbeddings(KEY) as double:
        yield double


def hosted_env(mem_env: dict[str, str], double: HostedEmbeddings, key: str = KEY) -> dict[str, str]:
    return {
        **mem_env,
        "MEM_EMBEDDING_URL": double.url,
        "MEM_EMBEDDING_MODEL": "text-embedding-3-small",
        "MEM_EMBEDDING_API_KEY": key,
    }


def test_a_key_alone_means_openai_and_is_never_shown() -> None:
    settings = load_settings({"MEM_DB": "/tmp/x.db", "MEM_EMBEDDING_API_KEY": KEY})
    assert (settings.embedding_url, settings.embedding_model) == (HOSTED_URL, HOSTED_MODEL)
    assert settings.embeddings_enabled and KEY not in repr(settings) and KEY not in str(settings)
    mine = load_settings({"MEM_DB": "/tmp/x.db", "MEM_EMBEDDING_API_KEY": KEY, "MEM_EMBEDDING_MODEL": "m"})
    assert mine.embedding_model == "m"


def test_hybrid_search_through_the_hosted_endpoint(mem_env, hosted) -> None:
    env = hosted_env(mem_env, hosted)
    run_json(env, "save", "deploy-target", "production runs on the blue cluster in eu-west")
    run_json(env, "save", "lunch", "the canteen serves pasta on fridays")
    found = run_json(env, "search", "which cluster does production use")
    assert found["mode"] == "hybrid" and found["results"][0]["key"] == "deploy-target"
    accepted = [r for r in hosted.requests if r["authorization"] == f"Bearer {KEY}"]
    assert len(accepted) == len(hosted.requests) >= 3  # two saves and a query, every one with the key
    for request in accepted:
        body = json.loads(request["body"])
        assert body["model"] == "text-embedding-3-small" and body["encoding_format"] == "float"
        assert isinstance(body["input"], list) and all(isinstance(t, str) and t for t in body["input"])


def test_a_wrong_key_falls_back_to_full_text_without_showing_either_key(mem_env, hosted) -> None:
    wrong = "sk-wrong-0000000000000000000000000000"
    env = hosted_env(mem_env, hosted, key=wrong)
    run_json(env, "save", "deploy-target", "production runs on the blue cluster")
    proc = run_mem(env, "search", "production cluster")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["mode"] == "text"
    assert "rejected the API key (HTTP 401)" in proc.stderr
    assert wrong not in proc.stderr + proc.stdout and KEY not in proc.stderr + proc.stdout
    doctor = run_mem(env, "doctor")
    assert doctor.returncode == 1 and "rejected the API key" in doctor.stdout + doctor.stderr
    assert wrong not in doctor.stdout + doctor.stderr


def test_no_key_is_told_apart_from_a_wrong_one(hosted) -> None:
    client = embed.EmbeddingClient(hosted.url, "text-embedding-3-small", 5.0)
    with pytest.raises(EmbeddingError, match=r"needs an API key \(set MEM_EMBEDDING_API_KEY\) \(HTTP 401\)"):
        client.embed(["x"])
    assert hosted.requests[-1]["authorization"] == ""


def test_the_double_refuses_what_the_real_api_refuses(hosted) -> None:
    no_model = embed.EmbeddingClient(hosted.url, "", 5.0, KEY)
    with pytest.raises(EmbeddingError, match=r"HTTP 400 \(invalid_request_error\)"):
        no_model.embed(["x"])
    unknown = embed.EmbeddingClient(hosted.url, "no-such-model", 5.0, KEY)
    with pytest.raises(EmbeddingError, match=r"HTTP 404 \(model_not_found\)"):
        unknown.embed(["x"])
    status, body = hosted.answer(
        "/v1/embeddings",
        {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"},
        b'{"model": "text-embedding-3-small", "input": [], "extra": 1}',
    )
    assert status == 400 and "Unrecognized request argument" in body["error"]["message"]
    status, _ = hosted.answer("/v1/embeddings", {"Authorization": f"Bearer {KEY}", "Content-Type": "text/plain"}, b"{}")
    assert status == 400


def test_the_key_never_travels_over_plain_http_to_another_host() -> None:
    with pytest.raises(EmbeddingError, match="refusing to send MEM_EMBEDDING_API_KEY over plain http"):
        embed.EmbeddingClient("http://embeddings.example.net/v1", "m", 5.0, KEY)
    embed.EmbeddingClient("https://embeddings.example.net/v1", "m", 5.0, KEY)  # https: fine
    embed.EmbeddingClient("http://example.net/v1", "m", 5.0)  # no key: nothing to protect


@pytest.mark.parametrize("error", [TimeoutError("timed out"), ConnectionRefusedError(111, "refused")])
def test_a_socket_timeout_reads_as_the_timeout_and_other_failures_as_unreachable(monkeypatch, error) -> None:
    """The request's own socket timeout can end the call a moment before the caller's wait does:
    it is the same timeout, and says so."""

    def failing(*_args: object, **_kwargs: object) -> tuple[int, bytes]:
        raise error

    monkeypatch.setattr(embed, "_post", failing)
    client = embed.EmbeddingClient("http://127.0.0.1:9", "m", 0.3)
    with pytest.raises(EmbeddingError) as caught:
        client.embed(["text"])
    expected = "timed out after 0.3s" if isinstance(error, TimeoutError) else "unreachable: ConnectionRefusedError"
    assert expected in caught.value.message
