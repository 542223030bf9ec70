"""Runtime predictors for online backfilling: what the scheduler believes a job's runtime is.

A predictor is asked once per job at submission (:meth:`RuntimePredictor.predict`) and told every
job end (:meth:`RuntimePredictor.observe_end`). Predictions never exceed the requested time (the
kill time). New predictors subclass :class:`RuntimePredictor` and register in
:data:`RUNTIME_PREDICTORS` (``make_runtime_predictor`` parses ``name[:argument]``).
"""

from __future__ import annotations

import numpy as np

from torus_sim.errors import ConfigurationError

__all__ = [
    "RUNTIME_PREDICTORS",
    "EstimatePredictor",
    "ExactPredictor",
    "LastModelPredictor",
    "RuntimePredictor",
    "VirtualPredictor",
    "make_runtime_predictor",
]


class RuntimePredictor:
    """Base class. Override ``predict(job)``; override ``observe_end(job)`` to learn from ends."""

    name = "base"

    def predict(self, job) -> float:  # noqa: D102
        raise NotImplementedError

    def observe_end(self, job) -> None:  # noqa: D102
        return None


class EstimatePredictor(RuntimePredictor):
    """The user estimate (requested time), as plain EASY uses it."""

    name = "estimate"

    def predict(self, job) -> float:
        """The job's requested time, seconds."""
        return job.walltime


class ExactPredictor(RuntimePredictor):
    """The true runtime (an oracle; ``virtual:0``)."""

    name = "exact"

    def predict(self, job) -> float:
        """The job's runtime, seconds."""
        return job.runtime


class LastModelPredictor(RuntimePredictor):
    """Last Model: a user's next job has the runtime / estimate ratio of the user's last finished job.

    Falls back to the user estimate for a user with no finished job yet.

    References:
        PV-EASY §3.2 ("lifetime accuracy" of the last job of the same user); Tsafrir, Etsion,
        Feitelson, "Backfilling using system-generated predictions rather than user runtime
        estimates", IEEE TPDS 18(6), 2007.
    """

    name = "last"

    def __init__(self) -> None:
        self.accuracy: dict[int, float] = {}

    def predict(self, job) -> float:
        """Ratio of the user's last finished job x this job's estimate, seconds."""
        ratio = self.accuracy.get(job.user_id)
        return job.walltime if ratio is None else min(job.walltime, ratio * job.walltime)

    def observe_end(self, job) -> None:
        """Remember the user's accuracy (runtime / requested time)."""
        if job.walltime > 0:
            self.accuracy[job.user_id] = job.runtime / job.walltime


class VirtualPredictor(RuntimePredictor):
    """The "virtual" predictor: runtime x (1 + U(-x%, +x%)), at most the requested time.

    Args:
        percent: x, the maximum error in percent (>= 0).
        rng: the run's generator (one draw per job, in submission order).

    References:
        PV-EASY §5.2.2.
    """

    name = "virtual"

    def __init__(self, percent: float, rng: np.random.Generator) -> None:
        if not percent >= 0:
            raise ConfigurationError(f"the virtual predictor's error x must be >= 0, got {percent}")
        self.percent = percent
        self.rng = rng

    def predict(self, job) -> float:
        """A noisy runtime, seconds."""
        error = self.rng.uniform(-self.percent, self.percent) / 100.0
        return min(job.walltime, max(job.runtime * (1.0 + error), 0.0))


RUNTIME_PREDICTORS = ("estimate", "last", "virtual", "exact")
"""Names :func:`make_runtime_predictor` knows (``virtual:x`` takes the error in percent)."""


def make_runtime_predictor(spec: str, rng: np.random.Generator) -> RuntimePredictor:
    """Build a predictor from ``estimate``, ``last``, ``exact`` or ``virtual:x``.

    Raises:
        ConfigurationError: unknown name or a bad argument.
    """
    name, _, argument = spec.partition(":")
    if name == "estimate":
        return EstimatePredictor()
    if name == "last":
        return LastModelPredictor()
    if name == "exact":
        return ExactPredictor()
    if name == "virtual":
        try:
            return VirtualPredictor(float(argument or 10), rng)
        except ValueError:
            raise ConfigurationError(f"virtual predictor takes a percentage, got {argument!r}") from None
    raise ConfigurationError(f"unknown runtime predictor {spec!r}; choose from estimate, last, exact, virtual:x")
