"""One function builds a model from a resolved scenario: :func:`build_model`.

Every route to the engine comes here: :func:`torus_sim.experiments.runner.run` (and its :class:`~torus_sim.experiments.runner.ConfiguredModel`
for ``mesa.batch_run`` and the browser view), the Gymnasium environment (:mod:`torus_sim.rl.env`), RLScheduler's
protocol (:mod:`torus_sim.rl.rlscheduler`), the batch runners (:mod:`torus_sim.experiments.batch`) and the
checkpoint yields (:mod:`torus_sim.experiments.ckpt_yields`). The scenario is read here and nowhere below:
the engine gets objects (a workload, a policy, a platform, a failure log, resilience and preemption settings).
"""

from __future__ import annotations

import inspect
import math

import numpy as np

from failure_logs.sources import failure_source
from torus_sim.core.errors import ConfigurationError
from torus_sim.engine import (
    LogClock,
    OwnerMap,
    PrimeTimeRule,
    SchedulingModel,
    parse_fairshare_windows,
    parse_prime_time,
    parse_standing_reservations,
    standing_reservation_days,
)
from torus_sim.engine.progress import Preemption
from torus_sim.experiments.extensions import build_policy, runtime_predictor_of
from torus_sim.experiments.run_inputs import batch_set, load_failures, load_workload
from torus_sim.experiments.scenario import LIMIT_FIELDS, Scenario
from torus_sim.inputs.effective_size import (
    STARVED_MIN_IDLE,
    STARVED_MIN_LENGTH,
    effective_size_spans,
    lowest_spans,
    starved_size_spans,
)
from torus_sim.inputs.maintenance import INFERRED, maintenance_windows
from torus_sim.inputs.node_reservations import read_reservations
from torus_sim.inputs.workload.dependencies import BATCH_REFUSED as DEPENDENCIES_BATCH_REFUSED
from torus_sim.inputs.workload.dependencies import workload_dependencies
from torus_sim.inputs.workload.logged import SCHEDULE_FIELDS, own_schedule, workload_log
from torus_sim.inputs.workload.queues import ACCOUNT_FIELDS, QUEUE_FIELDS, job_queue_factors, job_queues, user_accounts
from torus_sim.inputs.workload.shaking import BATCH_REFUSED
from torus_sim.inputs.workload.sources import workload_source
from torus_sim.machine.platforms.kinds import platform_kind
from torus_sim.policies.resilience import ResiliencePolicy

__all__ = ["build_model", "build_platform", "model_arguments", "preemption_of", "resilience_of"]

_ENGINE_KEYWORDS = frozenset(list(inspect.signature(SchedulingModel.__init__).parameters)[5:])
"""The engine's keyword arguments (after ``self, workload, policy, platform, failures``)."""


def resilience_of(scenario: Scenario) -> ResiliencePolicy:
    """The scenario's :class:`~torus_sim.policies.resilience.ResiliencePolicy` (μ for Young's period: ``node_mtbf``)."""
    return ResiliencePolicy(
        mtbf=scenario.node_mtbf,
        checkpoint_interval=scenario.checkpoint_interval,
        checkpoint_cost=scenario.checkpoint_cost,
        recovery_time=scenario.recovery_time,
        preventive=scenario.preventive,
        migration_cost=scenario.preventive_migration_cost,
        spares=scenario.spares,
        prediction_accuracy=scenario.prediction_accuracy,
    )


def preemption_of(scenario: Scenario) -> Preemption:
    """PV-EASY's preemption mode of the scenario."""
    return Preemption(scenario.preemption, scenario.preemption_interval, scenario.time_cost, scenario.slowdown)


