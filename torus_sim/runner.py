"""One run from a scenario: inputs -> platform + policy -> engine -> metrics.

:func:`run` is what the CLI, the sweeps, the benchmarks and Python users call, whatever the
platform, workload, failures and policy::

    from torus_sim.runner import Scenario, run
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

import math
import warnings
from dataclasses import dataclass, field
from functools import lru_cache, partial

import numpy as np
import pandas as pd

from failure_logs.events import FailureLog
from failure_logs.silent import (
    draw_scenarios,
    error_rate_for_mean_probability,
    failure_probabilities_by_area,
    failure_probabilities_by_work,
)
from failure_logs.sources import BUNDLED_BGL_RAS, load_failure_source
from failure_logs.transform import cut_to_span, fit_to_span, window_onto_span
from predictors import PREDICTORS
from predictors.runtime import make_runtime_predictor
from torus_sim.engine import SchedulingModel, SimulationRecord
from torus_sim.engine.progress import Preemption
from torus_sim.errors import ConfigurationError
from torus_sim.extensions import extension_manifest
from torus_sim.guarded_extensions import guard_placement, guard_predictor
from torus_sim.metrics import summarize_record
from torus_sim.metrics.bounds import moldable_lower_bound, rigid_lower_bound
from torus_sim.partitions import PartitionTable, round_up_to_feasible_size
from torus_sim.platforms.cluster import ClusterPlatform
from torus_sim.platforms.torus import TorusPlatform
from torus_sim.policies import fault_aware as _fault_aware  # noqa: F401  (registers balancing and tiebreak placements)
from torus_sim.policies.base import Policy
from torus_sim.policies.catalog import DEFAULT_PLACEMENT, POLICIES
from torus_sim.policies.moldable import ALLOCATIONS, AllotmentTables
from torus_sim.policies.placement import PLACEMENTS, MfpPlacement
from torus_sim.policies.resilience import ResiliencePolicy
from torus_sim.scenario import BUNDLED_NASA_LOG, MAX_NODES, Scenario
from torus_sim.topology import Torus
from torus_sim.workload.batch import generate_rigid_set, moldable_workload, rigid_workload
from torus_sim.workload.jobs import SWF_RULES, Workload, jobs_from_swf
from torus_sim.workload.swf import read_swf

__all__ = [
    "BUNDLED_NASA_LOG",
    "DEFAULT_PREDICTOR",
    "ConfiguredModel",
    "RunConfig",
    "RunResult",
    "Scenario",
    "build_model",
    "build_policy",
    "load_workload",
    "model_arguments",
    "run",
]

RunConfig = Scenario
"""The name the Python API had before the scenario format (same class)."""

DEFAULT_PREDICTOR = {"mfp": "null", "balancing": "oracle-confidence", "tiebreak": "oracle-accuracy"}
"""The predictor each placement uses unless told otherwise (BGL-FAULT §4.1, §4.2); ``null`` for a plug-in placement."""

_TABLES: dict[Torus, PartitionTable] = {}


def partition_table(torus: Torus | tuple[int, ...]) -> PartitionTable:
    """The partition table of a torus (or of the all-ring torus of a dims tuple), built once per process.

    About 0.3 s for the 4x4x8 torus (9,633 partitions), 0.1 s for Mira's 2x3x4x4 (its allowed blocks).
    """
    torus = torus if isinstance(torus, Torus) else Torus(tuple(torus))
    if torus not in _TABLES:
        _TABLES[torus] = PartitionTable(torus)
    return _TABLES[torus]


# -- policy ---------------------------------------------------------------------------------


def placement_name(scenario: Scenario):
    """The placement after defaults: the policy's own for balancing and tie-break, else MFP (a name or a plug-in)."""
    if scenario.placement is not None:
        return scenario.placement
    policy = scenario.policy
    return DEFAULT_PLACEMENT.get(policy, "mfp") if isinstance(policy, str) else "mfp"


