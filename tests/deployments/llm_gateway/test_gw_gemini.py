"""Google Gemini endpoints: OpenAI chat translated to generateContent and back, JSON and SSE."""

from __future__ import annotations

import json

import openai
import pytest

from deployments.llm_gateway.providers.gemini import from_gemini, to_gemini
from tests.deployments.llm_gateway.conftest import INFER_KEY, base_config, chat
from tests.doubles.gemini_wire import Invalid, validate

WEATHER = [{"type": "function", "function": {"name": "weather", "parameters": {"type": "object"}}}]
CONVERSATION = [
    {"role": "system", "content": "be brief"},
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "what is in this picture, and the weather there?"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
        ],
    },
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "weather", "arguments": '{"x": 1}'}}],
    },
    {"role": "tool", "tool_call_id": "c1", "content": '{"sky": "clear"}'},
]


@pytest.fixture
def gemini(cloud, tmp_path, monkeypatch):
    monkeypatch.setenv("GEMINI_KEY", "ck-1")
    return base_config(
        tmp_path,
        {
            "g": {
                "provider": "gemini",
                "base_url": cloud.url + "/v1beta",
                "api_key_env": "GEMINI_KEY",
                "models": ["gemini-2.0-flash"],
            }
        },
    )


def test_a_whole_conversation_translates_to_a_request_the_service_accepts():
    body = {
        "messages": CONVERSATION,
        "stop": "END",
        "temperature": 0.2,
        "max_tokens": 64,
        "tools": WEATHER,
        "tool_choice": {"type": "function", "function": {"name": "weather"}},
    }
    out = to_gemini(body)
    validate(out)  # the double's strict checks, in-process
    assert out["systemInstruction"] == {"parts": [{"text": "be brief"}]}
    assert out["contents"][0]["parts"][1] == {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}
    assert out["contents"][1] == {"role": "model", "parts": [{"functionCall": {"name": "weather", "args": {"x": 1}}}]}
    assert out["contents"][2]["parts"][0] == {"functionResponse": {"name": "weather", "response": {"sky": "clear"}}}
    assert out["generationConfig"] == {"temperature": 0.2, "maxOutputTokens": 64, "stopSequences": ["END"]}
    assert out["toolConfig"] == {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["weather"]}}


def test_the_double_refuses_what_the_service_refuses():
    with pytest.raises(Invalid, match="Unknown name"):
        validate({"contents": [{"role": "user", "parts": [{"text": "x"}]}], "max_tokens": 5})
    with pytest.raises(Invalid, match="valid role"):
        validate({"contents": [{"role": "assistant", "parts": [{"text": "x"}]}]})
    with pytest.raises(Invalid, match="answers no function call"):
        validate({"contents": [{"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {}}}]}]})


@pytest.mark.parametrize(
    ("data", "finish"),
    [
        ({"candidates": [{"content": {"parts": [{"text": "hi"}]}, "finishReason": "STOP"}]}, "stop"),
        ({"candidates": [{"content": {"parts": [{"text": "h"}]}, "finishReason": "MAX_TOKENS"}]}, "length"),
        ({"candidates": [{"content": {"parts": []}, "finishReason": "SAFETY"}]}, "content_filter"),
        ({"promptFeedback": {"blockReason": "SAFETY"}}, "content_filter"),
        (
            {
                "candidates": [
                    {"content": {"parts": [{"functionCall": {"name": "f", "args": {}}}]}, "finishReason": "STOP"}
                ]
            },
            "tool_calls",
        ),
    ],
)
def test_finish_reasons_map_to_openais(data, finish):
    out, _ = from_gemini(data, "gemini-2.0-flash")
    assert out["choices"][0]["finish_reason"] == finish


async def test_a_tool_call_answer_with_usage(serve, cloud, gemini, auth_env):
    gw = await serve(gemini)
    async with gw.client() as c:
        r = await c.post(
            "/v1/chat/completions",
            json=chat("gemini-2.0-flash", max_tokens=50, tools=WEATHER, tool_choice="required"),
        )
    assert r.status_code == 200, r.text
    body = r.json()
    message = body["choices"][0]["message"]
    assert message["content"].startswith("[cloud]") and body["choices"][0]["finish_reason"] == "tool_calls"
    assert json.loads(message["tool_calls"][0]["function"]["arguments"]) == {"city": "Paris"}
    assert body["usage"]["prompt_tokens"] > 0 and body["usage"]["completion_tokens"] > 0
    sent = cloud.requests()[-1]
    assert sent["path"] == "/v1beta/models/gemini-2.0-flash:generateContent"
    assert sent["x_goog_api_key"] == "ck-1" and sent["authorization"] is None


async def test_the_tool_result_round_trip_is_accepted(serve, cloud, gemini, auth_env):
    gw = await serve(gemini)
    async with gw.client() as c:
        r = await c.post("/v1/chat/completions", json={"model": "gemini-2.0-flash", "messages": CONVERSATION})
    assert r.status_code == 200, r.text


async def test_streaming_through_the_openai_sdk(serve, cloud, gemini, auth_env):
    gw = await serve(gemini)
    client = openai.AsyncOpenAI(base_url=gw.url + "/v1", api_key=INFER_KEY, max_retries=0)
    stream = await client.chat.completions.create(
        model="gemini-2.0-flash",
        messages=[{"role": "user", "content": "hi"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = [c async for c in stream]
    assert chunks[0].choices[0].delta.role == "assistant"
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices).startswith("[cloud]Hello from")
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens > 0
    sent = cloud.requests()[-1]
    assert sent["path"] == "/v1beta/models/gemini-2.0-flash:streamGenerateContent" and sent["query"] == {"alt": "sse"}


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (
            {
                "model": "gemini-2.0-flash",
                "messages": [
                    {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "https://x.test/a.png"}}]}
                ],
            },
            "data URLs",
        ),
        (
            {"model": "gemini-2.0-flash", "messages": [{"role": "tool", "tool_call_id": "nope", "content": "x"}]},
            "unknown tool call",
        ),
        (
            {"model": "gemini-2.0-flash", "messages": [{"role": "system", "content": "only a system prompt"}]},
            "at least one",
        ),
    ],
)
async def test_what_gemini_cannot_take_is_a_clear_400(serve, cloud, gemini, auth_env, body, reason):
    gw = await serve(gemini)
    async with gw.client() as c:
        r = await c.post("/v1/chat/completions", json=body)
    assert r.status_code == 400 and reason in r.json()["error"]["message"]


async def test_embeddings_are_refused_clearly(serve, cloud, gemini, auth_env):
    gw = await serve(gemini)
    async with gw.client() as c:
        r = await c.post("/v1/embeddings", json={"model": "gemini-2.0-flash", "input": "x"})
    assert r.status_code == 400 and r.json()["error"]["type"] == "invalid_request_error"
