"""Experiments and sweeps: many runs from Python or from scenario files, on any executor.

Key components:
    sweep: a parameter grid x seeds on the serial, process or Dask executor, resumable.
    run_configs: the same for an explicit list of scenarios.
    load_experiment: parse and check a scenario file (see :mod:`torus_sim.experiments.experiment`).
    run_experiment, write_experiment: run a file's points; write its tables and figures.
    run_set, expected_ratio_table, combine_results: RIGID / MOLDABLE job sets and their summaries.
"""

from torus_sim.experiments.batch import combine_results, expected_ratio_table, run_set
from torus_sim.experiments.execute import compare_with_paper, experiment_tables, run_experiment, write_experiment
from torus_sim.experiments.experiment import Experiment, FigureSpec, load_experiment
from torus_sim.experiments.sweep import EXECUTORS, grid_points, run_configs, run_key, run_row, sweep

__all__ = [
    "EXECUTORS",
    "Experiment",
    "FigureSpec",
    "combine_results",
    "compare_with_paper",
    "expected_ratio_table",
    "experiment_tables",
    "grid_points",
    "load_experiment",
    "run_configs",
    "run_experiment",
    "run_key",
    "run_row",
    "run_set",
    "sweep",
    "write_experiment",
]
