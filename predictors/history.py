"""A predictor that does not read the future: per-supernode failure rates learned from the past.

Each supernode's failures are taken as a Poisson process with its own rate λ_n. The rates share
a Gamma prior centred on the machine's average rate so far, λ̄ = (failures seen) / (N x elapsed),
with the weight of ``prior_strength`` pseudo-failures. After k_n failures of supernode n in
``elapsed`` seconds the posterior mean is

    λ_n = (k_n + k0) / (elapsed + k0 / λ̄),       k0 = prior_strength

and the probability of a failure in a window of w seconds is ``1 - exp(-λ_n w)``. A supernode
that has failed more than its peers gets a higher rate; with no failure seen yet, every
probability is 0. The alarm of the tie-break scheduler is ``probability >= alarm_threshold``.

With a ``half_life`` h (the ``recency`` predictor) every past failure weighs ``exp(-age / τ)``,
τ = h / ln 2, and the exposure is the weighted time ``E = τ (1 - exp(-elapsed / τ))``: k_n and
``elapsed`` above become the decayed count and E, so a node that failed last week outranks one that
failed as often a year ago.

References:
    Gamma-Poisson empirical Bayes (Gelman et al., Bayesian Data Analysis, 3rd ed., §2.6);
    failures of HPC nodes are heterogeneous and cluster on nodes that failed before
    (Schroeder & Gibson, DSN 2006; Oliner & Stearley, DSN 2007); BGL-FAULT §4 (predictors).
"""

from __future__ import annotations

import numpy as np

from predictors.base import PREDICTORS, FailurePredictor, check_fraction, check_window
from torus_sim.core.errors import ConfigurationError

__all__ = ["RECENCY_HALF_LIFE", "HistoryPredictor", "recency_predictor"]


class HistoryPredictor(FailurePredictor):
    """Empirical-Bayes exponential hazard per supernode, from the failures seen so far.

    Args:
        prior_strength: k0 > 0, pseudo-failures of the shared prior.
        alarm_threshold: probability in [0, 1] at or above which the tie-break alarm rings.
        half_life: h > 0, seconds after which a past failure counts half (None: every failure
            counts 1 for ever, the plain empirical-Bayes rate).
        origin: when observation starts, seconds (the elapsed time counts from it).

    Raises:
        ConfigurationError: ``prior_strength`` <= 0, a threshold outside [0, 1], or ``half_life`` <= 0.
    """

    name = "history"

    def __init__(
        self, prior_strength: float = 1.0, alarm_threshold: float = 0.5, half_life: float | None = None, origin: float = 0.0
    ) -> None:
        super().__init__()
        if not prior_strength > 0:
            raise ConfigurationError(f"prior strength must be positive, got {prior_strength}")
        if half_life is not None and not half_life > 0:
            raise ConfigurationError(f"half-life must be positive seconds, got {half_life}")
        self.prior_strength = float(prior_strength)
        self.alarm_threshold = check_fraction("alarm threshold", alarm_threshold)
        self.half_life = None if half_life is None else float(half_life)
        self.counts = np.zeros(0)
        self.origin = float(origin)
        self._counted_at = self.origin  # the time the (decayed) counts refer to

    def attach(self, log, rng, n_supernodes):  # noqa: D102
        super().attach(log, rng, n_supernodes)
        self.counts = np.zeros(n_supernodes)
        self._counted_at = self.origin

    def _decay(self, age: float) -> float:
        return 1.0 if self.half_life is None else float(np.exp2(-max(age, 0.0) / self.half_life))

    def observe_failure(self, at: float, supernode: int) -> None:  # noqa: D102
        if self.half_life is not None and at > self._counted_at:
            self.counts *= self._decay(at - self._counted_at)
            self._counted_at = at
        self.counts[supernode] += 1

    def rates(self, now: float) -> np.ndarray:
        """Posterior mean failure rate of each supernode at time ``now``, per second, ``(N,)``."""
        elapsed = now - self.origin
        if self.half_life is None:
            counts, exposure = self.counts, elapsed
        else:
            tau = self.half_life / np.log(2.0)
            counts = self.counts * self._decay(now - self._counted_at)
            exposure = tau * -np.expm1(-elapsed / tau) if elapsed > 0 else 0.0
        total = counts.sum()
        if total == 0 or exposure <= 0:
            return np.zeros(self.n_supernodes)
        machine_rate = total / (self.n_supernodes * exposure)
        return (counts + self.prior_strength) / (exposure + self.prior_strength / machine_rate)

    def supernode_probabilities(self, start: float, window: float) -> np.ndarray:  # noqa: D102
        check_window(window)
        return 1.0 - np.exp(-self.rates(start) * window)

    def supernode_alarms(self, start: float, window: float) -> np.ndarray:  # noqa: D102
        return self.supernode_probabilities(start, window) >= self.alarm_threshold


RECENCY_HALF_LIFE = 90 * 86400.0
"""The ``recency`` predictor's half-life, seconds (90 days): see docs/bgl_fault/README.md, "History on real failures"."""


def recency_predictor(prior_strength: float = 1.0, alarm_threshold: float = 0.5, half_life: float = RECENCY_HALF_LIFE):
    """The history predictor with recency weighting (half-life 90 days by default)."""
    predictor = HistoryPredictor(prior_strength, alarm_threshold, half_life)
    predictor.name = "recency"
    return predictor


PREDICTORS.register("history", HistoryPredictor)
PREDICTORS.register("recency", recency_predictor)
