"""The wait queue: jobs in the policy's priority order, also indexed by partition size.

The order is the policy's :meth:`~torus_sim.policies.base.Policy.queue_key` (FCFS by default),
computed once when a job enters the queue. Backfilling on the torus asks "which is the earliest job
of size s that could start?" for each size; the per-size lists answer it without walking the whole
queue, which matters when failures make the queue thousands of jobs long.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right, insort
from itertools import islice
from operator import attrgetter, lt

from sortedcontainers import SortedKeyList

from torus_sim.core.errors import SimulationError
from torus_sim.core.job import Job, fcfs_key
from torus_sim.engine.queue_columns import JobColumns, position
from torus_sim.engine.size_index import SizeIndex

__all__ = ["WaitQueue", "fcfs_key"]


_queue_key = attrgetter("queue_key")


def _rekey_in_order(jobs: SortedKeyList, keys: list) -> None:
    """Give the jobs of a sorted list new keys that keep their order, without sorting them again.

    The list keeps each of its sublists' keys and their maxima beside the jobs (sortedcontainers 2.4's ``_keys``
    and ``_maxes``, unchanged since 2.0); those are rewritten in place, the jobs and the positional index stand.

    Args:
        jobs: the queue's sorted list.
        keys: one new key per job, in the list's order, ascending.
    """
    start = 0
    for index, sublist in enumerate(jobs._lists):
        stop = start + len(sublist)
        jobs._keys[index] = part = keys[start:stop]
        jobs._maxes[index] = part[-1]
        start = stop


COLUMNS_KEPT_FROM = 48
"""Waiting jobs from which the queue keeps its numpy columns (when asked: :meth:`WaitQueue.keep_columns`)."""
COLUMNS_DROPPED_BELOW = 16
"""Waiting jobs below which the columns are dropped again (made anew when the queue is long again)."""


def _shortest_key(job: Job, remaining: float) -> tuple[float, int]:
    """EASY-SJBF's candidate order: predicted remaining time, then rank (PV-EASY §5.2.2)."""
    return (remaining, job.rank)


