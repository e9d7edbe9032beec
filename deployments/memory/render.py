"""Output of CLI results: indented JSON (default) or short text for people (`--format text`)."""

from __future__ import annotations

import json
from typing import Any


def as_json(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False)


def _memory_line(rec: dict[str, Any]) -> str:
    flags = ("*" if rec.get("pinned") else " ") + ("a" if rec.get("archived") else " ")
    tags = f" [{', '.join(rec['tags'])}]" if rec.get("tags") else ""
    value = " ".join(str(rec.get("snippet") or rec.get("value", "")).split())
    if len(value) > 100:
        value = value[:99] + "…"
    return f"{flags} {rec['scope']}/{rec['key']}{tags}: {value}"


def as_text(command: str, data: Any) -> str:
    if command in ("list", "pinned"):
        return "\n".join(_memory_line(r) for r in data["memories"]) or "(no memories)"
    if command == "search":
        lines = [f"{r['score']:>10.4f} {_memory_line(r)}" for r in data["results"]]
        if lines and data.get("match") == "any":
            lines.insert(0, "(no memory matches every word; these match some of them)")
        return "\n".join(lines) or f"(no match, {data['mode']} search)"
    if command == "get":
        if not data.get("found", True):
            return "not found"
        head = [
            f"{data['scope']}/{data['key']}"
            + ("  (pinned)" if data["pinned"] else "")
            + ("  (archived)" if data["archived"] else "")
        ]
        if data["tags"]:
            head.append("tags: " + ", ".join(data["tags"]))
        head.append(f"updated: {data['updated_at']}  verified: {data['verified_at'] or 'never'}")
        for link in data.get("links", {}).get("out", []):
            head.append(f"-> {link['rel']} {link['scope']}/{link['key']}")
        for link in data.get("links", {}).get("in", []):
            head.append(f"<- {link['rel']} {link['scope']}/{link['key']}")
        return "\n".join(head) + "\n\n" + str(data["value"])
    if command == "traverse":
        lines = [f"{'  ' * n['depth']}{n['scope']}/{n['key']}" + (" *" if n["pinned"] else "") for n in data["nodes"]]
        lines += [f"{e['from']} -{e['rel']}-> {e['to']}" for e in data["edges"]]
        return "\n".join(lines)
    if command == "path":
        return str(data["path"])
    if command == "save":
        text = f"{'created' if data['created'] else 'updated'} {data['scope']}/{data['key']}"
        if data.get("superseded"):
            text += f" (superseded {data['superseded']})"
        return text
    if isinstance(data, dict):
        return "\n".join(f"{k}: {v}" for k, v in data.items())
    return str(data)
