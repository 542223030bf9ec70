"""What a learning agent sees: the observation vector and which queue slots can start, from the engine's state.

Shared by the environment (:class:`~torus_sim.rl.env.SchedulingEnv`) and by a trained agent run as a
policy (:class:`~torus_sim.policies.learned.LearnedPolicy`), so that an agent sees the same numbers in both.
No gymnasium here: a saved agent runs as a policy without it.

Observation (float32 in [0, 1], length ``K * 6 + 5 + S``): per queue slot, :data:`JOB_FEATURES`
[present, size / capacity, log-scaled walltime, time waited (1 - exp(-waited / 4 h)), fits now,
predicted failure risk of its default placement over its walltime (P_f = 1 - prod(1 - p_n),
BGL-FAULT §5.2.1)]; then [free nodes, down nodes, waiting beyond K / (K + waiting), time into the
workload's submission span, largest free partition] as fractions; then S values: on the torus the
fraction of the partitions of each feasible size that are free, on a cluster none.

References:
    Zhang et al., RLScheduler, SC'20 (job-slot observations); BGL-FAULT §5.2.1 (P_f).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = [
    "GLOBAL_FEATURES",
    "JOB_FEATURES",
    "JOB_FEATURE_HOOKS",
    "RISK_PREDICTOR",
    "ObservationShape",
    "feasible_size_counts",
    "fitting_slots",
    "job_feature",
    "observe",
    "register_job_feature",
]

JOB_FEATURES = ("present", "size", "walltime", "waited", "fits", "failure_risk")
"""The features of each queue slot in the observation, in order."""

RISK_PREDICTOR = "history"
"""The failure predictor of the ``failure_risk`` feature when the scenario names none: it learns from past
failures only, so nothing leaks the future (BGL-FAULT §4.1's history-based predictor)."""

GLOBAL_FEATURES = 5
"""Platform features after the slots: free, down, waiting beyond K, time into the span, largest free partition."""

WAIT_SCALE = 4 * 3600.0
"""Seconds: the time-waited feature is 1 - exp(-waited / WAIT_SCALE)."""


@dataclass(frozen=True)
class ObservationShape:
    """The constants an observation is computed with (a trained agent keeps them with its weights).

    Attributes:
        queue_slots: K, the waiting jobs seen.
        capacity: nodes (supernodes on the torus) of the platform.
        max_walltime: seconds, the walltime that maps to 1 (the largest of the training log).
        sizes: on the torus, ``((size, partitions of that size), ...)`` for every feasible size; () on a cluster.
        extra_features: names of :data:`JOB_FEATURE_HOOKS` appended to each slot's features, in order.
        max_user: the user id that maps to 1 (the training log's largest) for the ``user`` feature.
    """

    queue_slots: int
    capacity: int
    max_walltime: float
    sizes: tuple = ()
    extra_features: tuple = ()
    max_user: int = 1

    @property
    def per_slot(self) -> int:
        """Values per queue slot."""
        return len(JOB_FEATURES) + len(self.extra_features)

    @property
    def length(self) -> int:
        """Values in an observation."""
        return self.queue_slots * self.per_slot + GLOBAL_FEATURES + len(self.sizes)


def _user(job, now: float, shape: ObservationShape) -> float:
    return job.user_id / shape.max_user if job.user_id > 0 else 0.0


def _predicted_runtime(job, now: float, shape: ObservationShape) -> float:
    predicted = job.walltime if job.prediction is None else job.prediction
    return math.log1p(max(predicted, 0.0)) / math.log1p(shape.max_walltime)


JOB_FEATURE_HOOKS: dict[str, Callable] = {"user": _user, "predicted_runtime": _predicted_runtime}
"""Extra per-job observation features by name: ``function(job, now, shape) -> float`` (clipped to [0, 1]).
Built in: ``user`` (the user id over the training log's largest) and ``predicted_runtime`` (the run's
runtime predictor's prediction, log-scaled as the walltime; the walltime without a predictor). The
engine's jobs keep no group or queue (SWF fields 13 and 15 are read, not kept): not offered."""


def register_job_feature(name: str, function: Callable) -> None:
    """Offer another per-job feature by name, for ``SchedulingEnv(job_features=(name, ...))`` and saved agents.

    Args:
        name: the feature's name (not a built-in one).
        function: ``function(job, now, shape) -> float``, in [0, 1] (clipped); it must only read the job.

    Raises:
        ConfigurationError: a name already taken or not text, or a function that is not callable.
    """
    from torus_sim.core.errors import ConfigurationError

    if not isinstance(name, str) or not name or name in JOB_FEATURES or name in JOB_FEATURE_HOOKS:
        raise ConfigurationError(
            f"job feature name {name!r} is taken or empty; taken: {', '.join([*JOB_FEATURES, *JOB_FEATURE_HOOKS])}"
        )
    if not callable(function):
        raise ConfigurationError(f"job feature {name!r}: the function must be callable, got {type(function).__name__}")
    JOB_FEATURE_HOOKS[name] = function


def job_feature(name: str) -> Callable:
    """The registered feature ``name``.

    Raises:
        ConfigurationError: an unknown name (the names offered listed).
    """
    if not isinstance(name, str) or name not in JOB_FEATURE_HOOKS:
        from torus_sim.core.errors import ConfigurationError

        raise ConfigurationError(
            f"unknown job feature {name!r}; offered: {', '.join(JOB_FEATURE_HOOKS)} (torus_sim.policies.agent_observation.register_job_feature adds one)"
        )
    return JOB_FEATURE_HOOKS[name]


def feasible_size_counts(platform) -> tuple:
    """``((size, partitions of that size), ...)`` on the torus (every feasible size, empty machine); () otherwise."""
    if isinstance(platform, int) or platform.table is None:
        return ()
    from torus_sim.machine.partitions import feasible_sizes

    table = platform.table
    empty = table.pack(np.zeros(platform.capacity, dtype=bool))
    return tuple((size, len(table.free_ids_of_size(empty, size))) for size in feasible_sizes(platform.torus.dims))


def fitting_slots(queue, slots: int, free: int, open_sizes) -> list[bool]:
    """Whether each of the first ``slots`` waiting jobs can start now: enough free nodes and, on the torus, a free partition of its size.

    Args:
        queue: the wait queue (FCFS order).
        slots: K.
        free: free nodes.
        open_sizes: the sizes with a free partition now (torus), or None (cluster).

    Returns:
        One boolean per visible slot (``min(len(queue), slots)`` of them), in queue order.
    """
    return [
        not (job.partition_size > free or (open_sizes is not None and job.partition_size not in open_sizes))
        for job in queue[:slots]
    ]


def observe(shape: ObservationShape, now: float, queue, platform, down: int, fits, place, predictor, span) -> np.ndarray:
    """The observation (module docstring).

    Args:
        shape: the constants.
        now: the time, seconds.
        queue: the wait queue (FCFS order).
        platform: the engine's platform.
        down: nodes down now.
        fits: per visible slot, whether its job can start now (:func:`fitting_slots`).
        place: the engine's placement function (job -> allocation), asked for jobs that fit.
        predictor: the failure predictor of the risk feature, or None (risk 0).
        span: ``(first, last)`` submission times of the workload, seconds.

    Returns:
        float32 ``(shape.length,)``.
    """
    capacity = shape.capacity
    slots = shape.queue_slots
    jobs = queue[:slots]
    log_max = math.log1p(shape.max_walltime)
    exp, log1p = math.exp, math.log1p
    extras = [JOB_FEATURE_HOOKS[name] for name in shape.extra_features]
    values: list[float] = []
    for slot, job in enumerate(jobs):  # plain floats: 16 slots cost less than numpy's per-call overhead
        fit = fits[slot]
        risk = 0.0
        if fit and predictor is not None:
            nodes = platform.members(place(job))
            risk = predictor.partition_failure_probability(nodes, now, job.walltime)
        waited = now - job.submitted_at
        values += (
            1.0,
            min(job.partition_size / capacity, 1.0),
            min(log1p(job.walltime) / log_max, 1.0),
            1.0 - exp(-waited / WAIT_SCALE) if waited > 0 else 0.0,
            1.0 if fit else 0.0,
            risk,
        )
        for function in extras:
            value = float(function(job, now, shape))
            values.append(min(max(value, 0.0), 1.0) if value == value else 0.0)  # NaN: 0
    values += [0.0] * ((slots - len(jobs)) * shape.per_slot)
    beyond = max(len(queue) - slots, 0)
    width = max(span[1] - span[0], 1.0)
    free = platform.free_count()
    largest = platform.mfp()
    values += [
        free / capacity,
        down / capacity,
        beyond / (beyond + slots),
        min(max((now - span[0]) / width, 0.0), 1.0),
        largest / capacity,
    ]
    table = platform.table
    if table is not None:
        words = platform.words()
        values += [len(table.free_ids_of_size(words, size)) / total for size, total in shape.sizes]
    return np.array(values, dtype=np.float32)
