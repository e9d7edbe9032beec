"""Fit the injection classifier's weights on the ``dev`` split of the labelled corpus, and choose how
the scorer uses it, from out-of-fold predictions on ``dev`` (held-out rows are never read here).

1. Features: ``classifier.features`` of every dev prompt (hashed words and word pairs, binary).
2. Five-fold cross-validation on dev (folds by sentence group, so a sentence's three prompts are
   in one fold) gives each dev prompt a probability from a model that did not see it; with those
   and the rules' scores, the script reports what the second stage would change on dev for each
   candidate (weight, threshold) and picks, among those that add no false positive on dev, the one
   that adds most detections, then the largest weight, then the lowest threshold (the rules were
   written on dev, so dev leaves them little to add: the choice leans to the strongest setting
   that dev shows to be safe).
3. The final model is fitted on all of dev and written to
   ``deployments/llm_gateway/injection/classifier_weights.json`` (non-zero buckets only).

Usage: python scripts/train_injection_classifier.py [--c 1.0]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
from scipy.sparse import csr_matrix
from sklearn.linear_model import LogisticRegression

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from deployments.llm_gateway.injection import classifier, rule_score  # noqa: E402
from deployments.llm_gateway.injection.normalise import fold  # noqa: E402

CORPUS = ROOT / "tests" / "data" / "llm_gateway" / "injection" / "corpus.jsonl"
BLOCK = 1.5
FOLDS = 5


def matrix(texts: list[str]) -> csr_matrix:
    rows, cols = [], []
    for i, text in enumerate(texts):
        for f in classifier.features(fold(text)):
            rows.append(i)
            cols.append(f)
    return csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(texts), classifier.BUCKETS))


def fit(x: csr_matrix, y: np.ndarray, c: float) -> LogisticRegression:
    model = LogisticRegression(C=c, class_weight="balanced", max_iter=2000)
    model.fit(x, y)
    return model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--c", type=float, default=1.0, help="inverse regularisation strength")
    args = parser.parse_args()
    dev = [r for r in map(json.loads, CORPUS.open(encoding="utf-8")) if r["split"] == "dev"]
    texts = [r["text"] for r in dev]
    y = np.array([r["label"] == "attack" for r in dev], dtype=int)
    x = matrix(texts)
    fold_of = np.array([int(r["group"], 16) % FOLDS for r in dev])
    oof = np.zeros(len(dev))
    for k in range(FOLDS):
        test = fold_of == k
        oof[test] = fit(x[~test], y[~test], args.c).predict_proba(x[test])[:, 1]
    rules = np.array([rule_score(t) for t in texts])
    base_det = ((rules >= BLOCK) & (y == 1)).sum()
    base_fp = ((rules >= BLOCK) & (y == 0)).sum()
    print(f"dev: {len(dev)} prompts; rules alone: {base_det}/{y.sum()} detected, {base_fp} false positives")
    best = (-1, 0.0, 0.0, 0.0)
    for weight in (0.5, 0.75, 1.0, 1.25, 1.5):
        for threshold in (0.5, 0.6, 0.7, 0.8, 0.9, 0.95):
            uncertain = (rules > 0) & (rules < BLOCK)
            boosted = rules + np.where(uncertain & (oof >= threshold), weight * oof, 0.0)
            det = ((boosted >= BLOCK) & (y == 1)).sum()
            fp = ((boosted >= BLOCK) & (y == 0)).sum()
            print(f"  weight {weight} threshold {threshold}: {det} detected, {fp} false positives (out of fold)")
            if fp == base_fp:
                best = max(best, (int(det - base_det), weight, -threshold, threshold))
    print(f"chosen: weight {best[1]} threshold {best[3]} (+{best[0]} on dev, out of fold)")
    model = fit(x, y, args.c)
    coef = model.coef_[0]
    nonzero = {int(i): round(float(coef[i]), 5) for i in np.flatnonzero(np.abs(coef) > 1e-5)}
    out = {
        "buckets": classifier.BUCKETS,
        "bias": round(float(model.intercept_[0]), 5),
        "weights": nonzero,
        "trained_on": "tests/data/llm_gateway/injection/corpus.jsonl, split dev",
        "c": args.c,
        "chosen_weight": best[1],
        "chosen_threshold": best[3],
    }
    classifier.WEIGHTS.write_text(json.dumps(out, separators=(",", ":")) + "\n")
    print(f"{len(nonzero)} non-zero weights -> {classifier.WEIGHTS}")


if __name__ == "__main__":
    main()
