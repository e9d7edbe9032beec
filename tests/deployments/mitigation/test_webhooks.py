"""Webhooks (spec 002 §6 D): attack_detected, rule_triggered, node_health to a real receiver, with retries."""

from __future__ import annotations

import asyncio
import contextlib

import httpx

from actors.mitigation.settings import WebhookSettings
from tests.deployments.mitigation.receivers import WebhookReceiver
from tests.polling import eventually

SPEC_DATA_KEYS = {"attack_type", "source_ip", "packets_per_second", "action"}


def hooks(receiver: WebhookReceiver, **kw) -> WebhookSettings:
    return WebhookSettings(enabled=True, endpoints=[receiver.url], retry_delay_seconds=0.05, **kw)


async def test_attack_detected_and_rule_triggered_reach_the_receiver(make_fleet, data_plane):
    async with WebhookReceiver() as receiver:
        fleet = await make_fleet(flood_rps=5, webhooks=hooks(receiver))
        await data_plane.get(fleet.node_url() + "/?q=%3Cscript%3Ealert(1)%3C/script%3E")
        for _ in range(30):  # once flagged, the source is refused at connection time
            with contextlib.suppress(httpx.TransportError):
                await data_plane.get(fleet.node_url() + "/")
        await eventually(lambda: receiver.events("attack_detected") and receiver.events("rule_triggered"))
    rule = receiver.events("rule_triggered")[0]
    assert set(rule) == {"event", "timestamp", "node_id", "data"}
    assert rule["node_id"] == "node-1" and set(rule["data"]) >= SPEC_DATA_KEYS
    assert rule["data"]["attack_type"] == "xss" and rule["data"]["rule_id"] == "crs-xss-script"
    assert rule["data"]["source_ip"] == "127.0.0.1" and rule["data"]["action"] == "blocked"
    attack = receiver.events("attack_detected")[0]
    assert attack["data"]["attack_type"] == "http_flood" and attack["data"]["packets_per_second"] > 5
    assert attack["data"]["source_ip"] == "127.0.0.1"


async def test_node_health_events_for_registration_and_removal(make_fleet):
    async with WebhookReceiver() as receiver:
        fleet = await make_fleet(webhooks=hooks(receiver))
        await fleet.client.post("/api/v1/scale", json={"action": "scale_up", "count": 1})
        await fleet.client.post("/api/v1/scale", json={"action": "scale_down", "count": 1})
        await eventually(lambda: len(receiver.events("node_health")) >= 3)
    actions = [e["data"]["action"] for e in receiver.events("node_health")]
    assert actions.count("registered") == 2 and actions.count("removed") == 1


async def test_failed_deliveries_are_retried_with_backoff(make_fleet, data_plane):
    async with WebhookReceiver(fail_first=2) as receiver:
        fleet = await make_fleet(webhooks=hooks(receiver, max_retries=3, events=["rule_triggered"]))
        await data_plane.get(fleet.node_url() + "/?q=;cat%20/etc/passwd")
        await eventually(lambda: receiver.received)
    assert receiver.attempts == 3 and len(receiver.received) == 1
    assert receiver.received[0]["event"] == "rule_triggered"


async def test_delivery_gives_up_after_max_retries(make_fleet, data_plane):
    async with WebhookReceiver(fail_first=100) as receiver:
        fleet = await make_fleet(webhooks=hooks(receiver, max_retries=2, events=["rule_triggered"]))
        await data_plane.get(fleet.node_url() + "/?q=;cat%20/etc/passwd")
        await eventually(lambda: fleet.node().webhooks.failed == 1)
    assert receiver.attempts == 3 and receiver.received == []


async def test_events_not_subscribed_are_not_sent(make_fleet, data_plane):
    async with WebhookReceiver() as receiver:
        fleet = await make_fleet(webhooks=hooks(receiver, events=["node_health"]))
        await data_plane.get(fleet.node_url() + "/?q=%3Cscript%3E")
        await asyncio.sleep(0.6)  # a quiet period: an event that is never sent has no moment to wait for
    assert {e["event"] for e in receiver.received} == {"node_health"}