def predictor_name(scenario: Scenario):
    """The failure predictor after defaults (:data:`DEFAULT_PREDICTOR`; ``null`` for a plug-in placement)."""
    if scenario.predictor is not None:
        return scenario.predictor
    placement = placement_name(scenario)
    return DEFAULT_PREDICTOR.get(placement, "null") if isinstance(placement, str) else "null"


def build_predictor(scenario: Scenario):
    """The failure predictor of the scenario's placement, from :data:`predictors.PREDICTORS`.

    The oracles take their accuracy and confidence from the scenario's fields; ``predictor_params``
    go to the predictor's constructor (checked against its signature).

    Returns:
        A fresh :class:`~predictors.base.FailurePredictor` (attached to the run by the engine); a
        plug-in's behind the guard (:class:`~torus_sim.guarded_extensions.GuardedPredictor`).

    Raises:
        ConfigurationError: an unknown predictor or a parameter its constructor does not take.

    References:
        BGL-FAULT §4.1, §4.2.
    """
    name = predictor_name(scenario)
    oracles = {
        "oracle-confidence": {"confidence": scenario.confidence},
        "oracle-accuracy": {"accuracy": scenario.accuracy, "false_positive_rate": scenario.false_positive_rate},
    }
    parameters = oracles.get(name, {}) if isinstance(name, str) else {}
    return guard_predictor(PREDICTORS.build(name, {**parameters, **scenario.predictor_params}, {"scenario": scenario}))


def build_placement(scenario: Scenario):
    """The placement policy with its failure predictor, from :data:`~torus_sim.policies.placement.PLACEMENTS`.

    A placement's constructor gets ``placement_params`` and, where its signature names them,
    ``predictor`` (the scenario's failure predictor) and ``scenario``. A plug-in's placement comes
    behind the guard (:class:`~torus_sim.guarded_extensions.GuardedPlacement`).

    References:
        BGL-FAULT §4, §5.2.
    """
    name = placement_name(scenario)
    if name == "mfp" and not scenario.placement_params:
        return MfpPlacement()
    offered = {"scenario": scenario}
    factory, _ = PLACEMENTS.resolve(name)
    if _names_parameter(factory, "predictor"):
        offered["predictor"] = build_predictor(scenario)
    return guard_placement(PLACEMENTS.build(name, scenario.placement_params, offered))


def _names_parameter(factory, parameter: str) -> bool:
    import inspect

    try:
        return parameter in inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return False


def build_policy(scenario: Scenario, tables: AllotmentTables | None = None, allocation: np.ndarray | None = None) -> Policy:
    """The scenario's policy object, from the policy registry (:data:`~torus_sim.policies.catalog.POLICIES`).

    Args:
        scenario: the run (its ``policy`` a built-in name, an installed plug-in's entry-point name, an
            import path ``package.module:Class``, or from Python a class, a factory or an instance).
        tables: BATCH-LIST's allotment tables shared by the scenarios of a job set.
        allocation: LPA / MINTIME / MINAREA's allocation shared likewise.

    Returns:
        A fresh policy (policies keep per-run state); an instance given from Python as it is.

    Raises:
        ConfigurationError: an unknown policy, an import that fails, a class that is not a
            :class:`~torus_sim.policies.base.Policy`, or a parameter its constructor does not take or of the wrong type.

    References:
        BGL-FAULT §5; PV-EASY §4; RIGID §4; MOLDABLE §4.
    """
    explicit = scenario.placement is not None or (isinstance(scenario.policy, str) and scenario.policy in DEFAULT_PLACEMENT)
    offered = {
        "scenario": scenario,
        "placement": build_placement(scenario) if explicit else None,
        "tables": tables,
        "allocation": allocation,
    }
    policy = POLICIES.build(scenario.policy, scenario.policy_params, offered)
    if not isinstance(scenario.policy, str) or scenario.policy not in POLICIES.builtin_names():
        info = POLICIES.info(scenario.policy)
        if type(policy).name == Policy.name and "name" not in vars(policy):
            policy.name = info.import_path.rpartition(":")[2] if info.origin != "entry point" else info.name
    return policy


build_scheduler = build_policy


# -- inputs ---------------------------------------------------------------------------------


