"""Client groups on the real Squid: clients from two source networks (loopback addresses the client binds
to, which Squid's `src` ACLs see) get different answers; a group's whitelist wins inside the group; a
time window that excludes now does not block; bad groups are refused with 422 and change nothing."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest

pytestmark = pytest.mark.realserver

DAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
KIDS = {"name": "kids", "networks": ["127.0.5.0/24"], "blacklist": ["other.test", "ads.tracker.test"]}


@dataclass
class Answer:
    status_code: int
    text: str


@dataclass
class Kid:
    """A client whose requests leave from 127.0.5.2, in the kids' network (curl `--interface`: httpx does
    not bind a local address for proxied requests)."""

    proxy: str

    async def get(self, url: str) -> Answer:
        argv = [
            "curl",
            "-s",
            "--max-time",
            "10",
            "--interface",
            "127.0.5.2",
            "-x",
            self.proxy,
            "-w",
            "\n%{http_code}",
            url,
        ]
        child = await asyncio.create_subprocess_exec(*argv, stdout=asyncio.subprocess.PIPE)
        out, _ = await child.communicate()
        body, _, code = out.decode().rpartition("\n")
        return Answer(int(code or 0), body)


@pytest.fixture
def kid(wf) -> Kid:
    return Kid(f"http://127.0.0.1:{wf.proxy_port}")


@pytest.fixture
async def groups(wf) -> AsyncIterator[None]:
    yield
    for group in (await wf.api.get("/api/groups")).json()["data"]:
        assert (await wf.api.delete(f"/api/groups/{group['id']}")).status_code == 200


async def test_two_networks_get_different_answers_and_the_refusal_names_the_group(wf, kid, groups):
    created = await wf.api.post("/api/groups", json={**KIDS, "whitelist": ["cdn.ads.tracker.test"]})
    assert created.status_code == 200, created.text
    assert created.json()["data"]["networks"] == ["127.0.5.0/24"]
    refused = await kid.get(wf.url("other.test", "/group-1"))
    assert refused.status_code == 403
    assert "group:kids" in refused.text and "client group kids" in refused.text
    adult = await wf.fetch(wf.url("other.test", "/group-2"))
    assert (adult.status_code, adult.text) == (200, "origin ok /group-2")
    assert (await wf.wait_logged("/group-1"))["rule"] == "group:kids"
    # the group's whitelist wins inside the group, as the global whitelist does over the global lists
    white = await kid.get(wf.url("cdn.ads.tracker.test", "/group-3"))
    assert (white.status_code, white.text) == (200, "origin ok /group-3")
    assert (await kid.get(wf.url("ads.tracker.test", "/group-4"))).status_code == 403
    # a group's block applies before the global whitelist
    white_all = await wf.api.post("/api/domain-whitelist", json={"domain": "other.test"})
    try:
        assert (await kid.get(wf.url("other.test", "/group-5"))).status_code == 403
    finally:
        await wf.api.delete(f"/api/domain-whitelist/{white_all.json()['data']['id']}")
    # the group is durable: it is in the database the policy is rendered from
    assert [g["name"] for g in wf.app.state.component.store.groups()] == ["kids"]


async def test_a_time_window_that_excludes_now_does_not_block(wf, kid, groups):
    today = time.localtime().tm_wday
    elsewhere = [d for i, d in enumerate(DAYS) if i not in (today, (today + 1) % 7)]  # not today, nor tomorrow
    window = {"days": elsewhere, "start": "00:00", "end": "23:59"}
    created = await wf.api.post("/api/groups", json={**KIDS, "windows": [window]})
    assert created.status_code == 200, created.text
    allowed = await kid.get(wf.url("other.test", "/window-1"))
    assert (allowed.status_code, allowed.text) == (200, "origin ok /window-1")
    always = {"days": DAYS, "start": "00:00", "end": "23:59"}
    key = created.json()["data"]["id"]
    replaced = await wf.api.put(f"/api/groups/{key}", json={**KIDS, "windows": [window, always]})
    assert replaced.status_code == 200, replaced.text
    assert (await kid.get(wf.url("other.test", "/window-2"))).status_code == 403
    # deleting the group lifts its block
    assert (await wf.api.delete(f"/api/groups/{key}")).status_code == 200
    assert (await kid.get(wf.url("other.test", "/window-3"))).status_code == 200


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"networks": ["127.0.5.0/33"]}, "networks"),
        ({"networks": ["127.0.5.1/24"]}, "host bits"),
        ({"networks": ["kids.example"]}, "not a network"),
        ({"networks": ["127.0.5.0/24", "127.0.5.128/25"]}, "overlaps"),
        ({"networks": []}, "networks"),
        ({"windows": [{"days": ["mon"], "start": "25:00", "end": "26:00"}]}, "start"),
        ({"windows": [{"days": ["mon"], "start": "18:00", "end": "08:00"}]}, "end must be after start"),
        ({"windows": [{"days": ["someday"], "start": "08:00", "end": "18:00"}]}, "days"),
        ({"windows": [{"days": [], "start": "08:00", "end": "18:00"}]}, "days"),
        ({"blacklist": ["bad domain.test"]}, "blacklist"),
        ({"name": "Kids; http_access allow all"}, "name"),
        ({"extra": 1}, "extra"),
    ],
)
async def test_a_bad_group_is_refused_with_422_and_nothing_is_stored(wf, groups, change, words):
    r = await wf.api.post("/api/groups", json={**KIDS, **change})
    assert r.status_code == 422, r.text
    assert r.json()["status"] == "error" and words in r.json()["detail"]
    assert (await wf.api.get("/api/groups")).json()["data"] == []


async def test_overlapping_groups_duplicate_names_and_unknown_ids(wf, groups):
    assert (await wf.api.post("/api/groups", json=KIDS)).status_code == 200
    overlapping = await wf.api.post("/api/groups", json={**KIDS, "name": "teens", "networks": ["127.0.0.0/8"]})
    assert overlapping.status_code == 422 and "of the group kids" in overlapping.json()["detail"]
    same_name = await wf.api.post("/api/groups", json={**KIDS, "networks": ["127.0.6.0/24"]})
    assert same_name.status_code == 409
    assert (await wf.api.put("/api/groups/999", json=KIDS)).status_code == 404
    assert (await wf.api.delete("/api/groups/999")).status_code == 404
    assert (await wf.api.get("/api/groups/999")).status_code == 404
    teens = await wf.api.post("/api/groups", json={**KIDS, "name": "teens", "networks": ["127.0.6.0/24"]})
    assert teens.status_code == 200
    assert [g["name"] for g in (await wf.api.get("/api/groups")).json()["data"]] == ["kids", "teens"]


async def test_groups_are_in_the_backup_and_a_restore_brings_them_back_enforced(wf, kid, groups):
    assert (await wf.api.post("/api/groups", json={**KIDS, "description": "the children"})).status_code == 200
    backup = (await wf.api.get("/api/maintenance/backup-config")).json()["data"]
    (saved,) = backup["groups"]
    assert (saved["name"], saved["description"], saved["networks"]) == ("kids", "the children", ["127.0.5.0/24"])
    (group,) = (await wf.api.get("/api/groups")).json()["data"]
    assert (await wf.api.delete(f"/api/groups/{group['id']}")).status_code == 200
    assert (await kid.get(wf.url("other.test", "/restore-1"))).status_code == 200
    # a backup whose groups overlap is refused as a whole
    twice = {**backup, "groups": [saved, {**saved, "name": "teens", "networks": ["127.0.5.0/25"]}]}
    r = await wf.api.post("/api/maintenance/restore-config", json={"config": twice})
    assert r.status_code == 400 and "group 2: 127.0.5.0/25 overlaps 127.0.5.0/24" in r.json()["detail"]
    assert (await wf.api.get("/api/groups")).json()["data"] == []
    r = await wf.api.post("/api/maintenance/restore-config", json={"config": backup})
    assert r.status_code == 200 and r.json()["data"]["groups"] == 1
    assert [g["name"] for g in (await wf.api.get("/api/groups")).json()["data"]] == ["kids"]
    assert (await kid.get(wf.url("other.test", "/restore-2"))).status_code == 403
