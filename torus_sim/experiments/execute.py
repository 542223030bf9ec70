"""Running an experiment file's runs on any executor, one row per run."""

from __future__ import annotations

import pandas as pd

from torus_sim.experiments.scenario import Experiment
from torus_sim.experiments.sweep import run_configs

__all__ = ["run_experiment"]


def run_experiment(
    experiment: Experiment,
    executor: str = "serial",
    workers: int = 2,
    results_dir=None,
    scheduler_address: str | None = None,
    progress: bool = True,
    **overrides,
) -> pd.DataFrame:
    """Run every point of an experiment (cases x grid x seeds).

    Args:
        experiment: the parsed file.
        executor: ``serial``, ``process`` or ``dask`` (see :mod:`torus_sim.experiments.sweep`).
        workers: worker processes.
        results_dir: folder for per-run results; runs already stored there are skipped (resume).
        scheduler_address: a Dask scheduler instead of a local cluster.
        progress: show a progress bar.
        **overrides: RunConfig fields replacing the file's for every run (e.g. ``max_jobs``).

    Returns:
        One row per run, in file order, with the varying parameters under their own names as the file
        gives them (an integer failure count stays an integer in column ``failures``).
    """
    points = experiment.points()
    configs = [experiment.config(point, **overrides) for point in points]
    table = run_configs(configs, executor, workers, results_dir, scheduler_address, progress)
    for key in experiment.parameters:
        table[key] = [point[key] for point in points]
    return table
