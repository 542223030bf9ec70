"""The run's state and the wiring of the engine's components: one Mesa ``Model`` for every platform and policy.

:class:`SchedulingModel` owns the run's state (the clock and event list, the generator, the jobs, the
wait queue through its scheduler agent, the running jobs, the platform, the node agents, the counters)
and wires four components that own theirs: :class:`~torus_sim.engine.handlers.EventHandlers` (what each
event does, and the state changes a pass applies), :class:`~torus_sim.engine.scheduling_pass.SchedulingPass`
(a pass asked for, run through the scheduler agent, every action checked),
:class:`~torus_sim.engine.preventive.PreventiveActions` (CKPT-MIG's resilience) and
:class:`~torus_sim.engine.record.RunRecorder` (the tables). It runs any combination of

* a platform: the torus (contiguous rectangular partitions of supernodes) or a cluster of P nodes;
* a workload: jobs submitted over time (an SWF trace) or a batch released at time 0 (RIGID /
  MOLDABLE §5.1 sets, the reference code's files, CKPT-MIG's steady state); rigid or moldable jobs;
* failures: fail-stop node failures (a log or a generator, with downtime, periodic or preventive
  checkpointing, preventive migration and spares) and silent errors found at the end of an attempt
  (f_j per job), alone or together;
* a policy (:mod:`torus_sim.policies`): it reads a :class:`~torus_sim.engine.view.SchedulingView` and
  returns actions; only the engine changes state and time.

Events (float time in seconds, the trace's clock): arrivals (one event per instant), attempt ends
(where the silent-error detector runs), node failures, repairs, preventive migrations, and one
scheduling pass per instant that sees all of them. Same-instant order is :class:`EventPriority`:
repairs, preventive migrations, failures, attempt ends, arrivals, then the pass; so a failure at
the instant an attempt ends kills it. A policy with ``pass_after_each_end`` (RIGID Alg. 1: "whenever
a job completes") also plans right after each attempt end, one end at a time. With
``event_order="each-event"`` every attempt end and every submission is its own event with its own pass
right after it (ends first, in the order the jobs started; submissions in rank order), as CQSim runs
its scheduler (docs/validation).

Every event's callback is a handler of a component, a ``functools.partial`` of its method made at
construction and kept alive by the component (Mesa's own events hold callbacks by weak reference, so a
lambda would silently never run); the events are :class:`~torus_sim.engine.events.EngineEvent`
s on an :class:`~torus_sim.engine.events.EngineSimulator`, Mesa's DEVS simulator with a lighter event.
The model counts events scheduled, run and cancelled, and :meth:`SchedulingModel.run` checks
that every event was run or cancelled (or lay after the last job finished).

References:
    BGL-FAULT §6.1 (event-driven simulation: arrival, start, finish and failure events; failed jobs
    restart from the beginning); RIGID §3, Alg. 1; MOLDABLE §3; PV-EASY §5.1; CKPT-MIG.
"""

from __future__ import annotations

import copy
import heapq
import math
import time
from functools import partial
from typing import NamedTuple

import numpy as np

from agents.node import NodeAgent
from agents.scheduler import SchedulerAgent
from failure_logs.events import FailureLog
from failure_logs.synthetic import GeneratedFailures
from torus_sim.core.errors import ConfigurationError, PolicyError, SimulationError
from torus_sim.core.job import Job
from torus_sim.engine import mesa_core
from torus_sim.engine.arrivals import RunJobs
from torus_sim.engine.counters import RunCounters
from torus_sim.engine.dependent_arrivals import DependentArrivals
from torus_sim.engine.dispatch import DispatchDelay
from torus_sim.engine.effective_size import size_reservations
from torus_sim.engine.events import LEVELS as _LEVELS
from torus_sim.engine.events import EngineSimulator, EventPriority
from torus_sim.engine.guard import (
    DEFAULT_PLAN_TIMEOUT,
    WATCHDOG,
    ExtensionCalls,
    checked_prediction,
    checked_queue_key,
    guarded_job_class,
)
from torus_sim.engine.handlers import EventHandlers
from torus_sim.engine.job_book import JobBook
from torus_sim.engine.maintenance import MaintenanceWindows
from torus_sim.engine.multifactor import Multifactor, PriorityWeights
from torus_sim.engine.node_reservations import HeldNodes, counts_only
from torus_sim.engine.platform_parts import PartBook
from torus_sim.engine.power_states import NodePowerStates
from torus_sim.engine.preventive import PreventiveActions
from torus_sim.engine.prime_time import PrimeTime, PrimeTimeRule
from torus_sim.engine.progress import CheckpointProgress, Preemption, make_progress
from torus_sim.engine.record import RunRecorder, SimulationRecord
from torus_sim.engine.scheduling_pass import SchedulingPass
from torus_sim.engine.settings import RunSettings, StepLog
from torus_sim.engine.tier_preemption import TierPreemption
from torus_sim.engine.view import SchedulingView
from torus_sim.inputs.untrusted import PassTimeout, exits_refused, extension_name, is_builtin_extension
from torus_sim.inputs.workload.jobs import Workload
from torus_sim.machine.partition_table import PartitionTable
from torus_sim.machine.platforms.base import Platform
from torus_sim.machine.platforms.cluster import ClusterPlatform
from torus_sim.machine.platforms.torus import TorusPlatform
from torus_sim.machine.topology import BGL_SUPERNODE_TORUS, Torus
from torus_sim.policies.base import Policy, check_declarations
from torus_sim.policies.context import JobTable, PolicyContext, WorkloadFacts
from torus_sim.policies.resilience import ResiliencePolicy

__all__ = ["DOWNTIME_MODES", "EVENT_ORDERS", "SchedulingModel"]

DOWNTIME_MODES = ("transient", "log")

EVENT_ORDERS = ("instant", "each-event", "each-event-submissions-first")
"""When the scheduler runs: once per instant after all of its events, or after each attempt end and each
submission, ends first at an instant (CQSim's order) or submissions first (RLScheduler's: its simulator
takes the next submission while it is due no later than the next end)."""

_SUBMISSIONS_FIRST = (_LEVELS[EventPriority.FAILURE] + _LEVELS[EventPriority.JOB_END]) / 2
"""The same-instant level of submissions under ``each-event-submissions-first``: after failures, before attempt ends."""
"""``transient``: a failed node is back at once (BGL-FAULT §6.1); ``log``: it stays down until the
log's repair time (transient where the log has none). A number of seconds gives every failure that
fixed downtime."""


