"""Experiments: TOML files describing a grid of runs and the figures drawn from them.

Key components:
    load_experiment: parse and check a file (see :mod:`torus_sim.experiments.scenario`).
    run_experiment: run the grid, one row per run.
"""

from torus_sim.experiments.execute import run_experiment, run_point
from torus_sim.experiments.scenario import Experiment, FigureSpec, load_experiment

__all__ = ["Experiment", "FigureSpec", "load_experiment", "run_experiment", "run_point"]