@dataclass
class BatchSet:
    """A batch workload with what its runs share: the job set, its failure scenarios, caches.

    Attributes:
        workload: the jobs.
        silent_errors: int ``(S, n)``, the failure scenarios (f_j per job), or None.
        model_seeds: the model seed of each scenario.
        tables: BATCH-LIST's tables (None until needed).
        allocations: LPA / MINTIME / MINAREA allocations by name.
    """

    workload: Workload
    silent_errors: np.ndarray | None
    model_seeds: list[int]
    tables: AllotmentTables | None = None
    allocations: dict = field(default_factory=dict)


def _nodes(scenario: Scenario, named: int | None) -> int:
    if scenario.platform == "torus":
        return scenario.torus.size
    nodes = scenario.nodes or named
    if not nodes:
        raise ConfigurationError("a cluster needs its number of nodes: give nodes (the workload names none)")
    if nodes > MAX_NODES:
        raise ConfigurationError(
            f"the workload names a machine of {nodes:,} processors (its MaxProcs / nb_res); at most {MAX_NODES:,} are "
            "simulated: give nodes"
        )
    return nodes


def load_workload(scenario: Scenario, capacity: int | None = None) -> Workload:
    """Read and clean an online workload (SWF, or a Batsim JSON workload) for the scenario's platform.

    Args:
        scenario: the run.
        capacity: the platform's nodes (read from the scenario and the trace when None).

    Returns:
        The workload (BGL-FAULT §6.2's or PV-EASY §5.1's cleaning rules, see :mod:`torus_sim.workload.jobs`);
        a path ending in ``.json`` (``.json.gz``, ``.json.xz``) is read as a Batsim workload
        (:func:`torus_sim.formats.batsim.read_batsim_workload`) and cleaned by the same rules.
    """
    path = scenario.workload_path
    if path.lower().endswith((".json", ".json.gz", ".json.xz", ".json.bz2")):
        from torus_sim.formats.batsim import read_batsim_workload

        trace = read_batsim_workload(path)
    else:
        trace = read_swf(path)
    _check_header(trace, scenario)
    named = trace.header_int("MaxProcs") or trace.header_int("MaxNodes")
    if named is not None and named < 1 and not scenario.nodes and scenario.platform == "cluster":
        from torus_sim.errors import WorkloadFormatError

        key = "MaxProcs" if trace.header_int("MaxProcs") is not None else "MaxNodes"
        raise WorkloadFormatError(
            path, trace.header_lines.get(key, 0), f"header {key!r} must be a positive machine size, got {named}"
        )
    capacity = capacity or _nodes(scenario, named)
    round_size = partial(round_up_to_feasible_size, scenario.torus) if scenario.platform == "torus" else None
    rules = SWF_RULES[scenario.rules]
    if scenario.offered_load is None:
        workload = jobs_from_swf(trace, capacity, round_size, scenario.load_scale, scenario.max_jobs, rules)
    else:
        unscaled = jobs_from_swf(trace, capacity, round_size, 1.0, scenario.max_jobs, rules).offered_load(capacity)
        if not unscaled:
            raise ConfigurationError(f"{path}: the workload has no offered load to scale (its jobs are submitted at one instant)")
        # the offered load is linear in c (c multiplies every runtime): c = wanted / load at c = 1 (BGL-FAULT §6.2)
        load_scale = scenario.offered_load / unscaled
        if not (math.isfinite(load_scale) and 1e-6 <= load_scale <= 1e6):
            raise ConfigurationError(
                f"offered load {scenario.offered_load:g} needs c = {load_scale:.3g} on {path} (offered load {unscaled:.3g} "
                "at c = 1); c must lie in [1e-6, 1e6]"
            )
        workload = jobs_from_swf(trace, capacity, round_size, load_scale, scenario.max_jobs, rules)
    if workload.impossible:
        what = ", ".join(
            f"{count:,} with a {reason}" if reason != "no processors" else f"{count:,} with no processors"
            for reason, count in workload.impossible.items()
        )
        warnings.warn(
            f"{path}: {_jobs_were(sum(workload.impossible.values()))} skipped for impossible values ({what}), not for "
            "an unknown one (SWF's -1); counted under skipped_* in the cleaning",
            stacklevel=2,
        )
    return workload


