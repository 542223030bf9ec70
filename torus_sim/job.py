"""A job and its life cycle: one state enum, guarded transitions.

::

    PENDING --arrive--> QUEUED --start--> RUNNING --finish--> COMPLETED
                          ^                  |
                          +------kill--------+      (a failure: all work lost, BGL-FAULT §6.1)

A killed job goes back to the wait queue at its FCFS position (its ``submitted_at``) and later
restarts from the beginning.
"""

from __future__ import annotations

from enum import Enum

from torus_sim.errors import JobStateError

__all__ = ["Job", "JobState"]


class JobState(Enum):
    """Where a job is in its life cycle."""

    PENDING = "pending"  # not yet submitted (its arrival event lies ahead)
    QUEUED = "queued"  # in the wait queue
    RUNNING = "running"  # on a partition
    COMPLETED = "completed"  # finished its work


class Job:
    """A rigid job of the workload as the engine runs it.

    Args:
        job_id: the SWF job number (unique within a workload).
        submitted_at: arrival time, seconds since the trace's start.
        runtime: actual execution time of one complete attempt, seconds (load-scaled).
        walltime: the requested (estimated) time the scheduler plans with, seconds (load-scaled);
            BGL-FAULT's t_e.
        size: supernodes the job asks for (the log's processors mapped to supernodes).
        partition_size: supernodes it occupies: ``size`` rounded up to a size with a
            rectangular shape on the torus (equal to ``size`` on a flat platform).
        user_id: SWF user number, -1 when unknown.

    Raises:
        JobStateError: from the transition methods, when called from a state that forbids them.

    References:
        BGL-FAULT §3.2 (s_j, t_e_j), §6.1 (kill and restart from the beginning).
    """

    __slots__ = (
        "end_event",
        "finished_at",
        "job_id",
        "kills",
        "lost_work",
        "migrations",
        "partition",
        "partition_size",
        "progress_at_resume",
        "resumed_at",
        "runtime",
        "size",
        "started_at",
        "state",
        "submitted_at",
        "user_id",
        "walltime",
    )

    def __init__(
        self,
        job_id: int,
        submitted_at: float,
        runtime: float,
        walltime: float,
        size: int,
        partition_size: int | None = None,
        user_id: int = -1,
    ) -> None:
        self.job_id = int(job_id)
        self.submitted_at = float(submitted_at)
        self.runtime = float(runtime)
        self.walltime = float(walltime)
        self.size = int(size)
        self.partition_size = int(partition_size if partition_size is not None else size)
        self.user_id = int(user_id)
        self.state = JobState.PENDING
        self.started_at: float | None = None  # the last start (BGL-FAULT §6.1's t_s)
        self.finished_at: float | None = None
        self.partition: int | None = None  # platform's allocation handle while RUNNING
        self.end_event = None  # the scheduled end event while RUNNING
        self.kills = 0
        self.lost_work = 0.0  # supernode-seconds of work thrown away by failures
        self.migrations = 0
        self.resumed_at: float | None = None  # last start or migration
        self.progress_at_resume = 0.0  # seconds of the attempt's work done at resumed_at

    def fresh_copy(self) -> Job:
        """A PENDING copy with the same description, for a new run of the same workload."""
        return Job(self.job_id, self.submitted_at, self.runtime, self.walltime, self.size, self.partition_size, self.user_id)

    def __repr__(self) -> str:
        return f"Job({self.job_id}, size={self.size}, state={self.state.name})"

    def _require(self, expected: JobState, action: str) -> None:
        if self.state is not expected:
            raise JobStateError(f"job {self.job_id} cannot {action}: it is {self.state.name}, not {expected.name}")

    def arrive(self) -> None:
        """PENDING -> QUEUED."""
        self._require(JobState.PENDING, "arrive")
        self.state = JobState.QUEUED

    def start(self, at: float, partition: int) -> None:
        """QUEUED -> RUNNING on a partition at time ``at`` (seconds)."""
        self._require(JobState.QUEUED, "start")
        self.state = JobState.RUNNING
        self.started_at = at
        self.partition = partition
        self.resumed_at = at
        self.progress_at_resume = 0.0

    def finish(self, at: float) -> None:
        """RUNNING -> COMPLETED at time ``at``."""
        self._require(JobState.RUNNING, "finish")
        self.state = JobState.COMPLETED
        self.finished_at = at
        self.partition = None
        self.end_event = None

    def kill(self, at: float) -> float:
        """RUNNING -> QUEUED: a failure hit the partition; the attempt's work is lost.

        Args:
            at: time of the failure, seconds.

        Returns:
            The work lost, in supernode-seconds of the job's own size.
        """
        self._require(JobState.RUNNING, "be killed")
        lost = max(0.0, self.progress(at)) * self.size
        self.lost_work += lost
        self.kills += 1
        self.state = JobState.QUEUED
        self.partition = None
        self.end_event = None
        return lost

    def progress(self, at: float) -> float:
        """Seconds of the current attempt's work done at time ``at`` (RUNNING jobs only)."""
        self._require(JobState.RUNNING, "report progress")
        return self.progress_at_resume + (at - self.resumed_at)

    def remaining_runtime(self, at: float) -> float:
        """Seconds of the current attempt still to run at time ``at`` (RUNNING jobs only)."""
        return self.runtime - self.progress(at)

    def migrate(self, at: float, partition: int, cost: float = 0.0) -> None:
        """Move a RUNNING job to another partition: checkpoint, move, restart.

        Args:
            at: time of the move, seconds.
            partition: the new allocation handle.
            cost: seconds the move costs the job (checkpoint + restart); 0 as in BGL-FAULT.

        References:
            BGL-FAULT §3.2 (migration = checkpoint, move, restart), §5.1 (Krevat's migration).
        """
        self._require(JobState.RUNNING, "migrate")
        self.progress_at_resume = self.progress(at) - cost
        self.resumed_at = at
        self.partition = partition
        self.migrations += 1

    def estimated_end(self, at: float) -> float:
        """When the scheduler expects the running job to end, from its walltime.

        Args:
            at: now, seconds; a job past its walltime is expected to end now.

        Returns:
            ``max(at, resumed_at + walltime - progress_at_resume)``.

        References:
            BGL-FAULT §3.2 (t_f = t_e + t_s).
        """
        self._require(JobState.RUNNING, "estimate its end")
        return max(at, self.resumed_at + self.walltime - self.progress_at_resume)
