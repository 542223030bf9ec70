"""Resilient scheduling of rigid jobs on P identical processors: R-LIST and R-SHELF / R-SHELFFILL.

The policies run on :class:`~torus_sim.flat.model.FlatModel`. A job that fails goes back into the
queue at its priority (or, with R-SHELFFILL, restarts at once inside its shelf when it still fits
before the shelf's end).
"""

from __future__ import annotations

import bisect
import math
from typing import TYPE_CHECKING

import numpy as np

from torus_sim.errors import ConfigurationError
from torus_sim.policies.flat_policy import FlatPolicy

if TYPE_CHECKING:
    from torus_sim.flat.model import FlatModel

__all__ = [
    "PRIORITY_RULES",
    "RESERVATIONS",
    "AvailabilityProfile",
    "ListPolicy",
    "ShelfPolicy",
    "priority_keys",
]

PRIORITY_RULES = ("LPT", "SPT", "HPA", "LPA", "LA", "SA", "RANDOM")
"""Job priority rules of RIGID §5.1 (MOLDABLE §5.1 uses LPT, HPA, LA)."""

RESERVATIONS = {"0": 0, "1": 1, "Q": -1}
"""R-LIST's m: 0 (greedy), 1 (EASY), Q (every queued job: conservative); -1 stands for |Q|."""


def priority_keys(rule: str, runtimes, processors, rng: np.random.Generator | None = None) -> np.ndarray:
    """Sort keys of a priority rule: smaller key = higher priority; ties go to the lower job index.

    Args:
        rule: one of :data:`PRIORITY_RULES` (LPT/SPT longest/shortest processing time first,
            HPA/LPA highest/lowest processor allocation first, LA/SA largest/smallest area first,
            RANDOM a seeded random order).
        runtimes: float ``(n,)``, t_j seconds.
        processors: int ``(n,)``, p_j.
        rng: the generator RANDOM draws from (required for RANDOM).

    Returns:
        float64 ``(n,)``.

    Raises:
        ConfigurationError: unknown rule, or RANDOM without a generator.

    References:
        RIGID §5.1 (the seven rules). The reference code draws a new random priority each time a
        failed job is re-queued; here a job keeps the one random rank drawn at the start.
    """
    runtimes = np.asarray(runtimes, dtype=float)
    processors = np.asarray(processors, dtype=float)
    if rule == "LPT":
        return -runtimes
    if rule == "SPT":
        return runtimes.copy()
    if rule == "HPA":
        return -processors
    if rule == "LPA":
        return processors.copy()
    if rule == "LA":
        return -(runtimes * processors)
    if rule == "SA":
        return runtimes * processors
    if rule == "RANDOM":
        if rng is None:
            raise ConfigurationError("the RANDOM priority needs a random generator")
        return rng.random(runtimes.size)
    raise ConfigurationError(f"unknown priority rule {rule!r}; choose from {', '.join(PRIORITY_RULES)}")


class _QueuePolicy(FlatPolicy):
    """A priority queue of jobs with their current allocation (processors, runtime)."""

    def __init__(self, runtimes, processors, priority: str = "LPT") -> None:
        if priority not in PRIORITY_RULES:
            raise ConfigurationError(f"unknown priority rule {priority!r}; choose from {', '.join(PRIORITY_RULES)}")
        self.priority = priority
        self.runtimes = [float(value) for value in runtimes]
        self.processors = [int(value) for value in processors]
        if any(value <= 0 for value in self.runtimes) or any(value < 1 for value in self.processors):
            raise ConfigurationError("runtimes must be > 0 and processor counts >= 1")
        self.queue: list[tuple[float, int]] = []
        self._keys: list[float] = []

    def _set_keys(self, model: FlatModel) -> None:
        self._keys = priority_keys(self.priority, self.runtimes, self.processors, model.rng).tolist()

    def _key(self, job: int) -> float:
        return self._keys[job]

    def _enqueue(self, job: int) -> None:
        bisect.insort(self.queue, (self._key(job), job))


