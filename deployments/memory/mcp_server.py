# mypy: allow-any-generics
# (the tools return a bare `dict` on purpose: see ToolResult)
"""`mem mcp`: a Model Context Protocol server over stdio (what `memory-ext.autoStartMCP` starts).

Tools: memory_save, memory_get, memory_search, memory_list, memory_link,
memory_unlink, memory_traverse, memory_pin, memory_unpin, memory_supersede,
memory_verify, memory_rename, memory_delete. They return the same JSON as the
CLI; a failure (missing key, bad input) is an MCP tool error carrying the message.
Works with the `mcp` SDK 2.x (`MCPServer`) and 1.x (`FastMCP`).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from deployments.memory.config import Settings
from deployments.memory.errors import MemError
from deployments.memory.service import Memory


def _sdk() -> tuple[Any, type[Exception]]:
    """(server class, the exception whose message reaches the client as a tool error)."""
    try:
        from mcp.server.mcpserver import MCPServer
        from mcp.server.mcpserver.exceptions import ToolError

        return MCPServer, ToolError
    except ImportError:
        import importlib

        # the older SDK's module (absent from the newer SDK's type information)
        fastmcp = importlib.import_module("mcp.server.fastmcp")
        exceptions = importlib.import_module("mcp.server.fastmcp.exceptions")
        return fastmcp.FastMCP, exceptions.ToolError


# A tool's result. Bare `dict` on purpose: the SDK reads the annotation, and `dict[str, Any]`
# would give every tool an output schema (structured results) that the tools never declared.
ToolResult = dict
JsonObject = dict[str, Any]
Run = Callable[[Callable[[], JsonObject]], JsonObject]
F = TypeVar("F", bound=Callable[..., Any])


class ToolServer(Protocol):
    """The part of either SDK's server the tools use."""

    def tool(self, name: str, description: str) -> Callable[[F], F]: ...


INSTRUCTIONS = (
    "Long-term keyed memories. Search before saving; save durable facts with a short, descriptive "
    "key; pinned memories are recalled at every session start."
)


def build_server(settings: Settings) -> Any:
    from deployments.memory.version import version

    server_cls, tool_error = _sdk()
    try:
        server = server_cls("mem", version=version(), instructions=INSTRUCTIONS)
    except TypeError:
        server = server_cls("mem", instructions=INSTRUCTIONS)

    def warn(message: str) -> None:
        sys.stderr.write(f"mem mcp: warning: {message}\n")

    memory = Memory(settings, warn=warn)
    lock = threading.Lock()

    def run(action: Callable[[], JsonObject]) -> JsonObject:
        """One tool call at a time on the shared connection; our errors become tool errors."""
        with lock:
            try:
                return action()
            except MemError as exc:
                raise tool_error(f"{exc.code}: {exc.message}") from None

    _records(server, memory, run)
    _links(server, memory, run)
    _lifecycle(server, memory, run)
    return server


def _records(server: ToolServer, memory: Memory, run: Run) -> None:
    """Saving, reading, searching and listing memories."""
    store = memory.store

    @server.tool(
        name="memory_save",
        description="Insert or update a memory (key unique within its scope). "
        "A new key that repeats an active memory supersedes it; the result names it.",
    )
    def memory_save(
        key: str, value: str, tags: list[str] | None = None, scope: str | None = None, origin: str = ""
    ) -> ToolResult:
        return run(lambda: memory.save(key, value, tags, origin=origin, scope=scope))

    @server.tool(name="memory_get", description="The full record of a memory, with its links.")
    def memory_get(key: str, scope: str | None = None) -> ToolResult:
        return run(lambda: store.get(memory.scope(scope), key))

    @server.tool(
        name="memory_search",
        description="Search memories: full-text (BM25, prefix words, any "
        "order), hybrid with vectors when an embeddings endpoint is configured. Pinned first.",
    )
    def memory_search(query: str, limit: int = 20, scope: str | None = None) -> ToolResult:
        return run(lambda: memory.search(query, limit, scope=scope))

    @server.tool(
        name="memory_list",
        description="List memories of a scope ('*' for all): pinned first, "
        "then most recently updated; archived ones are hidden.",
    )
    def memory_list(limit: int = 50, scope: str | None = None, pinned_only: bool = False) -> ToolResult:
        def action() -> JsonObject:
            sc = memory.scope(scope, allow_all=True)
            items = store.list(sc, limit, pinned_only=pinned_only)
            return {"scope": sc, "count": len(items), "memories": items}

        return run(action)