def model_arguments(
    scenario: Scenario,
    inputs: dict,
    scenario_index: int = 0,
    record: bool = True,
    node_identities: bool = False,
    build_scenario_policy: bool = True,
) -> tuple[tuple, dict]:
    """The arguments of :class:`~torus_sim.engine.model.SchedulingModel` for one simulation of a scenario.

    Args:
        scenario: the run.
        inputs: what was read so far (workload, failures, batch set) and the sources read for them
            (``workload_source``, ``failure_source``: resolved once, here, when they are read); filled in, for the manifest
            and for the next simulation of the same run.
        scenario_index: which silent-error scenario of a batch.
        record: keep the per-job, per-pass tables.
        node_identities: a cluster keeps node identities even when nothing needs them (drawing).
        build_scenario_policy: False: the caller brings its own policy (the positional policy is None).

    Returns:
        ``(positional arguments, keyword arguments)``.
    """
    if scenario.batch:
        if scenario.shake is not None:
            raise ConfigurationError(BATCH_REFUSED)
        if scenario.dependencies is not None:
            raise ConfigurationError(DEPENDENCIES_BATCH_REFUSED)
        batch = inputs.get("batch")
        if batch is None:  # the source read is kept: the manifest describes what was built, not a second lookup
            inputs["workload_source"] = workload_source(scenario.workload, scenario.workload_params)
            batch = inputs["batch"] = batch_set(scenario, source=inputs["workload_source"])
        workload = batch.workload
        silent = batch.silent_errors[scenario_index] if batch.silent_errors is not None else None
        seed = batch.model_seeds[scenario_index]
        policy = build_policy(scenario, batch=batch) if build_scenario_policy else None
    else:
        if scenario.silent_spec == "drawn":
            from torus_sim.inputs.workload.sources import source_forms

            raise ConfigurationError(f"drawn silent errors need a batch workload ({source_forms('batch')})")
        workload = inputs.get("workload")
        if workload is None:  # a caller's own workload (a window of the learning environment) asks no registry
            inputs["workload_source"] = workload_source(scenario.workload, scenario.workload_params)
            workload = inputs["workload"] = load_workload(
                scenario, source=inputs["workload_source"], log_fields=_log_fields(scenario)[0]
            )
        silent = None
        seed = scenario.seed
        policy = build_policy(scenario) if build_scenario_policy else None
    kind, fields = platform_kind(scenario.platform), scenario.platform_fields()
    nodes, wanted = kind.capacity(fields, workload.processors), kind.job_fields(fields)
    if wanted:  # the platform reads each job's demands (a heterogeneous cluster's memory) from the replayed log
        jobs = workload_log(workload, ("job_id", *wanted), f"the {kind.name} platform") if workload.sha256 else None
        platform = kind.build(fields, nodes, node_identities, jobs=jobs)
    else:
        platform = kind.build(fields, nodes, node_identities)
    if "failures" not in inputs:
        capacity = platform if isinstance(platform, int) else platform.capacity
        inputs["failure_source"] = failure_source(scenario.failure_spec, scenario.failures_params)
        inputs["failures"], inputs["uncovered"] = load_failures(scenario, capacity, workload, inputs["failure_source"])
    keywords = {
        "downtime": scenario.downtime,
        "resilience": resilience_of(scenario),
        "preemption": preemption_of(scenario),
        "runtime_predictor": runtime_predictor_of(scenario),
        "silent_errors": silent,
        "verification_time": scenario.verification_time,
        "seed": seed,
        "record": record,
        "record_fairness": scenario.fairness,
        "plan_timeout": scenario.plan_timeout,
        "event_order": scenario.event_order,
        "sched_min_interval": scenario.sched_min_interval,
        "dispatch_latency": scenario.dispatch_latency,
        "priority": _priority(scenario),
        "user_limits": (
            None
            if scenario.max_jobs_per_user is None and scenario.max_nodes_per_user is None
            else (scenario.max_jobs_per_user, scenario.max_nodes_per_user)
        ),
        "user_node_seconds": scenario.max_node_seconds_per_user,
    }
    keywords.update(_log_readings(scenario, workload, platform if isinstance(platform, int) else platform.capacity))
    if scenario.power:  # read before the run: power-aware policies plan with them
        from torus_sim.experiments.run_inputs import load_power

        jobs = workload.jobs
        ids = getattr(jobs, "job_id", None)
        nodes = platform if isinstance(platform, int) else platform.capacity
        keywords["power"] = inputs.get("power") or load_power(
            scenario, ids if ids is not None else [job.job_id for job in jobs], nodes
        )
        inputs["power"] = keywords["power"]
    return (workload, policy, platform, inputs["failures"]), keywords


