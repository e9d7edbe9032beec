"""`mem`: the memory command line.

Start-up matters (a person types it, an agent hook runs it every session): only
the standard library and this package's light modules are imported here; the
REST server (FastAPI, uvicorn) and the MCP server are imported inside the
commands that start them.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any, NoReturn

from deployments.memory import debuglog
from deployments.memory.config import Settings, load_settings
from deployments.memory.errors import (
    EXIT_FAILURE,
    EXIT_NOT_FOUND,
    EXIT_OK,
    MemError,
    NotFoundError,
    UsageError,
)

DEFAULT_LIST_LIMIT = 200
DEFAULT_SEARCH_LIMIT = 50

EPILOG = """environment: MEM_DB, MEM_SCOPE, MEM_DEBUG, MEM_LOG_FILE, MEM_EMBEDDING_URL,
MEM_EMBEDDING_MODEL, MEM_EMBED_DISABLE, MEM_EMBED_TIMEOUT, MEM_CONFLICT_DISABLE,
MEM_SERVE_TOKEN, MEM_SERVE_PORT, MEM_RRF_K, MEM_RRF_TEXT_WEIGHT, MEM_RRF_VECTOR_WEIGHT,
MEM_VECTOR_MIN_SIM.
exit codes: 0 ok, 1 failure (or a failed doctor check), 2 bad usage, 3 not found,
4 conflict (key exists), 5 storage error, 6 embeddings endpoint missing or failing."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse would print the whole usage block
        raise UsageError(f"{message} (see `{self.prog} --help`)")


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r} (quote multi-word text)") from None


def build_parser() -> argparse.ArgumentParser:
    common = _Parser(add_help=False)
    common.add_argument(
        "--scope",
        default=argparse.SUPPRESS,
        help="scope of the command (default MEM_SCOPE or 'user'; 'repo:current' = "
        "repo:<folder of the current git repository>; '*' = all, for list/pinned/search)",
    )
    common.add_argument(
        "--format", choices=("json", "text"), default=argparse.SUPPRESS, help="output format (default json)"
    )
    parser = _Parser(
        prog="mem",
        description="Keyed memories with full-text and hybrid search.",
        epilog=EPILOG,
        parents=[common],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser, metavar="COMMAND")

    def cmd(name: str, help_text: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=help_text, parents=[common], description=help_text)

    p = cmd("list", "memories of the scope, pinned first, archived hidden")
    p.add_argument("limit", nargs="?", type=_int, default=DEFAULT_LIST_LIMIT)
    p.add_argument("--sort", choices=("updated", "created", "key", "scope"), default="updated")
    p = cmd("pinned", "pinned memories only")
    p.add_argument("limit", nargs="?", type=_int, default=DEFAULT_LIST_LIMIT)
    p = cmd("get", "the full record of a memory, with its links")
    p.add_argument("key")
    p = cmd("search", "full-text search (hybrid when MEM_EMBEDDING_URL is set)")
    p.add_argument("query")
    p.add_argument("limit", nargs="?", type=_int, default=DEFAULT_SEARCH_LIMIT)
    p = cmd("save", "insert or update a memory; '-' reads the value from standard input")
    p.add_argument("key")
    p.add_argument("value")
    p.add_argument("tags", nargs="?", default="", help="comma-separated tags")
    p.add_argument("--origin", default="", help="where the memory comes from (a URL, a file)")
    p = cmd("delete", "remove a memory and its links")
    p.add_argument("key")
    p = cmd("rename", "rename a memory within its scope; links follow")
    p.add_argument("old_key")
    p.add_argument("new_key")
    p = cmd("verify", "mark a memory as still current")
    p.add_argument("key")
    p = cmd("supersede", "archive OLD and replace it by NEW (linked NEW -supersedes-> OLD)")
    p.add_argument("old_key")
    p.add_argument("new_key")
    p.add_argument("value")
    p.add_argument("tags", nargs="?", default="")
    for name, text in (("pin", "pin a memory (also marks it verified)"), ("unpin", "unpin a memory")):
        cmd(name, text).add_argument("key")
    for name, text in (("link", "add a typed edge FROM -REL-> TO"), ("unlink", "remove an edge")):
        p = cmd(name, text)
        p.add_argument("from_key")
        p.add_argument("rel")
        p.add_argument("to_key")
        p.add_argument("--to-scope", default=None, help="scope of TO (default: the same scope)")
    p = cmd("traverse", "graph view (nodes and edges) from a memory")
    p.add_argument("key")
    p.add_argument("depth", nargs="?", type=_int, default=1)
    p.add_argument("--direction", choices=("out", "in", "both"), default="both")
    p.add_argument("--rel", default=None, help="follow only edges of this relation")
    p.add_argument("--include-archived", action="store_true", help="also walk through archived memories")
    p = cmd("reembed", "compute vectors for memories without one (all with --force)")
    p.add_argument("--force", action="store_true")
    _add_transfer(cmd)
    cmd("path", "print the database path")
    p = cmd("serve", "REST server for the web clipper, on 127.0.0.1")
    p.add_argument("port", nargs="?", type=_int, default=None, help="default MEM_SERVE_PORT or 8080")
    cmd("doctor", "health checklist; exits 1 when a check fails")
    cmd("mcp", "Model Context Protocol server over stdio")
    p = cmd("hook", "print the recall context for an agent's session-start hook")
    p.add_argument("--limit", type=_int, default=6, help="memories to include besides pinned (default 6)")
    return parser


