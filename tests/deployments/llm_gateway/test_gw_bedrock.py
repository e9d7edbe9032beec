"""AWS Bedrock endpoints: the Converse API both ways, SigV4-signed, event-stream streams."""

from __future__ import annotations

import json

import openai
import pytest
from pydantic import ValidationError

from deployments.llm_gateway.config import EndpointConfig
from deployments.llm_gateway.providers.base import UpstreamStreamError
from deployments.llm_gateway.providers.bedrock import BedrockAdapter, EventStreamReader, to_converse
from tests.deployments.llm_gateway.conftest import (
    AWS_KEY,
    AWS_TEMPORARY_KEY,
    BEDROCK_MODEL,
    INFER_KEY,
    base_config,
    chat,
)
from tests.doubles.bedrock_wire import Refused, frame, validate

WEATHER = [{"type": "function", "function": {"name": "weather", "parameters": {"type": "object"}}}]
CONVERSATION = [
    {"role": "system", "content": "be brief"},
    {"role": "user", "content": "weather in Paris?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "t1", "type": "function", "function": {"name": "weather", "arguments": '{"city": "Paris"}'}}
        ],
    },
    {"role": "tool", "tool_call_id": "t1", "content": '{"sky": "clear"}'},
]


@pytest.fixture
def bedrock(aws, tmp_path, monkeypatch):
    monkeypatch.setenv("BEDROCK_KEY", AWS_KEY)
    return base_config(
        tmp_path,
        {
            "br": {
                "provider": "bedrock",
                "base_url": aws.url,
                "aws_region": "us-east-1",
                "api_key_env": "BEDROCK_KEY",
                "models": [BEDROCK_MODEL],
            }
        },
    )


@pytest.mark.parametrize("region", ["", "us_east_1", "us-east-1\r\n"])
def test_a_bedrock_endpoint_needs_a_region(region):
    with pytest.raises(ValidationError, match="aws_region|region"):
        EndpointConfig(
            provider="bedrock", base_url="https://bedrock-runtime.us-east-1.amazonaws.com", aws_region=region
        )


def test_a_tool_conversation_translates_to_a_request_the_service_accepts():
    out = to_converse({"messages": CONVERSATION, "tools": WEATHER, "max_tokens": 64, "stop": ["END"]})
    validate(out)
    assert out["system"] == [{"text": "be brief"}]
    assert out["messages"][1]["content"] == [
        {"toolUse": {"toolUseId": "t1", "name": "weather", "input": {"city": "Paris"}}}
    ]
    assert out["messages"][2]["content"] == [
        {"toolResult": {"toolUseId": "t1", "content": [{"json": {"sky": "clear"}}]}}
    ]
    assert out["inferenceConfig"] == {"maxTokens": 64, "stopSequences": ["END"]}
    with pytest.raises(Refused, match="toolConfig"):
        validate(to_converse({"messages": CONVERSATION}))  # the double is as strict as the service


def test_corrupt_event_stream_frames_are_a_stream_error():
    reader = EventStreamReader()
    good = frame("messageStart", {"role": "assistant"})
    assert [e.event for e in reader.feed(good[:7])] == []  # a partial frame waits
    assert [(e.event, json.loads(e.data)) for e in reader.feed(good[7:])] == [("messageStart", {"role": "assistant"})]
    broken = bytearray(frame("metadata", {"usage": {}}))
    broken[-6] ^= 0xFF  # payload byte: the message CRC no longer matches
    with pytest.raises(UpstreamStreamError, match="malformed"):
        reader.feed(bytes(broken))


def test_an_exception_frame_fails_the_stream_with_its_type():
    translator = BedrockAdapter("us-east-1").stream("chat", BEDROCK_MODEL, client_wants_usage=False)
    (event,) = EventStreamReader().feed(frame("throttlingException", {"message": "slow down"}, "exception"))
    with pytest.raises(UpstreamStreamError, match="throttlingException"):
        translator.feed(event)


