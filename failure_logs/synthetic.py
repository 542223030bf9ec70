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
from torus_sim.core.errors import ConfigurationError

__all__ = [
    "DISTRIBUTIONS",
    "GeneratedFailures",
    "SyntheticFailures",
    "generate_burst_failures",
    "generate_failures",
    "scale_failure_count",
]

DISTRIBUTIONS = ("exponential", "weibull", "bursty")

BGL_BURSTS_PER_DAY = 0.5
"""Failure bursts per day in the bundled BG/L RAS sample: its 347 FATAL lines form 102 bursts
(lines less than 600 s apart) over 205 days."""


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


def generate_burst_failures(
    count: int,
    start: float,
    end: float,
    rng: np.random.Generator,
    neighbours: list[list[int]],
    bursts_per_day: float = BGL_BURSTS_PER_DAY,
    burst_window: float = 600.0,
    stay: float = 0.5,
) -> FailureLog:
    """Draw ``count`` failures clustered into a fixed set of bursts.

    The burst instants do not depend on ``count``: ``round(bursts_per_day x days)`` bursts fall
    uniformly over ``[start, end)`` (at least one). Each failure joins a burst chosen uniformly,
    lands uniformly within ``burst_window`` seconds after its start, and hits the burst's centre
    supernode with probability ``stay``, else one of the centre's torus neighbours. So more failures
    make bursts bigger rather than more numerous, as scaling the count of a real trace while keeping
    its timings does (BGL-FAULT §6.2), and repeated failures of one partition in one burst kill at
    most the jobs placed there in the meantime (BGL-FAULT §7.1's explanation of the levelling off).

    Args:
        count: total failures, >= 0.
        start: span start, seconds.
        end: span end, seconds (> start when count > 0).
        rng: the run's generator.
        neighbours: ``neighbours[n]`` lists the torus neighbours of supernode n (the torus's
            :meth:`~torus_sim.machine.topology.Torus.neighbours`).
        bursts_per_day: burst rate; 0.5 as in the bundled BG/L RAS sample.
        burst_window: seconds over which one burst's failures spread; 600 s as the sample's grouping.
        stay: probability that a failure hits the burst's centre supernode.

    Returns:
        A failure log with unknown repair times.

    Raises:
        ConfigurationError: negative count, empty span, or a rate, window or probability out of range.

    References:
        BGL-FAULT §6.2, §7.1; Oliner & Stearley, DSN 2007 (BG/L failures come in bursts).
    """
    if count < 0:
        raise ConfigurationError(f"failure count must be >= 0, got {count}")
    if not bursts_per_day > 0 or burst_window < 0 or not 0.0 <= stay <= 1.0:
        raise ConfigurationError("bursts_per_day must be > 0, burst_window >= 0 and stay in [0, 1]")
    source = f"synthetic:{count}:bursty:{bursts_per_day}/day:{burst_window}s"
    if count == 0:
        return FailureLog.empty(source)
    if not end > start:
        raise ConfigurationError(f"failure span must have end > start, got [{start}, {end})")
    n_bursts = max(1, round(bursts_per_day * (end - start) / 86400.0))
    burst_at = np.sort(rng.uniform(start, end, n_bursts))
    centres = rng.integers(len(neighbours), size=n_bursts)
    member_of = rng.integers(n_bursts, size=count)
    failed_at = np.minimum(burst_at[member_of] + rng.uniform(0.0, burst_window, count), np.nextafter(end, start))
    supernodes = centres[member_of].copy()
    moved = np.flatnonzero(rng.random(count) >= stay)
    for index in moved:
        around = neighbours[supernodes[index]]
        if around:
            supernodes[index] = around[rng.integers(len(around))]
    return FailureLog(failed_at, supernodes, np.full(count, np.nan), source=source)


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
    if distribution == "bursty":
        raise ConfigurationError("bursty failures need the torus: use generate_burst_failures or SyntheticFailures")
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


