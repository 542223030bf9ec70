"""A job and its life cycle: one state enum, guarded transitions.

::

    PENDING --arrive--> QUEUED --start--> RUNNING --finish--> COMPLETED
                          ^                  |
                          +------kill--------+      (a failure: all work lost, BGL-FAULT §6.1)

A killed job goes back to the wait queue at its FCFS position (its ``submitted_at``) and later
restarts from the beginning.
"""

from __future__ import annotations

import math
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
        "attempt_overhead",
        "checkpoint_cost",
        "checkpoint_interval",
        "migrations",
        "partition",
        "partition_size",
        "progress_at_resume",
        "resumed_at",
        "runtime",
        "saved_work",
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
        self.progress_at_resume = 0.0  # seconds of the job's work done at resumed_at
        self.attempt_overhead = 0.0  # seconds after resumed_at before work resumes (R or M)
        self.saved_work = 0.0  # seconds of work saved by checkpoints (restart point)
        self.checkpoint_interval: float | None = None  # seconds of work between periodic checkpoints
        self.checkpoint_cost = 0.0  # C, seconds per checkpoint

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

    def start(self, at: float, partition: int, recovery: float = 0.0) -> None:
        """QUEUED -> RUNNING on a partition at time ``at`` (seconds).

        Args:
            at: start time, seconds.
            partition: the platform's allocation handle.
            recovery: seconds spent reading the last checkpoint before work resumes (R); only
                paid when the job restarts from saved work.
        """
        self._require(JobState.QUEUED, "start")
        self.state = JobState.RUNNING
        self.started_at = at
        self.partition = partition
        self.resumed_at = at
        self.progress_at_resume = self.saved_work
        self.attempt_overhead = recovery if self.saved_work > 0 else 0.0

    def finish(self, at: float) -> None:
        """RUNNING -> COMPLETED at time ``at``."""
        self._require(JobState.RUNNING, "finish")
        self.state = JobState.COMPLETED
        self.finished_at = at
        self.partition = None
        self.end_event = None

    def kill(self, at: float, preventive_checkpoint: float | None = None) -> float:
        """RUNNING -> QUEUED: a failure hit the partition; work since the last checkpoint is lost.

        Without checkpointing all the attempt's work is lost and the job restarts from the
        beginning (BGL-FAULT §6.1). With periodic checkpointing it restarts from its last
        checkpoint. A preventive checkpoint of ``C`` seconds taken just before a predicted failure
        saves the work done up to ``at - C`` (CKPT-MIG, "Preventive checkpointing").

        Args:
            at: time of the failure, seconds.
            preventive_checkpoint: C, when a preventive checkpoint ended at the failure; None if not.

        Returns:
            The work lost, in supernode-seconds of the job's own size.
        """
        self._require(JobState.RUNNING, "be killed")
        done = self.progress(at)
        saved = self._saved(at)
        if preventive_checkpoint is not None:
            saved = max(saved, self.progress(max(self.resumed_at, at - preventive_checkpoint)))
        lost = max(0.0, done - saved) * self.size
        self.saved_work = saved
        self.lost_work += lost
        self.kills += 1
        self.state = JobState.QUEUED
        self.partition = None
        self.end_event = None
        return lost

    def _cycle(self, at: float) -> tuple[float, int, float]:
        """(seconds of work time elapsed in the attempt, whole work+checkpoint cycles, remainder)."""
        elapsed = at - self.resumed_at - self.attempt_overhead
        if elapsed <= 0:
            return 0.0, 0, 0.0
        if self.checkpoint_interval is None:
            return elapsed, 0, elapsed
        period = self.checkpoint_interval + self.checkpoint_cost
        cycles = int(elapsed // period)
        return elapsed, cycles, elapsed - cycles * period

    def progress(self, at: float) -> float:
        """Seconds of the job's work done at time ``at`` (RUNNING jobs only), checkpoints excluded."""
        self._require(JobState.RUNNING, "report progress")
        elapsed, cycles, remainder = self._cycle(at)
        if self.checkpoint_interval is None:
            return min(self.runtime, self.progress_at_resume + elapsed)
        return min(
            self.runtime, self.progress_at_resume + cycles * self.checkpoint_interval + min(remainder, self.checkpoint_interval)
        )

    def _saved(self, at: float) -> float:
        if self.checkpoint_interval is None:
            return self.saved_work
        _, cycles, _ = self._cycle(at)
        return min(self.runtime, self.progress_at_resume + cycles * self.checkpoint_interval)

    def remaining_runtime(self, at: float) -> float:
        """Seconds of the job's work still to do at time ``at`` (RUNNING jobs only)."""
        return self.runtime - self.progress(at)

    def _checkpoints_left(self, work: float) -> int:
        if self.checkpoint_interval is None or work <= 0:
            return 0
        return max(0, math.ceil(work / self.checkpoint_interval - 1e-12) - 1)

    def end_at(self) -> float:
        """When the current attempt ends if nothing fails: overhead, remaining work and its checkpoints.

        Returns:
            ``resumed_at + overhead + (runtime - progress at resume) + C x checkpoints still due``.
        """
        self._require(JobState.RUNNING, "report its end")
        work = self.runtime - self.progress_at_resume
        return self.resumed_at + self.attempt_overhead + work + self.checkpoint_cost * self._checkpoints_left(work)

    def migrate(self, at: float, partition: int, cost: float = 0.0) -> None:
        """Move a RUNNING job to another partition: checkpoint, move, restart.

        The job's progress is kept (and saved, a migration being a checkpoint); the move costs
        ``cost`` seconds before work resumes.

        Args:
            at: time of the move, seconds.
            partition: the new allocation handle.
            cost: seconds the move costs the job (checkpoint + restart, M); 0 as in BGL-FAULT.

        References:
            BGL-FAULT §3.2 (migration = checkpoint, move, restart), §5.1; CKPT-MIG ("Preventive migration").
        """
        self._require(JobState.RUNNING, "migrate")
        done = self.progress(at)
        if self.checkpoint_interval is not None:
            self.saved_work = done
        self.progress_at_resume = done
        self.resumed_at = at
        self.attempt_overhead = cost
        self.partition = partition
        self.migrations += 1

    def estimated_end(self, at: float) -> float:
        """When the scheduler expects the running job to end, from its walltime.

        Args:
            at: now, seconds; a job past its walltime is expected to end now.

        Returns:
            ``max(at, resumed_at + overhead + walltime - progress at resume + checkpoint costs)``.

        References:
            BGL-FAULT §3.2 (t_f = t_e + t_s).
        """
        self._require(JobState.RUNNING, "estimate its end")
        work = self.walltime - self.progress_at_resume
        return max(at, self.resumed_at + self.attempt_overhead + work + self.checkpoint_cost * self._checkpoints_left(work))