def _add_transfer(cmd: Callable[[str, str], argparse.ArgumentParser]) -> None:
    p = cmd("export", "every memory and link of the scope (all scopes with --all) as JSON Lines")
    p.add_argument("--all", action="store_true", help="every scope")
    p.add_argument("-o", "--output", default="-", help="file to write (mode 0600; default standard output)")
    p = cmd("import", "memories and links from a `mem export` file ('-': standard input), all or nothing")
    p.add_argument("file")
    p.add_argument("--on-conflict", choices=("fail", "skip", "replace"), default="fail")


def _read_value(value: str) -> str:
    if value != "-":
        return value
    data = sys.stdin.read()
    return data[:-1] if data.endswith("\n") else data


def _resolve_scope(raw: str) -> str:
    if raw == "repo:current":
        from deployments.memory.hook import repo_name

        return f"repo:{repo_name()}"
    return raw


def run(args: argparse.Namespace, settings: Settings) -> tuple[Any, int]:
    """Execute one command; returns (data to print, exit code).

    Commands that only read or edit rows use the store alone; the service (and
    with it the embeddings client) is imported only by the commands that embed.
    """
    from deployments.memory.records import check_scope

    command = args.command
    if command == "path":
        return {"path": settings.db_path}, EXIT_OK
    raw_scope = _resolve_scope(getattr(args, "scope", None) or settings.scope)
    if command in ("search", "save", "supersede", "reembed"):
        from deployments.memory.service import Memory

        memory = Memory(settings)
        if command == "search":
            return memory.search(args.query, args.limit, scope=raw_scope), EXIT_OK
        if command == "save":
            value = _read_value(args.value)
            return memory.save(args.key, value, args.tags, origin=args.origin, scope=raw_scope), EXIT_OK
        if command == "supersede":
            return memory.supersede(
                args.old_key, args.new_key, _read_value(args.value), args.tags, scope=raw_scope
            ), EXIT_OK
        return memory.reembed(force=args.force, progress=_progress_bar()), EXIT_OK
    from deployments.memory.store import Store

    store = Store(settings.db_path)
    if command in ("list", "pinned"):
        items = store.list(
            check_scope(raw_scope, allow_all=True),
            args.limit,
            pinned_only=command == "pinned",
            sort=getattr(args, "sort", "updated"),
        )
        return {"scope": raw_scope, "count": len(items), "memories": items}, EXIT_OK
    scope = check_scope(raw_scope)
    if command == "get":
        try:
            return dict(store.get(scope, args.key), found=True), EXIT_OK
        except NotFoundError as exc:
            sys.stderr.write(f"mem: {exc.message}\n")
            return {"found": False, "scope": scope, "key": args.key}, EXIT_NOT_FOUND
    if command == "delete":
        return store.delete(scope, args.key), EXIT_OK
    if command == "rename":
        return store.rename(scope, args.old_key, args.new_key), EXIT_OK
    if command == "verify":
        return store.verify(scope, args.key), EXIT_OK
    if command in ("pin", "unpin"):
        return store.set_pinned(scope, args.key, command == "pin"), EXIT_OK
    if command in ("link", "unlink"):
        method = store.link if command == "link" else store.unlink
        return method(
            scope,
            args.from_key,
            args.rel,
            args.to_key,
            to_scope=_resolve_scope(args.to_scope) if args.to_scope else None,
        ), EXIT_OK
    if command in ("export", "import"):
        return _transfer(args, store, raw_scope)
    if command == "traverse":
        return store.traverse(
            scope, args.key, args.depth, args.direction, args.rel, include_archived=args.include_archived
        ), EXIT_OK
    raise UsageError(f"unknown command {command!r}")