class GeneratedFailures:
    """A request for failures that the run draws with its own generator (the extension point of failure models).

    A failure source that models failures (rather than reading a log) returns one: the engine calls
    :meth:`generate` with the run's one generator and the span to cover, so the run's seed decides the
    failures. Override :meth:`draw`.

    Args:
        count: the (expected) number of failures over the span, checked against the run's limits.
        span: ``(start, end)`` seconds to draw over; the workload's submit span when None.
        keep: ``(start, end)``: keep only the failures drawn inside it (a prefix of a workload whose
            whole span is ``span``: the prefix gets its share); all when None.

    Raises:
        ConfigurationError: a negative count.
    """

    def __init__(self, count: int, span=None, keep=None) -> None:
        if count < 0:
            raise ConfigurationError(f"failure count must be >= 0, got {count}")
        self.count = count
        self.span = span  # (start, end) seconds; the model uses the workload's when None
        self.keep = keep  # (start, end) seconds or None

    def draw(self, rng: np.random.Generator, start: float, end: float, platform) -> FailureLog:
        """The failures over ``[start, end)``, drawn with ``rng`` (the run's generator).

        Args:
            rng: the run's generator.
            start: span start, seconds.
            end: span end, seconds.
            platform: the platform (``capacity``; on a torus ``neighbours(node)``).
        """
        raise NotImplementedError

    def generate(self, rng: np.random.Generator, start: float, end: float, platform) -> FailureLog:
        """:meth:`draw` over ``[start, end)``, cut to ``keep`` when set (what the engine calls)."""
        log = self.draw(rng, start, end, platform)
        if self.keep is None:
            return log
        from failure_logs.transform import cut_to_span

        return cut_to_span(log, *self.keep)


class SyntheticFailures(GeneratedFailures):
    """A request for synthetic failures, drawn by the model with its own generator.

    The model calls :meth:`generate` with its ``rng`` and the workload's span, so that the seed
    of the run decides the failures (one generator per run).

    Args:
        count: total failures over the span (BGL-FAULT §6.2: 0..4000).
        distribution: ``"exponential"``, ``"weibull"`` (independent per supernode) or ``"bursty"``
            (clustered, :func:`generate_burst_failures`).
        weibull_shape: Weibull shape k.
        span: ``(start, end)`` seconds to draw over; the workload's submit span when None.
        keep: ``(start, end)``: keep only the failures drawn inside it (a prefix of a workload whose
            whole span is ``span``: the prefix gets its share of the count); all when None.

    Raises:
        ConfigurationError: negative count or unknown distribution.
    """

    def __init__(self, count: int, distribution: str = "exponential", weibull_shape: float = 0.7, span=None, keep=None) -> None:
        super().__init__(count, span, keep)
        if distribution not in DISTRIBUTIONS:
            raise ConfigurationError(f"unknown failure distribution {distribution!r}; choose from {DISTRIBUTIONS}")
        self.distribution = distribution
        self.weibull_shape = weibull_shape

    def __repr__(self) -> str:
        return f"SyntheticFailures({self.count}, {self.distribution!r})"

    def draw(self, rng: np.random.Generator, start: float, end: float, platform) -> FailureLog:
        """Draw the failures over ``[start, end)`` (see :func:`generate_failures`, :func:`generate_burst_failures`).

        Args:
            rng: the run's generator.
            start: span start, seconds.
            end: span end, seconds.
            platform: a platform (``capacity``, ``neighbours(node)``) or a :class:`~torus_sim.machine.topology.Torus`;
                bursts spread to a node's neighbours (torus links; adjacent ids on a cluster).

        Returns:
            The failure log.
        """
        size = platform.capacity if hasattr(platform, "capacity") else platform.size
        if self.distribution == "bursty":
            neighbours = [platform.neighbours(n) for n in range(size)]
            return generate_burst_failures(self.count, start, end, rng, neighbours)
        return generate_failures(self.count, size, start, end, rng, self.distribution, self.weibull_shape)
