"""One scenario format for every run: platform, workload, failures, policy, predictors, resilience, metrics.

A :class:`Scenario` is one run's full configuration, validated by pydantic: a wrong type, a value
out of its domain or an unknown key is refused with the key, what was expected and what came. It is
what ``torus-sim run`` builds from its options or a file, what :func:`torus_sim.experiments.runner.run` takes,
and what every grid point of a sweep is. Its fields have one flat namespace (so a grid names them
directly); a scenario file groups them in sections::

    [platform]        platform = "torus" | "cluster", machine, torus_dims, torus_wraps, nodes
    [workload]        workload, load_scale, max_jobs, swf_rules, cancelled, kill_at_walltime, jobs, job_set, processor_range,
                      runtime_range, monotonic
    [failures]        failures, fit_failures, lanl_system, fta_system, fta_platform, fta_nodes,
                      downtime, synthetic_model, node_mtbf                                   (fail-stop)
    [silent_errors]   silent_errors, mean_failure_probability, error_rate, scenarios, verification_time
    [policy]          policy, placement, backfill, migration, migration_cost, priority, epsilon,
                      allotment, area_slack, easy_extra, preemption, time_cost, preemption_interval, slowdown
    [predictors]      predictor, confidence, accuracy, false_positive_rate, pf_form, tie_candidates,
                      tie_all_alarmed, runtime_predictor
    [resilience]      checkpoint_interval, checkpoint_cost, recovery_time, preventive,
                      preventive_migration_cost, spares, prediction_accuracy
    [metrics]         gamma, bsld_form, fairness
    [power]           power, job_power, price, node_idle_w, node_busy_w, node_down_w, clock_start_hour,
                      power_cap, power_cap_hours, power_cap_file, idle_off_after, boot_time, node_off_w,
                      node_boot_w, shutdown_time, node_shutdown_w (issue 45)
    [cycle]           sched_min_interval (seconds: the scheduling pass at most once per interval, as production
                      schedulers run it; unset: at every instant with an event)
    [limits]          max_jobs_per_user, max_nodes_per_user (a job over its user's limit waits held, as under
                      Slurm's association limits and Maui's MAXJOB / MAXPROC; unset: no limit)
    [priority]        priority_weight_age, priority_weight_fairshare, priority_weight_job_size, priority_max_age,
                      priority_decay_half_life, priority_calc_period, priority_favor_small, priority_weight_queue,
                      priority_queue_tiers, priority_fairshare_by (Slurm's multifactor job priority; unset
                      weights: the policy's own order)
    [maintenance]     maintenance = "inferred" | FILE, maintenance_drain, maintenance_min_length (whole-machine
                      windows: no job starts in one, nor, drained, one that would reach into it; unset: none)
    [run]             seed = 0, event_order = "instant", plan_timeout = 600 (seconds one scheduling pass may take)

Workloads (``workload``) and fail-stop failures (``failures``) are names their registries parse
(:mod:`torus_sim.inputs.workload.sources`, :mod:`failure_logs.sources`; ``torus-sim run --help`` lists them):
a file, ``bundled``, ``rigid``, ``moldable:<model>``, ``synthetic:N[:model]``, ``mira``, an installed
plug-in's name or an import path, with their constructor's ``[workload.params]`` / ``[failures.params]``.
Without ``failures``, a batch meets none and an online workload its platform's own (BG/L's RAS
sample on the BG/L torus, Mira's log on ``machine = "mira"``, none on a cluster). A real log is
fitted onto the workload's span (BGL-FAULT §6.2) or, for Mira's 5.5-year log, windowed at its real
rate (``failure_timing``); with ``max_jobs`` failures are laid over the whole log's span and cut to the
prefix's, so a reduced run keeps the whole run's failure rate.

Silent errors (``silent_errors``): ``none``; ``drawn`` (f_j geometric with q_j from the mean
probability q̄ of RIGID §5.1 or the error rate λ of MOLDABLE §5.1, ``scenarios`` scenarios per run);
or a path to a reference-code failure file (one scenario per line). The default is ``drawn`` when
q̄ or λ is given, else ``none``.

References:
    BGL-FAULT §6; RIGID §5.1; MOLDABLE §5.1; PV-EASY §5.1; CKPT-MIG.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Literal

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_serializer,
    field_validator,
    model_validator,
)

from torus_sim.core.errors import ConfigurationError
from torus_sim.engine.guard import DEFAULT_PLAN_TIMEOUT
from torus_sim.inputs.energy.settings import POWER_FIELDS, PowerSettings
from torus_sim.inputs.workload.queues import parse_queue_tiers
from torus_sim.inputs.workload.sources import BUNDLED_NASA_LOG
from torus_sim.machine.machines import machine_torus
from torus_sim.machine.platforms.cluster import MAX_NODES
from torus_sim.machine.topology import Torus
from torus_sim.metrics.readings import DEFAULT_FAIRNESS_READING
from torus_sim.policies.catalog import BATCH_POLICIES, BUILTIN_POLICIES, MOLDABLE_POLICIES, ONLINE_POLICIES, RIGID_POLICIES
from torus_sim.policies.easy import DEFAULT_EASY_EXTRA

__all__ = [
    "BATCH_POLICIES",
    "BUNDLED_NASA_LOG",
    "MOLDABLE_POLICIES",
    "ONLINE_POLICIES",
    "BUILTIN_POLICIES",
    "MAX_BATCH_JOBS",
    "MAX_NODES",
    "RIGID_POLICIES",
    "SECTIONS",
    "Scenario",
    "scenario_error",
]


PRIORITY_FIELDS = (
    "priority_weight_age", "priority_weight_fairshare", "priority_weight_job_size", "priority_max_age",
    "priority_decay_half_life", "priority_calc_period", "priority_favor_small", "priority_weight_queue",
    "priority_queue_tiers", "priority_fairshare_by",
)  # fmt: skip
"""The [priority] section: Slurm's multifactor job priority (:mod:`torus_sim.engine.multifactor`)."""

