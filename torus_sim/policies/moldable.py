"""Resilient scheduling of moldable jobs: LIST with an allocation (LPA-LIST, MINTIME, MINAREA) and BATCH-LIST.

The allocations come from :mod:`torus_sim.policies.allotment` (LPA, MINTIME, MINAREA, MT-ALLOTMENT). LPA-LIST,
MINTIME and MINAREA schedule with LIST (:class:`AllocationListPolicy`, R-LIST with m = 0 on the chosen
(p_j, t_j(p_j))). BATCH-LIST (:class:`BatchListPolicy`) re-allocates every batch with MT-ALLOTMENT.

Moldable jobs run on a cluster: any processor count can be given there, where the torus offers
only partition sizes.
"""

from __future__ import annotations

import bisect

import numpy as np

from torus_sim.core.errors import ConfigurationError
from torus_sim.policies.allotment import (
    ALLOCATIONS,
    AllotmentTables,
    lpa_allocation,
    lpa_ratio,
    minarea_allocation,
    mintime_allocation,
    mt_allotment,
    mt_allotment_steps,
)
from torus_sim.policies.rigid import ListPolicy, PriorityPolicy, check_priority, priority_keys

__all__ = [
    "ALLOCATIONS",
    "AllocationListPolicy",
    "AllotmentTables",
    "BatchListPolicy",
    "lpa_allocation",
    "lpa_ratio",
    "minarea_allocation",
    "mintime_allocation",
    "mt_allotment",
    "mt_allotment_steps",
]


class AllocationListPolicy(ListPolicy):
    """LIST on a local allocation: LPA-LIST, MINTIME, MINAREA (MOLDABLE §4.2, §5.1).

    Each job gets one processor count p_j for all its attempts, chosen from its own time table by
    the strategy; LIST (R-LIST with m = 0) then runs the attempts by priority.

    Args:
        algorithm: ``LPA``, ``MINTIME`` or ``MINAREA`` (see :data:`ALLOCATIONS`).
        priority: a rule of :data:`~torus_sim.policies.rigid.PRIORITY_RULES`, on (t_j(p_j), p_j).
        allocation: int ``(n,)``, a precomputed allocation (computed from the workload's times when
            None; pass it when running many scenarios of one job set).

    Raises:
        ConfigurationError: an unknown algorithm or rule.

    References:
        MOLDABLE §4.2 (LPA, Alg. 2), §5.1 (MINTIME, MINAREA), Alg. 1 (LIST).
    """

    platforms = ("cluster",)
    moldable = True
    rigid = False

    def __init__(self, algorithm: str = "LPA", priority: str = "LPT", allocation: np.ndarray | None = None) -> None:
        if algorithm not in ALLOCATIONS:
            raise ConfigurationError(f"{algorithm!r} has no single allocation; local strategies: {', '.join(ALLOCATIONS)}")
        super().__init__(0, priority)
        self.algorithm = algorithm
        self.allocation = allocation
        self.name = algorithm

    def allocate(self, context) -> None:
        """p_j from the strategy, t_j(p_j) from the table."""
        times = context.workload.times
        chosen = ALLOCATIONS[self.algorithm](times) if self.allocation is None else self.allocation
        self._size = chosen.tolist()
        self._runtime = times[np.arange(times.shape[0]), chosen - 1].tolist()


