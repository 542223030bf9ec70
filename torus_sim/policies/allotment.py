"""Processor allocations of moldable jobs: LPA, MINTIME and MINAREA, and BATCH-LIST's MT-ALLOTMENT.

An allocation strategy maps the execution-time table t_j(p) (float ``(n, P)``, column p - 1) to a
processor count per job, vectorized over all jobs and all p at once (:data:`ALLOCATIONS`).
MT-ALLOTMENT (:func:`mt_allotment`, and :func:`mt_allotment_steps` as the simulator behind MOLDABLE
Table 1 runs it) gives every job of a batch its processors for g attempts within a makespan bound.
The policies that schedule with these are in :mod:`torus_sim.policies.moldable`.

References:
    MOLDABLE §4.2 (LPA, Alg. 2), §4.3 (MT-ALLOTMENT, Alg. 3), §5.1 (MINTIME, MINAREA).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from torus_sim.core.errors import ConfigurationError

__all__ = [
    "ALLOCATIONS",
    "AllotmentTables",
    "lpa_allocation",
    "lpa_ratio",
    "minarea_allocation",
    "mintime_allocation",
    "mt_allotment",
    "mt_allotment_steps",
]


def _areas(times: np.ndarray) -> np.ndarray:
    return times * np.arange(1, times.shape[1] + 1)


def lpa_ratio(alpha: np.ndarray, beta: np.ndarray, processors: int) -> np.ndarray:
    """r(α, β) of MOLDABLE Eq. 10: 2α when α >= β, else P/(P-1) α + (P-2)/(P-1) β (P >= 2)."""
    if processors < 2:
        return 2 * alpha
    return np.where(alpha >= beta, 2 * alpha, processors / (processors - 1) * alpha + (processors - 2) / (processors - 1) * beta)


def lpa_allocation(times: np.ndarray) -> np.ndarray:
    """Local Processor Allocation: per job, the p minimizing r(α, β) with α = a(p)/a_min, β = t(p)/t_min.

    Args:
        times: float ``(n, P)``, t_j(p) seconds.

    Returns:
        int64 ``(n,)``, p_j in 1..P (the smallest p among equal ratios, as Alg. 2's strict <).

    References:
        MOLDABLE §4.2.2, Alg. 2 and Eq. 10.
    """
    areas = _areas(times)
    alpha = areas / areas.min(axis=1, keepdims=True)
    beta = times / times.min(axis=1, keepdims=True)
    return np.argmin(lpa_ratio(alpha, beta, times.shape[1]), axis=1) + 1


def mintime_allocation(times: np.ndarray) -> np.ndarray:
    """MINTIME (SET): per job the p with the smallest t_j(p), the smallest such p (MOLDABLE §5.1)."""
    return np.argmin(times, axis=1) + 1


def minarea_allocation(times: np.ndarray) -> np.ndarray:
    """MINAREA: per job the p with the smallest area p t_j(p), the smallest such p (MOLDABLE §5.1)."""
    return np.argmin(_areas(times), axis=1) + 1


ALLOCATIONS = {"LPA": lpa_allocation, "MINTIME": mintime_allocation, "MINAREA": minarea_allocation}
"""Local allocation strategies scheduled with LIST; BATCH is :class:`BatchListPolicy`."""


@dataclass
class AllotmentTables:
    """Per-job lookup tables for "least area among allocations with t(p) <= θ", built once per job set.

    Sorting each job's allocations by time makes the allocations with t(p) <= θ a prefix, so the
    least area over them is a prefix minimum, found by one binary search.

    Args:
        times: float ``(n, P)``, t_j(p) seconds.

    Attributes:
        sorted_times: float ``(n, P)``, each row ascending.
        prefix_area: float ``(n, P)``, least area over the first k + 1 sorted allocations.
        prefix_processors: int ``(n, P)``, the p that gives it (the shortest-time one among equal areas).
        cache: (jobs, attempts) -> allocation, filled by :func:`mt_allotment`.
    """

    times: np.ndarray
    sorted_times: np.ndarray = field(init=False)
    prefix_area: np.ndarray = field(init=False)
    prefix_processors: np.ndarray = field(init=False)
    cache: dict = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        order = np.argsort(self.times, axis=1, kind="stable")
        self.sorted_times = np.take_along_axis(self.times, order, axis=1)
        sorted_areas = np.take_along_axis(_areas(self.times), order, axis=1)
        self.prefix_area = np.minimum.accumulate(sorted_areas, axis=1)
        columns = np.arange(self.times.shape[1])
        improves = np.ones_like(sorted_areas, dtype=bool)
        improves[:, 1:] = sorted_areas[:, 1:] < self.prefix_area[:, :-1]
        position = np.maximum.accumulate(np.where(improves, columns, 0), axis=1)
        self.prefix_processors = np.take_along_axis(order, position, axis=1) + 1

    def least_area(self, jobs: np.ndarray, thresholds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Least area, and its p, among allocations with t(p) <= θ, per job and threshold.

        Args:
            jobs: int ``(k,)`` row indices.
            thresholds: float ``(k, m)`` seconds.

        Returns:
            (areas float ``(k, m)``, inf where no allocation is short enough; processors int ``(k, m)``, 0 there).
        """
        areas = np.full(thresholds.shape, np.inf)
        processors = np.zeros(thresholds.shape, dtype=np.int64)
        for row, job in enumerate(jobs):
            count = np.searchsorted(self.sorted_times[job], thresholds[row], side="right")
            ok = count > 0
            areas[row, ok] = self.prefix_area[job, count[ok] - 1]
            processors[row, ok] = self.prefix_processors[job, count[ok] - 1]
        return areas, processors


def mt_allotment(
    tables: AllotmentTables,
    jobs,
    attempts: int,
    processors: int,
    epsilon: float = 0.3,
    tolerance: float = 1e-5,
    area_slack: float = 1.0,
) -> np.ndarray:
    """MT-ALLOTMENT for a batch: an allocation of every attempt of every chain that nearly minimizes L.

    Each pending job is a chain of g attempts. For a bound X the allocation of least total area
    whose chains all fit in X is found per chain; X is feasible when that area is at most P X; a
    binary search finds the least feasible X. With g = 1 a chain is one attempt and the least area
    under t(p) <= X is exact. With g >= 2, times are rounded up to multiples of δ = εX/g and a
    dynamic program over the chain (min-plus over the rounded time budget) finds the least area
    with rounded length <= (1 + ε) X; so L(J_k, f_k, p_k) <= (1 + ε) min_p L(J_k, f_k, p) (Lemma 3).

    Args:
        tables: the job set's :class:`AllotmentTables`.
        jobs: int ``(k,)``, the pending jobs (rows of ``tables``).
        attempts: g, attempts per chain (2^{k-1} in batch k).
        processors: P.
        epsilon: ε of the rounding (0.3 in MOLDABLE §5.1).
        tolerance: relative precision of the binary search on X.
        area_slack: X is feasible when ``area_slack`` x the least total area is at most P X (1: the
            test of Lemma 3; :func:`mt_allotment_steps` says why the authors' simulator used 1.1).

    Returns:
        int64 ``(k, g)``: the processors of each attempt, in chain order (longer attempts first).

    Raises:
        ConfigurationError: g < 1 or ε <= 0.

    References:
        MOLDABLE §4.4, Lemma 3 and footnote 6; Lepère, Trystram and Woeginger's MT-ALLOTMENT ([29] there).
    """
    if attempts < 1 or not epsilon > 0 or not area_slack > 0:
        raise ConfigurationError(
            f"MT-ALLOTMENT needs g >= 1, ε > 0 and area_slack > 0, got g = {attempts}, ε = {epsilon}, area_slack = {area_slack}"
        )
    jobs = np.asarray(jobs, dtype=np.int64)
    key = ("exact", jobs.tobytes(), attempts, processors, epsilon, tolerance, area_slack)
    if key in tables.cache:
        return tables.cache[key]
    times = tables.times[jobs]
    shortest = times.min(axis=1)
    least = tables.prefix_area[jobs, -1]
    low = max(attempts * shortest.max(), area_slack * attempts * least.sum() / processors)
    # all attempts on a least-area allocation: feasible by construction
    least_area_time = tables.times[jobs, tables.prefix_processors[jobs, -1] - 1]
    high = max(low, attempts * least_area_time.max(), area_slack * attempts * least.sum() / processors) * (1 + 1e-12)
    best = _chains_within(tables, jobs, attempts, high, epsilon)
    if not area_slack * best[0] <= processors * high:
        best = _chains_within(tables, jobs, attempts, high * 2, epsilon)
        high *= 2
    while high - low > tolerance * high:
        middle = 0.5 * (low + high)
        found = _chains_within(tables, jobs, attempts, middle, epsilon)
        if area_slack * found[0] <= processors * middle:
            high, best = middle, found
        else:
            low = middle
    allocation = best[1]
    tables.cache[key] = allocation
    return allocation


def _single_attempt_tables(tables: AllotmentTables, jobs: np.ndarray, attempts: int, bound: float, epsilon: float):
    """Rounded budget K and, per job and budget b <= K, the least area (and its p) of one attempt within b steps of εX/g."""
    step = epsilon * bound / attempts
    budget = int(np.floor((1 + epsilon) * attempts / epsilon + 1e-9))
    thresholds = np.broadcast_to(np.arange(budget + 1) * step, (len(jobs), budget + 1))
    single, chosen = tables.least_area(jobs, thresholds)  # (k, K+1)
    return budget, single, chosen


MIN_PLUS_CELLS = 1 << 22
"""Cells (jobs x (K+1)^2) of one block of :func:`_min_plus`: about 32 MiB per temporary array."""


def _min_plus(left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per job, out[b] = min over c <= b of left[c] + right[b - c], and the minimizing c; arrays (k, K+1).

    The jobs are taken in blocks of at most :data:`MIN_PLUS_CELLS` cells, so memory stays bounded
    when K grows with g (BATCH-LIST's late batches, g = 2^{k-1}); each job's row is the same as in one block.
    """
    width = left.shape[1]
    spent = np.arange(width)
    gap = spent[:, None] - spent[None, :]
    valid = gap >= 0
    index = np.clip(gap, 0, width - 1)
    block = max(1, MIN_PLUS_CELLS // (width * width))
    out = np.empty(left.shape, dtype=np.result_type(left, right))
    picks = np.empty(left.shape, dtype=np.int64)
    for first in range(0, left.shape[0], block):
        rows = slice(first, first + block)
        combined = left[rows, None, :] + np.where(valid, right[rows][:, index], np.inf)
        pick = np.argmin(combined, axis=2)
        out[rows] = np.take_along_axis(combined, pick[:, :, None], axis=2)[:, :, 0]
        picks[rows] = pick
    return out, picks


def _order_chain(tables: AllotmentTables, jobs: np.ndarray, allocation: np.ndarray) -> np.ndarray:
    """Longer (cheaper) attempts first: a fixed order for the chain."""
    times = tables.times[jobs[:, None], allocation - 1]
    return np.take_along_axis(allocation, np.argsort(-times, axis=1, kind="stable"), axis=1)


def _chains_within(tables: AllotmentTables, jobs: np.ndarray, attempts: int, bound: float, epsilon: float):
    """Least total area of chains of ``attempts`` attempts that fit in ``bound``; (area, allocation (k, g)).

    g = 1 is exact; a power of two uses :func:`_chains_within_doubling` (log g min-plus squarings);
    other g the attempt-by-attempt dynamic program :func:`_chains_within_linear` (the plain
    reference the doubling one is tested against).
    """
    if attempts == 1:
        areas, chosen = tables.least_area(jobs, np.full((len(jobs), 1), bound))
        return float(areas.sum()), chosen
    if attempts & (attempts - 1) == 0:
        return _chains_within_doubling(tables, jobs, attempts, bound, epsilon)
    return _chains_within_linear(tables, jobs, attempts, bound, epsilon)


def _chains_within_doubling(tables: AllotmentTables, jobs: np.ndarray, attempts: int, bound: float, epsilon: float):
    """The rounded chain DP for g = 2^M identical attempts by repeated min-plus squaring, then splitting budgets back."""
    budget, single, chosen = _single_attempt_tables(tables, jobs, attempts, bound, epsilon)
    best, picks = single, []
    for _ in range(attempts.bit_length() - 1):
        best, pick = _min_plus(best, best)
        picks.append(pick)
    total = best[:, budget]
    if not np.all(np.isfinite(total)):
        return np.inf, None
    rows = np.arange(len(jobs))[:, None]
    budgets = np.full((len(jobs), 1), budget)
    for pick in reversed(picks):
        first = pick[rows, budgets]
        budgets = np.stack([first, budgets - first], axis=2).reshape(len(jobs), -1)
    return float(total.sum()), _order_chain(tables, jobs, chosen[rows, budgets])


def _chains_within_linear(tables: AllotmentTables, jobs: np.ndarray, attempts: int, bound: float, epsilon: float):
    """The rounded chain DP, one attempt at a time (any g >= 2)."""
    budget, single, chosen = _single_attempt_tables(tables, jobs, attempts, bound, epsilon)
    best = single
    choices = []
    for _ in range(attempts - 1):
        best, pick = _min_plus(single, best)  # pick = the budget of the newest attempt
        choices.append(pick)
    total = best[:, budget]
    if not np.all(np.isfinite(total)):
        return np.inf, None
    allocation = np.zeros((len(jobs), attempts), dtype=np.int64)
    rows = np.arange(len(jobs))
    left = np.full(len(jobs), budget)
    for index, pick in enumerate(reversed(choices)):
        used = pick[rows, left]
        allocation[:, index] = chosen[rows, used]
        left = left - used
    allocation[:, attempts - 1] = chosen[rows, left]
    return float(total.sum()), _order_chain(tables, jobs, allocation)


def mt_allotment_steps(
    tables: AllotmentTables,
    jobs,
    attempts: int,
    processors: int,
    epsilon: float = 0.3,
    area_slack: float = 1.1,
    stop_ratio: float = 1.03,
) -> np.ndarray:
    """MT-ALLOTMENT as the simulator behind MOLDABLE Table 1 runs it: time steps, area slack, coarse bisection.

    For a bound X, time is counted in steps Z = εX/g and budgets k = 1 .. ⌊X/Z⌋ + g. Per chain and
    budget, the dynamic program gives the least sum over its g attempts of ``area_slack`` x p t(p) / (Z P),
    each attempt within a whole number (>= 1) of steps (t(p) <= its steps x Z). X is achievable at the
    least k whose sum over chains is below k, i.e. ``area_slack`` x Σ area < P k Z with every chain within
    k Z; it returns min(k Z, X) and the allocation at k. A bisection starts from X = every attempt on one
    processor (max(g max t(1), g Σ t(1) / P)) and X_low = 0, sets X_high to the achieved min(k Z, X) or
    X_low to X, and stops when X_high / X_low <= ``stop_ratio``. The allocation is the last achievable
    one. Among equal areas an attempt takes the shortest allocation; among equal chain sums the earlier
    attempts take the least budget.

    With ``area_slack`` = 1 and exact bounds this is the test of :func:`mt_allotment`; the slack makes
    LIST's work easier: with Σ area = P X exactly the widths of n jobs of length about X cannot all
    run side by side and LIST needs a second round, about 2X (docs/moldable/README.md, "BATCH").

    Args:
        tables: the job set's :class:`AllotmentTables`.
        jobs: int ``(k,)``, the pending jobs (rows of ``tables``).
        attempts: g, attempts per chain (2^{k-1} in batch k).
        processors: P.
        epsilon: ε, the step Z = εX/g (0.3 in MOLDABLE §5.1).
        area_slack: the factor on every attempt's area in the test (1.1 in the authors' simulator).
        stop_ratio: the bisection stops when X_high / X_low is at most this (1.03 there).

    Returns:
        int64 ``(k, g)``: the processors of each attempt, in chain order.

    Raises:
        ConfigurationError: g < 1, ε <= 0, area_slack <= 0 or stop_ratio <= 1.

    References:
        MOLDABLE §4.4, Lemma 3 and footnote 6; the slack, the steps and the stop ratio are those of the
        authors' simulator (moldableBatch.cpp, ``isAchievable`` / ``assignProcsBatch``), not printed in
        the paper.
    """
    if attempts < 1 or not epsilon > 0 or not area_slack > 0 or not stop_ratio > 1:
        raise ConfigurationError(
            "MT-ALLOTMENT (steps) needs g >= 1, ε > 0, area_slack > 0 and stop_ratio > 1, got "
            f"g = {attempts}, ε = {epsilon}, area_slack = {area_slack}, stop_ratio = {stop_ratio}"
        )
    jobs = np.asarray(jobs, dtype=np.int64)
    key = ("steps", jobs.tobytes(), attempts, processors, epsilon, area_slack, stop_ratio)
    if key in tables.cache:
        return tables.cache[key]
    one_processor = tables.times[jobs, 0]
    high = max(attempts * one_processor.max(), attempts * one_processor.sum() / processors)
    found = _steps_achievable(tables, jobs, attempts, processors, high, epsilon, area_slack)
    while found is None:  # only when area_slack >= 1 + ε: widen until achievable
        high *= 2
        found = _steps_achievable(tables, jobs, attempts, processors, high, epsilon, area_slack)
    high, allocation = found
    low = 0.0
    while low == 0.0 or high / low > stop_ratio:
        middle = 0.5 * (low + high)
        found = _steps_achievable(tables, jobs, attempts, processors, middle, epsilon, area_slack)
        if found is None:
            low = middle
        else:
            high, allocation = found
    tables.cache[key] = allocation
    return allocation


def _steps_achievable(tables, jobs: np.ndarray, attempts: int, processors: int, bound: float, epsilon: float, slack: float):
    """(min(k Z, X), allocation (k, g)) at the least budget k that passes the test of :func:`mt_allotment_steps`, or None."""
    step = epsilon * bound / attempts
    budget = int(np.floor(bound / step)) + attempts
    thresholds = np.broadcast_to(np.arange(budget + 1) * step, (len(jobs), budget + 1))
    single, chosen = tables.least_area(jobs, thresholds)
    single = single * (slack / (step * processors))
    best, picks = single, []
    for _ in range(attempts - 1):
        best, pick = _min_plus(best, single)  # pick = the budget of the earlier attempts, the least among ties
        picks.append(pick)
    score = best.sum(axis=0)
    passing = np.flatnonzero(score[1:] < np.arange(1, budget + 1))
    if len(passing) == 0:
        return None
    steps = int(passing[0]) + 1
    rows = np.arange(len(jobs))
    left = np.full(len(jobs), steps)
    allocation = np.zeros((len(jobs), attempts), dtype=np.int64)
    for index, pick in zip(range(attempts - 1, 0, -1), reversed(picks), strict=True):
        earlier = pick[rows, left]
        allocation[:, index] = chosen[rows, left - earlier]
        left = earlier
    allocation[:, 0] = chosen[rows, left]
    return min(steps * step, bound), allocation
