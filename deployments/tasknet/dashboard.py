"""The HTML dashboard at `/`: the node, its peers, balances, tasks and proposals (server-rendered)."""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any


def _rows(items: list[list[Any]]) -> str:
    return "".join("<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in row) + "</tr>" for row in items)


def _table(headers: list[str], rows: list[list[Any]]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{_rows(rows) or '<tr><td>none</td></tr>'}</tbody></table>"


def render(me: Mapping[str, Any], state: dict[str, Any], stats: dict[str, Any]) -> str:
    nodes = state["global"]["nodes"]
    node_rows = [[n["name"], nid, n["balance"], n["reputation"]["_total"]] for nid, n in sorted(nodes.items())]
    task_rows, proposal_rows, treasury_rows, team_rows = [], [], [], []
    for name, chan in state.items():
        if name == "global":
            continue
        treasury_rows.append([name, chan["treasury_balance"], len(chan["participants"])])
        for task in chan["tasks"].values():
            task_rows.append([name, task["id"], task["title"], task["status"], task["reward"], task["assignee"] or ""])
        for comp in chan["composite_tasks"].values():
            team_rows.append(
                [name, comp["id"], comp["title"], comp["status"], len(comp["team_members"]), comp["required_team_size"]]
            )
        for prop in chan["proposals"].values():
            proposal_rows.append(
                [
                    name,
                    prop["id"],
                    prop["title"],
                    prop["proposal_type"],
                    prop["status"],
                    prop["yes_votes"],
                    prop["no_votes"],
                ]
            )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>tasknet {escape(me["name"])}</title>
<style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse;margin-bottom:1.5em}}
td,th{{border:1px solid #ccc;padding:.3em .6em;text-align:left}}</style></head>
<body><h1>Task network node {escape(me["name"])}</h1>
<p>node id <code>{escape(me["node_id"])}</code> &middot; peers {stats["total_peers"]} &middot;
events {stats["events_in_log"]} &middot; uptime {stats["uptime_seconds"]:.0f} s</p>
<h2>Nodes</h2>{_table(["name", "id", "balance (SP)", "reputation"], node_rows)}
<h2>Treasuries</h2>{_table(["channel", "balance (SP)", "participants"], treasury_rows)}
<h2>Tasks</h2>{_table(["channel", "id", "title", "status", "reward", "assignee"], task_rows)}
<h2>Team tasks</h2>{_table(["channel", "id", "title", "status", "team", "required"], team_rows)}
<h2>Proposals</h2>{_table(["channel", "id", "title", "type", "status", "yes", "no"], proposal_rows)}
<p>Live events: WebSocket <code>ws</code>, send <code>{{"type": "subscribe", "channel": "general"}}</code>.</p>
</body></html>"""
