"""The engine: one Mesa ``Model`` on Mesa's discrete-event simulator for every platform and policy.

:class:`SchedulingModel` runs any combination of

* a platform: the torus (contiguous rectangular partitions of supernodes) or a cluster of P nodes;
* a workload: jobs submitted over time (an SWF trace) or a batch released at time 0 (RIGID /
  MOLDABLE §5.1 sets, the reference code's files, CKPT-MIG's steady state); rigid or moldable jobs;
* failures: fail-stop node failures (a log or a generator, with downtime, periodic or preventive
  checkpointing, preventive migration and spares) and silent errors found at the end of an attempt
  (f_j per job), alone or together;
* a policy (:mod:`torus_sim.policies`): it reads a :class:`~torus_sim.view.SchedulingView` and
  returns actions; only the engine changes state and time.

Events (float time in seconds, the trace's clock): arrivals (one event per instant), attempt ends
(where the silent-error detector runs), node failures, repairs, preventive migrations, and one
scheduling pass per instant that sees all of them. Same-instant order is :class:`EventPriority`:
repairs, preventive migrations, failures, attempt ends, arrivals, then the pass; so a failure at
the instant an attempt ends kills it. A policy with ``pass_after_each_end`` (RIGID Alg. 1: "whenever
a job completes") also plans right after each attempt end, one end at a time.

Every event's callback is one of the model's handlers, a ``functools.partial`` of a model method
bound at construction and kept alive by the model (Mesa's own events hold callbacks by weak
reference, so a lambda would silently never run); the events are :class:`~torus_sim.events.EngineEvent`
s on an :class:`~torus_sim.events.EngineSimulator`, Mesa's DEVS simulator with a lighter event.
The model counts events scheduled, run and cancelled, and :meth:`SchedulingModel.run` checks
that every event was run or cancelled (or lay after the last job finished).

References:
    BGL-FAULT §6.1 (event-driven simulation: arrival, start, finish and failure events; failed jobs
    restart from the beginning); RIGID §3, Alg. 1; MOLDABLE §3; PV-EASY §5.1; CKPT-MIG.
"""

from __future__ import annotations

import heapq
import math
import time
from array import array
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from enum import IntEnum
from functools import partial

import mesa
import numpy as np
import pandas as pd

from agents.node import NodeAgent
from agents.scheduler import SchedulerAgent
from failure_logs.events import FailureLog
from failure_logs.synthetic import SyntheticFailures
from torus_sim.errors import ConfigurationError, PolicyError, SimulationError
from torus_sim.events import EngineSimulator
from torus_sim.guard import (
    DEFAULT_PLAN_TIMEOUT,
    WATCHDOG,
    ExtensionCalls,
    PassTimeout,
    checked_prediction,
    checked_queue_key,
    exits_refused,
    extension_name,
    guarded_job_class,
    is_builtin_extension,
)
from torus_sim.job import Job, JobState
from torus_sim.partitions import PartitionTable
from torus_sim.passed_jobs import PassedJobs
from torus_sim.platforms.base import interval_text
from torus_sim.platforms.cluster import ClusterPlatform
from torus_sim.platforms.torus import NO_JOB, TorusPlatform
from torus_sim.policies.base import Policy, Preempt, Repack, Reserve, Start, check_declarations
from torus_sim.policies.resilience import ResiliencePolicy
from torus_sim.progress import CheckpointProgress, Preemption, make_progress
from torus_sim.rank_sums import RankSums
from torus_sim.running_ends import RunningEnds
from torus_sim.topology import BGL_SUPERNODE_TORUS, Torus
from torus_sim.view import SchedulingView
from torus_sim.workload.jobs import JobColumns, Workload

__all__ = ["DOWNTIME_MODES", "EventPriority", "SchedulingModel", "SimulationRecord"]

DOWNTIME_MODES = ("transient", "log")
"""``transient``: a failed node is back at once (BGL-FAULT §6.1); ``log``: it stays down until the
log's repair time (transient where the log has none). A number of seconds gives every failure that
fixed downtime."""


class EventPriority(IntEnum):
    """Order of events at the same instant (lower runs first).

    Events carry the level as a plain int (:class:`~torus_sim.events.EngineEvent`).
    """

    REPAIR = 1
    PREVENTIVE = 2  # a preventive migration due at the instant of its failure runs before it
    FAILURE = 3
    JOB_END = 4  # the end of an attempt (completion or silent error)
    ARRIVAL = 5
    SCHEDULE = 6


_LEVELS = {level: int(level) for level in EventPriority}  # the plain ints events carry
_JOB_END = _LEVELS[EventPriority.JOB_END]


JOB_COLUMNS = [
    "job_id",
    "user_id",
    "size",
    "partition_size",
    "submitted_at",
    "first_started_at",
    "started_at",
    "finished_at",
    "runtime",
    "walltime",
    "prediction",
    "attempts",
    "kills",
    "preemptions",
    "silent_errors",
    "lost_work",
    "migrations",
    "time_sum",
]
"""One row per completed job (times in seconds; ``started_at`` the last start, BGL-FAULT's t_s)."""

ATTEMPT_COLUMNS = ["job_id", "attempt", "started_at", "ended_at", "nodes", "outcome", "resources"]
"""One row per attempt; ``outcome`` is completed, silent_error, killed or preempted; ``nodes`` its size;
``resources`` the node (supernode) ids it held at its end as an interval set (``"0-3 7"``), empty
where the platform keeps counts only."""

MIGRATION_COLUMNS = ["job_id", "attempt", "time", "from_resources", "to_resources"]
"""One row per migration of a running job (Krevat's repacking, CKPT-MIG's preventive migration)."""

PASS_COLUMNS = ["time", "free", "queued_demand", "running_jobs", "queued_jobs"]
"""One row per scheduling pass, after it (BGL-FAULT §6.1's f(t) and q(t))."""

FAIRNESS_COLUMNS = [
    "head_job",
    "head_ready",
    "previous_head",
    "previous_reservation_at",
    "head_passed",
    "head_ready_backfilled",
    "head_ready_underestimated",
]
"""With fairness recording, after each pass: the first waiting job (``head_job``, -1 if none);
``head_ready``: it would fit if no lower-priority job were running (the shadow load, PV-EASY §4.1);
the head before the pass and its reservation (``previous_head``, ``previous_reservation_at``);
``head_passed``: running jobs backfilled past it while it was the head; ``head_ready_backfilled``:
it would fit without those; ``head_ready_underestimated``: it would fit without those of them
predicted, at their start, to end by ``previous_reservation_at`` (PV-EASY §3.2, Fig. 1c)."""

COLUMN_TYPES = {
    "capacity": {
        "time": "d",
        "free": "q",
        "queued_demand": "q",
        "running_jobs": "q",
        "queued_jobs": "q",
        "head_job": "q",
        "head_ready": "?",
        "previous_head": "q",
        "previous_reservation_at": "d",
        "head_passed": "q",
        "head_ready_backfilled": "?",
        "head_ready_underestimated": "?",
    },
    "jobs": {
        **dict.fromkeys(JOB_COLUMNS, "d"),
        **dict.fromkeys(
            ["job_id", "user_id", "size", "partition_size", "attempts", "kills", "preemptions", "silent_errors", "migrations"],
            "q",
        ),
    },
    "attempts": {"job_id": "q", "attempt": "q", "started_at": "d", "ended_at": "d", "nodes": "q"},
}
"""Columns the record holds in typed arrays (``d`` float64, ``q`` int64, ``?`` bool), by table; the
others (strings, and the small failure and migration tables) are Python lists. A 450k-job log makes
~900k passes and 450k job rows: as Python objects they were ~0.5 GB, and the same again while pandas
converted them at the end of the run."""

FAILURE_COLUMNS = ["time", "node", "killed_job", "down_until"]
"""One row per fail-stop failure."""


