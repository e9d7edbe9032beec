"""The deterministic reducer: folds events, in their total order, into the network state.

Every node holding the same set of events computes the same state, whatever order they
arrived in: an event that arrives "in the past" makes the node refold from its base, the
state of the latest certified checkpoint (checkpoint.py), or from the start when it has none.
An event the state machine refuses is recorded as rejected and changes nothing.

Order after a checkpoint at horizon H: the events it does not cover are folded after it, by
`fold_key`: an event stamped below H (it arrived after the checkpoint was certified) takes the
horizon's place, `[H, 0]`, ties broken by author, seq and id. It can no longer rewrite the
history the checkpoint certified; it is validated against the state that follows it.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from actors.tasknet import rules_governance as gov
from actors.tasknet import rules_tasks as tasks
from actors.tasknet.events import order_key
from actors.tasknet.ledger import Reject, check_invariant, join_channel, new_state
from actors.tasknet.records import Event, NetworkState, Result

OrderKey = tuple[int, int, str, int, str]

Rule = Callable[[NetworkState, Event, bool], Result]
"""`rule(state, event, commit)`: validates, mutates only when `commit`, answers the result."""

RULES: dict[str, Rule] = {
    "genesis": gov.genesis,
    "join": gov.join,
    "skills_set": gov.skills_set,
    "proposal_create": gov.proposal_create,
    "vote": gov.vote,
    "anon_vote": gov.anon_vote,
    "proposal_close": gov.proposal_close,
    "proposal_withdraw": gov.proposal_withdraw,
    "ratified": gov.ratified,
    "tool_executed": gov.tool_executed,
    "task_create": tasks.task_create,
    "task_claim": tasks.task_claim,
    "task_progress": tasks.task_progress,
    "task_complete": tasks.task_complete,
    "task_accept": tasks.task_accept,
    "task_dispute": tasks.task_dispute,
    "task_expire": tasks.task_expire,
    "task_bid_withdraw": tasks.task_bid_withdraw,
    "composite_cancel": tasks.composite_cancel,
    "task_delete": tasks.task_delete,
    "task_bid": tasks.task_bid,
    "task_select_bid": tasks.task_select_bid,
    "composite_create": tasks.composite_create,
    "composite_apply": tasks.composite_apply,
    "composite_accept": tasks.composite_accept,
    "subtask_complete": tasks.subtask_complete,
}

# WebSocket event type for each applied event type (section 6 names task_created).
NOTIFICATIONS: dict[str, str] = {
    "join": "node_joined",
    "skills_set": "skills_updated",
    "proposal_create": "proposal_created",
    "vote": "vote_cast",
    "anon_vote": "vote_cast",
    "proposal_close": "proposal_closed",
    "proposal_withdraw": "proposal_withdrawn",
    "ratified": "proposal_ratified",
    "tool_executed": "tool_executed",
    "task_create": "task_created",
    "task_claim": "task_claimed",
    "task_progress": "task_progress",
    "task_complete": "task_submitted",
    "task_accept": "task_completed",
    "task_dispute": "task_disputed",
    "task_expire": "task_expired",
    "task_bid_withdraw": "bid_withdrawn",
    "composite_cancel": "composite_cancelled",
    "task_delete": "task_deleted",
    "task_bid": "bid_placed",
    "task_select_bid": "bid_selected",
    "composite_create": "composite_created",
    "composite_apply": "composite_applied",
    "composite_accept": "composite_member_accepted",
    "subtask_complete": "subtask_completed",
}


def validate(state: NetworkState, event: Event) -> Result:
    """Dry-run `event` against `state` (nothing changes); raises Reject when refused."""
    rule = RULES.get(event["type"])
    if rule is None:
        raise Reject(f"unknown event type {event['type']}")
    if not isinstance(event["channel"], str) or not 0 < len(event["channel"]) <= 64:
        raise Reject("channel must be 1..64 characters")
    return rule(state, event, False)


def fold_key(event: Event, horizon: int) -> OrderKey:
    """The event's place in the fold after a checkpoint at `horizon` (0: no checkpoint)."""
    key = order_key(event)
    if key[0] < horizon:
        return (horizon, 0, key[2], key[3], key[4])
    return key


class Reducer:
    def __init__(self, genesis_author: str | None) -> None:
        self.genesis_author = genesis_author
        self.base: bytes | None = None  # the certified checkpoint's state (JSON), None: fold from genesis
        self.horizon = 0
        self._parsed: NetworkState | None = None
        self.folded = 0  # events applied since this reducer was made (refolds included)
        self.reset()

    def rebase(self, state_json: bytes, horizon: int, parsed: NetworkState | None = None) -> None:
        """Fold from a checkpoint's state from now on; call `refold` with the events after it next.

        `parsed`, the same state already parsed and held by nobody else, spares the next refold a parse.
        """
        self.base, self.horizon, self._parsed = state_json, horizon, parsed

    def reset(self) -> None:
        parsed, self._parsed = self._parsed, None
        if parsed is not None:
            self.state = parsed
        elif self.base is None:
            self.state = new_state()
        else:
            self.state = json.loads(self.base)
        self.state["genesis_author"] = self.genesis_author
        self.last_key: OrderKey | None = None
        self.outcomes: dict[str, Result | str] = {}

    def key(self, event: Event) -> OrderKey:
        return fold_key(event, self.horizon)

    def can_append(self, event: Event) -> bool:
        return self.last_key is None or self.key(event) > self.last_key

    def apply(self, event: Event) -> Result | None:
        """Apply one event after every event applied so far; its result, or None when refused."""
        self.last_key = self.key(event)
        self.folded += 1
        state = self.state
        try:
            validate(state, event)
            result = RULES[event["type"]](state, event, True)
        except Reject as exc:
            state["rejected"] += 1
            self.outcomes[event["id"]] = exc.message
            return None
        if event["author"] in state["nodes"] and event["type"] not in ("join", "genesis"):
            join_channel(state, event["channel"], event["author"])
        state["applied"] += 1
        state["last_hlc"] = list(event["hlc"])
        self.outcomes[event["id"]] = result
        check_invariant(state)
        return result

    def refold(self, events: list[Event]) -> None:
        self.reset()
        for event in sorted(events, key=self.key):
            self.apply(event)
