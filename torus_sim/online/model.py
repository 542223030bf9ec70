"""The engine for online scheduling on a flat platform: arrivals over time, ends, kills, preemptions.

A Mesa model on the DEVS simulator. Same-instant events run in a fixed order: job ends, then
arrivals, then one scheduling pass (:class:`OnlineEvent`). The policy acts only in the pass,
through :meth:`OnlineModel.start` and :meth:`OnlineModel.preempt`.

Preemption modes (PV-EASY §4.2, §5.3):
- ``kill``: the preempted job loses its work and restarts from scratch;
- ``checkpoint``: every job checkpoints every ``checkpoint_interval`` seconds of work, each
  checkpoint costs ``time_cost`` seconds, and a restart costs ``time_cost`` (the paper's worst-case
  simplification, TimeCost = checkpoint + restart); a preempted job keeps the work of its last
  completed checkpoint;
- ``suspend``: every job runs ``slowdown`` slower (virtualization), a preempted job keeps all its
  work and a resume costs ``time_cost``.
"""

from __future__ import annotations

import bisect
import heapq
import math
from collections import Counter
from dataclasses import dataclass
from enum import IntEnum

import mesa
from mesa.experimental.devs import DEVSimulator

from torus_sim.errors import ConfigurationError, SimulationError
from torus_sim.online.jobs import OnlineJob, OnlineWorkload
from torus_sim.platforms.flat import FlatPlatform

__all__ = ["PREEMPTION_MODES", "OnlineEvent", "OnlineModel", "Preemption"]

PREEMPTION_MODES = ("kill", "checkpoint", "suspend")


def _rank(job: OnlineJob) -> int:
    return job.rank


class OnlineEvent(IntEnum):
    """Same-instant order: processors freed first, then new jobs seen, then one pass."""

    JOB_END = 1
    ARRIVAL = 2
    SCHEDULE = 3