@dataclass
class SimulationRecord:
    """What a run leaves for the metrics: the event record, not the engine.

    Attributes:
        jobs: one row per completed job (:data:`JOB_COLUMNS`).
        attempts: one row per attempt (:data:`ATTEMPT_COLUMNS`).
        capacity: one row per scheduling pass (:data:`PASS_COLUMNS`, plus :data:`FAIRNESS_COLUMNS`
            when recorded).
        failures: one row per failure (:data:`FAILURE_COLUMNS`).
        capacity_total: N, nodes of the platform.
        migrations: one row per migration (:data:`MIGRATION_COLUMNS`).
        counters: event and action counts (``events_scheduled``, ``migrations``, ...).
        makespan: end of the last completed job, seconds.
        platform_kind: ``torus`` or ``cluster``.
    """

    jobs: pd.DataFrame | None
    attempts: pd.DataFrame | None
    capacity: pd.DataFrame | None
    failures: pd.DataFrame | None
    capacity_total: int
    counters: dict[str, int]
    makespan: float = 0.0
    platform_kind: str = "torus"
    migrations: pd.DataFrame | None = None


_NO_FAILURES = FailureLog.empty()  # shared, never changed


def _walltime(job: Job) -> float:
    """The job's requested time, seconds (what Krevat's backfilling compares with the reservation)."""
    return job.walltime


def _build_platform(platform, table, needs_identities: bool):
    if platform is None:
        platform = BGL_SUPERNODE_TORUS
    if isinstance(platform, Torus):
        return TorusPlatform(platform, table)
    if isinstance(platform, (int, np.integer)) and not isinstance(platform, bool):
        return ClusterPlatform(int(platform), identities=needs_identities)
    if isinstance(platform, (TorusPlatform, ClusterPlatform)):
        if platform.kind == "cluster" and needs_identities and not platform.identities:
            raise ConfigurationError("node failures and fault-aware placement need a cluster with node identities")
        return platform
    raise ConfigurationError(f"a platform is a Torus, a TorusPlatform, a ClusterPlatform or a node count, got {platform!r}")


def _arrival_groups(jobs: list[Job]) -> tuple[np.ndarray | None, array]:
    """The jobs grouped by submit time: ``(order, bounds)``.

    Args:
        jobs: the run's jobs in rank order (``submitted_at`` in seconds).

    Returns:
        ``order`` is None when the jobs are in submit order already, else the stable argsort of their
        submit times (int ``(n,)``); group g is positions ``bounds[g]:bounds[g + 1]`` of that order
        (``array('q')``, ``len`` = groups + 1).

    A batch (one submit time) is one group without array work: a RIGID run of 100 jobs spent a sixth
    of its set-up in the numpy calls.
    """
    if jobs:
        first = jobs[0].submitted_at
        if all(job.submitted_at == first for job in jobs):
            return None, array("q", (0, len(jobs)))
    submits = np.fromiter((job.submitted_at for job in jobs), dtype=float, count=len(jobs))
    in_order = bool(np.all(submits[1:] >= submits[:-1]))
    order = None if in_order else np.argsort(submits, kind="stable")
    ordered = submits if in_order else submits[order]
    bounds = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1], True]) if len(ordered) else [0]
    return order, array("q", bounds)  # Python ints when indexed


def _extensions(policy, runtime_predictor) -> dict:
    """The run's extensions by kind: the policy, its placement and failure predictor, the runtime predictor (None: absent)."""
    placement = getattr(policy, "placement", None)
    return {
        "policy": policy,
        "placement": placement,
        "failure predictor": getattr(placement, "predictor", None),
        "runtime predictor": runtime_predictor,
    }


