"""Running an experiment's grid: serially or on local worker processes, one row per run."""

from __future__ import annotations

import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict

import pandas as pd

from torus_sim.experiments.scenario import Experiment
from torus_sim.runner import RunConfig, run

__all__ = ["run_experiment", "run_point"]


def run_point(config: RunConfig) -> dict:
    """One run, flattened to a row: every RunConfig field, every summary metric, and wall time (s)."""
    began = time.perf_counter()
    result = run(config)
    row = {key: (list(value) if isinstance(value, tuple) else value) for key, value in asdict(config).items()}
    row.update(result.summary)
    row["wall_time"] = time.perf_counter() - began
    return row


def run_experiment(experiment: Experiment, workers: int = 1, progress=sys.stderr, **overrides) -> pd.DataFrame:
    """Run every grid point of an experiment.

    Args:
        experiment: the parsed file.
        workers: worker processes (1: run in this process).
        progress: where to print one line per finished run (None: silent).
        **overrides: RunConfig fields replacing the file's for every run (e.g. ``max_jobs``).

    Returns:
        One row per run, in grid order, with the grid values under their own names (an integer
        failure count stays an integer in column ``failures``).
    """
    points = experiment.points()
    configs = [experiment.config(point, **overrides) for point in points]
    rows: list[dict] = []
    if workers > 1:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            for index, row in enumerate(pool.map(run_point, configs)):
                rows.append(row)
                _report(progress, index, len(configs), points[index], row)
    else:
        for index, config in enumerate(configs):
            row = run_point(config)
            rows.append(row)
            _report(progress, index, len(configs), points[index], row)
    table = pd.DataFrame(rows)
    for key in experiment.parameters:
        table[key] = [point[key] for point in points]
    return table


def _report(progress, index: int, total: int, point: dict, row: dict) -> None:
    if progress is not None:
        shown = ", ".join(f"{key}={value}" for key, value in point.items())
        print(
            f"[{index + 1}/{total}] {shown}: bounded slowdown {row['avg_bounded_slowdown']:.1f}, "
            f"ω_util {row['omega_util']:.3f} ({row['wall_time']:.1f} s)",
            file=progress,
            flush=True,
        )
