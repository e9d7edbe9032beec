"""Anthropic translation both ways (JSON and SSE), the openai SDK, models, aliases and groups."""

from __future__ import annotations

import json

import openai
import pytest

from deployments.llm_gateway.providers.anthropic import to_anthropic
from deployments.llm_gateway.sse import SSEParser
from tests.deployments.llm_gateway.conftest import INFER_KEY, base_config, chat


def test_request_translation_to_anthropic():
    body = {
        "messages": [
            {"role": "system", "content": "be brief"},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "hi"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAA"}},
                ],
            },
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "w", "arguments": '{"x": 1}'}}],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
        ],
        "stop": "END",
        "temperature": 0.2,
        "tool_choice": "required",
        "tools": [{"type": "function", "function": {"name": "w", "parameters": {"type": "object"}}}],
    }
    out = to_anthropic(body, "claude-sonnet-4-6")
    assert out["system"] == "be brief" and out["max_tokens"] == 4096 and out["stop_sequences"] == ["END"]
    assert out["messages"][0]["content"][1]["source"] == {"type": "base64", "media_type": "image/png", "data": "AAA"}
    assert out["messages"][1]["content"][0] == {"type": "tool_use", "id": "c1", "name": "w", "input": {"x": 1}}
    assert out["messages"][2]["content"][0]["type"] == "tool_result"
    assert out["tool_choice"] == {"type": "any"} and out["tools"][0]["input_schema"] == {"type": "object"}


def test_sse_parser_splits_on_event_boundaries_across_chunks():
    parser = SSEParser()
    assert parser.feed(b'event: a\r\ndata: {"x"') == []
    events = parser.feed(b": 1}\r\n\r\ndata: 2\n\n")
    assert [(e.event, e.data) for e in events] == [("a", '{"x": 1}'), ("", "2")]


@pytest.fixture
def anth(keyed, tmp_path, monkeypatch):
    monkeypatch.setenv("ANTH_KEY", "uk-a")
    return base_config(
        tmp_path,
        {
            "claude": {
                "provider": "anthropic",
                "base_url": keyed.base_url,
                "api_key_env": "ANTH_KEY",
                "models": ["claude-sonnet-4-6"],
            }
        },
    )


async def test_anthropic_non_streaming_with_tools(serve, keyed, anth, auth_env):
    gw = await serve(anth)
    tools = [{"type": "function", "function": {"name": "weather", "parameters": {"type": "object"}}}]
    async with gw.client() as c:
        r = await c.post(
            "/v1/chat/completions", json=chat("claude-sonnet-4-6", max_tokens=50, tools=tools, tool_choice="required")
        )
    assert r.status_code == 200, r.text
    body = r.json()
    msg = body["choices"][0]["message"]
    assert msg["content"].startswith("[keyed]") and body["choices"][0]["finish_reason"] == "tool_calls"
    assert json.loads(msg["tool_calls"][0]["function"]["arguments"]) == {"city": "Paris"}
    assert body["usage"]["completion_tokens"] > 0
    sent = keyed.requests()[-1]
    assert sent["path"] == "/v1/messages" and sent["x_api_key"] == "uk-a" and sent["authorization"] is None


async def test_anthropic_streaming_with_usage_and_tool_deltas(serve, keyed, anth, auth_env):
    gw = await serve(anth)
    tools = [{"type": "function", "function": {"name": "weather", "parameters": {"type": "object"}}}]
    async with gw.client() as c:
        r = await c.post(
            "/v1/chat/completions",
            json=chat(
                "claude-sonnet-4-6",
                stream=True,
                tools=tools,
                tool_choice="required",
                stream_options={"include_usage": True},
            ),
        )
    events = [e[6:] for e in r.text.split("\n\n") if e.startswith("data: ")]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    args = "".join(
        tc["function"].get("arguments", "")
        for c in chunks
        if c["choices"]
        for tc in c["choices"][0]["delta"].get("tool_calls") or []
    )
    assert text.startswith("[keyed]Hello") and json.loads(args) == {"city": "Paris"}
    assert chunks[-2]["choices"][0]["finish_reason"] == "tool_calls"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] > 0


async def test_anthropic_rejects_embeddings_clearly(serve, keyed, anth, auth_env):
    gw = await serve(anth)
    async with gw.client() as c:
        r = await c.post("/v1/embeddings", json={"model": "claude-sonnet-4-6", "input": "x"})
    assert r.status_code == 400 and r.json()["error"]["type"] == "invalid_request_error"


