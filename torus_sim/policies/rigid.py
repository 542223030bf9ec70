"""Resilient scheduling of rigid jobs: R-LIST and R-SHELF / R-SHELFFILL, on a cluster or the torus.

A job whose attempt ends in a silent error goes back into the queue at its priority (or, with
R-SHELFFILL, restarts at once inside its shelf when it still fits before the shelf's end). Both
policies plan after every attempt end, one at a time (RIGID Alg. 1: "whenever a job completes").

On a cluster a job needs p_j free nodes; on the torus a rigid job is a partition (its size rounded
up to one with a shape), and R-LIST's reservations are partitions that stay free over the job's
whole attempt (:class:`~torus_sim.policies.availability.PartitionProfile`).
"""

from __future__ import annotations

from functools import partial
from operator import attrgetter

import numpy as np

from torus_sim.core.errors import ConfigurationError
from torus_sim.policies.availability import MIN_DURATION, AvailabilityProfile, StartsLeft, availability_profile
from torus_sim.policies.base import Policy, Start
from torus_sim.policies.reservations import reservation_pass

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

_new_start = partial(tuple.__new__, Start)
"""``Start`` from a 4-tuple without the named tuple's Python-level ``__new__`` (the greedy passes
build one per attempt)."""


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


def check_priority(priority: str) -> str:
    """Return ``priority`` if it is a rule of :data:`PRIORITY_RULES`, else raise ConfigurationError."""
    if priority not in PRIORITY_RULES:
        raise ConfigurationError(f"unknown priority rule {priority!r}; choose from {', '.join(PRIORITY_RULES)}")
    return priority


class PriorityPolicy(Policy):
    """Base of the batch heuristics: a priority rule over each job's (processors, time) for its attempts.

    Subclasses set ``_size`` and ``_runtime`` (by job rank: processors and seconds of the job's
    attempts) in :meth:`allocate`; rigid jobs keep their own.

    Args:
        priority: a rule of :data:`PRIORITY_RULES`.
    """

    pass_after_each_end = True

    def __init__(self, priority: str = "LPT") -> None:
        self.priority = check_priority(priority)
        self._keys: list[float] = []
        self._size: list[int] = []
        self._runtime: list[float] = []

    def allocate(self, context) -> None:
        """Each job's processors and time (rigid: its own size and runtime), by rank."""
        self._size = [job.partition_size for job in context.jobs]
        self._runtime = [job.runtime for job in context.jobs]

    def attach(self, context) -> None:
        """Fix every job's allocation and its priority key (RANDOM draws from the run's generator).

        Raises:
            ConfigurationError: the jobs' ranks are not their positions 0..n-1.
        """
        super().attach(context)
        if [job.rank for job in context.jobs] != list(range(len(context.jobs))):
            raise ConfigurationError(f"{self.name} needs the jobs ranked 0..n-1 in workload order")
        self.allocate(context)
        self._keys = priority_keys(self.priority, self._runtime, self._size, context.rng).tolist()
        self._smallest = min(self._size) if self._size else 0
        self._moldable = context.workload.times is not None

    def queue_key(self, job):
        """(priority key, rank): the rule's order, ties to the lower job index."""
        return (self._keys[job.rank], job.rank)

    def _start(self, view, job, allocation=None, size=None, runtime=None):
        size = self._size[job.rank] if size is None else size
        if allocation is None:
            allocation = view.place(job, placement=self.placement, size=size)
        if job.moldable:
            return Start(job, allocation, size, self._runtime[job.rank] if runtime is None else runtime)
        return Start(job, allocation)

    def _emit(self, view, picks):
        """Starts of ``(job, processors, seconds)`` picks made on counts.

        A list when the platform keeps counts only, else placed one at a time on the live platform
        (a generator).
        """
        platform = view.platform
        if platform.counts_only:
            if self._moldable:
                return [_new_start((job, size, size, runtime)) for job, size, runtime in picks]
            return [_new_start((job, size, None, None)) for job, size, _ in picks]
        return self._placed(view, picks)

    def _placed(self, view, picks):
        for job, size, runtime in picks:
            start = self._start(view, job, size=size, runtime=runtime)
            if start.allocation is not None:
                yield start


_RANK = attrgetter("rank")  # a waiting job's rank, read in C


