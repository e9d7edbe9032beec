"""Cluster-wide coalescing: a replica sends the proxy actor a policy version, not the policy; the actor
reads the policy from the database once for every change committed before it reads, whichever replica
made it, and answers the callers whose version it already covers without reading again."""

from __future__ import annotations

import asyncio

import pytest

from actors.webfilter.proxy import ProxyOwner
from deployments.webfilter.store import LISTS
from rayfleet.state import call

pytestmark = pytest.mark.realserver


async def test_edits_committed_by_several_replicas_are_enforced_by_one_read_of_the_policy(wf):
    component = wf.app.state.component
    owner = component.proxy.instance
    names = [f"coalesce-{i}.test" for i in range(8)]
    versions = []
    for name in names:  # eight edits, as eight replicas commit them: each commits, then marks the policy dirty
        assert component.store.add_entry(LISTS["domain-blacklist"], name, "") is not None
        versions.append(component.store.bump_policy_version())
    reads = owner.reads
    try:
        answers = await asyncio.gather(*(call(component.proxy, ProxyOwner.sync, v) for v in versions))
        assert owner.reads == reads + 1  # the first call read the newest version; the seven others were covered
        assert sorted(bool(a.get("coalesced")) for a in answers) == [False] + [True] * 7
        assert {a["version"] for a in answers} == {versions[-1]}
        for name in names:
            refused = await wf.fetch(wf.url(name, "/coalesced"))
            assert refused.status_code == 403 and "domain_blacklist" in refused.text
        # a version already enforced is answered without reading the database again
        again = await call(component.proxy, ProxyOwner.sync, versions[0])
        assert again["coalesced"] and owner.reads == reads + 1
    finally:
        assert (await wf.api.delete("/api/domain-blacklist/clear-all")).status_code == 200
    # the API's path goes through the same version check: the clear is enforced (one more read)
    assert owner.reads == reads + 2
    assert (await wf.fetch(wf.url("other.test", "/after-clear"))).status_code == 200


def test_the_policy_version_only_grows_even_through_a_database_reset(wf):
    store = wf.app.state.component.store
    before = store.bump_policy_version()
    store.reset()
    assert store.bump_policy_version() == before + 1
    version, policy = store.versioned_policy()
    assert version == before + 1 and policy.domain_blacklist == []
