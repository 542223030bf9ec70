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
from torus_sim.policies.availability import MIN_DURATION, AvailabilityProfile, StartsLeft, availability_profile, window_end
from torus_sim.policies.base import Policy, Start
from torus_sim.policies.kept_profile import ProfileKeeper, due_positions, unchanged_since

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
        self._by_rank = None  # m = |Q| on a cluster: (key, sizes, reserved durations) of every job by rank
        self._counts = None  # m = |Q| on a cluster: count_reservations.KeptReservations (numba: made at the first pass)
        self._counts_left = None  # (running job rank -> end, known repairs) after the last pass on counts
        self._keeper = ProfileKeeper(_attempt_end, None)  # m = |Q| on the torus: the profile, kept while it stands
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
        if self.reservations == -1 and view.platform.counts_fit:
            from torus_sim.policies.easy import compiled_count_profile

            if compiled_count_profile() is not None:  # numba is there
                if self._counts is None:
                    from torus_sim.policies.count_reservations import KeptReservations

                    self._counts = KeptReservations()
                return self._every_reservation_on_counts(view)
        return self._with_reservations_on_profile(view)

    def _every_reservation_on_counts(self, view):
        """R-LIST with m = |Q| on a cluster: the waiting jobs' reservations in compiled code, until none left starts now.

        The same reservations as the profile in Python (:class:`~torus_sim.policies.availability.AvailabilityProfile`,
        start for start: :mod:`~torus_sim.policies.count_reservations`), on the running jobs' real ends
        (the attempts' lengths are known here) and the down nodes' known repairs; the jobs after the last
        one able to start now are not reserved, and the profile is kept to the next pass while the
        running jobs and repairs are those it holds (:func:`~torus_sim.policies.kept_profile.unchanged_since`;
        :class:`~torus_sim.policies.count_reservations.KeptReservations`: the pass starts the jobs a fresh
        one would).

        Returns:
            The starts of the jobs whose reservation is now, in priority order.

        References:
            RIGID §4.1, Alg. 1 (m = |Q|); Mu'alem and Feitelson, IEEE TPDS 12(6), 2001.
        """
        now = view.now
        running = {job.rank: job.end_event.time for job in view.running.values()}
        repairs = tuple(view.platform.repairs_ahead())
        left = self._counts_left  # (running ranks -> end, repairs) as the last pass left them
        stands = left is not None and unchanged_since(now, running, repairs, *left)
        queue = view.queue.jobs()
        size_of, runtime_of = self._size, self._runtime
        ranks = self._ranks(view, queue)
        sizes, durations = self._by_rank[1][ranks], self._by_rank[2][ranks]
        starting = self._counts.plan(
            now, view.platform.free_count(), partial(_releases, view), ranks, sizes, durations, stands
        ).tolist()
        for position in starting:  # where the next pass's profile releases them
            running[int(ranks[position])] = window_end(now, float(durations[position]))
        self._counts_left = (running, repairs)
        return self._emit(view, [(queue[i], size_of[queue[i].rank], runtime_of[queue[i].rank]) for i in starting])

    def _reserved(self, view, queue: list, first: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """The sizes (int64) and reserved durations (float64, seconds) of the waiting jobs ``queue[first:]``, in queue order.

        ``queue`` is the view's whole queue (:meth:`~torus_sim.engine.wait_queue.WaitQueue.jobs`); the ranks
        come from the queue's columns while it keeps them (:attr:`queue_columns`).

        A reserved duration is the run time plus the verification, at least
        :data:`~torus_sim.policies.availability.MIN_DURATION` (a job of run time 0 still holds its nodes).
        """
        ranks = self._ranks(view, queue, first)
        return self._by_rank[1][ranks], self._by_rank[2][ranks]

    def _ranks(self, view, queue: list, first: int = 0) -> np.ndarray:
        """int64 ranks of ``queue[first:]``, from the queue's columns while it keeps them.

        Every job's size and reserved duration by rank are made ready in ``_by_rank`` first.
        """
        size_of, runtime_of = self._size, self._runtime
        key = (id(size_of), id(runtime_of), view.verification_time)
        if self._by_rank is None or self._by_rank[0] != key:  # every job's size and reserved duration, by rank
            durations = np.maximum(np.asarray(runtime_of, dtype=np.float64) + view.verification_time, MIN_DURATION)
            self._by_rank = (key, np.asarray(size_of, dtype=np.int64), durations)
        columns = view.queue.columns  # the ranks in queue order, kept by the queue while it is long
        if columns is not None:
            return columns.ranks[first:]
        return np.fromiter(map(_RANK, queue[first:] if first else queue), dtype=np.int64, count=len(queue) - first)

    def _with_reservations_on_profile(self, view):
        now = view.now
        cluster = view.platform.counts_fit
        queue = view.queue.jobs()
        depth = len(queue) if self.reservations == -1 else self.reservations
        kept = self._keeper.take(view, queue) if not cluster else None
        if depth < len(queue):
            kept = None  # m reservations: a fresh profile at every pass
        if kept is not None:  # the last pass's torus profile stands for a fresh one: its jobs keep their reservations
            profile, first = kept.profile, len(kept.waiting)
            starts, wheres, lengths = list(kept.starts), list(kept.wheres), list(kept.lengths)
        else:
            releases = [(job.end_event.time, job) for job in view.running.values()]
            profile, first, starts, wheres, lengths = availability_profile(view, releases, self.placement), 0, [], [], []
        sizes, durations = self._reserved(view, queue, first)  # the jobs the kept profile did not reserve
        if depth >= len(queue):  # every job reserved (R-LIST-Q): the profile's pass (on the torus compiled with MFP)
            found, placed, taken = profile.reserve_in_order(sizes, durations)
            starts += found
            wheres += placed
            lengths += durations[:taken].tolist()
            reserved = first + taken
            starting = due_positions(starts, now)
            for position in starting:
                yield self._start(view, queue[position], None if cluster else wheres[position])
            if not cluster:  # every start is applied now
                self._keeper.keep(view, profile, queue[:reserved], starts, wheres, lengths, starting)
            return
        sizes, durations = sizes.tolist(), durations.tolist()
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
                    yield self._start(view, job, None if cluster else where)
            elif cluster:
                if profile.fits(now, need, duration):
                    profile.reserve(now, duration, need)
                    started = True
                    yield self._start(view, job)
            else:
                where = profile.fits_now(need, duration)
                if where is not None:
                    profile.reserve(now, duration, need, where)
                    started = True
                    yield self._start(view, job, where)
            if not starts_left.passed(need, duration, started, start_at):
                return  # no later job can start now: their reservations would change nothing this pass


def _attempt_end(view, job) -> float:
    """Where R-LIST's profile releases a running job: its attempt's real end, seconds (RIGID §4.1: run times are known)."""
    return job.end_event.time


def _releases(view) -> tuple[np.ndarray, np.ndarray]:
    """R-LIST's releases on a cluster: when (seconds, ascending, float64) and how many nodes (int64) come free.

    Each running job frees its nodes at its attempt's real end (RIGID §4.1: run times are known; the
    engine's :class:`~torus_sim.engine.running_ends.ReleaseColumns` hold predicted ends instead) and
    each down node comes back at its known repair.
    """
    rows = [(job.end_event.time, job.allocated_size) for job in view.running.values()]
    rows += [(at, 1) for at, _ in view.platform.repairs_ahead()]
    rows.sort()
    return np.array([end for end, _ in rows], dtype=np.float64), np.array([nodes for _, nodes in rows], dtype=np.int64)


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