_NO_FAILURES = FailureLog.empty()  # shared, never changed


def _walltime(job: Job) -> float:
    """The job's requested time, seconds (what Krevat's backfilling compares with the reservation)."""
    return job.walltime


def _build_platform(platform, table, needs_identities: bool):
    """The run's platform: any object with the :class:`~torus_sim.machine.platforms.base.Platform` protocol, or a shorthand.

    Args:
        platform: a platform object; a :class:`~torus_sim.machine.topology.Torus` (its torus platform) or a node count (a
            cluster, with node identities only when the run needs them); None: BG/L's torus.
        table: a prebuilt partition table for a Torus shorthand, or None.
        needs_identities: failures, a fault-aware placement, resilience or switched-off nodes tell nodes apart.

    Raises:
        ConfigurationError: not a platform, or one without node identities where the run needs them.
    """
    if platform is None:
        platform = BGL_SUPERNODE_TORUS
    if isinstance(platform, Torus):
        return TorusPlatform(platform, table)
    if isinstance(platform, (int, np.integer)) and not isinstance(platform, bool):
        return ClusterPlatform(int(platform), identities=needs_identities)
    if isinstance(platform, Platform):
        if needs_identities and not platform.tracks_nodes:
            raise ConfigurationError("node failures and fault-aware placement need a platform with node identities")
        return platform
    raise ConfigurationError(
        f"a platform is an object with the Platform protocol (torus_sim.machine.platforms.base), a Torus or a node count, got {platform!r}"
    )


def _extensions(policy, runtime_predictor) -> dict:
    """The run's extensions by kind: the policy, its placement and failure predictor, the runtime predictor (None: absent)."""
    placement = getattr(policy, "placement", None)
    return {
        "policy": policy,
        "placement": placement,
        "failure predictor": getattr(placement, "predictor", None),
        "runtime predictor": runtime_predictor,
    }


def _refuse_batch(policy: Policy, name: str) -> None:
    """Refuse the production setting ``name`` with a batch policy.

    Raises:
        ConfigurationError: ``policy`` plans after each attempt end (R-LIST, LPA, ...), not online.
    """
    if policy.pass_after_each_end:
        raise ConfigurationError(f"{name}: {policy.name} plans after each attempt end (a batch policy), not online")


def _limit_stages(user_limits, limits, user_node_seconds=None) -> tuple | None:
    """The limits' stages in order: the users' jobs and nodes, their node-seconds, the groups', the queues'; None: none.

    ``user_limits``: ``(max_jobs, max_nodes)`` or None; ``user_node_seconds``: a number or None; ``limits``: the
    groups' and queues' stages.
    """
    users = (("user", *user_limits, None),) if user_limits is not None else ()
    if user_node_seconds is not None:
        users += (("user node-seconds", user_node_seconds, None, None),)
    return (users + tuple(limits)) or None


def _check_production(
    policy: Policy, interval, limits, priority, maintenance=None, latency=None, prime=None, held=None, dependencies=None
) -> None:
    """The production semantics (a scheduling cycle, limits, the multifactor priority, ...) checked against the policy.

    Raises:
        ConfigurationError: one of them with a batch policy (it plans after each attempt end); the priority with a
            policy that orders its own queue or preempts and reserves by submission rank (PV-EASY's shadow load).
    """
    for name, value in (
        ("sched_min_interval", interval),
        ("per-user limits" if limits is not None and [who for who, *_ in limits] == ["user"] else "limits", limits),
        ("priority", priority),
        ("maintenance windows", maintenance),
        ("dispatch_latency", latency),
        ("prime_time", prime),
        ("effective_size" if held is not None and held[0] is not None else "reservations", held),
        ("dependencies", dependencies),
    ):
        if value is not None:
            _refuse_batch(policy, name)
    if priority is not None and type(policy).queue_key is not Policy.queue_key:
        raise ConfigurationError(f"priority: {policy.name} orders its own queue; the multifactor priority orders FCFS policies'")
    if priority is not None and policy.shadow_load:
        raise ConfigurationError(
            f"priority: {policy.name} preempts and reserves by submission rank (its shadow load), not by a priority "
            "that changes with time"
        )


def _windows(maintenance, drain: bool, workload: Workload, pass_at) -> MaintenanceWindows | None:
    """The run's maintenance windows (:class:`~torus_sim.engine.maintenance.MaintenanceWindows`), or None without any."""
    if maintenance is None:
        return None
    return MaintenanceWindows(maintenance, pass_at, _longest(workload), drain)


def _longest(workload: Workload) -> float:
    """The longest requested time of the workload's jobs, seconds (0 without jobs)."""
    jobs = workload.jobs
    walltimes = jobs.column("walltime") if hasattr(jobs, "column") else [job.walltime for job in jobs]
    return float(np.max(walltimes, initial=0.0))


def _check_arguments(event_order: str, plan_timeout, step_seconds: float, downtime, verification_time: float, interval) -> None:
    """The model's settings checked before anything is made.

    Raises:
        ConfigurationError: an unknown event order or downtime mode, a plan timeout, step or scheduling interval that
            is not positive, a negative verification time, a scheduling interval with a pass after each event.
    """
    if interval is not None and not (
        isinstance(interval, (int, float)) and not isinstance(interval, bool) and 0 < interval < math.inf
    ):
        raise ConfigurationError(
            f"sched_min_interval must be positive seconds (or None: a pass at every instant), got {interval!r}"
        )
    if interval is not None and event_order != "instant":
        raise ConfigurationError(
            f"sched_min_interval runs the pass at most once per {interval:g} s; event_order={event_order!r} runs one after "
            "each event: choose one (event_order='instant' with the interval)"
        )
    if event_order not in EVENT_ORDERS:
        raise ConfigurationError(f"event_order must be one of {', '.join(EVENT_ORDERS)}, got {event_order!r}")
    if plan_timeout is not None and not plan_timeout > 0:
        raise ConfigurationError(f"plan_timeout must be positive seconds (or None: no limit), got {plan_timeout!r}")
    if not step_seconds > 0:
        raise ConfigurationError(f"step_seconds must be positive, got {step_seconds}")
    if not (
        downtime in DOWNTIME_MODES or (isinstance(downtime, (int, float)) and not isinstance(downtime, bool) and downtime >= 0)
    ):
        raise ConfigurationError(f"downtime must be one of {DOWNTIME_MODES} or seconds >= 0, got {downtime!r}")
    if not verification_time >= 0:
        raise ConfigurationError(f"the verification time V must be >= 0, got {verification_time}")


