"""Experiments and sweeps: many runs from Python or from TOML files, on any executor.

Key components:
    sweep: a parameter grid x seeds on the serial, process or Dask executor, resumable.
    run_configs: the same for an explicit list of configurations.
    load_experiment: parse and check an experiment file (see :mod:`torus_sim.experiments.scenario`).
    run_experiment: run a file's points.
"""

from torus_sim.experiments.execute import run_experiment
from torus_sim.experiments.scenario import Experiment, FigureSpec, load_experiment
from torus_sim.experiments.sweep import EXECUTORS, grid_points, run_configs, run_key, run_row, sweep

__all__ = [
    "EXECUTORS",
    "Experiment",
    "FigureSpec",
    "grid_points",
    "load_experiment",
    "run_configs",
    "run_experiment",
    "run_key",
    "run_row",
    "sweep",
]
