"""torus-sim: job scheduling on failure-prone supercomputers, with one engine for every machine.

Key components:
    Scenario: one run's configuration (platform, workload, failures, policy, predictors,
        resilience, metrics), validated (torus_sim.experiments.scenario).
    run(Scenario) -> RunResult: one run (torus_sim.experiments.runner).
    sweep(base, grid, seeds, executor=...) -> pandas.DataFrame: many runs, resumable
        (torus_sim.experiments.sweep).
    against_log(RunResult) -> LogComparison: a replay of an SWF log held against the schedule the log
        records (torus_sim.experiments.log_replay).
    engine.SchedulingModel: the one Mesa model on Mesa's discrete-event simulator (the engine package).
    platforms: the BG/L torus of supernodes (partitions, MFP) and a cluster of P nodes.
    policies: Krevat (MFP, balancing, tie-break), FCFS, EASY, conservative, PV-EASY, R-LIST,
        R-SHELF, LIST with LPA / MINTIME / MINAREA, BATCH-LIST; one interface (plan -> actions).
    workload: SWF traces, RIGID / MOLDABLE batches, reference-code files, CKPT-MIG's steady state.
    metrics: BGL-FAULT's, PV-EASY's and the batch makespan ratios, from one record.
    cli: ``torus-sim run | sweep | figure | viz | ckpt-tables``.
"""

from torus_sim.core import former_paths
from torus_sim.core.version import __version__

former_paths.install()  # torus_sim.topology, torus_sim.api, ... still import (the modules' homes since the layers)

__all__ = ["RunConfig", "RunResult", "Scenario", "__version__", "against_log", "run", "sweep"]


def __getattr__(name: str):
    """Import ``run``, ``sweep``, ``against_log``, ``Scenario`` and ``RunResult`` on first use (keeps ``import torus_sim`` light)."""
    if name in ("run", "RunConfig", "RunResult", "Scenario"):
        from torus_sim.experiments import runner

        return getattr(runner, name)
    if name == "against_log":
        from torus_sim.experiments.log_replay import against_log

        return against_log
    if name == "sweep":
        from torus_sim.experiments.sweep import sweep

        return sweep
    raise AttributeError(f"module 'torus_sim' has no attribute {name!r}")
