"""The running jobs in order of predicted end, kept between passes (EASY's shadow time without a sort per pass).

EASY finds the head's shadow time by releasing the running jobs in order of predicted end. Sorting
every running job at every pass was the largest share of an online pass on a large cluster (~30 to
thousands of running jobs, two passes per job). Where a running job's predicted end is fixed for its
attempt (no periodic checkpoints, no preemption model with its own arithmetic, no failure repairs in
the profile) the order can be kept: an entry is added when an attempt starts and dropped when it ends,
is killed, preempted or migrated.

The predicted end is :meth:`torus_sim.engine.progress.CheckpointProgress.predicted_end`'s: the job's
prediction while it lies ahead, then its walltime (the kill time), never before now. An entry keyed by
a prediction that now has passed is re-keyed to the walltime (time only moves forward, so once is
enough); entries at or before now all end "now" and are released in rank order, as the sort did.

References:
    Lifka (EASY); Mu'alem and Feitelson, IEEE TPDS 12(6), 2001 (the shadow time); PV-EASY §4.3.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np
from sortedcontainers import SortedList

from torus_sim.core.job import Job

__all__ = ["ReleaseColumns", "RunningEnds"]


class ReleaseColumns:
    """Predicted ends and node counts of the running jobs as ascending numpy columns (a multiset of releases).

    Kept beside :class:`RunningEnds` once a policy asks for them (conservative backfilling's profile on
    a count cluster, :mod:`torus_sim.policies.count_reservations`): a start inserts a row, a stop removes
    one, both by binary search and one shift of the rows after it; jobs with equal ends are in no
    particular order (the profile adds their nodes together).

    Args:
        rows: ``(end, nodes)`` pairs to start from, any order.

    Attributes:
        changes: rows added and removed so far (a pass that finds it as it left it, plus its own
            starts, knows that nothing else started or stopped).
    """

    __slots__ = ("_count", "_ends", "_sizes", "changes")

    def __init__(self, rows=()) -> None:
        rows = sorted(rows)
        room = max(64, 2 * len(rows))
        self._ends = np.empty(room, dtype=np.float64)
        self._sizes = np.empty(room, dtype=np.int64)
        self._count = len(rows)
        self.changes = 0
        if rows:
            self._ends[: len(rows)] = [end for end, _ in rows]
            self._sizes[: len(rows)] = [size for _, size in rows]

    def __len__(self) -> int:
        return self._count

    @property
    def ends(self) -> np.ndarray:
        """Predicted ends, seconds, ascending, shape (n,), float64; a view: read before the next start or stop."""
        return self._ends[: self._count]

    @property
    def sizes(self) -> np.ndarray:
        """Nodes each of those releases, shape (n,), int64; a view."""
        return self._sizes[: self._count]

    def add(self, end: float, size: int) -> None:
        """A release of ``size`` nodes at ``end`` seconds."""
        count = self._count
        if count == len(self._ends):
            self._ends = np.concatenate([self._ends, np.empty(count, dtype=np.float64)])
            self._sizes = np.concatenate([self._sizes, np.empty(count, dtype=np.int64)])
        ends, sizes = self._ends, self._sizes
        row = int(ends[:count].searchsorted(end, "right"))
        if row < count:  # numpy copies overlapping slices as if through a buffer
            ends[row + 1 : count + 1] = ends[row:count]
            sizes[row + 1 : count + 1] = sizes[row:count]
        ends[row] = end
        sizes[row] = size
        self._count = count + 1
        self.changes += 1

    def remove(self, end: float, size: int) -> None:
        """Take away one release of ``size`` nodes at ``end`` seconds.

        Raises:
            KeyError: no such release.
        """
        count = self._count
        ends, sizes = self._ends, self._sizes
        row = int(ends[:count].searchsorted(end, "left"))
        while row < count and ends[row] == end and sizes[row] != size:
            row += 1
        if row == count or ends[row] != end:
            raise KeyError(f"no release of {size} nodes at {end}")
        ends[row : count - 1] = ends[row + 1 : count]
        sizes[row : count - 1] = sizes[row + 1 : count]
        self._count = count - 1
        self.changes += 1


class RunningEnds:
    """Running jobs ordered by (predicted end, rank), for :meth:`~torus_sim.engine.view.SchedulingView.shadow`.

    Entries are ``(key, rank, job, walltime_end)``: ``key`` is the predicted end before clipping to
    now; ``walltime_end`` is the end at the walltime for an entry keyed by a prediction, else None.
    """

    __slots__ = ("_columns", "_entries", "_order", "_shadow_key", "_shadow")

    def __init__(self) -> None:
        self._order = SortedList()
        self._entries: dict[int, tuple] = {}
        self._columns: ReleaseColumns | None = None
        self._shadow_key: tuple | None = None  # count_shadow's last question and answer, while the order stands
        self._shadow: tuple[float, int] = (math.inf, 0)

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
        self._shadow_key = None
        if self._columns is not None:
            self._columns.add(entry[0], job.allocated_size)

    def discard(self, job: Job) -> None:
        """The job stopped running (end, kill, preemption) or is about to move; no-op when absent."""
        entry = self._entries.pop(job.job_id, None)
        if entry is not None:
            self._order.remove(entry)
            self._shadow_key = None
            if self._columns is not None:
                self._columns.remove(entry[0], job.allocated_size)

    def _renew_due(self, now: float) -> int:
        """Re-key the entries whose prediction has run out by ``now`` to their walltime end; the count keyed at or before now."""
        order = self._order
        due = order.bisect_right((now, math.inf))  # entries keyed at or before now
        passed = [entry for entry in order.islice(0, due) if entry[3] is not None]
        self._shadow_key = None
        columns = self._columns
        for entry in passed:  # a prediction that has run out: expected at the walltime from now on
            order.remove(entry)
            renewed = (entry[3], entry[1], entry[2], None)
            self._entries[entry[2].job_id] = renewed
            order.add(renewed)
            if columns is not None:
                size = entry[2].allocated_size
                columns.remove(entry[0], size)
                columns.add(entry[3], size)
        return order.bisect_right((now, math.inf)) if passed else due

    def columns(self, now: float) -> ReleaseColumns:
        """The running jobs' predicted ends and sizes as numpy columns, kept from this call on.

        Args:
            now: the pass's time, seconds (as for :meth:`releases`: entries whose prediction has run
                out are re-keyed to their walltime end first).

        Returns:
            The :class:`ReleaseColumns`: the predicted end of every running job (those at or before
            ``now`` stand for now: the profile counts them free just after it) with its node count.
        """
        if self._columns is None:
            self._columns = ReleaseColumns((entry[0], entry[2].allocated_size) for entry in self._order)
        order = self._order
        if order and order[0][0] <= now:
            self._renew_due(now)
        return self._columns

    def count_shadow(self, now: float, free: int, need: int, together: bool = True) -> tuple[float, int]:
        """EASY's shadow time on node counts: releasing the running jobs in (predicted end, rank) order from ``free``.

        The answer :meth:`~torus_sim.engine.view.SchedulingView.shadow` gives on a cluster that keeps counts,
        by the same arithmetic on the same order (:meth:`releases`). While no entry is due (every predicted
        end lies after ``now``) the answer does not depend on ``now``, and the last one is kept until a job
        starts or stops: a pass that finds the same running jobs, free count and head (an arrival while the
        machine is full, a third of CTC-SP2's passes in CQSim's order) reads it.

        Args:
            now: the pass's time, seconds (as for :meth:`releases`).
            free: nodes free now; the caller has found that ``need`` does not fit in them.
            need: the blocked job's nodes.
            together: release every job ending at the shadow instant (the textbook rule); False stops at
                the job that makes room (PV-EASY's count).

        Returns:
            ``(shadow time in seconds or inf, nodes free then)``.

        References:
            Lifka (EASY); Mu'alem and Feitelson, IEEE TPDS 12(6), 2001.
        """
        order = self._order
        if order and order[0][0] <= now:  # due entries end "now": the answer depends on now
            return self._count_shadow([(end_at, 0, job) for end_at, job in self.releases(now)], free, need, together)
        key = (free, need, together)
        if key != self._shadow_key:
            self._shadow = self._count_shadow(order, free, need, together)  # the kept entries as they are
            self._shadow_key = key
        return self._shadow

    @staticmethod
    def _count_shadow(entries, free: int, need: int, together: bool) -> tuple[float, int]:
        """The walk of :meth:`count_shadow` over entries ``(end, _, job, ...)`` in release order."""
        shadow_at = None
        for entry in entries:
            end_at = entry[0]
            if shadow_at is not None and end_at != shadow_at:
                break  # together: every job of the shadow instant is released
            free += entry[2].allocated_size
            if shadow_at is None and need <= free:
                shadow_at = end_at
                if not together:
                    break
        return (math.inf if shadow_at is None else shadow_at), free

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
        due = self._renew_due(now)
        for _, _, job, _ in sorted(order.islice(0, due), key=lambda entry: entry[1]):
            yield now, job
        for key, _, job, _ in order.islice(due):
            yield key, job
