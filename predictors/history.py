"""A predictor that does not read the future: per-supernode failure rates learned from the past.

Each supernode's failures are taken as a Poisson process with its own rate λ_n. The rates share
a Gamma prior centred on the machine's average rate so far, λ̄ = (failures seen) / (N x elapsed),
with the weight of ``prior_strength`` pseudo-failures. After k_n failures of supernode n in
``elapsed`` seconds the posterior mean is

    λ_n = (k_n + k0) / (elapsed + k0 / λ̄),       k0 = prior_strength

and the probability of a failure in a window of w seconds is ``1 - exp(-λ_n w)``. A supernode
that has failed more than its peers gets a higher rate; with no failure seen yet, every
probability is 0. The alarm of the tie-break scheduler is ``probability >= alarm_threshold``.

References:
    Gamma-Poisson empirical Bayes (Gelman et al., Bayesian Data Analysis, 3rd ed., §2.6);
    failures of HPC nodes are heterogeneous and cluster on nodes that failed before
    (Schroeder & Gibson, DSN 2006; Oliner & Stearley, DSN 2007); BGL-FAULT §4 (predictors).
"""

from __future__ import annotations

import numpy as np

from predictors.base import PREDICTORS, FailurePredictor, check_fraction, check_window
from torus_sim.errors import ConfigurationError

__all__ = ["HistoryPredictor"]


class HistoryPredictor(FailurePredictor):
    """Empirical-Bayes exponential hazard per supernode, from the failures seen so far.

    Args:
        prior_strength: k0 > 0, pseudo-failures of the shared prior.
        alarm_threshold: probability in [0, 1] at or above which the tie-break alarm rings.

    Raises:
        ConfigurationError: ``prior_strength`` <= 0 or a threshold outside [0, 1].
    """

    name = "history"

    def __init__(self, prior_strength: float = 1.0, alarm_threshold: float = 0.5) -> None:
        super().__init__()
        if not prior_strength > 0:
            raise ConfigurationError(f"prior strength must be positive, got {prior_strength}")
        self.prior_strength = float(prior_strength)
        self.alarm_threshold = check_fraction("alarm threshold", alarm_threshold)
        self.counts = np.zeros(0)
        self.origin = 0.0

    def attach(self, log, rng, n_supernodes):  # noqa: D102
        super().attach(log, rng, n_supernodes)
        self.counts = np.zeros(n_supernodes)

    def observe_failure(self, at: float, supernode: int) -> None:  # noqa: D102
        self.counts[supernode] += 1

    def rates(self, now: float) -> np.ndarray:
        """Posterior mean failure rate of each supernode at time ``now``, per second, ``(N,)``."""
        elapsed = now - self.origin
        total = self.counts.sum()
        if total == 0 or elapsed <= 0:
            return np.zeros(self.n_supernodes)
        machine_rate = total / (self.n_supernodes * elapsed)
        return (self.counts + self.prior_strength) / (elapsed + self.prior_strength / machine_rate)

    def supernode_probabilities(self, start: float, window: float) -> np.ndarray:  # noqa: D102
        check_window(window)
        return 1.0 - np.exp(-self.rates(start) * window)

    def supernode_alarms(self, start: float, window: float) -> np.ndarray:  # noqa: D102
        return self.supernode_probabilities(start, window) >= self.alarm_threshold


PREDICTORS.register("history", HistoryPredictor)
