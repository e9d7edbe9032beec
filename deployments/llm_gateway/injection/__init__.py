"""Prompt-injection scoring: normalise, then sum the weighted signals of the rules.

1. ``normalise.fold`` undoes disguises (look-alike letters, invisible characters, leetspeak,
   letter spacing, accents); ``normalise.decoded_views`` reads base64, hex, URL escapes and ROT13.
2. ``rules.signals`` finds weighted signals (``rules.py``: attack classes in six languages); the
   score is their sum. Signals found only in decoded views that weigh ``ENCODED_MIN`` or more
   together add ``ENCODED_BONUS``: hiding an instruction is a signal of its own. Text that discusses attacks (what is / how to detect …
   injection) has a score from plain text multiplied by ``DISCUSSION_FACTOR``.
3. When the rules' score is under ``UNCERTAIN_BELOW`` (the default block score), the classifier
   (``classifier.py``: character and word n-grams, logistic regression, weights shipped in the package)
   adds ``CLASSIFIER_WEIGHT`` when its probability reaches its threshold: ``threshold_uncertain`` when
   the rules scored above 0, ``threshold_alone`` when they scored 0 (it then blocks on its own; only with
   ``security.injection.classifier_alone``, off by default: see ``score``). Both
   thresholds were chosen with the weights, on out-of-fold predictions on the development data only.
   Otherwise a score made only of weak signals (each under ``STANDS_ALONE``: a "system prompt"
   mention, a ``Tool output:`` label, a link) is 0: it says nothing alone, and every non-zero score is
   charged to the client in the threat ledger.

Only the first ``HEAD_CHARS`` and the last ``TAIL_CHARS`` characters are scored (an instruction
planted in a document is most often at its start or its end); every step is linear in what it reads,
and the costliest 20 KiB prompts measured (repeated trigger words, in-the-wild jailbreaks run together)
take about 20–30 ms of CPU.
"""

from __future__ import annotations

from dataclasses import dataclass

from deployments.llm_gateway.injection import classifier
from deployments.llm_gateway.injection.normalise import decoded_views, fold, fold_both
from deployments.llm_gateway.injection.rules import is_discussion, is_translation_request, signals

__all__ = ["CLASSIFIER_WEIGHT", "MAX_SCANNED_CHARS", "Verdict", "rule_score", "scanned", "score"]

HEAD_CHARS = 16 * 1024
TAIL_CHARS = 4 * 1024
MAX_SCANNED_CHARS = HEAD_CHARS + TAIL_CHARS
ENCODED_BONUS = 1.0
ENCODED_MIN = 1.0  # a lone weak signal (a "system prompt" mention) in decoded text earns no bonus
DISCUSSION_FACTOR = 0.4
STANDS_ALONE = 1.0  # a weaker signal counts only beside one of these, or when the classifier agrees
UNCERTAIN_BELOW = 1.5  # the default ``security.injection.block_score``: the rules are sure from here on
CLASSIFIER_WEIGHT = 1.5  # what the classifier adds when it is sure enough: the default block score


@dataclass(frozen=True)
class Verdict:
    score: float
    signals: tuple[str, ...]


def scanned(text: str) -> str:
    """The part of ``text`` that is scored: all of it up to ``MAX_SCANNED_CHARS``, else its head and tail."""
    if len(text) <= MAX_SCANNED_CHARS:
        return text
    return text[:HEAD_CHARS] + "\n" + text[-TAIL_CHARS:]


def _rules(text: str) -> tuple[float, list[str], str, float]:
    """The rules' score of ``text``, the names of the signals, the folded text and the heaviest signal."""
    text = scanned(text)
    folded, tail = fold_both(text)
    found = signals(folded)
    if "lapsed_instructions" in found and "addressed_to_model" not in found and is_translation_request(folded):
        # "the old rules no longer apply" inside text to translate states a fact of that text; an imperative
        # ("ignore your rules") in it still counts, since a translation request is a known carrier
        del found["lapsed_instructions"]
    encoded: dict[str, float] = {}
    views = [fold(view) for view in decoded_views(text)]
    if tail is not None:
        views.append(tail)
    for view in views:
        encoded.update({k: v for k, v in signals(view).items() if k not in found})
    hidden = ENCODED_BONUS if sum(encoded.values()) >= ENCODED_MIN else 0.0
    weights = [*found.values(), *encoded.values(), hidden]
    total = sum(weights)
    names = sorted(found) + sorted(f"encoded:{k}" for k in encoded)
    if total and not hidden and is_discussion(folded):
        total *= DISCUSSION_FACTOR
        names.append("discussion")
    return total, names, folded, max(weights)


def rule_score(text: str) -> float:
    """The score of the rules alone (what the classifier was tuned against)."""
    return _rules(text)[0]


def score(text: str, classifier_alone: bool = False) -> Verdict:
    """The injection score of ``text`` (see ``scanned``) and the signals seen. The classifier is asked
    about a prompt the rules found nothing in only with ``classifier_alone``
    (``security.injection.classifier_alone``): it then catches more unseen attacks, and refuses some
    ordinary long prompts (a "You are reviewing ..." request that names a link)."""
    total, names, folded, strongest = _rules(text)
    if total < UNCERTAIN_BELOW and (total > 0 or classifier_alone):
        if classifier.blocks(folded, total):
            total += CLASSIFIER_WEIGHT
            names.append("classifier")
        elif total and strongest < STANDS_ALONE:
            return Verdict(0.0, ())  # context alone (a "Tool output:" label, a link): not suspicious
    return Verdict(round(total, 3), tuple(names))
