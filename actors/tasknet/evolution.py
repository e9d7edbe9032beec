"""The evolution engine: finds inefficiencies in the node's own metrics, asks the LLM for code,
and files the result as an upgrade proposal (which the network must vote on and ratify)."""

from __future__ import annotations

import base64
import io
import statistics
import time
import zipfile
from collections.abc import Iterable, Sequence
from typing import Any, Protocol, TypedDict

from actors.tasknet import llm
from actors.tasknet.ledger import Reject
from actors.tasknet.node import NodeCore
from actors.tasknet.settings import LlmParams
from actors.tasknet.upgrades import Upgrades

THRESHOLDS = {"propagation_p95_ms": 1000.0, "commit_p95_ms": 2000.0, "refold_ratio": 0.2, "rejected_ratio": 0.3}


def _p95(values: Iterable[float]) -> float | None:
    data: list[float] = sorted(values)
    if len(data) < 5:
        return None
    return data[int(len(data) * 0.95) - 1]


class Finding(TypedDict):
    id: str
    type: str
    severity: str
    description: str
    affected_component: str


class Analysis(TypedDict, total=False):
    """The last `/evolution/analyze` run (empty before the first)."""

    at: float
    inefficiencies: list[Finding]


class Metrics(Protocol):
    """What the engine reads of the node's services (NodeServices): its latency samples and upgrades."""

    last_analysis: Analysis

    @property
    def propagation_ms(self) -> Sequence[float]: ...
    @property
    def commit_ms(self) -> Sequence[float]: ...
    @property
    def upgrades(self) -> Upgrades: ...


class Evolution:
    def __init__(self, core: NodeCore, services: Metrics, llm_settings: LlmParams) -> None:
        self.core = core
        self.services = services
        self.llm = llm_settings
        self.generated: dict[str, dict[str, Any]] = {}
        self.proposed: list[str] = []

    def _findings(self) -> list[Finding]:
        s = self.services
        core = self.core
        found: list[Finding] = []

        def add(kind: str, severity: str, description: str, component: str) -> None:
            found.append(
                {
                    "id": str(len(found)),
                    "type": kind,
                    "severity": severity,
                    "description": description,
                    "affected_component": component,
                }
            )

        p95 = _p95(s.propagation_ms)
        if p95 is not None and p95 > THRESHOLDS["propagation_p95_ms"]:
            add(
                "slow_propagation",
                "high",
                f"p95 event propagation {p95:.0f} ms over {len(s.propagation_ms)} events",
                "gossip",
            )
        c95 = _p95(s.commit_ms)
        if c95 is not None and c95 > THRESHOLDS["commit_p95_ms"]:
            add("slow_consensus", "high", f"p95 Raft ratification latency {c95:.0f} ms", "raft")
        received = max(1, core.stats["events_received"])
        if core.stats["refolds"] / received > THRESHOLDS["refold_ratio"] and core.stats["refolds"] > 3:
            add(
                "frequent_refolds",
                "medium",
                f"{core.stats['refolds']} refolds for {received} received events (late arrivals)",
                "reducer",
            )
        state = core.state
        total = max(1, state["applied"] + state["rejected"])
        if state["rejected"] / total > THRESHOLDS["rejected_ratio"]:
            add(
                "rejected_events",
                "medium",
                f"{state['rejected']} of {total} events refused by the state machine",
                "reducer",
            )
        if core.stats["events_invalid"]:
            add(
                "invalid_events",
                "high",
                f"{core.stats['events_invalid']} forged or malformed events received",
                "gossip",
            )
        if core.log.pending:
            add("log_gaps", "medium", f"{len(core.log.pending)} events wait for missing predecessors", "anti_entropy")
        if core.log.equivocations:
            add(
                "equivocation", "critical", f"{len(core.log.equivocations)} authors signed conflicting events", "gossip"
            )
        return found

    async def analyze(self) -> dict[str, Any]:
        found = self._findings()
        self.services.last_analysis = {"at": time.time(), "inefficiencies": found}
        return {
            "message": f"analysis found {len(found)} inefficiencies",
            "inefficiencies_found": len(found),
            "inefficiencies": found,
        }

    async def generate(self, inefficiency_id: str, language: str, target_component: str) -> dict[str, Any]:
        if language != "python":
            raise Reject("only python code can be tested and applied by this node")
        found = {f["id"]: f for f in self.services.last_analysis.get("inefficiencies", [])}
        issue = found.get(inefficiency_id)
        if issue is None:
            raise Reject(f"inefficiency {inefficiency_id} not found; run /evolution/analyze first", 404)
        system = "You write small, self-contained Python modules using only the standard library. Reply with code only."
        user = f"Component {target_component}: {issue['type']}: {issue['description']}. Write a Python module that improves it."
        reply = await llm.chat(self.llm, system, user)
        code = _strip_fences(reply)
        code_id = f"gen{len(self.generated) + 1}"
        self.generated[code_id] = {
            "code": code,
            "language": language,
            "inefficiency": issue,
            "target_component": target_component,
        }
        return {
            "message": "code generated",
            "generated_code_id": code_id,
            "code": code,
            "language": language,
            "estimated_improvement": f"addresses {issue['type']} ({issue['severity']})",
        }

    def package(self, code_id: str) -> str:
        item = self.generated.get(code_id)
        if item is None:
            raise Reject(f"generated code {code_id} not found", 404)
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as zf:
            zf.writestr(f"evolution_{code_id}.py", item["code"])
            zf.writestr(
                f"test_evolution_{code_id}.py",
                f"import unittest\n\nimport evolution_{code_id}\n\n\nclass Imports(unittest.TestCase):\n"
                f"    def test_module_imports(self):\n        self.assertTrue(evolution_{code_id}.__name__)\n",
            )
        return base64.b64encode(buf.getvalue()).decode()

    async def propose(self, title: str, generated_code_id: str, rationale: str) -> dict[str, Any]:
        return await propose_generated(self, title, generated_code_id, rationale)

    async def status(self) -> dict[str, Any]:
        analysis = self.services.last_analysis
        applied = [h for h in self.services.upgrades.history if h["status"] == "applied"]
        return {
            "enabled": True,
            "last_analysis": analysis.get("at"),
            "pending_evolutions": len(self.generated) - len(self.proposed),
            "applied_evolutions": len(applied),
        }


def _strip_fences(text: str) -> str:
    lines = text.strip().splitlines()
    if lines and lines[0].startswith("```"):
        lines = lines[1:]
    if lines and lines[-1].startswith("```"):
        lines = lines[:-1]
    return "\n".join(lines) + "\n"


def median_or_none(values: Iterable[float]) -> float | None:
    data = list(values)
    return statistics.median(data) if data else None


async def propose_generated(evolution: Evolution, title: str, generated_code_id: str, rationale: str) -> dict[str, Any]:
    """File a generated module as a code_upgrade proposal (voted on, then ratified through Raft)."""
    package_b64 = evolution.package(generated_code_id)
    params = evolution.services.upgrades.package_params(
        f"evolution-{generated_code_id}-{int(time.time())}", package_b64, None
    )
    _, result = evolution.core.submit(
        "proposal_create",
        {
            "title": title,
            "description": rationale,
            "proposal_type": "code_upgrade",
            "params": params,
            "tags": ["evolution"],
        },
    )
    evolution.proposed.append(generated_code_id)
    return {"message": "evolution proposed", "proposal_id": result["id"], "requires_community_vote": True}
