"""Azure OpenAI endpoints: deployment URLs, `api-key`, `api-version`, per-endpoint extra headers."""

from __future__ import annotations

import openai
import pytest
from pydantic import ValidationError

from deployments.llm_gateway.config import EndpointConfig
from tests.deployments.llm_gateway.conftest import ADMIN_KEY, INFER_KEY, base_config, chat


@pytest.fixture
def azure(cloud, tmp_path, monkeypatch):
    monkeypatch.setenv("AZ_KEY", "ck-1")
    return base_config(
        tmp_path,
        {
            "az": {
                "provider": "azure",
                "base_url": cloud.url,
                "api_key_env": "AZ_KEY",
                "api_version": "2024-10-21",
                "models": ["gpt-4o", "text-embedding-3-small"],
                "extra_headers": {"X-Extra-Team": "platform"},
            }
        },
    )


def test_an_azure_endpoint_needs_its_api_version():
    with pytest.raises(ValidationError, match="api_version"):
        EndpointConfig(provider="azure", base_url="https://r.openai.azure.com")
    with pytest.raises(ValidationError, match="api_version"):
        EndpointConfig(provider="azure", base_url="https://r.openai.azure.com", api_version="2024-10-21&x=1")


@pytest.mark.parametrize(
    ("headers", "reason"),
    [
        ({"Authorization": "Bearer other"}, "set by the gateway"),
        ({"api-key": "k"}, "set by the gateway"),
        ({"X-Org": "a\r\nX-Injected: 1"}, "CR, LF"),
        ({"Bad Name": "v"}, "not a header name"),
    ],
)
def test_extra_headers_cannot_replace_credentials_or_split_a_request(headers, reason):
    with pytest.raises(ValidationError, match=reason):
        EndpointConfig(base_url="https://api.example.test/v1", extra_headers=headers)


async def test_chat_goes_to_the_deployment_url_with_the_api_key_header(serve, cloud, azure, auth_env):
    gw = await serve(azure)
    async with gw.client() as c:
        r = await c.post("/v1/chat/completions", json=chat("gpt-4o", max_tokens=20))
    assert r.status_code == 200, r.text
    assert r.json()["choices"][0]["message"]["content"].startswith("[cloud]")
    sent = cloud.requests()[-1]
    assert sent["path"] == "/openai/deployments/gpt-4o/chat/completions"
    assert sent["query"] == {"api-version": "2024-10-21"}
    assert sent["api_key"] == "ck-1" and sent["authorization"] is None
    assert sent["headers"] == {"x-extra-team": "platform"}


async def test_streams_and_embeddings_through_the_openai_sdk(serve, cloud, azure, auth_env):
    gw = await serve(azure)
    client = openai.AsyncOpenAI(base_url=gw.url + "/v1", api_key=INFER_KEY, max_retries=0)
    stream = await client.chat.completions.create(
        model="gpt-4o",
        messages=[{"role": "user", "content": "hi"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = [c async for c in stream]
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices).startswith("[cloud]Hello")
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens > 0
    vectors = await client.embeddings.create(model="text-embedding-3-small", input=["a", "b"])
    assert len(vectors.data) == 2
    assert cloud.requests()[-1]["path"] == "/openai/deployments/text-embedding-3-small/embeddings"


async def test_a_wrong_key_is_the_upstreams_refusal_not_a_leak(serve, cloud, azure, auth_env, monkeypatch):
    monkeypatch.setenv("AZ_KEY", "ck-wrong-secret")
    gw = await serve(azure)
    async with gw.client() as c:
        r = await c.post("/v1/chat/completions", json=chat("gpt-4o"))
    assert r.status_code == 401 and "error" in r.json()
    assert "ck-wrong-secret" not in r.text


async def test_the_registry_api_does_not_take_azure_endpoints(serve, up1, tmp_path, auth_env):
    """An Azure endpoint needs settings the registry does not hold; it is a config-file endpoint."""
    gw = await serve(base_config(tmp_path, {"a": {"base_url": up1.base_url, "models": ["gpt-4o-mini"]}}))
    async with gw.client(ADMIN_KEY) as c:
        r = await c.post(
            "/api/v1/registry", json={"name": "az2", "provider": "azure", "base_url": "https://r.openai.azure.com"}
        )
    assert r.status_code == 422 and "provider" in r.text
