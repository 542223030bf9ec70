"""The torus model: a Mesa ``Model`` driven by Mesa's discrete-event simulator.

Events (float time in seconds, the trace's clock): job arrival, job start (inside a scheduling
pass), job end, supernode failure, supernode repair. Events at the same instant run in the
order of :class:`EventPriority`: repairs, then failures, then job ends, then arrivals, then
one scheduling pass that sees all of them.

Mesa's simulator holds callbacks by weak reference, so every event is a bound method of the
model; the model counts events scheduled, run and cancelled, and :meth:`TorusModel.run` checks
that every event was either run or cancelled (or lay after the last job finished).

References:
    BGL-FAULT §6.1 (event-driven simulator: arrival, start, finish, failure events; failed jobs
    restart from the beginning; transient failures).
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from dataclasses import dataclass
from enum import IntEnum

import mesa
import numpy as np
import pandas as pd
from mesa.experimental.devs import DEVSimulator

from agents.scheduler import SchedulerAgent
from agents.supernode import SupernodeAgent
from failure_logs.events import FailureLog
from failure_logs.synthetic import SyntheticFailures
from torus_sim.errors import ConfigurationError, SimulationError
from torus_sim.job import Job, JobState
from torus_sim.partitions import PartitionTable
from torus_sim.platforms.torus import NO_JOB, TorusPlatform
from torus_sim.policies.krevat import KrevatScheduler, Repack, Start
from torus_sim.policies.placement import MfpPlacement
from torus_sim.policies.resilience import ResiliencePolicy
from torus_sim.topology import BGL_SUPERNODE_TORUS, Torus
from torus_sim.workload.jobs import Workload

__all__ = ["DOWNTIME_MODES", "EventPriority", "SimulationRecord", "TorusModel"]

DOWNTIME_MODES = ("transient", "log")
"""``transient``: a failed supernode is back at once (BGL-FAULT §6.1); ``log``: it stays down
until the log's repair time (transient where the log has none). A number of seconds gives every
failure that fixed downtime."""


class EventPriority(IntEnum):
    """Order of events at the same instant (lower runs first).

    Mesa's ``SimulationEvent`` reads ``priority.value``; this enum has the levels the model needs.
    """

    REPAIR = 1
    PREVENTIVE = 2  # a preventive migration due at the instant of its failure runs before it
    FAILURE = 3
    JOB_END = 4
    ARRIVAL = 5
    SCHEDULE = 6


_JOB_COLUMNS = [
    "job_id",
    "user_id",
    "size",
    "partition_size",
    "submitted_at",
    "started_at",
    "finished_at",
    "runtime",
    "walltime",
    "kills",
    "lost_work",
    "migrations",
]
_CAPACITY_COLUMNS = ["time", "free", "queued_demand", "running_jobs", "queued_jobs"]
_FAILURE_COLUMNS = ["time", "supernode", "killed_job", "down_until"]


@dataclass
class SimulationRecord:
    """What a run leaves for the metrics: the event record, not the engine.

    Attributes:
        jobs: one row per completed job (columns of ``_JOB_COLUMNS``; times in seconds).
        capacity: one row per scheduling pass: supernodes free and requested by the queue after it.
        failures: one row per failure: the supernode, the job it killed (-1 if none), down until.
        capacity_total: N, supernodes of the platform.
        counters: event and action counts (``events_scheduled``, ``migrations``, ...).
    """

    jobs: pd.DataFrame
    capacity: pd.DataFrame
    failures: pd.DataFrame
    capacity_total: int
    counters: dict[str, int]


class TorusModel(mesa.Model):
    """Replay a workload with failures on the torus.

    Args:
        workload: the jobs (they are copied; the workload can serve several runs).
        failures: a failure log, or a :class:`~failure_logs.synthetic.SyntheticFailures`
            request drawn with this model's generator over the workload's submit span.
        scheduler: the policy; Krevat's FCFS + backfilling + migration with MFP placement when None.
        torus: the torus (BG/L's 4x4x8 supernodes by default).
        downtime: ``"transient"``, ``"log"`` or seconds >= 0 (see :data:`DOWNTIME_MODES`).
        seed: seed of the run's one random generator (``self.rng``).
        table: a prebuilt partition table for ``torus`` (saves building one per run).
        step_seconds: simulated seconds one :meth:`step` advances (for ``mesa.batch_run`` and the
            visualization; :meth:`run` does not use steps).
        resilience: periodic / preventive checkpointing, preventive migration and spares
            (:class:`~torus_sim.policies.resilience.ResiliencePolicy`); none by default, as BGL-FAULT.

    Raises:
        ConfigurationError: a job larger than the torus, a partition size with no shape,
            duplicate job ids, an unknown downtime mode, or a failure on a supernode the torus
            does not have.

    References:
        BGL-FAULT §6.1.
    """

    def __init__(
        self,
        workload: Workload,
        failures: FailureLog | SyntheticFailures | None = None,
        scheduler: KrevatScheduler | None = None,
        torus: Torus = BGL_SUPERNODE_TORUS,
        downtime: str | float = "transient",
        seed: int = 0,
        table: PartitionTable | None = None,
        step_seconds: float = 3600.0,
        resilience: ResiliencePolicy | None = None,
    ) -> None:
        super().__init__(seed=seed)
        if not step_seconds > 0:
            raise ConfigurationError(f"step_seconds must be positive, got {step_seconds}")
        self.step_seconds = float(step_seconds)
        if not (
            downtime in DOWNTIME_MODES
            or (isinstance(downtime, (int, float)) and not isinstance(downtime, bool) and downtime >= 0)
        ):
            raise ConfigurationError(f"downtime must be one of {DOWNTIME_MODES} or seconds >= 0, got {downtime!r}")
        self.downtime = downtime
        self.simulator = DEVSimulator()
        self.simulator.setup(self)
        self.platform = TorusPlatform(torus, table)
        self.supernode_agents = [SupernodeAgent(self, index) for index in range(torus.size)]
        self.scheduler = SchedulerAgent(self, scheduler or KrevatScheduler())
        self.jobs = [job.fresh_copy() for job in workload.jobs]
        self._job_by_id: dict[int, Job] = {}
        for job in self.jobs:
            if job.job_id in self._job_by_id:
                raise ConfigurationError(f"duplicate job id {job.job_id} in {workload.source}")
            if job.partition_size > torus.size or job.partition_size != self.platform.round_size(job.partition_size):
                raise ConfigurationError(
                    f"job {job.job_id} needs a partition of {job.partition_size}, which the torus {torus.dims} cannot form"
                )
            self._job_by_id[job.job_id] = job
        self.running_jobs: dict[int, Job] = {}  # job id -> running job (Mesa owns `running`, the run flag)
        self.failed_this_step: list[int] = []  # supernodes that failed during the last step (for the viz)
        self.started_this_step: list[tuple[int, int]] = []  # (job id, partition id) started during the last step
        self.counters: Counter = Counter()
        self.completed = 0
        self._pass_pending = False
        self._down_since = np.full(torus.size, np.nan)
        self.datacollector = mesa.DataCollector(
            model_reporters={
                "time": "now",
                "queued_jobs": lambda model: len(model.scheduler.queue),
                "running_jobs": lambda model: len(model.running_jobs),
                "completed_jobs": "completed",
                "busy_supernodes": lambda model: int(model.platform.busy.sum()),
                "utilization": lambda model: float(model.platform.busy.sum()) / model.platform.capacity,
                "down_supernodes": lambda model: int(model.platform.down.sum()),
                "job_kills": lambda model: model.counters["job_kills"],
                "failures": lambda model: model.counters["failures"],
            },
            tables={"jobs": _JOB_COLUMNS, "capacity": _CAPACITY_COLUMNS, "failures": _FAILURE_COLUMNS},
        )
        if isinstance(failures, SyntheticFailures):
            start, end = workload.span
            failures = failures.generate(self.rng, start, end if end > start else start + 1.0, torus)
        self.failure_log = failures if failures is not None else FailureLog.empty()
        self.failure_log.check_fits(torus.size)
        self.scheduler.policy.attach(self.failure_log, self.rng, torus.size)
        self.resilience = resilience or ResiliencePolicy()
        self._preventive_events: dict[int, object] = {}
        self._moved_at: dict[int, float] = {}  # job id -> time of its last preventive migration
        self._foreseen = np.zeros(len(self.failure_log), dtype=bool)
        self.supernode_mtbf = math.inf
        if self.resilience.active:
            self._setup_resilience(workload)
        for job in self.jobs:
            self._schedule(self._on_arrival, job.submitted_at, EventPriority.ARRIVAL, job)
        for index, (failed_at, supernode, repair_at) in enumerate(
            zip(self.failure_log.failed_at, self.failure_log.supernodes, self.failure_log.repair_at, strict=True)
        ):
            if failed_at < 0:
                self.counters["failures_before_start"] += 1
                continue
            self._schedule(self._on_failure, float(failed_at), EventPriority.FAILURE, int(supernode), float(repair_at), index)
        self.datacollector.collect(self)  # step 0: the state before any event (Mesa's convention)

    # -- event plumbing -------------------------------------------------------------------

    @property
    def now(self) -> float:
        """Current simulated time, seconds."""
        return self.simulator.time

    def _schedule(self, handler, at: float, priority: EventPriority, *args):
        self.counters["events_scheduled"] += 1
        return self.simulator.schedule_event_absolute(handler, at, priority=priority, function_args=list(args))

    def _request_pass(self) -> None:
        if not self._pass_pending:
            self._pass_pending = True
            self._schedule(self._on_schedule_pass, self.now, EventPriority.SCHEDULE)

    def run(self) -> SimulationRecord:
        """Run until every job has completed (and the pass after the last end has run).

        Returns:
            The event record for the metrics.

        Raises:
            SimulationError: events ran out with jobs unfinished, or an event was lost.
        """
        while self.step_event():
            pass
        events = self.simulator.event_list
        if self.completed < len(self.jobs):
            raise SimulationError(f"events ran out with {len(self.jobs) - self.completed} jobs unfinished")
        self.counters["events_after_last_job"] = sum(1 for event in events._events if not event.CANCELED)
        accounted = self.counters["events_run"] + self.counters["events_cancelled"] + self.counters["events_after_last_job"]
        if accounted != self.counters["events_scheduled"]:
            raise SimulationError(f"{self.counters['events_scheduled'] - accounted} scheduled events never ran")
        return self.record()

    def step(self) -> None:
        """Advance ``step_seconds`` of simulated time, then collect the model reporters once.

        This is Mesa's step, for ``mesa.batch_run`` and the visualization: Mesa counts
        ``self.steps`` and the DataCollector's model variables get one row per step (row 0 is the
        state before any event). ``running`` turns False at the first step that finds every job
        completed, so the finished state is the row ``mesa.batch_run`` reports last.
        """
        if not self._unfinished():
            self.running = False
            self.datacollector.collect(self)
            return
        self.failed_this_step = []
        self.started_this_step = []
        horizon = self.now + self.step_seconds
        while self._unfinished() and self._next_event_at() <= horizon:
            self.simulator.run_next_event()
        if self._unfinished():
            self.simulator.time = horizon  # no event before the horizon: the clock moves on
        self.datacollector.collect(self)

    def _unfinished(self) -> bool:
        return (self.completed < len(self.jobs) or self._pass_pending) and len(self.simulator.event_list) > 0

    def _next_event_at(self) -> float:
        """Time of the earliest live event.

        Mesa 3.3's event list is a heapq list; its ``peak_ahead`` walks the list in heap order,
        which is not time order past a cancelled head, so the head is cleaned here.
        """
        heap = self.simulator.event_list._events
        while heap and heap[0].CANCELED:
            heapq.heappop(heap)
        return heap[0].time if heap else math.inf

    def step_event(self) -> bool:
        """Run the next event, unless the run is over.

        Returns:
            False when every job has completed (and the last pass has run) or no event is left.
        """
        if self._unfinished():
            self.simulator.run_next_event()
            return True
        return False

    def record(self) -> SimulationRecord:
        """The event record so far (see :class:`SimulationRecord`)."""
        return SimulationRecord(
            jobs=self.datacollector.get_table_dataframe("jobs"),
            capacity=self.datacollector.get_table_dataframe("capacity"),
            failures=self.datacollector.get_table_dataframe("failures"),
            capacity_total=self.platform.capacity,
            counters=dict(self.counters),
        )

    # -- event handlers (bound methods: Mesa holds them by weak reference) ---------------

    def _on_arrival(self, job: Job) -> None:
        self.counters["events_run"] += 1
        job.arrive()
        self.scheduler.enqueue(job)
        self._request_pass()

    def _on_job_end(self, job: Job) -> None:
        self.counters["events_run"] += 1
        self._cancel_preventive(job)
        self.platform.release(job.partition, job.job_id)
        del self.running_jobs[job.job_id]
        job.finish(self.now)
        self.completed += 1
        self.datacollector.add_table_row(
            "jobs",
            {
                "job_id": job.job_id,
                "user_id": job.user_id,
                "size": job.size,
                "partition_size": job.partition_size,
                "submitted_at": job.submitted_at,
                "started_at": job.started_at,
                "finished_at": job.finished_at,
                "runtime": job.runtime,
                "walltime": job.walltime,
                "kills": job.kills,
                "lost_work": job.lost_work,
                "migrations": job.migrations,
            },
        )
        self._request_pass()

    def _downtime_end(self, repair_at: float) -> float:
        if self.downtime == "transient":
            return self.now
        if self.downtime == "log":
            return repair_at if not math.isnan(repair_at) else self.now
        return self.now + float(self.downtime)

    def _on_failure(self, supernode: int, repair_at: float, index: int = -1) -> None:
        self.counters["events_run"] += 1
        self.counters["failures"] += 1
        killed = None
        job_id = self.platform.job_on(supernode)
        if job_id != NO_JOB:
            job = self.running_jobs.pop(job_id)
            job.end_event.cancel()
            self.counters["events_cancelled"] += 1
            self._cancel_preventive(job)
            self.platform.release(job.partition, job_id)
            preventive = None
            if self.resilience.preventive == "checkpoint" and index >= 0 and self._foreseen[index]:
                preventive = self.resilience.checkpoint_cost
                self.counters["preventive_checkpoints"] += 1
            self.counters["lost_work"] += job.kill(self.now, preventive_checkpoint=preventive)
            self.counters["job_kills"] += 1
            self.scheduler.enqueue(job)
            killed = job_id
        self.supernode_agents[supernode].record_failure(self.now, killed)
        self.failed_this_step.append(supernode)
        self.scheduler.policy.observe_failure(self.now, supernode)
        until = self._downtime_end(repair_at)
        if until > self.now:
            if math.isnan(self._down_since[supernode]):
                self._down_since[supernode] = self.now
            self.platform.take_down(supernode, until)
            if math.isfinite(until):
                self._schedule(self._on_repair, until, EventPriority.REPAIR, supernode)
        self.datacollector.add_table_row(
            "failures",
            {
                "time": self.now,
                "supernode": supernode,
                "killed_job": -1 if killed is None else killed,
                "down_until": until,
            },
        )
        self._request_pass()

    def _on_repair(self, supernode: int) -> None:
        self.counters["events_run"] += 1
        if self.platform.repair(supernode, self.now):
            self.supernode_agents[supernode].downtime += self.now - self._down_since[supernode]
            self._down_since[supernode] = np.nan
            self._request_pass()

    def _on_schedule_pass(self) -> None:
        self.counters["events_run"] += 1
        self._pass_pending = False
        now = self.now
        for action in self.scheduler.plan_pass(now, list(self.running_jobs.values())):
            if isinstance(action, Start):
                self._start(action.job, action.partition_id)
            elif isinstance(action, Repack):
                self._migrate(action.moves)
        self.datacollector.add_table_row(
            "capacity",
            {
                "time": now,
                "free": self.platform.free_count(),
                "queued_demand": self.scheduler.queued_demand(),
                "running_jobs": len(self.running_jobs),
                "queued_jobs": len(self.scheduler.queue),
            },
        )

    # -- actions --------------------------------------------------------------------------

    def _start(self, job: Job, partition_id: int) -> None:
        self.platform.allocate(partition_id, job.job_id)
        job.start(self.now, partition_id, recovery=self.resilience.recovery_time)
        self.running_jobs[job.job_id] = job
        self.started_this_step.append((job.job_id, partition_id))
        self.counters["job_starts"] += 1
        job.end_event = self._schedule(self._on_job_end, job.end_at(), EventPriority.JOB_END, job)
        self._plan_preventive(job)

    def _migrate(self, moves: tuple[tuple[Job, int], ...]) -> None:
        for job, _ in moves:
            self.platform.release(job.partition, job.job_id)
        cost = self.scheduler.policy.migration_cost
        for job, partition_id in moves:
            if job.state is not JobState.RUNNING:
                raise SimulationError(f"cannot migrate {job!r}")
            self.platform.allocate(partition_id, job.job_id)
            job.migrate(self.now, partition_id, cost)
            job.end_event.cancel()
            self.counters["events_cancelled"] += 1
            job.end_event = self._schedule(self._on_job_end, job.end_at(), EventPriority.JOB_END, job)
            self._cancel_preventive(job)
            self._plan_preventive(job)
            self.counters["migrations"] += 1
        self.counters["repacks"] += 1

    # -- resilience: periodic / preventive checkpointing, preventive migration (CKPT-MIG) ------

    def _setup_resilience(self, workload: Workload) -> None:
        policy = self.resilience
        log = self.failure_log
        start, end = workload.span
        span = max(end, float(log.failed_at.max()) if len(log) else end) - start
        self.supernode_mtbf = policy.mtbf or (self.platform.capacity * span / len(log) if len(log) and span > 0 else math.inf)
        for job in self.jobs:
            interval = policy.interval_for(job.partition_size, self.supernode_mtbf)
            if interval is not None and math.isfinite(interval):
                job.checkpoint_interval = interval
                job.checkpoint_cost = policy.checkpoint_cost
        if policy.spares:
            self.platform.reserve_spares(policy.spares)
            largest = self.platform.table.mfp(self.platform.table.pack(self.platform.spare))
            too_big = [job for job in self.jobs if job.partition_size > largest]
            if too_big:
                raise ConfigurationError(
                    f"{policy.spares} spares leave no partition larger than {largest} supernodes, but {len(too_big)} jobs "
                    f"need more (largest {max(job.partition_size for job in too_big)}): use fewer spares or drop those jobs"
                )
        if policy.preventive != "none":
            self._foreseen = self.rng.random(len(log)) < policy.prediction_accuracy
        foreseen_at = log.failed_at[self._foreseen]
        foreseen_on = log.supernodes[self._foreseen]
        self._foreseen_by_supernode = [np.sort(foreseen_at[foreseen_on == n]) for n in range(self.platform.capacity)]

    def _cancel_preventive(self, job: Job) -> None:
        event = self._preventive_events.pop(job.job_id, None)
        if event is not None:
            event.cancel()
            self.counters["events_cancelled"] += 1

    def _plan_preventive(self, job: Job) -> None:
        """Schedule a preventive migration M seconds before the first foreseen failure in the job's partition."""
        if self.resilience.preventive != "migration":
            return
        end = job.end_at()
        first_at, doomed = math.inf, -1
        for supernode in self.platform.members(job.partition):
            times = self._foreseen_by_supernode[supernode]
            k = int(np.searchsorted(times, self.now, side="right"))
            if k < len(times) and times[k] < first_at:
                first_at, doomed = float(times[k]), int(supernode)
        if first_at <= end:
            at = max(self.now, first_at - self.resilience.migration_cost)
            self._preventive_events[job.job_id] = self._schedule(
                self._on_preventive_migration, at, EventPriority.PREVENTIVE, job, doomed
            )

    def _foreseen_before(self, until: float) -> np.ndarray:
        """Bool ``(N,)``: supernodes with a foreseen failure in (now, until]."""
        flags = np.zeros(self.platform.capacity, dtype=bool)
        for supernode, times in enumerate(self._foreseen_by_supernode):
            k = int(np.searchsorted(times, self.now, side="right"))
            flags[supernode] = k < len(times) and times[k] <= until
        return flags

    def _on_preventive_migration(self, job: Job, doomed: int) -> None:
        """Move the job off a supernode that is foreseen to fail (CKPT-MIG, preventive migration).

        The target partition avoids every supernode foreseen to fail before the job would end; if
        no such partition is free, one that avoids the supernodes failing during the move. A job
        moves at most once per instant, so two close failures cannot bounce it back and forth.
        """
        self.counters["events_run"] += 1
        self._preventive_events.pop(job.job_id, None)
        if job.state is not JobState.RUNNING or self._moved_at.get(job.job_id) == self.now:
            return
        table = self.platform.table
        cost = self.resilience.migration_cost
        occupied = self.platform.busy | self.platform.down  # spares are open to migrations
        occupied[self.platform.members(job.partition)] = False
        work_left = job.runtime - job.progress(self.now)
        candidates = np.empty(0, dtype=np.int64)
        for horizon in (self.now + cost + work_left * 2, self.now + cost):
            blocked = occupied | self._foreseen_before(horizon)
            blocked[doomed] = True
            words = table.pack(blocked)
            candidates = table.free_ids_of_size(words, job.partition_size)
            if len(candidates):
                break
        if not len(candidates):
            self.counters["preventive_migrations_failed"] += 1
            return
        target = MfpPlacement().choose(table, job, candidates, words, self.now)
        self.platform.release(job.partition, job.job_id)
        self.platform.allocate(target, job.job_id)
        job.migrate(self.now, target, cost)
        self._moved_at[job.job_id] = self.now
        job.end_event.cancel()
        self.counters["events_cancelled"] += 1
        job.end_event = self._schedule(self._on_job_end, job.end_at(), EventPriority.JOB_END, job)
        self.counters["preventive_migrations"] += 1
        self._plan_preventive(job)
        self._request_pass()