@dataclass(frozen=True)
class Preemption:
    """How a preempted job keeps its work (PV-EASY §5.3).

    Attributes:
        mode: ``kill``, ``checkpoint`` or ``suspend``.
        checkpoint_interval: seconds of work between checkpoints (1 h in the paper).
        time_cost: seconds per checkpoint and per restart / resume (60, 120, 180 s in the paper).
        slowdown: fraction by which every job runs slower in ``suspend`` mode (0.05).
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
        """Wall time to run ``work`` seconds of work from a (re)start, overheads included."""
        restart = self.time_cost if restarted and self.mode != "kill" else 0.0
        if self.mode == "checkpoint":
            checkpoints = max(math.ceil(work / self.checkpoint_interval) - 1, 0)
            return restart + work + checkpoints * self.time_cost
        if self.mode == "suspend":
            return restart + work * (1.0 + self.slowdown)
        return work

    def kept_work(self, elapsed: float, work: float, restarted: bool) -> float:
        """Work kept after running ``elapsed`` seconds of a segment that had ``work`` seconds to do."""
        if self.mode == "kill":
            return 0.0
        productive = elapsed - (self.time_cost if restarted else 0.0)
        if productive <= 0:
            return 0.0
        if self.mode == "checkpoint":
            cycles = math.floor(productive / (self.checkpoint_interval + self.time_cost))
            return min(cycles * self.checkpoint_interval, work)
        return min(productive / (1.0 + self.slowdown), work)


class OnlineModel(mesa.Model):
    """Replay jobs submitted over time on P identical processors under an online policy.

    Args:
        workload: the jobs (copied, so a workload serves several runs) and P.
        policy: the scheduling policy (``schedule(model)`` is called once per instant).
        predictor: a runtime predictor (:mod:`predictors.runtime`), or a factory taking the model's
            generator (so the virtual predictor draws from this run's seed).
        preemption: what a preemption keeps (PV-EASY only preempts).
        seed: the run's seed.

    Attributes:
        queue: waiting jobs, highest priority (lowest rank) first.
        running_jobs: job id -> running job.
        counters: preemptions, passes, events.

    References:
        PV-EASY §4 and §5.1 (event-based simulation of a parallel system).
    """

    def __init__(
        self,
        workload: OnlineWorkload,
        policy,
        predictor,
        preemption: Preemption | None = None,
        seed: int = 0,
        step_seconds: float = 3600.0,
    ) -> None:
        super().__init__(seed=seed)
        if not step_seconds > 0:
            raise ConfigurationError(f"step_seconds must be positive, got {step_seconds}")
        self.step_seconds = float(step_seconds)
        self.simulator = DEVSimulator()
        self.simulator.setup(self)
        self.platform = FlatPlatform(workload.processors)
        self.policy = policy
        self.predictor = predictor(self.rng) if callable(predictor) and not hasattr(predictor, "predict") else predictor
        self.preemption = preemption or Preemption()
        self.jobs = [job.fresh_copy() for job in workload.jobs]
        self.queue: list[OnlineJob] = []
        self.running_jobs: dict[int, OnlineJob] = {}
        self.completed = 0
        self.counters: Counter = Counter()
        self._pass_pending = False
        for job in self.jobs:
            self.simulator.schedule_event_absolute(
                self._on_arrival, job.submitted_at, priority=OnlineEvent.ARRIVAL, function_args=[job]
            )
        self.datacollector = mesa.DataCollector(
            model_reporters={
                "time": "now",
                "queued_jobs": lambda model: len(model.queue),
                "running_jobs": lambda model: len(model.running_jobs),
                "completed_jobs": "completed",
                "busy_processors": lambda model: model.platform.capacity - model.free(),
                "utilization": lambda model: 1.0 - model.free() / model.platform.capacity,
                "preemptions": lambda model: model.counters["preemptions"],
            }
        )
        self.datacollector.collect(self)  # step 0: the state before any event (Mesa's convention)

    @property
    def now(self) -> float:
        """Current simulated time, seconds."""
        return self.simulator.time

    # -- queue ------------------------------------------------------------------------------

    def _enqueue(self, job: OnlineJob) -> None:
        bisect.insort(self.queue, job, key=_rank)

    def _dequeue(self, job: OnlineJob) -> None:
        index = bisect.bisect_left(self.queue, job.rank, key=_rank)
        if index >= len(self.queue) or self.queue[index] is not job:
            raise SimulationError(f"job {job.job_id} is not waiting")
        del self.queue[index]

    # -- what a policy may ask --------------------------------------------------------------

    def free(self) -> int:
        """Processors free now."""
        return self.platform.free_count()

    def predicted_remaining(self, job: OnlineJob) -> float:
        """Predicted wall time a waiting job needs once started, seconds."""
        restarted = job.preemptions > 0
        return self.preemption.segment_time(max(job.prediction - job.saved, 0.0), restarted)

    def predicted_end(self, job: OnlineJob) -> float:
        """When a running job is predicted to end; once past its prediction, its kill time (the estimate)."""
        restarted = job.preemptions > 0
        end = job.start_at + self.preemption.segment_time(max(job.prediction - job.saved, 0.0), restarted)
        if end <= self.now and job.end_at is None:
            end = job.start_at + self.preemption.segment_time(max(job.requested_time - job.saved, 0.0), restarted)
        return max(end, self.now)

    def start(self, job: OnlineJob) -> None:
        """Start (or restart, or resume) a waiting job now.

        Raises:
            SimulationError: it is not waiting or does not fit.
        """
        self._dequeue(job)
        self.platform.allocate(job.processors, job.job_id)
        now = self.now
        if job.first_start_at is None:
            job.first_start_at = now
        job.start_at = now
        duration = self.preemption.segment_time(job.runtime - job.saved, job.preemptions > 0)
        job.segment_cost = duration
        job.end_event = self.simulator.schedule_event_absolute(
            self._on_end, now + duration, priority=OnlineEvent.JOB_END, function_args=[job]
        )
        self.running_jobs[job.job_id] = job
        self.counters["starts"] += 1

    def preempt(self, job: OnlineJob) -> None:
        """Preempt a running job now; it goes back to the queue at its priority.

        Raises:
            SimulationError: it is not running.
        """
        if self.running_jobs.pop(job.job_id, None) is None:
            raise SimulationError(f"job {job.job_id} is not running")
        self.simulator.cancel_event(job.end_event)
        self.platform.release(job.processors, job.job_id)
        elapsed = self.now - job.start_at
        job.time_sum += elapsed
        job.saved += self.preemption.kept_work(elapsed, job.runtime - job.saved, job.preemptions > 0)
        job.preemptions += 1
        job.end_event = None
        self.counters["preemptions"] += 1
        self._enqueue(job)

    # -- events -----------------------------------------------------------------------------

    def _request_pass(self) -> None:
        if not self._pass_pending:
            self._pass_pending = True
            self.simulator.schedule_event_now(self._on_pass, priority=OnlineEvent.SCHEDULE)

    def _on_arrival(self, job: OnlineJob) -> None:
        job.prediction = min(self.predictor.predict(job), job.requested_time)
        self._enqueue(job)
        self._request_pass()

    def _on_end(self, job: OnlineJob) -> None:
        del self.running_jobs[job.job_id]
        self.platform.release(job.processors, job.job_id)
        job.time_sum += self.now - job.start_at
        job.end_at = self.now
        job.end_event = None
        self.completed += 1
        self.predictor.observe_end(job)
        self._request_pass()

    def _on_pass(self) -> None:
        self._pass_pending = False
        self.counters["passes"] += 1
        head = self.queue[0] if self.queue else None
        promised_at = head.reservation_at if head is not None else None
        self.policy.schedule(self)
        self._check_fairness(head, promised_at)

    def _check_fairness(self, previous_head: OnlineJob | None, promised_at: float | None) -> None:
        """After a pass: strict fairness and reservation violations of the blocked head.

        Strict fairness (PV-EASY §3.1): the blocked head could start now if no lower-priority job
        were running; the first such instant is its fair start. Reservation violation (§3.2): the
        head's reservation (as it stood before this pass) has come, the head still waits, and
        backfilled lower-priority jobs hold the processors it needs. A reservation missed because
        higher-priority running jobs ran past their predictions is the "benign" case and is not
        counted.
        """
        if not self.queue:
            return
        head = self.queue[0]
        free = self.free()
        if head.processors <= free:
            raise SimulationError(f"the pass left job {head.job_id} waiting with {free} processors free")
        head.blocked = True
        lower = sum(job.processors for job in self.running_jobs.values() if job.rank > head.rank)
        if free + lower >= head.processors:
            if head.fair_start_at is None:
                head.fair_start_at = self.now
            if head is previous_head and promised_at is not None and head.violated_at is None and self.now >= promised_at:
                head.violated_at = promised_at

    def step(self) -> None:
        """Advance ``step_seconds`` of simulated time, then collect the model reporters once.

        Mesa's step, for ``mesa.batch_run`` and visualizations: row 0 of the model variables is the
        state before any event; ``running`` turns False at the first step that finds every job
        finished, so the finished state is the last row ``batch_run`` reports.
        """
        if not self._unfinished():
            self.running = False
            self.datacollector.collect(self)
            return
        horizon = self.now + self.step_seconds
        while self._unfinished() and self._next_event_at() <= horizon:
            self.simulator.run_next_event()
        if self._unfinished():
            self.simulator.time = horizon
        self.datacollector.collect(self)

    def _unfinished(self) -> bool:
        return (self.completed < len(self.jobs) or self._pass_pending) and len(self.simulator.event_list) > 0

    def _next_event_at(self) -> float:
        """Time of the earliest live event (Mesa 3.3's ``peak_ahead`` is not time-ordered past a cancelled head)."""
        heap = self.simulator.event_list._events
        while heap and heap[0].CANCELED:
            heapq.heappop(heap)
        return heap[0].time if heap else math.inf

    def run(self) -> list[OnlineJob]:
        """Run every job to its end.

        Returns:
            The jobs with their record.

        Raises:
            SimulationError: events ran out with jobs unfinished.
        """
        events = self.simulator.event_list
        while len(events) > 0:
            self.simulator.run_next_event()
        if self.completed < len(self.jobs):
            raise SimulationError(f"events ran out with {len(self.jobs) - self.completed} jobs unfinished")
        self.running = False
        return self.jobs