async def test_openai_sdk_unmodified(serve, up1, tmp_path, auth_env):
    cfg = base_config(
        tmp_path,
        {"a": {"base_url": up1.base_url, "models": ["gpt-4o-mini", "text-embedding-3-small"]}},
        model_aliases={"fast": "gpt-4o-mini"},
        model_groups={"grp": {"strategy": "random", "models": [{"model": "gpt-4o-mini"}]}},
    )
    gw = await serve(cfg)
    client = openai.AsyncOpenAI(base_url=gw.url + "/v1", api_key=INFER_KEY, max_retries=0)
    out = await client.chat.completions.create(model="fast", messages=[{"role": "user", "content": "hi"}])
    assert out.choices[0].message.content.startswith("[up1]") and out.usage.total_tokens > 0
    stream = await client.chat.completions.create(
        model="grp", messages=[{"role": "user", "content": "hi"}], stream=True, stream_options={"include_usage": True}
    )
    chunks = [c async for c in stream]
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices).startswith("[up1]")
    assert chunks[-1].usage is not None and chunks[-1].usage.prompt_tokens > 0
    comp = await client.completions.create(model="gpt-4o-mini", prompt="say hi")
    assert comp.choices[0].text.startswith("[up1]")
    comp_stream = await client.completions.create(model="gpt-4o-mini", prompt="say hi", stream=True)
    assert "".join([c.choices[0].text async for c in comp_stream if c.choices]).startswith("[up1]")
    emb = await client.embeddings.create(model="text-embedding-3-small", input=["a", "b"])
    assert len(emb.data) == 2 and len(emb.data[0].embedding) == 8
    ids = {m.id for m in (await client.models.list()).data}
    assert {"gpt-4o-mini", "text-embedding-3-small", "fast", "grp"} <= ids
    with pytest.raises(openai.AuthenticationError):
        await openai.AsyncOpenAI(base_url=gw.url + "/v1", api_key="wrong", max_retries=0).models.list()
    with pytest.raises(openai.NotFoundError):
        await client.chat.completions.create(model="nope", messages=[{"role": "user", "content": "hi"}])


async def test_models_retrieve_answers_for_every_served_model_alias_and_group(serve, up1, tmp_path, auth_env):
    """The SDK's ``models.retrieve`` (``GET /v1/models/{id}``): every id ``models.list`` shows, ids with a
    slash included; an unknown id is the SDK's NotFoundError with the error shape."""
    cfg = base_config(
        tmp_path,
        {"a": {"base_url": up1.base_url, "models": ["gpt-4o-mini", "meta-llama/Llama-3-8B"]}},
        model_aliases={"fast": "gpt-4o-mini", "llama": "meta-llama/Llama-3-8B"},
        model_groups={"grp": {"strategy": "random", "models": [{"model": "gpt-4o-mini"}]}},
    )
    gw = await serve(cfg)
    client = openai.AsyncOpenAI(base_url=gw.url + "/v1", api_key=INFER_KEY, max_retries=0)
    listed = {m.id: m for m in (await client.models.list()).data}
    assert set(listed) == {"gpt-4o-mini", "meta-llama/Llama-3-8B", "fast", "llama", "grp"}
    for model_id, card in listed.items():
        got = await client.models.retrieve(model_id)
        assert (got.id, got.object, got.owned_by) == (model_id, "model", card.owned_by)
    assert (await client.models.retrieve("llama")).model_extra["alias_of"] == "meta-llama/Llama-3-8B"
    with pytest.raises(openai.NotFoundError) as missing:
        await client.models.retrieve("nope")
    assert missing.value.body["code"] == "model_not_found"
    async with gw.client(key="wrong") as c:
        assert (await c.get("/v1/models/fast")).status_code == 401


async def test_groups_cheapest_and_fallback_chain(serve, up1, up2, tmp_path, auth_env):
    cfg = base_config(
        tmp_path,
        {
            "a": {"base_url": up1.base_url, "models": ["gpt-4o", "gpt-4o-mini"]},
            "b": {"base_url": up2.base_url, "models": ["claude-sonnet-4-6"]},
        },
        model_groups={"g": {"strategy": "cheapest", "models": [{"model": "gpt-4o"}, {"model": "gpt-4o-mini"}]}},
        fallback_chains={"gpt-4o": [{"provider": "b", "model": "claude-sonnet-4-6"}]},
    )
    gw = await serve(cfg)
    async with gw.client() as c:
        r = await c.post("/v1/chat/completions", json=chat("g"))
        assert up1.requests()[-1]["body"]["model"] == "gpt-4o-mini"
        up1.faults({"status": 503, "times": -1})
        r = await c.post("/v1/chat/completions", json=chat("gpt-4o"))
    assert r.status_code == 200 and r.headers["x-llm-endpoint"] == "b"
    assert up2.requests()[-1]["body"]["model"] == "claude-sonnet-4-6"


async def test_fastest_group_prefers_measured_lower_latency(serve, up1, up2, tmp_path, auth_env):
    cfg = base_config(
        tmp_path,
        {"a": {"base_url": up1.base_url, "models": ["slow-m"]}, "b": {"base_url": up2.base_url, "models": ["quick-m"]}},
        model_groups={"g": {"strategy": "fastest", "models": [{"model": "slow-m"}, {"model": "quick-m"}]}},
    )
    gw = await serve(cfg)
    up1.faults({"latency_ms": 200, "times": -1})
    async with gw.client() as c:
        for _ in range(2):
            await c.post("/v1/chat/completions", json=chat("g"))
        up2.reset()
        for _ in range(3):
            r = await c.post("/v1/chat/completions", json=chat("g"))
            assert r.headers["x-llm-endpoint"] == "b"
