"""One run from a scenario: inputs -> platform + policy -> engine -> metrics.

:func:`run` is what the CLI, the sweeps, the benchmarks and Python users call, whatever the
platform, workload, failures and policy::

    from torus_sim.experiments.runner import Scenario, run
    result = run(Scenario(failures="synthetic:1000", load_scale=1.2, seed=3))
    result.summary["avg_bounded_slowdown"]

An online workload (an SWF trace) is one simulation. A batch with silent errors drawn or read from a
file runs once per failure scenario (``scenarios``): the summary holds the mean and maximum of the
makespan over its lower bound (L(f) for rigid jobs, L'(J, f) for moldable ones) and the per-scenario
table; scenario i of a drawn set runs with model seed i (so RANDOM priorities differ between
scenarios and agree between heuristics), the scenarios of a file all with ``seed``.

:class:`ConfiguredModel` is the same model built from a scenario's fields, for ``mesa.batch_run``
and the browser view.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from predictors.base import NullPredictor
from torus_sim.core.disk_tables import remove_stale_once
from torus_sim.core.files import file_sha256, portable_text
from torus_sim.core.job_columns import POWER, names
from torus_sim.core.version import __version__
from torus_sim.engine import SIZE_ORIGIN, SchedulingModel, SimulationRecord, size_spans
from torus_sim.engine.record import OnDemandField
from torus_sim.experiments.extensions import (
    build_placement,
    build_policy,
    build_predictor,
    extension_manifest,
    placement_name,
    predictor_name,
)
from torus_sim.experiments.model_builder import build_model, model_arguments
from torus_sim.experiments.run_inputs import BatchSet, batch_set, failure_timing_text, load_failures, load_workload
from torus_sim.experiments.scenario import Scenario
from torus_sim.inputs.datasets import dataset, is_reference, local_copy
from torus_sim.inputs.workload.logged import INFERRED
from torus_sim.machine.platforms.kinds import platform_kind
from torus_sim.metrics.bounds import moldable_lower_bound, rigid_lower_bound
from torus_sim.policies.base import Policy

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "ConfiguredModel",
    "RunConfig",
    "RunResult",
    "Scenario",
    "batch_set",
    "build_model",
    "build_placement",
    "build_policy",
    "build_predictor",
    "load_failures",
    "load_workload",
    "model_arguments",
    "run",
]

RunConfig = Scenario
"""The name the Python API had before the scenario format (same class)."""


# -- results --------------------------------------------------------------------------------


def _empty_table() -> pd.DataFrame:
    """An empty DataFrame (pandas is imported when a table is made, after the run's last event)."""
    import pandas as pd

    return pd.DataFrame()


class _TableOnDemand(OnDemandField):
    """A table of :class:`RunResult` a run may leave out (None): an empty DataFrame made when first read.

    A plain online run has neither per-scenario nor hourly table, and reading neither imports pandas.
    """

    def made(self, result, stored):  # noqa: D102
        return _empty_table() if stored is None else stored


class _JobsOnDemand(OnDemandField):
    """:attr:`RunResult.jobs`: a DataFrame, or made from the run's record on first access (:func:`~torus_sim.metrics.summary.record_job_table`)."""

    def made(self, result, stored):  # noqa: D102
        if stored is not None:
            return stored
        if result.record is not None and result.record.has_column("jobs", "job_id"):
            from torus_sim.metrics.summary import record_job_table  # the metrics (pandas): when the table is read

            return record_job_table(result.record, result.config.gamma, result.config.bsld_form)
        return _empty_table()


@dataclass
class RunResult:
    """A finished run.

    Attributes:
        config: the scenario.
        summary: the summary metrics (see :func:`torus_sim.metrics.summarize_record`; a batch of
            several scenarios: ``mean_ratio``, ``max_ratio``, ``mean_makespan``, ...).
        jobs: per-job results (the first simulation's; empty for a batch of several scenarios): made from the
            record when first read (:func:`~torus_sim.metrics.summary.record_job_table`) where not given.
        inputs: file paths and SHA-256 of the inputs, cleaning counts.
        record: the raw event record (the first simulation's).
        scenarios: per silent-error scenario of a batch: makespan, lower bound, failures (else empty).
        power: with power accounting, one row per simulated hour: energy, mean power, price, cost (else empty).
        boot_change_j: with power accounting and idle nodes switched off, what each attempt's boot
            changed in its energy, joules, in the record's attempt-table order (Batsim's
            ``consumed_energy`` adds it); else None.
    """

    config: Scenario
    summary: dict
    jobs: pd.DataFrame = field(default=_JobsOnDemand(), repr=False)
    inputs: dict = field(default_factory=dict)
    record: SimulationRecord | None = field(repr=False, default=None)
    scenarios: pd.DataFrame = field(default=_TableOnDemand(), repr=False)
    power: pd.DataFrame = field(default=_TableOnDemand(), repr=False)
    boot_change_j: np.ndarray | None = field(repr=False, default=None)

    def rows_in(self, table: str) -> int:
        """Rows of ``scenarios`` or ``power`` (0 when the run has none), without making an empty table."""
        value = self.__dict__[f"_{table}"]
        return 0 if value is None else len(value)

    def job_rows(self):
        """The per-job table as it will be written.

        :attr:`jobs` once built (or given), else its rows read from the record a piece at a time
        (:class:`~torus_sim.metrics.summary.JobTableRows`; its ``frame()`` builds :attr:`jobs`).
        """
        built = self.__dict__.get("_jobs")
        if built is not None or self.record is None or not self.record.has_column("jobs", "job_id"):
            return self.jobs
        from torus_sim.metrics.summary import JobTableRows

        return JobTableRows(self.record, self.config.gamma, self.config.bsld_form, whole=lambda: self.jobs)

    def manifest(self) -> dict:
        """Configuration, inputs and summary as one JSON-ready dictionary (no wall-clock data).

        ``config`` is the scenario's fields, with ``failures`` naming the source that ran where the
        scenario left it to the platform's default (``bundled`` on BG/L, ``mira`` on Mira), never null.
        """
        config = self.config.model_dump(mode="json")
        if config.get("failures") is None and self.inputs.get("failures", {}).get("spec"):
            config["failures"] = self.inputs["failures"]["spec"]
        return {
            "torus_sim_version": __version__,
            "config": config,
            "inputs": self.inputs,
            "summary": self.summary,
        }


def lower_bounds(scenario: Scenario, batch: BatchSet, nodes: int) -> np.ndarray:
    """The makespan lower bound of every failure scenario: L(f) (rigid, RIGID Eq. 5-6) or L'(J, f) (MOLDABLE §5.1).

    L(f) leaves the verification time V out, as Eq. 5-6 and the reference code do; ``bound_verification``
    adds V to every attempt (a tighter bound when V is not negligible).
    """
    failures = batch.silent_errors if batch.silent_errors is not None else np.zeros((1, len(batch.workload.jobs)), dtype=int)
    if batch.workload.times is not None:
        return moldable_lower_bound(batch.workload.times, failures)
    jobs = batch.workload.jobs
    runtimes = np.array([job.runtime for job in jobs])
    sizes = np.array([job.partition_size for job in jobs])
    # RIGID Eq. 5-6 define L(f) on t_j alone (the detector's cost is negligible, §3), as the reference code does
    verification = scenario.verification_time if scenario.bound_verification else 0.0
    return rigid_lower_bound(runtimes, sizes, failures, nodes, verification)


def _inputs_manifest(scenario: Scenario, inputs: dict, model: SchedulingModel) -> dict:
    """The run's inputs as they were built: the sources the model builder resolved (``inputs``), never the registries again."""
    from failure_logs.events import FailureLog

    workload = model.workload
    log = model.failure_log
    failures = inputs.get("failures")
    spec = scenario.failure_spec
    logged = isinstance(failures, FailureLog)
    source = inputs["failure_source"]
    workload_info = inputs["workload_source"].info
    return {
        "workload": {
            "path": _as_named(scenario.workload, workload.source),
            "sha256": workload.sha256,
            "jobs": len(workload.jobs),
            "kind": workload.kind,
            "cleaning": dict(sorted(workload.cleaning.items())),
            "unix_start_time": workload.header.get("UnixStartTime") if workload.header else None,
            "load_scale": workload.load_scale,
            "offered_load": inputs.get("offered_load"),
            "entry": workload_info.to_dict() if workload_info is not None else None,
            "declared": _declared(scenario),
        },
        "platform": platform_kind(scenario.platform).describe(model.platform, scenario.platform_fields()),
        "failures": {
            "spec": spec,
            "path": _as_named(spec, source.path or spec) if logged else None,
            "entry": source.info.to_dict() if source.info is not None else None,
            "sha256": log.sha256,
            "source": _as_named(spec, log.source),
            "count": len(log),
            "reader_counts": dict(sorted(log.counts.items())),
            "uncovered_span": inputs.get("uncovered", []),
            "timing": failure_timing_text(scenario, model.workload, failures),
        },
        "silent_errors": scenario.silent_spec,
        "policy": model.policy.name,
        "policy_settings": model.policy_settings(),
        "predictor": _label(predictor_name(scenario)) if _uses_predictor(model.policy) else NullPredictor.name,
        "extensions": extension_manifest(
            scenario, placement_name(scenario), predictor_name(scenario) if _uses_predictor(model.policy) else None
        ),
        **_maintenance_manifest(scenario, model),
        **_effective_size_manifest(scenario, model),
        **_reservations_manifest(scenario, model),
    }


def _inferred_or_file(spec: str) -> dict:
    """A setting read from the log (``"inferred"``, no hash) or from a file (its portable path and SHA-256)."""
    if spec == INFERRED:
        return {"spec": spec, "sha256": None}
    return {"spec": portable_text(spec), "sha256": file_sha256(spec)}


def _maintenance_manifest(scenario: Scenario, model: SchedulingModel) -> dict:
    """The run's maintenance windows as built (``{}`` without any: the manifest of a run without them is unchanged)."""
    windows = model.scheduler.maintenance
    if windows is None:
        return {}
    return {
        "maintenance": {
            **_inferred_or_file(scenario.maintenance),
            "windows": len(windows.windows),
            "hours": round(windows.hours(), 3),
            "drain": windows.drains,
        }
    }


def _effective_size_manifest(scenario: Scenario, model: SchedulingModel) -> dict:
    """The run's effective-size spans as built (``{}`` without any: the manifest of a run without them is unchanged)."""
    held = model.passes.held_nodes
    if held is None or (scenario.effective_size is None and not scenario.effective_size_starved):
        return {}
    given = _inferred_or_file(scenario.effective_size) if scenario.effective_size is not None else {}
    starved = {"starved": True} if scenario.effective_size_starved else {}
    return {"effective_size": {**given, **starved, "spans": size_spans(held.reservations, model.platform.capacity)}}


def _reservations_manifest(scenario: Scenario, model: SchedulingModel) -> dict:
    """The run's reservations file (portable path, SHA-256), how many it holds and how many kill (``{}`` without one)."""
    if scenario.reservations is None:
        return {}
    origin = SIZE_ORIGIN  # the effective size's own reservations are not the file's
    reservations = [each for each in model.passes.held_nodes.reservations if each.origin != origin]
    return {
        "reservations": {
            **_inferred_or_file(scenario.reservations),
            "reservations": len(reservations),
            "killing": sum(each.kill for each in reservations),
        }
    }


def _as_named(spec, text):
    """``text`` (a path, or a description naming it) without this machine's paths.

    A registered file's local path is written as its reference (a run of ``pwa:SDSC-SP2`` records ``pwa:SDSC-SP2``
    and its SHA-256 beside it), a bundled input's as its path inside the package (``torus_sim/inputs/data/...``).
    """
    if not isinstance(text, str):
        return text
    if is_reference(spec):
        local = local_copy(spec)
        text = text.replace(str(local), dataset(spec).name) if local is not None else text
    return portable_text(text)  # a bundled input: its path inside the package, the same on every machine


def _declared(scenario: Scenario) -> dict:
    """What the workload's input names (a job file's header) and what ran: ``{field: {"declared": v, "ran": v}}``."""
    from torus_sim.inputs.workload.sources import declared_by_workload

    return {
        name: {"declared": value, "ran": getattr(scenario, name)}
        for name, value in declared_by_workload(scenario.workload).items()
        if not isinstance(value, Exception)
    }


def _label(value) -> str:
    """A name as given, or the import path of an object given from Python."""
    from torus_sim.inputs.plugin_admission import object_path

    return value if isinstance(value, str) else object_path(value)


def _uses_predictor(policy: Policy) -> bool:
    """Whether the run's placement asks a failure predictor (not the null one)."""
    predictor = getattr(getattr(policy, "placement", None), "predictor", None)
    return predictor is not None and not isinstance(predictor, NullPredictor)


def run(scenario: Scenario, progress: bool = False) -> RunResult:
    """Run one scenario.

    Args:
        scenario: the run (a :class:`~torus_sim.experiments.scenario.Scenario`).
        progress: show a progress bar over the jobs on a terminal (a run longer than 2 s; see
            :meth:`torus_sim.engine.model.SchedulingModel.run`).

    Returns:
        The result: summary, per-job table, inputs, the event record, and the per-scenario table of a batch.

    Raises:
        ConfigurationError: a parameter out of its domain or a combination a policy does not support.
        WorkloadFormatError, FailureLogFormatError, JobSetFormatError: a malformed input line.
        FileNotFoundError: an input file is missing.
    """
    remove_stale_once()  # what a killed run left in the temporary directory (torus_sim.core.disk_tables)
    inputs: dict = {}
    if not scenario.batch:
        model = build_model(scenario, inputs)
        _warn_uncovered(inputs)
        offered = inputs["offered_load"] = model.workload.offered_load(model.platform.capacity)
        if offered is not None and offered > 1.0:
            warnings.warn(
                f"the offered load after cleaning is {offered:.2f} > 1 (c = {model.workload.load_scale:.4g}): the queue grows "
                "without bound and the means describe the backlog, not the scheduler; --offered-load 0.9 picks the c that gives 0.9",
                stacklevel=2,
            )
        # what the run is, read from the scenario before the model runs: nothing below the run asks the scenario again
        result = RunResult(scenario, {}, None, _inputs_manifest(scenario, inputs, model))  # jobs: on demand
        settings, clock_start = _metric_settings(scenario), scenario.clock_start_hour if scenario.power else None
        record = model.run(progress=progress)
        result.summary, result.record = _summary(settings, model, record), record
        result.summary["offered_load"] = offered if offered is not None else float("nan")
        if clock_start is not None:
            _account_power(result, model, clock_start)
        _add_platform_columns(result, model.platform)
        return result
    model = build_model(scenario, inputs, 0, record=True)
    batch: BatchSet = inputs["batch"]
    count = len(batch.model_seeds)
    bounds = lower_bounds(scenario, batch, model.platform.capacity)
    record = model.run()
    makespans = [record.makespan]
    energies = [_scenario_energy(scenario, model, record)] if scenario.power else []
    for index in range(1, count):
        other = build_model(scenario, inputs, index, record=scenario.power)  # power: each scenario's attempts
        other_record = other.run()
        makespans.append(other_record.makespan)
        if scenario.power:
            energies.append(_scenario_energy(scenario, other, other_record))
    failures = batch.silent_errors.sum(axis=1) if batch.silent_errors is not None else np.zeros(1, dtype=int)
    makespans = np.array(makespans)
    ratios = makespans / bounds
    import pandas as pd  # the per-scenario table: after the runs

    table = pd.DataFrame(
        {"scenario": range(count), "makespan": makespans, "lower_bound": bounds, "failures": failures, "ratio": ratios}
    )
    for column in BATCH_ENERGY_COLUMNS if scenario.power else ():
        table[column] = [energy[column] for energy in energies]
    summary = _summary(_metric_settings(scenario), model, record) if count == 1 else {}
    summary.update(
        {
            "scenarios": count,
            "mean_ratio": float(ratios.mean()),
            "max_ratio": float(ratios.max()),
            "mean_makespan": float(makespans.mean()),
            "mean_lower_bound": float(bounds.mean()),
            "mean_failures": float(failures.mean()),
        }
    )
    if scenario.power:
        summary.update({f"mean_{column}": float(table[column].mean()) for column in BATCH_ENERGY_COLUMNS})
    result = RunResult(scenario, summary, None, _inputs_manifest(scenario, inputs, model), record, table)  # jobs: on demand
    if scenario.power:  # scenario 0's jobs and hours; its whole account in the summary only when it is the only one
        _account_power(result, model, scenario.clock_start_hour, into_summary=count == 1)
    return result


BATCH_ENERGY_COLUMNS = ("energy_kwh", "wasted_energy_kwh", "bill")
"""What a batch with power accounting adds to each failure scenario's row (and, as ``mean_*``, to the summary)."""


def _scenario_energy(scenario: Scenario, model: SchedulingModel, record: SimulationRecord) -> dict:
    """One failure scenario's energy, wasted energy (silent errors' re-executions) and bill (:data:`BATCH_ENERGY_COLUMNS`)."""
    from torus_sim.metrics.energy import account_energy

    power = model.power
    watts = record.attempts["job_id"].map(power.job_watts).to_numpy(float)
    summary = account_energy(
        record, watts, power.node, power.tariff, scenario.clock_start_hour, cap=power.cap, switch_off=power.switch_off
    ).summary
    return {column: summary[column] for column in BATCH_ENERGY_COLUMNS}


def _account_power(result: RunResult, model: SchedulingModel, clock_start_hour: float, into_summary: bool = True) -> None:
    """Add power accounting to a finished run: summary metrics, the jobs' power and energy, hourly power.

    ``clock_start_hour``: the hour of day at the simulation's time 0 (the scenario's, read before the run).

    The summary gains :func:`torus_sim.metrics.energy.account_energy`'s keys (unless ``into_summary`` is
    False: a batch of several failure scenarios, whose summary has their means); ``jobs`` gains
    ``power_w`` (watts per node) and ``energy_kwh`` (all its attempts); ``power`` is the hourly table;
    the manifest's ``inputs.power`` names the figures and their sources.
    """
    from torus_sim.metrics.energy import account_energy

    record = result.record
    power = model.power  # read when the model was built (model_arguments)
    attempts = record.attempts
    watts = attempts["job_id"].map(power.job_watts).to_numpy(float)
    energy = account_energy(record, watts, power.node, power.tariff, clock_start_hour, cap=power.cap, switch_off=power.switch_off)
    if into_summary:
        result.summary.update(energy.summary)
    jobs = result.jobs
    watts, kwh = names(POWER)  # the job table's power columns (torus_sim.core.job_columns)
    jobs.insert(len(jobs.columns), watts, jobs["job_id"].map(power.job_watts).astype(float))
    jobs.insert(len(jobs.columns), kwh, jobs["job_id"].map(energy.job_energy_kwh).fillna(0.0).astype(float))
    result.power = energy.hourly
    result.boot_change_j = energy.boot_change_j
    result.inputs["power"] = power.manifest()


def _add_platform_columns(result: RunResult, platform) -> None:
    """The job-table columns the platform declares (``job_columns``, :data:`torus_sim.core.job_columns.PLATFORM`), added to the result's jobs."""
    columns = getattr(platform, "job_columns", ())
    if not columns:
        return
    jobs = result.jobs
    for column in columns:
        jobs.insert(len(jobs.columns), column.name, platform.job_column(column.name, jobs["job_id"].to_numpy()))


def _metric_settings(scenario: Scenario) -> tuple:
    """The scenario's metric settings, read before the run: (Γ, slowdown form, fairness reading, min delay)."""
    return scenario.gamma, scenario.bsld_form, scenario.fairness_reading, scenario.min_delay


def _summary(settings: tuple, model: SchedulingModel, record: SimulationRecord) -> dict:
    """The run's summary with the metric settings of :func:`_metric_settings`."""
    from torus_sim.metrics import summarize_record  # the metrics (pandas): after the run

    return summarize_record(record, model.workload, *settings)


def _warn_uncovered(inputs: dict) -> None:
    uncovered = inputs.get("uncovered")
    if uncovered:
        failures = inputs["failures"]
        warnings.warn(
            f"failure log {failures.source} does not cover the workload's span: no failures in "
            + ", ".join(f"[{start:.0f}, {end:.0f}] s" for start, end in uncovered)
            + (
                " (the window runs past the log's end: give a smaller failure_offset)"
                if "|window=" in failures.source
                else " (fit it onto the span, the default, or choose another log)"
            ),
            stacklevel=3,
        )


class ConfiguredModel(SchedulingModel):
    """The model built from scenario fields, the class to hand to ``mesa.batch_run`` (every platform).

    ``mesa.batch_run`` constructs a model from keyword arguments and steps it; this class takes the
    fields of :class:`~torus_sim.experiments.scenario.Scenario` (``platform``, ``workload``, ``failures``,
    ``policy``, ``confidence``, ``seed``, ...) plus ``step_seconds`` and, for a batch, which
    silent-error scenario to run (``scenario_index``). ``batch_run`` does not vary seeds between
    iterations: pass ``seed`` as a list of values instead.

    Args:
        step_seconds: simulated seconds per Mesa step (one DataCollector row each).
        scenario_index: the silent-error scenario of a batch to run.
        node_identities: a cluster keeps node identities even when nothing needs them (drawing).
        **fields: Scenario fields.

    Raises:
        ConfigurationError: an unknown field or a value out of its domain.
    """

    def __init__(self, step_seconds: float = 3600.0, scenario_index: int = 0, node_identities: bool = False, **fields) -> None:
        self.scenario = Scenario.make(**fields)
        self.inputs: dict = {}
        arguments, keywords = model_arguments(self.scenario, self.inputs, scenario_index, node_identities=node_identities)
        _warn_uncovered(self.inputs)
        super().__init__(*arguments, step_seconds=step_seconds, **keywords)


ConfiguredTorusModel = ConfiguredModel
"""The name the batch-run class had before the one engine."""
