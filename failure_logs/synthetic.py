"""Synthetic failures: a renewal process per supernode, exponential or Weibull.

The generator can hit an exact total count over a span ("4000 failures over the SDSC log",
BGL-FAULT §6.2): it draws every supernode's renewal sequence in unit time, then stretches time
so that exactly ``count`` failures fall inside the span. For exponential inter-failure times
this is a Poisson process conditioned on its count; for Weibull, a stationary-in-scale renewal
process with the given shape (shape < 1: decreasing hazard, the usual fit to HPC failures,
Schroeder & Gibson DSN 2006).

:func:`scale_failure_count` gives the count that keeps the same average number of failures
per supernode and per day as a reference log (BGL-FAULT §6.2).
"""

from __future__ import annotations

import numpy as np

from failure_logs.events import FailureLog
from torus_sim.errors import ConfigurationError

__all__ = ["DISTRIBUTIONS", "SyntheticFailures", "generate_failures", "scale_failure_count"]

DISTRIBUTIONS = ("exponential", "weibull")


def scale_failure_count(reference_count: int, reference_nodes: int, reference_days: float, nodes: int, days: float) -> int:
    """Failure count with the same average per node per day as a reference log.

    Args:
        reference_count: failures in the reference log.
        reference_nodes: nodes of the reference system.
        reference_days: days the reference log covers.
        nodes: nodes (supernodes) of the simulated machine.
        days: days of the simulated trace.

    Returns:
        ``round(reference_count * (nodes / reference_nodes) * (days / reference_days))``.

    Raises:
        ConfigurationError: a non-positive node count or span.

    References:
        BGL-FAULT §6.2 ("the same average number of failures per node and per day").
    """
    if min(reference_nodes, reference_days, nodes, days) <= 0:
        raise ConfigurationError("node counts and spans must be positive")
    return round(reference_count * (nodes / reference_nodes) * (days / reference_days))


def generate_failures(
    count: int,
    n_supernodes: int,
    start: float,
    end: float,
    rng: np.random.Generator,
    distribution: str = "exponential",
    weibull_shape: float = 0.7,
) -> FailureLog:
    """Draw exactly ``count`` failures over ``[start, end)`` on ``n_supernodes`` supernodes.

    Args:
        count: total failures, >= 0.
        n_supernodes: supernodes, each an independent renewal process.
        start: span start, seconds.
        end: span end, seconds (> start when count > 0).
        rng: the run's generator (the model's ``rng``).
        distribution: ``"exponential"`` or ``"weibull"``.
        weibull_shape: Weibull shape k > 0 (used for ``"weibull"``).

    Returns:
        A failure log with unknown repair times (the engine's downtime mode applies).

    Raises:
        ConfigurationError: negative count, empty span, unknown distribution, or shape <= 0.
    """
    if count < 0:
        raise ConfigurationError(f"failure count must be >= 0, got {count}")
    if distribution not in DISTRIBUTIONS:
        raise ConfigurationError(f"unknown failure distribution {distribution!r}; choose from {DISTRIBUTIONS}")
    if distribution == "weibull" and not weibull_shape > 0:
        raise ConfigurationError(f"Weibull shape must be positive, got {weibull_shape}")
    source = f"synthetic:{count}:{distribution}" + (f":k={weibull_shape}" if distribution == "weibull" else "")
    if count == 0:
        return FailureLog.empty(source)
    if not end > start:
        raise ConfigurationError(f"failure span must have end > start, got [{start}, {end})")
    # Unit mean inter-failure time per supernode; each draws enough renewals to cover `count`.
    per_node = count // n_supernodes + 1
    draws = max(8, int(per_node * 1.5) + 16)
    while True:
        if distribution == "exponential":
            gaps = rng.exponential(1.0, size=(n_supernodes, draws))
        else:
            from scipy.special import gamma

            gaps = rng.weibull(weibull_shape, size=(n_supernodes, draws)) / gamma(1.0 + 1.0 / weibull_shape)
        times = np.cumsum(gaps, axis=1)
        horizon = times[:, -1].min()  # every supernode's sequence is complete up to here
        flat = np.sort(times[times <= horizon])
        if len(flat) > count:
            break
        draws *= 2
    order = np.argsort(times.ravel(), kind="stable")
    ordered_times = times.ravel()[order]
    ordered_nodes = np.repeat(np.arange(n_supernodes), draws)[order]
    cut = (ordered_times[count - 1] + ordered_times[count]) / 2.0
    stretch = (end - start) / cut
    failed_at = start + ordered_times[:count] * stretch
    return FailureLog(failed_at, ordered_nodes[:count], np.full(count, np.nan), source=source)


class SyntheticFailures:
    """A request for synthetic failures, drawn by the model with its own generator.

    The model calls :meth:`generate` with its ``rng`` and the workload's span, so that the seed
    of the run decides the failures (one generator per run).

    Args:
        count: total failures over the span (BGL-FAULT §6.2: 0..4000).
        distribution: ``"exponential"`` or ``"weibull"``.
        weibull_shape: Weibull shape k.

    Raises:
        ConfigurationError: negative count or unknown distribution.
    """

    def __init__(self, count: int, distribution: str = "exponential", weibull_shape: float = 0.7) -> None:
        if count < 0:
            raise ConfigurationError(f"failure count must be >= 0, got {count}")
        if distribution not in DISTRIBUTIONS:
            raise ConfigurationError(f"unknown failure distribution {distribution!r}; choose from {DISTRIBUTIONS}")
        self.count = count
        self.distribution = distribution
        self.weibull_shape = weibull_shape

    def __repr__(self) -> str:
        return f"SyntheticFailures({self.count}, {self.distribution!r})"

    def generate(self, rng: np.random.Generator, start: float, end: float, n_supernodes: int) -> FailureLog:
        """Draw the failures over ``[start, end)``; see :func:`generate_failures`."""
        return generate_failures(self.count, n_supernodes, start, end, rng, self.distribution, self.weibull_shape)
