"""The second stage: a linear model over hashed words, for prompts the rules leave uncertain.

Features are the words and word pairs of the folded text (``normalise.fold``), each hashed with
CRC-32 into ``BUCKETS`` buckets, counted once (binary); the probability is the logistic of the
weights' sum plus the bias. The weights were fitted by ``scripts/train_injection_classifier.py``
with scikit-learn's logistic regression on the ``dev`` split of the labelled corpus only, and are
shipped beside this module (``classifier_weights.json``: the non-zero buckets); nothing is
downloaded or trained at run time, and numpy is not needed to score.

Only the first ``HEAD_CHARS`` and the last ``TAIL_CHARS`` characters are read.
"""

from __future__ import annotations

import json
import math
import re
import zlib
from dataclasses import dataclass
from functools import cache
from itertools import pairwise
from pathlib import Path

BUCKETS = 1 << 18
HEAD_CHARS = 2048
TAIL_CHARS = 1024
WEIGHTS = Path(__file__).with_name("classifier_weights.json")

_TOKEN = re.compile(r"[a-z0-9']+|[^\sa-z0-9']")


def features(folded: str) -> set[int]:
    """The hashed buckets of the words and adjacent word pairs of ``folded`` text."""
    if len(folded) > HEAD_CHARS + TAIL_CHARS:
        folded = folded[:HEAD_CHARS] + " " + folded[-TAIL_CHARS:]
    words = _TOKEN.findall(folded)
    grams = [*words, *(f"{a} {b}" for a, b in pairwise(words))]
    return {zlib.crc32(g.encode()) % BUCKETS for g in grams}


@dataclass(frozen=True)
class Model:
    bias: float
    weights: dict[int, float]
    weight: float  # what the scorer adds is weight × probability ...
    threshold: float  # ... when the probability reaches this


@cache
def model() -> Model:
    data = json.loads(WEIGHTS.read_text())
    if data["buckets"] != BUCKETS:
        raise ValueError(f"{WEIGHTS.name} was trained for {data['buckets']} buckets, not {BUCKETS}")
    weights = {int(k): float(v) for k, v in data["weights"].items()}
    return Model(float(data["bias"]), weights, float(data["chosen_weight"]), float(data["chosen_threshold"]))


def second_stage(folded: str) -> float:
    """What the classifier adds to an uncertain score: ``weight × p`` when ``p`` reaches the threshold."""
    m = model()
    if not m.weight:
        return 0.0
    p = probability(folded)
    return m.weight * p if p >= m.threshold else 0.0


def probability(folded: str) -> float:
    """The model's probability that ``folded`` text is an injection."""
    m = model()
    bias, weights = m.bias, m.weights
    z = bias + sum(weights.get(f, 0.0) for f in features(folded))
    return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))
