"""`mem doctor`: the set-up checklist. Each check passes, fails or warns; any failure gives exit 1.

Checks: version and binary, store (path, schema, counts), full-text index
integrity, embeddings (configuration, reachability, vectors of the current
model), REST server liveness on the configured port (MEM_SERVE_PORT), the
token (and, when the server runs, that it accepts it), the agent recall hook
(a SessionStart hook running `mem hook` in Claude Code settings).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import sys
from typing import Any

from deployments.memory.config import Settings
from deployments.memory.errors import EXIT_FAILURE, EXIT_OK, MemError

PASS, FAIL, WARN = "pass", "fail", "warn"
SYMBOLS = {PASS: "✓", FAIL: "✗", WARN: "⚠"}
HOOK_HINT = (
    'add to ~/.claude/settings.json: {"hooks": {"SessionStart": [{"matcher": "startup|clear|compact", '
    '"hooks": [{"type": "command", "command": "mem hook"}]}]}}'
)


def _check(name: str, status: str, detail: str) -> dict[str, str]:
    return {"name": name, "status": status, "detail": detail}


def check_version() -> dict[str, str]:
    from deployments.memory.version import version

    binary = shutil.which("mem") or os.path.abspath(sys.argv[0])
    return _check("version", PASS, f"mem {version()} ({binary})")


def check_store(settings: Settings) -> tuple[list[dict[str, str]], Any]:
    from deployments.memory import schema
    from deployments.memory.store import Store

    try:
        store = Store(settings.db_path)
        counts = store.counts()
    except MemError as exc:
        return [_check("store", FAIL, f"{settings.db_path}: {exc.message}")], None
    version = schema.current_version(store.conn)
    checks = [
        _check(
            "store",
            PASS,
            f"{settings.db_path}: {counts['active']} memories "
            f"({counts['pinned']} pinned, {counts['archived']} archived), schema v{version}",
        )
    ]
    ok = store.fts_integrity()
    checks.append(
        _check(
            "full-text index",
            PASS if ok else FAIL,
            "consistent with the rows"
            if ok
            else "integrity check failed; rebuild it with sqlite3: "
            "INSERT INTO memories_fts(memories_fts) VALUES('rebuild')",
        )
    )
    return checks, store


def check_embeddings(settings: Settings, store: Any) -> list[dict[str, str]]:
    from deployments.memory import embed
    from deployments.memory.errors import EmbeddingError

    if settings.embed_disable:
        return [_check("embeddings", WARN, "MEM_EMBED_DISABLE=1: full-text search only")]
    if not settings.embedding_url:
        return [_check("embeddings", WARN, "MEM_EMBEDDING_URL not set: full-text search only")]
    try:
        client = embed.client_for(settings)
        if client is None:
            return [_check("embeddings", WARN, "embeddings are off: full-text search only")]
        vectors = client.embed(["mem doctor"])
    except EmbeddingError as exc:
        return [_check("embeddings", FAIL, f"{settings.embedding_url}: {exc.message}")]
    checks = [_check("embeddings", PASS, f"{client.url} model={client.model_id} dim={len(vectors[0])}")]
    if store is not None:
        models = store.embedding_models()
        current = models.get(client.model_id, 0)
        missing = store.counts()["total"] - current
        if missing:
            checks.append(
                _check(
                    "vectors", WARN, f"{missing} memories have no vector of model {client.model_id}: run `mem reembed`"
                )
            )
        else:
            checks.append(_check("vectors", PASS, f"all {current} memories have a vector of {client.model_id}"))
    return checks


def _http_get(port: int, path: str, token: str = "") -> tuple[int, bytes]:
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
    try:
        conn.request("GET", path, headers={"X-MEM-Token": token} if token else {})
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def check_server(settings: Settings) -> list[dict[str, str]]:
    from deployments.memory.token import token_path

    port = settings.serve_port
    running = False
    try:
        status, body = _http_get(port, "/health")
        running = status == 200 and json.loads(body).get("status") == "ok"
        server = (
            _check("rest server", PASS, f"http://127.0.0.1:{port}/health is ok")
            if running
            else _check("rest server", FAIL, f"127.0.0.1:{port} answers HTTP {status} but is not mem serve")
        )
    except (OSError, ValueError):
        server = _check("rest server", WARN, f"not running on 127.0.0.1:{port} (start it with `mem serve`)")
    checks = [server]
    token = settings.serve_token
    path = token_path(settings.db_dir)
    if token:
        checks.append(_check("token", PASS, "MEM_SERVE_TOKEN is set"))
    elif os.path.exists(path):
        mode = stat.S_IMODE(os.stat(path).st_mode)
        if mode & 0o077:
            checks.append(_check("token", FAIL, f"{path} has mode {mode:o}; run chmod 600 {path}"))
            return checks
        with open(path, encoding="utf-8") as fh:
            token = fh.read().strip()
        checks.append(_check("token", PASS, f"{path} (mode 600)"))
    else:
        checks.append(_check("token", WARN, f"no token yet: `mem serve` creates {path}"))
    if running and token:
        try:
            status, _ = _http_get(port, "/memories?limit=1", token)
        except OSError:
            status = 0
        if status != 200:
            checks.append(
                _check("token accepted", FAIL, f"the server on port {port} rejects this token (HTTP {status})")
            )
    return checks


def _settings_files() -> list[str]:
    home = os.path.expanduser("~")
    files = [os.path.join(home, ".claude", name) for name in ("settings.json", "settings.local.json")]
    files += [os.path.join(os.getcwd(), ".claude", name) for name in ("settings.json", "settings.local.json")]
    return files


def _has_recall_hook(doc: Any) -> bool:
    entries = ((doc or {}).get("hooks") or {}).get("SessionStart") or []
    for entry in entries if isinstance(entries, list) else []:
        for hook in (entry or {}).get("hooks") or []:
            command = str((hook or {}).get("command", ""))
            if "mem hook" in command or command.rstrip().endswith(("mem", "mem-hook")):
                return True
    return False


def check_hook() -> dict[str, str]:
    for path in _settings_files():
        try:
            with open(path, encoding="utf-8") as fh:
                doc = json.load(fh)
        except (OSError, ValueError):
            continue
        if _has_recall_hook(doc):
            return _check("recall hook", PASS, f"SessionStart runs `mem hook` ({path})")
    return _check("recall hook", WARN, "no agent session-start hook runs `mem hook`; " + HOOK_HINT)


def run_checks(settings: Settings) -> list[dict[str, str]]:
    checks = [check_version()]
    store_checks, store = check_store(settings)
    checks += store_checks
    checks += check_embeddings(settings, store)
    checks += check_server(settings)
    checks.append(check_hook())
    return checks


def main(settings: Settings, fmt: str) -> int:
    checks = run_checks(settings)
    failed = sum(c["status"] == FAIL for c in checks)
    warned = sum(c["status"] == WARN for c in checks)
    if fmt == "text":
        for c in checks:
            sys.stdout.write(f"{SYMBOLS[c['status']]} {c['name']}: {c['detail']}\n")
        sys.stdout.write(f"{failed} failed, {warned} warning(s)\n")
    else:
        sys.stdout.write(
            json.dumps(
                {"ok": failed == 0, "failed": failed, "warnings": warned, "checks": checks},
                indent=2,
                ensure_ascii=False,
            )
            + "\n"
        )
    return EXIT_FAILURE if failed else EXIT_OK
