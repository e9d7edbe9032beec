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


def test_entries_stored_before_they_said_their_source_are_migrated_once(store):
    """Schema 1 → 2: a rule, ban or allowlist entry without `source` becomes the fleet's when the fleet
    holds its key, else the node's own (api); entries with a source are left alone; it runs once."""
    old = NodeState(stream_prefix("f", "node-1"), store)
    old.allow.set("10.0.0.1", {"ip": "10.0.0.1", "reason": "office", "created_at": "t"})
    old.allow.set("10.0.0.2", {"ip": "10.0.0.2", "reason": "monitor", "created_at": "t"})
    old.allow.set("10.0.0.3", {"ip": "10.0.0.3", "reason": "x", "source": "fleet", "created_at": "t"})
    old.bans.set("10.0.0.4", {"ip": "10.0.0.4", "reason": "r", "expires": 9000})
    old.rules.set("rule-1", {"id": "rule-1", "pattern": "evil", "action": "block", "severity": "high"})
    old.rules.set("rule-2", {"id": "rule-2", "pattern": "mine", "action": "block", "severity": "high"})

    state = NodeState(stream_prefix("f", "node-1"), store)
    fleet = {"allow": {"10.0.0.1"}, "bans": set(), "rules": {"rule-1"}}
    assert state.migrate_sources(fleet) == 5
    assert {k: v["source"] for k, v in state.allow.items()} == {
        "10.0.0.1": "fleet",
        "10.0.0.2": "api",
        "10.0.0.3": "fleet",
    }
    assert state.bans.get("10.0.0.4")["source"] == "api"
    assert {k: r.source for k, r in state.replay_rules().items()} == {"rule-1": "fleet", "rule-2": "api"}
    assert state.policy.get("schema") == 2
    state.allow.set("10.0.0.5", {"ip": "10.0.0.5", "reason": "later"})
    assert NodeState(stream_prefix("f", "node-1"), store).migrate_sources(fleet) == 0  # once
