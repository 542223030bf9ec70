"""A run's inputs from its scenario: the jobs, the silent-error scenarios of a batch, the fail-stop failures.

Every input is asked of its registry (:mod:`torus_sim.inputs.workload.sources`,
:mod:`failure_logs.sources`, :mod:`torus_sim.machine.platforms.kinds`); nothing here knows a workload, a log
or a platform by name. What is here is what every source shares: a batch's silent-error scenarios
(drawn with the papers' seeds, or read from a file), a real log laid over the workload's span (fit,
window, as logged), a reduced run's share of the whole run's failures, and the checks on synthetic
failure counts.

References:
    BGL-FAULT §6.2 (a real log fitted onto the workload's span); RIGID §5.1 and MOLDABLE §5.1 (silent
    errors drawn per job from q̄ or λ, the experiments' seeds).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from failure_logs.events import FailureLog
from failure_logs.silent import (
    DRAWN,
    NO_SILENT_ERRORS,
    draw_scenarios,
    error_rate_for_mean_probability,
    failure_probabilities_by_area,
    failure_probabilities_by_work,
)
from failure_logs.sources import FailureContext, check_synthetic_count, failure_source
from failure_logs.synthetic import GeneratedFailures
from failure_logs.transform import cut_to_span, fit_to_span, window_onto_span
from torus_sim.core.errors import ConfigurationError, TorusSimError
from torus_sim.inputs.energy.power_inputs import PowerInputs
from torus_sim.inputs.untrusted import exits_refused, is_builtin_extension, raised_text
from torus_sim.inputs.workload.jobs import Workload
from torus_sim.inputs.workload.shaking import shaken
from torus_sim.inputs.workload.sources import BatchJobs, WorkloadContext, workload_source
from torus_sim.machine.platforms.kinds import platform_kind

__all__ = [
    "BatchSet",
    "PowerInputs",
    "batch_set",
    "failure_horizon",
    "failure_timing_text",
    "load_failures",
    "load_power",
    "load_workload",
    "uncovered_span",
]


@dataclass
class BatchSet:
    """A batch workload with what its runs share: the job set, its failure scenarios, caches.

    Attributes:
        workload: the jobs.
        silent_errors: int ``(S, n)``, the failure scenarios (f_j per job), or None.
        model_seeds: the model seed of each scenario.
        cache: what the runs of this job set share, by key (:meth:`shared`: BATCH's tables, an allocation).
    """

    workload: Workload
    silent_errors: np.ndarray | None
    model_seeds: list[int]
    cache: dict = field(default_factory=dict)

    def shared(self, key, make):
        """The value shared under ``key`` by the runs of this job set, made by ``make()`` the first time."""
        if key not in self.cache:
            self.cache[key] = make()
        return self.cache[key]


def _context(scenario, source, capacity: int | None = None, log_fields: tuple[str, ...] = ()) -> WorkloadContext:
    """What a workload source is given: the scenario fields it declares, the platform kind and the fields it declares."""
    fields = scenario.fields_for(source, f"workload source {getattr(source, 'name', type(source).__name__)!r}")
    return WorkloadContext(fields, platform_kind(scenario.platform), capacity, scenario.platform_fields(), log_fields)


def _called(source, what: str, call: str, function, *args):
    """``function(*args)`` of an input source; a plug-in's failure (anything it raises or exits with) is one sentence.

    torus-sim's own sources raise their own errors (a file and a line); a plug-in's code is guarded as a
    policy's is (:mod:`torus_sim.inputs.untrusted`).

    Raises:
        ConfigurationError: a plug-in source raised or exited (naming it, the call and its line).
    """
    if is_builtin_extension(source):
        return function(*args)
    try:
        with exits_refused(f"the {what}'s {call}"):
            return function(*args)
    except (KeyboardInterrupt, TorusSimError):
        raise
    except BaseException as error:  # noqa: BLE001 - plug-in code: SystemExit and bare BaseException too
        name = source.info.name if source.info is not None else type(source).__name__
        raise ConfigurationError(f"{what} {name!r}: {call} {raised_text(error)}") from None


def load_workload(scenario, capacity: int | None = None, source=None, log_fields: tuple[str, ...] = ()) -> Workload:
    """Read and clean the online workload of a scenario for its platform (its source: :func:`~torus_sim.inputs.workload.sources.workload_source`).

    Args:
        scenario: the run.
        capacity: the platform's nodes (the platform kind decides from the scenario and the workload when None).
        source: the scenario's workload source, already resolved (the model builder keeps it for the run's
            manifest); resolved from ``scenario.workload`` when None.
        log_fields: SWF fields the run reads from the log besides the jobs (its site readings): an SWF log's are read
            in the same pass and kept on the workload (:attr:`~torus_sim.inputs.workload.jobs.Workload.log`).

    Returns:
        The workload (BGL-FAULT §6.2's or PV-EASY §5.1's cleaning rules, see :mod:`torus_sim.inputs.workload.jobs`),
        its submit times shaken by the scenario's ``shake`` and ``seed`` where it sets one
        (:func:`~torus_sim.inputs.workload.shaking.shaken`).

    Raises:
        ConfigurationError: the workload is a batch, or its source refuses the scenario.
        WorkloadFormatError: a malformed line of its file.
        FileNotFoundError: its file is missing.
    """
    if source is None:
        source = workload_source(scenario.workload, scenario.workload_params)
    if source.kind != "online":
        raise ConfigurationError(f"workload {scenario.workload!r} is a batch (released at 0), not jobs submitted over time")
    source.check_platform(scenario.platform)
    workload = _called(source, "workload", "jobs", source.jobs, _context(scenario, source, capacity, log_fields))
    if not isinstance(workload, Workload):
        raise ConfigurationError(f"workload {scenario.workload!r}: jobs returned {type(workload).__name__}, not a Workload")
    if scenario.shake is not None:  # every job's submit time moved by the run's seed (input shaking)
        workload = shaken(workload, scenario.shake, scenario.seed)
    return workload


def batch_set(scenario, source=None) -> BatchSet:
    """The batch workload of a scenario and its failure scenarios.

    The job sets and scenarios of generated batches come from the seeds of the papers' experiments
    (set i: ``[seed, i, n]``; its scenarios: ``[seed, i, n, round(q̄ 1e6), 1]`` for RIGID,
    ``[seed, i, n, round(λ 1e12), 2]`` for MOLDABLE), so every heuristic sees the same ones.

    Args:
        scenario: the run.
        source: the scenario's workload source, already resolved (the model builder keeps it for the run's
            manifest); resolved from ``scenario.workload`` when None.

    Returns:
        The batch: its jobs, failure scenarios (silent errors) and each scenario's model seed.

    Raises:
        ConfigurationError: a workload that is not a batch, one the platform cannot run (moldable jobs
            on the torus), jobs that do not fit, or silent errors drawn without q̄ or λ.
    """
    from torus_sim.inputs.workload.refcode import read_failure_scenarios

    if source is None:
        source = workload_source(scenario.workload, scenario.workload_params)
    if source.kind != "batch":
        raise ConfigurationError(f"workload {scenario.workload!r} is submitted over time, not a batch")
    source.check_platform(scenario.platform)
    made = _called(source, "workload", "jobs", source.jobs, _context(scenario, source))
    if not isinstance(made, BatchJobs):
        raise ConfigurationError(f"workload {scenario.workload!r}: jobs returned {type(made).__name__}, not BatchJobs")
    batch, rigid, rate = made.workload, made.rigid, made.error_rate
    silent = scenario.silent_spec
    count = len(batch.jobs)
    if silent == NO_SILENT_ERRORS:
        return BatchSet(batch, None, [scenario.seed])
    if silent != DRAWN:
        scenarios = read_failure_scenarios(silent, count, scenario.scenarios if scenario.scenarios > 1 else None)
        return BatchSet(batch, scenarios, [scenario.seed] * len(scenarios))
    if batch.times is not None:
        lam = scenario.error_rate if scenario.error_rate is not None else rate
        if lam is None:
            raise ConfigurationError("drawn silent errors on moldable jobs need the error rate λ (error_rate)")
        work = batch.times[:, 0]  # w_j = t_j(1)
        rng = np.random.default_rng(source.silent_error_seed(scenario.seed, scenario.job_set, count, lam))
        probabilities = failure_probabilities_by_work(work, lam)
    else:
        areas = np.array([job.runtime * job.partition_size for job in batch.jobs]) if rigid is None else rigid.areas
        if scenario.mean_failure_probability is not None:
            lam = error_rate_for_mean_probability(areas, scenario.mean_failure_probability)
            marker = round(scenario.mean_failure_probability * 1e6)
        elif scenario.error_rate is not None or rate is not None:
            lam = scenario.error_rate if scenario.error_rate is not None else rate
            marker = round(lam * 1e12)
        else:
            raise ConfigurationError("drawn silent errors need q̄ (mean_failure_probability) or λ (error_rate)")
        rng = np.random.default_rng([scenario.seed, scenario.job_set, count, marker, 1])
        probabilities = failure_probabilities_by_area(areas, lam)
    scenarios = draw_scenarios(probabilities, scenario.scenarios, rng)
    return BatchSet(batch, scenarios, list(range(scenario.scenarios)))


def failure_horizon(workload: Workload, capacity: int) -> tuple[float, float]:
    """The span synthetic failures are drawn over: the submissions, or for a batch 4 x its work / N (covers the run)."""
    start, end = workload.span
    if end > start:
        return start, end
    work = sum(job.runtime * job.partition_size for job in workload.jobs)
    return start, start + max(4.0 * work / capacity, 1.0)


def load_failures(scenario, capacity: int, workload: Workload, source=None):
    """The fail-stop failures of a run and the spans a real log leaves uncovered.

    The source (:func:`~failure_logs.sources.failure_source`) gives a log, a request drawn by the run's
    generator, or None. A log is laid over the workload as ``failure_timing`` says (a reduced run:
    over the whole log's span, then cut to the prefix's, so it meets the whole run's rate); a request
    is checked against the span and drawn over it (a batch: over :func:`failure_horizon`).

    Args:
        scenario: the run.
        capacity: the platform's nodes.
        workload: the run's workload (its span, its kind).
        source: the scenario's failure source, already resolved (the model builder keeps it for the run's
            manifest); resolved from ``scenario.failure_spec`` when None.

    Returns:
        ``(failures, uncovered)``: the log / request / None, and ``[(start, end), ...]`` seconds of the
        workload's span the log does not cover.

    Raises:
        ConfigurationError: more synthetic failures than one per node per hour of the span, or a
            source's own refusal.
    """
    spec = scenario.failure_spec
    if source is None:
        source = failure_source(spec, scenario.failures_params)
    horizon = failure_horizon(workload, capacity)
    settings = scenario.fields_for(source, f"failure source {getattr(source, 'name', type(source).__name__)!r}")
    failures = _called(source, "failure source", "load", source.load, FailureContext(settings, capacity, horizon))
    if failures is not None and not isinstance(failures, (FailureLog, GeneratedFailures)):
        raise ConfigurationError(
            f"failure source {spec!r}: load returned {type(failures).__name__}, not a FailureLog or GeneratedFailures"
        )
    if source.places_itself:
        return failures, []
    reduced = workload.whole_span if scenario.reduced_failures == "rate" else None
    whole = reduced or workload.span  # a prefix (max_jobs) meets the whole log's failure rate
    uncovered = []
    if isinstance(failures, FailureLog):
        window_end = whole[0] + (failures.span[1] - failures.span[0] - scenario.failure_offset)  # the log's end, moved
        failures = _laid_over(failures, scenario, whole)
        if scenario.timing == "window":
            uncovered = [(max(window_end, whole[0]), whole[1])] if window_end < whole[1] else []
        elif workload.kind == "online":
            uncovered = uncovered_span(failures, whole)
        if reduced is not None:  # the prefix's part of the whole run's failures and gaps
            failures = cut_to_span(failures, *workload.span)
            low, high = workload.span
            uncovered = [(max(a, low), min(b, high)) for a, b in uncovered if min(b, high) > max(a, low)]
    if isinstance(failures, GeneratedFailures):
        check_synthetic_count(failures.count, capacity, horizon if workload.kind == "batch" else whole, spec)
    if isinstance(failures, GeneratedFailures) and workload.kind == "batch":
        failures.span = horizon
    elif isinstance(failures, GeneratedFailures) and reduced is not None:
        failures.span, failures.keep = reduced, workload.span
    return failures, uncovered


def _laid_over(log: FailureLog, scenario, span: tuple[float, float]) -> FailureLog:
    """A real log laid over a workload's span as the scenario's ``failure_timing`` says (see :attr:`Scenario.timing`).

    References:
        BGL-FAULT §6.2 (``fit``); :func:`failure_logs.transform.window_onto_span` (``window``).
    """
    timing = scenario.timing
    if timing == "fit":
        return fit_to_span(log, *span)
    if timing == "window":
        return window_onto_span(log, scenario.failure_offset, *span)
    return log


def uncovered_span(log: FailureLog, span: tuple[float, float]) -> list[tuple[float, float]]:
    """Parts of a workload's span ``(start, end)`` before the log's first or after its last failure.

    A log of one failure covers no span (there is nothing to say of it), and gaps under a second
    (the rounding of a fitted log's ends) are not gaps.
    """
    if not len(log):
        return [span]
    if len(log) == 1:
        return []
    first, last = log.span
    gaps = []
    if first > span[0] + 1.0:
        gaps.append((span[0], min(first, span[1])))
    if last < span[1] - 1.0:
        gaps.append((max(last, span[0]), span[1]))
    return gaps


def failure_timing_text(scenario, workload: Workload, failures) -> str:
    """One line saying how the failures met the workload (for the run's header and summary).

    Args:
        scenario: the run.
        workload: its workload (``whole_span`` set when ``max_jobs`` kept a prefix).
        failures: what its failure source gave (a log, a request drawn by the run, or None).

    Returns:
        For example ``"a real log fitted onto the whole log's span (BGL-FAULT §6.2), the 400-job prefix's
        part kept"``; empty for no failures.
    """
    if failures is None:
        return ""
    prefix = workload.whole_span is not None and workload.kind == "online"
    share = (
        f", the {len(workload.jobs):,}-job prefix's part kept (the whole run's rate)"
        if prefix and scenario.reduced_failures == "rate"
        else ""
    )
    squeezed = (
        f", all squeezed into the {len(workload.jobs):,}-job prefix" if prefix and scenario.reduced_failures == "count" else ""
    )
    if not isinstance(failures, FailureLog):
        return f"drawn over the {'whole log' if share else 'workload'}'s submission span{share}"
    timing = scenario.timing
    if timing == "fit":
        return (
            f"first..last failure fitted onto the {'whole log' if share else 'workload'}'s span (BGL-FAULT §6.2){share}{squeezed}"
        )
    if timing == "window":
        return f"a window from {scenario.failure_offset:,.0f} s after the log's first failure, at its real rate{share}{squeezed}"
    return "at the times the log gives"


def load_power(scenario, job_ids, nodes: int = 0) -> PowerInputs:
    """The power inputs of a run whose scenario has ``power`` on.

    Args:
        scenario: the run (its ``[power]`` fields, its platform kind's machine, its seed).
        job_ids: every job id of the workload (the uniform model draws per job id, the same under every policy).
        nodes: N, the platform's nodes (midplanes on a torus), for the power cap's level.

    Raises:
        ConfigurationError: a bad job-power or price specification, idle above busy, a boot time or
            off / boot draw without ``idle_off_after``, an off draw above the idle draw.
        FileNotFoundError, InputFileError: a missing, empty or malformed job-power, price or power cap file.
    """
    from torus_sim.inputs.energy.caps import PowerCap
    from torus_sim.inputs.energy.job_power import job_power_source
    from torus_sim.inputs.energy.node_power import node_power
    from torus_sim.inputs.energy.switch_off import SwitchOff
    from torus_sim.inputs.energy.tariffs import tariff

    machine = platform_kind(scenario.platform).machine(scenario.platform_fields())  # a torus: its machine's midplanes
    node = node_power(scenario.fields_for(node_power, "node power"), machine)
    source = job_power_source(scenario.job_power)
    ids = np.asarray(list(job_ids), dtype=np.int64)
    watts = source.watts(ids, node.busy_w, scenario.seed)
    job_watts = dict(zip(ids.tolist(), np.asarray(watts, dtype=float).tolist(), strict=True))
    cap = PowerCap.of(scenario.power_cap, scenario.power_cap_hours, scenario.power_cap_file)
    switch_off = SwitchOff.of(scenario.fields_for(SwitchOff, "switching off"))
    if switch_off is not None and switch_off.off_w > node.idle_w:
        raise ConfigurationError(
            f"node_off_w {switch_off.off_w:g} W is above the idle draw {node.idle_w:g} W: a switched-off node draws less than an idle one"
        )
    return PowerInputs(node, job_watts, source, tariff(scenario.price), scenario.clock_start_hour, cap, int(nodes), switch_off)
