"""What a node keeps (node_state.py) on a real SQLite store: replayed by the next instance,
expired bans dropped from the record instead of replayed, a removed node forgotten."""

from __future__ import annotations

import pytest

from actors.mitigation.node_state import FleetState, NodeState, stream_prefix
from actors.mitigation.rules import new_rule
from rayfleet.durable import Fenced, SqliteStore


@pytest.fixture
def store(tmp_path):
    store = SqliteStore(tmp_path / "kept.sqlite3")
    yield store
    store.close()


def test_a_new_instance_replays_rules_and_live_bans_only(store):
    first = NodeState(stream_prefix("f", "node-1"), store)
    rule = new_rule("evil", "block", "high")
    first.rules.set(rule.id, rule.as_dict())
    first.bans.set("10.0.0.1", {"ip": "10.0.0.1", "reason": "r", "source": "api", "expires": 2000})
    first.bans.set("10.0.0.2", {"ip": "10.0.0.2", "reason": "r", "source": "api", "expires": 1000})
    first.policy.set("changes", {"rate_limit_rps": 9})

    second = NodeState(stream_prefix("f", "node-1"), store)
    assert second.replay_rules() == {rule.id: rule}
    assert set(second.replay_bans(now=1500)) == {"10.0.0.1"}
    assert "10.0.0.2" not in second.bans  # deleted from the record: a third instance will not see it
    assert second.policy.get("changes") == {"rate_limit_rps": 9}
    with pytest.raises(Fenced):  # the instance it replaced can no longer write
        first.bans.set("10.0.0.3", {"ip": "10.0.0.3", "expires": 3000})


def test_nodes_of_other_fleets_and_forgotten_nodes_start_empty(store):
    node = NodeState(stream_prefix("f", "node-1"), store)
    node.bans.set("10.0.0.1", {"ip": "10.0.0.1", "expires": 2000})
    assert NodeState(stream_prefix("g", "node-1"), store).replay_bans(now=0) == {}
    again = NodeState(stream_prefix("f", "node-1"), store)
    again.forget()
    assert NodeState(stream_prefix("f", "node-1"), store).replay_bans(now=0) == {}


def test_the_fleet_keeps_its_own_bans_with_their_expiry(store):
    fleet = FleetState("f", store)
    fleet.bans.set("10.0.0.0/8", {"ip": "10.0.0.0/8", "expires": 2000})
    fleet.bans.set("10.0.0.9", {"ip": "10.0.0.9", "expires": 10})
    assert set(FleetState("f", store).live_bans(now=100)) == {"10.0.0.0/8"}
