"""Lower bounds on the makespan of a failure scenario, used to normalize makespans."""

from __future__ import annotations

import numpy as np

__all__ = ["moldable_lower_bound", "rigid_lower_bound"]


def rigid_lower_bound(
    runtimes: np.ndarray, processors: np.ndarray, failures: np.ndarray, total_processors: int, verification_time: float = 0.0
) -> np.ndarray:
    """L(f) = max(t_max(f), A(f) / P) for one or many scenarios.

    Args:
        runtimes: float ``(n,)``, t_j seconds.
        processors: int ``(n,)``, p_j.
        failures: int ``(n,)`` or ``(S, n)``, f_j per scenario.
        total_processors: P.
        verification_time: V seconds added to every attempt; 0 gives Eq. 5-6 as printed (and as the
            reference code computes it, whatever V), which the runner uses unless ``bound_verification``.

    Returns:
        float64 scalar array or ``(S,)``, seconds.

    References:
        RIGID §3.3, Eq. 5-6.
    """
    attempts = np.asarray(failures) + 1
    duration = np.asarray(runtimes, dtype=float) + verification_time
    longest = (attempts * duration).max(axis=-1)
    area = (attempts * duration * processors).sum(axis=-1) / total_processors
    return np.maximum(longest, area)


def moldable_lower_bound(times: np.ndarray, failures: np.ndarray) -> np.ndarray:
    """L'(J, f) = max(max_j (f_j + 1) min_p t_j(p), Σ_j (f_j + 1) min_p a_j(p) / P).

    The loose bound that does not depend on the allocation, so every algorithm is normalized by
    the same number.

    Args:
        times: float ``(n, P)``, t_j(p) for p = 1..P, seconds.
        failures: int ``(n,)`` or ``(S, n)``.

    Returns:
        float64 scalar array or ``(S,)``, seconds.

    References:
        MOLDABLE §5.1, "Evaluation Methodology".
    """
    total = times.shape[1]
    shortest = times.min(axis=1)
    smallest_area = (times * np.arange(1, total + 1)).min(axis=1)
    attempts = np.asarray(failures) + 1
    return np.maximum((attempts * shortest).max(axis=-1), (attempts * smallest_area).sum(axis=-1) / total)
