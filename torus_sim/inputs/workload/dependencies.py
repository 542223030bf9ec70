"""Which jobs of a log were submitted in answer to an earlier job's end: the dependencies a feedback replay keeps.

A log records each job's submission at the instant its user submitted it on the machine that ran, and a user often
submits the next job only after seeing the previous one end. A replay that keeps the logged submit times keeps those
instants even where the replayed schedule ends the previous job hours earlier or later. Zakay and Feitelson
(MASCOTS 2014, "Preserving user behavior characteristics in trace-based simulation of parallel job scheduling") keep
the dependency instead: such a job is submitted its think time after the simulated end of the job it waited for.

Here a job depends on the job of the same user that ended last (in the log) no later than the job's submission,
when the think time from that end to the submission is at most
``within`` seconds. Every other job keeps its submit time. The conventional bound between a user's sessions is 20
minutes (Zilber, Amit and Talby, ICS 2005). Zakay and Feitelson also extract each user's sessions (batches of jobs
and the breaks between them); none is modelled here: a job past the bound keeps its logged time.

The logged end is the log's start plus its run time (SWF fields 2, 3 and 4): the dependencies read the log's schedule,
as its user saw it. A job the log does not place (no wait or run time) is never a predecessor.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from torus_sim.core.errors import ConfigurationError

__all__ = ["BATCH_REFUSED", "JobDependencies", "user_dependencies", "workload_dependencies"]

BATCH_REFUSED = "dependencies submit a job when the job it waited for ends: a batch workload is released at once (use an SWF log)"
"""The one sentence refusing dependencies with a batch workload."""


@dataclass(frozen=True)
class JobDependencies:
    """The run's dependent jobs, by rank, and the jobs whose end submits them.

    Attributes:
        within: the longest think time kept as a dependency, seconds.
        held: bool ``(n,)`` in the workload's rank order: the job is submitted when its predecessor ends, not at its
            submit time.
        predecessor: int ``(m,)``, ascending: the job id whose end submits each dependent job.
        rank: int ``(m,)``: each dependent job's rank (ascending within one predecessor).
        think: float ``(m,)``: seconds from the predecessor's end to the dependent job's submission (>= 0).
    """

    within: float
    held: np.ndarray
    predecessor: np.ndarray
    rank: np.ndarray
    think: np.ndarray

    def __len__(self) -> int:
        """The number of dependent jobs."""
        return len(self.rank)


def workload_dependencies(within: float, log, workload) -> JobDependencies:
    """A replayed SWF log's dependencies (:func:`user_dependencies` on its jobs and the schedule it records).

    Args:
        within: the longest think time kept as a dependency, seconds (the scenario's ``dependencies``).
        log: the replayed log's trace with :data:`~torus_sim.inputs.workload.logged.SCHEDULE_FIELDS`
            (:func:`~torus_sim.inputs.workload.logged.workload_log`).
        workload: the run's :class:`~torus_sim.inputs.workload.jobs.Workload` (its jobs in rank order, cleaned,
            shaken where the run shakes them).

    Raises:
        ConfigurationError: a load scale other than 1 (the logged ends are the log's own load's), or a job the log
            does not have.
    """
    from torus_sim.inputs.workload.logged import logged_schedule

    if workload.load_scale != 1.0:
        raise ConfigurationError(
            "dependencies read the log's own job ends, at its own load: run it at c = 1 (the scenario has "
            f"c = {workload.load_scale:g})"
        )
    return user_dependencies(workload.jobs, logged_schedule(log), within)


def _column(jobs, name: str) -> np.ndarray:
    """One field of ``jobs`` in rank order: an SWF log's column, or read from a list's jobs."""
    if hasattr(jobs, "column"):
        return np.asarray(jobs.column(name))
    return np.array([getattr(job, name) for job in jobs], dtype=float if name == "submitted_at" else np.int64)


def user_dependencies(jobs, schedule, within: float) -> JobDependencies:
    """Each job's dependency on its user's job that ended last before it was submitted (Zakay and Feitelson, MASCOTS 2014).

    Args:
        jobs: the run's jobs in rank order: an SWF log's :class:`~torus_sim.inputs.workload.jobs.JobColumns` or a list
            of jobs (their ``job_id``, ``submitted_at`` in seconds and ``user_id`` are read).
        schedule: the log's :class:`~torus_sim.inputs.workload.logged.LoggedSchedule` (every job line, by job id).
        within: the longest think time kept as a dependency, seconds (> 0).

    Returns:
        The :class:`JobDependencies`. A job's predecessor is, of ``jobs`` (it must end in the run) placed by the log and
        of the same user, the one that ended last (ties: the larger rank) no later than the job's submit time (the
        run's: shaken where the run shakes it); the job has none when that one's rank is not smaller than its own (a
        job that ended at its own submission) or the think time exceeds ``within``. Users below 0 (the SWF's unknown)
        have none.

    Raises:
        ConfigurationError: ``within`` is not positive, or a job is not in the log's schedule.
    """
    if not within > 0:
        raise ConfigurationError(f"dependencies: the longest think time must be positive seconds, got {within}")
    ids = _column(jobs, "job_id").astype(np.int64, copy=False)
    submits = _column(jobs, "submitted_at").astype(float, copy=False)
    users = _column(jobs, "user_id").astype(np.int64, copy=False)
    n = len(ids)
    order = np.argsort(schedule.job_id, kind="stable")
    rows = order[np.minimum(np.searchsorted(schedule.job_id, ids, sorter=order), max(len(order) - 1, 0))] if n else ids
    if n and not np.array_equal(schedule.job_id[rows], ids):
        missing = int(ids[np.flatnonzero(schedule.job_id[rows] != ids)[0]])
        raise ConfigurationError(f"dependencies: job {missing} is not in the log's schedule ({schedule.path})")
    placed = schedule.not_placed()[rows] < 0 if n else np.zeros(0, dtype=bool)
    ends = np.where(placed, schedule.started_at[rows] + schedule.run_time[rows], np.inf)
    chosen = np.full(n, -1, dtype=np.int64)
    ranks = np.arange(n, dtype=np.int64)
    by_user = np.argsort(users, kind="stable")
    bounds = np.flatnonzero(np.r_[True, users[by_user][1:] != users[by_user][:-1], True]) if n else [0]
    for first, stop in zip(bounds[:-1], bounds[1:], strict=True):
        mine = by_user[first:stop]  # one user's jobs, in rank order
        if users[mine[0]] < 0:
            continue
        ended = mine[np.isfinite(ends[mine])]
        if not len(ended):
            continue
        ended = ended[np.lexsort((ended, ends[ended]))]  # by logged end, then rank
        last = np.searchsorted(ends[ended], submits[mine], side="right") - 1
        found = last >= 0
        candidate = np.where(found, ended[np.maximum(last, 0)], -1)
        chosen[mine] = np.where(found & (candidate < ranks[mine]), candidate, -1)
    dependent = np.flatnonzero(chosen >= 0)
    think = submits[dependent] - ends[chosen[dependent]]
    kept = think <= within
    dependent, think = dependent[kept], think[kept]
    predecessor = ids[chosen[dependent]]
    by_predecessor = np.lexsort((dependent, predecessor))
    held = np.zeros(n, dtype=bool)
    held[dependent] = True
    return JobDependencies(float(within), held, predecessor[by_predecessor], dependent[by_predecessor], think[by_predecessor])
