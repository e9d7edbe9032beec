"""Send the labelled WAF corpus through a node; count detections and false positives."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

CORPUS = Path(__file__).resolve().parents[2] / "data" / "mitigation" / "waf_corpus.json"


def load_corpus() -> list[dict[str, Any]]:
    return json.loads(CORPUS.read_text(encoding="utf-8"))


@dataclass
class WafResult:
    attacks: int = 0
    detected: int = 0
    benign: int = 0
    false_positives: int = 0
    missed: list[str] = field(default_factory=list)
    wrongly_blocked: list[str] = field(default_factory=list)

    @property
    def detection_rate(self) -> float:
        return self.detected / self.attacks if self.attacks else 0.0

    @property
    def false_positive_rate(self) -> float:
        return self.false_positives / self.benign if self.benign else 0.0


async def evaluate(address: str, corpus: list[dict[str, Any]] | None = None) -> WafResult:
    """Every request of the corpus through the node at `address`; 403 counts as detected."""
    result = WafResult()
    async with httpx.AsyncClient(base_url=f"http://{address}", trust_env=False, timeout=5.0) as client:
        for item in corpus or load_corpus():
            response = await client.get(httpx.URL(f"http://{address}{item['target']}"), headers=item["headers"])
            blocked = response.status_code == 403
            if item["label"] == "attack":
                result.attacks += 1
                result.detected += blocked
                if not blocked:
                    result.missed.append(f"{item['category']}/{item['encoding']}: {item['target']} {item['headers']}")
            else:
                result.benign += 1
                result.false_positives += blocked
                if blocked:
                    result.wrongly_blocked.append(f"{item['target']} {item['headers']}")
    return result
