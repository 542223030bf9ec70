"""Batch experiments of RIGID and MOLDABLE: job sets x failure scenarios, and their summary tables.

A run of a batch scenario is one job set under ``scenarios`` failure scenarios; a scenario file's
``sets`` runs every point on job sets 0..sets-1. The papers summarize a heuristic by its expected
ratio (the mean over sets of the per-set mean of makespan / lower bound) and its maximum ratio.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pandas as pd

from failure_logs.silent import error_rate_for_mean_probability
from torus_sim.core.errors import ConfigurationError

__all__ = ["BatchRunResult", "combine_results", "expected_ratio_table", "run_moldable", "run_rigid", "run_set"]


def run_set(kind: str, grid: dict, scenarios: int, seed: int, set_index: int, fields: dict | None = None) -> list[dict]:
    """Every grid point of one job set, as the papers' experiments run them (one row per point).

    Args:
        kind: ``rigid`` or ``moldable``.
        grid: ``jobs``, ``processors`` and ``priority`` lists, with ``mean_failure_probability`` and
            ``heuristic`` (rigid) or ``error_rate``, ``model`` and ``algorithm`` (moldable).
        scenarios: failure scenarios per set.
        seed: the experiment's master seed.
        set_index: which job set.
        fields: other scenario fields for every point (e.g. ``{"allotment": "exact", "area_slack": 1.0}``).

    Returns:
        One dict per point: its values, ``set``, ``mean_ratio``, ``max_ratio``, ``mean_makespan``,
        ``mean_lower_bound``, ``mean_failures``, ``scenarios`` (and ``error_rate`` λ for rigid sets).

    Raises:
        ConfigurationError: an unknown kind.

    References:
        RIGID §5.1; MOLDABLE §5.1 ("Evaluation Methodology").
    """
    from torus_sim.experiments.runner import batch_set, run
    from torus_sim.experiments.scenario import Scenario

    if kind not in ("rigid", "moldable"):
        raise ConfigurationError(f"kind must be rigid or moldable, got {kind!r}")
    rows = []
    for point in _set_points(kind, grid):
        workload = "rigid" if kind == "rigid" else f"moldable:{point['model']}"
        silent = (
            {"mean_failure_probability": point["mean_failure_probability"]}
            if kind == "rigid"
            else {"error_rate": point["error_rate"]}
        )
        scenario = Scenario.make(
            platform="cluster",
            nodes=point["processors"],
            workload=workload,
            jobs=point["jobs"],
            job_set=set_index,
            seed=seed,
            scenarios=scenarios,
            policy=point["heuristic" if kind == "rigid" else "algorithm"],
            priority=point["priority"],
            **silent,
            **(fields or {}),
        )
        summary = run(scenario).summary
        if kind == "rigid":  # the λ the mean probability q̄ stands for, as the papers report it
            jobs = batch_set(scenario).workload.jobs
            areas = np.array([job.runtime * job.size for job in jobs])
            point = {**point, "error_rate": error_rate_for_mean_probability(areas, point["mean_failure_probability"])}
        rows.append(_row(point, set_index, summary))
    return rows


def _set_points(kind: str, grid: dict) -> list[dict]:
    """The grid points of one set, in the order the papers' experiments ran them."""
    if kind == "rigid":
        names = ("jobs", "processors", "mean_failure_probability", "heuristic", "priority")
        order = names
    else:
        names = ("jobs", "model", "processors", "error_rate", "algorithm", "priority")
        order = ("jobs", "processors", "error_rate", "model", "algorithm", "priority")
    points = [dict(zip(names, values, strict=True)) for values in itertools.product(*(grid[name] for name in names))]
    return [{key: point[key] for key in order} for point in points]


def _row(point: dict, set_index: int, summary: dict) -> dict:
    keys = ("mean_ratio", "max_ratio", "mean_makespan", "mean_lower_bound", "mean_failures", "scenarios")
    return {**point, "set": set_index, **{key: summary[key] for key in keys}}


