"""Simulated against analytic yields of periodic checkpointing, preventive checkpointing and migration.

On the 4x4x8 torus (N = 128 = 2^7) with a steady-state workload of CKPT-MIG's job sizes (capped at
2^6 so that spares can exist), exponential failures and perfect prediction, each strategy's yield
(ω_util) is divided by the yield of the same workload without failures, which removes what the
analytic model ignores by construction (fragmentation, the drain at the end), and compared with the
model's ρ/N for the same N, μ, C, R, D, M and job-size distribution.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from failure_logs.synthetic import generate_failures
from torus_sim.analytic import ckpt_migration as analytic
from torus_sim.experiments.model_builder import build_model
from torus_sim.experiments.scenario import Scenario
from torus_sim.inputs.workload.synthetic import steady_state_workload
from torus_sim.machine.topology import BGL_SUPERNODE_TORUS
from torus_sim.metrics import summarize
from torus_sim.policies.resilience import ResiliencePolicy

__all__ = ["compare_yields"]


def compare_yields(
    n_jobs: int = 2000,
    mtbf: float = 30 * 86400.0,
    checkpoint: float = 600.0,
    recovery: float = 600.0,
    downtime: float = 300.0,
    migration: float = 120.0,
    epsilon: float = 1e-4,
    mean_runtime: float = 4 * 3600.0,
    max_job_size: int = 64,
    seed: int = 1,
) -> pd.DataFrame:
    """Run the three strategies and the analytic model on the same parameters.

    Args:
        n_jobs: jobs of the steady-state workload.
        mtbf: μ, per-supernode MTBF, seconds (exponential failures).
        checkpoint: C, seconds.
        recovery: R, seconds.
        downtime: D, seconds (every failure keeps its supernode down this long).
        migration: M, seconds.
        epsilon: ε of the spare count n = α(ε, N).
        mean_runtime: mean job runtime, seconds.
        max_job_size: cap on job sizes (a power of two <= 128).
        seed: seed of the workload, the failures and the runs.

    Returns:
        One row per strategy: ``strategy``, ``analytic_yield`` (ρ/N), ``simulated_yield``
        (ω_util / ω_util without failures), ``difference`` (points), ``omega_util``, ``job_kills``,
        ``preventive_migrations``, ``preventive_migrations_failed``, ``spares``.

    References:
        CKPT-MIG ("Checkpointing", "Migration" and "Platform throughput" slides of parallel jobs).
    """
    nodes = BGL_SUPERNODE_TORUS.size
    rng = np.random.default_rng(seed)
    workload = steady_state_workload(n_jobs, nodes, rng, mean_runtime, max_job_size=max_job_size)
    horizon = 4.0 * sum(job.size * job.runtime for job in workload.jobs) / nodes  # well past the makespan
    failures = generate_failures(int(nodes * horizon / mtbf), nodes, 0.0, horizon, rng)
    spares = analytic.spares_needed(epsilon, nodes, analytic.node_activity_migration(mtbf, migration, downtime))
    strategies = {
        "none (no failures)": (None, ResiliencePolicy(), None),
        "no protection": (failures, ResiliencePolicy(), None),
        "periodic checkpointing (Young)": (
            failures,
            ResiliencePolicy(checkpoint_interval="young", checkpoint_cost=checkpoint, recovery_time=recovery, mtbf=mtbf),
            analytic.throughput_periodic_parallel(mtbf, checkpoint, recovery, downtime, nodes, max_job_size=max_job_size),
        ),
        "preventive checkpointing": (
            failures,
            ResiliencePolicy(checkpoint_cost=checkpoint, recovery_time=recovery, preventive="checkpoint"),
            analytic.throughput_checkpoint_parallel(mtbf, recovery, checkpoint, downtime, nodes, max_job_size=max_job_size),
        ),
        "preventive migration": (
            failures,
            ResiliencePolicy(preventive="migration", migration_cost=migration, spares=spares),
            analytic.throughput_migration_parallel(mtbf, migration, downtime, nodes, spares, max_job_size=max_job_size),
        ),
    }
    rows = []
    baseline = None
    scenario = Scenario.make("checkpoint yields", policy="krevat", platform="torus", downtime=downtime, seed=seed)  # BG/L's 4x4x8
    for name, (log, policy, throughput) in strategies.items():
        inputs = {"workload": workload, "failures": log, "uncovered": None}
        summary = summarize(build_model(scenario, inputs, resilience=policy).run())
        baseline = summary["omega_util"] if baseline is None else baseline
        simulated = summary["omega_util"] / baseline
        expected = throughput / nodes if throughput is not None else np.nan
        rows.append(
            {
                "strategy": name,
                "analytic_yield": expected,
                "simulated_yield": simulated,
                "difference": 100.0 * (simulated - expected),
                "omega_util": summary["omega_util"],
                "job_kills": summary["job_kills"],
                "preventive_migrations": summary["preventive_migrations"],
                "preventive_migrations_failed": summary["preventive_migrations_failed"],
                "spares": spares if policy.spares else 0,
            }
        )
    return pd.DataFrame(rows)