def build_model(
    scenario: Scenario,
    inputs: dict | None = None,
    scenario_index: int = 0,
    record: bool = True,
    *,
    policy=None,
    node_identities: bool = False,
    **engine,
) -> SchedulingModel:
    """The engine for one simulation of a scenario: the one place a :class:`SchedulingModel` is built from one.

    The runner, the Gymnasium environment, RLScheduler's protocol, the batch runners and the checkpoint
    yields all come here; what a caller holds already (a window of a log, its failures, a policy it drives)
    it passes in ``inputs``, ``policy`` and ``engine`` instead of building a model by hand.

    Args:
        scenario: the run, resolved (:class:`~torus_sim.experiments.scenario.Scenario`).
        inputs: what was read so far: ``workload``, ``failures`` (with ``uncovered``), ``batch``, ``power``
            (see :func:`model_arguments`); filled in with what this call reads.
        scenario_index: which silent-error scenario of a batch.
        record: keep the per-job, per-pass tables.
        policy: a policy object to run instead of the scenario's (an environment's agent seat, a protocol's
            heuristic); None: the scenario's, built from the registry.
        node_identities: a cluster keeps node identities even when nothing needs them (drawing).
        **engine: engine keywords that replace the scenario's (``silent_errors``, ``event_order``,
            ``record_fairness``, ``resilience``, ``seed``, ...: :class:`SchedulingModel`'s arguments).

    Returns:
        The model, not yet run.

    Raises:
        ConfigurationError: see :func:`model_arguments` and :class:`SchedulingModel`; or an engine keyword
            the model does not take.
    """
    arguments, keywords = model_arguments(
        scenario, {} if inputs is None else inputs, scenario_index, record, node_identities, policy is None
    )
    if policy is not None:
        arguments = (arguments[0], policy, *arguments[2:])
    unknown = sorted(set(engine) - _ENGINE_KEYWORDS)
    if unknown:
        raise ConfigurationError(f"build_model: unknown engine keyword(s) {unknown}; known: {sorted(_ENGINE_KEYWORDS)}")
    return SchedulingModel(*arguments, **{**keywords, **engine})


def build_platform(scenario: Scenario, nodes: int, node_identities: bool = False):
    """The platform of a scenario (its kind's :meth:`~torus_sim.machine.platforms.kinds.PlatformKind.build` on the fields it declares).

    Args:
        scenario: the run.
        nodes: the platform's nodes (a cluster's; a torus has its own).
        node_identities: a cluster keeps node identities even when nothing needs them (drawing).

    Returns:
        The platform object, or a node count for a cluster that keeps counts.
    """
    return platform_kind(scenario.platform).build(scenario.platform_fields(), nodes, node_identities)


def _log_fields(scenario: Scenario) -> tuple[tuple[str, ...], dict]:
    """The SWF fields the run's readings of its log need, and which reading needs which.

    Returns:
        ``(fields, readers)``: every field needed, once each; reading (a phrase for the sentences) -> its fields.
    """
    readers = {  # reading -> the SWF fields it needs (the tiers alone, without a weight, give no queue factor)
        "the queue factor": QUEUE_FIELDS if scenario.priority_weight_queue is not None else (),
        "preemption by tier": QUEUE_FIELDS if scenario.preempt_by_tier else (),
        "the fair share by group": ACCOUNT_FIELDS
        if scenario.priority_fairshare_by == "group" and _priority(scenario) is not None
        else (),
        "inferred maintenance windows": SCHEDULE_FIELDS if scenario.maintenance == INFERRED else (),
        "an inferred effective size": SCHEDULE_FIELDS
        if scenario.effective_size == INFERRED or scenario.effective_size_starved
        else (),
        "dependencies": SCHEDULE_FIELDS if scenario.dependencies is not None else (),
        "per-group limits": ACCOUNT_FIELDS if _limits_of(scenario, "group") else (),
        "per-queue limits": QUEUE_FIELDS if _limits_of(scenario, "queue") else (),
        "prime time": ("job_id",) if scenario.prime_time is not None else (),  # the header's clock only
        "standing reservations": ("job_id",) if scenario.standing_reservations is not None else (),  # likewise
    }
    return tuple(dict.fromkeys(name for needed in readers.values() for name in needed)), readers


