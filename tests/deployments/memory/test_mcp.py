"""`mem mcp` spawned as a subprocess and driven with the `mcp` client library over stdio."""

from __future__ import annotations

import json
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.deployments.memory.conftest import REPO


def payload(result) -> dict:
    if getattr(result, "structured_content", None) or getattr(result, "structuredContent", None):
        data = getattr(result, "structured_content", None) or getattr(result, "structuredContent", None)
        return data.get("result", data) if isinstance(data, dict) and set(data) == {"result"} else data
    return json.loads(result.content[0].text)


def is_error(result) -> bool:
    return bool(getattr(result, "is_error", None) or getattr(result, "isError", None))


async def test_mcp_tools_over_stdio(mem_env):
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "deployments.memory.cli", "mcp"], env=mem_env, cwd=str(REPO)
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = {t.name for t in (await session.list_tools()).tools}
            assert {
                "memory_save",
                "memory_get",
                "memory_search",
                "memory_list",
                "memory_link",
                "memory_traverse",
                "memory_pin",
                "memory_supersede",
            } <= tools

            saved = payload(
                await session.call_tool(
                    "memory_save", {"key": "deploy", "value": "Deploy with make release", "tags": ["ops"]}
                )
            )
            assert saved["created"] is True
            await session.call_tool("memory_save", {"key": "ci", "value": "CI runs on every push"})
            got = payload(await session.call_tool("memory_get", {"key": "deploy"}))
            assert got["value"] == "Deploy with make release" and got["tags"] == ["ops"]
            found = payload(await session.call_tool("memory_search", {"query": "release deploy"}))
            assert [r["key"] for r in found["results"]] == ["deploy"]
            linked = payload(
                await session.call_tool("memory_link", {"from_key": "deploy", "rel": "needs", "to_key": "ci"})
            )
            assert linked["created"] is True
            graph = payload(await session.call_tool("memory_traverse", {"key": "deploy", "direction": "out"}))
            assert [e["rel"] for e in graph["edges"]] == ["needs"]
            assert payload(await session.call_tool("memory_pin", {"key": "ci"}))["pinned"] is True
            listed = payload(await session.call_tool("memory_list", {}))
            assert [m["key"] for m in listed["memories"]] == ["ci", "deploy"]
            sup = payload(
                await session.call_tool(
                    "memory_supersede",
                    {"old_key": "deploy", "new_key": "deploy-v2", "value": "Deploy with the release pipeline"},
                )
            )
            assert sup == {"superseded": "deploy", "by": "deploy-v2", "scope": "user", "pinned": False}

            missing = await session.call_tool("memory_get", {"key": "nope"})
            assert is_error(missing) and "no memory 'nope'" in missing.content[0].text
            bad = await session.call_tool("memory_link", {"from_key": "ci", "rel": "bad rel", "to_key": "deploy-v2"})
            assert is_error(bad) and "bad_request" in bad.content[0].text
            bad_scope = await session.call_tool("memory_get", {"key": "ci", "scope": "*"})
            assert is_error(bad_scope) and "scope" in bad_scope.content[0].text

    # the same data is visible to the CLI
    from tests.deployments.memory.conftest import run_json

    assert run_json(mem_env, "get", "deploy-v2")["links"]["out"] == [
        {"rel": "supersedes", "scope": "user", "key": "deploy"}
    ]