class _Parts(NamedTuple):
    """What the model makes and hands to the components that keep it (:meth:`SchedulingModel._wire`)."""

    power: object  # the run's power inputs (torus_sim.inputs.energy.power_inputs.PowerInputs) or None
    power_states: NodePowerStates | None
    resilience: ResiliencePolicy
    progress: object  # the job progress model (torus_sim.engine.progress)
    node_agents: list
    held: tuple | None = None  # (effective-size spans or None, reservations of part of the machine) (HeldNodes), or None
    tiers: dict | None = None  # job id -> queue tier, for preemption by tier (TierPreemption), or None
    dependencies: object = None  # the workload's JobDependencies (inputs.workload.dependencies), or None


def _policy_per_part(policy: Policy, divided, parts: _Parts) -> list[Policy]:
    """The run's policy, and on a platform of disjoint partitions a fresh copy of it for each further partition.

    Raises:
        ConfigurationError: on partitions, what is not modelled there: preventive actions (spares, migration),
            switched-off nodes, preemption or suspension (PV-EASY's modes).
    """
    if not divided:
        return [policy]
    if parts.resilience.active or parts.power_states is not None or not isinstance(parts.progress, CheckpointProgress):
        raise ConfigurationError(
            "a platform of partitions runs without preventive actions, switched-off nodes, preemption or suspension: "
            "not modelled across partitions"
        )
    return [policy, *(copy.deepcopy(policy) for _ in divided[1:])]  # before any attach: each its own state


def _held_out(parts: _Parts, platform, pass_at, kill, running) -> HeldNodes | None:
    """The nodes held out by reservations of part of the machine and a smaller effective size, or None without any.

    (:class:`~torus_sim.engine.node_reservations.HeldNodes`; the effective size's spans become count reservations that
    wait, :func:`~torus_sim.engine.effective_size.size_reservations`.)

    Raises:
        ConfigurationError: the spans or the reservations, or switched-off nodes beside them (a held-out node has no
            power state).
    """
    if parts.held is None:
        return None
    spans, reservations = parts.held
    if parts.power_states is not None:
        what = "effective_size" if spans is not None else "reservations"
        raise ConfigurationError(f"{what}: not with switched-off nodes (a held-out node has no power state)")
    sized = size_reservations(spans, platform.capacity) if spans is not None else ()
    agents = parts.node_agents
    return HeldNodes(
        (*sized, *reservations),
        platform,
        pass_at,
        partial(_close_downtime, agents) if agents else None,
        kill,
        running,
    )


def _close_downtime(agents, node: int, now: float) -> None:
    """A node back in service at ``now``: a downtime its agent opened at a failure while it was held out ends here."""
    agent = agents[node]
    if not math.isnan(agent.down_since):
        agent.downtime += now - agent.down_since
        agent.down_since = math.nan


def _tiers(tiers, platform, policy: Policy) -> TierPreemption | None:
    """Preemption by tier (:class:`~torus_sim.engine.tier_preemption.TierPreemption`), or None without tiers.

    Raises:
        ConfigurationError: a batch policy, or a platform where free nodes need not make an allocation (a torus, a
            platform of partitions).
    """
    if tiers is None:
        return None
    _refuse_batch(policy, "preempt_by_tier")
    if not platform.counts_fit or getattr(platform, "parts", None):
        raise ConfigurationError(f"preempt_by_tier: on a cluster of interchangeable nodes only, not a {platform.label}")
    return TierPreemption(tiers)


def _needs_identities(policy: Policy, failures, resilience: ResiliencePolicy, switch_off, held=None) -> bool:
    """Whether the run tells nodes apart: failures, a policy that asks, resilience, warmed nodes, an effective size.

    ``held``: spans of a smaller effective size and reservations that hold nodes out (by id), or None; ``switch_off``: a placement that
    warms switched-off nodes needs their ids.
    """
    fail_stop = failures is not None and (not isinstance(failures, FailureLog) or len(failures) > 0)
    warm = switch_off is not None and getattr(getattr(policy, "placement", None), "uses_power_states", False) is True
    return fail_stop or policy.needs_node_identities or resilience.active or warm or _held_by_id(held)


def _held_by_id(held) -> bool:
    """Whether held-out nodes need identities: a reservation of named nodes or one that kills.

    An effective size's spans and count reservations that wait are held as counts.
    """
    if held is None:
        return False
    _, reservations = held
    return bool(reservations) and not counts_only(reservations)


def _run_jobs(workload: Workload, silent_errors, platform) -> RunJobs:
    """The run's jobs (:class:`~torus_sim.engine.arrivals.RunJobs`), checked against the platform.

    A workload lists its jobs in priority (FCFS / index) order: that is their rank. An online workload's jobs are
    made at their arrival and dropped when they complete; a batch's now.

    Raises:
        ConfigurationError: silent-error counts of the wrong shape or negative, duplicate job ids, a job the platform
            can never run.
    """
    counts = None
    if silent_errors is not None:
        counts = np.asarray(silent_errors)
        if counts.shape != (len(workload.jobs),) or np.any(counts < 0):
            raise ConfigurationError(
                f"silent errors: one count >= 0 per job expected ({len(workload.jobs)}), got shape {counts.shape}"
            )
        counts = counts.tolist()
    run_jobs = RunJobs(workload, counts, streamed=workload.kind == "online")
    duplicate = run_jobs.first_duplicate_id()
    if duplicate is not None:
        raise ConfigurationError(f"duplicate job id {duplicate} in {workload.source}")
    if workload.times is None:
        sizes = run_jobs.partition_sizes()  # size -> the first job asking for it
        for size in sorted(sizes):
            refusal = platform.size_refusal(size)
            if refusal is not None:
                raise ConfigurationError(f"job {sizes[size]} needs {size} nodes, {refusal}")
    return run_jobs


