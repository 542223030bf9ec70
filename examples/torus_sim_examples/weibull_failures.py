"""Example 5: a failure source of your own: every node fails as a Weibull renewal process.

A site that has fitted its own machine's failures (say a Weibull per node, shape below 1: failures
come in clusters, as most HPC logs show) runs them wherever a built-in failure source runs:

    torus-sim run --failures example-weibull --failures-param shape=0.7 --failures-param mtbf_days=200

The source gives a request (:class:`torus_sim.api.GeneratedFailures`) that the engine draws with the
run's one generator over the workload's span, so the seed decides the failures and a sweep over seeds
sees different ones.

References:
    Schroeder and Gibson, "A large-scale study of failures in high-performance computing systems",
    DSN 2006 (Weibull inter-failure times with shape 0.7-0.8 per node, LANL systems).
"""

import math

import numpy as np
from torus_sim.api import FailureLog, FailureSource, GeneratedFailures


class WeibullRenewal(GeneratedFailures):
    """Every node fails again and again, its gaps Weibull of shape ``shape`` and mean ``mtbf`` seconds.

    Args:
        shape: Weibull shape k (> 0; below 1: clustered failures).
        mtbf: mean time between two failures of one node, seconds.
        count: the expected number of failures over the run (the engine checks it against its limits).
    """

    def __init__(self, shape: float, mtbf: float, count: int) -> None:
        super().__init__(count)
        self.shape = shape
        self.mtbf = mtbf

    def draw(self, rng: np.random.Generator, start: float, end: float, platform) -> FailureLog:
        """The failures of every node over ``[start, end)``, drawn with the run's generator."""
        nodes = platform.capacity if hasattr(platform, "capacity") else platform.size
        scale = self.mtbf / math.gamma(1.0 + 1.0 / self.shape)  # mean of Weibull(k, λ) is λ Γ(1 + 1/k)
        times, where = [], []
        for node in range(nodes):
            at = start + scale * rng.weibull(self.shape)
            while at < end:
                times.append(at)
                where.append(node)
                at += scale * rng.weibull(self.shape)
        return FailureLog(np.array(times), np.array(where, dtype=np.int64), np.full(len(times), np.nan), source=repr(self))

    def __repr__(self) -> str:
        return f"WeibullRenewal(shape={self.shape:g}, mtbf={self.mtbf:g} s)"


class WeibullPerNode(FailureSource):
    """A Weibull renewal process per node (a fitted model of a machine), drawn by the run's generator.

    Args:
        shape: Weibull shape k, > 0 (0.7 as Schroeder and Gibson fitted).
        mtbf_days: the mean time between two failures of one node, days, > 0.

    Raises:
        ValueError: a shape or an MTBF that is not positive.
    """

    name = "example-weibull"
    from_scenario = ()  # it reads nothing of the scenario (its horizon and capacity come with the context)
    generated = True

    def __init__(self, shape: float = 0.7, mtbf_days: float = 365.0) -> None:
        super().__init__()
        if not (shape > 0 and mtbf_days > 0):
            raise ValueError(f"shape and mtbf_days must be positive, got {shape} and {mtbf_days}")
        self.shape = shape
        self.mtbf = mtbf_days * 86400.0

    def load(self, context) -> WeibullRenewal:
        """The request: its expected count is the platform's nodes x the horizon / the MTBF."""
        start, end = context.horizon
        return WeibullRenewal(self.shape, self.mtbf, round(context.capacity * (end - start) / self.mtbf))