def _links(server: ToolServer, memory: Memory, run: Run) -> None:
    """The graph: adding and removing edges, walking from a memory."""
    store = memory.store

    @server.tool(name="memory_link", description="Add a typed directional edge from_key -rel-> to_key.")
    def memory_link(
        from_key: str, rel: str, to_key: str, scope: str | None = None, to_scope: str | None = None
    ) -> ToolResult:
        return run(lambda: store.link(memory.scope(scope), from_key, rel, to_key, to_scope=to_scope))

    @server.tool(name="memory_unlink", description="Remove the edge from_key -rel-> to_key.")
    def memory_unlink(
        from_key: str, rel: str, to_key: str, scope: str | None = None, to_scope: str | None = None
    ) -> ToolResult:
        return run(lambda: store.unlink(memory.scope(scope), from_key, rel, to_key, to_scope=to_scope))

    @server.tool(
        name="memory_traverse",
        description="Nodes and edges reachable from a memory, breadth "
        "first; direction out|in|both, optional relation filter.",
    )
    def memory_traverse(
        key: str,
        depth: int = 1,
        direction: str = "both",
        rel: str | None = None,
        scope: str | None = None,
        include_archived: bool = False,
    ) -> ToolResult:
        return run(
            lambda: store.traverse(memory.scope(scope), key, depth, direction, rel, include_archived=include_archived)
        )


def _lifecycle(server: ToolServer, memory: Memory, run: Run) -> None:
    """Pinning, superseding, verifying, renaming and deleting memories."""
    store = memory.store

    @server.tool(
        name="memory_pin",
        description="Pin a memory (recalled at session start; never archived automatically). Also marks it verified.",
    )
    def memory_pin(key: str, scope: str | None = None) -> ToolResult:
        return run(lambda: store.set_pinned(memory.scope(scope), key, True))

    @server.tool(name="memory_unpin", description="Unpin a memory.")
    def memory_unpin(key: str, scope: str | None = None) -> ToolResult:
        return run(lambda: store.set_pinned(memory.scope(scope), key, False))

    @server.tool(
        name="memory_supersede",
        description="Archive old_key and replace it by a new memory "
        "new_key (linked new -supersedes-> old; the pin carries over).",
    )
    def memory_supersede(
        old_key: str, new_key: str, value: str, tags: list[str] | None = None, scope: str | None = None
    ) -> ToolResult:
        return run(lambda: memory.supersede(old_key, new_key, value, tags, scope=scope))

    @server.tool(name="memory_verify", description="Mark a memory as still current.")
    def memory_verify(key: str, scope: str | None = None) -> ToolResult:
        return run(lambda: store.verify(memory.scope(scope), key))

    @server.tool(name="memory_rename", description="Rename a memory within its scope; links follow.")
    def memory_rename(old_key: str, new_key: str, scope: str | None = None) -> ToolResult:
        return run(lambda: store.rename(memory.scope(scope), old_key, new_key))

    @server.tool(name="memory_delete", description="Delete a memory and its links.")
    def memory_delete(key: str, scope: str | None = None) -> ToolResult:
        return run(lambda: store.delete(memory.scope(scope), key))


def main(settings: Settings) -> int:
    build_server(settings).run("stdio")
    return 0