def _keep_queue_indexes(policy: Policy, queue, platform, jobs, progress, reordered: bool) -> None:
    """The wait queue's indexes the policy declares: the waiting jobs by size (torus, FCFS order) and as numpy columns.

    ``reordered``: the queue's order is not the workload's rank order (the multifactor priority changes it with time; a
    feedback replay submits in the run's order): no size index (its slots are the workload's FCFS order).
    """
    fcfs_order = type(policy).queue_key is Policy.queue_key and not reordered  # a fixed key per job: fixed slots per size
    if policy.size_index and platform.table is not None and queue.indexed and fcfs_order:
        remaining = _walltime if policy.size_index == "walltime" else progress.predicted_remaining
        queue.keep_size_index(jobs, remaining, policy.size_index)
    if policy.queue_columns:  # every platform: the passes that cannot use them on one (EASY's on node ids) check
        wanted = policy.queue_columns
        queue.keep_columns(progress.predicted_remaining, wanted == "shortest", always=wanted == "always")


def _runtime_calls(runtime_predictor, calls: ExtensionCalls):
    """The runtime predictor's ``predict`` and ``observe_end`` as the handlers call them (a plug-in's behind the guard), or Nones."""
    if runtime_predictor is None:
        return None, None
    if is_builtin_extension(runtime_predictor):
        return runtime_predictor.predict, runtime_predictor.observe_end
    return (
        partial(checked_prediction, runtime_predictor.predict, calls),
        partial(calls.call, "runtime predictor", "observe_end", runtime_predictor.observe_end),
    )