def _jobs_were(count: int) -> str:
    return f"{count:,} job was" if count == 1 else f"{count:,} jobs were"


UNIX_TIME_RANGE = (0, 10**10)
"""The header ``UnixStartTime`` values read as a time (seconds since 1970, before the year 2286)."""


def _check_header(trace, scenario: Scenario) -> None:
    """Warn about SWF header values no machine has where they are not used, and drop an impossible start time.

    A ``MaxProcs`` / ``MaxNodes`` below 1 with ``nodes`` given (or on the torus) is ignored with a warning
    (without ``nodes`` a cluster refuses it: the size is taken from it); an ``UnixStartTime`` outside
    :data:`UNIX_TIME_RANGE` is dropped from the header (it is copied into the outputs) with a warning.

    Raises:
        WorkloadFormatError: a header value that is not an integer.
    """
    for key in ("MaxProcs", "MaxNodes"):
        named = trace.header_int(key)
        if named is not None and named < 1 and (scenario.nodes or scenario.platform == "torus"):
            warnings.warn(
                f"{trace.path}:{trace.header_lines.get(key, 0)}: header {key} = {named} is not a machine size; ignored "
                f"(the platform's size comes from {'--nodes' if scenario.nodes else 'the torus'})",
                stacklevel=3,
            )
    start = trace.header_int("UnixStartTime")
    if start is not None and not UNIX_TIME_RANGE[0] <= start < UNIX_TIME_RANGE[1]:
        warnings.warn(
            f"{trace.path}:{trace.header_lines.get('UnixStartTime', 0)}: header UnixStartTime = {start} is not a time "
            "between 1970 and 2286; ignored (not copied into the outputs)",
            stacklevel=3,
        )
        trace.header.pop("UnixStartTime", None)


@lru_cache(maxsize=8)
def _generated_set(
    workload: str, jobs: int | None, job_set: int, seed: int, nodes: int, processor_range, runtime_range, torus_dims
):
    """The job set of a generated batch (cached: the runs of a sweep share their sets)."""
    if workload == "rigid":
        count = jobs or 100
        low, high = processor_range or (max(1, round(0.005 * nodes)), max(1, round(0.2 * nodes)))
        rigid = generate_rigid_set(np.random.default_rng([seed, job_set, count]), count, (low, high), tuple(runtime_range))
        round_size = partial(round_up_to_feasible_size, torus_dims) if torus_dims else None
        source = f"RIGID §5.1 synthetic set {job_set} (n = {count}, seed {seed})"
        return rigid_workload(rigid, source, nodes, round_size), rigid
    from torus_sim.workload.speedup import SPEEDUP_MODELS, generate_speedup_model

    name = workload.split(":", 1)[1]
    if name not in SPEEDUP_MODELS:
        raise ConfigurationError(f"unknown speedup model {name!r}; choose from {', '.join(SPEEDUP_MODELS)}")
    count = jobs or 500
    model = generate_speedup_model(name, count, np.random.default_rng([seed, job_set, count, SPEEDUP_MODELS.index(name)]))
    source = f"MOLDABLE §5.1 synthetic set {job_set} ({name}, n = {count}, seed {seed})"
    return moldable_workload(model.times(nodes), source), model


