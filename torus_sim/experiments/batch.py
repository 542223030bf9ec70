"""Batch experiments of RIGID and MOLDABLE: job sets x failure scenarios, and their summary tables.

A run of a batch scenario is one job set under ``scenarios`` failure scenarios; a scenario file's
``sets`` runs every point on job sets 0..sets-1. The papers summarize a heuristic by its expected
ratio (the mean over sets of the per-set mean of makespan / lower bound) and its maximum ratio.
"""

from __future__ import annotations

import itertools

import pandas as pd

from torus_sim.errors import ConfigurationError

__all__ = ["combine_results", "expected_ratio_table", "run_set"]


def run_set(kind: str, grid: dict, scenarios: int, seed: int, set_index: int) -> list[dict]:
    """Every grid point of one job set, as the papers' experiments run them (one row per point).

    Args:
        kind: ``rigid`` or ``moldable``.
        grid: ``jobs``, ``processors`` and ``priority`` lists, with ``mean_failure_probability`` and
            ``heuristic`` (rigid) or ``error_rate``, ``model`` and ``algorithm`` (moldable).
        scenarios: failure scenarios per set.
        seed: the experiment's master seed.
        set_index: which job set.

    Returns:
        One dict per point: its values, ``set``, ``mean_ratio``, ``max_ratio``, ``mean_makespan``,
        ``mean_lower_bound``, ``mean_failures``, ``scenarios`` (and ``error_rate`` λ for rigid sets).

    Raises:
        ConfigurationError: an unknown kind.

    References:
        RIGID §5.1; MOLDABLE §5.1 ("Evaluation Methodology").
    """
    from torus_sim.runner import batch_set, run
    from torus_sim.scenario import Scenario

    rows = []
    if kind == "rigid":
        for count, total, probability, heuristic, priority in itertools.product(
            grid["jobs"], grid["processors"], grid["mean_failure_probability"], grid["heuristic"], grid["priority"]
        ):
            scenario = Scenario.make(
                platform="cluster",
                nodes=total,
                workload="rigid",
                jobs=count,
                job_set=set_index,
                seed=seed,
                mean_failure_probability=probability,
                scenarios=scenarios,
                policy=heuristic,
                priority=priority,
            )
            summary = run(scenario).summary
            jobs = batch_set(scenario).workload.jobs
            from failure_logs.silent import error_rate_for_mean_probability

            import numpy as np

            rate = error_rate_for_mean_probability(np.array([job.runtime * job.size for job in jobs]), probability)
            rows.append(
                _row(dict(jobs=count, processors=total, mean_failure_probability=probability, error_rate=rate, heuristic=heuristic, priority=priority), set_index, summary)
            )
        return rows
    if kind != "moldable":
        raise ConfigurationError(f"kind must be rigid or moldable, got {kind!r}")
    for count, name in itertools.product(grid["jobs"], grid["model"]):
        for total, rate in itertools.product(grid["processors"], grid["error_rate"]):
            for algorithm, priority in itertools.product(grid["algorithm"], grid["priority"]):
                scenario = Scenario.make(
                    platform="cluster",
                    nodes=total,
                    workload=f"moldable:{name}",
                    jobs=count,
                    job_set=set_index,
                    seed=seed,
                    error_rate=rate,
                    scenarios=scenarios,
                    policy=algorithm,
                    priority=priority,
                )
                summary = run(scenario).summary
                rows.append(
                    _row(dict(jobs=count, processors=total, error_rate=rate, model=name, algorithm=algorithm, priority=priority), set_index, summary)
                )
    return rows


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