class ListPolicy(PriorityPolicy):
    """R-LIST: list scheduling with m reservations, recomputed after every attempt end.

    At every end the failed job (if any) is back in the queue at its priority; the first m jobs of
    the queue each get the earliest reservation that delays none before them (starting now when
    they fit now), then every other job starts now if it fits without delaying a reservation.
    m = 0 is GREEDY (MOLDABLE's LIST, Alg. 1), m = 1 EASY, m = |Q| conservative backfilling.

    Args:
        reservations: m >= 0, or -1 for |Q|.
        priority: a rule of :data:`PRIORITY_RULES`.

    Raises:
        ConfigurationError: m < -1 or an unknown rule.

    References:
        RIGID §4.1, Alg. 1; MOLDABLE §4.2.1, Alg. 1 (LIST = R-LIST with m = 0).
    """

    def __init__(self, reservations: int = 0, priority: str = "LPT") -> None:
        super().__init__(priority)
        if reservations < -1:
            raise ConfigurationError(f"reservations m must be >= 0 or -1 (|Q|), got {reservations}")
        self.reservations = reservations
        self._by_rank = None  # with reservations: (key, sizes, reserved durations) of every job by rank
        self._pass = None  # the platform's reservation pass (reservations.reservation_pass), made at the first pass
        self._platform = None  # the platform it was made for
        self.name = f"R-LIST-{'Q' if reservations == -1 else reservations}"

    @property
    def queue_columns(self) -> str | None:
        """With reservations, a pass reads the waiting jobs' ranks from the queue's columns (m = 0: none)."""
        return None if self.reservations == 0 else "queue"

    def plan(self, view):
        """One pass: greedy (m = 0) or with reservations."""
        if not view.queue:
            return ()
        if self.reservations == 0:
            return self._greedy(view)
        return self._with_reservations(view)

    def _greedy(self, view):
        platform = view.platform
        free = platform.free_count()
        smallest = self._smallest
        if free < smallest:
            return ()
        if platform.counts_fit:
            return self._emit(view, self._greedy_scan(view, free))
        return self._greedy_placed(view)

    def _greedy_scan(self, view, free: int) -> list:
        """The plain greedy pass: scan the queue in priority order, start every job that fits.

        Returns:
            ``(job, processors, seconds)`` picks.

        References:
            RIGID Alg. 1 (R-LIST with m = 0); MOLDABLE Alg. 1 (LIST).
        """
        sizes, smallest, runtimes = self._size, self._smallest, self._runtime
        picks = []
        for job in view.queue:
            need = sizes[job.rank]
            if need <= free:
                picks.append((job, need, runtimes[job.rank]))
                free -= need
                if free < smallest:
                    break
        return picks

    def _greedy_placed(self, view):
        smallest = self._smallest
        for job in view.queue.jobs():
            if view.free_count() < smallest:
                return
            if self._size[job.rank] <= view.free_count():
                start = self._start(view, job)
                if start.allocation is not None:
                    yield start

    def _with_reservations(self, view):
        """With m >= 1 reservations: every waiting job reserved on the platform's pass (m = |Q|, or a queue of at most m), else the first m."""
        queue = view.queue.jobs()
        if self._pass is None or self._platform is not view.platform:
            self._pass, self._platform = reservation_pass(view.platform, "known", self.placement), view.platform
        ranks = self._ranks(view, queue)
        sizes, durations = self._by_rank[1][ranks], self._by_rank[2][ranks]
        if self.reservations == -1 or self.reservations >= len(queue):
            return self._every_reservation(view, queue, sizes, durations, ranks)
        self._pass.drop()  # m reservations: a fresh profile at every pass
        return self._first_reservations(view, queue, sizes.tolist(), durations.tolist())

    def _every_reservation(self, view, queue: list, sizes, durations, ranks):
        """Every waiting job's reservation on the platform's pass (R-LIST-Q): the jobs whose reservation is now start.

        On a cluster the pass runs compiled on the running jobs' real ends (the attempts' lengths are known) and the
        down nodes' known repairs, kept to the next pass while it stands; on the torus on the profile, kept
        likewise (:mod:`~torus_sim.policies.reservations`). The jobs after the last one able to start now are not
        reserved (their reservations would change nothing this pass).

        References:
            RIGID §4.1, Alg. 1 (m = |Q|); Mu'alem and Feitelson, IEEE TPDS 12(6), 2001.
        """
        reserved = self._pass.reserve(view, queue, sizes, durations, ranks)
        if not reserved.starting:  # nothing starts (about half the passes): nothing to apply first
            self._pass.started(view)
            return ()
        if not reserved.after and reserved.wheres[0] is not None:  # every allocation known, nothing kept: one list
            return [
                self._start(view, queue[position], where)
                for position, where in zip(reserved.starting, reserved.wheres, strict=True)
            ]
        return self._starting(view, queue, reserved)

    def _starting(self, view, queue: list, reserved):
        """The starts of the jobs whose reservation is now, then the pass told they are applied."""
        for position, where in zip(reserved.starting, reserved.wheres, strict=True):
            yield self._start(view, queue[position], where)
        self._pass.started(view)

    def _first_reservations(self, view, queue: list, sizes: list, durations: list):
        """The first m waiting jobs reserved in order on a fresh profile; every later one starts now if it delays none.

        References:
            RIGID §4.1, Alg. 1 (R-LIST with m reservations).
        """
        now = view.now
        releases = [(job.end_event.time, job) for job in view.running.values()]
        profile = availability_profile(view, releases, self.placement)
        depth = self.reservations
        starts_left = StartsLeft(profile, sizes, durations)
        for position, job in enumerate(queue):
            need, duration = sizes[position], durations[position]
            started = False
            start_at = None  # a job past the m reserved ones only starts now or not
            if position < depth:
                start_at, where = profile.earliest(need, duration)
                profile.reserve(start_at, duration, need, where)
                if start_at <= now:
                    started = True
                    yield self._start(view, job, where)
            else:
                fits, where = profile.room_now(need, duration)
                if fits:
                    profile.reserve(now, duration, need, where)
                    started = True
                    yield self._start(view, job, where)
            if not starts_left.passed(need, duration, started, start_at):
                return  # no later job can start now: their reservations would change nothing this pass

    def _ranks(self, view, queue: list) -> np.ndarray:
        """int64 ranks of ``queue`` (the view's waiting jobs in order), from the queue's columns while it keeps them.

        Every job's size and reserved duration by rank are made ready in ``_by_rank`` first.
        """
        size_of, runtime_of = self._size, self._runtime
        key = (id(size_of), id(runtime_of), view.verification_time)
        if self._by_rank is None or self._by_rank[0] != key:  # every job's size and reserved duration, by rank
            durations = np.maximum(np.asarray(runtime_of, dtype=np.float64) + view.verification_time, MIN_DURATION)
            self._by_rank = (key, np.asarray(size_of, dtype=np.int64), durations)
        columns = view.queue.columns  # the ranks in queue order, kept by the queue while it is long
        if columns is not None:
            return columns.ranks
        return np.fromiter(map(_RANK, queue), dtype=np.int64, count=len(queue))


