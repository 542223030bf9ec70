"""One scenario format for every run: platform, workload, failures, policy, predictors, resilience, metrics.

A :class:`Scenario` is one run's full configuration, validated by pydantic: a wrong type, a value
out of its domain or an unknown key is refused with the key, what was expected and what came. It is
what ``torus-sim run`` builds from its options or a file, what :func:`torus_sim.experiments.runner.run` takes,
and what every grid point of a sweep is. It is made of the sections its parts declare (:data:`SECTION_MODELS`: each
a pydantic model in its part's module, checking its own fields; the checks across sections are here). Its fields have
one flat namespace (so a grid names them directly); a scenario file groups them in sections::

    [platform]        platform = "torus" | "cluster", machine, torus_dims, torus_wraps, nodes
    [workload]        workload, load_scale, max_jobs, swf_rules, cancelled, failed, kill_at_walltime, shake, dependencies,
                      jobs, job_set, processor_range, runtime_range, monotonic
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
                      schedulers run it; unset: at every instant with an event), dispatch_latency (seconds from a
                      job's submission to its entry into the queue; unset: at once)
    [limits]          max_jobs_per_user, max_nodes_per_user, max_node_seconds_per_user, max_jobs_per_group,
                      max_nodes_per_group, max_jobs_per_queue, max_nodes_per_queue (a job over its user's, group's or
                      queue's limit waits held, as under Slurm's association and QOS limits and Maui's MAXJOB / MAXPROC
                      / MAXPS; unset: no limit)
    [priority]        priority_weight_age, priority_weight_fairshare, priority_weight_job_size, priority_max_age,
                      priority_decay_half_life, priority_calc_period, priority_favor_small, priority_weight_queue,
                      priority_queue_tiers, priority_fairshare_by (Slurm's multifactor job priority; unset
                      weights: the policy's own order)
    [maintenance]     maintenance = "inferred" | FILE, maintenance_drain, maintenance_min_length (whole-machine
                      windows: no job starts in one, nor, drained, one that would reach into it; unset: none)
    [effective_size]  effective_size = "inferred" | FILE, effective_size_period (spans in which only part of the
                      machine is usable: the other nodes held out, none killed; unset: the whole machine), or
                      effective_size_share (the whole run on a share of a cluster's processors);
                      effective_size_starved, effective_size_starved_min_length, effective_size_starved_min_idle (besides
                      those, the spans in which the log's oldest waiting job fitted the idle processors, at their busiest)
    [reservations]    reservations = FILE (part of the machine, by count or named nodes, from a start to an end; the
                      jobs on its nodes waited for or killed; unset: none), standing_reservations = "MON-FRI
                      08:00-18:00 32" (that many nodes held on those days and hours of the log's local time)
    [prime_time]      prime_time = "MON-FRI 08:00-18:00", prime_time_max_walltime, prime_time_spill (in the log's
                      local time, jobs asking more than the maximum wait for the end of prime time; unset: none)
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

import warnings

from pydantic import ConfigDict, ValidationError, model_validator

from failure_logs.settings import FailuresSection, SilentErrorsSection
from predictors.settings import PredictorsSection
from torus_sim.core.errors import ConfigurationError
from torus_sim.engine.sections import (
    CycleSection,
    EffectiveSizeSection,
    LimitsSection,
    MaintenanceSection,
    PrimeTimeSection,
    PrioritySection,
    ReservationsSection,
    RunSection,
)
from torus_sim.inputs.energy.settings import PowerSettings
from torus_sim.inputs.workload.settings import MAX_BATCH_JOBS, WorkloadSection
from torus_sim.inputs.workload.sources import BUNDLED_NASA_LOG
from torus_sim.machine.platforms.cluster import MAX_NODES
from torus_sim.machine.platforms.settings import PlatformSection
from torus_sim.metrics.settings import MetricsSection
from torus_sim.policies.catalog import BATCH_POLICIES, BUILTIN_POLICIES, MOLDABLE_POLICIES, ONLINE_POLICIES, RIGID_POLICIES
from torus_sim.policies.settings import PolicySection, ResilienceSection

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
    "SECTION_MODELS",
    "Scenario",
    "scenario_error",
]


SECTION_MODELS = (
    PlatformSection,
    WorkloadSection,
    FailuresSection,
    SilentErrorsSection,
    PolicySection,
    PredictorsSection,
    ResilienceSection,
    MetricsSection,
    PowerSettings,
    CycleSection,
    LimitsSection,
    PrioritySection,
    MaintenanceSection,
    EffectiveSizeSection,
    ReservationsSection,
    PrimeTimeSection,
    RunSection,
)
"""The sections of a scenario, in the order of a scenario file: each part's own pydantic model, declared in its module
(the platform's in :mod:`torus_sim.machine.platforms.settings`, the workload's in :mod:`torus_sim.inputs.workload.settings`,
the failures' in :mod:`failure_logs.settings`, the policy's in :mod:`torus_sim.policies.settings`, the predictors' in
:mod:`predictors.settings`, the metrics' in :mod:`torus_sim.metrics.settings`, power's in
:mod:`torus_sim.inputs.energy.settings`, the engine's in :mod:`torus_sim.engine.sections`)."""

SECTIONS: dict[str, tuple[str, ...]] = {section.SECTION: tuple(section.model_fields) for section in SECTION_MODELS}
"""The sections of a scenario file and the fields each holds (each section's fields in its model's order)."""

LIMIT_FIELDS = SECTIONS["limits"]
"""The [limits] section: the per-user, per-group and per-queue limits that hold jobs (:mod:`torus_sim.engine.limits`)."""

PRIORITY_FIELDS = SECTIONS["priority"]
"""The [priority] section: Slurm's multifactor job priority (:mod:`torus_sim.engine.multifactor`)."""

INPUT_FILE_FIELDS = (
    "workload",
    "failures",
    "silent_errors",
    "job_power",
    "price",
    "power_cap_file",
    "maintenance",
    "effective_size",
    "reservations",
)
"""Scenario fields that may name an input file (alone, or after a ``name:`` prefix such as ``table:``)."""


class Scenario(
    RunSection,
    PrimeTimeSection,
    ReservationsSection,
    EffectiveSizeSection,
    MaintenanceSection,
    PrioritySection,
    LimitsSection,
    CycleSection,
    MetricsSection,
    ResilienceSection,
    PredictorsSection,
    PolicySection,
    SilentErrorsSection,
    FailuresSection,
    WorkloadSection,
    PlatformSection,
    PowerSettings,
):
    """Everything that defines a run (and goes into its manifest); see the module docstring.

    Raises:
        ConfigurationError: from :meth:`make`, a value of the wrong type or out of its domain, or an
            unknown field, named with what was expected.
    """

    model_config = ConfigDict(extra="forbid", validate_assignment=True, populate_by_name=True, frozen=False, allow_inf_nan=False)

    # -- checks --------------------------------------------------------------------------

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
        """Checks across sections (each section checks its own fields)."""
        if (
            isinstance(self.policy, str)
            and self.policy == "krevat"
            and self.predictor not in (None, "null")
            and self.placement in (None, "mfp")
        ):
            raise ValueError(f"the krevat policy uses no predictor; got {self.predictor!r} (use balancing or tiebreak)")
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
    def batch(self) -> bool:
        """Whether the workload is a batch released at time 0 (its source's ``kind``: a generated set, a job file, a table)."""
        from torus_sim.inputs.workload.sources import workload_source

        return workload_source(self.workload, self.workload_params).kind == "batch"

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
