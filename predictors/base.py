"""Failure predictors: the probability that supernodes fail within a time window.

A predictor answers BGL-FAULT §3.2's question "will this node fail within this window?" as a
probability per supernode. Subclasses override :meth:`FailurePredictor.failure_probabilities`
and register with ``PREDICTORS.register``; the fault-aware schedulers (BGL-FAULT §5.2) use
them through their placement policies.
"""

from __future__ import annotations

import numpy as np

from torus_sim.core.errors import ConfigurationError
from torus_sim.inputs.registry import Registry

__all__ = ["PREDICTORS", "PREDICTOR_ENTRY_POINTS", "FailurePredictor", "NullPredictor", "check_fraction", "check_window"]


class FailurePredictor:
    """Base class of failure predictors.

    The model calls :meth:`attach` once with the run's failure log and random generator, and
    :meth:`observe_failure` at every failure as it happens; schedulers then ask for
    probabilities (balancing) or alarms (tie-break) over a window.

    Override:
        supernode_probabilities(start, window) -> float array (N,)
        and, for a boolean predictor, supernode_alarms(start, window) -> bool array (N,)
    """

    name = "base"

    def __init__(self) -> None:
        self.log = None
        self.rng: np.random.Generator | None = None
        self.n_supernodes = 0

    def attach(self, log, rng: np.random.Generator, n_supernodes: int) -> None:
        """Give the predictor the run's failure log, generator and platform size.

        Args:
            log: the run's :class:`~failure_logs.events.FailureLog` (an oracle reads its future).
            rng: the model's generator (the one generator of the run).
            n_supernodes: N.
        """
        self.log = log
        self.rng = rng
        self.n_supernodes = n_supernodes

    def observe_failure(self, at: float, supernode: int) -> None:
        """A failure happened (seconds, supernode index); predictors that learn override this."""

    def supernode_probabilities(self, start: float, window: float) -> np.ndarray:
        """Probability that each supernode fails in ``[start, start + window)``.

        Args:
            start: window start, seconds.
            window: window length, seconds (>= 0).

        Returns:
            float64 ``(N,)`` in [0, 1].

        References:
            BGL-FAULT §3.2 (the predictor takes a node and a window), §4.
        """
        raise NotImplementedError

    def supernode_alarms(self, start: float, window: float) -> np.ndarray:
        """Whether the predictor says each supernode will fail in the window (bool ``(N,)``).

        The default says yes where the probability is at least one half.
        """
        return self.supernode_probabilities(start, window) >= 0.5

    def failure_probabilities(self, supernodes: np.ndarray, start: float, window: float) -> np.ndarray:
        """:meth:`supernode_probabilities` restricted to some supernodes (int ``(n,)`` -> float ``(n,)``)."""
        return self.supernode_probabilities(start, window)[np.asarray(supernodes, dtype=np.int64)]

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


def check_window(window: float) -> None:
    """Raise ConfigurationError for a negative window."""
    if window < 0:
        raise ConfigurationError(f"prediction window must be >= 0 seconds, got {window}")


def check_fraction(name: str, value: float) -> float:
    """Return ``value`` as a float in [0, 1], or raise ConfigurationError naming the parameter."""
    value = float(value)
    if not 0.0 <= value <= 1.0:
        raise ConfigurationError(f"{name} must lie in [0, 1], got {value}")
    return value


class NullPredictor(FailurePredictor):
    """Predicts no failure anywhere: every probability is 0 (a scheduler without prediction)."""

    name = "null"

    def supernode_probabilities(self, start: float, window: float) -> np.ndarray:  # noqa: D102
        check_window(window)
        return np.zeros(self.n_supernodes, dtype=np.float64)

    def failure_probabilities(self, supernodes: np.ndarray, start: float, window: float) -> np.ndarray:  # noqa: D102
        check_window(window)
        return np.zeros(len(supernodes), dtype=np.float64)


PREDICTOR_ENTRY_POINTS = "torus_sim.predictors"
"""The entry-point group installed packages add their failure predictors to."""

PREDICTORS: Registry[FailurePredictor] = Registry("failure predictor", PREDICTOR_ENTRY_POINTS, FailurePredictor)
"""Failure predictors by name: ``PREDICTORS.register(name, factory)``, ``PREDICTORS.build(name, params, offered)``;
installed plug-ins under the ``torus_sim.predictors`` entry points; import paths ``package.module:Class``."""
PREDICTORS.register(NullPredictor.name, NullPredictor)
