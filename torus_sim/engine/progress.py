"""How a job's work advances within an attempt, and what an interruption keeps.

Two models, one per run (the engine holds it):

* :class:`CheckpointProgress` (the default): CKPT-MIG's periodic checkpointing, with each job's
  interval T and cost C (set by :class:`~torus_sim.policies.resilience.ResiliencePolicy`), a recovery
  R when restarting from saved work, and migrations; without checkpoints it is BGL-FAULT's model,
  where a failure or a preemption loses the attempt's work (kill/restart). The arithmetic lives on
  :class:`~torus_sim.core.job.Job`.
* :class:`PreemptionProgress`: PV-EASY's checkpoint/restart and suspend/resume modes, in which every
  job pays for being preemptible: a checkpoint every ``checkpoint_interval`` seconds of work costing
  ``time_cost`` (and ``time_cost`` per restart), or a ``slowdown`` on all its work (and
  ``time_cost`` per resume).

Both answer the engine (when does the attempt end, what is kept) and the policies (when does the
scheduler expect a running job to end, how long will a waiting job run), from the job's runtime
prediction (the walltime when there is none).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from torus_sim.core.errors import ConfigurationError
from torus_sim.core.job import _RUNNING, Job

__all__ = ["PREEMPTION_MODES", "CheckpointProgress", "Preemption", "PreemptionProgress", "make_progress"]

PREEMPTION_MODES = ("kill", "checkpoint", "suspend")
"""What a preempted job keeps (PV-EASY §4.2, §5.3): nothing, its last checkpoint, everything."""


@dataclass(frozen=True)
class Preemption:
    """How a preempted job keeps its work (PV-EASY §5.3).

    Attributes:
        mode: ``kill``, ``checkpoint`` or ``suspend``.
        checkpoint_interval: seconds of work between checkpoints (1 h in the paper).
        time_cost: seconds per checkpoint and per restart / resume (60, 120, 180 s in the paper).
        slowdown: fraction by which every job runs slower in ``suspend`` mode (0.05).

    Raises:
        ConfigurationError: an unknown mode, a non-positive interval, a negative cost or slowdown.
    """

    mode: str = "kill"
    checkpoint_interval: float = 3600.0
    time_cost: float = 60.0
    slowdown: float = 0.05

    def __post_init__(self) -> None:
        if self.mode not in PREEMPTION_MODES:
            raise ConfigurationError(f"preemption mode must be one of {PREEMPTION_MODES}, got {self.mode!r}")
        if not (self.checkpoint_interval > 0 and self.time_cost >= 0 and self.slowdown >= 0):
            raise ConfigurationError("checkpoint_interval must be > 0, time_cost and slowdown >= 0")

    def segment_time(self, work: float, restarted: bool) -> float:
        """Wall time to run ``work`` seconds of work from a (re)start, overheads included, seconds.

        References:
            PV-EASY §5.3 (TimeCost per checkpoint and restart; 5% virtualization slowdown).
        """
        restart = self.time_cost if restarted and self.mode != "kill" else 0.0
        if self.mode == "checkpoint":
            checkpoints = max(math.ceil(work / self.checkpoint_interval) - 1, 0)
            return restart + work + checkpoints * self.time_cost
        if self.mode == "suspend":
            return restart + work * (1.0 + self.slowdown)
        return work

    def kept_work(self, elapsed: float, work: float, restarted: bool) -> float:
        """Work kept after running ``elapsed`` seconds of a segment that had ``work`` seconds to do.

        Returns:
            Seconds of work: 0 (kill), the completed checkpoints (checkpoint), all of it (suspend).
        """
        if self.mode == "kill":
            return 0.0
        productive = elapsed - (self.time_cost if restarted else 0.0)
        if productive <= 0:
            return 0.0
        if self.mode == "checkpoint":
            cycles = math.floor(productive / (self.checkpoint_interval + self.time_cost))
            return min(cycles * self.checkpoint_interval, work)
        return min(productive / (1.0 + self.slowdown), work)

    def work_done(self, elapsed: float, work: float, restarted: bool) -> float:
        """Work done (kept or not) after running ``elapsed`` seconds of a segment with ``work`` to do, seconds."""
        productive = elapsed - (self.time_cost if restarted and self.mode != "kill" else 0.0)
        if productive <= 0:
            return 0.0
        if self.mode == "checkpoint":
            cycles = math.floor(productive / (self.checkpoint_interval + self.time_cost))
            remainder = productive - cycles * (self.checkpoint_interval + self.time_cost)
            return min(cycles * self.checkpoint_interval + min(remainder, self.checkpoint_interval), work)
        if self.mode == "suspend":
            return min(productive / (1.0 + self.slowdown), work)
        return min(productive, work)


class CheckpointProgress:
    """CKPT-MIG periodic checkpointing (per-job T and C, recovery R); BGL-FAULT without checkpoints.

    Args:
        recovery_time: R, seconds to read a checkpoint back before a restart from saved work.

    References:
        BGL-FAULT §6.1 (a failed job restarts from the beginning); CKPT-MIG ("Periodic
        checkpointing", "Preventive checkpointing", "Preventive migration").
    """

    name = "checkpointing"

    def __init__(self, recovery_time: float = 0.0) -> None:
        self.recovery_time = float(recovery_time)

    def start(self, job: Job, now: float, allocation, size: int) -> float:
        """Start the attempt; returns when it ends if nothing interrupts it, seconds."""
        job.start(now, allocation, size, self.recovery_time)
        if job.checkpoint_interval is None and not job.attempt_overhead:
            return now + (job.runtime - job.progress_at_resume)  # Job.end_at() without checkpoints or overhead
        return job.end_at()

    def kill(self, job: Job, now: float, preventive_checkpoint: float | None = None) -> float:
        """A fail-stop failure: keep the last (or a preventive) checkpoint; returns node-seconds lost."""
        return job.kill(now, preventive_checkpoint)

    def preempt(self, job: Job, now: float) -> None:
        """A preemption keeps what the job's periodic checkpoints saved (nothing without them)."""
        job.preempt(now)

    def predicted_end(self, job: Job, now: float) -> float:
        """When the scheduler expects a running job to end, seconds (never before ``now``).

        From the job's prediction (its walltime when it has none); a job that ran past its
        prediction is expected at its walltime (the kill time), as PV-EASY's Last Model is used.
        """
        prediction = job.prediction
        if job.checkpoint_interval is None and job.state is _RUNNING:
            # Job.estimated_end without checkpoint costs, the same arithmetic inline (the hot path of
            # every EASY pass: one call per running job)
            started = job.resumed_at + job.attempt_overhead
            if prediction is not None and prediction < job.walltime:
                end = started + (prediction - job.progress_at_resume)
                if end > now:
                    return end
            end = started + (job.walltime - job.progress_at_resume)
            return end if end > now else now
        if prediction is None or prediction >= job.walltime:
            return job.estimated_end(now)
        end = job.estimated_end(-math.inf, prediction)
        if end <= now:
            return job.estimated_end(now)
        return end

    def predicted_remaining(self, job: Job) -> float:
        """Wall time a waiting job is expected to hold nodes once started, seconds."""
        estimate = job.walltime if job.prediction is None else job.prediction
        work = estimate - job.saved_work
        if work < 0.0:  # max(work, 0.0) without the call (the same value for every float, NaN and -0.0 included)
            work = 0.0
        overhead = self.recovery_time if job.saved_work > 0 else 0.0
        if job.checkpoint_interval is None:
            return work + overhead if overhead else work
        return overhead + work + job.checkpoint_cost * job._checkpoints_left(work)


class PreemptionProgress:
    """PV-EASY's checkpoint/restart or suspend/resume mode for every job of the run.

    Args:
        preemption: the mode and its costs.

    References:
        PV-EASY §4.2 and §5.3 (checkpointing and virtualization as preemption means).
    """

    name = "preemption"

    def __init__(self, preemption: Preemption) -> None:
        self.preemption = preemption

    def start(self, job: Job, now: float, allocation, size: int) -> float:  # noqa: D102
        job.start(now, allocation, size)
        return now + self.preemption.segment_time(job.runtime - job.saved_work, job.preemptions > 0)

    def _kept(self, job: Job, now: float) -> float:
        kept = self.preemption.kept_work(now - job.started_at, job.runtime - job.saved_work, job.preemptions > 0)
        return job.saved_work + kept

    def kill(self, job: Job, now: float, preventive_checkpoint: float | None = None) -> float:
        """A fail-stop failure keeps the completed checkpoints (checkpoint mode) or nothing new; node-seconds lost."""
        elapsed, work, restarted = now - job.started_at, job.runtime - job.saved_work, job.preemptions > 0
        done = job.saved_work + self.preemption.work_done(elapsed, work, restarted)
        kept = self.preemption.kept_work(elapsed, work, restarted) if self.preemption.mode == "checkpoint" else 0.0
        return job.kill(now, done=done, saved=job.saved_work + kept)

    def preempt(self, job: Job, now: float) -> None:  # noqa: D102
        job.preempt(now, self._kept(job, now))

    def predicted_end(self, job: Job, now: float) -> float:  # noqa: D102
        prediction = job.walltime if job.prediction is None else job.prediction
        restarted = job.preemptions > 0
        end = job.started_at + self.preemption.segment_time(max(prediction - job.saved_work, 0.0), restarted)
        if end <= now:
            end = job.started_at + self.preemption.segment_time(max(job.walltime - job.saved_work, 0.0), restarted)
        return max(end, now)

    def predicted_remaining(self, job: Job) -> float:  # noqa: D102
        prediction = job.walltime if job.prediction is None else job.prediction
        return self.preemption.segment_time(max(prediction - job.saved_work, 0.0), job.preemptions > 0)


def make_progress(preemption: Preemption | None, recovery_time: float = 0.0, checkpointing: bool = False):
    """The run's progress model.

    Args:
        preemption: PV-EASY's preemption mode (None or ``kill``: the checkpointing model).
        recovery_time: R of periodic checkpointing.
        checkpointing: whether periodic (CKPT-MIG) checkpointing is on.

    Returns:
        A :class:`CheckpointProgress` or a :class:`PreemptionProgress`.

    Raises:
        ConfigurationError: PV-EASY's checkpoint / suspend mode together with periodic checkpointing
            (each is a way to protect work; a run uses one).
    """
    if preemption is None or preemption.mode == "kill":
        return CheckpointProgress(recovery_time)
    if checkpointing:
        raise ConfigurationError(
            f"preemption mode {preemption.mode!r} (PV-EASY) and periodic checkpointing (CKPT-MIG) both protect work; choose one"
        )
    return PreemptionProgress(preemption)
