"""Inference through the real pipeline: JSON, SSE, completions, embeddings, models."""

from __future__ import annotations

import json

from tests.deployments.llm_gateway.conftest import base_config, chat


async def test_chat_non_streaming(serve, up1, tmp_path, auth_env):
    gw = await serve(base_config(tmp_path, {"a": {"base_url": up1.base_url, "models": ["gpt-4o-mini"]}}))
    async with gw.client() as c:
        r = await c.post("/v1/chat/completions", json=chat())
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["object"] == "chat.completion"
    assert body["choices"][0]["message"]["content"].startswith("[up1]")
    assert r.headers["x-llm-endpoint"] == "a"
    assert float(r.headers["x-rayfleet-overhead-ms"]) >= 0
    assert up1.requests()[-1]["body"]["model"] == "gpt-4o-mini"


async def test_chat_streaming_usage_requested_upstream_but_hidden(serve, up1, tmp_path, auth_env):
    gw = await serve(base_config(tmp_path, {"a": {"base_url": up1.base_url, "models": ["gpt-4o-mini"]}}))
    async with gw.client() as c:
        r = await c.post("/v1/chat/completions", json=chat(stream=True))
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/event-stream")
    events = [e[6:] for e in r.text.split("\n\n") if e.startswith("data: ")]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    assert all(c["choices"] for c in chunks)  # the usage-only chunk was not asked for by the client
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks)
    assert text.startswith("[up1]Hello")
    assert up1.requests()[-1]["body"]["stream_options"] == {"include_usage": True}