class ShelfPolicy(PriorityPolicy):
    """R-SHELF and R-SHELFFILL: jobs run in shelves that start together.

    When every job of the current shelf has ended, failed jobs are back in the queue and a new shelf
    is filled from the queue in priority order: with b = 0 it closes at the first job that does not
    fit (Next-Fit), with b = 1 every job that fits is added (First-Fit). R-SHELFFILL also restarts a
    failed job at once when its new attempt ends no later than the shelf's end T_i (a job killed by
    a fail-stop failure too, beyond the paper's silent errors).

    Args:
        backfill: b (True: First-Fit, False: Next-Fit).
        fill: True for R-SHELFFILL, False for R-SHELF.
        priority: a rule of :data:`PRIORITY_RULES`.

    References:
        RIGID §4.3, Alg. 2 (R-SHELF) and Alg. 3 (R-SHELFFILL).
    """

    def __init__(self, backfill: bool = True, fill: bool = False, priority: str = "LPT") -> None:
        super().__init__(priority)
        self.backfill = backfill
        self.fill = fill
        self.shelf_end_at = 0.0
        self.shelves = 0
        self.name = f"R-SHELF{'FILL' if fill else ''}-{'B' if backfill else 'NB'}"

    def plan(self, view):
        """Refill the shelf (R-SHELFFILL) after a failed attempt; build a shelf once the last one is empty."""
        ended = view.ended
        failed = [ended[0]] if ended is not None and ended[1] else []
        failed += view.returned  # attempts a fail-stop failure killed: the same refill rule
        restarted = False
        if self.fill:
            for job in failed:
                if view.now + self._runtime[job.rank] + view.verification_time <= self.shelf_end_at:
                    start = self._start(view, job)
                    if start.allocation is not None:
                        restarted = True
                        yield start
        if restarted or view.running or not view.queue:
            return
        yield from self._new_shelf(view)

    def _new_shelf(self, view):
        now = view.now
        verification = view.verification_time
        self.shelves += 1
        self.shelf_end_at = -np.inf
        for job in view.queue.jobs():
            start = self._start(view, job) if self._size[job.rank] <= view.free_count() else None
            if start is None or start.allocation is None:
                if not self.backfill:
                    return
                continue
            self.shelf_end_at = max(self.shelf_end_at, now + self._runtime[job.rank] + verification)
            yield start
