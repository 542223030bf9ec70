"""torus-sim: job scheduling on failure-prone supercomputers.

Key components:
    run(RunConfig) -> RunResult: one simulation (torus_sim.runner).
    sweep(base, grid, seeds, executor=...) -> pandas.DataFrame: many runs, resumable
        (torus_sim.experiments.sweep).
    topology.Torus, partitions.PartitionTable: the BG/L torus and its partition finder / MFP.
    workload: SWF reader and cleaning rules.
    platforms.TorusPlatform, policies: occupancy, Krevat's scheduler, balancing and tie-break.
    model.TorusModel: the Mesa model on Mesa's discrete-event simulator.
    metrics: wait, response, bounded slowdown, ω_util / ω_unused / ω_lost.
    cli: ``torus-sim run | sweep | figure``.
"""

__version__ = "0.1.0"

__all__ = ["RunConfig", "RunResult", "__version__", "run", "sweep"]


def __getattr__(name: str):
    """Import ``run``, ``sweep``, ``RunConfig`` and ``RunResult`` on first use (keeps ``import torus_sim`` light)."""
    if name in ("run", "RunConfig", "RunResult"):
        from torus_sim import runner

        return getattr(runner, name)
    if name == "sweep":
        from torus_sim.experiments.sweep import sweep

        return sweep
    raise AttributeError(f"module 'torus_sim' has no attribute {name!r}")
