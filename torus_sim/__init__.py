"""torus-sim: job scheduling on failure-prone supercomputers.

Key components:
    topology.Torus, partitions.PartitionTable: the BG/L torus and its partition finder / MFP.
    workload: SWF reader and cleaning rules.
    platforms.TorusPlatform, policies.KrevatScheduler: occupancy and Krevat's scheduler.
    model.TorusModel: the Mesa model on Mesa's discrete-event simulator.
    metrics: wait, response, bounded slowdown, ω_util / ω_unused / ω_lost.
    runner.run / RunConfig: one run from a configuration; cli: ``torus-sim run``.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
