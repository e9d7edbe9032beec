"""State-machine rules of tasks, auctions and composite (team) tasks.

Every rule validates first and mutates only when `commit` is true, so the API can
dry-run a request against the current state before signing an event for it.
Rewards are escrowed when a task is created; nobody claims, bids on or joins their own
rewarded task; completion pays the assignee minus the tax, which goes to the channel treasury.
"""

from __future__ import annotations

from actors.tasknet.ledger import (
    Reject,
    channel,
    debit,
    join_channel,
    need,
    node,
    pay_out,
    release,
    reward_reputation,
    string_list,
)
from actors.tasknet.records import Auction, CompositeTask, Event, NetworkState, Payload, Result, Subtask, Task

HOUR_MS = 3_600_000
TASK_FIELDS_LIMIT = {"title": 200, "description": 5000}


def _located(index: dict[str, str], payload: Payload, what: str) -> tuple[str, str]:
    """The payload's `task_id` and the channel `index` places it in (404 naming `what` otherwise)."""
    task_id = need(payload, "task_id", str, limit=64)
    chan = index.get(task_id)
    if chan is None:
        raise Reject(f"{what} {task_id} not found", 404)
    return task_id, chan


def _task(state: NetworkState, payload: Payload) -> tuple[Task, str]:
    """A task by payload `task_id`, and its channel."""
    task_id, chan = _located(state["task_index"], payload, "task")
    return state["channels"][chan]["tasks"][task_id], chan


def task_create(state: NetworkState, ev: Event, commit: bool) -> Result:
    p = ev["payload"]
    author = ev["author"]
    node(state, author)
    title = need(p, "title", str, limit=200).strip()
    if not title:
        raise Reject("title must not be empty")
    description = need(p, "description", str, default="", limit=5000)
    reward = need(p, "reward", int, default=0)
    tags = string_list(p, "tags")
    required_tools = string_list(p, "required_tools")
    schema_name = need(p, "schema_name", str, default="task_v1", limit=64)
    auction = bool(need(p, "enable_auction", bool, default=False))
    max_reward = need(p, "max_reward", int, default=reward)
    hours = need(p, "auction_deadline_hours", int, default=24)
    if reward < 0 or max_reward < 0:
        raise Reject("rewards cannot be negative")
    if auction and (max_reward <= 0 or not 0 < hours <= state["config"]["max_auction_deadline_hours"]):
        raise Reject("an auction needs max_reward > 0 and a deadline within the allowed hours")
    escrow = max_reward if auction else reward
    if state["nodes"][author]["balance"] < escrow:
        raise Reject(f"insufficient balance: {state['nodes'][author]['balance']} SP available, {escrow} SP needed")
    task_id = ev["id"][:16]
    status = "auction_open" if auction else "open"
    result: Result = {"id": task_id, "title": title, "creator": author, "reward": reward, "created_at": ev["hlc"][0]}
    result["status"] = status
    if not commit:
        return result
    chan = ev["channel"]
    debit(state, author, escrow, "task:" + task_id)
    task: Task = {
        "id": task_id,
        "title": title,
        "creator": author,
        "reward": reward,
        "created_at": ev["hlc"][0],
        "status": status,
        "description": description,
        "tags": tags,
        "schema_name": schema_name,
        "required_tools": required_tools,
        "enable_auction": auction,
        "max_reward": max_reward if auction else reward,
        "auction_deadline_hours": hours if auction else None,
        "auction": {"status": "open", "deadline": ev["hlc"][0] + hours * HOUR_MS, "bids": {}, "selected_bid": None}
        if auction
        else None,
        "assignee": None,
        "progress_notes": [],
        "channel": chan,
        "updated_at": ev["hlc"][0],
        "is_deleted": False,
    }
    channel(state, chan)["tasks"][task_id] = task
    state["task_index"][task_id] = chan
    join_channel(state, chan, author)
    return result


