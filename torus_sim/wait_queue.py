"""The wait queue: jobs in the policy's priority order, also indexed by partition size.

The order is the policy's :meth:`~torus_sim.policies.base.Policy.queue_key` (FCFS by default),
computed once when a job enters the queue. Backfilling on the torus asks "which is the earliest job
of size s that could start?" for each size; the per-size lists answer it without walking the whole
queue, which matters when failures make the queue thousands of jobs long.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right, insort
from operator import attrgetter

from torus_sim.errors import SimulationError
from torus_sim.job import Job
from torus_sim.queue_columns import JobColumns

__all__ = ["WaitQueue", "fcfs_key"]


def fcfs_key(job: Job) -> tuple[float, int]:
    """FCFS order: arrival time, then job id (BGL-FAULT §5.1; PV-EASY: priority = submission order)."""
    return (job.submitted_at, job.job_id)


_queue_key = attrgetter("queue_key")


def _shortest_key(job: Job, remaining: float) -> tuple[float, int]:
    """SJF-EASY's candidate order: predicted remaining time, then rank (PV-EASY §5.2.2)."""
    return (remaining, job.rank)


def _position(order: list, jobs: list[Job], entry, job: Job) -> int:
    """Where a queued job sits: its key's first position, then along any equal keys."""
    index = bisect_left(order, entry)
    end = len(order)
    while index < end and jobs[index] is not job:
        if order[index] != entry:
            break
        index += 1
    if index == end or jobs[index] is not job:
        raise SimulationError(f"{job!r} is not in the wait queue")
    return index


class WaitQueue:
    """Waiting jobs in priority order, with per-partition-size lists and the total demand.

    Args:
        key: the sort key of a job (smaller first); keys must differ between jobs (FCFS's
            ``(submitted_at, job_id)`` does), as ties between equal keys fall to insertion order.
        by_size: keep the per-partition-size lists (for backfilling on the torus); :meth:`of_size`
            and :meth:`sizes` need them.

    Attributes:
        demand: nodes requested by all waiting jobs (sum of partition sizes), BGL-FAULT §6.1's q(t).
        columns: the waiting jobs' sizes and predicted remaining times in queue order
            (:class:`~torus_sim.queue_columns.JobColumns`), once :meth:`keep_columns` was called; else None.
        shortest: the same in order of (predicted remaining time, rank), SJF's candidate order; else None.
    """

    def __init__(self, key=fcfs_key, by_size: bool = True) -> None:
        self._key = key
        self._indexed = by_size
        self._order: list = []  # the jobs' keys, ascending
        self._jobs: list[Job] = []  # the jobs, in the same order
        self._by_size: dict[int, tuple[list[tuple], list[Job]]] = {}
        self._walltimes: dict[int, list[float]] = {}  # per size, the waiting jobs' walltimes, ascending
        self.demand = 0
        self.columns: JobColumns | None = None
        self.shortest: JobColumns | None = None

    def keep_columns(self, remaining, shortest: bool = False) -> None:
        """Keep the waiting jobs as numpy columns from now on (:mod:`torus_sim.queue_columns`).

        Args:
            remaining: ``job -> seconds``, the engine's predicted remaining time of a waiting job.
            shortest: also keep them in order of (predicted remaining time, rank) (SJF-EASY's candidates).
        """
        self.columns = JobColumns(remaining)
        self.columns.fill(self._jobs, self._order)
        if shortest:
            self.shortest = JobColumns(remaining, key=_shortest_key)
            self.shortest.fill(self._jobs, self._order)

    def __len__(self) -> int:
        return len(self._jobs)

    def __iter__(self):
        return iter(self._jobs)

    def __getitem__(self, index):
        return self._jobs[index]

    def __contains__(self, job: Job) -> bool:
        return job.queue_key is not None

    @property
    def head(self) -> Job | None:
        """The first job in priority order, or None when empty."""
        return self._jobs[0] if self._jobs else None

    def jobs(self) -> list[Job]:
        """The waiting jobs in order, as a new list."""
        return list(self._jobs)

    def add(self, job: Job) -> None:
        """Insert a job at its position (arrival, or back after a kill, a silent error or a preemption).

        The key is kept on the job (``job.queue_key``) while it waits.

        Raises:
            SimulationError: the job is queued already.
        """
        if job.queue_key is not None:
            raise SimulationError(f"{job!r} is already in the wait queue")
        entry = job.queue_key = self._key(job)
        index = bisect_right(self._order, entry)
        self._order.insert(index, entry)
        self._jobs.insert(index, job)
        if self.columns is not None:
            self.columns.insert(job, entry)
            if self.shortest is not None:
                self.shortest.insert(job)
        if self._indexed:
            order, jobs = self._by_size.setdefault(job.partition_size, ([], []))
            index = bisect_right(order, entry)
            order.insert(index, entry)
            jobs.insert(index, job)
            insort(self._walltimes.setdefault(job.partition_size, []), job.walltime)
        self.demand += job.partition_size

    def extend(self, jobs) -> None:
        """Insert several jobs (arrivals at one instant): one sort instead of one insertion each."""
        jobs = list(jobs)
        if len(jobs) < 8 or self._jobs:
            for job in jobs:
                self.add(job)
            return
        for job in jobs:
            if job.queue_key is not None:
                raise SimulationError(f"{job!r} is already in the wait queue")
            job.queue_key = self._key(job)
            self.demand += job.partition_size
        ordered = sorted(jobs, key=_queue_key)
        self._order = [job.queue_key for job in ordered]
        self._jobs = ordered
        if self.columns is not None:
            self.columns.fill(ordered, self._order)
            if self.shortest is not None:
                self.shortest.fill(ordered, self._order)
        if self._indexed:
            for job in ordered:
                order, same = self._by_size.setdefault(job.partition_size, ([], []))
                order.append(job.queue_key)
                same.append(job)
                self._walltimes.setdefault(job.partition_size, []).append(job.walltime)
            for walltimes in self._walltimes.values():
                walltimes.sort()

    def remove(self, job: Job) -> None:
        """Take a job off the queue.

        Raises:
            SimulationError: the job is not queued.
        """
        entry = job.queue_key
        if entry is None:
            raise SimulationError(f"{job!r} is not in the wait queue")
        job.queue_key = None
        order, jobs = self._order, self._jobs
        if jobs and jobs[0] is job:  # the head (the usual start): no search
            del order[0]
            del jobs[0]
        else:
            index = _position(order, jobs, entry, job)
            del order[index]
            del jobs[index]
        if self.columns is not None:
            self.columns.remove(job, entry)
            if self.shortest is not None:
                self.shortest.remove(job)
        if self._indexed:
            order, jobs = self._by_size[job.partition_size]
            index = _position(order, jobs, entry, job)
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
        return sorted(self._by_size)

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
        walltimes = self._walltimes.get(size)
        return walltimes[0] if walltimes else math.inf

    def of_size(self, size: int) -> list[Job]:
        """Waiting jobs of one partition size, in order (the queue's own list: do not modify).

        Raises:
            SimulationError: the queue keeps no per-size lists.
        """
        if not self._indexed:
            raise SimulationError("this wait queue keeps no per-size lists (by_size=False)")
        lists = self._by_size.get(size)
        return lists[1] if lists else []
