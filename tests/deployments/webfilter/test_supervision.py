"""Squid and dnsmasq are supervised: kill -9 either under traffic and it is back, on the same address,
enforcing the current policy; restarts and the last exit show in /health and /metrics. The failed
requests across each kill are counted (and printed: the supervision figure of the README)."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from dataclasses import dataclass, field

import dns.asyncquery
import dns.message
import dns.rdatatype
import httpx
import pytest

from tests.polling import eventually

pytestmark = pytest.mark.realserver


@dataclass
class Traffic:
    """Requests through the proxy, one after another, until stopped; each outcome kept in order."""

    outcomes: list[bool] = field(default_factory=list)
    started: list[float] = field(default_factory=list)  # when each request was sent (monotonic)
    stopped: bool = False

    async def run(self, wf) -> None:
        i = 0
        async with httpx.AsyncClient(proxy=f"http://127.0.0.1:{wf.proxy_port}", trust_env=False, timeout=5) as c:
            while not self.stopped:
                i += 1
                sent_at = time.monotonic()
                try:
                    ok = (await c.get(wf.url("allowed.test", f"/traffic-{i}"))).status_code == 200
                except httpx.HTTPError:
                    ok = False
                self.started.append(sent_at)
                self.outcomes.append(ok)
                await asyncio.sleep(0.01)

    def failed(self) -> int:
        return self.outcomes.count(False)

    def sent_since(self, moment: float) -> list[bool]:
        return [ok for ok, at in zip(self.outcomes, self.started, strict=True) if at >= moment]


async def _child(wf, name: str) -> dict:
    body = (await wf.api.get("/health")).json()
    return dict(next(c for c in body["children"] if c["name"] == name))


async def _resolve(server: str, name: str) -> list[str]:
    answer = await dns.asyncquery.udp(dns.message.make_query(name, dns.rdatatype.A), server, timeout=2)
    return [item.address for rrset in answer.answer for item in rrset]


async def test_killed_squid_and_dnsmasq_come_back_with_the_current_policy_under_traffic(wf):
    assert (await wf.api.post("/api/domain-blacklist", json={"domain": "tracker.test"})).status_code == 200
    health = (await wf.api.get("/health")).json()
    assert health["status"] == "healthy" and health["dns"]["running"]
    dns_address = health["dns"]["address"].removesuffix(":53")
    # tracker.test was only added: dnsmasq took it in its delta, forwarded to the sinkhole (started for it)
    assert {c["name"] for c in health["children"]} == {"squid", "dnsmasq", "dnsmasq-sinkhole"}
    traffic = Traffic()
    runner = asyncio.create_task(traffic.run(wf))
    try:
        await eventually(lambda: traffic.outcomes.count(True) >= 5, what="traffic flowing before the kill")
        for name, pid_key in (("squid", "squid_pid"), ("dnsmasq", None)):
            before = await _child(wf, name)
            pid = before["pid"] if pid_key is None else (await wf.app.state.component.proxy.status.remote())[pid_key]
            failed_before, sent_before = traffic.failed(), len(traffic.outcomes)
            killed_at = time.monotonic()
            os.kill(pid, signal.SIGKILL)

            async def back(name: str = name, before: dict = before) -> bool:
                child = await _child(wf, name)
                return child["state"] == "running" and child["restarts"] == before["restarts"] + 1

            await eventually(back, timeout=15, what=f"{name} restarted by its supervisor")
            child = await _child(wf, name)
            assert child["last_exit"] == -signal.SIGKILL and child["pid"] != pid
            back_at = time.monotonic()
            await eventually(lambda at=back_at: len(traffic.sent_since(at)) >= 20, what="traffic after the restart")
            assert all(traffic.sent_since(back_at)[:20]), f"requests sent after {name} came back failed"
            print(
                f"\nkill -9 {name}: back in {back_at - killed_at:.2f} s; {traffic.failed() - failed_before} failed of "
                f"{len(traffic.outcomes) - sent_before} requests until 20 in a row succeeded after it was back"
            )
            # the current policy, on the same address
            blocked = await wf.fetch(wf.url("ads.tracker.test", f"/after-{name}"))
            assert blocked.status_code == 403 and "domain_blacklist" in blocked.text
            assert await _resolve(dns_address, "tracker.test") == ["0.0.0.0"]  # the sinkhole
            assert await _resolve(dns_address, "allowed.test") == ["127.0.0.1"]
        health = (await wf.api.get("/health")).json()
        assert health["status"] == "healthy" and health["proxy"]["address"] == f"127.0.0.1:{wf.proxy_port}"
        metrics = (await wf.api.get("/metrics")).text
        assert 'rayfleet_child_restarts{child="squid"} 1' in metrics.replace(".0", "")
        assert 'rayfleet_child_restarts{child="dnsmasq"} 1' in metrics.replace(".0", "")
        assert f'rayfleet_child_last_exit_code{{child="squid"}} {-signal.SIGKILL}' in metrics.replace(".0", "")
        assert 'rayfleet_child_up{child="squid"} 1' in metrics.replace(".0", "")
    finally:
        traffic.stopped = True
        await runner
        await wf.api.delete("/api/domain-blacklist/clear-all")


async def test_metrics_need_authentication(wf):
    async with httpx.AsyncClient(transport=httpx.ASGITransport(wf.app), base_url="http://webfilter") as anonymous:
        assert (await anonymous.get("/metrics")).status_code == 401
