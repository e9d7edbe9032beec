"""`mem hook`: the recall context an agent's session-start hook injects.

Output is the Claude Code SessionStart hook shape
(`{"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": ...}}`),
or the bare context with `--format text`. Selection: pinned memories of the
user scope and of `repo:<current repository folder name>`, then the most
recently updated other memories of those scopes up to `--limit`. Values are cut
to 600 characters. Any error gives exit 0 and no output: a broken memory store
must never break an agent's session start.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the hook runs at every session start: the store loads only when used
    from deployments.memory.store import Store

VALUE_CHARS = 600
PINNED_MAX = 20
PREAMBLE = (
    "Long-term memory (from `mem`). These notes may be stale: verify before acting on them; "
    "`mem verify <key>` marks one as still current."
)


def repo_name(start: str | None = None) -> str:
    """Folder name of the enclosing git repository (the folder holding `.git`), else of the cwd."""
    path = os.path.abspath(start or os.getcwd())
    probe = path
    while True:
        if os.path.exists(os.path.join(probe, ".git")):
            return os.path.basename(probe) or probe
        parent = os.path.dirname(probe)
        if parent == probe:
            return os.path.basename(path) or path
        probe = parent


def _age(iso_time: str | None) -> str:
    if not iso_time:
        return "never"
    then = time.mktime(time.strptime(iso_time[:19], "%Y-%m-%dT%H:%M:%S")) - time.timezone
    days = int((time.time() - then) // 86400)
    return "today" if days <= 0 else f"{days}d ago"


def _line(rec: dict[str, Any]) -> str:
    value = rec["value"]
    if len(value) > VALUE_CHARS:
        value = value[:VALUE_CHARS] + "…"
    mark = "pinned, " if rec["pinned"] else ""
    fresh = f"verified {_age(rec['verified_at'])}" if rec["verified_at"] else f"updated {_age(rec['updated_at'])}"
    tags = f" [{', '.join(rec['tags'])}]" if rec["tags"] else ""
    return f"- {rec['scope']}/{rec['key']}{tags} ({mark}{fresh}): {value}"


def build_context(store: Store, user_scope: str, repo_scope: str, limit: int) -> str:
    scopes = [user_scope] + ([repo_scope] if repo_scope != user_scope else [])
    pinned = [r for s in scopes for r in store.list(s, PINNED_MAX, pinned_only=True)]
    recent = [r for s in scopes for r in store.list(s, limit + PINNED_MAX) if not r["pinned"]]
    recent.sort(key=lambda r: r["updated_at"] or "", reverse=True)
    chosen = pinned + recent[: max(0, limit)]
    if not chosen:
        return ""
    return PREAMBLE + "\n" + "\n".join(_line(r) for r in chosen)


def main(argv: list[str]) -> int:
    try:
        fmt = "json"
        limit = 6
        args = list(argv)
        while args:
            arg = args.pop(0)
            if arg == "--format" and args:
                fmt = args.pop(0)
            elif arg.startswith("--format="):
                fmt = arg.split("=", 1)[1]
            elif arg == "--limit" and args:
                limit = int(args.pop(0))
            elif arg.startswith("--limit="):
                limit = int(arg.split("=", 1)[1])
        from deployments.memory.config import load_settings
        from deployments.memory.store import Store

        settings = load_settings()
        if not os.path.exists(settings.db_path):
            return 0
        store = Store(settings.db_path)
        context = build_context(store, settings.scope, f"repo:{repo_name()}", limit)
        if not context:
            return 0
        if fmt == "text":
            out = context + "\n"
        else:
            out = (
                json.dumps({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": context}})
                + "\n"
            )
        sys.stdout.write(out)
        sys.stdout.flush()
    except BaseException:  # fail open: never break the agent's session start
        return 0
    return 0