class ListPolicy(_QueuePolicy):
    """R-LIST: list scheduling with m reservations, recomputed after every completion.

    At every completion the failed job (if any) re-enters the queue at its priority; the first m
    jobs of the queue each get the earliest reservation that delays none before them (starting now
    when they fit now), then every other job starts now if it fits without delaying a reservation.
    m = 0 is GREEDY (MOLDABLE's LIST, Alg. 1), m = 1 EASY, m = |Q| conservative backfilling.

    Args:
        runtimes: float ``(n,)``, t_j seconds (the allocation's time for moldable jobs).
        processors: int ``(n,)``, p_j.
        reservations: m >= 0, or -1 for |Q|.
        priority: a rule of :data:`PRIORITY_RULES`.

    References:
        RIGID §4.1, Alg. 1; MOLDABLE §4.2.1, Alg. 1 (LIST = R-LIST with m = 0).
    """

    def __init__(self, runtimes, processors, reservations: int = 0, priority: str = "LPT") -> None:
        super().__init__(runtimes, processors, priority)
        if reservations < -1:
            raise ConfigurationError(f"reservations m must be >= 0 or -1 (|Q|), got {reservations}")
        self.reservations = reservations
        self._smallest = min(self.processors)

    def begin(self, model: FlatModel) -> None:
        """Queue every job by priority and run the first pass."""
        self._set_keys(model)
        self.queue = sorted((self._key(job), job) for job in range(len(self.runtimes)))
        self._pass(model)

    def on_completion(self, model: FlatModel, job: int, failed: bool) -> None:
        """Re-queue a failed job, then run a pass."""
        if failed:
            self._enqueue(job)
        self._pass(model)

    def _pass(self, model: FlatModel) -> None:
        if not self.queue:
            return
        if self.reservations == 0:
            self._greedy(model)
        else:
            self._with_reservations(model)

    def _greedy(self, model: FlatModel) -> None:
        free = model.platform.free_count()
        smallest = self._smallest
        if free < smallest:
            return
        processors, runtimes = self.processors, self.runtimes
        kept = []
        queue = self.queue
        for position, item in enumerate(queue):
            job = item[1]
            need = processors[job]
            if need <= free:
                model.start(job, need, runtimes[job])
                free -= need
                if free < smallest:
                    kept.extend(queue[position + 1 :])
                    break
            else:
                kept.append(item)
        self.queue = kept

    def _with_reservations(self, model: FlatModel) -> None:
        now = model.now
        verification = model.verification_time
        profile = AvailabilityProfile(
            now, model.platform.free_count(), [(end, used) for _, end, used in model.running_attempts.values()]
        )
        depth = len(self.queue) if self.reservations == -1 else self.reservations
        kept = []
        for position, item in enumerate(self.queue):
            job = item[1]
            need, duration = self.processors[job], self.runtimes[job] + verification
            if position < depth:
                start_at = profile.earliest(need, duration)
                profile.reserve(start_at, duration, need)
                if start_at <= now:
                    model.start(job, need, self.runtimes[job])
                else:
                    kept.append(item)
            elif profile.fits(now, need, duration):
                profile.reserve(now, duration, need)
                model.start(job, need, self.runtimes[job])
            else:
                kept.append(item)
        self.queue = kept