class WaitQueue:
    """Waiting jobs in priority order, with per-partition-size lists and the total demand.

    Args:
        key: the sort key of a job (smaller first); keys must differ between jobs (FCFS's
            ``(submitted_at, job_id)`` does), as ties between equal keys fall to insertion order.
        by_size: keep the per-partition-size lists (for backfilling on the torus); :meth:`of_size`
            and :meth:`sizes` need them.
        keys: ``list of jobs -> their keys`` (each ``key(job)``, all at once), for :meth:`reorder`; None: ``key`` job by
            job.

    Attributes:
        demand: nodes requested by all waiting jobs (sum of partition sizes), BGL-FAULT §6.1's q(t).
        columns: the waiting jobs' sizes and predicted remaining times in queue order
            (:class:`~torus_sim.engine.queue_columns.JobColumns`), after :meth:`keep_columns` while the queue is
            long (from :data:`COLUMNS_KEPT_FROM` jobs on, until it falls below :data:`COLUMNS_DROPPED_BELOW`;
            from the first job on and never dropped when asked ``always``); else None.
        shortest: the same in order of (predicted remaining time, rank), SJF's candidate order; else None.
        size_index: each size's waiting jobs searchable by remaining time
            (:class:`~torus_sim.engine.size_index.SizeIndex`), once :meth:`keep_size_index` was called; else None.
        guard: the run's :class:`~torus_sim.engine.guard.ExtensionCalls` when it has a plug-in (the queue then
            refuses changes while the plug-in's code runs, and :meth:`of_size` returns copies); else None.
    """

    def __init__(self, key=fcfs_key, by_size: bool = True, keys=None) -> None:
        self._key = key
        self._keys = keys
        self._indexed = by_size
        self._sorted = SortedKeyList(key=_queue_key)  # the jobs by key (O(log n) entries and exits: queues of 100,000s)
        self._head: Job | None = None  # its first job, kept (asked several times per pass)
        self._count = 0
        self._by_size: dict[int, tuple[list[tuple], list[Job]]] = {}
        self._walltimes: dict[int, list[float]] = {}  # per size, the waiting jobs' walltimes, ascending
        self.demand = 0
        self.columns: JobColumns | None = None
        self.shortest: JobColumns | None = None
        self._columns_wanted: tuple | None = None  # (remaining, shortest) once keep_columns was called
        self._columns_from, self._columns_below = COLUMNS_KEPT_FROM, COLUMNS_DROPPED_BELOW  # (0, 0): always
        self.size_index: SizeIndex | None = None
        self.guard = None

    @property
    def indexed(self) -> bool:
        """Whether the queue keeps per-size lists (:meth:`of_size`)."""
        return self._indexed

    def keep_size_index(self, jobs, remaining, holds: str) -> None:
        """Keep every size's waiting jobs searchable by remaining time from now on (:mod:`torus_sim.engine.size_index`).

        Args:
            jobs: the run's jobs by column (:class:`~torus_sim.engine.arrivals.RunJobs`; each gets a fixed slot
                among its size's, in FCFS order: the queue's when its key is FCFS's, the only case that keeps one).
            remaining: ``job -> seconds`` (walltime or the run's prediction), asked at each entry.
            holds: ``"walltime"`` or ``"predicted"``: what ``remaining`` gives.

        Raises:
            SimulationError: the queue is not empty.
        """
        if self._sorted:
            raise SimulationError("the size index is kept from an empty queue on")
        self.size_index = SizeIndex(jobs, remaining, holds)

    def keep_columns(self, remaining, shortest: bool = False, always: bool = False) -> None:
        """Keep the waiting jobs as numpy columns from now on, while the queue is long (:mod:`torus_sim.engine.queue_columns`).

        The columns are made when the queue reaches :data:`COLUMNS_KEPT_FROM` jobs and dropped when it
        falls below :data:`COLUMNS_DROPPED_BELOW` (a short queue is scanned job by job for less than
        the columns cost to keep up), or, ``always``, made now and kept (a pass that reads every waiting
        job's columns at every pass, as conservative backfilling's does, is quicker with them at any length).

        Args:
            remaining: ``job -> seconds``, the engine's predicted remaining time of a waiting job.
            shortest: also keep them in order of (predicted remaining time, rank) (EASY-SJBF's candidates).
            always: keep them at every length of the queue, empty included.
        """
        self._columns_from, self._columns_below = (0, 0) if always else (COLUMNS_KEPT_FROM, COLUMNS_DROPPED_BELOW)
        self._columns_wanted = (remaining, shortest)
        self._fit_columns()

    def _fit_columns(self) -> None:
        """Make or drop the columns as the queue's length asks (see :meth:`keep_columns`)."""
        if self.columns is None:
            if self._count < self._columns_from:
                return
            remaining, shortest = self._columns_wanted
            jobs = list(self._sorted)
            keys = [job.queue_key for job in jobs]
            self.columns = JobColumns(remaining)
            self.columns.fill(jobs, keys)
            if shortest:
                self.shortest = JobColumns(remaining, key=_shortest_key)
                self.shortest.fill(jobs, keys)
        elif self._count < self._columns_below:
            self.columns = self.shortest = None

    def __len__(self) -> int:
        return self._count

    def __iter__(self):
        return iter(self._sorted)

    def __getitem__(self, index):
        return self._sorted[index]

    def __contains__(self, job: Job) -> bool:
        return job.queue_key is not None

    @property
    def head(self) -> Job | None:
        """The first job in priority order, or None when empty."""
        return self._head

    def jobs(self) -> list[Job]:
        """The waiting jobs in order, as a new list."""
        return list(self._sorted)

    def add(self, job: Job) -> None:
        """Insert a job at its position (arrival, or back after a kill, a silent error or a preemption).

        The key is kept on the job (``job.queue_key``) while it waits.

        Raises:
            SimulationError: the job is queued already.
            PolicyError: a plug-in's code is running (see :attr:`guard`).
        """
        if self.guard is not None:
            self.guard.check_engine_write("the wait queue")
        if job.queue_key is not None:
            raise SimulationError(f"{job!r} is already in the wait queue")
        entry = job.queue_key = self._key(job)
        self._sorted.add(job)
        self._count += 1
        head = self._head
        if head is None or entry < head.queue_key:  # equal keys go after (insertion order)
            self._head = job
        if self.columns is not None:
            self.columns.insert(job, entry)
            if self.shortest is not None:
                self.shortest.insert(job)
        elif self._columns_wanted is not None and self._count >= self._columns_from:
            self._fit_columns()
        if self.size_index is not None:
            self.size_index.enter(job)
        elif self._indexed:
            order, jobs = self._by_size.setdefault(job.partition_size, ([], []))
            index = bisect_right(order, entry)
            order.insert(index, entry)
            jobs.insert(index, job)
            insort(self._walltimes.setdefault(job.partition_size, []), job.walltime)
        self.demand += job.partition_size

    def extend(self, jobs) -> None:
        """Insert several jobs (arrivals at one instant): one sort instead of one insertion each."""
        if self.guard is not None:
            self.guard.check_engine_write("the wait queue")
        jobs = list(jobs)
        if len(jobs) < 8 or self._sorted:
            for job in jobs:
                self.add(job)
            return
        for job in jobs:
            if job.queue_key is not None:
                raise SimulationError(f"{job!r} is already in the wait queue")
            job.queue_key = self._key(job)
            self.demand += job.partition_size
        self._sorted.update(jobs)
        ordered = list(self._sorted)
        self._count = len(ordered)
        self._head = self._sorted[0]
        if self._columns_wanted is not None:
            self.columns = self.shortest = None
            self._fit_columns()
        if self.size_index is not None:
            for job in ordered:
                self.size_index.enter(job)
        elif self._indexed:
            self._index_sizes(ordered)

    def _index_sizes(self, ordered: list) -> None:
        """Make the per-size lists (keys, jobs, sorted requested times) from the waiting jobs in queue order."""
        self._by_size.clear()
        self._walltimes.clear()
        for job in ordered:
            order, same = self._by_size.setdefault(job.partition_size, ([], []))
            order.append(job.queue_key)
            same.append(job)
            self._walltimes.setdefault(job.partition_size, []).append(job.walltime)
        for walltimes in self._walltimes.values():
            walltimes.sort()

    def reorder(self) -> None:
        """Compute every waiting job's key again and put the queue in the new order (a priority that changes with time).

        The keys come from ``keys`` (all the waiting jobs' at once: the multifactor priority's) or job by job. The
        per-size lists are made again; the columns' rows move with their jobs (kept where the queue is as long as it
        is when they are made; the shortest-first order does not change), else they are dropped; the queue keeps no
        size index then (its slots are FCFS).

        Raises:
            SimulationError: the queue keeps a size index (a fixed FCFS order).
            PolicyError: a plug-in's code is running (see :attr:`guard`).
        """
        if self.guard is not None:
            self.guard.check_engine_write("the wait queue")
        if self.size_index is not None:
            raise SimulationError("a queue with a size index keeps a fixed FCFS order: it cannot be reordered")
        jobs = list(self._sorted)
        if not jobs:
            return
        keys = self._keys(jobs) if self._keys is not None else [self._key(job) for job in jobs]
        for job, entry in zip(jobs, keys, strict=True):
            job.queue_key = entry
        if all(map(lt, keys, islice(keys, 1, None))):  # the same order (most recomputations): only the keys move
            _rekey_in_order(self._sorted, keys)
            order = None
        else:
            order = sorted(range(len(jobs)), key=keys.__getitem__)
            jobs = [jobs[index] for index in order]
            keys = [keys[index] for index in order]
            self._sorted.clear()
            self._sorted.update(jobs)
        self._head = jobs[0]
        if self.columns is not None and self._count >= self._columns_from:  # kept: rows move, the SJF order stays
            self.columns.reorder(jobs, keys, order)
        elif self._columns_wanted is not None:
            self.columns = self.shortest = None
            self._fit_columns()
        if self._indexed:
            self._index_sizes(jobs)

    def remove(self, job: Job) -> None:
        """Take a job off the queue.

        Raises:
            SimulationError: the job is not queued.
            PolicyError: a plug-in's code is running (see :attr:`guard`).
        """
        if self.guard is not None:
            self.guard.check_engine_write("the wait queue")
        entry = job.queue_key
        if entry is None:
            raise SimulationError(f"{job!r} is not in the wait queue")
        try:
            self._sorted.remove(job)
        except ValueError:
            raise SimulationError(f"{job!r} is not in the wait queue") from None
        job.queue_key = None
        self._count -= 1
        if job is self._head:
            self._head = self._sorted[0] if self._count else None
        if self.columns is not None:
            if self._count < self._columns_below:
                self.columns = self.shortest = None
            else:
                self.columns.remove(job, entry)
                if self.shortest is not None:
                    self.shortest.remove(job)
        if self.size_index is not None:
            self.size_index.leave(job)
        elif self._indexed:
            order, jobs = self._by_size[job.partition_size]
            index = position(order, jobs, entry, job)
            if index < 0:
                raise SimulationError(f"{job!r} is not in the wait queue's list of size {job.partition_size}")
            del order[index]
            del jobs[index]
            walltimes = self._walltimes[job.partition_size]
            del walltimes[bisect_left(walltimes, job.walltime)]
            if not jobs:
                del self._by_size[job.partition_size]
                del self._walltimes[job.partition_size]
        self.demand -= job.partition_size

    def sizes(self) -> list[int]:
        """Partition sizes of the waiting jobs, ascending.

        Raises:
            SimulationError: the queue keeps no per-size lists.
        """
        if not self._indexed:
            raise SimulationError("this wait queue keeps no per-size lists (by_size=False)")
        return self.size_index.sizes() if self.size_index is not None else sorted(self._by_size)

    def least_walltime(self, size: int) -> float:
        """The shortest walltime among the waiting jobs of one partition size (seconds; inf when none waits).

        Krevat's backfilling asks it before looking for a job of that size that ends before the head's
        reservation: when even the shortest does not, none does (kept sorted per size, one ``insort`` per
        entry and one deletion per exit).

        Args:
            size: partition size, supernodes (nodes).

        Returns:
            Seconds, the requested time of the shortest job of that size; ``math.inf`` when none waits.

        Raises:
            SimulationError: the queue keeps no per-size lists.

        References:
            BGL-FAULT §5.1 (backfilling: a job that ends before the reservation may start).
        """
        if not self._indexed:
            raise SimulationError("this wait queue keeps no per-size lists (by_size=False)")
        if self.size_index is not None:  # the size index replaces the lists (the tree's root, for walltimes)
            return (
                self.size_index.least(size)
                if self.size_index.holds == "walltime"
                else min((job.walltime for job in self.of_size(size)), default=math.inf)
            )
        walltimes = self._walltimes.get(size)
        return walltimes[0] if walltimes else math.inf

    def of_size(self, size: int) -> list[Job]:
        """Waiting jobs of one partition size, in order (the queue's own list: do not modify).

        With the size index (:meth:`keep_size_index`) the lists are not kept: a new list read from it.

        Raises:
            SimulationError: the queue keeps no per-size lists.
        """
        if not self._indexed:
            raise SimulationError("this wait queue keeps no per-size lists (by_size=False)")
        if self.size_index is not None:
            return self.size_index.waiting(size)
        lists = self._by_size.get(size)
        if self.guard is not None:  # a plug-in gets a copy
            return list(lists[1]) if lists else []
        return lists[1] if lists else []