def expected_ratio_table(table: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """The papers' summary: expected ratio (mean over sets of the per-set mean) and maximum ratio.

    Args:
        table: one row per (set, point) with ``set``, ``mean_ratio``, ``max_ratio``.
        by: the columns to group on (e.g. ``["policy", "workload"]`` for MOLDABLE Table 1).

    Returns:
        Columns ``by`` + expected, maximum, sets.

    References:
        MOLDABLE §5.1 "Evaluation Methodology" and Table 1; RIGID §5.1.
    """
    grouped = table.groupby(by, sort=False)
    return pd.DataFrame(
        {"expected": grouped["mean_ratio"].mean(), "maximum": grouped["max_ratio"].max(), "sets": grouped["set"].nunique()}
    ).reset_index()


def combine_results(tables: list[pd.DataFrame]) -> pd.DataFrame:
    """Rows of several experiments as one table, each (point, set) once.

    The ``table1_vs_*`` files share their default setting (P = 7500, n = 500, λ = 1e-7); combined,
    it counts once, so :func:`expected_ratio_table` over the result is the mean over the whole set
    of experiments, as MOLDABLE Table 1 summarizes it.

    Raises:
        ConfigurationError: no table, or tables without the result columns.
    """
    if not tables:
        raise ConfigurationError("no results to combine")
    table = pd.concat(tables, ignore_index=True)
    if "job_set" in table and "set" not in table:
        table = table.rename(columns={"job_set": "set"})
    if not {"set", "mean_ratio", "max_ratio"} <= set(table.columns):
        raise ConfigurationError("these are not batch experiment results (set, mean_ratio, max_ratio missing)")
    keys = [
        column
        for column in ("workload", "policy", "priority", "jobs", "nodes", "error_rate", "mean_failure_probability", "set")
        if column in table.columns
    ]
    return table.drop_duplicates(subset=keys).reset_index(drop=True)


@dataclass(frozen=True)
class BatchRunResult:
    """One failure scenario of a batch.

    Attributes:
        makespan: end of the last successful attempt, seconds (RIGID Eq. 1, MOLDABLE Eq. 1).
        attempts: attempts run (n + Σ f_j without fail-stop failures).
        events: engine events run.
        attempt_table: the record's attempt table (job_id, attempt, started_at, ended_at, nodes,
            outcome), or None when not recorded.
    """

    makespan: float
    attempts: int
    events: int
    attempt_table: pd.DataFrame | None


def _run_batch(
    scenario, workload, policy, failures, verification_time: float, seed: int, record_attempts: bool
) -> BatchRunResult:
    from torus_sim.experiments.model_builder import build_model

    counts = np.asarray(failures)
    if counts.shape != (len(workload.jobs),):
        raise ConfigurationError(
            f"a failure scenario needs one count per job: {len(workload.jobs)} expected, got shape {counts.shape}"
        )
    model = build_model(
        scenario,  # a cluster of P nodes without node failures
        {"workload": workload, "failures": None, "uncovered": None},
        record=record_attempts,
        policy=policy,
        silent_errors=counts,
        verification_time=verification_time,
        seed=seed,
    )
    record = model.run()
    return BatchRunResult(
        record.makespan, int(record.counters["job_starts"]), int(record.counters["events_run"]), record.attempts
    )


def run_rigid(
    jobs,
    processors: int,
    failures,
    heuristic: str = "R-LIST-0",
    priority: str = "LPT",
    verification_time: float = 0.0,
    seed: int = 0,
    record_attempts: bool = False,
) -> BatchRunResult:
    """Schedule a rigid job set under one failure scenario on P processors (a cluster without node failures).

    Args:
        jobs: the :class:`~torus_sim.inputs.workload.batch.RigidJobSet` (t_j seconds, p_j processors).
        processors: P.
        failures: int ``(n,)``, f_j.
        heuristic: one of :data:`~torus_sim.experiments.scenario.RIGID_POLICIES`.
        priority: a rule of :data:`~torus_sim.policies.rigid.PRIORITY_RULES`.
        verification_time: V seconds per attempt.
        seed: the model's seed (RANDOM priority).
        record_attempts: return the attempt table too.

    Returns:
        The scenario's :class:`BatchRunResult`.

    Raises:
        ConfigurationError: a job wider than P, a scenario of the wrong length, unknown names.

    References:
        RIGID §3-4.
    """
    from torus_sim.experiments.extensions import build_policy
    from torus_sim.experiments.scenario import RIGID_POLICIES, Scenario
    from torus_sim.inputs.workload.batch import rigid_workload

    if heuristic not in RIGID_POLICIES:
        raise ConfigurationError(f"unknown rigid heuristic {heuristic!r}; choose from {', '.join(RIGID_POLICIES)}")
    jobs.check_fits(processors)
    scenario = Scenario.make(policy=heuristic, priority=priority, platform="cluster", nodes=processors)
    policy = build_policy(scenario)
    return _run_batch(scenario, rigid_workload(jobs), policy, failures, verification_time, seed, record_attempts)


def run_moldable(
    times: np.ndarray,
    failures,
    algorithm: str = "LPA",
    priority: str = "LPT",
    verification_time: float = 0.0,
    seed: int = 0,
    tables=None,
    epsilon: float = 0.3,
    record_attempts: bool = False,
    allocation: np.ndarray | None = None,
    allotment: str = "steps",
    area_slack: float = 1.1,
) -> BatchRunResult:
    """Schedule a moldable job set under one failure scenario on P = ``times.shape[1]`` processors.

    Args:
        times: float ``(n, P)``, t_j(p) seconds (a speedup model's ``times(P)``).
        failures: int ``(n,)``, f_j.
        algorithm: LPA, BATCH, MINTIME or MINAREA.
        priority: the LIST priority rule.
        verification_time: V seconds per attempt.
        seed: the model's seed.
        tables: BATCH's shared :class:`~torus_sim.policies.allotment.AllotmentTables`.
        epsilon: BATCH's ε.
        record_attempts: return the attempt table too.
        allocation: int ``(n,)``, a precomputed LPA / MINTIME / MINAREA allocation.
        allotment: BATCH's MT-ALLOTMENT, ``steps`` or ``exact`` (see
            :class:`~torus_sim.policies.moldable.BatchListPolicy`).
        area_slack: BATCH's factor on the area in MT-ALLOTMENT's test.

    Returns:
        The scenario's :class:`BatchRunResult`.

    Raises:
        ConfigurationError: an unknown algorithm or rule, a scenario of the wrong length.

    References:
        MOLDABLE §3-4.
    """
    from torus_sim.experiments.extensions import build_policy
    from torus_sim.experiments.scenario import MOLDABLE_POLICIES, Scenario
    from torus_sim.inputs.workload.batch import moldable_workload

    if algorithm not in MOLDABLE_POLICIES:
        raise ConfigurationError(f"unknown moldable algorithm {algorithm!r}; choose from {', '.join(MOLDABLE_POLICIES)}")
    scenario = Scenario.make(
        policy=algorithm,
        priority=priority,
        epsilon=epsilon,
        allotment=allotment,
        area_slack=area_slack,
        platform="cluster",
        nodes=times.shape[1],
    )
    policy = build_policy(scenario, tables, allocation)
    return _run_batch(scenario, moldable_workload(times), policy, failures, verification_time, seed, record_attempts)
