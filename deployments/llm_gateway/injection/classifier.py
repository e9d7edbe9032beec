"""The second stage: a linear model over character and word n-grams of the folded text.

Features (``features``): the character n-grams (the lengths in ``Spec.chars``) of the first
``Spec.char_head`` and last ``Spec.char_tail`` characters of the folded text (``normalise.fold``),
and its words and adjacent word pairs (``Spec.words``) in the first ``Spec.word_head`` and last
``Spec.word_tail`` characters, each counted once (binary). Character n-grams carry over between
wordings and languages that share stems (``instruc``, ``regl``, ``persona``) where whole words do
not. The probability is the logistic of the bias plus the sum of the weights of the features found,
divided by the square root of the number of features when ``Spec.l2`` is set (so a long prompt does
not win by length alone).

The weights, the feature settings and the thresholds the scorer uses were fitted and chosen by
``scripts/train_injection_classifier.py`` on the development data only (its docstring gives the
protocol: cross-validation for every choice, the held-out sets never read), and are shipped beside
this module (``classifier_weights.json``: the n-grams with a non-zero weight). Nothing is downloaded
or trained at run time, and scoring needs only the standard library.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from functools import cache
from itertools import pairwise
from pathlib import Path
from typing import Any

WEIGHTS = Path(__file__).with_name("classifier_weights.json")

_TOKEN = re.compile(r"[a-z0-9']+|[^\sa-z0-9']")
WORD_MARK = "\t"  # folded text has no tab (``normalise.collapse``), so a word feature is never a character n-gram


@dataclass(frozen=True)
class Spec:
    """Which features are read, and from how much of the text."""

    chars: tuple[int, ...] = (3, 4, 5)
    char_head: int = 768
    char_tail: int = 256
    words: bool = True
    word_head: int = 768
    word_tail: int = 256
    l2: bool = True

    def as_json(self) -> dict[str, Any]:
        return {**self.__dict__, "chars": list(self.chars)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Spec:
        return cls(**{**data, "chars": tuple(data["chars"])})


def _window(text: str, head: int, tail: int) -> str:
    return text if len(text) <= head + tail else text[:head] + " " + text[-tail:]


def features(folded: str, spec: Spec) -> set[str]:
    """The n-grams of ``folded`` text that ``spec`` names (see the module docstring)."""
    out: set[str] = set()
    if spec.chars:
        padded = " " + _window(folded, spec.char_head, spec.char_tail) + " "
        for n in spec.chars:
            out.update(padded[i : i + n] for i in range(len(padded) - n + 1))
    if spec.words:
        words = _TOKEN.findall(_window(folded, spec.word_head, spec.word_tail))
        out.update(WORD_MARK + w for w in words)
        out.update(f"{WORD_MARK}{a} {b}" for a, b in pairwise(words))
    return out


@dataclass(frozen=True)
class Model:
    spec: Spec
    bias: float
    weights: dict[str, float]
    alone: float  # the probability from which the classifier blocks on its own ...
    uncertain: float  # ... and from which it blocks a prompt the rules scored above 0 but under the block score


@cache
def model() -> Model:
    data = json.loads(WEIGHTS.read_text(encoding="utf-8"))
    return Model(
        Spec.from_json(data["spec"]),
        float(data["bias"]),
        {k: float(v) for k, v in data["weights"].items()},
        float(data["threshold_alone"]),
        float(data["threshold_uncertain"]),
    )


def probability(folded: str) -> float:
    """The model's probability that ``folded`` text is an injection."""
    m = model()
    found = features(folded, m.spec)
    weights = m.weights
    z = math.fsum(map(weights.__getitem__, weights.keys() & found))  # exact: the same in any order
    if m.spec.l2 and found:
        z /= math.sqrt(len(found))
    z += m.bias
    return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))


def blocks(folded: str, rules_score: float) -> bool:
    """Whether the classifier blocks a prompt the rules scored ``rules_score`` (under the block score)."""
    m = model()
    return probability(folded) >= (m.uncertain if rules_score > 0 else m.alone)