def task_claim(state: NetworkState, ev: Event, commit: bool) -> Result:
    task, chan = _task(state, ev["payload"])
    who = ev["author"]
    node(state, who)
    if task["enable_auction"]:
        raise Reject("auction tasks are assigned by select_bid")
    if task["status"] != "open":
        raise Reject(f"task is {task['status']}, not open")
    if task["creator"] == who and task["reward"] > 0:
        raise Reject("nobody claims their own rewarded task", 403)
    if commit:
        task.update({"status": "claimed", "assignee": who, "updated_at": ev["hlc"][0], "claimed_at": ev["hlc"][0]})
        join_channel(state, chan, who)
    return {"task_id": task["id"], "assignee": who}


def task_progress(state: NetworkState, ev: Event, commit: bool) -> Result:
    task, _ = _task(state, ev["payload"])
    note = need(ev["payload"], "progress_note", str, default="", limit=2000)
    if task["assignee"] != ev["author"]:
        raise Reject("only the assignee reports progress", 403)
    if task["status"] not in ("claimed", "in_progress"):
        raise Reject(f"task is {task['status']}")
    if commit:
        task["status"] = "in_progress"
        task["updated_at"] = ev["hlc"][0]
        task["progress_notes"].append({"note": note, "at": ev["hlc"][0]})
    return {"task_id": task["id"]}


def _hours(state: NetworkState, key: str) -> int:
    value: int = state["config"][key]  # type: ignore[literal-required]
    return int(value) * HOUR_MS


def task_complete(state: NetworkState, ev: Event, commit: bool) -> Result:
    """The assignee submits the work; the creator accepts or disputes it (silence accepts, later)."""
    task, _ = _task(state, ev["payload"])
    if task["assignee"] != ev["author"]:
        raise Reject("only the assignee completes the task", 403)
    if task["status"] not in ("claimed", "in_progress"):
        raise Reject(f"task is {task['status']}")
    auto_at = ev["hlc"][0] + _hours(state, "completion_auto_accept_hours")
    if commit:
        task.update({"status": "submitted", "updated_at": ev["hlc"][0], "submitted_at": ev["hlc"][0]})
    return {"task_id": task["id"], "status": "submitted", "reward_transferred": 0, "tax_collected": 0} | {
        "auto_accept_at": auto_at
    }


def _submitted(state: NetworkState, ev: Event) -> tuple[Task, str, bool]:
    """A submitted task, its channel, and whether its auto-accept time has come."""
    task, chan = _task(state, ev["payload"])
    if task["status"] != "submitted":
        raise Reject(f"task is {task['status']}, not submitted")
    due = ev["hlc"][0] >= task.get("submitted_at", 0) + _hours(state, "completion_auto_accept_hours")
    return task, chan, due


def task_accept(state: NetworkState, ev: Event, commit: bool) -> Result:
    task, chan, due = _submitted(state, ev)
    by_creator = ev["author"] == task["creator"]
    if not by_creator and not due:
        raise Reject("only the creator accepts before the auto-accept time", 403)
    node(state, ev["author"])
    assignee = task["assignee"] or ""
    result: Result = {"task_id": task["id"], "reward_transferred": 0, "tax_collected": 0}
    result["accepted_by"] = "creator" if by_creator else "auto"
    if commit:
        paid, tax = pay_out(state, "task:" + task["id"], task["reward"], assignee, chan)
        reward_reputation(state, assignee, task["reward"], task["tags"], ev["hlc"][0])
        task.update({"status": "completed", "updated_at": ev["hlc"][0], "completed_at": ev["hlc"][0]})
        result.update({"reward_transferred": paid, "tax_collected": tax})
    return result