# fmt: off
SECTIONS: dict[str, tuple[str, ...]] = {
    "platform": ("platform", "machine", "torus_dims", "torus_wraps", "nodes", "node_types"),
    "workload": ("workload", "load_scale", "offered_load", "max_jobs", "swf_rules", "cancelled", "kill_at_walltime", "jobs", "job_set", "processor_range",
        "runtime_range", "monotonic", "workload_params"),
    "failures": ("failures", "failures_params", "fit_failures", "failure_timing", "failure_offset", "reduced_failures",
        "mira_io_drawers", "mira_maintenance", "lanl_system", "fta_system", "fta_platform", "fta_nodes", "downtime",
        "synthetic_model", "node_mtbf"),
    "silent_errors": ("silent_errors", "mean_failure_probability", "error_rate", "scenarios", "verification_time"),
    "policy": ("policy", "placement", "backfill", "migration", "migration_cost", "priority", "epsilon", "allotment",
        "area_slack", "easy_extra", "preemption", "time_cost", "preemption_interval", "slowdown", "policy_params", "placement_params"),
    "predictors": ("predictor", "confidence", "accuracy", "false_positive_rate", "pf_form", "tie_candidates",
        "tie_all_alarmed", "runtime_predictor", "predictor_params", "runtime_predictor_params"),
    "resilience": ("checkpoint_interval", "checkpoint_cost", "recovery_time", "preventive", "preventive_migration_cost",
        "spares", "prediction_accuracy"),
    "metrics": ("gamma", "bsld_form", "fairness", "fairness_reading", "min_delay", "bound_verification"),
    "power": POWER_FIELDS,
    "cycle": ("sched_min_interval",),
    "limits": ("max_jobs_per_user", "max_nodes_per_user"),
    "priority": PRIORITY_FIELDS,
    "maintenance": ("maintenance", "maintenance_drain", "maintenance_min_length"),
    "run": ("seed", "event_order", "plan_timeout"),
}
# fmt: on
"""The sections of a scenario file and the fields each holds."""

Seconds = float


MAX_BATCH_JOBS = 10**6
"""The most jobs of a generated batch (its per-job arrays and time tables stay within memory)."""


INPUT_FILE_FIELDS = ("workload", "failures", "silent_errors", "job_power", "price", "power_cap_file", "maintenance")
"""Scenario fields that may name an input file (alone, or after a ``name:`` prefix such as ``table:``)."""


