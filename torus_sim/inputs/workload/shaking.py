"""Input shaking: every job's submit time moved by a small random amount, to see what of a result is chance.

A replay of a log is sensitive to its exact input: a job submitted a few seconds later can find the machine in
another state, and the schedule after it can part from the first one (Tsafrir and Feitelson's instability). Tsafrir,
Ouaknine and Feitelson's *shaking* replays the log several times under small random perturbations of its input and
reads the spread: an effect that survives the shaking is the scheduler's, one that does not is the input's chance.
``shake = SECONDS`` in a scenario's ``[workload]`` moves each job's submission by an independent uniform draw in
``[-SECONDS, +SECONDS]`` (never before 0), drawn from the run's ``seed``; the jobs are then in their new submission
order. Nothing else of a job moves (its run time, its request, its size), and its logged schedule, read by job id,
stays as logged: a replay held against its log compares the waits from the shaken submissions.

References:
    Tsafrir, Ouaknine, Feitelson, "Reducing performance evaluation sensitivity and variability by input shaking",
    MASCOTS 2007; Tsafrir, Feitelson, "Instability in parallel job scheduling simulation: the role of workload
    flurries", IPDPS 2006.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from torus_sim.core.errors import ConfigurationError
from torus_sim.inputs.workload.jobs import JobColumns, Workload

__all__ = ["SHAKE_STREAM", "shaken"]

SHAKE_STREAM = 0x5348414B
"""The second word of the shaking's random stream (``numpy.random.default_rng([seed, SHAKE_STREAM])``): the run's seed
draws it, apart from every other draw of that seed."""

_COLUMNS = ("job_id", "submitted_at", "runtime", "walltime", "size", "partition_size", "user_id")


def shaken(workload: Workload, seconds: float, seed: int) -> Workload:
    """The workload with each job's submit time moved by a uniform draw in ``[-seconds, +seconds]``, clipped at 0.

    Args:
        workload: an online workload (its jobs in submission order).
        seconds: the largest move, seconds (> 0, finite).
        seed: the run's seed: the draws are ``numpy.random.default_rng([seed, SHAKE_STREAM]).uniform`` in job order, so
            one seed always shakes a log alike.

    Returns:
        A new :class:`~torus_sim.inputs.workload.jobs.Workload` (the other fields as they were) whose jobs are
        :class:`~torus_sim.inputs.workload.jobs.JobColumns` in memory, in the new submission order (submit time, then
        job id), each job's rank its new row.

    Raises:
        ConfigurationError: a batch workload (released at once: nothing to shake), ``seconds`` not a positive finite
            number.

    References:
        Tsafrir, Ouaknine, Feitelson, MASCOTS 2007 (input shaking).
    """
    if workload.kind != "online":
        raise ConfigurationError("shake moves submit times: a batch workload is released at once (use an online workload)")
    if not (isinstance(seconds, (int, float)) and math.isfinite(seconds) and seconds > 0):
        raise ConfigurationError(f"shake must be positive seconds, got {seconds!r}")
    jobs = workload.jobs
    if isinstance(jobs, JobColumns):
        columns = {name: jobs.column(name) for name in _COLUMNS}
    else:
        columns = {name: np.array([getattr(job, name) for job in jobs]) for name in _COLUMNS}
    count = len(columns["job_id"])
    moves = np.random.default_rng([int(seed), SHAKE_STREAM]).uniform(-seconds, seconds, count)
    submitted = np.maximum(np.asarray(columns["submitted_at"], dtype=float) + moves, 0.0)
    order = np.lexsort((np.asarray(columns["job_id"]), submitted))
    columns["submitted_at"] = submitted
    moved = JobColumns(*(np.asarray(columns[name])[order] for name in _COLUMNS))
    return replace(workload, jobs=moved)