async def test_a_signed_tool_call_with_usage(serve, aws, bedrock, auth_env):
    gw = await serve(bedrock)
    async with gw.client() as c:
        r = await c.post("/v1/chat/completions", json=chat(BEDROCK_MODEL, tools=WEATHER, tool_choice="required"))
    assert r.status_code == 200, r.text
    body = r.json()
    message = body["choices"][0]["message"]
    assert message["content"].startswith("[aws]") and body["choices"][0]["finish_reason"] == "tool_calls"
    assert json.loads(message["tool_calls"][0]["function"]["arguments"]) == {"city": "Paris"}
    assert body["usage"]["completion_tokens"] > 0
    sent = aws.requests()[-1]
    assert sent["path"] == f"/model/{BEDROCK_MODEL}/converse"
    assert sent["authorization"].startswith("AWS4-HMAC-SHA256 Credential=AKIDTESTKEY/")


async def test_the_tool_result_round_trip_is_accepted(serve, aws, bedrock, auth_env):
    gw = await serve(bedrock)
    async with gw.client() as c:
        r = await c.post(
            "/v1/chat/completions", json={"model": BEDROCK_MODEL, "messages": CONVERSATION, "tools": WEATHER}
        )
    assert r.status_code == 200, r.text


async def test_event_stream_answers_stream_through_the_openai_sdk(serve, aws, bedrock, auth_env):
    gw = await serve(bedrock)
    client = openai.AsyncOpenAI(base_url=gw.url + "/v1", api_key=INFER_KEY, max_retries=0)
    stream = await client.chat.completions.create(
        model=BEDROCK_MODEL,
        messages=[{"role": "user", "content": "hi"}],
        tools=WEATHER,  # type: ignore[arg-type]
        tool_choice="required",
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = [c async for c in stream]
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    arguments = "".join(
        call.function.arguments or ""
        for c in chunks
        if c.choices
        for call in c.choices[0].delta.tool_calls or []
        if call.function is not None
    )
    assert text.startswith("[aws]Hello") and json.loads(arguments) == {"city": "Paris"}
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "tool_calls"
    assert chunks[-1].usage is not None and chunks[-1].usage.prompt_tokens > 0
    assert aws.requests()[-1]["path"] == f"/model/{BEDROCK_MODEL}/converse-stream"


async def test_a_temporary_key_signs_its_session_token(serve, aws, bedrock, auth_env, monkeypatch):
    monkeypatch.setenv("BEDROCK_KEY", AWS_TEMPORARY_KEY)
    gw = await serve(bedrock)
    async with gw.client() as c:
        r = await c.post("/v1/chat/completions", json=chat(BEDROCK_MODEL))
    assert r.status_code == 200, r.text


@pytest.mark.parametrize(
    ("key", "status"),
    [("AKIDTESTKEY:the-wrong-secret", 403), ("ASIATESTKEY:temp-secret", 403), ("no-colon-in-this-secret", 502)],
)
async def test_a_bad_credential_is_refused_without_showing_it(serve, aws, bedrock, auth_env, monkeypatch, key, status):
    monkeypatch.setenv("BEDROCK_KEY", key)
    gw = await serve(bedrock)
    async with gw.client() as c:
        r = await c.post("/v1/chat/completions", json=chat(BEDROCK_MODEL))
    assert r.status_code == status, r.text
    assert key.split(":")[-1] not in r.text


async def test_an_exception_frame_mid_stream_ends_the_stream_with_an_error(serve, aws, bedrock, auth_env):
    aws.faults({"exception_after": 3, "chunk_delay_ms": 50, "times": 1})
    gw = await serve(bedrock)
    async with gw.client() as c:
        r = await c.post("/v1/chat/completions", json=chat(BEDROCK_MODEL, stream=True))
    events = [e for e in r.text.split("\n\n") if e.strip()]
    assert events[-1] == "data: [DONE]" and json.loads(events[-2][6:])["error"]["code"] == "upstream_error"
    assert any('"content"' in e for e in events[:-2])  # what came before the exception reached the client
