"""Silent-error failure scenarios: how many times each job fails before it succeeds.

A scenario is f = (f_1..f_n): job j fails f_j times, each failure detected at the end of the
attempt, then succeeds (RIGID §3.2, MOLDABLE §3.2). Scenarios are given (a matrix, e.g. read from
the reference code's failure file) or drawn: f_j is geometric with per-attempt failure
probability q_j, P(f_j = k) = q_j^k (1 - q_j).
"""

from __future__ import annotations

import numpy as np

from torus_sim.core.errors import ConfigurationError

NO_SILENT_ERRORS = "none"
"""``silent_errors = "none"``: no silent error in any attempt."""

DRAWN = "drawn"
"""``silent_errors = "drawn"``: f_j drawn per job from q̄ or λ (RIGID / MOLDABLE §5.1); any other value is a file."""

__all__ = [
    "DRAWN",
    "NO_SILENT_ERRORS",
    "draw_scenarios",
    "error_rate_for_mean_probability",
    "failure_probabilities_by_area",
    "failure_probabilities_by_work",
]


def error_rate_for_mean_probability(areas: np.ndarray, mean_probability: float) -> float:
    """λ such that a job of the mean area fails with probability q̄: λ = -ln(1 - q̄) / ā.

    Args:
        areas: float ``(n,)``, a_j in processor-seconds.
        mean_probability: q̄ in [0, 1).

    Returns:
        λ per processor-second.

    Raises:
        ConfigurationError: q̄ outside [0, 1).

    References:
        RIGID §5.1 (q̄ = 1 - e^{-λ ā}).
    """
    if not 0 <= mean_probability < 1:
        raise ConfigurationError(f"the mean failure probability q̄ must be in [0, 1), got {mean_probability}")
    return float(-np.log1p(-mean_probability) / np.mean(areas))


def failure_probabilities_by_area(areas: np.ndarray, error_rate: float) -> np.ndarray:
    """q_j = 1 - e^{-λ a_j}, float64 ``(n,)`` (RIGID §3.4; ``areas`` in processor-seconds, λ per processor-second)."""
    if error_rate < 0:
        raise ConfigurationError(f"the error rate λ must be >= 0, got {error_rate}")
    return -np.expm1(-error_rate * np.asarray(areas, dtype=float))


def failure_probabilities_by_work(work: np.ndarray, error_rate: float) -> np.ndarray:
    """q_j = 1 - e^{-λ w_j}, independent of the allocation (MOLDABLE §3.4 Eq. 3; ``work`` in seconds)."""
    return failure_probabilities_by_area(work, error_rate)


def draw_scenarios(probabilities: np.ndarray, count: int, rng: np.random.Generator) -> np.ndarray:
    """Draw failure scenarios.

    Args:
        probabilities: float ``(n,)``, q_j in [0, 1).
        count: number of scenarios.
        rng: the generator.

    Returns:
        int64 ``(count, n)``; row i is scenario f, entry j the failures of job j.

    Raises:
        ConfigurationError: a probability outside [0, 1).
    """
    q = np.asarray(probabilities, dtype=float)
    if np.any(q < 0) or np.any(q >= 1):
        raise ConfigurationError("failure probabilities must be in [0, 1)")
    return rng.geometric(1.0 - q, size=(count, q.size)).astype(np.int64) - 1
