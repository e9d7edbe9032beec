"""Prompt-injection scoring: normalise, then sum the weighted signals of the rules.

1. ``normalise.fold`` undoes disguises (look-alike letters, invisible characters, leetspeak,
   letter spacing, accents); ``normalise.decoded_views`` reads base64, hex, URL escapes and ROT13.
2. ``rules.signals`` finds weighted signals (``rules.py``: attack classes in six languages); the
   score is their sum. A signal found only in a decoded view adds ``ENCODED_BONUS``: hiding an
   instruction is a signal of its own. Text that discusses attacks (what is / how to detect …
   injection) has a score from plain text multiplied by ``DISCUSSION_FACTOR``.

Only the first ``HEAD_CHARS`` and the last ``TAIL_CHARS`` characters are scored (an instruction
planted in a document is most often at its start or its end); the rules cost about 0.7 µs per
character in the worst case, so a prompt of any size costs at most about 15 ms.
"""

from __future__ import annotations

from dataclasses import dataclass

from deployments.llm_gateway.injection.normalise import decoded_views, fold
from deployments.llm_gateway.injection.rules import is_discussion, signals

__all__ = ["MAX_SCANNED_CHARS", "Verdict", "scanned", "score"]

HEAD_CHARS = 16 * 1024
TAIL_CHARS = 4 * 1024
MAX_SCANNED_CHARS = HEAD_CHARS + TAIL_CHARS
ENCODED_BONUS = 1.0
DISCUSSION_FACTOR = 0.4


@dataclass(frozen=True)
class Verdict:
    score: float
    signals: tuple[str, ...]


def scanned(text: str) -> str:
    """The part of ``text`` that is scored: all of it up to ``MAX_SCANNED_CHARS``, else its head and tail."""
    if len(text) <= MAX_SCANNED_CHARS:
        return text
    return text[:HEAD_CHARS] + "\n" + text[-TAIL_CHARS:]


def score(text: str) -> Verdict:
    """The injection score of ``text`` (see ``scanned``) and the signals seen."""
    text = scanned(text)
    folded = fold(text)
    found = signals(folded)
    encoded: dict[str, float] = {}
    for view in decoded_views(text):
        encoded.update({k: v for k, v in signals(fold(view)).items() if k not in found})
    total = sum(found.values()) + sum(encoded.values())
    names = sorted(found) + sorted(f"encoded:{k}" for k in encoded)
    if encoded:
        total += ENCODED_BONUS
    elif total and is_discussion(folded):
        total *= DISCUSSION_FACTOR
        names.append("discussion")
    return Verdict(round(total, 3), tuple(names))
