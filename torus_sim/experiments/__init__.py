"""Experiments and sweeps: many runs from Python or from scenario files, on any executor.

Key components:
    sweep: a parameter grid x seeds on the serial, process or Dask executor, resumable.
    run_configs: the same for an explicit list of scenarios.
    load_experiment: parse and check a scenario file (see :mod:`torus_sim.experiments.experiment`).
    run_experiment, write_experiment: run a file's points; write its tables and figures.
    run_set, expected_ratio_table, combine_results: RIGID / MOLDABLE job sets and their summaries.
"""

from torus_sim.core.lazy_imports import lazy_attributes
from torus_sim.experiments.sweep import EXECUTORS, grid_points, run_configs, run_key, run_row, sweep

_HOMES = {
    "combine_results": "torus_sim.experiments.batch",
    "expected_ratio_table": "torus_sim.experiments.batch",
    "run_set": "torus_sim.experiments.batch",
    "compare_with_paper": "torus_sim.experiments.execute",
    "experiment_tables": "torus_sim.experiments.execute",
    "run_experiment": "torus_sim.experiments.execute",
    "write_experiment": "torus_sim.experiments.execute",
    "Experiment": "torus_sim.experiments.experiment",
    "FigureSpec": "torus_sim.experiments.experiment",
    "load_experiment": "torus_sim.experiments.experiment",
}
"""Each public name -> its module, imported on first use: reading a scenario file (``load_experiment``)
does not import the runs' tables (pandas) before a run's first job. ``sweep`` is imported at once: the
function, not its module, is the package's ``sweep``."""

__all__ = [*sorted(_HOMES), "EXECUTORS", "grid_points", "run_configs", "run_key", "run_row", "sweep"]  # noqa: PLE0604
__getattr__ = lazy_attributes(__name__, _HOMES)
