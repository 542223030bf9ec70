"""The wait queue: jobs in FCFS order, also indexed by partition size.

Backfilling asks "which is the earliest job of size s that could start?" for each size; the
per-size lists answer it without walking the whole queue, which matters when failures make the
queue thousands of jobs long.
"""

from __future__ import annotations

from bisect import bisect_left, insort

from torus_sim.errors import SimulationError
from torus_sim.job import Job

__all__ = ["WaitQueue", "fcfs_key"]


def fcfs_key(job: Job) -> tuple[float, int]:
    """FCFS order: arrival time, then job id (BGL-FAULT §5.1: prioritized by order of arrival)."""
    return (job.submitted_at, job.job_id)


class WaitQueue:
    """Waiting jobs in FCFS order, with per-partition-size FCFS lists and the total demand.

    Attributes:
        demand: supernodes requested by all waiting jobs (sum of partition sizes), BGL-FAULT
            §6.1's q(t).
    """

    def __init__(self) -> None:
        self._jobs: list[Job] = []
        self._by_size: dict[int, list[Job]] = {}
        self.demand = 0

    def __len__(self) -> int:
        return len(self._jobs)

    def __iter__(self):
        return iter(self._jobs)

    def __getitem__(self, index: int) -> Job:
        return self._jobs[index]

    @property
    def head(self) -> Job | None:
        """The first job in FCFS order, or None when empty."""
        return self._jobs[0] if self._jobs else None

    def add(self, job: Job) -> None:
        """Insert a job at its FCFS position (arrival, or back after a kill)."""
        insort(self._jobs, job, key=fcfs_key)
        insort(self._by_size.setdefault(job.partition_size, []), job, key=fcfs_key)
        self.demand += job.partition_size

    def remove(self, job: Job) -> None:
        """Take a job off the queue.

        Raises:
            SimulationError: the job is not queued.
        """
        for jobs in (self._jobs, self._by_size.get(job.partition_size, [])):
            index = bisect_left(jobs, fcfs_key(job), key=fcfs_key)
            if index == len(jobs) or jobs[index] is not job:
                raise SimulationError(f"{job!r} is not in the wait queue")
            del jobs[index]
        if not self._by_size[job.partition_size]:
            del self._by_size[job.partition_size]
        self.demand -= job.partition_size

    def sizes(self) -> list[int]:
        """Partition sizes of the waiting jobs, ascending."""
        return sorted(self._by_size)

    def of_size(self, size: int) -> list[Job]:
        """Waiting jobs of one partition size, FCFS order (the queue's own list: do not modify)."""
        return self._by_size.get(size, [])