def task_dispute(state: NetworkState, ev: Event, commit: bool) -> Result:
    """The creator refuses the submitted work before the auto-accept time: back to the assignee."""
    task, _, due = _submitted(state, ev)
    reason = need(ev["payload"], "reason", str, default="", limit=2000)
    if ev["author"] != task["creator"]:
        raise Reject("only the creator disputes a completion", 403)
    if due:
        raise Reject("the auto-accept time has passed; the completion stands")
    if commit:
        task.setdefault("disputes", []).append({"reason": reason, "at": ev["hlc"][0]})
        task.update({"status": "claimed", "updated_at": ev["hlc"][0], "claimed_at": ev["hlc"][0]})
    return {"task_id": task["id"], "status": "claimed"}


def task_expire(state: NetworkState, ev: Event, commit: bool) -> Result:
    """Anyone refunds the creator of a claim left unfinished, or an auction left unselected, too long."""
    task, _ = _task(state, ev["payload"])
    node(state, ev["author"])
    now = ev["hlc"][0]
    if task["status"] in ("claimed", "in_progress"):
        expired = now >= task.get("claimed_at", task["updated_at"]) + _hours(state, "claim_timeout_hours")
    elif task["status"] == "auction_open" and task["auction"] is not None:
        expired = now > task["auction"]["deadline"] + _hours(state, "auction_select_window_hours")
    else:
        raise Reject(f"task is {task['status']}: nothing to expire")
    if not expired:
        raise Reject("the task has not expired yet")
    if commit:
        key = "task:" + task["id"]
        release(state, key, state["escrow"].get(key, 0), task["creator"], None)
        task.update({"status": "expired", "updated_at": now})
        if task["auction"] is not None:
            task["auction"]["status"] = "expired"
    return {"task_id": task["id"], "status": "expired"}


def task_delete(state: NetworkState, ev: Event, commit: bool) -> Result:
    task, _ = _task(state, ev["payload"])
    if task["creator"] != ev["author"]:
        raise Reject("only the creator deletes a task", 403)
    if task["status"] not in ("open", "auction_open") or (task["auction"] and task["auction"]["bids"]):
        raise Reject(f"task is {task['status']} and can no longer be deleted")
    if commit:
        key = "task:" + task["id"]
        release(state, key, state["escrow"].get(key, 0), task["creator"], None)
        task.update({"status": "deleted", "is_deleted": True, "updated_at": ev["hlc"][0]})
    return {"task_id": task["id"]}


def _open_auction(task: Task) -> Auction:
    if not task["enable_auction"] or task["status"] != "auction_open" or task["auction"] is None:
        raise Reject("task is not an open auction")
    return task["auction"]


def task_bid(state: NetworkState, ev: Event, commit: bool) -> Result:
    task, chan = _task(state, ev["payload"])
    amount = need(ev["payload"], "amount", int)
    days = need(ev["payload"], "estimated_days", int)
    bidder = ev["author"]
    node(state, bidder)
    auction = _open_auction(task)
    if ev["hlc"][0] > auction["deadline"]:
        raise Reject("the auction deadline has passed")
    if bidder == task["creator"]:
        raise Reject("nobody bids on their own task", 403)
    if not 0 < amount <= task["max_reward"] or not 0 < days <= 3650:
        raise Reject(f"amount must be 1..{task['max_reward']} and estimated_days 1..3650")
    if bidder in auction["bids"]:
        raise Reject("one bid per bidder")
    if commit:
        auction["bids"][bidder] = {"amount": amount, "estimated_days": days, "timestamp": ev["hlc"][0]}
        join_channel(state, chan, bidder)
    return {"task_id": task["id"], "bidder": bidder, "amount": amount}


def task_bid_withdraw(state: NetworkState, ev: Event, commit: bool) -> Result:
    task, _ = _task(state, ev["payload"])
    auction = _open_auction(task)
    if ev["author"] not in auction["bids"]:
        raise Reject("no bid of yours on this task", 404)
    if commit:
        del auction["bids"][ev["author"]]
    return {"task_id": task["id"], "bidder": ev["author"], "withdrawn": True}


