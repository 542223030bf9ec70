"""A job and its life cycle: one state enum, guarded transitions, one class for every platform.

::

    PENDING --arrive--> QUEUED --start--> RUNNING --finish--> COMPLETED
                          ^                  |
                          +-- kill ----------+   a fail-stop failure hit its nodes (BGL-FAULT §6.1)
                          +-- fail_attempt --+   a silent error found at the end of the attempt (RIGID §3.2)
                          +-- preempt -------+   the policy took its nodes back (PV-EASY §4.2)

The same class serves an online job submitted over time (SWF), a job of a batch released at time 0
(RIGID / MOLDABLE §3.1), rigid jobs (a size) and moldable jobs (a time table t_j(p); the policy picks
p at every start). A job back in the queue keeps its priority: its FCFS position (``submitted_at``,
``job_id``) or the policy's key.

Progress within an attempt (:meth:`Job.progress`, :meth:`Job.end_at`) follows CKPT-MIG's periodic
checkpointing (no checkpoint: BGL-FAULT): ``resumed_at`` + overhead, then work in chunks of
``checkpoint_interval`` each followed by a checkpoint of ``checkpoint_cost``. PV-EASY's checkpoint and
suspend preemption modes have their own arithmetic in :mod:`torus_sim.engine.progress`.
"""

from __future__ import annotations

import math
from enum import Enum

from torus_sim.core.errors import JobStateError

__all__ = ["Job", "JobState", "fcfs_key"]


class JobState(Enum):
    """Where a job is in its life cycle."""

    PENDING = "pending"  # not yet submitted (its arrival event lies ahead)
    QUEUED = "queued"  # in the wait queue
    RUNNING = "running"  # holds an allocation
    COMPLETED = "completed"  # finished its work


# the members as module constants: an Enum member lookup costs ~0.1 µs (Python 3.11), and the
# transitions below run once per event
_PENDING, _QUEUED, _RUNNING, _COMPLETED = JobState.PENDING, JobState.QUEUED, JobState.RUNNING, JobState.COMPLETED


