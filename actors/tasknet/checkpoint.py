"""Checkpoints: the folded state at a log position, signed by the validators.

Position. Checkpoints are taken at horizons, multiples of `interval_ms` on the event clock;
a node takes the one at `H` once its wall clock passes `H + settle_ms` (so every event
stamped below `H` has had that long to reach it). A checkpoint at `H` covers exactly the
events stamped below `H` (`hlc[0] < H`) that follow the previous certified checkpoint; the
position names them: each author's last covered event `(seq, id, hlc)` (an author's chain
advances its clock, so the covered events are a prefix of the chain), the ids of the covered
anonymous events and the equivocation cuts applied. Nodes holding the same events below `H`
compute the same position and, the fold being deterministic, the same state.

Certificate. Each validator signs `(H, position hash, state hash)` once per horizon with its
node key; a checkpoint is certified when distinct members of the genesis validator set, more
than half of it, signed the same triple. Validators are taken from the genesis event (signed
by the pinned bootstrap node) and keys from the signatures themselves (a node id derives from
its key), so a node with no state can check a certificate. Hashes are SHA-256 over RFC 8785
canonical JSON (canonical.py).

This module is pure: no I/O, no clock; node.py decides when and gathers the `Inputs`, the actor
runs `build` in a worker thread and moves the messages.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, TypedDict, cast

from actors.tasknet.canonical import canonical, digest
from actors.tasknet.events import EventError, check_shape
from actors.tasknet.identity import Identity, node_id_of, verify
from actors.tasknet.records import Event, NetworkState
from actors.tasknet.reducer import Reducer
from actors.tasknet.rules_governance import ratify_message


class CheckpointError(ValueError):
    """A checkpoint or certificate that must not be loaded."""


class Position(TypedDict):
    horizon: int
    heads: dict[str, list[Any]]  # author -> [seq, id, hlc] of its last covered event
    anonymous: list[str]  # ids of the covered anonymous events, sorted
    cut: dict[str, int]  # author -> first seq left out (equivocation)


class Signature(TypedDict):
    by: str
    key: str
    sig: str


class Certificate(TypedDict):
    horizon: int
    position_hash: str
    state_hash: str
    signatures: list[Signature]


class Base(TypedDict):
    """A certified checkpoint as a node keeps it in memory (its state is the reducer's base)."""

    certificate: Certificate
    position: Position
    genesis: Event


class Checkpoint(Base):
    """A checkpoint as it is stored and sent: with its state."""

    state: NetworkState


@dataclass(frozen=True)
class Inputs:
    """What a checkpoint folds, taken from a node at one moment (so the fold can run off its event loop)."""

    position: Position
    covered: list[Event]  # the events after the base stamped below the horizon (equivocation cuts applied)
    base_json: bytes | None  # the base checkpoint's state, None: fold from genesis
    base_horizon: int
    genesis_author: str | None
    genesis: Event


def build(inputs: Inputs) -> tuple[Checkpoint, bytes]:
    """The checkpoint (its certificate not signed yet) and its state as JSON."""
    reducer = Reducer(inputs.genesis_author)
    if inputs.base_json is not None:
        reducer.rebase(inputs.base_json, inputs.base_horizon)
    reducer.refold(inputs.covered)
    certificate: Certificate = {
        "horizon": inputs.position["horizon"],
        "position_hash": digest(inputs.position),
        "state_hash": digest(reducer.state),
        "signatures": [],
    }
    checkpoint: Checkpoint = {
        "certificate": certificate,
        "position": inputs.position,
        "state": reducer.state,
        "genesis": inputs.genesis,
    }
    return checkpoint, json.dumps(reducer.state, separators=(",", ":")).encode()


def message(horizon: int, position_hash: str, state_hash: str) -> bytes:
    """What a validator signs for a checkpoint."""
    return canonical(
        {"purpose": "tasknet-checkpoint-v1", "horizon": horizon, "position": position_hash, "state": state_hash}
    )


def sign(identity: Identity, horizon: int, position_hash: str, state_hash: str) -> Signature:
    sig = identity.sign(message(horizon, position_hash, state_hash))
    return {"by": identity.node_id, "key": identity.public_key, "sig": sig}


def due_horizon(now_ms: int, interval_ms: int, settle_ms: int) -> int:
    """The latest horizon a node may checkpoint at now (0: none yet)."""
    return max(0, (now_ms - settle_ms) // interval_ms * interval_ms)


def genesis_validators(genesis: Any, genesis_author: str | None) -> list[str]:
    """The validator set the pinned bootstrap node's signed genesis names."""
    try:
        event = check_shape(genesis)
    except EventError as exc:
        raise CheckpointError(f"the checkpoint's genesis is not authentic: {exc}") from exc
    if event["type"] != "genesis" or genesis_author is None or event["author"] != genesis_author:
        raise CheckpointError("the checkpoint's genesis is not the pinned bootstrap node's")
    validators = event["payload"].get("validators")
    if not isinstance(validators, list) or not validators or not all(isinstance(v, str) for v in validators):
        raise CheckpointError("the genesis names no validators")
    return sorted(set(validators))


def validators_in_force(genesis_set: list[str], state: Any) -> list[str]:
    """The validator set a checkpoint's state has in force: its history must start at the genesis set
    and change one validator at a time, each change carrying signatures of a majority of the set it
    made over the Raft entry that ratified it (what every reducer checked), so a node with no state
    follows the set from the genesis without trusting the state it is about to load."""
    history = state.get("validator_history") if isinstance(state, dict) else None
    if not history:
        return genesis_set
    first = history[0] if isinstance(history, list) else None
    if not isinstance(first, dict) or sorted(set(first.get("validators") or [])) != genesis_set:
        raise CheckpointError("the checkpoint's validator history does not start at the genesis set")
    current, last_index = genesis_set, 0
    for epoch in history[1:]:
        try:
            new = sorted(set(epoch["validators"]))
            index, term, pid, proof = (
                int(epoch["from_index"]),
                int(epoch["term"]),
                str(epoch["proposal_id"]),
                epoch["proof"],
            )
            entries = list(proof.items())
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise CheckpointError("a validator change in the checkpoint carries no proof") from exc
        if index <= last_index or len(set(new) ^ set(current)) != 1:
            raise CheckpointError("the checkpoint's validator history is not one change at a time")
        text = ratify_message(pid, index, term)
        good = sum(1 for signer, pair in entries if signer in new and _signed(signer, pair, text))
        if good <= len(new) // 2:
            raise CheckpointError("a validator change in the checkpoint is not signed by a majority of its set")
        current, last_index = new, index
    return current


def _signed(signer: str, pair: Any, text: bytes) -> bool:
    """Whether `pair` is `[key, signature]`: the signer's own key (its id derives from it) over `text`."""
    if not isinstance(pair, list) or len(pair) != 2 or not all(isinstance(x, str) for x in pair):
        return False
    try:
        return node_id_of(pair[0]) == signer and verify(pair[0], text, pair[1])
    except ValueError:
        return False


def signers(certificate: Certificate, validators: list[str]) -> set[str]:
    """The distinct validators whose signature of the certificate's triple verifies."""
    text = message(certificate["horizon"], certificate["position_hash"], certificate["state_hash"])
    found: set[str] = set()
    for entry in certificate["signatures"]:
        by, key, sig = entry.get("by"), entry.get("key"), entry.get("sig")
        if by not in validators or by in found or not isinstance(key, str) or not isinstance(sig, str):
            continue
        try:
            if node_id_of(key) != by:
                continue
        except ValueError:
            continue
        if verify(key, text, sig):
            found.add(by)
    return found


def is_certified(certificate: Certificate, validators: list[str]) -> bool:
    return len(signers(certificate, validators)) > len(validators) // 2


def parse_certificate(raw: Any) -> Certificate:
    """The certificate's shape checked (not its signatures)."""
    if not isinstance(raw, dict):
        raise CheckpointError("a certificate is an object")
    horizon, position_hash, state_hash = raw.get("horizon"), raw.get("position_hash"), raw.get("state_hash")
    signatures = raw.get("signatures")
    if not isinstance(horizon, int) or isinstance(horizon, bool) or horizon <= 0:
        raise CheckpointError("a certificate's horizon is a positive integer")
    if not isinstance(position_hash, str) or not isinstance(state_hash, str):
        raise CheckpointError("a certificate names the position and state hashes")
    if not isinstance(signatures, list) or not all(isinstance(s, dict) for s in signatures):
        raise CheckpointError("a certificate's signatures are a list of {by, key, sig}")
    return cast(Certificate, raw)


def _check_position(position: dict[str, Any]) -> None:
    heads, anonymous, cut = position.get("heads"), position.get("anonymous"), position.get("cut")
    if not isinstance(heads, dict) or not isinstance(anonymous, list) or not isinstance(cut, dict):
        raise CheckpointError("a position is {horizon, heads, anonymous, cut}")
    for head in heads.values():
        if not (
            isinstance(head, list)
            and len(head) == 3
            and isinstance(head[0], int)
            and head[0] > 0
            and isinstance(head[1], str)
            and isinstance(head[2], list)
        ):
            raise CheckpointError("a position's head is [seq, id, hlc]")
    if not all(isinstance(i, str) for i in anonymous) or not all(isinstance(v, int) for v in cut.values()):
        raise CheckpointError("a position's anonymous ids are strings and its cuts integers")


def verify_checkpoint(raw: Any, genesis_author: str | None) -> Checkpoint:
    """A checkpoint that may be loaded: certified by a majority of the validator set in force in its
    state, followed from the genesis (`validators_in_force`), its position and state matching the hashes
    they signed; CheckpointError otherwise."""
    if not isinstance(raw, dict) or not all(k in raw for k in ("certificate", "position", "state", "genesis")):
        raise CheckpointError("a checkpoint is {certificate, position, state, genesis}")
    certificate = parse_certificate(raw["certificate"])
    validators = validators_in_force(genesis_validators(raw["genesis"], genesis_author), raw["state"])
    if not is_certified(certificate, validators):
        raise CheckpointError("the checkpoint is not signed by a majority of the validators")
    position, state = raw["position"], raw["state"]
    if not isinstance(position, dict) or not isinstance(state, dict):
        raise CheckpointError("a checkpoint's position and state are objects")
    try:
        position_hash, state_hash = digest(position), digest(state)
    except (TypeError, ValueError) as exc:
        raise CheckpointError(f"the checkpoint is not canonical JSON: {exc}") from exc
    if position_hash != certificate["position_hash"] or position.get("horizon") != certificate["horizon"]:
        raise CheckpointError("the checkpoint's position is not the one the validators signed")
    if state_hash != certificate["state_hash"]:
        raise CheckpointError("the checkpoint's state does not match its hash")
    _check_position(position)
    genesis = state.get("genesis")
    if not isinstance(genesis, dict) or genesis.get("id") != raw["genesis"].get("id"):
        raise CheckpointError("the checkpoint's state grew from another genesis")
    return cast(Checkpoint, raw)


Key = tuple[int, str, str]
"""(horizon, position hash, state hash): what validators sign."""


class SignatureBook:
    """Checkpoint signatures a node gathered, one per validator: its latest horizon's.

    An older horizon, or a second triple for the same horizon (a validator contradicting
    itself), does not count; so a validator spraying signatures holds one entry at most.
    """

    def __init__(self) -> None:
        self.held: dict[Key, Certificate] = {}
        self._signed: dict[str, Key] = {}  # validator -> the certificate holding its signature

    def add(self, incoming: Certificate, validators: list[str]) -> Certificate | None:
        """Merge the valid signatures of `incoming`; the certificate held for its triple, None if none."""
        key = (incoming["horizon"], incoming["position_hash"], incoming["state_hash"])
        held = self.held.get(key) or {
            "horizon": key[0],
            "position_hash": key[1],
            "state_hash": key[2],
            "signatures": [],
        }
        have = signers(held, validators)
        for entry in incoming["signatures"][: len(validators) * 2]:
            by = entry.get("by") if isinstance(entry, dict) else None
            if not isinstance(by, str) or by in have or not self._counts(by, key):
                continue
            if signers({**held, "signatures": [entry]}, validators):
                held["signatures"].append({"by": by, "key": str(entry["key"]), "sig": str(entry["sig"])})
                have.add(by)
                self._replace(by, key)
        if not held["signatures"]:
            return None
        self.held[key] = held
        return held

    def _counts(self, signer: str, key: Key) -> bool:
        held = self._signed.get(signer)
        return held is None or held[0] < key[0]

    def _replace(self, signer: str, key: Key) -> None:
        older = self._signed.get(signer)
        self._signed[signer] = key
        certificate = self.held.get(older) if older else None
        if older is not None and certificate is not None:
            certificate["signatures"] = [s for s in certificate["signatures"] if s["by"] != signer]
            if not certificate["signatures"]:
                del self.held[older]

    def above(self, horizon: int) -> list[Certificate]:
        return [c for c in self.held.values() if c["horizon"] > horizon]

    def prune(self, horizon: int) -> None:
        """Forget the certificates at or below `horizon` (a checkpoint there is installed)."""
        self.held = {k: c for k, c in self.held.items() if k[0] > horizon}