def task_select_bid(state: NetworkState, ev: Event, commit: bool) -> Result:
    task, _ = _task(state, ev["payload"])
    bidder = need(ev["payload"], "bidder_id", str, limit=64)
    if task["creator"] != ev["author"]:
        raise Reject("only the creator selects a bid", 403)
    auction = _open_auction(task)
    bid = auction["bids"].get(bidder)
    if bid is None:
        raise Reject(f"no bid from {bidder}", 404)
    if ev["hlc"][0] > auction["deadline"] + _hours(state, "auction_select_window_hours"):
        raise Reject("the selection window of this auction is over (it can only expire)")
    if commit:
        key = "task:" + task["id"]
        release(state, key, task["max_reward"] - bid["amount"], task["creator"], None)
        auction.update({"status": "finalized", "selected_bid": {"bidder_id": bidder, **bid}})
        task.update({"status": "claimed", "assignee": bidder, "reward": bid["amount"], "updated_at": ev["hlc"][0]})
        task["claimed_at"] = ev["hlc"][0]
    return {"winner": bidder, "amount": bid["amount"], "task_status": "claimed"}


def _composite(state: NetworkState, payload: Payload) -> tuple[CompositeTask, str]:
    """A composite task by payload `task_id`, and its channel."""
    task_id, chan = _located(state["composite_index"], payload, "composite task")
    return state["channels"][chan]["composite_tasks"][task_id], chan


def composite_create(state: NetworkState, ev: Event, commit: bool) -> Result:
    p = ev["payload"]
    author = ev["author"]
    node(state, author)
    title = need(p, "title", str, limit=200).strip()
    total = need(p, "total_reward", int)
    size = need(p, "required_team_size", int)
    raw_subtasks = need(p, "subtasks", list, limit=50)
    if not title or total < 0 or not 1 <= size <= 50 or not raw_subtasks:
        raise Reject("a composite task needs a title, total_reward >= 0, team size 1..50 and subtasks")
    subtasks: list[Subtask] = []
    for i, raw in enumerate(raw_subtasks):
        if not isinstance(raw, dict):
            raise Reject("each subtask is an object")
        pct = need(raw, "reward_percentage", int)
        if pct < 0:
            raise Reject("reward_percentage cannot be negative")
        subtasks.append(
            {
                "id": f"sub{i + 1}",
                "title": need(raw, "title", str, limit=200),
                "required_skills": string_list(raw, "required_skills"),
                "reward_percentage": pct,
                "status": "pending",
                "assignee": None,
            }
        )
    if sum(s["reward_percentage"] for s in subtasks) > 100:
        raise Reject("subtask reward percentages add up to more than 100")
    if state["nodes"][author]["balance"] < total:
        raise Reject(f"insufficient balance: {state['nodes'][author]['balance']} SP available, {total} SP needed")
    task_id = ev["id"][:16]
    result: Result = {"task_id": task_id, "status": "forming_team", "workspace_channel": f"team-{task_id}"}
    result["created_at"] = ev["hlc"][0]
    if commit:
        debit(state, author, total, "composite:" + task_id)
        channel(state, ev["channel"])["composite_tasks"][task_id] = {
            "id": task_id,
            "title": title,
            "description": need(p, "description", str, default="", limit=5000),
            "total_reward": total,
            "required_team_size": size,
            "subtasks": subtasks,
            "status": "forming_team",
            "workspace_channel": f"team-{task_id}",
            "team_members": [],
            "applicants": {},
            "creator": author,
            "created_at": ev["hlc"][0],
        }
        state["composite_index"][task_id] = ev["channel"]
    return result