class Job:
    """A job as the engine runs it.

    Args:
        job_id: the job's number (SWF job number; the index in a batch), unique within a workload.
        submitted_at: arrival time, seconds since the trace's start (0 for a batch).
        runtime: work of one complete attempt, seconds (load-scaled); for a moldable job, the time
            of its current allocation, set at every start from ``times``.
        walltime: the requested time the scheduler plans with, seconds (BGL-FAULT's t_e; PV-EASY's
            user estimate and kill time).
        size: nodes the job asks for (supernodes on the torus, processors on a cluster).
        partition_size: nodes it occupies: ``size`` rounded up to a size with a rectangular shape
            on the torus; equal to ``size`` on a cluster.
        user_id: SWF user number, -1 when unknown.
        rank: priority rank, 0 = first submitted (FCFS: lower rank = higher priority).
        times: moldable jobs only: float ``(P,)``, t_j(p) for p = 1..P, seconds (None: rigid).
        silent_errors: f_j, attempts that end in a silent error before one succeeds (RIGID §3.2).

    Attributes:
        state: the :class:`JobState`.
        allocation: the platform's handle for what it holds while RUNNING (partition id, node ids
            or a processor count), None otherwise.
        allocated_size: nodes of the current (or last) allocation.
        first_started_at, started_at, finished_at: first start, last start, end (None before).
        attempts: attempts started; kills, preemptions, errors_detected: how they ended.
        lost_work: node-seconds of work thrown away by fail-stop failures.
        time_sum: wall time spent holding nodes over all attempts, seconds (PV-EASY Eq. 3).
        prediction: the runtime predictor's belief, seconds (None: the walltime).
        reservation_at: the last reservation a policy gave the job as the blocked head.

    Raises:
        JobStateError: from the transition methods, when called from a state that forbids them.

    References:
        BGL-FAULT §3.2 (s_j, t_e_j), §6.1 (kill and restart from the beginning); RIGID §3.1-3.2;
        MOLDABLE §3.1; PV-EASY §4.
    """

    __slots__ = (
        "allocated_size",
        "allocation",
        "attempt_overhead",
        "attempts",
        "checkpoint_cost",
        "checkpoint_interval",
        "end_event",
        "errors_detected",
        "finished_at",
        "first_started_at",
        "job_id",
        "kills",
        "lost_work",
        "migrations",
        "partition_size",
        "prediction",
        "preemptions",
        "progress_at_resume",
        "queue_key",
        "rank",
        "reservation_at",
        "resumed_at",
        "runtime",
        "saved_work",
        "silent_errors",
        "size",
        "started_at",
        "state",
        "submitted_at",
        "time_sum",
        "times",
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
        rank: int = 0,
        times=None,
        silent_errors: int = 0,
    ) -> None:
        self.job_id = int(job_id)
        self.submitted_at = float(submitted_at)
        self.runtime = float(runtime)
        self.walltime = float(walltime)
        self.size = int(size)
        self.partition_size = int(partition_size if partition_size is not None else size)
        self.user_id = int(user_id)
        self.rank = int(rank)
        self.times = times
        self.silent_errors = int(silent_errors)
        self.first_started_at: float | None = None
        self.started_at: float | None = None  # the last start (BGL-FAULT §6.1's t_s)
        self.finished_at: float | None = None
        self.allocation = None  # the platform's handle while RUNNING
        self.end_event = None  # the scheduled end of the current attempt while RUNNING
        self.prediction: float | None = None
        self.reservation_at: float | None = None
        self.resumed_at: float | None = None  # last start or migration
        self.checkpoint_interval: float | None = None  # seconds of work between periodic checkpoints
        # progress_at_resume: seconds of work done at resumed_at; attempt_overhead: seconds after
        # resumed_at before work resumes (R, M or a restart cost); saved_work: work saved by checkpoints
        self._reset()

    def fresh_copy(self, rank: int | None = None, silent_errors: int | None = None) -> Job:
        """A PENDING copy with the same description, for a new run of the same workload.

        Args:
            rank: the copy's rank (this job's when None).
            silent_errors: the copy's silent-error count (this job's when None).
        """
        job = Job.__new__(Job)
        job.job_id = self.job_id
        job.submitted_at = self.submitted_at
        job.runtime = self.runtime
        job.walltime = self.walltime
        job.size = self.size
        job.partition_size = self.partition_size
        job.user_id = self.user_id
        job.rank = self.rank if rank is None else rank
        job.times = self.times
        job.silent_errors = self.silent_errors if silent_errors is None else silent_errors
        job._reset()
        return job

    def _reset(self) -> None:
        """The state of a job not yet submitted."""
        self.state = _PENDING
        self.first_started_at = self.started_at = self.finished_at = None
        self.allocation = self.end_event = None
        self.allocated_size = self.attempts = self.kills = self.preemptions = self.errors_detected = self.migrations = 0
        self.lost_work = self.time_sum = self.progress_at_resume = self.attempt_overhead = self.saved_work = 0.0
        self.prediction = self.reservation_at = self.resumed_at = self.checkpoint_interval = None
        self.checkpoint_cost = 0.0
        self.queue_key = None  # the policy's key while in the wait queue

    @property
    def moldable(self) -> bool:
        """True when the policy chooses the job's processors from its time table."""
        return self.times is not None

    @property
    def believed_runtime(self) -> float:
        """The runtime the scheduler believed, seconds: the runtime predictor's (``prediction``), else the walltime."""
        return self.walltime if self.prediction is None else self.prediction

    def __repr__(self) -> str:
        return f"Job({self.job_id}, size={self.size}, state={self.state.name})"

    def _require(self, expected: JobState, action: str) -> None:
        if self.state is not expected:
            raise JobStateError(f"job {self.job_id} cannot {action}: it is {self.state.name}, not {expected.name}")

    # -- transitions ------------------------------------------------------------------------

    def arrive(self) -> None:
        """PENDING -> QUEUED."""
        self._require(_PENDING, "arrive")
        self.state = _QUEUED

    def start(self, at: float, allocation, size: int | None = None, recovery: float = 0.0) -> None:
        """QUEUED -> RUNNING on an allocation at time ``at`` (seconds).

        Args:
            at: start time, seconds.
            allocation: the platform's allocation handle.
            size: nodes of the allocation (the job's partition size when None).
            recovery: seconds spent before work resumes (R, reading the last checkpoint); only
                paid when the job restarts from saved work.
        """
        if self.state is not _QUEUED:
            self._require(_QUEUED, "start")
        self.state = _RUNNING
        if self.first_started_at is None:
            self.first_started_at = at
        self.started_at = at
        self.allocation = allocation
        self.allocated_size = self.partition_size if size is None else size
        self.attempts += 1
        self.resumed_at = at
        self.progress_at_resume = self.saved_work
        self.attempt_overhead = recovery if self.saved_work > 0 else 0.0

    def _leave(self, at: float) -> None:
        self.time_sum += at - self.started_at
        self.allocation = None
        self.end_event = None

    def finish(self, at: float) -> None:
        """RUNNING -> COMPLETED at time ``at``."""
        if self.state is not _RUNNING:
            self._require(_RUNNING, "finish")
        self.state = _COMPLETED
        self.finished_at = at
        self.time_sum += at - self.started_at
        self.allocation = self.end_event = None

    def fail_attempt(self, at: float) -> None:
        """RUNNING -> QUEUED: the attempt ended and the detector found a silent error.

        The attempt's result is wrong, so the job runs again from the beginning.

        References:
            RIGID §3.2, MOLDABLE §3.2 (errors detected at the end of each attempt; re-execution).
        """
        if self.state is not _RUNNING:
            self._require(_RUNNING, "fail an attempt")
        self.errors_detected += 1
        self.saved_work = 0.0
        self.state = _QUEUED
        self.time_sum += at - self.started_at
        self.allocation = self.end_event = None

    def kill(
        self, at: float, preventive_checkpoint: float | None = None, done: float | None = None, saved: float | None = None
    ) -> float:
        """RUNNING -> QUEUED: a failure hit the allocation; work since the last checkpoint is lost.

        Without checkpointing all the attempt's work is lost and the job restarts from the
        beginning (BGL-FAULT §6.1). With periodic checkpointing it restarts from its last
        checkpoint. A preventive checkpoint of ``C`` seconds taken just before a predicted failure
        saves the work done up to ``at - C`` (CKPT-MIG, "Preventive checkpointing").

        Args:
            at: time of the failure, seconds.
            preventive_checkpoint: C, when a preventive checkpoint ended at the failure; None if not.
            done: seconds of work done at ``at`` when another progress model computed it (see
                :mod:`torus_sim.engine.progress`); this job's checkpointing arithmetic when None.
            saved: seconds of work kept, likewise.

        Returns:
            The work lost, in node-seconds of the job's own size.
        """
        self._require(_RUNNING, "be killed")
        done = self.progress(at) if done is None else done
        saved = self._saved(at) if saved is None else saved
        if preventive_checkpoint is not None:
            saved = max(saved, self.progress(max(self.resumed_at, at - preventive_checkpoint)))
        lost = max(0.0, done - saved) * self.size
        self.saved_work = saved
        self.lost_work += lost
        self.kills += 1
        self.state = _QUEUED
        self._leave(at)
        return lost

    def preempt(self, at: float, kept_work: float | None = None) -> None:
        """RUNNING -> QUEUED: the policy took the job's nodes back (PV-EASY §4.2).

        Args:
            at: time of the preemption, seconds.
            kept_work: seconds of work the job keeps (see :mod:`torus_sim.engine.progress`); None keeps
                what its periodic checkpoints saved (nothing without checkpointing: kill/restart).
        """
        self._require(_RUNNING, "be preempted")
        self.saved_work = self._saved(at) if kept_work is None else kept_work
        self.preemptions += 1
        self.state = _QUEUED
        self._leave(at)

    def migrate(self, at: float, allocation, cost: float = 0.0) -> None:
        """Move a RUNNING job to another allocation: checkpoint, move, restart.

        The job's progress is kept (and saved, a migration being a checkpoint); the move costs
        ``cost`` seconds before work resumes.

        Args:
            at: time of the move, seconds.
            allocation: the new allocation handle (same size).
            cost: seconds the move costs the job (checkpoint + restart, M); 0 as in BGL-FAULT.

        References:
            BGL-FAULT §3.2 (migration = checkpoint, move, restart), §5.1; CKPT-MIG ("Preventive migration").
        """
        self._require(_RUNNING, "migrate")
        done = self.progress(at)
        if self.checkpoint_interval is not None:
            self.saved_work = done
        self.progress_at_resume = done
        self.resumed_at = at
        self.attempt_overhead = cost
        self.allocation = allocation
        self.migrations += 1

    # -- progress (CKPT-MIG periodic checkpointing; none: BGL-FAULT) -------------------------

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
        self._require(_RUNNING, "report progress")
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
        self._require(_RUNNING, "report its end")
        work = self.runtime - self.progress_at_resume
        return self.resumed_at + self.attempt_overhead + work + self.checkpoint_cost * self._checkpoints_left(work)

    def estimated_end(self, at: float, estimate: float | None = None) -> float:
        """When the scheduler expects the running job to end.

        Args:
            at: now, seconds; a job past its estimate is expected to end now.
            estimate: the runtime the scheduler believes, seconds (the walltime when None).

        Returns:
            ``max(at, resumed_at + overhead + estimate - progress at resume + checkpoint costs)``.

        References:
            BGL-FAULT §3.2 (t_f = t_e + t_s).
        """
        self._require(_RUNNING, "estimate its end")
        work = (self.walltime if estimate is None else estimate) - self.progress_at_resume
        return max(at, self.resumed_at + self.attempt_overhead + work + self.checkpoint_cost * self._checkpoints_left(work))


def fcfs_key(job: Job) -> tuple[float, int]:
    """FCFS order: arrival time, then job id (BGL-FAULT §5.1; PV-EASY: priority = submission order).

    Args:
        job: a job (its ``submitted_at`` in seconds and its ``job_id``).

    Returns:
        ``(submitted_at, job_id)``, smaller first.
    """
    return (job.submitted_at, job.job_id)