class Scenario(PowerSettings, BaseModel):
    """Everything that defines a run (and goes into its manifest); see the module docstring.

    Raises:
        ConfigurationError: from :meth:`make`, a value of the wrong type or out of its domain, or an
            unknown field, named with what was expected.
    """

    model_config = ConfigDict(extra="forbid", validate_assignment=True, populate_by_name=True, frozen=False, allow_inf_nan=False)

    # [platform]
    platform: str = Field(
        "torus", description="torus (the torus of supernodes), cluster (P nodes), a plug-in's name or an import path"
    )
    machine: str | None = Field(
        None,
        description="bgl, intrepid, mira or a machine description .toml: the torus and its blocks (default: torus_dims)",
    )
    torus_dims: tuple[int, ...] = Field(
        (4, 4, 8), description="supernodes (midplanes) along each dimension, 1 to 6 of them, or text 2x3x4x4 (m: mesh)"
    )
    torus_wraps: tuple[bool, ...] | None = Field(None, description="per dimension, false for a mesh (default: every one a ring)")
    nodes: int | None = Field(
        None, ge=1, le=MAX_NODES, description="P of a cluster (default: the workload's machine size), at most 4,194,304"
    )
    node_types: str | None = Field(
        None,
        description="a heterogeneous cluster's node types, NAME:NODES:CORES:MEMORY_GIB[:GPUS],... (thin:224:8:16,fat:16:8:64)",
    )
    # [workload]
    workload: str = Field(
        "bundled",
        description="SWF path, a registered log by name (pwa:SDSC-SP2: torus-sim data list), bundled, rigid, moldable:<model>, table:<path>, refcode:<path>, steady-state",
    )
    load_scale: float = Field(
        1.0, ge=1e-6, le=1e6, description="c: multiplies runtimes and walltimes (BGL-FAULT §6.2), 1e-6 to 1e6"
    )
    offered_load: float | None = Field(
        None,
        ge=1e-6,
        le=1e6,
        description="choose c so that the cleaned workload's offered load is this (instead of load_scale), 1e-6 to 1e6",
    )
    max_jobs: int | None = Field(None, ge=1, description="use only the first N jobs")
    swf_rules: Literal["bgl-fault", "pv-easy", "cqsim", "rlscheduler"] | None = Field(
        None, description="SWF cleaning rules (default: bgl-fault on the torus, pv-easy on a cluster; cqsim: CQSim's filter)"
    )
    cancelled: Literal["run", "skip"] = Field(
        "run",
        description="a cancelled SWF line (status 5): run for its logged run time, or skipped (logs keep cancelled jobs' "
        "run times the machine never spent: RICC's overfill it)",
    )
    kill_at_walltime: bool | None = Field(
        None,
        strict=True,
        description="an SWF job that ran longer than it requested: killed at its requested time (true: runtimes cut "
        "there) or run for its logged run time (false); unset: the rules' reading (pv-easy and cqsim kill, bgl-fault "
        "and rlscheduler do not)",
    )
    jobs: int | None = Field(
        None,
        ge=1,
        le=MAX_BATCH_JOBS,
        description="n of a generated batch (RIGID 100, MOLDABLE 500, steady state 2000), at most 1,000,000",
    )
    job_set: int = Field(0, ge=0, description="which generated job set (batch experiments run several)")
    processor_range: tuple[int, int] | None = Field(None, description="p_j bounds of RIGID sets (default: 0.5% and 20% of P)")
    runtime_range: tuple[float, float] = Field((100.0, 20_000.0), description="t_j bounds of RIGID sets, seconds")
    monotonic: bool = Field(strict=True, default=False, description="check a table: workload against the monotonic model")
    workload_params: dict[str, Any] = Field(
        default_factory=dict,
        description="a plug-in workload source's constructor parameters ([workload.params], --workload-param)",
    )
    # [failures]
    failures: str | None = Field(
        None,
        description="none, bundled, synthetic:N[:exponential|weibull|bursty], a log path or a registered log by name (cfdr:LANL: torus-sim data list; a whole number N reads as synthetic:N)",
    )
    failures_params: dict[str, Any] = Field(
        default_factory=dict,
        description="a plug-in failure source's constructor parameters ([failures.params], --failures-param)",
    )
    fit_failures: bool = Field(
        strict=True, default=True, description="map a real log's first..last failure onto the workload's submit span"
    )
    failure_timing: Literal["fit", "window", "as-logged"] | None = Field(
        None,
        description=(
            "fit: a real log's first..last failure laid over the whole workload (BGL-FAULT §6.2); window: its failures "
            "from failure_offset on, at their real rate; as-logged: its own times (default: window for the Mira log, else fit)"
        ),
    )
    failure_offset: float = Field(
        0.0, ge=0, description="window: seconds after the log's first failure where the workload starts"
    )
    reduced_failures: Literal["rate", "count"] = Field(
        "rate",
        description=(
            "with max_jobs: rate: the prefix meets the whole run's failures of its span (synthetic:N is N over the "
            "whole log); count: every failure squeezed into the prefix's span (torus-sim 0.1's rule)"
        ),
    )
    mira_io_drawers: bool = Field(
        strict=True, default=True, description="Mira log: an I/O-drawer event takes down the two midplanes of its rack"
    )
    mira_maintenance: bool = Field(
        strict=True, default=True, description="Mira log: maintenance periods are whole-machine downtime"
    )
    lanl_system: int = Field(20, ge=1, description="LANL system number")
    fta_system: str | None = Field(None, description="FTA .tab: keep nodes named <system>.<node> (all when unset)")
    fta_platform: int | None = Field(None, ge=0, description="FTA .tab: keep this platform_id (all when unset)")
    fta_nodes: int | None = Field(
        None, ge=1, le=10**7, description="FTA .tab: the system's node count, at most 10,000,000 (default: largest node + 1)"
    )
    downtime: Literal["transient", "log"] | float = Field("transient", description="transient, log or seconds")
    synthetic_model: Literal["exponential", "weibull", "bursty"] = Field("exponential", description="synthetic:N distribution")
    node_mtbf: float | None = Field(
        None, gt=0, description="μ per node, seconds: failures = mtbf draws exponential failures at this rate"
    )
    # [silent_errors]
    silent_errors: str | None = Field(None, description="none, drawn, or a reference-code failure file")
    mean_failure_probability: float | None = Field(None, ge=0, lt=1, description="q̄ of RIGID §5.1")
    error_rate: float | None = Field(None, ge=0, description="λ per second of work (MOLDABLE) or processor-second (RIGID)")
    scenarios: int = Field(1, ge=1, description="silent-error scenarios per run of a batch")
    verification_time: Seconds = Field(0.0, ge=0, description="V, seconds per attempt for the detector")
    # [policy]
    policy: Any = Field(
        "krevat",
        validation_alias=AliasChoices("policy", "scheduler"),
        description="scheduling policy: a built-in or installed plug-in's name, or an import path package.module:Class",
    )
    policy_params: dict[str, Any] = Field(
        default_factory=dict, description="the policy's constructor parameters ([policy.params], --policy-param key=value)"
    )
    placement: Any = Field(
        None,
        description="placement: mfp, balancing, tiebreak, warm (on nodes first, with idle_off_after), a plug-in's name or an import path (default: the policy's own)",
    )
    placement_params: dict[str, Any] = Field(default_factory=dict, description="the placement's constructor parameters")
    backfill: bool = Field(strict=True, default=True, description="Krevat's backfilling")
    migration: bool = Field(strict=True, default=True, description="Krevat's migration")
    migration_cost: Seconds = Field(0.0, ge=0, description="seconds per migrated job")
    priority: Literal["LPT", "SPT", "HPA", "LPA", "LA", "SA", "RANDOM"] = Field(
        "LPT", description="RIGID / MOLDABLE priority rule"
    )
    epsilon: float = Field(0.3, gt=0, description="ε of MT-ALLOTMENT (BATCH)")
    allotment: Literal["steps", "exact"] = Field(
        "steps", description="BATCH's MT-ALLOTMENT: steps (the simulator behind MOLDABLE Table 1) or exact (tight bisection)"
    )
    area_slack: float = Field(
        1.1, gt=0, description="BATCH: factor on the area in MT-ALLOTMENT's test (1.1 behind Table 1; 1 = tight)"
    )
    easy_extra: Literal["textbook", "pv-easy"] = Field(
        DEFAULT_EASY_EXTRA,
        description="EASY's extra nodes (FCFS-EASY, EASY-SJBF): textbook counts every job predicted to end by the shadow "
        "time; pv-easy stops at the job that makes the head fit (PV-EASY's count-based code)",
    )
    preemption: Literal["kill", "checkpoint", "suspend"] = Field("kill", description="what a preempted job keeps (PV-EASY)")
    time_cost: Seconds = Field(60.0, ge=0, description="PV-EASY TimeCost: seconds per checkpoint / restart / resume")
    preemption_interval: Seconds = Field(3600.0, gt=0, description="PV-EASY checkpoint interval, seconds of work")
    slowdown: float = Field(0.05, ge=0, description="PV-EASY virtualization slowdown (suspend mode)")
    # [predictors]
    predictor: Any = Field(
        None,
        description="failure predictor: null, oracle-confidence, oracle-accuracy, history, recency, a plug-in or an import path (default: the placement's)",
    )
    predictor_params: dict[str, Any] = Field(default_factory=dict, description="the failure predictor's constructor parameters")
    confidence: float = Field(0.1, ge=0, le=1, description="a of the oracle-confidence predictor (BGL-FAULT §4.1)")
    accuracy: float = Field(0.1, ge=0, le=1, description="a of the oracle-accuracy predictor (BGL-FAULT §4.2)")
    false_positive_rate: float = Field(0.0, ge=0, le=1, description="p_f+ of the oracle-accuracy predictor")
    pf_form: Literal["product", "max"] = Field("product", description="balancing: P_f = 1 - prod(1 - p_n) or max p_n")
    tie_candidates: Literal["best-mfp", "all"] = Field(
        "best-mfp", description="tie-break: the partitions the alarm decides among (best-mfp: MFP first; all: alarm first)"
    )
    tie_all_alarmed: Literal["random", "mfp"] = Field(
        "random", description="tie-break when every candidate rings: a random one, or the MFP choice"
    )
    runtime_predictor: Any = Field(
        None, description="estimate, last, exact, virtual:x, a plug-in or an import path (default: the walltime)"
    )
    runtime_predictor_params: dict[str, Any] = Field(
        default_factory=dict, description="the runtime predictor's constructor parameters"
    )
    # [resilience]
    checkpoint_interval: Literal["young", "daly"] | float | None = Field(None, description="periodic checkpoints (CKPT-MIG)")
    checkpoint_cost: Seconds = Field(0.0, ge=0, description="C, seconds per checkpoint")
    recovery_time: Seconds = Field(0.0, ge=0, description="R, seconds to restart from a checkpoint")
    preventive: Literal["none", "checkpoint", "migration"] = Field("none", description="action before a foreseen failure")
    preventive_migration_cost: Seconds = Field(0.0, ge=0, description="M, seconds per preventive migration")
    spares: int = Field(0, ge=0, description="nodes held back as migration targets")
    prediction_accuracy: float = Field(1.0, ge=0, le=1, description="probability that a failure is foreseen")
    # [metrics]
    gamma: Seconds = Field(10.0, gt=0, description="Γ of bounded slowdown, seconds")
    bsld_form: Literal["standard", "printed"] = Field("standard", description="bounded slowdown max/max or BGL-FAULT's max/min")
    fairness: bool | None = Field(
        strict=True,
        default=None,
        description="record the head's fairness each pass (default: online workloads on a cluster; costs ~15% on the torus)",
    )
    fairness_reading: Literal["backfilled", "shadow"] = Field(
        DEFAULT_FAIRNESS_READING,
        description="who delays a blocked job (PV-EASY Tables 1-2): the jobs backfilled past it, or every lower-priority job",
    )
    min_delay: Seconds = Field(0.0, ge=0, description="count a delay or a delay from reservation only above this, seconds")
    bound_verification: bool = Field(
        strict=True,
        default=False,
        description="L(f) counts V in every attempt (default: RIGID Eq. 5-6's L(f) on t_j alone, as the reference code)",
    )
    # [cycle]
    sched_min_interval: Seconds | None = Field(
        None,
        gt=0,
        le=1e9,
        description="seconds: the scheduling pass asked by an event runs at least this long after the last one (Slurm's "
        "sched_min_interval, there in microseconds; production schedulers dispatch in cycles of about 10-60 s); "
        "unset: at the instant of the event",
    )
    # [limits]
    max_jobs_per_user: int | None = Field(
        None,
        ge=1,
        le=10**9,
        description="running jobs one user may have at once; a job over it waits held (Slurm's MaxJobs, Maui's MAXJOB "
        "per user); unset: no limit",
    )
    max_nodes_per_user: int | None = Field(
        None,
        ge=1,
        le=10**9,
        description="nodes (a cluster's processors, a torus's supernodes) one user's running jobs may hold at once; a "
        "job over it waits held, a larger job runs alone (Slurm's MaxTRESPerUser, Maui's MAXPROC); unset: no limit",
    )
    # [maintenance]
    maintenance: str | None = Field(
        None,
        min_length=1,
        description='whole-machine maintenance windows: "inferred" (the spans in which the replayed SWF log ran '
        "nothing while jobs waited) or a file of start,end lines (seconds of the workload's clock); no job starts "
        "whose requested time reaches into a window (Slurm's maintenance reservation); unset: none",
    )
    maintenance_drain: bool | None = Field(
        None,
        strict=True,
        description="true: no job starts whose requested time reaches into a window (a planned maintenance, the "
        "machine empty when it begins); false: jobs are held only while a window lasts and running jobs run on (an "
        "outage); unset: true for a file, false for inferred windows (the spans a log shows idle were mostly not "
        "drained for: docs/validation/real_machine.md)",
    )
    maintenance_min_length: Seconds | None = Field(
        None,
        gt=0,
        le=1e9,
        description='seconds: the shortest idle span of the log taken as a window (maintenance = "inferred"); unset: 3600',
    )
    # [priority]
    priority_weight_age: float | None = Field(
        None,
        ge=0,
        le=1e9,
        description="weight of the age factor (Slurm's PriorityWeightAge); any weight set: the queue in "
        "Slurm's multifactor order",
    )
    priority_weight_fairshare: float | None = Field(
        None, ge=0, le=1e9, description="weight of the fair-share factor 2^(-U/S) over users (PriorityWeightFairshare)"
    )
    priority_weight_job_size: float | None = Field(
        None, ge=0, le=1e9, description="weight of the job-size factor, nodes / machine (PriorityWeightJobSize)"
    )
    priority_max_age: Seconds = Field(
        7 * 86400.0, gt=0, le=1e10, description="seconds of waiting at which the age factor reaches 1 (PriorityMaxAge)"
    )
    priority_decay_half_life: Seconds = Field(
        7 * 86400.0, gt=0, le=1e10, description="seconds in which recorded usage halves (PriorityDecayHalfLife)"
    )
    priority_calc_period: Seconds = Field(
        300.0, gt=0, le=1e9, description="seconds between recomputations of the priorities (PriorityCalcPeriod)"
    )
    priority_favor_small: bool = Field(
        strict=True, default=False, description="the size factor favours small jobs (PriorityFavorSmall=YES)"
    )
    priority_fairshare_by: Literal["user", "group"] = Field(
        "user",
        description="the fair share over users, or over the log's groups (SWF field 13; each user in the group of "
        "their first job), whose users share its usage (Slurm's fair share by account, Maui's group fair share)",
    )
    priority_weight_queue: float | None = Field(
        None,
        ge=0,
        le=1e9,
        description="weight of the queue factor, the tier of the job's SWF queue (field 15) over the highest tier "
        "(Slurm's PriorityWeightPartition with each partition's PriorityJobFactor); needs priority_queue_tiers",
    )
    priority_queue_tiers: str | None = Field(
        None,
        min_length=1,
        description='each SWF queue number\'s tier, "QUEUE:TIER,..." (tiers >= 0, e.g. "1:4,2:3,3:2,4:1" for '
        "express, high, normal, low); a queue not listed has tier 0; without priority_weight_queue, no queue factor",
    )
    # run
    seed: int = Field(
        0, ge=0, lt=2**63, description="seed of the run's generator, >= 0 (a batch: the master seed of sets and scenarios)"
    )
    event_order: Literal["instant", "each-event", "each-event-submissions-first"] = Field(
        "instant",
        description="when the scheduler runs: once per instant after all its events, or after each job end and each "
        "submission (each-event: CQSim's order, ends before submissions, each in turn; each-event-submissions-first: "
        "RLScheduler's, submissions before ends)",
    )
    plan_timeout: float = Field(
        DEFAULT_PLAN_TIMEOUT,
        gt=0,
        le=1e9,
        description="wall-clock seconds one scheduling pass may take before the run is stopped (a plan that never returns)",
    )

    # -- checks --------------------------------------------------------------------------

    @model_validator(mode="before")
    @classmethod
    def _declared_by_the_workload(cls, data):
        """What the workload's input names (a reference-code header: heuristic, priority, V) where the scenario does not (RIGID §5)."""
        if not isinstance(data, dict):
            return data
        from torus_sim.inputs.workload.sources import declared_by_workload

        given = set(data) | ({"policy"} if "scheduler" in data else set())
        declared = declared_by_workload(data.get("workload", cls.model_fields["workload"].default))
        missing = {name: value for name, value in declared.items() if name not in given}
        refused = [f"{name}: {value}" for name, value in missing.items() if isinstance(value, ConfigurationError)]
        if refused:  # the input names nothing that can run and the scenario names nothing either
            raise ValueError("; ".join(refused))
        return {**data, **missing}

    @model_validator(mode="before")
    @classmethod
    def _dims_text(cls, data):
        """``torus_dims = "2x3x4x4"`` (an ``m`` after a mesh dimension) -> dims and wraps."""
        if isinstance(data, dict) and isinstance(data.get("torus_dims"), str):
            from torus_sim.machine.machines import parse_torus_dims

            try:
                dims, wraps = parse_torus_dims(data["torus_dims"])
            except ConfigurationError as error:
                raise ValueError(str(error)) from None
            data = {**data, "torus_dims": dims}
            if not all(wraps):
                if data.get("torus_wraps") not in (None, wraps):
                    raise ValueError(f"torus_dims {data['torus_dims']} marks mesh dimensions and torus_wraps disagrees")
                data["torus_wraps"] = wraps
        return data

    @model_validator(mode="after")
    def _torus_fits(self):
        """The torus (from the machine or the dims) is consistent and small enough to tabulate."""
        if self.machine is not None and ("torus_dims" in self.model_fields_set or "torus_wraps" in self.model_fields_set):
            from torus_sim.machine.machines import load_machine

            try:
                described = load_machine(self.machine).torus
            except ConfigurationError as error:
                raise ValueError(str(error)) from None
            if self.torus_dims != described.dims or (self.torus_wraps is not None and self.torus_wraps != described.wraps):
                raise ValueError(
                    f"machine {self.machine} is a {described.label} torus; torus_dims / torus_wraps say otherwise (give one of them)"
                )
        try:
            torus = self.torus
        except ConfigurationError as error:
            raise ValueError(str(error)) from None
        from torus_sim.machine.partitions import MAX_PARTITIONS, partition_count

        count = partition_count(torus)  # checked before anything is built
        if count > MAX_PARTITIONS:
            raise ValueError(
                f"a {torus.label} torus has {count:,} partitions; the partition table holds at most {MAX_PARTITIONS:,}"
            )
        return self

    @field_validator("failures", mode="before")
    @classmethod
    def _failure_count(cls, value):
        """``failures = 500`` (a sweep's grid of counts, ``--failures 500``) is ``synthetic:500``: the header shows it so."""
        if isinstance(value, int) and not isinstance(value, bool):
            if value < 0:
                raise ValueError(f"a failure count must be >= 0, got {value}")
            return f"synthetic:{value}"
        return value

    @field_validator("priority_queue_tiers")
    @classmethod
    def _queue_tiers(cls, value):
        if value is not None:
            parse_queue_tiers(value)  # a ValueError names what is wrong
        return value

    @field_validator("platform")
    @classmethod
    def _platform_kind(cls, value):
        """A platform kind the registry knows (:mod:`torus_sim.machine.platforms.kinds`): a name or an import path."""
        from torus_sim.machine.platforms.kinds import platform_kind

        try:
            platform_kind(value)
        except ConfigurationError as error:
            raise ValueError(str(error)) from None
        return value

    @field_validator("fta_system", mode="before")
    @classmethod
    def _fta_system(cls, value):
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value  # --fta-system 20

    @field_validator("downtime")
    @classmethod
    def _downtime(cls, value):
        if isinstance(value, float) and not (value >= 0 and math.isfinite(value)):
            raise ValueError(f"downtime must be transient, log or seconds >= 0, got {value}")
        return value

    @field_validator("checkpoint_interval")
    @classmethod
    def _interval(cls, value):
        if isinstance(value, float) and not value > 0:
            raise ValueError(f"checkpoint interval must be positive seconds, young or daly, got {value}")
        return value

    @field_validator("policy", "placement", "predictor", "runtime_predictor")
    @classmethod
    def _extension(cls, value, info):
        if value is None:
            if info.field_name == "policy":
                raise ValueError("a policy is needed")
            return value
        if isinstance(value, str):
            if not value:
                raise ValueError(f"{info.field_name} is empty")
            return value
        if isinstance(value, (int, float, bool, list, tuple, dict)):
            raise ValueError(f"{info.field_name} must be a name or an import path package.module:Class, got {value!r}")
        return value  # from Python: a class, a factory or an instance (checked with its parameters below)

    @field_serializer("policy", "placement", "predictor", "runtime_predictor", when_used="json")
    def _extension_json(self, value):
        if value is None or isinstance(value, str):
            return value
        from torus_sim.inputs.plugin_admission import object_path

        return object_path(value)

    @model_validator(mode="after")
    def _extensions_exist(self):
        """Every extension named exists (plug-ins imported) and takes the parameters given."""
        from torus_sim.experiments.extensions import check_scenario_extensions

        try:
            check_scenario_extensions(self)
        except ConfigurationError as error:
            raise ValueError(str(error)) from None
        return self

    @model_validator(mode="after")
    def _consistent(self):
        if (
            isinstance(self.policy, str)
            and self.policy == "krevat"
            and self.predictor not in (None, "null")
            and self.placement in (None, "mfp")
        ):
            raise ValueError(f"the krevat policy uses no predictor; got {self.predictor!r} (use balancing or tiebreak)")
        if self.processor_range is not None and not 1 <= self.processor_range[0] <= self.processor_range[1]:
            raise ValueError(f"processor_range must be 1 <= low <= high, got {self.processor_range}")
        if not 0 < self.runtime_range[0] <= self.runtime_range[1]:
            raise ValueError(f"runtime_range must be 0 < low <= high, got {self.runtime_range}")
        if self.mean_failure_probability is not None and self.error_rate is not None:
            raise ValueError("give the mean failure probability q̄ or the error rate λ, not both")
        if self.offered_load is not None and self.load_scale != 1.0:
            raise ValueError("give the load scale c or the offered load, not both (the offered load picks c)")
        if not self.fit_failures and self.failure_timing not in (None, "as-logged"):
            raise ValueError(
                f"fit_failures = false means the log's own times; failure_timing {self.failure_timing!r} says otherwise"
            )
        if self.failures == "mtbf" and self.node_mtbf is None:
            raise ValueError("failures = mtbf needs the per-node MTBF node_mtbf (seconds)")
        return self

    # -- derived values ------------------------------------------------------------------

    @classmethod
    def make(cls, source: str = "", **fields) -> Scenario:
        """A validated scenario, or a ConfigurationError naming the field(s) and what was expected.

        Args:
            source: where the fields come from (a file path), for the message.
            **fields: the scenario's fields.
        """
        try:
            return cls(**fields)
        except ValidationError as error:
            raise scenario_error(error, source) from None

    def replace(self, **fields) -> Scenario:
        """A validated copy with some fields changed."""
        return Scenario.make(**{**self.model_dump(), **fields})

    @property
    def torus(self) -> Torus:
        """The torus of the platform: the machine's (dims, wraps, allowed blocks) or ``torus_dims`` / ``torus_wraps``.

        Raises:
            ConfigurationError: an unknown machine or an inconsistent description.
        """
        return machine_torus(self.machine, tuple(self.torus_dims), None if self.torus_wraps is None else tuple(self.torus_wraps))

    @property
    def batch(self) -> bool:
        """Whether the workload is a batch released at time 0 (its source's ``kind``: a generated set, a job file, a table)."""
        from torus_sim.inputs.workload.sources import workload_source

        return workload_source(self.workload, self.workload_params).kind == "batch"

    @property
    def workload_path(self) -> str:
        """The file the workload comes from (the bundled log's path for ``bundled``), else the workload as given."""
        from torus_sim.inputs.workload.sources import workload_source

        return workload_source(self.workload, self.workload_params).path or str(self.workload)

    @property
    def failure_spec(self) -> str:
        """The fail-stop failure source after defaults: the scenario's, else none for a batch, else the platform's own.

        The platform kind says (:meth:`~torus_sim.machine.platforms.kinds.PlatformKind.default_failures`): on a
        torus the machine's own log (BG/L: the bundled RAS sample; Mira: its events), on a cluster none.
        """
        if self.failures is not None:
            return self.failures
        if self.batch:
            return "none"
        from torus_sim.machine.platforms.kinds import platform_kind

        return platform_kind(self.platform).default_failures(self.platform_fields())

    @property
    def timing(self) -> str:
        """How a real failure log meets the workload after defaults: ``fit``, ``window`` or ``as-logged``.

        Without ``failure_timing``: the failure source's own (``window`` for Mira's log, whose 5.5
        years are not squeezed onto a workload; ``fit`` for the others, BGL-FAULT §6.2).
        """
        if not self.fit_failures:
            return "as-logged"
        if self.failure_timing is not None:
            return self.failure_timing
        from failure_logs.sources import select_failure_source

        return getattr(select_failure_source(self.failure_spec)[0], "default_timing", "fit")

    @property
    def silent_spec(self) -> str:
        """The silent-error source after defaults: ``none``, ``drawn`` or a file."""
        if self.silent_errors is not None:
            return self.silent_errors
        return "drawn" if self.mean_failure_probability is not None or self.error_rate is not None else "none"

    @property
    def rules(self) -> str:
        """The SWF cleaning rules after defaults: the scenario's, else its platform kind's."""
        from torus_sim.machine.platforms.kinds import platform_kind

        return self.swf_rules or platform_kind(self.platform).default_rules

    def section(self, name: str) -> ScenarioFields:
        """One section of the scenario as its file groups it (:data:`SECTIONS`): its fields, read-only.

        Sections: ``platform``, ``workload``, ``failures``, ``silent_errors``, ``policy``, ``predictors``,
        ``resilience``, ``metrics``, ``power``, ``run``; each field under its flat name. The flat names stay the scenario's own (a file's sections, a sweep's grid and the command line's options all
        name them so); a section is a view for code that reads one group.

        Raises:
            ConfigurationError: no such section (the sentence lists them).
        """
        members = SECTIONS.get(name)
        if members is None:
            raise ConfigurationError(f"no scenario section {name!r}; the sections are {', '.join(SECTIONS)}")
        return ScenarioFields({field: getattr(self, field) for field in members}, f"the [{name}] section")

    def platform_fields(self) -> ScenarioFields | Scenario:
        """What the platform kind is given of the scenario: the fields it declares (:meth:`fields_for`)."""
        from torus_sim.machine.platforms.kinds import platform_kind

        return self.fields_for(platform_kind(self.platform), f"platform kind {self.platform!r}")

    def fields_for(self, room, what: str) -> ScenarioFields | Scenario:
        """What a room below the wiring (a platform kind, a source) is given of the scenario: the fields it declares.

        Args:
            room: the object called (a :class:`~torus_sim.machine.platforms.kinds.PlatformKind`, a workload or failure
                source): its ``from_scenario`` names the fields it reads (a field or a derived value such as ``torus``).
            what: the room, for the deprecation sentence.

        Returns:
            A :class:`ScenarioFields` of exactly those fields; the whole scenario, with a ``FutureWarning``, to a
            plug-in that declares none (the deprecation path: it will be given nothing in a later release).
        """
        names = getattr(room, "from_scenario", None)
        owner = room if isinstance(room, type) or callable(room) and hasattr(room, "__code__") else type(room)
        ours = getattr(owner, "__module__", "").split(".")[0] in ("torus_sim", "failure_logs", "predictors", "agents")
        if not ours and "from_scenario" not in vars(owner):
            names = None  # a plug-in subclass of a built-in reads what its own code reads: it must say so itself
        if names is None:
            warnings.warn(
                f"{what} declares no from_scenario: it is given the whole scenario for now; declare the fields it reads "
                "(from_scenario = (field, ...)), the whole scenario will not be given in a later release",
                FutureWarning,
                stacklevel=3,
            )
            return self
        return ScenarioFields({name: getattr(self, name) for name in names}, what)