def _transfer(args: argparse.Namespace, store: Any, raw_scope: str) -> tuple[Any, int]:
    """`mem export` (to a file, or streamed to standard output) and `mem import`."""
    from deployments.memory import transfer

    if args.command == "import":
        if args.file == "-":
            return transfer.import_lines(store, sys.stdin, args.on_conflict), EXIT_OK
        try:
            with open(args.file, encoding="utf-8") as handle:
                return transfer.import_lines(store, handle, args.on_conflict), EXIT_OK
        except OSError as exc:
            raise UsageError(f"cannot read {args.file}: {exc.strerror or exc}") from None
    lines = transfer.export_lines(store, None if args.all else raw_scope)
    if args.output == "-":
        sys.stdout.writelines(lines)
        return None, EXIT_OK
    import os

    try:
        fd = os.open(args.output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            count = sum(1 for line in lines if handle.write(line))
    except OSError as exc:
        raise UsageError(f"cannot write {args.output}: {exc.strerror or exc}") from None
    return {"exported": args.output, "lines": count}, EXIT_OK


def _progress_bar() -> Callable[[int, int], None] | None:
    """A progress bar on stderr, only when stderr is a terminal."""
    if not sys.stderr.isatty():
        return None

    def show(done: int, total: int) -> None:
        width = 30
        filled = width if total == 0 else int(width * done / total)
        sys.stderr.write(f"\rreembed [{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
        if done >= total:
            sys.stderr.write("\n")
        sys.stderr.flush()

    return show


def _emit(command: str, data: Any, fmt: str) -> None:
    from deployments.memory import render

    text = render.as_text(command, data) if fmt == "text" else render.as_json(data)
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "hook":
        from deployments.memory.hook import main as hook_main

        return hook_main(argv[1:])
    try:
        args = build_parser().parse_args(argv)
        settings = load_settings()
        debuglog.configure(settings.debug, settings.log_file, (settings.serve_token, settings.embedding_api_key))
        debuglog.debug(f"command={args.command} db={settings.db_path}")
        fmt = getattr(args, "format", None) or "json"
        if args.version:
            from deployments.memory.version import version

            _emit("version", {"version": version()}, fmt)
            return EXIT_OK
        if args.command is None:
            raise UsageError("a command is required (see `mem --help`)")
        if args.command == "serve":
            from deployments.memory.rest import serve

            return serve(settings, args.port, fmt)
        if args.command == "doctor":
            from deployments.memory.doctor import main as doctor_main

            return doctor_main(settings, fmt)
        if args.command == "mcp":
            from deployments.memory.mcp_server import main as mcp_main

            return mcp_main(settings)
        data, code = run(args, settings)
        if data is not None:  # None: the command wrote its own output (export to stdout)
            _emit(args.command, data, fmt)
        return code
    except MemError as exc:
        sys.stderr.write(f"mem: error: {exc.message}\n")
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as exc:  # a bug: say so briefly, details only with MEM_DEBUG
        if debuglog.enabled():
            import traceback

            debuglog.debug(traceback.format_exc())
        sys.stderr.write(f"mem: error: unexpected {type(exc).__name__}: {exc}\n")
        return EXIT_FAILURE


if __name__ == "__main__":
    sys.exit(main())