def batch_set(scenario: Scenario) -> BatchSet:
    """The batch workload of a scenario and its failure scenarios.

    The job sets and scenarios of generated batches come from the seeds of the papers' experiments
    (set i: ``[seed, i, n]``; its scenarios: ``[seed, i, n, round(q̄ 1e6), 1]`` for RIGID,
    ``[seed, i, n, round(λ 1e12), 2]`` for MOLDABLE), so every heuristic sees the same ones.

    Raises:
        ConfigurationError: an unknown workload, a moldable workload on the torus, or jobs that do not fit.
    """
    from torus_sim.workload.refcode import read_failure_scenarios, read_rigid_jobs

    workload = scenario.workload
    torus = scenario.platform == "torus"
    if workload.startswith(("moldable:", "table:")) and torus:
        raise ConfigurationError("moldable jobs run on a cluster (any processor count); the torus offers only partition sizes")
    silent = scenario.silent_spec
    rigid = None
    if workload.startswith("refcode:"):
        header, rigid = read_rigid_jobs(workload.split(":", 1)[1])
        nodes = _nodes(scenario, header.processors)
        rigid.check_fits(nodes)
        round_size = partial(round_up_to_feasible_size, scenario.torus) if torus else None
        batch = rigid_workload(rigid, workload, header.processors, round_size)
        rate = header.error_rate
    elif workload == "steady-state":
        from torus_sim.workload.synthetic import steady_state_workload

        nodes = _nodes(scenario, None)
        largest = scenario.processor_range[1] if scenario.processor_range else None
        batch = steady_state_workload(
            scenario.jobs or 2000, nodes, np.random.default_rng([scenario.seed, scenario.job_set]), max_job_size=largest
        )
        rate = None
    elif workload.startswith("table:"):
        from torus_sim.workload.speedup import read_time_table

        model = read_time_table(workload.split(":", 1)[1], scenario.monotonic)
        nodes = min(_nodes(scenario, model.max_processors), model.max_processors)
        batch = moldable_workload(model.times(nodes), workload)
        rate = None
    else:
        nodes = _nodes(scenario, 10000 if workload == "rigid" else 7500)
        batch, made = _generated_set(
            workload,
            scenario.jobs,
            scenario.job_set,
            scenario.seed,
            nodes,
            scenario.processor_range,
            scenario.runtime_range,
            scenario.torus if torus else None,
        )
        if workload == "rigid":
            rigid = made
            made.check_fits(nodes)
        rate = None
    count = len(batch.jobs)
    if silent == "none":
        return BatchSet(batch, None, [scenario.seed])
    if silent != "drawn":
        scenarios = read_failure_scenarios(silent, count, scenario.scenarios if scenario.scenarios > 1 else None)
        return BatchSet(batch, scenarios, [scenario.seed] * len(scenarios))
    if batch.times is not None:
        lam = scenario.error_rate if scenario.error_rate is not None else rate
        if lam is None:
            raise ConfigurationError("drawn silent errors on moldable jobs need the error rate λ (error_rate)")
        work = batch.times[:, 0]  # w_j = t_j(1)
        name = workload.split(":", 1)[1]
        rng = np.random.default_rng([scenario.seed, scenario.job_set, count, round(lam * 1e12), 2])
        probabilities = failure_probabilities_by_work(work, lam)
        if workload.startswith("table:"):
            rng = np.random.default_rng([scenario.seed, scenario.job_set, count, 2, stable_hash(name) % 1000])
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


def load_failures(scenario: Scenario, capacity: int, workload: Workload):
    """The fail-stop failures: a log, a synthetic request, or None; and the spans a real log leaves uncovered."""
    from failure_logs.synthetic import SyntheticFailures

    spec = scenario.failure_spec
    horizon = failure_horizon(workload, capacity)
    if spec == "mtbf":
        count = round(capacity * (horizon[1] - horizon[0]) / scenario.node_mtbf)
        _check_synthetic_count(count, capacity, horizon, f"failures = mtbf with node_mtbf {scenario.node_mtbf:g} s")
        return SyntheticFailures(count, "exponential", span=horizon), []
    failures = load_failure_source(
        spec,
        capacity,
        None,
        scenario.lanl_system,
        scenario.synthetic_model,
        scenario.fta_system,
        scenario.fta_platform,
        scenario.fta_nodes,
        scenario.mira_io_drawers,
        scenario.mira_maintenance,
    )
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
    if isinstance(failures, SyntheticFailures):
        _check_synthetic_count(failures.count, capacity, horizon if workload.kind == "batch" else whole, spec)
    if isinstance(failures, SyntheticFailures) and workload.kind == "batch":
        failures.span = horizon
    elif isinstance(failures, SyntheticFailures) and reduced is not None:
        failures.span, failures.keep = reduced, workload.span
    return failures, uncovered


