"""Batches released at time 0: rigid job sets (p_j, t_j), moldable sets (t_j(p)), and their workloads.

RIGID §3.1 and MOLDABLE §3.1: n jobs, all available at time 0, scheduled on P processors; RIGID §5.1
draws rigid sets; MOLDABLE §5.1 draws moldable ones from a speedup model
(:mod:`torus_sim.inputs.workload.speedup`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from torus_sim.core.errors import ConfigurationError
from torus_sim.core.job import Job
from torus_sim.inputs.workload.jobs import Workload

__all__ = ["RigidJobSet", "generate_rigid_set", "moldable_workload", "rigid_workload"]


@dataclass(frozen=True)
class RigidJobSet:
    """n rigid jobs, all released at time 0.

    Args:
        runtimes: float64 ``(n,)``, t_j, error-free execution time in seconds (> 0).
        processors: int64 ``(n,)``, p_j, processors each job needs (>= 1).
        names: one name per job (``Task0``, ``Task1``... when not given, as the reference code).

    Raises:
        ConfigurationError: shapes differ, a time <= 0 or a processor count < 1.

    References:
        RIGID §3.1 (job model; the area a_j = p_j t_j).
    """

    runtimes: np.ndarray
    processors: np.ndarray
    names: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        runtimes = np.asarray(self.runtimes, dtype=float)
        processors = np.asarray(self.processors)
        if runtimes.ndim != 1 or runtimes.shape != processors.shape or runtimes.size == 0:
            raise ConfigurationError("runtimes and processors must be two vectors of the same non-zero length")
        if not np.all(np.isfinite(runtimes)) or np.any(runtimes <= 0):
            raise ConfigurationError(f"job {int(np.argmax(~(runtimes > 0)))}: execution times must be positive")
        if np.any(processors != np.round(processors)) or np.any(processors < 1):
            raise ConfigurationError(f"job {int(np.argmax(processors < 1))}: processor counts must be integers >= 1")
        object.__setattr__(self, "runtimes", runtimes)
        object.__setattr__(self, "processors", processors.astype(np.int64))
        names = tuple(self.names) or tuple(f"Task{index}" for index in range(runtimes.size))
        if len(names) != runtimes.size:
            raise ConfigurationError(f"{len(names)} names for {runtimes.size} jobs")
        object.__setattr__(self, "names", names)

    def __len__(self) -> int:
        return int(self.runtimes.size)

    @property
    def areas(self) -> np.ndarray:
        """a_j = p_j t_j, float64 ``(n,)``, processor-seconds."""
        return self.runtimes * self.processors

    def check_fits(self, processors: int) -> None:
        """Raise ConfigurationError naming the first job that needs more than P processors."""
        too_big = np.flatnonzero(self.processors > processors)
        if too_big.size:
            index = int(too_big[0])
            raise ConfigurationError(f"job {self.names[index]} needs {self.processors[index]} processors, P = {processors}")


def generate_rigid_set(
    rng: np.random.Generator,
    count: int = 100,
    processors: tuple[int, int] = (50, 2000),
    runtimes: tuple[float, float] = (100.0, 20_000.0),
) -> RigidJobSet:
    """Draw a synthetic rigid job set as RIGID §5.1.

    Args:
        rng: the generator.
        count: n (100 in the paper).
        processors: inclusive bounds of the uniform integer p_j ([50, 2000]).
        runtimes: bounds of the uniform t_j in seconds ([100, 20000]).

    Returns:
        The job set.

    References:
        RIGID §5.1, "Synthetic jobs".
    """
    return RigidJobSet(rng.uniform(*runtimes, count), rng.integers(processors[0], processors[1], count, endpoint=True))


def rigid_workload(jobs: RigidJobSet, source: str = "rigid job set", processors: int | None = None, round_size=None) -> Workload:
    """A rigid job set as a batch workload: job i (id i, rank i) of t_i seconds on p_i nodes, released at 0.

    Args:
        jobs: the job set.
        source: a description for the manifest.
        processors: the machine size the set was made for (a job file's P), if any.
        round_size: maps a size to the nodes it occupies (the torus's partition sizes); identity when None.

    Returns:
        The workload (kind ``batch``; the walltime is the exact runtime, as RIGID's jobs are known).

    References:
        RIGID §3.1.
    """
    workload_jobs = [
        Job(index, 0.0, runtime, runtime, size, round_size(size) if round_size else size, rank=index)
        for index, (runtime, size) in enumerate(zip(jobs.runtimes.tolist(), jobs.processors.tolist(), strict=True))
    ]
    return Workload(jobs=workload_jobs, source=source, kind="batch", processors=processors)


def moldable_workload(times: np.ndarray, source: str = "moldable job set") -> Workload:
    """A moldable job set as a batch workload: job i (id i, rank i) with time table ``times[i]``.

    Args:
        times: float ``(n, P)``, t_j(p) for p = 1..P, seconds (a speedup model's ``times(P)``).
        source: a description for the manifest.

    Returns:
        The workload (kind ``batch``, ``times`` kept whole for the allocation strategies); a job's
        runtime and walltime before its first allocation are its shortest time.

    References:
        MOLDABLE §3.1.
    """
    times = np.asarray(times, dtype=float)
    if times.ndim != 2 or not times.size:
        raise ConfigurationError(f"a moldable job set needs an (n, P) table of times, got shape {times.shape}")
    shortest = times.min(axis=1).tolist()
    jobs = [
        Job(index, 0.0, shortest[index], shortest[index], 1, 1, rank=index, times=times[index]) for index in range(len(times))
    ]
    return Workload(jobs=jobs, source=source, kind="batch", processors=times.shape[1], times=times)
