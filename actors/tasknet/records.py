"""The shapes the task network folds and shows: signed events and the network state.

An `Event` is what every node signs, gossips and logs; the reducer folds events into a
`NetworkState` (the rules in rules_tasks.py / rules_governance.py mutate it in place); the
views (views.py) render it for the API. Payloads stay open mappings: each rule checks the
fields it reads (`ledger.need`), since a payload comes from the network, not from this code.
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

Payload = dict[str, Any]
"""An event's payload as signed: untrusted JSON, checked field by field by its rule."""

Result = dict[str, Any]
"""What a rule answers for an event (the API's response body for the request that made it)."""


class Event(TypedDict):
    """`{author, key, seq, hlc, channel, type, payload, prev, sig, id}`: `id` is the digest of the body."""

    author: str
    key: str
    seq: int
    hlc: list[int]
    channel: str
    type: str
    payload: Payload
    prev: str
    sig: str
    id: str


# ----- members


class Reputation(TypedDict):
    _total: int
    _last_updated: int
    tags: dict[str, int]


class NodeRecord(TypedDict):
    id: str
    name: str
    public_key: str
    ring_key: str
    seal_key: str
    reputation: Reputation
    balance: int
    joined_at: int


class Skills(TypedDict):
    skills: list[str]
    bio: str


class Genesis(TypedDict):
    author: str
    at: int
    id: str


class NetworkConfig(TypedDict):
    """The network's configuration: the genesis sets it, ratified `config_change`s change it."""

    task_completion_tax: float
    proposal_voting_period: int
    validator_set: list[str]
    updated_at: int | None
    faucet_sp: int
    task_completion_reputation_reward: int
    reputation_reward_per_sp: int
    tiers: dict[str, list[float]]
    max_auction_deadline_hours: int
    proposal_quorum: float
    min_anonymity_set: int
    min_validators: int
    claim_timeout_hours: int
    completion_auto_accept_hours: int
    auction_select_window_hours: int


class ConfigChange(TypedDict):
    key: str
    old_value: Any
    new_value: Any
    changed_at: int
    changed_by: str


# ----- tasks


class Bid(TypedDict):
    amount: int
    estimated_days: int
    timestamp: int


class SelectedBid(Bid):
    bidder_id: str


class Auction(TypedDict):
    status: str
    deadline: int
    bids: dict[str, Bid]
    selected_bid: SelectedBid | None


class ProgressNote(TypedDict):
    note: str
    at: int


class Dispute(TypedDict):
    reason: str
    at: int


class Task(TypedDict):
    id: str
    title: str
    creator: str
    reward: int
    created_at: int
    status: str
    description: str
    tags: list[str]
    schema_name: str
    required_tools: list[str]
    enable_auction: bool
    max_reward: int
    auction_deadline_hours: int | None
    auction: Auction | None
    assignee: str | None
    progress_notes: list[ProgressNote]
    channel: str
    updated_at: int
    is_deleted: bool
    completed_at: NotRequired[int]
    claimed_at: NotRequired[int]
    submitted_at: NotRequired[int]
    disputes: NotRequired[list[Dispute]]


class Subtask(TypedDict):
    id: str
    title: str
    required_skills: list[str]
    reward_percentage: int
    status: str
    assignee: str | None
    reward_transferred: NotRequired[int]
    tax_collected: NotRequired[int]


class Application(TypedDict):
    message: str
    at: int


class CompositeTask(TypedDict):
    id: str
    title: str
    description: str
    total_reward: int
    required_team_size: int
    subtasks: list[Subtask]
    status: str
    workspace_channel: str
    team_members: list[str]
    applicants: dict[str, Application]
    creator: str
    created_at: int


# ----- governance


class Ballot(TypedDict):
    vote: str
    weight: float
    anonymous: bool
    at: int
    key_image: NotRequired[str]


class AnonymousBallot(TypedDict):
    vote: str
    tier: str
    weight: float
    nullifier: str


class Snapshot(TypedDict):
    """Who may vote on a proposal, fixed at its creation: ring members per tier, public weights."""

    tiers: dict[str, list[list[str]]]
    weights: dict[str, float]


class Proposal(TypedDict):
    id: str
    title: str
    proposer: str
    status: str
    votes: dict[str, Ballot]
    created_at: int
    description: str
    proposal_type: str
    params: Payload
    command: Payload | None
    tags: list[str]
    schema_name: str
    closes_at: int
    closed_at: int | None
    outcome: str | None
    anonymous_votes: list[AnonymousBallot]
    snapshot: Snapshot
    channel: str
    ratified_at: NotRequired[int]
    ratified_by: NotRequired[str]
    turnout: NotRequired[float]
    quorum_reached: NotRequired[bool]


class Ratification(TypedDict):
    raft_index: int
    proposal_id: str
    executed: bool
    at: int
    signers: list[str]


class ValidatorEpoch(TypedDict):
    """The validator set in force from Raft index `from_index` on (0: the genesis set)."""

    from_index: int
    validators: list[str]
    proposal_id: str | None
    term: NotRequired[int]
    proof: NotRequired[dict[str, list[str]]]  # signer -> [public key, signature over the ratified entry]


class Attestation(TypedDict):
    """A validator's signature that the Raft entry (index, term) ratifying `proposal_id` committed."""

    proposal_id: str
    raft_index: int
    term: int
    channel: str
    by: str
    signatures: dict[str, str]


class Tool(TypedDict):
    tool_id: str
    channel: str
    description: str
    type: str
    endpoint: str
    monthly_cost_sp: int
    execution_cost_sp: int
    credentials_sealed: dict[str, str]
    status: str
    paid_until: int
    executions: int


# ----- the fold


class Channel(TypedDict):
    participants: list[str]
    tasks: dict[str, Task]
    proposals: dict[str, Proposal]
    composite_tasks: dict[str, CompositeTask]
    tools: dict[str, Tool]


class NetworkState(TypedDict):
    genesis: Genesis | None
    genesis_author: NotRequired[str | None]
    config: NetworkConfig
    config_history: list[ConfigChange]
    nodes: dict[str, NodeRecord]
    channels: dict[str, Channel]
    treasuries: dict[str, int]
    escrow: dict[str, int]
    minted: int
    burned: int
    skills: dict[str, Skills]
    nullifiers: dict[str, list[str]]
    proposal_index: dict[str, str]
    task_index: dict[str, str]
    composite_index: dict[str, str]
    ratified: list[Ratification]
    last_ratified_index: int
    validator_history: list[ValidatorEpoch]
    applied: int
    rejected: int
    last_hlc: list[int]


class Notification(TypedDict):
    """A WebSocket feed message: `{type: task_created|vote_cast|..., data: {event_id, author, channel, ...}}`."""

    type: str
    data: dict[str, str | int]


class ZkpProof(TypedDict):
    """An anonymous vote's LSAG ring signature: key image, c0, the s values, and the claimed tier."""

    commitment: str
    challenge: str
    response: list[str]
    tier: str
    tier_weight: float