def _laid_over(log: FailureLog, scenario: Scenario, span: tuple[float, float]) -> FailureLog:
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


MAX_SYNTHETIC_FAILURES = 1_000_000
"""The most synthetic failures one run draws, whatever the span (a run of 10^6 failures takes minutes)."""


def _check_synthetic_count(count: int, capacity: int, span: tuple[float, float], spec: str) -> None:
    """Refuse more synthetic failures than one per node per hour of the span, or than :data:`MAX_SYNTHETIC_FAILURES`.

    Args:
        count: failures asked for.
        capacity: the platform's nodes.
        span: ``(start, end)`` seconds the failures are drawn over.
        spec: what asked for them, for the message.

    Raises:
        ConfigurationError: too many (at least 1,000 are always allowed).
    """
    hours = max((span[1] - span[0]) / 3600.0, 1.0)
    limit = min(MAX_SYNTHETIC_FAILURES, max(1000, int(capacity * hours)))
    if count > limit:
        raise ConfigurationError(
            f"{spec} asks {count:,} failures; at most {limit:,} are drawn here (one per node per hour of the "
            f"{hours:,.0f}-hour span on {capacity:,} nodes, and never more than {MAX_SYNTHETIC_FAILURES:,})"
        )


def stable_hash(text: str) -> int:
    """A hash of ``text`` that is the same in every process (Python's ``hash`` of a string is salted per process)."""
    import hashlib

    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")


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


def _platform_inputs(scenario: Scenario, platform) -> dict:
    """The platform part of a run's inputs: kind and nodes, and on a torus its dims and machine."""
    described = {"kind": platform.kind, "nodes": platform.capacity}
    if platform.kind == "torus":
        described["torus"] = platform.torus.label
        described["machine"] = scenario.machine
    return described


def build_platform(scenario: Scenario, nodes: int, node_identities: bool = False):
    """The platform of a scenario: the torus (its partition table shared per process), or a cluster.

    A cluster is a node count (the engine keeps node identities only when something in the run tells
    nodes apart) unless ``node_identities`` asks for them (the browser view draws every node).
    """
    if scenario.platform == "torus":
        torus = scenario.torus
        return TorusPlatform(torus, partition_table(torus))
    return ClusterPlatform(nodes, identities=True) if node_identities else nodes


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


def runtime_predictor_of(scenario: Scenario):
    """A factory of the runtime predictor (taking the model's generator), or None."""
    if scenario.runtime_predictor is None:
        return None
    return partial(make_runtime_predictor, scenario.runtime_predictor, params=scenario.runtime_predictor_params)


def model_arguments(
    scenario: Scenario, inputs: dict, scenario_index: int = 0, record: bool = True, node_identities: bool = False
) -> tuple[tuple, dict]:
    """The arguments of :class:`~torus_sim.engine.model.SchedulingModel` for one simulation of a scenario.

    Args:
        scenario: the run.
        inputs: what was read so far (workload, failures, batch set); filled in, for the manifest
            and for the next simulation of the same run.
        scenario_index: which silent-error scenario of a batch.
        record: keep the per-job, per-pass tables.
        node_identities: a cluster keeps node identities even when nothing needs them (drawing).

    Returns:
        ``(positional arguments, keyword arguments)``.
    """
    if scenario.batch:
        batch = inputs.get("batch") or batch_set(scenario)
        inputs["batch"] = batch
        workload = batch.workload
        silent = batch.silent_errors[scenario_index] if batch.silent_errors is not None else None
        seed = batch.model_seeds[scenario_index]
        policy = build_policy(scenario, **_shared(scenario, batch))
    else:
        if scenario.silent_spec == "drawn":
            raise ConfigurationError("drawn silent errors need a batch workload (rigid, moldable:<model>, refcode:, table:)")
        workload = inputs.get("workload") or load_workload(scenario)
        inputs["workload"] = workload
        silent = None
        seed = scenario.seed
        policy = build_policy(scenario)
    nodes = _nodes(scenario, workload.processors)
    platform = build_platform(scenario, nodes, node_identities)
    if "failures" not in inputs:
        capacity = platform if isinstance(platform, int) else platform.capacity
        inputs["failures"], inputs["uncovered"] = load_failures(scenario, capacity, workload)
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
    }
    return (workload, policy, platform, inputs["failures"]), keywords


