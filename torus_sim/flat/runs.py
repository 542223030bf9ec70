"""One run of a flat batch: a job set, a failure scenario, a heuristic, a priority rule.

This is the Python entry point for RIGID and MOLDABLE: pick a heuristic by its paper name.
"""

from __future__ import annotations

import numpy as np

from torus_sim.errors import ConfigurationError
from torus_sim.flat.jobs import RigidJobSet
from torus_sim.flat.model import FlatModel, FlatPolicy, FlatRunResult
from torus_sim.policies.moldable import ALLOCATIONS, AllotmentTables, BatchListPolicy
from torus_sim.policies.rigid import ListPolicy, ShelfPolicy

__all__ = [
    "MOLDABLE_ALGORITHMS",
    "RIGID_HEURISTICS",
    "moldable_allocation",
    "moldable_policy",
    "rigid_policy",
    "run_moldable",
    "run_rigid",
]

RIGID_HEURISTICS = ("R-LIST-0", "R-LIST-1", "R-LIST-Q", "R-SHELF-B", "R-SHELF-NB", "R-SHELFFILL-B", "R-SHELFFILL-NB")
"""The seven rigid heuristics of RIGID §5.1."""

MOLDABLE_ALGORITHMS = ("LPA", "BATCH", "MINTIME", "MINAREA")
"""The four moldable algorithms of MOLDABLE §5.1 (LPA = LPA-LIST, BATCH = BATCH-LIST)."""


def rigid_policy(heuristic: str, jobs: RigidJobSet, priority: str = "LPT") -> FlatPolicy:
    """The policy object of a rigid heuristic.

    Args:
        heuristic: one of :data:`RIGID_HEURISTICS` (R-LIST-m with m = 0, 1, Q; R-SHELF and
            R-SHELFFILL with B = backfilling b = 1, NB = b = 0).
        jobs: the job set.
        priority: a priority rule (LPT, SPT, HPA, LPA, LA, SA, RANDOM).

    Raises:
        ConfigurationError: unknown heuristic or rule.

    References:
        RIGID §4.1 (Alg. 1), §4.3 (Alg. 2, 3), §5.1.
    """
    if heuristic.startswith("R-LIST-"):
        depth = {"0": 0, "1": 1, "Q": -1}.get(heuristic[len("R-LIST-") :])
        if depth is not None:
            return ListPolicy(jobs.runtimes, jobs.processors, depth, priority)
    shelf = {
        "R-SHELF-B": (True, False),
        "R-SHELF-NB": (False, False),
        "R-SHELFFILL-B": (True, True),
        "R-SHELFFILL-NB": (False, True),
    }
    if heuristic in shelf:
        backfill, fill = shelf[heuristic]
        return ShelfPolicy(jobs.runtimes, jobs.processors, backfill, fill, priority)
    raise ConfigurationError(f"unknown rigid heuristic {heuristic!r}; choose from {', '.join(RIGID_HEURISTICS)}")


def run_rigid(
    jobs: RigidJobSet,
    processors: int,
    failures,
    heuristic: str = "R-LIST-0",
    priority: str = "LPT",
    verification_time: float = 0.0,
    seed: int = 0,
    record_attempts: bool = False,
) -> FlatRunResult:
    """Schedule a rigid job set under one failure scenario.

    Args:
        jobs: the job set (t_j seconds, p_j processors).
        processors: P.
        failures: int ``(n,)``, f_j.
        heuristic: see :data:`RIGID_HEURISTICS`.
        priority: see :data:`~torus_sim.policies.rigid.PRIORITY_RULES`.
        verification_time: V seconds per attempt.
        seed: the model's seed (RANDOM priority).
        record_attempts: return the attempt table too.

    Returns:
        The run's :class:`~torus_sim.flat.model.FlatRunResult` (makespan in seconds).

    Raises:
        ConfigurationError: a job wider than P, a scenario of the wrong length, unknown names.

    References:
        RIGID §3-4.
    """
    jobs.check_fits(processors)
    failures = _scenario(failures, len(jobs))
    model = FlatModel(processors, failures, rigid_policy(heuristic, jobs, priority), verification_time, seed, record_attempts)
    return model.run()