class SchedulingModel(mesa_core.Model):
    """Run a workload on a platform under a policy, with fail-stop failures and silent errors.

    Args:
        workload: the jobs (copied, so a workload serves several runs).
        policy: the scheduling policy; Krevat's FCFS + backfilling + migration with MFP placement
            when None.
        platform: a :class:`~torus_sim.machine.platforms.torus.TorusPlatform`, a
            :class:`~torus_sim.machine.topology.Torus`, a :class:`~torus_sim.machine.platforms.cluster.ClusterPlatform`
            or a node count P (a cluster); BG/L's 4x4x8 torus when None.
        failures: a fail-stop failure log, or a :class:`~failure_logs.synthetic.GeneratedFailures` (synthetic, a plug-in's model)
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
            a pass that takes longer is stopped with a PolicyError (see :mod:`torus_sim.engine.guard`).
        power: the run's power inputs (job watts, node figures, tariff: :class:`torus_sim.experiments.run_inputs.PowerInputs`)
            when it accounts for power, for the policies that read them; None otherwise.
        event_order: ``instant`` (one pass per instant, after all of its events), ``each-event``
            (a pass right after each attempt end and each submission, ends first at an instant) or
            ``each-event-submissions-first`` (the same, submissions first; :data:`EVENT_ORDERS`).
        sched_min_interval: seconds: a scheduling cycle, the pass asked by an event runs at least this long after
            the last pass (Slurm's ``SchedulerParameters=sched_min_interval``, there in microseconds; production
            schedulers dispatch in cycles of about 10-60 s); None: at the instant of the event (the textbook loop).
        dispatch_latency: seconds from a job's submission to its entry into the wait queue (a production scheduler's
            dispatch delay: LoadLeveler's negotiator cycle, a Slurm job's EligibleTime;
            :class:`~torus_sim.engine.dispatch.DispatchDelay`); its wait counts from its submission. None: at once.
        user_limits: ``(max_jobs, max_nodes)``: the running jobs and the nodes one user may hold at once (either
            None: no such limit); a job over its user's limit waits held, out of the policy's queue (Slurm's
            association limits MaxJobs and MaxTRESPerUser, Maui's MAXJOB and MAXPROC;
            :class:`~torus_sim.engine.limits.UserLimits`). None: no per-user limits.
        user_node_seconds: node-seconds (a cluster's processor-seconds) one user's running jobs may have left at once,
            each running job counting its nodes times its requested time left: a job over it waits held (Maui's
            MAXPS, Slurm's GrpTRESRunMins of a user's association; :class:`~torus_sim.engine.limits.NodeSecondsLimit`).
            None: no such limit.
        limits: ``(who, max_jobs, max_nodes, owner)`` per further owner (``who`` ``group`` or ``queue``; ``owner``:
            ``job -> int``, the job's group or queue), applied after the users' in this order (Slurm's account and
            QOS / partition limits GrpJobs and GrpTRES, Maui's MAXJOB and MAXPROC per GROUP and CLASS;
            :class:`~torus_sim.engine.limits.LimitChain`). Empty: none.
        priority: Slurm's multifactor job priority (:class:`~torus_sim.engine.multifactor.PriorityWeights`: age,
            fair share, job size): the queue in its order, recomputed every calc period; for policies that keep
            FCFS's queue order. None: the policy's order.
        maintenance: maintenance windows, ``(start, end)`` pairs in seconds of the run's clock: no job starts whose
            requested time would reach into one, none during one (a Slurm maintenance reservation of the whole
            machine; :class:`~torus_sim.engine.maintenance.MaintenanceWindows`). None: no windows.
        maintenance_drain: no job starts whose requested time reaches into a window (a planned maintenance); False:
            jobs are only held while a window lasts (an outage the scheduler did not see coming).
        prime_time: a :class:`~torus_sim.engine.prime_time.PrimeTimeRule`: in prime time, jobs asking more than its
            longest requested time wait held (:class:`~torus_sim.engine.prime_time.PrimeTime`); None: no prime time.
        effective_size: ``(start, end, nodes)`` spans in seconds of the run's clock in which only ``nodes`` of the
            machine are usable (:func:`~torus_sim.engine.effective_size.size_reservations`: the others held out as down
            nodes that return at the span's end; nothing killed). None: the whole machine all along.
        reservations: :class:`~torus_sim.engine.node_reservations.NodeReservation` values: part of the machine, by
            count or by name, held out from each one's start to its end, its running jobs killed or waited for
            (:class:`~torus_sim.engine.node_reservations.HeldNodes`). Empty: none.
        tier_preemption: job id -> queue tier: a waiting job of a higher tier that does not fit preempts running jobs
            of lower tiers and starts on their nodes (:class:`~torus_sim.engine.tier_preemption.TierPreemption`;
            clusters). None: no preemption by tier.
        queue_factors: job id -> the priority's queue factor in [0, 1] (:func:`~torus_sim.inputs.workload.queues.queue_factors`),
            for ``priority.queue``; None: none.
        accounts: user id -> account (the log's group) for the priority's fair share by account; None: by user.
        dependencies: the workload's :class:`~torus_sim.inputs.workload.dependencies.JobDependencies`: each job that
            waited for another's end is submitted its think time after that job ends in the run, and every job is
            ranked in the run's submission order (:class:`~torus_sim.engine.dependent_arrivals.DependentArrivals`;
            Zakay and Feitelson, MASCOTS 2014). None: every job at its submit time.

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
        failures: FailureLog | GeneratedFailures | None = None,
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
        event_order: str = "instant",
        power=None,
        sched_min_interval: float | None = None,
        dispatch_latency: float | None = None,
        user_limits: tuple[int | None, int | None] | None = None,
        user_node_seconds: float | None = None,
        limits: tuple = (),
        priority: PriorityWeights | None = None,
        maintenance=None,
        maintenance_drain: bool = True,
        prime_time: PrimeTimeRule | None = None,
        effective_size=None,
        reservations: tuple = (),
        tier_preemption=None,
        queue_factors=None,
        accounts=None,
        dependencies=None,
    ) -> None:
        super().__init__(seed=seed)
        _check_arguments(event_order, plan_timeout, step_seconds, downtime, verification_time, sched_min_interval)
        if policy is None:
            from torus_sim.policies.krevat import KrevatScheduler

            policy = KrevatScheduler()
        check_declarations(policy)
        limits = _limit_stages(user_limits, limits, user_node_seconds)
        held = (effective_size, tuple(reservations)) if effective_size is not None or reservations else None
        _check_production(
            policy, sched_min_interval, limits, priority, maintenance, dispatch_latency, prime_time, held, dependencies
        )
        if runtime_predictor is not None and callable(runtime_predictor) and not hasattr(runtime_predictor, "predict"):
            runtime_predictor = runtime_predictor(self.rng)  # a factory: drawn from the run's generator first
        extensions = {
            kind: extension for kind, extension in _extensions(policy, runtime_predictor).items() if extension is not None
        }
        guarded = not all(is_builtin_extension(extension) for extension in extensions.values())
        self.settings = None  # made once the platform is known (the guard's clock and plan_timeout read it)
        self.calls = ExtensionCalls(
            {kind: extension_name(extension) for kind, extension in extensions.items()}, self._clock, guarded
        )
        resilience = resilience or ResiliencePolicy()
        switch_off = power.switch_off if power is not None else None  # idle nodes switched off (their own node ids on counts)
        self.platform = _build_platform(platform, table, _needs_identities(policy, failures, resilience, switch_off, held))
        fairness = workload.kind == "online" and self.platform.counts_fit if record_fairness is None else record_fairness
        ids = self.platform.counts_fit and self.platform.tracks_nodes  # node id arrays, normalised by the pass
        self.settings = RunSettings(
            downtime, float(verification_time), bool(record), bool(fairness), event_order != "instant", ids, float(step_seconds), plan_timeout, event_order,
            None if sched_min_interval is None else float(sched_min_interval),
        )  # fmt: skip
        power_states = (
            None if switch_off is None else NodePowerStates(self.platform.capacity, switch_off, self.platform.counts_only)
        )
        self._check_supports(policy, workload, guarded)
        self.simulator = EngineSimulator()
        self.simulator.setup(self)
        node_agents = [NodeAgent(self, index) for index in range(self.platform.capacity)] if self.platform.tracks_nodes else []
        custom_key = type(policy).queue_key is not Policy.queue_key
        key = checked_queue_key(policy.queue_key, self.calls) if guarded and custom_key else policy.queue_key
        windows = _windows(maintenance, maintenance_drain, workload, partial(SchedulingModel._pass_at, self))
        multifactor = None if priority is None else Multifactor(priority, self.platform.capacity, queue_factors, accounts)
        dispatch = None if dispatch_latency is None else DispatchDelay(dispatch_latency, partial(SchedulingModel._pass_at, self))
        prime = None if prime_time is None else PrimeTime(prime_time, partial(SchedulingModel._pass_at, self), _longest(workload))
        self.scheduler = SchedulerAgent(self, policy, key, limits, multifactor, windows, dispatch, prime)
        # Mesa 3.3.1 keeps each model alive in Agent._ids (mesa#3179): ~80 MB per BATCH run of a sweep; agents all made
        mesa_core.Agent._ids.pop(self, None)
        progress = make_progress(preemption, resilience.recovery_time, resilience.checkpoint_interval is not None)
        # the running jobs in order of predicted end are kept where that end is fixed for an attempt (a cluster's
        # counts: no periodic checkpoints or preemption arithmetic, no preventive moves); their sizes by rank where
        # the fairness columns or a shadow-load policy ask on a cluster (a sum per pass)
        fixed_ends = isinstance(progress, CheckpointProgress) and not resilience.active
        fairness_on_counts = (self.settings.fairness or policy.shadow_load) and self.platform.counts_fit
        run_jobs = _run_jobs(workload, silent_errors, self.platform)
        self.book = JobBook(run_jobs, fairness_on_counts, fixed_ends and self.platform.counts_fit, workload)
        self.counters = RunCounters()
        self.recorder = RunRecorder(self.platform, self.settings.record, self.settings.fairness, power is not None)
        parts = _Parts(power, power_states, resilience, progress, node_agents, held, tier_preemption, dependencies)
        self._wire(policy, workload, failures, runtime_predictor, guarded, switch_off, parts)
        self.recorder.start(self)  # step 0 of the per-step series: the state before any event (Mesa's convention)

    def _wire(self, policy: Policy, workload: Workload, failures, runtime_predictor, guarded: bool, switch_off, parts) -> None:
        """Make the pass, the view, the failures, the preventive actions and the handlers, each with the parts it uses.

        ``parts`` (:class:`_Parts`): the power inputs and states, the resilience policy, the progress model and the node
        agents, handed to the components that own them (the model keeps none of them).

        The generator is drawn in this order (the golden runs keep it): a generated failure log, the policy's
        ``attach``, the preventive actions' foreseen failures.
        """
        # the head-fits invariant is checked on clusters (counts; a torus check would cost a partition query per pass)
        check_head = policy.starts_head_when_it_fits and self.platform.counts_fit
        self.passes = SchedulingPass(
            clock=self.simulator,
            book=self.book,
            settings=self.settings,
            scheduler=self.scheduler,
            platform=self.platform,
            progress=parts.progress,
            calls=self.calls,
            power=parts.power,
            recorder=self.recorder,
            overran=self._overran,
            check_head=check_head,
            held_nodes=_held_out(
                parts,
                self.platform,
                partial(SchedulingModel._pass_at, self),
                partial(SchedulingModel._reclaim, self),
                self.book.running.values,
            ),
            tiers=_tiers(parts.tiers, self.platform, policy),
        )
        self.view = SchedulingView(
            self.simulator,
            self.book,
            self.scheduler.queue,
            self.platform,
            parts.progress,
            self.passes,
            self.rng,
            self.settings.verification_time,
        )
        if self.settings.fairness:
            self.book.on_stop = self.passes.passed.stopped
        if isinstance(failures, GeneratedFailures):
            start, end = failures.span or workload.span
            failures = failures.generate(self.rng, start, end if end > start else start + 1.0, self.platform)
        failure_log = failures if failures is not None else _NO_FAILURES
        failure_log.check_fits(self.platform.capacity)
        if len(failure_log) and getattr(self.platform, "failure_refusal", None):
            raise ConfigurationError(self.platform.failure_refusal)
        divided = getattr(self.platform, "parts", None)  # disjoint partitions: one instance of the policy each
        policies = _policy_per_part(policy, divided, parts)
        if guarded:  # the jobs, the wait queue and the platform refuse writes while a plug-in's code runs
            self.book.jobs.configure(job_class=guarded_job_class(self.calls))
            self.queue.guard = self.platform.guard = self.calls
            for part in divided or ():
                part.guard = self.calls  # each partition's cluster (the queue's parts share the queue's guard)
        for each, platform in zip(policies, divided or (self.platform,), strict=True):
            context = PolicyContext(
                JobTable(self.book.jobs),
                self.rng,
                platform,
                WorkloadFacts.of(workload),
                failure_log,
                parts.power,
                parts.power_states,
            )
            if guarded:
                self._setup_call("attach", each.attach, context)
            else:
                each.attach(context)
        if divided:
            books = [PartBook() for _ in divided]
            self.book.divide(self.platform.part_of, books)
            views = [
                SchedulingView(
                    self.simulator,
                    books[index],
                    self.queue.parts[index],
                    part,
                    parts.progress,
                    self.passes,
                    self.rng,
                    self.settings.verification_time,
                )
                for index, part in enumerate(divided)
            ]
            self.scheduler.divide(self.platform.route, zip(policies, views, strict=True))
        recorder = self.recorder if self.settings.record else None
        self.preventive = PreventiveActions(
            self.simulator,
            self.book,
            self.counters,
            self.platform,
            failure_log,
            self.rng,
            parts.resilience,
            workload,
            recorder,
            parts.power_states,
            self.passes.request,
        )
        if switch_off is not None and not isinstance(parts.progress, CheckpointProgress):
            raise ConfigurationError(
                "switched-off nodes (idle_off_after) with PV-EASY's checkpoint or suspend mode: not modelled"
            )
        _keep_queue_indexes(  # a feedback replay's submission order is the run's: no fixed FCFS slots either
            policy,
            self.queue,
            self.platform,
            self.book.jobs,
            parts.progress,
            self.scheduler.priority is not None or parts.dependencies is not None,
        )
        predict, observe_end = _runtime_calls(runtime_predictor, self.calls)
        dependent = None if parts.dependencies is None else DependentArrivals(parts.dependencies, len(self.book.jobs))
        event_order = self.settings.event_order
        arrival_level = _SUBMISSIONS_FIRST if event_order == "each-event-submissions-first" else _LEVELS[EventPriority.ARRIVAL]
        self.handlers = EventHandlers(
            clock=self.simulator,
            book=self.book,
            counters=self.counters,
            settings=self.settings,
            step_log=StepLog(),  # what the last step did, for the browser view (a plain run notes nothing)
            platform=self.platform,
            node_agents=parts.node_agents,
            scheduler=self.scheduler,
            progress=parts.progress,
            resilience=parts.resilience,
            calls=self.calls,
            power=parts.power,
            power_states=parts.power_states,
            recorder=self.recorder,
            view=self.view,
            passes=self.passes,
            preventive=self.preventive,
            arrival_level=arrival_level,
            predict=predict,
            observe_end=observe_end,
            dependent=dependent,
        )
        self.passes.bind(self.handlers, self.view)
        self.preventive.bind(self.handlers.job_end)
        self.handlers.schedule_next_arrival()
        log = failure_log
        for index, (failed_at, node, repair_at) in enumerate(zip(log.failed_at, log.supernodes, log.repair_at, strict=True)):
            if failed_at < 0:
                self.counters["failures_before_start"] += 1
                continue
            self._schedule(self.handlers.failure, float(failed_at), EventPriority.FAILURE, int(node), float(repair_at), index)

    def _check_supports(self, policy: Policy, workload: Workload, guarded: bool) -> None:
        """The policy's refusal of the platform or the workload, as a sentence (a plug-in's asked through the guard).

        Raises:
            ConfigurationError: the policy does not support them (its reason).
            PolicyError: a plug-in's ``why_unsupported`` raised or returned something other than a sentence.
        """
        for platform in getattr(self.platform, "parts", None) or (self.platform,):  # each partition, where there are
            if not guarded:
                policy.check_supports(platform, workload)
                continue
            reason = self._setup_call("why_unsupported", policy.why_unsupported, platform, workload)
            if reason is not None and not isinstance(reason, str):
                raise self.calls.refuse("policy", None, f"why_unsupported returned {reason!r}; expected a sentence or None")
            if reason:
                raise ConfigurationError(reason)

    @property
    def queue(self):
        """The wait queue (the scheduler agent's: :class:`~torus_sim.engine.wait_queue.WaitQueue`)."""
        return self.scheduler.queue

    @property
    def policy(self) -> Policy:
        """The run's policy (the scheduler agent's)."""
        return self.scheduler.policy

    @property
    def node_mtbf(self) -> float:
        """One node's mean time between failures, seconds, as the resilience policy estimates it (inf without failures)."""
        return self.preventive.node_mtbf

    def policy_context(self) -> PolicyContext:
        """What the policy may read of the run at attach time: never the model itself (:mod:`torus_sim.policies.context`)."""
        return PolicyContext(
            JobTable(self.book.jobs),
            self.rng,
            self.platform,
            WorkloadFacts.of(self.workload),
            self.failure_log,
            self.power,
            self.power_states,
        )

    # -- the run's inputs and parts, each kept by the component that uses it (read by the browser view, the
    # -- learning environment, the runner and tests)

    @property
    def workload(self) -> Workload:
        """The workload the run's jobs came from (the job book's)."""
        return self.book.workload

    @property
    def failure_log(self):
        """The run's fail-stop failures (:class:`~failure_logs.events.FailureLog`, empty without any; the preventive actions')."""
        return self.preventive.failure_log

    @property
    def power(self):
        """The run's power inputs (:class:`~torus_sim.inputs.energy.power_inputs.PowerInputs`) or None (the pass's)."""
        return self.passes.power

    @property
    def power_states(self):
        """The nodes' switch-off states (:class:`~torus_sim.engine.power_states.NodePowerStates`) or None (the handlers')."""
        return self.handlers.power_states

    @property
    def resilience(self) -> ResiliencePolicy:
        """The run's checkpoint and preventive-action policy (the preventive actions')."""
        return self.preventive.resilience

    @property
    def progress(self):
        """The job progress model (predicted ends, remaining times; the pass's)."""
        return self.passes.progress

    @property
    def node_agents(self) -> list:
        """The node agents, one per node where the platform tracks nodes, else empty (the handlers')."""
        return self.handlers.node_agents

    @property
    def step_log(self) -> StepLog:
        """What the last :meth:`step` did (the handlers')."""
        return self.handlers.step_log

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
            with WATCHDOG.watching(self, self.settings.plan_timeout), exits_refused(f"the policy's {call}"):
                return self.calls.call("policy", call, function, *args)
        except PassTimeout:
            raise self._overran() from None

    def _clock(self) -> float:
        """Simulated time for messages: 0 before the simulator exists (while the model is built)."""
        simulator = getattr(self, "simulator", None)
        return simulator.time if simulator is not None else 0.0

    @property
    def now(self) -> float:
        """Current simulated time, seconds."""
        return self.simulator.time

    def down_count(self) -> int:
        """Nodes down now (0 on a cluster that keeps counts only; the view's count, :meth:`SchedulingView.down_count`)."""
        return self.view.down_count()

    def _reclaim(self, job_id: int) -> None:
        """Kill a running job whose nodes a reservation takes (it is requeued as a failure's victim is)."""
        self.handlers.kill(job_id)

    def _pass_at(self, at: float) -> None:
        """Ask for a scheduling pass at ``at`` (a maintenance window's end: the jobs held before it come back)."""
        self.passes.request_at(at)

    def _schedule(self, handler, at: float, priority: EventPriority, *args):
        return self.simulator.schedule(handler, at, _LEVELS[priority], list(args))

    def _sync_counters(self) -> None:
        """Fold the hot-path counts into :attr:`counters` (:meth:`~torus_sim.engine.counters.RunCounters.sync`)."""
        self.counters.sync(self.simulator, getattr(getattr(self.policy, "placement", None), "diagnostics", None))
        if self.scheduler.limits is not None:  # times a job was put aside over its user's limit
            self.counters["jobs_held"] = self.scheduler.limits.held_ever
        if self.scheduler.maintenance is not None:  # times a job was held before or during a maintenance window
            self.counters["jobs_held_for_maintenance"] = self.scheduler.maintenance.held_ever
        if self.scheduler.prime_time is not None:  # times a long job was held through prime time
            self.counters["jobs_held_for_prime_time"] = self.scheduler.prime_time.held_ever
        if self.handlers.dependent is not None:  # jobs submitted a think time after a job they waited for ended
            self.counters["dependent_submissions"] = self.handlers.dependent.submitted
        if self.passes.tiers is not None:  # jobs started by preempting jobs of lower tiers
            self.counters["jobs_started_by_preemption"] = self.passes.tiers.preemptors
        held = self.passes.held_nodes
        if held is not None:  # node-hours held out by reservations and a smaller effective size; jobs they killed
            self.counters["node_hours_held_out"] = held.hours(self.simulator.time)
            if any(reservation.kill for reservation in held.reservations):
                self.counters["reservation_kills"] = held.kills

    @property
    def moves(self) -> tuple[int, int]:
        """(events run, jobs started) so far: it changes whenever the engine's state may have (a caller's cache key)."""
        return self.simulator.ran, self.counters.starts

    # -- the job book, the settings and the step log, read by the browser view, the learning environment and tests --

    @property
    def run_jobs(self):
        """The run's jobs (:class:`~torus_sim.engine.arrivals.RunJobs`; the job book's)."""
        return self.book.jobs

    @property
    def running_jobs(self) -> dict[int, Job]:
        """Job id -> running job (the job book's; read it, never write it: starts and stops go through the engine)."""
        return self.book.running

    @property
    def completed(self) -> int:
        """Jobs completed so far."""
        return self.book.completed

    @property
    def makespan(self) -> float:
        """The last completion's time, seconds (0 before any)."""
        return self.book.makespan

    @property
    def record_enabled(self) -> bool:
        """The per-job, per-attempt, per-pass and per-failure tables are kept."""
        return self.settings.record

    @property
    def step_seconds(self) -> float:
        """Simulated seconds one :meth:`step` advances."""
        return self.settings.step_seconds

    @property
    def plan_timeout(self) -> float | None:
        """Wall-clock seconds one scheduling pass may take in :meth:`run`, or None."""
        return self.settings.plan_timeout if self.settings is not None else None

    @property
    def failed_this_step(self) -> list[int]:
        """Nodes that failed during the last :meth:`step` (the browser view draws them)."""
        return self.step_log.failed

    @property
    def started_this_step(self) -> list[tuple[int, object]]:
        """``(job id, allocation)`` started during the last :meth:`step`."""
        return self.step_log.started

    def _request_pass(self) -> None:
        self.passes.request()

    def running_ends(self):
        """The running jobs in order of predicted end, or None (:meth:`~torus_sim.engine.handlers.EventHandlers.running_ends`)."""
        return self.handlers.running_ends()

    # -- a pass a caller drives (the Gymnasium environment): the pass component's, under the model's names --

    @property
    def pass_open(self) -> bool:
        """Whether a pass is open for a caller to apply actions (``pause_at_passes`` on)."""
        return self.passes.open

    @property
    def pause_at_passes(self) -> bool:
        """True: a pass opens and waits for a caller (:meth:`apply_action`, :meth:`close_pass`) instead of asking the policy."""
        return self.passes.pause

    @pause_at_passes.setter
    def pause_at_passes(self, value: bool) -> None:
        self.passes.pause = bool(value)

    @property
    def returned_jobs(self) -> list:
        """Jobs killed or preempted since the last pass."""
        return self.passes.returned

    def open_pass(self) -> None:
        """Begin a pass (:meth:`~torus_sim.engine.scheduling_pass.SchedulingPass.begin`)."""
        self.passes.begin()

    def apply_action(self, action) -> None:
        """Check one action of the open pass and apply it (:meth:`~torus_sim.engine.scheduling_pass.SchedulingPass.apply`)."""
        self.passes.apply(action)

    def close_pass(self) -> None:
        """End the open pass (:meth:`~torus_sim.engine.scheduling_pass.SchedulingPass.close`)."""
        self.passes.close()

    def action_refusal(self, action):
        """Why an action cannot be applied now, or None (:meth:`~torus_sim.engine.scheduling_pass.SchedulingPass.action_refusal`)."""
        return self.passes.action_refusal(action)

    def _overran(self) -> PolicyError:
        """The PolicyError for a pass (or a plug-in's call outside one) the watchdog stopped."""
        limit = getattr(self, "_pass_overran", self.plan_timeout)
        if self.calls.stopped is None:
            return self.passes.policy_error(
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

    @property
    def datacollector(self):
        """Mesa's ``DataCollector`` of the per-step series (one row per :meth:`step`, row 0 the state before any event); None with ``record=False``.

        Built on first read (:meth:`~torus_sim.engine.record.RunRecorder.series`): a run that never steps
        never imports Mesa's data collector and pandas. ``mesa.batch_run`` and the browser view read it.
        """
        return self.recorder.series(self)

    def record(self) -> SimulationRecord:
        """The event record so far (:meth:`~torus_sim.engine.record.RunRecorder.record`; tables None with ``record=False``)."""
        self._sync_counters()
        return self.recorder.record(self.counters, self.book.makespan, self.power_states)

    def table(self, name: str):
        """One table of the record so far as a DataFrame (:meth:`~torus_sim.engine.record.RunRecorder.table`)."""
        return self.recorder.table(name)

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
            PolicyError: an extension failed (see :mod:`torus_sim.engine.guard`), a pass ran longer than
                ``plan_timeout``, or an action was refused.
            KeyboardInterrupt: Ctrl-C (or an extension raised it): the run stops, nothing is recorded.
        """
        events = self.simulator.event_list
        run_next_event = self.simulator.run_next_event
        book, passes = self.book, self.passes
        total = len(book)
        try:
            with WATCHDOG.watching(self, self.plan_timeout), exits_refused("the run"):
                if progress:
                    self._run_with_progress()
                while (book.completed < total or passes.pending) and len(events) > 0:
                    run_next_event()
        except PassTimeout:
            raise self._overran() from None
        if book.completed < total:
            raise SimulationError(f"events ran out with {total - book.completed} jobs unfinished")
        self._sync_counters()
        self.counters["events_after_last_job"] = sum(1 for event in events.events() if not event.CANCELED)
        accounted = self.counters["events_run"] + self.counters["events_cancelled"] + self.counters["events_after_last_job"]
        if accounted != self.counters["events_scheduled"]:
            raise SimulationError(f"{self.counters['events_scheduled'] - accounted} scheduled events never ran")
        self.running = False
        self.recorder.close()  # the record's tables become the DataFrames' memory, not a copy of it
        return self.record()

    def _run_with_progress(self, chunk: int = 5000) -> None:
        """Run events in chunks, updating a tqdm bar between them (the plain loop finishes the run).

        Nothing is run here when the bar is off (standard error is not a terminal: tqdm's ``disable=None``).
        """
        from torus_sim.core.progress_bars import progress_bar

        run_next_event = self.simulator.run_next_event
        events, passes, book = self.simulator.event_list, self.passes, self.book
        total = len(book)
        began, done = time.perf_counter(), 0
        with progress_bar(total=total, unit="job", delay=2.0, disable=None, desc=self.policy.name, dynamic_ncols=True) as bar:
            if bar.disable:
                return
            while (book.completed < total or passes.pending) and len(events) > 0:
                for _ in range(chunk):
                    if not ((book.completed < total or passes.pending) and len(events) > 0):
                        break
                    run_next_event()
                    done += 1
                bar.update(book.completed - bar.n)
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
        if not self.settings.record:
            raise SimulationError("step() collects data: build the model with record=True")
        if not self._unfinished():
            self.running = False
            self.datacollector.collect(self)
            return
        self.step_log.begin()
        horizon = self.now + self.settings.step_seconds
        while self._unfinished() and self._next_event_at() <= horizon:
            self.simulator.run_next_event()
        if self._unfinished():
            self.simulator.time = horizon  # no event before the horizon: the clock moves on
        self._sync_counters()
        self.datacollector.collect(self)

    def _unfinished(self) -> bool:
        book = self.book
        return (book.completed < book.count or self.passes.pending) and len(self.simulator.event_list) > 0

    def _next_event_at(self) -> float:
        """Time of the earliest live event.

        Mesa 3.3's event list is a heapq list; its ``peak_ahead`` walks the list in heap order,
        which is not time order past a cancelled head, so the head is cleaned here.
        """
        heap = self.simulator.event_list._events  # (time, priority, unique_id, event) entries
        while heap and heap[0][3].CANCELED:
            heapq.heappop(heap)
        return heap[0][0] if heap else math.inf

    def step_event(self) -> bool:
        """Run the next event, unless the run is over.

        Returns:
            False when every job has completed (and the last pass has run) or no event is left.
        """
        if self._unfinished():
            self.simulator.run_next_event()
            return True
        return False

    # -- resilience: periodic / preventive checkpointing, preventive migration (CKPT-MIG) ------
