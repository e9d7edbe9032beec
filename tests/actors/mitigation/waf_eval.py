"""Send the labelled WAF corpus through a node; count detections and false positives."""

from __future__ import annotations

import argparse
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

    def count(self, attack: bool, blocked: bool, what: str) -> None:
        """One answer: an attack detected or missed, an ordinary request passed or wrongly blocked."""
        if attack:
            self.attacks += 1
            self.detected += blocked
            if not blocked:
                self.missed.append(what)
        else:
            self.benign += 1
            self.false_positives += blocked
            if blocked:
                self.wrongly_blocked.append(what)

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
            what = f"{item['category']}/{item['encoding']}: {item['target']} {item['headers']}"
            result.count(item["label"] == "attack", response.status_code == 403, what)
    return result


CRS_CORPUS = CORPUS.with_name("crs_corpus.json")


def load_crs_corpus() -> list[dict[str, Any]]:
    """Requests with bodies (tests/data/mitigation/make_crs_corpus.py), each labelled and in a split."""
    return json.loads(CRS_CORPUS.read_text(encoding="utf-8"))


@dataclass
class SplitResults:
    """Per split (`dev`, `heldout`): detection and false positives; answers 5xx or failed are errors."""

    splits: dict[str, WafResult] = field(default_factory=dict)
    errors: int = 0

    def of(self, split: str) -> WafResult:
        return self.splits.setdefault(split, WafResult())

    def print_dev_misses(self) -> None:
        """The dev split's misses and false positives: what rules are written against (never heldout)."""
        dev = self.of("dev")
        for line in dev.missed + dev.wrongly_blocked:
            print("  ", line)


def bench_arguments(doc: str | None) -> argparse.ArgumentParser:
    """The options both WAF benches take: load size, clients, paranoia, `--show-misses`."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=1500)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--paranoia", type=int, default=2, choices=[1, 2, 3, 4])
    parser.add_argument(
        "--show-misses", action="store_true", help="list the CRS engine's misses and false positives on dev"
    )
    return parser


async def send(client: httpx.AsyncClient, address: str, item: dict[str, Any]) -> int:
    """One corpus request to the node at `address`; its status (0: no answer)."""
    headers = dict(item["headers"])
    if item.get("content_type"):
        headers["Content-Type"] = item["content_type"]
    body = item["body"].encode() if item.get("body") is not None else None
    try:
        url = httpx.URL(f"http://{address}{item['path']}")
        response = await client.request(item["method"], url, headers=headers, content=body)
    except (httpx.HTTPError, ValueError):
        return 0
    return response.status_code


async def evaluate_splits(address: str, corpus: list[dict[str, Any]]) -> SplitResults:
    """Every request through the node; a 4xx is the node refusing it (the origin answers 200 to all)."""
    results = SplitResults()
    async with httpx.AsyncClient(trust_env=False, timeout=10.0) as client:
        for item in corpus:
            status = await send(client, address, item)
            if status == 0 or status >= 500:
                results.errors += 1
                continue
            result, blocked = results.of(item["split"]), 400 <= status < 500
            what = f"{item['category']}/{item['placement']} {item['method']} {item['path'][:120]}"
            if item["label"] == "benign":
                what += f" {str(item.get('body'))[:120]} -> {status}"
            result.count(item["label"] == "attack", blocked, what)
    return results