def moldable_allocation(algorithm: str, times: np.ndarray) -> np.ndarray:
    """The per-job allocation of a local strategy (LPA, MINTIME, MINAREA), int64 ``(n,)``."""
    if algorithm not in ALLOCATIONS:
        raise ConfigurationError(f"{algorithm!r} has no single allocation; local strategies: {', '.join(ALLOCATIONS)}")
    return ALLOCATIONS[algorithm](times)


def moldable_policy(
    algorithm: str,
    times: np.ndarray,
    priority: str = "LPT",
    tables: AllotmentTables | None = None,
    allocation: np.ndarray | None = None,
    epsilon: float = 0.3,
) -> FlatPolicy:
    """The policy of a moldable algorithm.

    Args:
        algorithm: one of :data:`MOLDABLE_ALGORITHMS`.
        times: float ``(n, P)``, t_j(p).
        priority: LPT, HPA, LA (MOLDABLE §5.1) or any rigid rule.
        tables: BATCH's :class:`~torus_sim.policies.moldable.AllotmentTables`, shared across
            scenarios of one set (built when None).
        allocation: a precomputed allocation for LPA / MINTIME / MINAREA (computed when None).
        epsilon: BATCH's ε.

    Raises:
        ConfigurationError: unknown algorithm or rule.

    References:
        MOLDABLE §4.2 (LPA-LIST), §4.4 (BATCH-LIST), §5.1 (MINTIME, MINAREA).
    """
    if algorithm == "BATCH":
        return BatchListPolicy(tables if tables is not None else AllotmentTables(times), priority, epsilon)
    if algorithm not in MOLDABLE_ALGORITHMS:
        raise ConfigurationError(f"unknown moldable algorithm {algorithm!r}; choose from {', '.join(MOLDABLE_ALGORITHMS)}")
    chosen = moldable_allocation(algorithm, times) if allocation is None else allocation
    runtimes = times[np.arange(times.shape[0]), chosen - 1]
    return ListPolicy(runtimes, chosen, 0, priority)


def run_moldable(
    times: np.ndarray,
    failures,
    algorithm: str = "LPA",
    priority: str = "LPT",
    verification_time: float = 0.0,
    seed: int = 0,
    tables: AllotmentTables | None = None,
    epsilon: float = 0.3,
    record_attempts: bool = False,
    allocation: np.ndarray | None = None,
) -> FlatRunResult:
    """Schedule a moldable job set under one failure scenario on P = ``times.shape[1]`` processors.

    Args:
        times: float ``(n, P)``, t_j(p) seconds (from a speedup model's ``times(P)``).
        failures: int ``(n,)``, f_j.
        algorithm: LPA, BATCH, MINTIME or MINAREA.
        priority: the LIST priority rule.
        verification_time: V seconds per attempt.
        seed: the model's seed.
        tables: BATCH's shared tables.
        epsilon: BATCH's ε.
        record_attempts: return the attempt table too.
        allocation: int ``(n,)``, a precomputed LPA / MINTIME / MINAREA allocation (computed per call when
            None; pass it when running many scenarios of one set).

    Returns:
        The run's :class:`~torus_sim.flat.model.FlatRunResult`.

    References:
        MOLDABLE §3-4.
    """
    failures = _scenario(failures, times.shape[0])
    policy = moldable_policy(algorithm, times, priority, tables, allocation, epsilon)
    return FlatModel(times.shape[1], failures, policy, verification_time, seed, record_attempts).run()


def _scenario(failures, count: int) -> np.ndarray:
    failures = np.asarray(failures)
    if failures.shape != (count,):
        raise ConfigurationError(f"a failure scenario needs one count per job: {count} expected, got shape {failures.shape}")
    return failures