class SchedulingModel(mesa.Model):
    """Run a workload on a platform under a policy, with fail-stop failures and silent errors.

    Args:
        workload: the jobs (copied, so a workload serves several runs).
        policy: the scheduling policy; Krevat's FCFS + backfilling + migration with MFP placement
            when None.
        platform: a :class:`~torus_sim.platforms.torus.TorusPlatform`, a
            :class:`~torus_sim.topology.Torus`, a :class:`~torus_sim.platforms.cluster.ClusterPlatform`
            or a node count P (a cluster); BG/L's 4x4x8 torus when None.
        failures: a fail-stop failure log, or a :class:`~failure_logs.synthetic.SyntheticFailures`
            request drawn with this model's generator over the workload's submit span.
        downtime: ``"transient"``, ``"log"`` or seconds >= 0 (see :data:`DOWNTIME_MODES`).
        resilience: periodic / preventive checkpointing, preventive migration and spares
            (:class:`~torus_sim.policies.resilience.ResiliencePolicy`); none by default, as BGL-FAULT.
        preemption: what a preempted job keeps (PV-EASY's kill, checkpoint or suspend mode).
        runtime_predictor: what the scheduler believes of runtimes (:mod:`predictors.runtime`), or
            a factory taking the model's generator; the walltime when None.
        silent_errors: int ``(n,)``, f_j for each job of the workload in order (the jobs' own when None).
        verification_time: V, seconds added to every attempt for the silent-error detector.
        seed: seed of the run's one random generator (``self.rng``).
        step_seconds: simulated seconds one :meth:`step` advances (``mesa.batch_run``, the browser view).
        record: keep the per-job, per-attempt, per-pass and per-failure tables (off for large batch
            experiments, which need the makespan only).
        record_fairness: add the head's fairness columns to the pass table (default: for online workloads
            on a cluster; on the torus the check costs a partition query per pass, about 15% of a run
            with failures, so it is asked for).
        table: a prebuilt partition table for a torus (saves building one per run).
        plan_timeout: wall-clock seconds one scheduling pass may take in :meth:`run` (None: no limit);
            a pass that takes longer is stopped with a PolicyError (see :mod:`torus_sim.guard`).

    Raises:
        ConfigurationError: the policy does not support the platform or workload (with the reason),
            declares them in a form the engine cannot read,
            a job larger than the platform or with a size the torus cannot form, duplicate job ids,
            an unknown downtime mode, a failure on a node the platform does not have, or silent-error
            counts of the wrong shape.

    References:
        BGL-FAULT §6.1; RIGID §3.2; PV-EASY §5.1.
    """

    def __init__(
        self,
        workload: Workload,
        policy: Policy | None = None,
        platform=None,
        failures: FailureLog | SyntheticFailures | None = None,
        *,
        downtime: str | float = "transient",
        resilience: ResiliencePolicy | None = None,
        preemption: Preemption | None = None,
        runtime_predictor=None,
        silent_errors=None,
        verification_time: float = 0.0,
        seed: int = 0,
        step_seconds: float = 3600.0,
        record: bool = True,
        record_fairness: bool | None = None,
        table: PartitionTable | None = None,
        plan_timeout: float | None = DEFAULT_PLAN_TIMEOUT,
    ) -> None:
        super().__init__(seed=seed)
        if plan_timeout is not None and not plan_timeout > 0:
            raise ConfigurationError(f"plan_timeout must be positive seconds (or None: no limit), got {plan_timeout!r}")
        self.plan_timeout = plan_timeout
        self._in_pass = False  # True while the engine's own pass runs (the watchdog reads it)
        if not step_seconds > 0:
            raise ConfigurationError(f"step_seconds must be positive, got {step_seconds}")
        if not (
            downtime in DOWNTIME_MODES
            or (isinstance(downtime, (int, float)) and not isinstance(downtime, bool) and downtime >= 0)
        ):
            raise ConfigurationError(f"downtime must be one of {DOWNTIME_MODES} or seconds >= 0, got {downtime!r}")
        if not verification_time >= 0:
            raise ConfigurationError(f"the verification time V must be >= 0, got {verification_time}")
        if policy is None:
            from torus_sim.policies.krevat import KrevatScheduler

            policy = KrevatScheduler()
        check_declarations(policy)
        if runtime_predictor is not None and callable(runtime_predictor) and not hasattr(runtime_predictor, "predict"):
            runtime_predictor = runtime_predictor(self.rng)
        extensions = _extensions(policy, runtime_predictor)
        names = {kind: extension_name(extension) for kind, extension in extensions.items() if extension is not None}
        guarded = not all(is_builtin_extension(extension) for extension in extensions.values() if extension is not None)
        self.calls = ExtensionCalls(names, self._clock, guarded)
        self.resilience = resilience or ResiliencePolicy()
        fail_stop = failures is not None and (not isinstance(failures, FailureLog) or len(failures) > 0)
        needs_identities = fail_stop or policy.needs_node_identities or self.resilience.active
        self.platform = _build_platform(platform, table, needs_identities)
        if guarded:  # a plug-in's refusal is a sentence; its crash a PolicyError
            reason = self._setup_call("why_unsupported", policy.why_unsupported, self.platform, workload)
            if reason is not None and not isinstance(reason, str):
                raise self.calls.refuse("policy", None, f"why_unsupported returned {reason!r}; expected a sentence or None")
            if reason:
                raise ConfigurationError(reason)
        else:
            policy.check_supports(self.platform, workload)
        self.step_seconds = float(step_seconds)
        self.downtime = downtime
        self.verification_time = float(verification_time)
        self.record_enabled = bool(record)
        # the head-fits invariant is checked on clusters (counts; a torus check would cost a partition query per pass)
        self.check_head = policy.starts_head_when_it_fits and self.platform.kind == "cluster"
        if record_fairness is None:
            record_fairness = workload.kind == "online" and self.platform.kind == "cluster"
        self.record_fairness = bool(record_fairness)
        self._passed = PassedJobs()  # jobs started past each head (the fairness columns)
        self.workload_kind = workload.kind
        self.simulator = EngineSimulator()
        self.simulator.setup(self)
        # event callbacks, made once and kept by the model (the events hold them; see torus_sim/events.py)
        self._handle_job_end = partial(SchedulingModel._on_job_end, self)
        self._handle_pass = partial(SchedulingModel._on_schedule_pass, self)
        self._handle_arrivals = partial(SchedulingModel._on_arrivals, self)
        self._handle_failure = partial(SchedulingModel._on_failure, self)
        self._handle_repair = partial(SchedulingModel._on_repair, self)
        self._handle_preventive = partial(SchedulingModel._on_preventive_migration, self)
        capacity = self.platform.capacity
        has_nodes = self.platform.kind == "torus" or self.platform.identities
        self.node_agents = [NodeAgent(self, index) for index in range(capacity)] if has_nodes else []
        custom_key = type(policy).queue_key is not Policy.queue_key
        key = checked_queue_key(policy.queue_key, self.calls) if guarded and custom_key else policy.queue_key
        self.scheduler = SchedulerAgent(self, policy, key)
        # Mesa 3.3 keeps every model alive as a key of the class-level Agent._ids counter (mesa#3179,
        # fixed after 3.3.1): a sweep grew by ~80 MB per BATCH run. All agents are made above; drop it.
        mesa.Agent._ids.pop(self, None)
        self.queue = self.scheduler.queue  # the wait queue (the scheduler agent's)
        self.policy = policy
        self.workload = workload
        # a workload lists its jobs in priority (FCFS / index) order: that is their rank
        counts = None
        if silent_errors is not None:
            counts = np.asarray(silent_errors)
            if counts.shape != (len(workload.jobs),) or np.any(counts < 0):
                raise ConfigurationError(
                    f"silent errors: one count >= 0 per job expected ({len(workload.jobs)}), got shape {counts.shape}"
                )
            counts = counts.tolist()
        if isinstance(workload.jobs, JobColumns):  # an SWF log: the run's jobs made from its columns
            self.jobs = workload.jobs.build()
            for job, count in zip(self.jobs, counts, strict=True) if counts is not None else ():
                job.silent_errors = count
        elif counts is None:
            self.jobs = [job.fresh_copy(rank) for rank, job in enumerate(workload.jobs)]
        else:
            self.jobs = [job.fresh_copy(rank, count) for rank, (job, count) in enumerate(zip(workload.jobs, counts, strict=True))]
        self._job_by_id: dict[int, Job] = {job.job_id: job for job in self.jobs}
        if len(self._job_by_id) != len(self.jobs):
            seen: set[int] = set()
            duplicate = next(job.job_id for job in self.jobs if job.job_id in seen or seen.add(job.job_id))
            raise ConfigurationError(f"duplicate job id {duplicate} in {workload.source}")
        if workload.times is None:
            sizes = {job.partition_size for job in self.jobs}
            unformable = self.platform.kind == "torus" or (sizes and max(sizes) > capacity)  # a cluster forms any size
            for size in sizes if unformable else ():
                if size > capacity or size != self.platform.round_size(size):
                    job = next(job for job in self.jobs if job.partition_size == size)
                    what = (
                        f"the torus {self.platform.torus.dims}" if self.platform.kind == "torus" else f"a cluster of {capacity}"
                    )
                    raise ConfigurationError(f"job {job.job_id} needs {size} nodes, which {what} cannot give")
        self.running_jobs: dict[int, Job] = {}  # job id -> running job (Mesa owns `running`, the run flag)
        # the running jobs' sizes by rank, for the fairness columns' head_ready on a cluster (a sum per pass)
        fairness_on_counts = (self.record_fairness or policy.shadow_load) and self.platform.kind == "cluster"
        self._running_ranks = RankSums(len(self.jobs)) if fairness_on_counts else None
        self.view = SchedulingView(self)
        self.returned_jobs: list[Job] = []  # killed or preempted since the last pass
        self.failed_this_step: list[int] = []  # nodes that failed during the last step (for the viz)
        self.started_this_step: list[tuple[int, object]] = []  # (job id, allocation) started during the last step
        self.counters: Counter = Counter()
        self._scheduled = self._run = self._starts = self._silent_errors = 0  # hot-path counts (see _sync_counters)
        self.completed = 0
        self.makespan = 0.0
        self._pass_pending = False
        self.pause_at_passes = False  # True: a pass opens and waits for a caller (apply_action, close_pass)
        self._node_id_allocations = self.platform.kind == "cluster" and self.platform.identities
        self.pass_open = False
        self._pass_head: Job | None = None  # the head and its promise when the open pass began (fairness)
        self._pass_promise: float | None = None
        self._down_since = np.full(capacity, np.nan) if has_nodes else None
        self.datacollector = (
            None
            if not self.record_enabled
            else mesa.DataCollector(
                model_reporters={
                    "time": "now",
                    "queued_jobs": lambda model: len(model.scheduler.queue),
                    "running_jobs": lambda model: len(model.running_jobs),
                    "completed_jobs": "completed",
                    "busy_nodes": lambda model: model.platform.capacity - model.platform.free_count() - model.down_count(),
                    "utilization": lambda model: (
                        1.0 - (model.platform.free_count() + model.down_count()) / model.platform.capacity
                    ),
                    "down_nodes": lambda model: model.down_count(),
                    "job_kills": lambda model: model.counters["job_kills"],
                    # not "failures": mesa.batch_run rows keep the scenario's failures parameter under that name
                    "failures_so_far": lambda model: model.counters["failures"],
                    "preemptions": lambda model: model.counters["preemptions"],
                    "silent_errors": lambda model: model._silent_errors,
                },
                tables={
                    "jobs": JOB_COLUMNS,
                    "attempts": ATTEMPT_COLUMNS,
                    "capacity": PASS_COLUMNS + (FAIRNESS_COLUMNS if self.record_fairness else []),
                    "failures": FAILURE_COLUMNS,
                    "migrations": MIGRATION_COLUMNS,
                },
            )
        )
        if self.datacollector is not None:  # typed columns (Mesa's add_table_row appends to any container)
            for name, types in COLUMN_TYPES.items():
                table = self.datacollector.tables[name]
                for column in table:
                    if column in types:
                        table[column] = array("b" if types[column] == "?" else types[column])
        self._pass_table = self.datacollector.tables["capacity"] if self.datacollector is not None else {}
        if isinstance(failures, SyntheticFailures):
            start, end = failures.span or workload.span
            failures = failures.generate(self.rng, start, end if end > start else start + 1.0, self.platform)
        self.failure_log = failures if failures is not None else _NO_FAILURES
        self.failure_log.check_fits(capacity)
        if guarded:  # the jobs, the wait queue and the platform refuse writes while a plug-in's code runs
            job_class = guarded_job_class(self.calls)
            for job in self.jobs:
                job.__class__ = job_class
            self.queue.guard = self.platform.guard = self.calls
            self._setup_call("attach", policy.attach, self)
        else:
            policy.attach(self)
        self._preventive_events: dict[int, object] = {}
        self._partition_text: dict[int, str] = {}  # partition id -> its supernodes as interval text (attempt rows)
        self._preventive_migration = self.resilience.preventive == "migration"
        self._moved_at: dict[int, float] = {}  # job id -> time of its last preventive migration
        self._foreseen = np.zeros(len(self.failure_log), dtype=bool)
        self.node_mtbf = math.inf
        if self.resilience.active:
            self._setup_resilience(workload)
        self.progress = make_progress(preemption, self.resilience.recovery_time, self.resilience.checkpoint_interval is not None)
        fcfs_order = type(policy).queue_key is Policy.queue_key  # a fixed key per job: fixed slots per size
        if policy.size_index and self.platform.kind == "torus" and self.queue.indexed and fcfs_order:
            remaining = _walltime if policy.size_index == "walltime" else self.progress.predicted_remaining
            self.queue.keep_size_index(self.jobs, remaining, policy.size_index)
        if policy.queue_columns and self.platform.kind == "cluster" and not self.platform.identities:
            self.queue.keep_columns(self.progress.predicted_remaining, shortest=policy.queue_columns == "shortest")
        # the running jobs in order of predicted end, kept between passes where that end is fixed for an
        # attempt (a cluster's counts: no periodic checkpoints or preemption arithmetic, no preventive moves)
        # (made at the first pass that asks, so runs whose policy never does pay nothing per attempt)
        fixed_ends = isinstance(self.progress, CheckpointProgress) and not self.resilience.active
        self._ends_can_be_kept = fixed_ends and self.platform.kind == "cluster"
        self._running_ends: RunningEnds | None = None
        self.runtime_predictor = runtime_predictor
        self._predict = None if runtime_predictor is None else runtime_predictor.predict  # job -> seconds
        self._observe_end = None if runtime_predictor is None else runtime_predictor.observe_end
        if runtime_predictor is not None and not is_builtin_extension(runtime_predictor):
            self._predict = partial(checked_prediction, runtime_predictor.predict, self.calls)
            self._observe_end = partial(self.calls.call, "runtime predictor", "observe_end", runtime_predictor.observe_end)
        # arrivals: the jobs grouped by submit time, groups in time order, jobs in rank order within
        # one; held as positions in submit order (not n lists: a 450k-job log's groups were ~60 MB)
        self._arrival_order, self._arrival_bounds = _arrival_groups(self.jobs)
        # one arrival event in the heap at a time, each scheduling the next: a log of 200k submit times
        # pre-scheduled made every heap operation of the run pay for them (the order is the same:
        # arrivals are the only events of their priority and have distinct times)
        self._next_arrival = 0
        self._schedule_next_arrival()
        for index, (failed_at, node, repair_at) in enumerate(
            zip(self.failure_log.failed_at, self.failure_log.supernodes, self.failure_log.repair_at, strict=True)
        ):
            if failed_at < 0:
                self.counters["failures_before_start"] += 1
                continue
            self._schedule(self._handle_failure, float(failed_at), EventPriority.FAILURE, int(node), float(repair_at), index)
        if self.datacollector is not None:
            self.datacollector.collect(self)  # step 0: the state before any event (Mesa's convention)

    def policy_settings(self) -> str:
        """The policy's own settings in a few words for the run's header (a plug-in's asked through the guard).

        Raises:
            PolicyError: a plug-in's ``settings`` raised or returned something other than text.
        """
        if not self.calls.guarded:
            return self.policy.settings()
        settings = self.calls.call("policy", "settings", self.policy.settings)
        if not isinstance(settings, str):
            raise self.calls.refuse("policy", None, f"settings returned {settings!r}; expected text (or '')")
        return settings

    def _setup_call(self, call: str, function, *args):
        """A plug-in policy's hook called while the model is built, guarded and under the wall-clock limit.

        Raises:
            PolicyError: it raised, exited or ran longer than ``plan_timeout``.
        """
        try:
            with WATCHDOG.watching(self, self.plan_timeout), exits_refused(f"the policy's {call}"):
                return self.calls.call("policy", call, function, *args)
        except PassTimeout:
            raise self._overran() from None

    # -- event plumbing -------------------------------------------------------------------

    def _clock(self) -> float:
        """Simulated time for messages: 0 before the simulator exists (while the model is built)."""
        simulator = getattr(self, "simulator", None)
        return simulator.time if simulator is not None else 0.0

    @property
    def now(self) -> float:
        """Current simulated time, seconds."""
        return self.simulator.time

    def down_count(self) -> int:
        """Nodes down now."""
        platform = self.platform
        if platform.kind == "cluster" and not platform.identities:
            return 0
        return int(np.count_nonzero(platform.down_until > -np.inf))

    def _schedule(self, handler, at: float, priority: EventPriority, *args):
        self._scheduled += 1
        return self.simulator.schedule(handler, at, _LEVELS[priority], list(args))

    def _sync_counters(self) -> None:
        """Fold the hot-path counts into :attr:`counters`."""
        self.counters["events_scheduled"] = self._scheduled
        self.counters["events_run"] = self._run
        self.counters["job_starts"] = self._starts
        self.counters["silent_errors"] = self._silent_errors
        diagnostics = getattr(getattr(self.policy, "placement", None), "diagnostics", None)
        if diagnostics:  # a placement's own counts (the tie-break's, BGL-FAULT §5.2.2); set, not added
            for key, value in diagnostics.items():
                self.counters[key] = value

    def _request_pass(self) -> None:
        if not self._pass_pending:
            self._pass_pending = True
            self._schedule(self._handle_pass, self.now, EventPriority.SCHEDULE)

    def run(self, progress: bool = False) -> SimulationRecord:
        """Run until every job has completed (and the pass after the last end has run).

        Args:
            progress: show a progress bar over the jobs (done / total, simulated day, events per
                second, time left) on standard error; tqdm shows it only on a terminal and only
                once the run has taken 2 s.

        Returns:
            The event record for the metrics.

        Raises:
            SimulationError: events ran out with jobs unfinished (a policy left jobs waiting with
                nothing running), or an event was lost.
            PolicyError: an extension failed (see :mod:`torus_sim.guard`), a pass ran longer than
                ``plan_timeout``, or an action was refused.
            KeyboardInterrupt: Ctrl-C (or an extension raised it): the run stops, nothing is recorded.
        """
        events = self.simulator.event_list
        run_next_event = self.simulator.run_next_event
        total = len(self.jobs)
        try:
            with WATCHDOG.watching(self, self.plan_timeout), exits_refused("the run"):
                if progress:
                    self._run_with_progress()
                while (self.completed < total or self._pass_pending) and len(events) > 0:
                    run_next_event()
        except PassTimeout:
            raise self._overran() from None
        if self.completed < total:
            raise SimulationError(f"events ran out with {total - self.completed} jobs unfinished")
        self._sync_counters()
        self.counters["events_after_last_job"] = sum(1 for event in events._events if not event.CANCELED)
        accounted = self.counters["events_run"] + self.counters["events_cancelled"] + self.counters["events_after_last_job"]
        if accounted != self.counters["events_scheduled"]:
            raise SimulationError(f"{self.counters['events_scheduled'] - accounted} scheduled events never ran")
        self.running = False
        return self.record()

    def _run_with_progress(self, chunk: int = 5000) -> None:
        """Run events in chunks, updating a tqdm bar between them (the plain loop finishes the run)."""
        from tqdm import tqdm

        run_next_event = self.simulator.run_next_event
        began, done = time.perf_counter(), 0
        with tqdm(total=len(self.jobs), unit="job", delay=2.0, disable=None, desc=self.policy.name, dynamic_ncols=True) as bar:
            while self._unfinished():
                for _ in range(chunk):
                    if not self._unfinished():
                        break
                    run_next_event()
                    done += 1
                bar.update(self.completed - bar.n)
                bar.set_postfix_str(
                    f"day {self.now / 86400:,.1f}, {done / (time.perf_counter() - began):,.0f} events/s", refresh=False
                )

    def step(self) -> None:
        """Advance ``step_seconds`` of simulated time, then collect the model reporters once.

        This is Mesa's step, for ``mesa.batch_run`` and the visualization: Mesa counts
        ``self.steps`` and the DataCollector's model variables get one row per step (row 0 is the
        state before any event). ``running`` turns False at the first step that finds every job
        completed, so the finished state is the row ``mesa.batch_run`` reports last.

        Raises:
            SimulationError: the model was built with ``record=False`` (nothing to collect).
        """
        if self.datacollector is None:
            raise SimulationError("step() collects data: build the model with record=True")
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
        self._sync_counters()
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
        """The event record so far (see :class:`SimulationRecord`; tables are None with ``record=False``)."""
        self._sync_counters()
        table = self.table if self.datacollector is not None else lambda name: None
        return SimulationRecord(
            jobs=table("jobs"),
            attempts=table("attempts"),
            capacity=table("capacity"),
            failures=table("failures"),
            capacity_total=self.platform.capacity,
            counters=dict(self.counters),
            makespan=self.makespan,
            platform_kind=self.platform.kind,
            migrations=table("migrations"),
        )

    def table(self, name: str) -> pd.DataFrame:
        """One table of the event record so far as a DataFrame (``jobs``, ``attempts``, ``capacity``, ``failures``, ``migrations``).

        Raises:
            SimulationError: the model was built with ``record=False``.
            KeyError: no table of that name.
        """
        if self.datacollector is None:
            raise SimulationError("no record: the model was built with record=False")
        columns = self.datacollector.tables[name]
        types = COLUMN_TYPES.get(name, {})
        # views of the typed arrays, copied once by pandas (a copy first would double the peak)
        return pd.DataFrame(
            {
                column: np.frombuffer(values, dtype=types[column].replace("?", "b")).astype(types[column], copy=False)
                if column in types
                else values
                for column, values in columns.items()
            },
            copy=True,
        )

    # -- event handlers ------------------------------------------------------------------

    def _schedule_next_arrival(self) -> None:
        group = self._next_arrival
        if group + 1 < len(self._arrival_bounds):
            start, stop = self._arrival_bounds[group], self._arrival_bounds[group + 1]
            if self._arrival_order is None:
                jobs = self.jobs[start:stop]
            else:
                jobs = [self.jobs[position] for position in self._arrival_order[start:stop].tolist()]
            self._next_arrival += 1
            self._schedule(self._handle_arrivals, jobs[0].submitted_at, EventPriority.ARRIVAL, jobs)

    def _on_arrivals(self, jobs: list[Job]) -> None:
        self._schedule_next_arrival()
        self._run += 1
        predict = self._predict
        for job in jobs:
            job.arrive()
            if predict is not None:
                job.prediction = min(predict(job), job.walltime)
        self.queue.extend(jobs)
        self._request_pass()

    def _add_attempt_row(self, job: Job, ended_at: float, outcome: str) -> None:
        self.datacollector.add_table_row(
            "attempts",
            {
                "job_id": job.job_id,
                "attempt": job.attempts,
                "started_at": job.started_at,
                "ended_at": ended_at,
                "nodes": job.allocated_size,
                "outcome": outcome,
                "resources": self._resources(job.allocation),
            },
        )

    def _resources(self, allocation) -> str:
        """The node ids of an allocation as an interval set (Batsim's ``allocated_resources``); "" for counts."""
        platform = self.platform
        if platform.kind == "torus":  # a partition id: its text once per run
            text = self._partition_text.get(allocation)
            if text is None:
                text = self._partition_text[allocation] = interval_text(platform.members(allocation))
            return text
        return interval_text(platform.members(allocation)) if platform.identities else ""

    def _add_migration_row(self, job: Job, old, new) -> None:
        self.datacollector.add_table_row(
            "migrations",
            {
                "job_id": job.job_id,
                "attempt": job.attempts,
                "time": self.now,
                "from_resources": self._resources(old),
                "to_resources": self._resources(new),
            },
        )

    def _on_job_end(self, job: Job) -> None:
        self._run += 1
        now = self.simulator.time
        if self._preventive_events:
            self._cancel_preventive(job)
        self.platform.release(job.allocation, job.job_id)
        self._stop_running(job.job_id)
        failed = job.errors_detected < job.silent_errors
        if self.record_enabled:
            self._add_attempt_row(job, now, "silent_error" if failed else "completed")
        if failed:
            job.fail_attempt(now)
            self._silent_errors += 1
            self.queue.add(job)
        else:
            job.finish(now)
            self._passed.completed(job)  # a completed job never counts again (a killed one may)
            self.completed += 1
            self.makespan = now
            if self._observe_end is not None:
                self._observe_end(job)
            if self.record_enabled:
                self.datacollector.add_table_row(
                    "jobs",
                    {
                        "job_id": job.job_id,
                        "user_id": job.user_id,
                        "size": job.size,
                        "partition_size": job.partition_size,
                        "submitted_at": job.submitted_at,
                        "first_started_at": job.first_started_at,
                        "started_at": job.started_at,
                        "finished_at": job.finished_at,
                        "runtime": job.runtime,
                        "walltime": job.walltime,
                        "prediction": job.walltime if job.prediction is None else job.prediction,
                        "attempts": job.attempts,
                        "kills": job.kills,
                        "preemptions": job.preemptions,
                        "silent_errors": job.errors_detected,
                        "lost_work": job.lost_work,
                        "migrations": job.migrations,
                        "time_sum": job.time_sum,
                    },
                )
        if self.policy.pass_after_each_end:
            self.view.ended = (job, failed)
            self._pass()
            self.view.ended = None
        else:
            self._request_pass()

    def _downtime_end(self, repair_at: float) -> float:
        if self.downtime == "transient":
            return self.now
        if self.downtime == "log":
            return repair_at if not math.isnan(repair_at) else self.now
        return self.now + float(self.downtime)

    def _on_failure(self, node: int, repair_at: float, index: int = -1) -> None:
        self._run += 1
        self.counters["failures"] += 1
        now = self.now
        killed = None
        job_id = self.platform.job_on(node)
        if job_id != NO_JOB:
            job = self._stop_running(job_id)
            job.end_event.cancel()
            self.counters["events_cancelled"] += 1
            self._cancel_preventive(job)
            self.platform.release(job.allocation, job_id)
            preventive = None
            if self.resilience.preventive == "checkpoint" and index >= 0 and self._foreseen[index]:
                preventive = self.resilience.checkpoint_cost
                self.counters["preventive_checkpoints"] += 1
            if self.record_enabled:
                self._add_attempt_row(job, now, "killed")
            self.counters["lost_work"] += self.progress.kill(job, now, preventive)
            self.counters["job_kills"] += 1
            self.scheduler.enqueue(job)
            self.returned_jobs.append(job)
            killed = job_id
        self.node_agents[node].record_failure(now, killed)
        self.failed_this_step.append(node)
        if self.calls.guarded:
            self.calls.call("policy", "observe_failure", self.policy.observe_failure, now, node)
        else:
            self.policy.observe_failure(now, node)
        until = self._downtime_end(repair_at)
        if until > now:
            if math.isnan(self._down_since[node]):
                self._down_since[node] = now
            self.platform.take_down(node, until)
            if math.isfinite(until):
                self._schedule(self._handle_repair, until, EventPriority.REPAIR, node)
        if self.record_enabled:
            self.datacollector.add_table_row(
                "failures", {"time": now, "node": node, "killed_job": -1 if killed is None else killed, "down_until": until}
            )
        self._request_pass()

    def _on_repair(self, node: int) -> None:
        self._run += 1
        if self.platform.repair(node, self.now):
            self.node_agents[node].downtime += self.now - self._down_since[node]
            self._down_since[node] = np.nan
            self._request_pass()

    def _on_schedule_pass(self) -> None:
        self._run += 1
        self._pass_pending = False
        if self.pause_at_passes:  # a caller applies this pass's actions itself (torus_sim.rl)
            self.open_pass()
            self.pass_open = True
            return
        self._pass()

    def _pass(self) -> None:
        """One scheduling pass: ask the policy, check and apply its actions in order, then record the pass.

        Whatever the policy's code raises (``SystemExit`` and bare ``BaseException`` too) ends the run with
        a PolicyError; ``KeyboardInterrupt`` passes (Ctrl-C); a pass longer than ``plan_timeout`` is
        stopped by the watchdog (:mod:`torus_sim.guard`).
        """
        self.open_pass()
        self._in_pass = True
        count = 0
        apply = self.apply_action
        try:
            if self.calls.guarded:
                self._guarded_plan()
            else:
                for action in self.policy.plan(self.view):
                    count += 1
                    if (
                        count > 64
                    ):  # waiting + running is the same all pass long (a start or a preemption moves a job between them)
                        self._check_action_count(count)
                    apply(action)
        except (PolicyError, KeyboardInterrupt):
            raise
        except PassTimeout:
            raise self._overran() from None
        except BaseException as error:  # noqa: BLE001 - whatever a policy raises (or exits with) ends the run with a sentence
            raise self.calls.failure("policy", "plan", error) from error
        finally:
            self._in_pass = False
        self.close_pass()

    def _guarded_plan(self) -> None:
        """A plug-in's pass: its code runs with the guard up (jobs, queue and platform refuse writes); the engine's applies between."""
        calls = self.calls
        apply = self.apply_action
        count = 0
        calls.active = True
        try:
            actions = iter(self.policy.plan(self.view))
            for action in actions:
                calls.active = False
                count += 1
                if count > 64:
                    self._check_action_count(count)
                apply(action)
                calls.active = True
        finally:
            calls.active = False

    def _check_action_count(self, count: int) -> None:
        """Raise PolicyError when a pass returned more actions than waiting + running jobs allow (a loop without progress)."""
        limit = 4 * (len(self.queue) + len(self.running_jobs)) + 64
        if count > limit:
            raise self._policy_error(None, f"returned more than {limit} actions in one pass (a loop without progress?)")

    def _overran(self) -> PolicyError:
        """The PolicyError for a pass (or a plug-in's call outside one) the watchdog stopped."""
        limit = getattr(self, "_pass_overran", self.plan_timeout)
        if self.calls.stopped is None:
            return self._policy_error(
                None,
                f"its pass ran longer than the wall-clock limit of {limit:g} s and was stopped "
                "(plan_timeout, --plan-timeout S: a plan or a placement that never returns?)",
            )
        kind, call = self.calls.stopped
        return self.calls.refuse(
            kind,
            None,
            f"{call} ran longer than the wall-clock limit of {limit:g} s and was stopped (plan_timeout, --plan-timeout S)",
        )

    def open_pass(self) -> None:
        """Begin a scheduling pass: count it and note the head and its promise (the fairness columns compare them at the end).

        The engine's own pass (:meth:`_pass`) and a caller that applies actions itself (the Gymnasium
        environment, :mod:`torus_sim.rl`) both begin here and end with :meth:`close_pass`.
        """
        if self.record_fairness:
            self._pass_head = head = self.queue.head
            self._pass_promise = head.reservation_at if head is not None else None
        self.scheduler.passes += 1

    def apply_action(self, action) -> None:
        """Check one action of the open pass and apply it.

        Args:
            action: :class:`~torus_sim.policies.base.Start`, :class:`~torus_sim.policies.base.Preempt`,
                :class:`~torus_sim.policies.base.Repack` or :class:`~torus_sim.policies.base.Reserve`.

        Raises:
            PolicyError: the action is not one of those, or refers to a job or an allocation that does not
                allow it (:meth:`action_refusal`); nothing was changed.
        """
        kind = type(action)
        if kind is Start:
            job = action.job
            if type(job) is Job and job.queue_key is not None and action.size is None:  # waiting (in the queue)
                reason = self.platform.allocation_refusal(action.allocation, job.partition_size, True)  # the common case
            else:
                reason = self._start_refusal(action)
            if reason is not None:
                raise self._policy_error(getattr(job, "job_id", None), reason)
            if self._node_id_allocations and type(action.allocation) is not np.ndarray:
                action = action._replace(allocation=np.asarray(action.allocation, dtype=np.int64))
            queue = self.queue
            if self.record_fairness and job is not queue.head:
                head_id = queue.head.job_id
                self._start(*action)
                self._passed.passed(job, head_id, self.progress.predicted_end(job, self.now))
            else:
                self._start(*action)
            return
        if kind is Reserve:
            job = action.job
            at = action.at
            if type(job) is Job and job.queue_key is not None and type(at) is float and at >= self.simulator.time - 1e-6:
                job.reservation_at = at  # the common case, checked
                return
        reason = self.action_refusal(action)
        if reason is not None:
            raise self._policy_error(reason[0], reason[1])
        if kind is Repack:
            node_ids = self._node_id_allocations
            self._migrate(tuple((job, np.asarray(new, dtype=np.int64) if node_ids else new) for job, new in action.moves))
        elif kind is Preempt:
            self._preempt(action.job)
        else:
            action.job.reservation_at = float(action.at)

    def close_pass(self) -> None:
        """End the open pass: check that it made progress where it must, then record it.

        Raises:
            SimulationError: a policy that serves the head first left it waiting though it fits.
            PolicyError: nothing runs and the first waiting job fits, yet the pass started nothing
                (the run would stall: no event would ever start it).
        """
        queue = self.queue
        self.pass_open = False
        if self.returned_jobs:
            self.returned_jobs = []
        if self.check_head and queue and self._head_fits(queue.head):
            raise SimulationError(f"the pass left job {queue.head.job_id} waiting with {self.platform.free_count()} nodes free")
        if queue and not self.running_jobs and self._stalls(queue.head):
            head = queue.head
            raise self._policy_error(
                head.job_id,
                f"nothing runs and the first waiting job fits ({head.partition_size} nodes, {self.platform.free_count()} free), "
                "yet the pass started nothing: no event would ever start it",
            )
        if not self.record_enabled:
            return
        row = {
            "time": self.now,
            "free": self.platform.free_count(),
            "queued_demand": self.scheduler.queued_demand(),
            "running_jobs": len(self.running_jobs),
            "queued_jobs": len(queue),
        }
        if self.record_fairness:
            self._fairness_columns(row, queue.head, self._pass_head, self._pass_promise)
        for column, values in self._pass_table.items():  # Mesa's add_table_row without its per-column checks
            values.append(row[column])

    def _stalls(self, head: Job) -> bool:
        """Whether the first waiting (rigid) job fits now: with nothing running, a pass must start something."""
        if head.times is not None:
            return False  # a moldable job's size is the policy's choice
        platform = self.platform
        if platform.kind == "cluster":
            return head.partition_size <= platform.free
        return platform.find(head.partition_size) is not None

    def _policy_error(self, job_id, reason: str) -> PolicyError:
        return PolicyError(extension_name(self.policy), self.now, job_id, reason)

    def _is_job(self, job) -> bool:
        """Whether ``job`` is one of this run's jobs (not a copy, not another run's, not something else)."""
        return isinstance(job, Job) and self._job_by_id.get(job.job_id) is job

    def _start_refusal(self, action: Start) -> str | None:
        """Why a Start cannot be applied, or None (the job waits; the allocation is free, of its size, not down)."""
        job = action.job
        if not self._is_job(job):
            return f"Start names {job!r}, not a job of this run"
        if job.state is not JobState.QUEUED or job not in self.queue:
            return f"Start of job {job.job_id}, which is not waiting (it is {job.state.value})"
        size = action.size
        if size is None:
            size = job.partition_size
        elif job.times is None:
            if size != job.partition_size:
                return f"Start gives rigid job {job.job_id} {size} nodes; it occupies {job.partition_size}"
        elif not (isinstance(size, (int, np.integer)) and 1 <= size <= len(job.times)):
            return f"Start gives moldable job {job.job_id} {size!r} processors; it runs on 1..{len(job.times)}"
        elif action.runtime is None or not (action.runtime > 0 and math.isfinite(action.runtime)):
            return f"Start of moldable job {job.job_id} needs its runtime t_j(p) > 0 for p = {size}, got {action.runtime!r}"
        # spares are not refused: a Krevat repack may start a job where a repacked job held spares
        # (CKPT-MIG with spares); the platform's allocate allows it too
        return self.platform.allocation_refusal(action.allocation, size, spares=True)

    def action_refusal(self, action) -> tuple[int | None, str] | None:
        """Why a Preempt, Repack or Reserve cannot be applied now.

        A preempted job must be running; a repack must move distinct running jobs onto allocations of their
        sizes that are free once all the moved jobs' old allocations are released, and disjoint; a reservation
        is for a waiting job, at a time (seconds) not before now.

        Args:
            action: what a policy returned (anything; a Start is checked by :meth:`apply_action`).

        Returns:
            ``(job id or None, sentence)``, or None when the action can be applied. Nothing is changed.

        References:
            BGL-FAULT §5.1 (migration onto free partitions); PV-EASY §4.2 (preemption).
        """
        kind = type(action)
        if kind is Preempt:
            job = action.job
            if not self._is_job(job) or self.running_jobs.get(job.job_id) is not job:
                return getattr(job, "job_id", None), f"Preempt of {job!r}, which is not running"
            return None
        if kind is Reserve:
            job = action.job
            if not self._is_job(job) or job.state is not JobState.QUEUED:
                return getattr(job, "job_id", None), f"Reserve for {job!r}, which is not waiting"
            try:
                at = float(action.at)
            except (TypeError, ValueError):
                return job.job_id, f"Reserve at {action.at!r}, not a time in seconds"
            if math.isnan(at) or at < self.now - 1e-6:
                return job.job_id, f"Reserve at {at} s, before now ({self.now} s)"
            return None
        if kind is Repack:
            return self._repack_refusal(action.moves)
        return None, f"returned {action!r}, which is not an action (Start, Preempt, Repack or Reserve)"

    def _repack_refusal(self, moves) -> tuple[int | None, str] | None:
        try:
            moves = [(job, new) for job, new in moves]
        except (TypeError, ValueError):
            return None, f"Repack moves must be (job, allocation) pairs, got {moves!r}"
        seen = set()
        for job, _ in moves:
            if not self._is_job(job) or self.running_jobs.get(job.job_id) is not job:
                return getattr(job, "job_id", None), f"Repack moves {job!r}, which is not running"
            if job.job_id in seen:
                return job.job_id, "Repack moves the job twice"
            seen.add(job.job_id)
        platform = self.platform
        if platform.kind == "torus":
            freed = 0
            for job, _ in moves:
                freed |= platform.held_bits(job.allocation)
            taken = 0
            for job, new in moves:
                reason = platform.allocation_refusal(new, job.allocated_size, spares=True, freed=freed)
                if reason is not None:
                    return job.job_id, f"Repack: {reason}"
                bits = platform.held_bits(new)
                if bits & taken:
                    return job.job_id, "Repack puts two jobs on the same supernodes"
                taken |= bits
            return None
        if platform.identities:
            freed = (
                np.concatenate([np.asarray(job.allocation, dtype=np.int64) for job, _ in moves])
                if moves
                else np.zeros(0, np.int64)
            )
            taken: set = set()
            for job, new in moves:
                reason = platform.allocation_refusal(new, job.allocated_size, spares=True, freed=freed)
                if reason is not None:
                    return job.job_id, f"Repack: {reason}"
                nodes = set(np.asarray(new).tolist())
                if nodes & taken:
                    return job.job_id, "Repack puts two jobs on the same nodes"
                taken |= nodes
            return None
        for job, new in moves:
            if new != job.allocated_size:
                return job.job_id, f"Repack: allocation of {new!r} nodes, the job occupies {job.allocated_size}"
        return None

    def _fairness_columns(self, row: dict, head: Job | None, previous_head: Job | None, promised_at: float | None) -> None:
        """Fill a pass row's :data:`FAIRNESS_COLUMNS` (PV-EASY §3.1-3.2, §4.1)."""
        row["head_job"] = -1 if head is None else head.job_id
        row["previous_head"] = -1 if previous_head is None else previous_head.job_id
        row["previous_reservation_at"] = math.nan if promised_at is None else promised_at
        if head is None:
            row["head_ready"] = row["head_ready_backfilled"] = row["head_ready_underestimated"] = False
            row["head_passed"] = 0
            return
        running = self.running_jobs
        rank = head.rank
        if self._running_ranks is not None:  # the same sum as below, from the tree
            row["head_ready"] = self.platform.free + self._running_ranks.above(rank) >= head.partition_size
        else:
            row["head_ready"] = self._could_start_without(head, (job for job in running.values() if job.rank > rank))
        counting, nodes = self._passed.counting(head, running)  # only the jobs whose state changed are looked at
        row["head_passed"] = len(counting)
        if self.platform.kind == "cluster":
            row["head_ready_backfilled"] = self.platform.free + nodes >= head.partition_size
        else:
            row["head_ready_backfilled"] = self._could_start_without(head, [job for job, _ in counting.values()])
        if previous_head is head and promised_at is not None and row["head_ready_backfilled"]:
            last = self._passed.last
            under = (job for job, _ in counting.values() if last[job.job_id][1] <= promised_at)
            row["head_ready_underestimated"] = self._could_start_without(head, under)
        else:
            row["head_ready_underestimated"] = False

    def _head_fits(self, head: Job) -> bool:
        """Whether the first waiting job fits now (a policy that serves the head first must have started it)."""
        return head.partition_size <= self.platform.free

    def _could_start_without(self, head: Job, blockers: Iterable[Job]) -> bool:
        """Whether the head would fit now if the given running jobs were not running (PV-EASY §3.1).

        ``blockers`` may be a generator: a cluster only sums their sizes (a pass asks this of every
        running job, so no list is built there).
        """
        if self.platform.kind == "cluster":
            short = head.partition_size - self.platform.free  # nodes the blockers must give back
            for job in blockers:
                if short <= 0:
                    break
                short -= job.allocated_size
            return short <= 0
        blockers = list(blockers)
        if not blockers:
            return False
        occupancy = self.platform.snapshot()
        for job in blockers:
            occupancy.vacate(job)
        return occupancy.fits(head.partition_size)

    # -- actions --------------------------------------------------------------------------

    def _start(self, job: Job, allocation, size: int | None = None, runtime: float | None = None) -> None:
        self.queue.remove(job)
        if size is not None:  # a moldable job's allocation for this attempt
            job.size = size
            job.runtime = runtime
        platform = self.platform
        platform.allocate(allocation, job.job_id)
        simulator = self.simulator
        end_at = self.progress.start(job, simulator.time, allocation, platform.size_of(allocation))
        if self.verification_time:
            end_at += self.verification_time
        self.running_jobs[job.job_id] = job
        if self._running_ranks is not None:
            self._running_ranks.add(job.rank, job.allocated_size)
        if self._running_ends is not None:
            self._running_ends.add(job)
        if self.datacollector is not None:
            self.started_this_step.append((job.job_id, allocation))
        self._starts += 1
        self._scheduled += 1
        job.end_event = simulator.schedule(self._handle_job_end, end_at, _JOB_END, [job])
        if self._preventive_migration:
            self._plan_preventive(job)

    def running_ends(self) -> RunningEnds | None:
        """The running jobs kept in order of predicted end (:class:`~torus_sim.running_ends.RunningEnds`), or None.

        None where a running job's predicted end can change during its attempt (the torus, periodic
        checkpoints, PV-EASY's checkpoint / suspend modes, preventive moves): sort at each pass there.
        Made from the running jobs at the first call, then kept up to date at every start and stop.
        """
        if self._running_ends is None and self._ends_can_be_kept:
            self._running_ends = RunningEnds()
            for job in self.running_jobs.values():
                self._running_ends.add(job)
        return self._running_ends

    def _stop_running(self, job_id: int) -> Job | None:
        """Take a job off the running set (its end, a kill, a preemption); None when it was not running."""
        job = self.running_jobs.pop(job_id, None)
        if job is not None:
            if self.record_fairness:
                self._passed.stopped(job)
            if self._running_ranks is not None:
                self._running_ranks.add(job.rank, -job.allocated_size)
            if self._running_ends is not None:
                self._running_ends.discard(job)
        return job

    def _preempt(self, job: Job) -> None:
        if self._stop_running(job.job_id) is None:
            raise SimulationError(f"job {job.job_id} is not running")
        job.end_event.cancel()
        self.counters["events_cancelled"] += 1
        self._cancel_preventive(job)
        self.platform.release(job.allocation, job.job_id)
        if self.record_enabled:
            self._add_attempt_row(job, self.now, "preempted")
        self.progress.preempt(job, self.now)
        self.counters["preemptions"] += 1
        self.scheduler.enqueue(job)
        self.returned_jobs.append(job)

    def _migrate(self, moves: tuple) -> None:
        for job, _ in moves:
            self.platform.release(job.allocation, job.job_id)
        cost = self.policy.migration_cost
        for job, allocation in moves:
            if job.state is not JobState.RUNNING:
                raise SimulationError(f"cannot migrate {job!r}")
            if self.record_enabled:
                self._add_migration_row(job, job.allocation, allocation)
            self.platform.allocate(allocation, job.job_id)
            if self._running_ends is not None:
                self._running_ends.discard(job)
            job.migrate(self.now, allocation, cost)
            if self._running_ends is not None:
                self._running_ends.add(job)
            job.end_event.cancel()
            self.counters["events_cancelled"] += 1
            job.end_event = self._schedule(self._handle_job_end, job.end_at(), EventPriority.JOB_END, job)
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
        self.node_mtbf = policy.mtbf or (self.platform.capacity * span / len(log) if len(log) and span > 0 else math.inf)
        for job in self.jobs:
            interval = policy.interval_for(job.partition_size, self.node_mtbf)
            if interval is not None and math.isfinite(interval):
                job.checkpoint_interval = interval
                job.checkpoint_cost = policy.checkpoint_cost
        if policy.spares:
            self.platform.reserve_spares(policy.spares)
            largest = self.platform.largest_free(self.platform.spare)
            too_big = [job for job in self.jobs if job.partition_size > largest]
            if too_big:
                unit = "partition larger than {} supernodes" if self.platform.kind == "torus" else "job larger than {} nodes"
                raise ConfigurationError(
                    f"{policy.spares} spares leave no {unit.format(largest)}, but {len(too_big)} jobs "
                    f"need more (largest {max(job.partition_size for job in too_big)}): use fewer spares or drop those jobs"
                )
        if policy.preventive != "none":
            self._foreseen = self.rng.random(len(log)) < policy.prediction_accuracy
        foreseen_at = log.failed_at[self._foreseen]
        foreseen_on = log.supernodes[self._foreseen]
        self._foreseen_by_node = [np.sort(foreseen_at[foreseen_on == n]) for n in range(self.platform.capacity)]

    def _cancel_preventive(self, job: Job) -> None:
        event = self._preventive_events.pop(job.job_id, None)
        if event is not None:
            event.cancel()
            self.counters["events_cancelled"] += 1

    def _members(self, job: Job) -> np.ndarray:
        return self.platform.members(job.allocation)

    def _plan_preventive(self, job: Job) -> None:
        """Schedule a preventive migration M seconds before the first foreseen failure in the job's nodes."""
        if self.resilience.preventive != "migration":
            return
        end = job.end_at()
        first_at, doomed = math.inf, -1
        for node in self._members(job):
            times = self._foreseen_by_node[node]
            k = int(np.searchsorted(times, self.now, side="right"))
            if k < len(times) and times[k] < first_at:
                first_at, doomed = float(times[k]), int(node)
        if first_at <= end:
            at = max(self.now, first_at - self.resilience.migration_cost)
            self._preventive_events[job.job_id] = self._schedule(
                self._handle_preventive, at, EventPriority.PREVENTIVE, job, doomed
            )

    def _foreseen_before(self, until: float) -> np.ndarray:
        """Bool ``(N,)``: nodes with a foreseen failure in (now, until]."""
        flags = np.zeros(self.platform.capacity, dtype=bool)
        for node, times in enumerate(self._foreseen_by_node):
            k = int(np.searchsorted(times, self.now, side="right"))
            flags[node] = k < len(times) and times[k] <= until
        return flags

    def _preventive_target(self, job: Job, blocked: np.ndarray):
        """A free allocation of the job's size avoiding ``blocked`` nodes, or None."""
        platform = self.platform
        if platform.kind == "cluster":
            free = np.flatnonzero(~blocked)
            return free[: job.allocated_size] if len(free) >= job.allocated_size else None
        from torus_sim.policies.placement import MFP

        table = platform.table
        words = table.pack(blocked)
        candidates = table.free_ids_of_size(words, job.partition_size)
        return MFP.choose(table, job, candidates, words, self.now) if len(candidates) else None

    def _on_preventive_migration(self, job: Job, doomed: int) -> None:
        """Move the job off a node that is foreseen to fail (CKPT-MIG, preventive migration).

        The target avoids every node foreseen to fail before the job would end; if no such
        allocation is free, one that avoids the nodes failing during the move. A job moves at most
        once per instant, so two close failures cannot bounce it back and forth.
        """
        self._run += 1
        self._preventive_events.pop(job.job_id, None)
        if job.state is not JobState.RUNNING or self._moved_at.get(job.job_id) == self.now:
            return
        cost = self.resilience.migration_cost
        occupied = self.platform.busy | self.platform.down  # spares are open to migrations
        occupied[self._members(job)] = False
        work_left = job.runtime - job.progress(self.now)
        target = None
        for horizon in (self.now + cost + work_left * 2, self.now + cost):
            blocked = occupied | self._foreseen_before(horizon)
            blocked[doomed] = True
            target = self._preventive_target(job, blocked)
            if target is not None:
                break
        if target is None:
            self.counters["preventive_migrations_failed"] += 1
            return
        if self.record_enabled:
            self._add_migration_row(job, job.allocation, target)
        self.platform.release(job.allocation, job.job_id)
        self.platform.allocate(target, job.job_id)
        job.migrate(self.now, target, cost)
        self._moved_at[job.job_id] = self.now
        job.end_event.cancel()
        self.counters["events_cancelled"] += 1
        job.end_event = self._schedule(self._handle_job_end, job.end_at(), EventPriority.JOB_END, job)
        self.counters["preventive_migrations"] += 1
        self._plan_preventive(job)
        self._request_pass()