def build_model(scenario: Scenario, inputs: dict | None = None, scenario_index: int = 0, record: bool = True) -> SchedulingModel:
    """The engine for one simulation of a scenario (see :func:`model_arguments`)."""
    arguments, keywords = model_arguments(scenario, {} if inputs is None else inputs, scenario_index, record)
    return SchedulingModel(*arguments, **keywords)


def _shared(scenario: Scenario, batch: BatchSet) -> dict:
    """What the runs of one batch set share for this policy (BATCH's tables, a local allocation)."""
    if batch.workload.times is None:
        return {}  # rigid jobs: nothing to share (a moldable policy refuses them with a sentence)
    if scenario.policy == "BATCH":
        if batch.tables is None:
            batch.tables = AllotmentTables(batch.workload.times)
        return {"tables": batch.tables}
    if scenario.policy in ALLOCATIONS:
        if scenario.policy not in batch.allocations:
            batch.allocations[scenario.policy] = ALLOCATIONS[scenario.policy](batch.workload.times)
        return {"allocation": batch.allocations[scenario.policy]}
    return {}


# -- results --------------------------------------------------------------------------------


@dataclass
class RunResult:
    """A finished run.

    Attributes:
        config: the scenario.
        summary: the summary metrics (see :func:`torus_sim.metrics.summarize_record`; a batch of
            several scenarios: ``mean_ratio``, ``max_ratio``, ``mean_makespan``, ...).
        jobs: per-job results (the first simulation's; empty for a batch of several scenarios).
        inputs: file paths and SHA-256 of the inputs, cleaning counts.
        record: the raw event record (the first simulation's).
        scenarios: per silent-error scenario of a batch: makespan, lower bound, failures (else empty).
    """

    config: Scenario
    summary: dict
    jobs: pd.DataFrame
    inputs: dict
    record: SimulationRecord | None = field(repr=False, default=None)
    scenarios: pd.DataFrame = field(default_factory=pd.DataFrame)

    def manifest(self) -> dict:
        """Configuration, inputs and summary as one JSON-ready dictionary (no wall-clock data)."""
        from torus_sim import __version__

        return {
            "torus_sim_version": __version__,
            "config": self.config.model_dump(mode="json"),
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


def failure_timing_text(scenario: Scenario, workload: Workload, spec: str) -> str:
    """One line saying how the failures met the workload (for the run's header and summary).

    Args:
        scenario: the run.
        workload: its workload (``whole_span`` set when ``max_jobs`` kept a prefix).
        spec: the failure specification after defaults.

    Returns:
        For example ``"a real log fitted onto the whole log's span (BGL-FAULT §6.2), the 400-job prefix's
        part kept"``; empty for no failures.
    """
    if spec == "none":
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
    if spec.startswith("synthetic:") or spec == "mtbf":
        return f"drawn over the {'whole log' if share else 'workload'}'s submission span{share}"
    timing = scenario.timing
    if timing == "fit":
        return (
            f"first..last failure fitted onto the {'whole log' if share else 'workload'}'s span (BGL-FAULT §6.2){share}{squeezed}"
        )
    if timing == "window":
        return f"a window from {scenario.failure_offset:,.0f} s after the log's first failure, at its real rate{share}{squeezed}"
    return "at the times the log gives"


def _inputs_manifest(scenario: Scenario, inputs: dict, model: SchedulingModel) -> dict:
    workload = model.workload
    log = model.failure_log
    failures = inputs.get("failures")
    spec = scenario.failure_spec
    return {
        "workload": {
            "path": workload.source,
            "sha256": workload.sha256,
            "jobs": len(workload.jobs),
            "kind": workload.kind,
            "cleaning": dict(sorted(workload.cleaning.items())),
            "unix_start_time": workload.header.get("UnixStartTime") if workload.header else None,
            "load_scale": workload.load_scale,
            "offered_load": inputs.get("offered_load"),
        },
        "platform": _platform_inputs(scenario, model.platform),
        "failures": {
            "spec": spec,
            "path": str(BUNDLED_BGL_RAS) if spec == "bundled" else (spec if isinstance(failures, FailureLog) else None),
            "sha256": log.sha256,
            "source": log.source,
            "count": len(log),
            "reader_counts": dict(sorted(log.counts.items())),
            "uncovered_span": inputs.get("uncovered", []),
            "timing": failure_timing_text(scenario, model.workload, spec),
        },
        "silent_errors": scenario.silent_spec,
        "policy": model.policy.name,
        "policy_settings": model.policy_settings(),
        "predictor": _label(predictor_name(scenario)) if _uses_predictor(model.policy) else "null",
        "extensions": extension_manifest(
            scenario, placement_name(scenario), predictor_name(scenario) if _uses_predictor(model.policy) else None
        ),
    }


def _label(value) -> str:
    """A name as given, or the import path of an object given from Python."""
    from torus_sim.registry import object_path

    return value if isinstance(value, str) else object_path(value)


def _uses_predictor(policy: Policy) -> bool:
    """Whether the run's placement asks a failure predictor (not the null one)."""
    from predictors.base import NullPredictor

    predictor = getattr(getattr(policy, "placement", None), "predictor", None)
    return predictor is not None and not isinstance(predictor, NullPredictor)


def run(scenario: Scenario, progress: bool = False) -> RunResult:
    """Run one scenario.

    Args:
        scenario: the run (a :class:`~torus_sim.scenario.Scenario`).
        progress: show a progress bar over the jobs on a terminal (a run longer than 2 s; see
            :meth:`torus_sim.engine.model.SchedulingModel.run`).

    Returns:
        The result: summary, per-job table, inputs, the event record, and the per-scenario table of a batch.

    Raises:
        ConfigurationError: a parameter out of its domain or a combination a policy does not support.
        WorkloadFormatError, FailureLogFormatError, JobSetFormatError: a malformed input line.
        FileNotFoundError: an input file is missing.
    """
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
        record = model.run(progress=progress)
        summary = _summary(scenario, model, record)
        summary["offered_load"] = offered if offered is not None else float("nan")
        from torus_sim.metrics.summary import job_table

        return RunResult(
            scenario,
            summary,
            job_table(record.jobs, scenario.gamma, scenario.bsld_form),
            _inputs_manifest(scenario, inputs, model),
            record,
        )
    model = build_model(scenario, inputs, 0, record=True)
    batch: BatchSet = inputs["batch"]
    count = len(batch.model_seeds)
    bounds = lower_bounds(scenario, batch, model.platform.capacity)
    record = model.run()
    makespans = [record.makespan]
    for index in range(1, count):
        makespans.append(build_model(scenario, inputs, index, record=False).run().makespan)
    failures = batch.silent_errors.sum(axis=1) if batch.silent_errors is not None else np.zeros(1, dtype=int)
    makespans = np.array(makespans)
    ratios = makespans / bounds
    table = pd.DataFrame(
        {"scenario": range(count), "makespan": makespans, "lower_bound": bounds, "failures": failures, "ratio": ratios}
    )
    summary = _summary(scenario, model, record) if count == 1 else {}
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
    from torus_sim.metrics.summary import job_table

    jobs = job_table(record.jobs, scenario.gamma, scenario.bsld_form)
    return RunResult(scenario, summary, jobs, _inputs_manifest(scenario, inputs, model), record, table)


def _summary(scenario: Scenario, model: SchedulingModel, record: SimulationRecord) -> dict:
    """The run's summary with the scenario's metric settings (Γ, slowdown form, fairness reading, min delay)."""
    return summarize_record(
        record, model.workload, scenario.gamma, scenario.bsld_form, scenario.fairness_reading, scenario.min_delay
    )


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
    fields of :class:`~torus_sim.scenario.Scenario` (``platform``, ``workload``, ``failures``,
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
