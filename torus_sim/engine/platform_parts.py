"""One partition's share of the engine, as its policy sees it: its waiting jobs and its running jobs, live.

On a platform of disjoint partitions (one with ``parts``: :class:`~torus_sim.machine.platforms.partitioned.
PartitionedPlatform`) the scheduler agent asks one instance of the policy per partition, each with a
:class:`~torus_sim.engine.view.SchedulingView` made of the partition's cluster, a :class:`PartQueue` (the waiting
jobs routed to it, in the wait queue's order) and a :class:`PartBook` (its running jobs). Both are live filters of
the engine's one queue and one job book: a start the engine applies is seen at once, and no job is kept twice.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping

from torus_sim.core.job import Job

__all__ = ["PartBook", "PartQueue"]


class PartQueue:
    """The waiting jobs of one partition, in the wait queue's order (a read-only, live filter of the queue).

    Implements :class:`~torus_sim.policies.context.WaitingJobs`; it keeps no columns or size index (a policy takes
    its generic path).

    Args:
        queue: the engine's :class:`~torus_sim.engine.wait_queue.WaitQueue`.
        part_of: ``job id -> partition`` (the platform's :meth:`~torus_sim.machine.platforms.partitioned.
            PartitionedPlatform.part_of`).
        part: this partition's index.
    """

    __slots__ = ("_part", "_part_of", "_queue")

    columns = shortest = size_index = None
    indexed = False

    def __init__(self, queue, part_of, part: int) -> None:
        self._queue, self._part_of, self._part = queue, part_of, part

    @property
    def guard(self):
        """The run's guard of plug-in calls (the queue's), or None."""
        return self._queue.guard

    def __iter__(self) -> Iterator[Job]:
        part_of, part = self._part_of, self._part
        return (job for job in self._queue if part_of(job.job_id) == part)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __getitem__(self, index):
        return self.jobs()[index]

    def __contains__(self, job: Job) -> bool:
        return job in self._queue and self._part_of(job.job_id) == self._part

    @property
    def head(self) -> Job | None:
        """The partition's first waiting job, or None."""
        return next(iter(self), None)

    @property
    def demand(self) -> int:
        """Nodes requested by the partition's waiting jobs."""
        return sum(job.partition_size for job in self)

    def jobs(self) -> list[Job]:
        """The partition's waiting jobs in queue order (a new list)."""
        return list(self)

    def sizes(self) -> list[int]:
        """Partition sizes of the waiting jobs, ascending."""
        return sorted({job.partition_size for job in self})

    def of_size(self, size: int) -> list[Job]:
        """The waiting jobs of one size, in queue order (a new list)."""
        return [job for job in self if job.partition_size == size]

    def least_walltime(self, size: int) -> float:
        """The shortest walltime among the waiting jobs of one size (seconds; inf when none waits)."""
        return min((job.walltime for job in self if job.partition_size == size), default=math.inf)


class _PartRunning(Mapping):
    """Job id -> running job of one partition (a live, read-only filter of the job book's running set)."""

    __slots__ = ("_part", "_part_of", "_running")

    def __init__(self, running: dict, part_of, part: int) -> None:
        self._running, self._part_of, self._part = running, part_of, part

    def __getitem__(self, job_id: int) -> Job:
        job = self._running[job_id]
        if self._part_of(job_id) != self._part:
            raise KeyError(job_id)
        return job

    def __iter__(self) -> Iterator[int]:
        part_of, part = self._part_of, self._part
        return (job_id for job_id in self._running if part_of(job_id) == part)

    def __len__(self) -> int:
        return sum(1 for _ in self)


class PartBook:
    """What a partition's view reads of the job book: its running jobs (no sums by rank, no kept ends).

    Args:
        book: the engine's :class:`~torus_sim.engine.job_book.JobBook`.
        part_of: ``job id -> partition``.
        part: this partition's index.

    Attributes:
        running: job id -> running job of the partition (live, read only).
        rank_sums: None (a partition's policy sums its running jobs itself).
    """

    __slots__ = ("running",)

    rank_sums = None

    def __init__(self, book, part_of, part: int) -> None:
        self.running = _PartRunning(book.running, part_of, part)

    def running_ends(self) -> None:
        """None: a partition's releases are sorted from its running jobs at each pass."""
        return None
