"""Bedrock endpoints are health-probed: a SigV4-signed ListAsyncInvokes (``GET /async-invoke``) on
the runtime host, checked by the protocol double as strictly as the Converse calls; up/down as for
the other providers (a 403 is alive), and a signature too old to send is skipped, never sent."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest

from actors.llm_gateway import BreakerBoard, EndpointProber
from deployments.llm_gateway.providers.bedrock import PROBE_PATH, BedrockAdapter, credentials
from rayfleet import state
from tests.deployments.llm_gateway.conftest import AWS_KEY, AWS_TEMPORARY_KEY, BEDROCK_MODEL, base_config
from tests.polling import eventually


def get(url: str, headers: dict[str, str]) -> httpx.Response:
    return httpx.get(url, headers=headers, trust_env=False)


@pytest.mark.parametrize("key", [AWS_KEY, AWS_TEMPORARY_KEY])
def test_the_signed_probe_is_accepted_by_the_double(aws, key):
    probe = BedrockAdapter("us-east-1").probe_request(aws.url, key)
    assert probe.url == aws.url + PROBE_PATH and probe.expires_at is not None
    r = get(probe.url, probe.headers)
    assert r.status_code == 200, r.text
    assert r.json() == {"asyncInvokeSummaries": []}
    (sent,) = aws.requests()
    assert sent["path"] == "/async-invoke" and sent["query"] == {"maxResults": "1"}
    assert sent["authorization"].startswith(f"AWS4-HMAC-SHA256 Credential={key.split(':')[0]}/")


def test_the_double_checks_the_probe_like_the_service(aws):
    probe = BedrockAdapter("us-east-1").probe_request(aws.url, AWS_KEY)
    tampered = get(aws.url + "/async-invoke?maxResults=2", probe.headers)  # the query is signed
    assert tampered.status_code == 403 and tampered.headers["x-amzn-ErrorType"] == "InvalidSignatureException"
    wrong = BedrockAdapter("us-east-1").probe_request(aws.url, "AKIDTESTKEY:the-wrong-secret")
    assert get(wrong.url, wrong.headers).status_code == 403
    elsewhere = BedrockAdapter("eu-west-1").probe_request(aws.url, AWS_KEY)  # scoped to another region
    assert get(elsewhere.url, elsewhere.headers).status_code == 403
    unsigned = BedrockAdapter("us-east-1").probe_request(aws.url, "not-an-aws-key")
    assert unsigned.headers == {} and unsigned.expires_at is None
    r = get(unsigned.url, unsigned.headers)
    assert r.status_code == 403 and r.headers["x-amzn-ErrorType"] == "MissingAuthenticationTokenException"


@pytest.mark.parametrize("query", ["maxResults=0", "maxResults=1001", "maxResults=one", "limit=1"])
def test_the_double_validates_the_probe_query_after_the_signature(aws, query):
    url = f"{aws.url}/async-invoke?{query}"
    request = AWSRequest("GET", url)
    SigV4Auth(credentials(AWS_KEY), "bedrock", "us-east-1").add_auth(request)
    r = get(url, dict(request.headers.items()))
    assert r.status_code == 400 and r.headers["x-amzn-ErrorType"] == "ValidationException", r.text


def bedrock_cfg(tmp_path: Path, aws: Any) -> dict[str, Any]:
    endpoint = {
        "provider": "bedrock",
        "base_url": aws.url,
        "aws_region": "us-east-1",
        "api_key_env": "BEDROCK_KEY",
        "models": [BEDROCK_MODEL],
        "extra_headers": {"X-Extra-Team": "ml"},
    }
    return base_config(
        tmp_path,
        {"br": endpoint},
        circuit_breaker={"failure_threshold": 5, "recovery_timeout": 600},
        health_check={"enabled": True, "interval": 600, "timeout": 5, "unhealthy_threshold": 2, "healthy_threshold": 2},
    )


async def probed_gateway(serve, tmp_path: Path, aws: Any, tag: str) -> tuple[Any, Any]:
    breakers = state.actor(BreakerBoard, f"gw-test-brp-breakers-{tag}-{tmp_path.name}", 5, 600.0, 30.0)
    prober = state.actor(EndpointProber, f"gw-test-brp-prober-{tag}-{tmp_path.name}", breakers)
    await serve(bedrock_cfg(tmp_path, aws), state={"breakers": breakers, "prober": prober})
    await eventually(lambda: prober.instance.status()["rounds"] >= 1, what="the first probe round")
    return breakers.instance, prober.instance


async def test_the_prober_marks_a_bedrock_endpoint_down_and_up(serve, aws, tmp_path, auth_env, monkeypatch):
    monkeypatch.setenv("BEDROCK_KEY", AWS_KEY)
    board, prober = await probed_gateway(serve, tmp_path, aws, "updown")
    assert prober.status()["targets"] == ["br"]
    sent = [r for r in aws.requests() if r["path"] == "/async-invoke"]
    assert sent and sent[0]["authorization"].startswith("AWS4-HMAC-SHA256 Credential=AKIDTESTKEY/")
    assert sent[0]["headers"] == {"x-extra-team": "ml"}  # extra_headers go with the probe, unsigned
    assert not [r for r in aws.requests() if r["path"].startswith("/model/")]  # no inference, no tokens
    assert board.peek("br")["health"] == "up"

    aws.faults({"path": "/async-invoke", "status": 503, "times": 3})
    for _ in range(3):
        await prober.probe_round()
    assert board.peek("br")["health"] == "down"
    for _ in range(2):
        await prober.probe_round()
    assert board.peek("br")["health"] == "up"
    events = [e for e in board.events() if e["endpoint"] == "br"]
    assert Counter(e["event"] for e in events) == Counter({"endpoint_down": 1, "endpoint_up": 1})
    assert events[0]["reason"] == "HTTP 503"


async def test_a_refused_signature_still_reads_as_alive(serve, aws, tmp_path, auth_env, monkeypatch):
    monkeypatch.setenv("BEDROCK_KEY", "AKIDTESTKEY:the-wrong-secret")
    board, prober = await probed_gateway(serve, tmp_path, aws, "refused")
    for _ in range(2):
        outcomes = await prober.probe_round()
        assert outcomes == [("br", True, "")]  # the service answered (403): alive, as for other providers
    assert board.peek("br")["health"] == "up" and board.peek("br")["failures"] == 0


async def test_an_expired_signature_is_skipped_not_sent(aws):
    breakers = state.actor(BreakerBoard, "gw-test-brp-stale", 5, 600.0, 30.0)
    breakers.instance.configure_health(1, 1)
    prober = EndpointProber(breakers)
    fresh = BedrockAdapter("us-east-1").probe_request(aws.url, AWS_KEY)
    prober._targets = [
        {"name": "old", "url": fresh.url, "headers": fresh.headers, "expires_at": time.time() - 1},
        {"name": "new", "url": fresh.url, "headers": fresh.headers, "expires_at": fresh.expires_at or 0.0},
    ]
    assert await prober.probe_round() == [("new", True, "")]
    assert len(aws.requests()) == 1
    assert prober.status()["stale"] == 1 and prober.status()["probes"] == 1
    assert breakers.instance.peek("old")["health"] == "unknown"
