"""One partition's share of the engine, as its policy sees it: its waiting jobs and its running jobs, live.

On a platform of disjoint partitions (one with ``parts``: :class:`~torus_sim.machine.platforms.partitioned.
PartitionedPlatform`) the scheduler agent asks one instance of the policy per partition, each with a
:class:`~torus_sim.engine.view.SchedulingView` made of the partition's cluster, a :class:`PartQueue` (the waiting
jobs routed to it, in the wait queue's order) and a :class:`PartBook` (its running jobs). Both are live filters of
the engine's one queue and one job book: a start the engine applies is seen at once, and no job is kept twice.
"""

from __future__ import annotations

from torus_sim.core.job import Job
from torus_sim.engine.running_ends import RunningEnds
from torus_sim.engine.wait_queue import WaitQueue

__all__ = ["DividedQueue", "PartBook"]


class DividedQueue(WaitQueue):
    """The wait queue of a platform of partitions: the one queue, and each partition's waiting jobs as a queue of its own.

    Every change goes to both (a job enters and leaves its partition's queue with the whole queue's), so a partition's
    policy reads a real :class:`~torus_sim.engine.wait_queue.WaitQueue` (its head, its length, its order: the whole
    queue's), with no filter per question.

    Args:
        key: the queue's order (``job -> key``).
        part_of: ``job id -> partition`` of a routed job.
        count: the number of partitions.
        keys: the keys of many jobs at once (:class:`~torus_sim.engine.wait_queue.WaitQueue`'s ``keys``), or None.

    Attributes:
        parts: each partition's queue, in the platform's order.
    """

    def __init__(self, key, part_of, count: int, keys=None) -> None:
        self.parts = [WaitQueue(key, by_size=False, keys=keys) for _ in range(count)]
        self._part_of = part_of
        self._whole_only = False  # while the whole queue is reordered (the partitions' queues reorder themselves)
        super().__init__(key, by_size=False, keys=keys)

    @property
    def guard(self):
        """The run's guard of plug-in calls (the partitions' queues share it), or None."""
        return self._guard

    @guard.setter
    def guard(self, calls) -> None:
        self._guard = calls
        for part in self.parts:
            part.guard = calls

    def add(self, job: Job) -> None:  # noqa: D102 - WaitQueue.add, in the job's partition too
        if not self._whole_only:
            self.parts[self._part_of(job.job_id)].add(job)
            job.queue_key = None  # the same key again below (a job keeps one)
        super().add(job)

    def extend(self, jobs) -> None:  # noqa: D102 - WaitQueue.extend, in each job's partition too
        jobs = list(jobs)
        if self._whole_only:
            super().extend(jobs)
            return
        groups: dict[int, list[Job]] = {}
        for job in jobs:
            groups.setdefault(self._part_of(job.job_id), []).append(job)
        for part, group in groups.items():
            self.parts[part].extend(group)
        for job in jobs:
            job.queue_key = None
        self._whole_only = True  # WaitQueue.extend may add one job at a time: those are in their partitions already
        try:
            super().extend(jobs)
        finally:
            self._whole_only = False

    def remove(self, job: Job) -> None:  # noqa: D102 - WaitQueue.remove, from the job's partition too
        entry = job.queue_key
        super().remove(job)
        job.queue_key = entry
        self.parts[self._part_of(job.job_id)].remove(job)

    def reorder(self) -> None:  # noqa: D102 - WaitQueue.reorder, of each partition's queue too
        for part in self.parts:
            if len(part):
                part.reorder()
        self._whole_only = True
        try:
            super().reorder()
        finally:
            self._whole_only = False


class PartBook:
    """What a partition's view reads of the job book: its running jobs and their predicted ends, kept in order.

    The job book hands each start and stop of a job of the partition on (:meth:`~torus_sim.engine.job_book.JobBook.
    divide`); a partition allows no move of a running job and no change of its predicted end (no preemption,
    periodic checkpoint or preventive action runs on partitions), so the ends are kept from the first ask on.

    Attributes:
        running: job id -> the partition's running job (start order).
        rank_sums: None (a partition's policy sums its running jobs itself).
    """

    __slots__ = ("_ends", "running")

    rank_sums = None

    def __init__(self) -> None:
        self.running: dict[int, Job] = {}
        self._ends: RunningEnds | None = None

    def start(self, job: Job) -> None:
        """A job of the partition starts an attempt."""
        self.running[job.job_id] = job
        if self._ends is not None:
            self._ends.add(job)

    def stop(self, job: Job) -> None:
        """A job of the partition leaves the running set."""
        del self.running[job.job_id]
        if self._ends is not None:
            self._ends.discard(job)

    def running_ends(self) -> RunningEnds:
        """The partition's running jobs in order of predicted end (made at the first ask, then kept)."""
        if self._ends is None:
            self._ends = RunningEnds()
            for job in self.running.values():
                self._ends.add(job)
        return self._ends
