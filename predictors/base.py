"""Failure predictors: the probability that supernodes fail within a time window.

A predictor answers BGL-FAULT §3.2's question "will this node fail within this window?" as a
probability per supernode. Subclasses override :meth:`FailurePredictor.failure_probabilities`
and register with ``PREDICTORS.register``; the fault-aware schedulers (BGL-FAULT §5.2) use
them through their placement policies.
"""

from __future__ import annotations

import numpy as np

from torus_sim.errors import ConfigurationError
from torus_sim.registry import Registry

__all__ = ["PREDICTORS", "FailurePredictor", "NullPredictor"]


class FailurePredictor:
    """Base class of failure predictors.

    Override:
        failure_probabilities(supernodes, start, window) -> float array
    """

    name = "base"

    def failure_probabilities(self, supernodes: np.ndarray, start: float, window: float) -> np.ndarray:
        """Probability that each supernode fails in ``[start, start + window)``.

        Args:
            supernodes: supernode indices, int ``(n,)``.
            start: window start, seconds.
            window: window length, seconds (>= 0).

        Returns:
            float64 ``(n,)`` in [0, 1].

        References:
            BGL-FAULT §3.2 (the predictor takes a node and a window), §4.
        """
        raise NotImplementedError

    def partition_failure_probability(self, supernodes: np.ndarray, start: float, window: float) -> float:
        """Probability that any supernode of a partition fails: ``1 - prod(1 - p_n)``.

        Args:
            supernodes: the partition's supernodes, int ``(s,)``.
            start: window start, seconds.
            window: window length, seconds.

        Returns:
            P_f in [0, 1].

        References:
            BGL-FAULT §5.2.1 (P_f = 1 - prod over n in P of (1 - p_f_n)).
        """
        probabilities = self.failure_probabilities(np.asarray(supernodes), start, window)
        return float(1.0 - np.prod(1.0 - probabilities))


class NullPredictor(FailurePredictor):
    """Predicts no failure anywhere: every probability is 0 (a scheduler without prediction)."""

    name = "null"

    def failure_probabilities(self, supernodes: np.ndarray, start: float, window: float) -> np.ndarray:  # noqa: D102
        if window < 0:
            raise ConfigurationError(f"prediction window must be >= 0 seconds, got {window}")
        return np.zeros(len(supernodes), dtype=np.float64)


PREDICTORS: Registry[FailurePredictor] = Registry("predictor")
"""Predictors by name: ``PREDICTORS.register(name, factory)``, ``PREDICTORS.make(name, **kwargs)``."""
PREDICTORS.register("null", NullPredictor)