class ScenarioFields:
    """The fields of a scenario that a room declared it reads (``from_scenario``), read-only; nothing else of the run.

    Args:
        values: field (or derived value) -> value.
        room: who was given them, for the sentence of an attribute it did not declare.
    """

    __slots__ = ("_room", "_values")

    def __init__(self, values: dict, room: str) -> None:
        object.__setattr__(self, "_values", dict(values))
        object.__setattr__(self, "_room", room)

    def __getattr__(self, name: str):
        values = object.__getattribute__(self, "_values")
        if name in values:
            return values[name]
        room = object.__getattribute__(self, "_room")
        raise AttributeError(f"{room} is given no {name!r} of the scenario, only {sorted(values)}")

    def __setattr__(self, name: str, value) -> None:
        raise AttributeError("a scenario's fields are read-only")

    def __repr__(self) -> str:
        return f"ScenarioFields({self._values!r})"

    def as_dict(self) -> dict:
        """The declared fields and their values (a copy): what the room makes from them depends on nothing else."""
        return dict(object.__getattribute__(self, "_values"))


def scenario_error(error: ValidationError, source: str = "") -> ConfigurationError:
    """A ConfigurationError naming every bad field, what was expected and what came."""
    lines = []
    for problem in error.errors():
        where = ".".join(str(part) for part in problem["loc"]) or "scenario"
        section = next((name for name, members in SECTIONS.items() if where.split(".")[0] in members), None)
        place = f"[{section}] {where}" if section else where
        if not problem["loc"] and problem["type"] == "value_error":  # a check across fields: its sentence alone
            lines.append(problem["msg"].removeprefix("Value error, "))
            continue
        if problem["type"] == "extra_forbidden":
            known = sorted(name for members in SECTIONS.values() for name in members)
            lines.append(f"unknown key {place!r}; known keys: {', '.join(known)}")
        else:
            lines.append(f"{place}: {problem['msg'].removeprefix('Value error, ')} (got {problem.get('input')!r})")
    prefix = f"{source}: " if source else ""
    return ConfigurationError(prefix + "; ".join(lines))
