"""Runtime predictors for online backfilling: what the scheduler believes a job's runtime is.

A predictor is asked once per job at submission (:meth:`RuntimePredictor.predict`) and told every
job end (:meth:`RuntimePredictor.observe_end`). Predictions never exceed the requested time (the
kill time). New predictors subclass :class:`RuntimePredictor` and register in
:data:`RUNTIME_PREDICTORS` or under the ``torus_sim.runtime_predictors`` entry points
(``make_runtime_predictor`` parses ``name[:argument]`` and import paths).
"""

from __future__ import annotations

import numpy as np

from torus_sim.core.errors import ConfigurationError
from torus_sim.inputs.registry import Registry

__all__ = [
    "RUNTIME_PREDICTORS",
    "RUNTIME_PREDICTOR_ENTRY_POINTS",
    "EstimatePredictor",
    "ExactPredictor",
    "LastModelPredictor",
    "RuntimePredictor",
    "VirtualPredictor",
    "make_runtime_predictor",
]


class RuntimePredictor:
    """Base class of runtime predictors: what the scheduler believes a job's runtime is.

    Override:
        predict(job) -> seconds: asked once per job, when it is submitted (the engine caps the
            answer at the job's walltime, the kill time).
        observe_end(job): told every completed job (its ``runtime``, ``walltime``, ``user_id``), to learn.

    A plug-in's constructor may name ``rng`` to get the run's generator (one per run).

    References:
        PV-EASY §3.2 (runtime predictions for backfilling).
    """

    name = "base"

    def predict(self, job) -> float:
        """The predicted runtime of ``job`` (a :class:`~torus_sim.core.job.Job`), seconds >= 0."""
        raise NotImplementedError

    def observe_end(self, job) -> None:
        """A job completed (nothing to learn by default)."""
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


RUNTIME_PREDICTOR_ENTRY_POINTS = "torus_sim.runtime_predictors"
"""The entry-point group installed packages add their runtime predictors to."""

RUNTIME_PREDICTORS: Registry[RuntimePredictor] = Registry("runtime predictor", RUNTIME_PREDICTOR_ENTRY_POINTS, RuntimePredictor)
"""Runtime predictors by name (``estimate``, ``last``, ``exact``, ``virtual`` taking ``percent``), installed
plug-ins under the ``torus_sim.runtime_predictors`` entry points, and import paths ``package.module:Class``."""


def _virtual(rng: np.random.Generator, percent: float = 10.0) -> VirtualPredictor:
    return VirtualPredictor(percent, rng)


RUNTIME_PREDICTORS.register("estimate", EstimatePredictor)
RUNTIME_PREDICTORS.register("last", LastModelPredictor)
RUNTIME_PREDICTORS.register("exact", ExactPredictor)
RUNTIME_PREDICTORS.register("virtual", _virtual)


def split_runtime_spec(spec: str) -> tuple[str, str]:
    """``(name, argument)`` of ``name[:argument]`` (``virtual:10``); an import path stays whole.

    Raises:
        ConfigurationError: a built-in name that takes no argument was given one.
    """
    name, _, argument = spec.partition(":")
    if name in RUNTIME_PREDICTORS.builtin_names():
        if argument and name != "virtual":
            raise ConfigurationError(f"runtime predictor {name!r} takes no argument, got {spec!r}")
        return name, argument
    return spec, ""


def make_runtime_predictor(spec, rng: np.random.Generator | None, params: dict | None = None) -> RuntimePredictor:
    """Build a runtime predictor: a built-in name, an installed plug-in's, an import path, or a class.

    Built-in names are ``estimate``, ``last``, ``exact`` and ``virtual:x``; a plug-in is an installed
    package's ``torus_sim.runtime_predictors`` entry point or an import path ``package.module:Class``;
    from Python, a class or a factory.

    Args:
        spec: the predictor.
        rng: the run's generator, offered to a constructor that names ``rng``.
        params: constructor parameters (checked against the signature).

    Returns:
        A fresh predictor.

    Raises:
        ConfigurationError: unknown name, a bad argument or parameter.

    References:
        PV-EASY §3.2, §5.2.2.
    """
    params = dict(params or {})
    if isinstance(spec, str):
        spec, argument = split_runtime_spec(spec)
        if argument:
            try:
                params["percent"] = float(argument)
            except ValueError:
                raise ConfigurationError(f"virtual predictor takes a percentage, got {argument!r}") from None
        if spec not in RUNTIME_PREDICTORS:
            try:
                RUNTIME_PREDICTORS.resolve(spec)
            except ConfigurationError as error:
                if ":" not in spec:
                    raise ConfigurationError(
                        f"unknown runtime predictor {spec!r}; choose from estimate, last, exact, virtual:x, "
                        "an installed plug-in or an import path package.module:Class"
                    ) from None
                raise error from None
    return RUNTIME_PREDICTORS.build(spec, params, {"rng": rng})
