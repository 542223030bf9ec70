"""Synthetic workloads: the two-stage log-uniform job sizes of CKPT-MIG, all queued at once.

A steady-state workload keeps every processor busy (CKPT-MIG, "Distribution (2/3)"): all jobs are
submitted at t = 0 so the queue never runs dry; a job uses 2^j supernodes with probability α_j
(sequential with p_1, otherwise a uniformly chosen power of two), and runs an exponentially
distributed time.
"""

from __future__ import annotations

import numpy as np

from torus_sim.analytic.ckpt_migration import job_size_probabilities
from torus_sim.core.errors import ConfigurationError
from torus_sim.core.job import Job
from torus_sim.inputs.workload.jobs import Workload

__all__ = ["steady_state_workload"]


def steady_state_workload(
    n_jobs: int,
    n_supernodes: int,
    rng: np.random.Generator,
    mean_runtime: float = 4 * 3600.0,
    sequential: float = 0.25,
    max_job_size: int | None = None,
) -> Workload:
    """Jobs with CKPT-MIG's job-size distribution, all submitted at t = 0.

    Args:
        n_jobs: number of jobs, >= 1.
        n_supernodes: N = 2^Z.
        rng: the generator.
        mean_runtime: mean of the exponential runtimes, seconds (walltime = runtime).
        sequential: p_1, the probability of a one-supernode job.
        max_job_size: cap on job sizes (a power of two <= N).

    Returns:
        The workload (job ids 1..n_jobs).

    Raises:
        ConfigurationError: non-positive counts or runtime, or the distribution's own errors.

    References:
        CKPT-MIG, "Distribution (1/3)-(3/3)"; Feitelson's two-stage log-uniform model.
    """
    if n_jobs < 1 or not mean_runtime > 0:
        raise ConfigurationError(f"need n_jobs >= 1 and mean_runtime > 0, got {n_jobs}, {mean_runtime}")
    alpha = job_size_probabilities(n_supernodes, sequential, max_job_size)
    sizes = 2 ** rng.choice(len(alpha), size=n_jobs, p=alpha)
    runtimes = rng.exponential(mean_runtime, size=n_jobs)
    jobs = [Job(i + 1, 0.0, float(runtimes[i]), float(runtimes[i]), int(sizes[i]), int(sizes[i]), rank=i) for i in range(n_jobs)]
    return Workload(jobs=jobs, source=f"steady-state synthetic ({n_jobs} jobs, CKPT-MIG sizes, p1={sequential})", kind="batch")
