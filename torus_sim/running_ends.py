"""The running jobs in order of predicted end, kept between passes (EASY's shadow time without a sort per pass).

EASY finds the head's shadow time by releasing the running jobs in order of predicted end. Sorting
every running job at every pass was the largest share of an online pass on a large cluster (~30 to
thousands of running jobs, two passes per job). Where a running job's predicted end is fixed for its
attempt (no periodic checkpoints, no preemption model with its own arithmetic, no failure repairs in
the profile) the order can be kept: an entry is added when an attempt starts and dropped when it ends,
is killed, preempted or migrated.

The predicted end is :meth:`torus_sim.progress.CheckpointProgress.predicted_end`'s: the job's
prediction while it lies ahead, then its walltime (the kill time), never before now. An entry keyed by
a prediction that now has passed is re-keyed to the walltime (time only moves forward, so once is
enough); entries at or before now all end "now" and are released in rank order, as the sort did.

References:
    Lifka (EASY); Mu'alem and Feitelson, IEEE TPDS 12(6), 2001 (the shadow time); PV-EASY §4.3.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from sortedcontainers import SortedList

from torus_sim.job import Job

__all__ = ["RunningEnds"]


class RunningEnds:
    """Running jobs ordered by (predicted end, rank), for :meth:`~torus_sim.view.SchedulingView.shadow`.

    Entries are ``(key, rank, job, walltime_end)``: ``key`` is the predicted end before clipping to
    now; ``walltime_end`` is the end at the walltime for an entry keyed by a prediction, else None.
    """

    __slots__ = ("_entries", "_order")

    def __init__(self) -> None:
        self._order = SortedList()
        self._entries: dict[int, tuple] = {}

    def __len__(self) -> int:
        return len(self._order)

    def add(self, job: Job) -> None:
        """A RUNNING job's attempt began (or moved: its resume time changed).

        Args:
            job: the running job; its ``resumed_at``, ``attempt_overhead``, ``progress_at_resume``,
                ``walltime`` and ``prediction`` (seconds) fix its entry until :meth:`discard`.
        """
        started = job.resumed_at + job.attempt_overhead
        by_walltime = started + (job.walltime - job.progress_at_resume)
        prediction = job.prediction
        if prediction is not None and prediction < job.walltime:
            entry = (started + (prediction - job.progress_at_resume), job.rank, job, by_walltime)
        else:
            entry = (by_walltime, job.rank, job, None)
        self._entries[job.job_id] = entry
        self._order.add(entry)

    def discard(self, job: Job) -> None:
        """The job stopped running (end, kill, preemption) or is about to move; no-op when absent."""
        entry = self._entries.pop(job.job_id, None)
        if entry is not None:
            self._order.remove(entry)

    def releases(self, now: float) -> Iterator[tuple[float, Job]]:
        """``(predicted end, job)`` of every running job, in (predicted end, rank) order, ends clipped to ``now``.

        The same sequence as sorting ``(progress.predicted_end(job, now), rank)`` over the running jobs.

        Args:
            now: the pass's time, seconds; never earlier than a previous call's (entries whose
                prediction has run out are re-keyed to their walltime end, once).

        Yields:
            ``(end, job)``: the predicted end in seconds (``now`` for ends at or before it) and the job.
        """
        order = self._order
        if not order or order[0][0] > now:  # the usual pass: nothing due yet, the kept order as it is
            for key, _, job, _ in order:
                yield key, job
            return
        due = order.bisect_right((now, math.inf))  # entries keyed at or before now
        passed = [entry for entry in order.islice(0, due) if entry[3] is not None]
        for entry in passed:  # a prediction that has run out: expected at the walltime from now on
            order.remove(entry)
            renewed = (entry[3], entry[1], entry[2], None)
            self._entries[entry[2].job_id] = renewed
            order.add(renewed)
        if passed:
            due = order.bisect_right((now, math.inf))
        for _, _, job, _ in sorted(order.islice(0, due), key=lambda entry: entry[1]):
            yield now, job
        for key, _, job, _ in order.islice(due):
            yield key, job
