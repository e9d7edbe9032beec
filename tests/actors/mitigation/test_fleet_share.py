"""How a node holds the fleet's items beside its own (fleet_share.py): what a lift drops, what it
never drops, and the generation that refuses a stale or replayed fleet message."""

from __future__ import annotations

from actors.mitigation.fleet_share import FleetShare, fleet_lift, fleet_put, reconcile, stale_generation

NOW = 1000.0


def test_a_lift_drops_what_the_fleet_pushed_and_keeps_every_entry_of_the_nodes_own():
    held = {
        "10.0.0.1": {"ip": "10.0.0.1", "source": "fleet", "generation": 3, "expires": 5000},
        "10.0.0.2": {"ip": "10.0.0.2", "source": "api", "expires": 5000},
        "10.0.0.3": {"ip": "10.0.0.3", "source": "escalation/http_flood", "expires": 5000},
        "10.0.0.4": {"ip": "10.0.0.4", "source": "waf", "expires": 5000},
        "10.0.0.5": {"ip": "10.0.0.5", "source": "fleet", "generation": 9, "expires": 5000},  # pushed after the lift
    }
    after = reconcile("bans", held, set(), None, 7, NOW)
    assert set(after) == {"10.0.0.2", "10.0.0.3", "10.0.0.4", "10.0.0.5"}


def test_the_fleets_ban_on_a_source_the_node_banned_itself_keeps_the_nodes_entry_and_its_expiry():
    own = {"ip": "10.0.0.1", "reason": "mine", "source": "api", "expires": 2000}
    longer = fleet_put("bans", own, {"ip": "10.0.0.1", "reason": "fleet", "expires": 9000}, 4)
    assert longer["source"] == "api" and longer["expires"] == 9000 and longer["own_expires"] == 2000
    assert fleet_put("bans", own, {"ip": "10.0.0.1", "reason": "fleet", "expires": 1500}, 4) is own
    assert fleet_lift(longer, 3, NOW) is longer  # a lift taken before the fleet's ban leaves it
    assert fleet_lift(longer, 4, NOW) == own  # lifted: the node's own expiry again
    assert fleet_lift(longer, 4, 2500) is None  # ... which has passed meanwhile


def test_a_share_puts_the_fleets_items_and_never_takes_over_the_nodes_own():
    held = {"10.0.0.9": {"ip": "10.0.0.9", "reason": "monitor", "source": "api", "created_at": "t0"}}
    share = FleetShare(allow=[{"ip": "10.0.0.9", "reason": "fleet"}, {"ip": "10.0.0.8", "reason": "office"}])
    after = reconcile("allow", held, set(share.items("allow")), share.items("allow"), 5, NOW)
    assert after["10.0.0.9"] == held["10.0.0.9"]
    assert after["10.0.0.8"] == {"ip": "10.0.0.8", "reason": "office", "source": "fleet", "generation": 5}
    rules = {"r1": {"id": "r1", "pattern": "mine", "source": "api", "hits": 4}}
    put = reconcile("rules", rules, {"r1"}, {"r1": {"id": "r1", "pattern": "theirs"}}, 6, NOW)
    assert put == rules  # a rule never changes under its id, and the node's stays its own


def test_a_fleet_message_older_than_the_last_share_or_lift_taken_is_stale():
    assert stale_generation(5, 5) is None and stale_generation(6, 5) is None
    assert "replayed" in (stale_generation(4, 5) or "")