class AvailabilityProfile:
    """Free processors over time from now on: a step function the reservations are cut from.

    Args:
        now: the current time, seconds.
        free: processors free now.
        releases: (end_at, processors) of every running attempt.

    Attributes:
        dates: ascending breakpoints, seconds; ``dates[0] == now``.
        free: processors free from ``dates[i]`` to ``dates[i + 1]`` (the last one to infinity).

    References:
        RIGID §4.1 (reservations that delay no higher-priority reservation); the profile is the
        usual one of conservative backfilling (Mu'alem and Feitelson).
    """

    def __init__(self, now: float, free: int, releases) -> None:
        self.dates = [now]
        self.free = [free]
        # an attempt ending now still holds its processors until its own end event runs (then a new pass follows)
        soon = math.nextafter(now, math.inf)
        for end_at, used in sorted((max(end_at, soon), used) for end_at, used in releases):
            if end_at <= self.dates[-1]:
                self.free[-1] += used
            else:
                self.dates.append(end_at)
                self.free.append(self.free[-1] + used)

    def fits(self, start_at: float, need: int, duration: float) -> bool:
        """Whether ``need`` processors stay free over [start_at, start_at + duration)."""
        index = bisect.bisect_right(self.dates, start_at) - 1
        end_at = start_at + duration
        dates, free = self.dates, self.free
        while index < len(dates) and dates[index] < end_at:
            if free[index] < need:
                return False
            index += 1
        return True

    def earliest(self, need: int, duration: float) -> float:
        """The earliest breakpoint from which ``need`` processors stay free for ``duration`` seconds.

        Raises:
            ConfigurationError: ``need`` exceeds what is ever free (a job larger than P).
        """
        for index, start_at in enumerate(self.dates):
            if self.free[index] >= need and self.fits(start_at, need, duration):
                return start_at
        raise ConfigurationError(f"{need} processors are never free")

    def reserve(self, start_at: float, duration: float, need: int) -> None:
        """Take ``need`` processors over [start_at, start_at + duration)."""
        end_at = start_at + duration
        for date in (start_at, end_at):
            index = bisect.bisect_right(self.dates, date) - 1
            if self.dates[index] != date:
                self.dates.insert(index + 1, date)
                self.free.insert(index + 1, self.free[index])
        index = bisect.bisect_left(self.dates, start_at)
        while index < len(self.dates) and self.dates[index] < end_at:
            self.free[index] -= need
            index += 1


class ShelfPolicy(_QueuePolicy):
    """R-SHELF and R-SHELFFILL: jobs run in shelves that start together.

    When every job of the current shelf has ended, failed jobs are back in the queue and a new shelf
    is filled from the queue in priority order: with b = 0 it closes at the first job that does not
    fit (Next-Fit), with b = 1 every job that fits is added (First-Fit). R-SHELFFILL also restarts a
    failed job at once when its new attempt ends no later than the shelf's end T_i.

    Args:
        runtimes: float ``(n,)``, t_j seconds.
        processors: int ``(n,)``, p_j.
        backfill: b (True: First-Fit, False: Next-Fit).
        fill: True for R-SHELFFILL, False for R-SHELF.
        priority: a rule of :data:`PRIORITY_RULES`.

    References:
        RIGID §4.3, Alg. 2 (R-SHELF) and Alg. 3 (R-SHELFFILL).
    """

    def __init__(self, runtimes, processors, backfill: bool = True, fill: bool = False, priority: str = "LPT") -> None:
        super().__init__(runtimes, processors, priority)
        self.backfill = backfill
        self.fill = fill
        self.shelf_end_at = 0.0
        self.shelves = 0

    def begin(self, model: FlatModel) -> None:
        """Queue every job by priority and build the first shelf."""
        self._set_keys(model)
        self.queue = sorted((self._key(job), job) for job in range(len(self.runtimes)))
        self._new_shelf(model)

    def on_completion(self, model: FlatModel, job: int, failed: bool) -> None:
        """Refill the shelf (R-SHELFFILL) or re-queue a failed job; build a shelf once the last one is empty."""
        if failed:
            if self.fill and model.now + self.runtimes[job] + model.verification_time <= self.shelf_end_at:
                model.start(job, self.processors[job], self.runtimes[job])
                return
            self._enqueue(job)
        if not model.running_attempts and self.queue:
            self._new_shelf(model)

    def _new_shelf(self, model: FlatModel) -> None:
        free = model.platform.capacity
        chosen, kept = [], []
        for position, item in enumerate(self.queue):
            need = self.processors[item[1]]
            if need <= free:
                chosen.append(item[1])
                free -= need
            else:
                kept.append(item)
                if not self.backfill:
                    kept.extend(self.queue[position + 1 :])
                    break
        self.queue = kept
        now = model.now
        self.shelf_end_at = max(now + self.runtimes[job] + model.verification_time for job in chosen)
        self.shelves += 1
        for job in chosen:
            model.start(job, self.processors[job], self.runtimes[job])