def _log_readings(scenario: Scenario, workload, capacity: int) -> dict:
    """What the replayed SWF log gives the model beyond its jobs, read once: queue factors, accounts, inferred windows.

    Returns:
        The model's keywords among ``queue_factors``, ``accounts``, ``limits`` (the groups' and queues'), ``maintenance``,
        ``maintenance_drain``, ``effective_size``, ``reservations`` (a file's and the standing reservations' days),
        ``prime_time`` and ``dependencies``.

    Args:
        scenario: the run's scenario.
        workload: its workload (the SWF log it came from, read with its jobs or again, gives what the jobs do not
            carry: :func:`~torus_sim.inputs.workload.logged.workload_log`).
        capacity: the platform's nodes (an inferred effective size is a share of them).

    Raises:
        ConfigurationError: a queue weight without tiers, a window setting without windows, or a reading that needs
            the log of a workload that is none (:func:`~torus_sim.inputs.workload.logged.workload_log`).
    """
    if scenario.priority_weight_queue is not None and scenario.priority_queue_tiers is None:
        raise ConfigurationError("priority_weight_queue needs priority_queue_tiers (each queue's tier)")
    if scenario.preempt_by_tier and scenario.priority_queue_tiers is None:
        raise ConfigurationError("preempt_by_tier needs priority_queue_tiers (each queue's tier)")
    if scenario.maintenance is None and (scenario.maintenance_min_length is not None or scenario.maintenance_drain is not None):
        raise ConfigurationError("maintenance_drain and maintenance_min_length need maintenance windows (maintenance = ...)")
    if scenario.effective_size is None and scenario.effective_size_period is not None:
        raise ConfigurationError('effective_size_period needs effective_size = "inferred"')
    starved_settings = (scenario.effective_size_starved_min_length, scenario.effective_size_starved_min_idle)
    if not scenario.effective_size_starved and any(each is not None for each in starved_settings):
        raise ConfigurationError(
            "effective_size_starved_min_length and effective_size_starved_min_idle need effective_size_starved = true"
        )
    if scenario.effective_size is not None and scenario.effective_size_share is not None:
        raise ConfigurationError("effective_size_share and effective_size: give one (a share for the whole run, or spans)")
    if scenario.prime_time is None and (scenario.prime_time_max_walltime is not None or scenario.prime_time_spill is not None):
        raise ConfigurationError('prime_time_max_walltime and prime_time_spill need prime_time (as "MON-FRI 08:00-18:00")')
    fields, readers = _log_fields(scenario)
    log = workload_log(workload, fields, " and ".join(what for what, needed in readers.items() if needed)) if fields else None
    keywords = {}
    if readers["the queue factor"]:
        keywords["queue_factors"] = job_queue_factors(scenario.priority_queue_tiers, log)
    if readers["preemption by tier"]:
        keywords["tier_preemption"] = job_queue_factors(scenario.priority_queue_tiers, log)
    if readers["the fair share by group"]:
        keywords["accounts"] = user_accounts(log)
    limits = []
    if readers["per-group limits"]:
        limits.append(("group", *_limits_of(scenario, "group"), OwnerMap(user_accounts(log), "user_id")))
    if readers["per-queue limits"]:
        limits.append(("queue", *_limits_of(scenario, "queue"), OwnerMap(job_queues(log), "job_id")))
    if limits:
        keywords["limits"] = tuple(limits)
    if scenario.maintenance is not None:
        keywords["maintenance"] = maintenance_windows(
            scenario.maintenance, log, workload.load_scale, scenario.maintenance_min_length
        )
        drain = scenario.maintenance_drain
        keywords["maintenance_drain"] = scenario.maintenance != INFERRED if drain is None else drain
    if scenario.effective_size is not None:
        keywords["effective_size"] = effective_size_spans(
            scenario.effective_size, log, workload.load_scale, capacity, scenario.effective_size_period
        )
    if scenario.effective_size_share is not None and (spans := _share_spans(scenario, workload, capacity)):
        keywords["effective_size"] = spans
    if scenario.effective_size_starved:
        starved = starved_size_spans(
            own_schedule("effective_size_starved", log, workload.load_scale, "true"),
            capacity,
            scenario.effective_size_starved_min_length or STARVED_MIN_LENGTH,
            scenario.effective_size_starved_min_idle or STARVED_MIN_IDLE,
        )
        spans = lowest_spans(capacity, keywords.pop("effective_size", ()), starved)
        if len(spans):  # none: the run as without them
            keywords["effective_size"] = spans
    if scenario.reservations is not None:
        keywords["reservations"] = read_reservations(scenario.reservations)
    if readers["standing reservations"]:
        clock = _log_clock(log, "standing_reservations", workload.load_scale)
        first, last = workload.span
        rules = parse_standing_reservations(scenario.standing_reservations)
        for rule in rules:
            if rule.count > capacity:
                raise ConfigurationError(
                    f"standing_reservations: {rule.text!r} holds {rule.count:,} nodes, more than the machine's {capacity:,}"
                )
        days = standing_reservation_days(rules, clock, first, last)
        keywords["reservations"] = (*keywords.get("reservations", ()), *days)
    if readers["prime time"]:
        keywords["prime_time"] = _prime_time_rule(scenario, log, workload.load_scale)
    if readers["dependencies"]:
        keywords["dependencies"] = workload_dependencies(scenario.dependencies, log, workload)
    return keywords