class BatchListPolicy(PriorityPolicy):
    """BATCH-LIST: batches of doubling attempts, each allocated by MT-ALLOTMENT and run by LIST.

    Batch k gives every pending job up to g_k = 2^{k-1} attempts, allocated by MT-ALLOTMENT
    (:func:`mt_allotment_steps` by default, as the simulator behind MOLDABLE Table 1; :func:`mt_allotment`
    with ``allotment="exact"``);
    LIST (greedy, by priority) runs them, a failed job re-entering the list with its next attempt's
    allocation. A job still failing after g_k attempts waits for batch k + 1, which starts when
    batch k has nothing left running or queued. The batch's own list (by the priority of each job's
    current attempt) orders the starts; the engine's queue holds the same jobs.

    Args:
        tables: the job set's :class:`AllotmentTables` (shared by the scenarios of a set; it caches
            the allocations); built from the workload's times when None.
        priority: a rule of :data:`~torus_sim.policies.rigid.PRIORITY_RULES`, applied to the
            current attempt's (t, p).
        epsilon: ε of MT-ALLOTMENT.
        allotment: ``steps`` (:func:`mt_allotment_steps`: time steps εX/g, bisection to X_high / X_low
            <= 1.03) or ``exact`` (:func:`mt_allotment`: exact when g = 1, bisection to 1e-5).
        area_slack: the factor on the area in MT-ALLOTMENT's test, 1.1 in the authors' simulator;
            ``allotment="exact", area_slack=1`` is the tight variant (this project's default before 0.3).

    Raises:
        ConfigurationError: an unknown rule or allotment.

    References:
        MOLDABLE §4.4 (BATCH-LIST), Lemma 5, Theorem 8.
    """

    platforms = ("cluster",)
    moldable = True
    rigid = False
    name = "BATCH"

    def __init__(
        self,
        tables: AllotmentTables | None = None,
        priority: str = "LPT",
        epsilon: float = 0.3,
        allotment: str = "steps",
        area_slack: float = 1.1,
    ) -> None:
        super().__init__(check_priority(priority))
        if allotment not in ("steps", "exact"):
            raise ConfigurationError(f"BATCH's allotment is steps or exact, got {allotment!r}")
        self.tables = tables
        self.epsilon = epsilon
        self.allotment = allotment
        self.area_slack = area_slack
        self.batches = 0
        self.attempts = 0
        self.queue: list[tuple[float, int, int, float]] = []  # the batch's list: see _item
        self._processors = np.zeros(0, dtype=np.int64)  # the entries' processors, in list order
        self._smallest = 0  # the fewest processors an entry of the list needs
        self.waiting: list[int] = []

    def attach(self, context) -> None:
        """The job set's tables, and RANDOM's keys drawn from the run's generator."""
        if self.tables is None:
            self.tables = AllotmentTables(context.workload.times)
        self._jobs = context.jobs  # row i of the tables is job i
        count = self.tables.times.shape[0]
        self._random = context.rng.random(count) if self.priority == "RANDOM" else None
        self._attempt = [0] * count
        self._plan: dict[int, list[int]] = {}
        self._capacity = context.platform.capacity
        self._moldable = True  # every start carries its attempt's processors and time

    def queue_key(self, job):
        """The engine's queue in job order (the batch keeps its own priority list)."""
        return job.rank

    def _current(self, row: int) -> tuple[int, float]:
        processors = self._plan[row][self._attempt[row]]
        return processors, float(self.tables.times[row, processors - 1])

    def _item(self, row: int) -> tuple[float, int, int, float]:
        """The batch list's entry of a job's current attempt: (priority key, row, processors, time)."""
        processors, runtime = self._current(row)
        key = (
            float(self._random[row])
            if self._random is not None
            else float(priority_keys(self.priority, [runtime], [processors])[0])
        )
        return key, row, processors, runtime

    def _enqueue(self, row: int) -> None:
        item = self._item(row)
        index = bisect.bisect(self.queue, item)
        self.queue.insert(index, item)
        self._processors = np.insert(self._processors, index, item[2])
        self._smallest = min(self._smallest, item[2]) if len(self.queue) > 1 else item[2]

    def _new_batch(self, rows: list[int]) -> None:
        self.batches += 1
        attempts = 2 ** (self.batches - 1)
        if self.allotment == "steps":
            allocation = mt_allotment_steps(self.tables, rows, attempts, self._capacity, self.epsilon, self.area_slack)
        else:
            allocation = mt_allotment(self.tables, rows, attempts, self._capacity, self.epsilon, area_slack=self.area_slack)
        self.attempts = attempts
        for row, plan in zip(rows, allocation, strict=True):
            self._plan[row] = plan.tolist()
            self._attempt[row] = 0
        self.queue = sorted(self._item(row) for row in rows)
        self._processors = np.array([item[2] for item in self.queue], dtype=np.int64)
        self._smallest = int(self._processors.min()) if len(rows) else 0

    def _greedy(self, free: int, picks: list) -> int:
        """LIST over the batch: start, by priority, every attempt that fits; returns the processors left.

        Only entries that fit the free processors at the start can fit later in the pass (free only
        shrinks), so one vectorized test finds them, in list order; a pass with fewer free processors
        than any entry needs is O(1).
        """
        if not self.queue or free < self._smallest:
            return free
        queue, processors = self.queue, self._processors
        taken = []
        for index in np.flatnonzero(processors <= free).tolist():
            item = queue[index]
            if item[2] <= free:
                picks.append((self._jobs[item[1]], item[2], item[3]))
                free -= item[2]
                taken.append(index)
                if free < self._smallest:
                    break
        if taken:
            for index in reversed(taken):
                del queue[index]
            self._processors = processors = np.delete(processors, taken)
            self._smallest = int(processors.min()) if len(processors) else 0
        return free

    def plan(self, view):
        """Queue the failed job's next attempt (or keep it for the next batch), run LIST, open the next batch when done."""
        picks: list = []
        if self.batches == 0:
            self._new_batch(list(range(len(self._jobs))))
        elif view.ended is not None and view.ended[1]:
            row = view.ended[0].rank
            self._attempt[row] += 1
            if self._attempt[row] < self.attempts:
                self._enqueue(row)
            else:
                self.waiting.append(row)
        for job in view.returned:  # a fail-stop kill: the same attempt runs again
            self._enqueue(job.rank)
        free = self._greedy(view.free_count(), picks)
        if not self.queue and not view.running and not picks and self.waiting:
            rows, self.waiting = sorted(self.waiting), []
            self._new_batch(rows)
            self._greedy(free, picks)
        return self._emit(view, picks)
