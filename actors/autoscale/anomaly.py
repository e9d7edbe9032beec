"""Anomaly detection on a container's own recent history (scikit-learn IsolationForest).

Features are raw usage figures (never the scaler's output, which the anchor fed
to its thresholds by mistake): CPU cores used, memory used, network and disk
rates, and CPU per unit of traffic. The last one separates a traffic burst (CPU
and traffic rise together) from a runaway process (CPU pinned, traffic flat).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from sklearn.ensemble import IsolationForest
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from .sampling import Sample

MIN_SAMPLES = 30


def efficiency(sample: Sample) -> float:
    """log(CPU cores used per MB/s of traffic): flat for real work, high for a runaway."""
    traffic = (sample.rx_bps + sample.tx_bps + sample.io_read_bps + sample.io_write_bps) / 1e6
    return math.log1p(sample.cpu_cores_used / (traffic + 0.05))


def features(samples: Sequence[Sample]) -> np.ndarray:
    return np.array(
        [[s.cpu_cores_used, s.memory_used_mb, s.rx_bps / 1e6, s.io_write_bps / 1e6, efficiency(s)] for s in samples],
        dtype=float,
    )


@dataclass
class Verdict:
    anomaly: bool
    score: float
    efficiency: float
    baseline_efficiency: float


class AnomalyDetector:
    """An IsolationForest per container, refit on its bounded window every `refit_seconds`."""

    def __init__(
        self,
        contamination: float = 0.05,
        n_estimators: int = 50,
        max_samples: int = 64,
        refit_seconds: float = 1800.0,
        random_state: int = 42,
    ) -> None:
        self.contamination = contamination
        self.n_estimators = n_estimators
        self.max_samples = max_samples
        self.refit_seconds = refit_seconds
        self.random_state = random_state
        self._models: dict[str, tuple[float, object]] = {}
        self.fits = 0

    def _model(self, vmid: str, samples: Sequence[Sample], now: float) -> object:
        cached = self._models.get(vmid)
        if cached is not None and now - cached[0] < self.refit_seconds:
            return cached[1]
        model = make_pipeline(
            StandardScaler(),
            IsolationForest(
                n_estimators=self.n_estimators,
                max_samples=min(self.max_samples, len(samples)),
                contamination=self.contamination,
                random_state=self.random_state,
            ),
        )
        model.fit(features(samples))
        self._models[vmid] = (now, model)
        self.fits += 1
        return model

    def judge(self, vmid: str, samples: Sequence[Sample], now: float, recent: int = 3) -> Verdict | None:
        """Is the newest behaviour anomalous for this container? None while history is too short.

        The newest `recent` samples are scored; the verdict is anomalous when the
        majority are outliers (one noisy sample does not make an anomaly).
        """
        if len(samples) < MIN_SAMPLES:
            return None
        model = self._model(vmid, samples, now)
        tail = samples[-recent:]
        scores = model.decision_function(features(tail))  # type: ignore[attr-defined]
        outliers = int((scores < 0).sum())
        baseline = float(np.median([efficiency(s) for s in samples]))
        return Verdict(
            anomaly=outliers * 2 > len(tail),
            score=round(float(scores[-1]), 4),
            efficiency=round(efficiency(tail[-1]), 4),
            baseline_efficiency=round(baseline, 4),
        )

    def forget(self, vmid: str) -> None:
        self._models.pop(vmid, None)