def _share_spans(scenario: Scenario, workload, capacity: int) -> list[tuple[float, float, int]]:
    """The one span of ``effective_size_share``: the whole run on ``floor(share x capacity)`` processors.

    Never below the largest job's size (every job can run); none at the whole machine.

    Raises:
        ConfigurationError: a platform whose nodes are not the workload's processors (a torus, partitions).
    """
    if not platform_kind(scenario.platform).sizes_from_workload:  # its nodes are not the jobs' processors
        raise ConfigurationError(
            f"effective_size_share holds a share of a cluster's processors, not of the {scenario.platform} platform's "
            "nodes (give effective_size spans)"
        )
    jobs = workload.jobs
    sizes = jobs.column("size") if hasattr(jobs, "column") else [job.size for job in jobs]
    nodes = max(math.floor(scenario.effective_size_share * capacity), int(np.max(sizes, initial=1)))
    return [(0.0, math.inf, nodes)] if nodes < capacity else []  # to the run's end: no node identities needed


def _prime_time_rule(scenario: Scenario, log, load_scale: float) -> PrimeTimeRule:
    """The scenario's prime-time rule on the log's local clock (its header's ``UnixStartTime`` and time zone).

    Raises:
        ConfigurationError: no ``prime_time_max_walltime``, a load scale other than 1 (the clock is no longer the
            log's), or a log without ``UnixStartTime``.
    """
    if scenario.prime_time_max_walltime is None:
        raise ConfigurationError("prime_time needs prime_time_max_walltime (the longest requested time a job may have in it)")
    clock = _log_clock(log, "prime_time", load_scale)
    return PrimeTimeRule(
        parse_prime_time(scenario.prime_time), clock, scenario.prime_time_max_walltime, scenario.prime_time_spill
    )


def _log_clock(log, setting: str, load_scale: float) -> LogClock:
    """The log's local clock (its header's ``UnixStartTime`` and time zone), for a setting on its days and hours.

    Raises:
        ConfigurationError: a load scale other than 1 (the clock is no longer the log's), or a log without
            ``UnixStartTime`` (the sentences name ``setting``).
    """
    if load_scale != 1.0:
        raise ConfigurationError(
            f"{setting} falls on the log's own days and hours: run it at c = 1 (the scenario has c = {load_scale:g})"
        )
    origin = log.header_int("UnixStartTime")
    if origin is None:
        raise ConfigurationError(f"{setting} needs the log's start as a date: {log.path.name} has no UnixStartTime header")
    zone = log.header.get("TimeZoneString", "").strip() or None
    offset = None if zone is not None else log.header_int("TimeZone")
    return LogClock(origin, zone, offset)


def _limits_of(scenario: Scenario, who: str) -> tuple[int | None, int | None] | None:
    """A scenario's ``(max_jobs, max_nodes)`` per ``who`` (``group`` or ``queue``), or None: neither set."""
    limits = (getattr(scenario, f"max_jobs_per_{who}"), getattr(scenario, f"max_nodes_per_{who}"))
    return None if limits == (None, None) else limits


def _priority(scenario: Scenario):
    """The scenario's multifactor priority (:class:`~torus_sim.engine.multifactor.PriorityWeights`), or None: no weight set."""
    weights = (
        scenario.priority_weight_age,
        scenario.priority_weight_fairshare,
        scenario.priority_weight_job_size,
        scenario.priority_weight_queue,
    )
    if all(weight is None for weight in weights):
        if scenario.priority_fairshare_windows is not None:
            raise ConfigurationError("priority_fairshare_windows needs priority_weight_fairshare (the fair share's weight)")
        if scenario.priority_age_from != "submit":
            raise ConfigurationError('priority_age_from = "eligible" needs priority_weight_age (the age factor\'s weight)')
        return None
    if scenario.priority_age_from != "submit" and all(getattr(scenario, name) is None for name in LIMIT_FIELDS):
        raise ConfigurationError(
            'priority_age_from = "eligible" needs a limit that holds jobs (max_jobs_per_user, max_nodes_per_user, '
            "max_node_seconds_per_user, or a group's or a queue's): without one every job ages from its submission"
        )
    from torus_sim.engine import PriorityWeights

    age, fairshare, size, queue = (0.0 if weight is None else float(weight) for weight in weights)
    windows = scenario.priority_fairshare_windows
    return PriorityWeights(
        age,
        fairshare,
        size,
        max_age=float(scenario.priority_max_age),
        half_life=float(scenario.priority_decay_half_life),
        calc_period=float(scenario.priority_calc_period),
        favor_small=scenario.priority_favor_small,
        queue=queue,
        fairshare_windows=None if windows is None else parse_fairshare_windows(windows),
        age_from=scenario.priority_age_from,
        shares=scenario.priority_fairshare_shares,
    )
