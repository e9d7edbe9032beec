"""The test copy of the gitignore corpus (tests/data/ignore_gen/corpus.jsonl.gz)."""

from __future__ import annotations

import gzip
import json
from functools import lru_cache
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[2] / "data" / "ignore_gen" / "corpus.jsonl.gz"


def corpus_bytes() -> bytes:
    return gzip.decompress(CORPUS.read_bytes())


@lru_cache(maxsize=1)
def records() -> tuple[dict, ...]:
    return tuple(json.loads(line) for line in corpus_bytes().decode("utf-8").splitlines() if line.strip())


def record(repo: str) -> dict:
    for rec in records():
        if rec["repo"] == repo:
            return rec
    raise KeyError(repo)