def composite_apply(state: NetworkState, ev: Event, commit: bool) -> Result:
    task, _ = _composite(state, ev["payload"])
    who = ev["author"]
    node(state, who)
    message = need(ev["payload"], "message", str, default="", limit=2000)
    if task["status"] != "forming_team":
        raise Reject(f"composite task is {task['status']}, not forming_team")
    if who == task["creator"]:
        raise Reject("the creator coordinates and does not apply", 403)
    if who in task["applicants"] or who in task["team_members"]:
        raise Reject("already applied")
    if commit:
        task["applicants"][who] = {"message": message, "at": ev["hlc"][0]}
    return {"task_id": task["id"], "applicant_id": who}


def composite_cancel(state: NetworkState, ev: Event, commit: bool) -> Result:
    """The creator calls off a team task that has not started: the whole escrow goes back."""
    task, _ = _composite(state, ev["payload"])
    if task["creator"] != ev["author"]:
        raise Reject("only the creator cancels a composite task", 403)
    if task["status"] != "forming_team":
        raise Reject(f"composite task is {task['status']}; only a forming team can be cancelled")
    if commit:
        key = "composite:" + task["id"]
        release(state, key, state["escrow"].get(key, 0), task["creator"], None)
        task["status"] = "cancelled"
    return {"task_id": task["id"], "status": "cancelled"}


def _skill_score(state: NetworkState, member: str, required: list[str]) -> int:
    profile = state["skills"].get(member)
    skills = set(profile["skills"]) if profile else set()
    return len(skills & set(required))


def _assign_subtasks(state: NetworkState, task: CompositeTask) -> None:
    load = {m: 0 for m in task["team_members"]}
    for sub in task["subtasks"]:
        best = sorted(load, key=lambda m: (-_skill_score(state, m, sub["required_skills"]), load[m], m))[0]
        sub["assignee"] = best
        load[best] += 1


def composite_accept(state: NetworkState, ev: Event, commit: bool) -> Result:
    task, _ = _composite(state, ev["payload"])
    applicant = need(ev["payload"], "applicant_id", str, limit=64)
    if task["creator"] != ev["author"]:
        raise Reject("only the creator accepts applicants", 403)
    if task["status"] != "forming_team":
        raise Reject(f"composite task is {task['status']}, not forming_team")
    if applicant not in task["applicants"]:
        raise Reject(f"{applicant} has not applied", 404)
    size = len(task["team_members"]) + 1
    if commit:
        task["team_members"].append(applicant)
        del task["applicants"][applicant]
        if size >= task["required_team_size"]:
            task["status"] = "in_progress"
            for member in [task["creator"], *task["team_members"]]:
                join_channel(state, task["workspace_channel"], member)
            _assign_subtasks(state, task)
    return {"team_size": size, "required_size": task["required_team_size"]}


def subtask_complete(state: NetworkState, ev: Event, commit: bool) -> Result:
    task, chan = _composite(state, ev["payload"])
    sub_id = need(ev["payload"], "subtask_id", str, limit=64)
    sub = next((s for s in task["subtasks"] if s["id"] == sub_id), None)
    if sub is None:
        raise Reject(f"subtask {sub_id} not found", 404)
    if task["status"] != "in_progress":
        raise Reject(f"composite task is {task['status']}, not in_progress")
    if sub["assignee"] != ev["author"]:
        raise Reject("only the subtask's assignee completes it", 403)
    if sub["status"] == "completed":
        raise Reject("subtask already completed")
    done = all(s["status"] == "completed" or s is sub for s in task["subtasks"])
    if commit:
        key = "composite:" + task["id"]
        amount = task["total_reward"] * sub["reward_percentage"] // 100
        paid, tax = pay_out(state, key, amount, ev["author"], chan)
        reward_reputation(state, ev["author"], amount, sub["required_skills"], ev["hlc"][0])
        sub.update({"status": "completed", "reward_transferred": paid, "tax_collected": tax})
        if done:
            release(state, key, state["escrow"].get(key, 0), task["creator"], None)
            task["status"] = "completed"
    return {"subtask_id": sub_id, "all_subtasks_complete": done}
