"""The two oracle predictors of BGL-FAULT §4: they read the failure log's future.

BGL-FAULT simulates prediction quality instead of running a real predictor: the failure log
says which supernodes will fail, and a parameter ``a`` degrades that knowledge.

* :class:`OracleConfidencePredictor` (balancing predictor, §4.1): p_f_n(s) = a if the log holds a
  failure of n within the next s seconds, else 0.
* :class:`OracleAccuracyPredictor` (tie-break predictor, §4.2): says "will fail" for a supernode
  whose failure lies in the window with probability a (false-negative rate 1 - a), and never
  otherwise; an optional false-positive rate p_f+ (off by default, beyond the paper) makes it
  also raise alarms on healthy supernodes.
"""

from __future__ import annotations

import numpy as np

from failure_logs.events import FailureLog
from predictors.base import PREDICTORS, FailurePredictor, check_fraction, check_window

__all__ = ["OracleAccuracyPredictor", "OracleConfidencePredictor"]


class _LogIndex:
    """Failure times per supernode, plus the time order of all failures, for window queries."""

    def __init__(self, log, n_supernodes: int) -> None:
        self.by_supernode = [np.sort(log.failed_at[log.supernodes == n]) for n in range(n_supernodes)]
        self.times = log.failed_at  # ascending
        self.supernodes = log.supernodes

    def failing(self, start: float, window: float) -> np.ndarray:
        """Bool (N,): a failure of the supernode lies in ``[start, start + window)``."""
        flags = np.zeros(len(self.by_supernode), dtype=bool)
        lo = np.searchsorted(self.times, start, side="left")
        hi = np.searchsorted(self.times, start + window, side="left")
        flags[self.supernodes[lo:hi]] = True
        return flags


class OracleConfidencePredictor(FailurePredictor):
    """BGL-FAULT's balancing predictor: probability ``a`` for a supernode that will fail, else 0.

    Args:
        confidence: a in [0, 1].

    Raises:
        ConfigurationError: a outside [0, 1].

    References:
        BGL-FAULT §4.1 (p_f_n(s) = a if the failure log holds a failure of n in the next s
        seconds, else 0).
    """

    name = "oracle-confidence"

    def __init__(self, confidence: float = 0.1) -> None:
        super().__init__()
        self.confidence = check_fraction("confidence", confidence)
        self._index: _LogIndex | None = None

    def attach(self, log, rng, n_supernodes):  # noqa: D102
        super().attach(log, rng, n_supernodes)
        self._index = _LogIndex(log, n_supernodes)

    def supernode_probabilities(self, start: float, window: float) -> np.ndarray:  # noqa: D102
        check_window(window)
        return self._index.failing(start, window) * self.confidence


class OracleAccuracyPredictor(FailurePredictor):
    """BGL-FAULT's tie-break predictor: a boolean alarm, right with probability ``a``, no false alarms.

    Each future failure is detected with probability ``a``, decided once per failure when the
    predictor is attached (so repeated questions about the same failure get the same answer);
    a supernode raises an alarm for a window holding a detected failure of it. With
    ``false_positive_rate`` > 0, a supernode with no failure in the window raises an alarm with
    that probability, drawn at each question from the run's generator.

    Args:
        accuracy: a = 1 - p_f- in [0, 1].
        false_positive_rate: p_f+ in [0, 1]; 0 as in the paper.

    Raises:
        ConfigurationError: a parameter outside [0, 1].

    References:
        BGL-FAULT §4.2 (accuracy a = 1 - p_f-; no false positives; p_f+ typically below half of
        p_f-).
    """

    name = "oracle-accuracy"

    def __init__(self, accuracy: float = 0.1, false_positive_rate: float = 0.0) -> None:
        super().__init__()
        self.accuracy = check_fraction("accuracy", accuracy)
        self.false_positive_rate = check_fraction("false-positive rate", false_positive_rate)
        self._index: _LogIndex | None = None

    def attach(self, log, rng, n_supernodes):  # noqa: D102
        super().attach(log, rng, n_supernodes)
        detected = rng.random(len(log)) < self.accuracy
        seen = FailureLog(log.failed_at[detected], log.supernodes[detected], log.repair_at[detected])
        self._index = _LogIndex(seen, n_supernodes)
        self._all = _LogIndex(log, n_supernodes)

    def supernode_alarms(self, start: float, window: float) -> np.ndarray:  # noqa: D102
        check_window(window)
        alarms = self._index.failing(start, window)
        if self.false_positive_rate > 0:
            healthy = ~self._all.failing(start, window)
            alarms |= healthy & (self.rng.random(self.n_supernodes) < self.false_positive_rate)
        return alarms

    def supernode_probabilities(self, start: float, window: float) -> np.ndarray:  # noqa: D102
        return self.supernode_alarms(start, window).astype(np.float64)


# the parameters a scenario gives by its own fields (--confidence, --accuracy, ...), unless [predictor.params] does
OracleConfidencePredictor.from_scenario = {"confidence": "confidence"}
OracleAccuracyPredictor.from_scenario = {"accuracy": "accuracy", "false_positive_rate": "false_positive_rate"}

PREDICTORS.register("oracle-confidence", OracleConfidencePredictor)
PREDICTORS.register("oracle-accuracy", OracleAccuracyPredictor)
