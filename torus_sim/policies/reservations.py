"""Every waiting job's reservation, written once over the platform's availability profile.

Conservative backfilling and R-LIST with m >= 1 give each waiting job, in priority order, the earliest
start that delays no earlier reservation, and start the jobs whose reservation is now (RIGID §4.1;
Mu'alem and Feitelson 2001). The algorithm asks a profile only what :class:`ReservationProfile` names:
the earliest window of a size and duration, whether one is open now, and to take a window. Each
representation of the machine implements it: node counts
(:class:`~torus_sim.policies.availability.AvailabilityProfile`, which a cluster with node identities
uses too, its down nodes coming back at their known repairs) and the torus's partitions
(:class:`~torus_sim.policies.availability.PartitionProfile`, whose search and MFP choice run compiled
over :class:`~torus_sim.policies.partition_steps.StepArrays`).

The pass that reserves for *every* waiting job (conservative, R-LIST-Q) is a :class:`ReservationPass`:
:func:`reservation_pass` gives the platform's, chosen once by what the platform answers
(``counts_fit``, ``table``), never by its name. On a cluster the pass runs compiled over numpy columns
(:mod:`~torus_sim.policies.count_reservations`, the same reservations start for start) and keeps its
profile between passes as each policy's rule allows; elsewhere, or where numba cannot be imported, it
runs on the profile in Python, kept between passes on the torus
(:class:`~torus_sim.policies.kept_profile.ProfileKeeper`). The policies hold one pass each and read
only :class:`Reserved`: which jobs start now, where the profile placed them (a partition) or not (the
policy's placement picks the nodes), and the first job's reservation.

Two rules tell the policies' passes apart (:data:`RULES`): ``predicted`` (conservative backfilling:
running jobs release their nodes at their predicted ends, a waiting job holds its predicted remaining
time, the profile is kept only while nothing but arrivals happened) and ``known`` (R-LIST-Q: run times
are known, running jobs release at their attempts' real ends, the profile is kept while it stands, a
job entering among the reserved ones undoing those after it).

References:
    Mu'alem and Feitelson, "Utilization, predictability, workloads, and user runtime estimates in
    scheduling the IBM SP2 with backfilling", IEEE TPDS 12(6), 2001 (conservative backfilling, the
    profile); RIGID §4.1, Alg. 1 (R-LIST with m reservations, recomputed at each trigger);
    BGL-FAULT §3.3 (a torus reservation is a partition).
"""

from __future__ import annotations

import math
from functools import partial
from typing import NamedTuple, Protocol

import numpy as np

from torus_sim.policies import kernels
from torus_sim.policies.availability import MIN_DURATION, availability_profile, window_end
from torus_sim.policies.kept_profile import ProfileKeeper, due_positions, unchanged_since

__all__ = ["RULES", "ReservationPass", "ReservationProfile", "Reserved", "compiled_count_profile", "reservation_pass"]

RULES = ("predicted", "known")
"""What a pass releases running jobs at and how long it keeps its profile (see the module's text)."""


class ReservationProfile(Protocol):
    """Free capacity over time from now on, from which reservations are cut: what every platform's profile answers.

    ``where`` is the allocation the profile chose for a window (a partition id on the torus) or None where
    the profile counts nodes and the policy's placement picks them when the job starts.

    References:
        Mu'alem and Feitelson, IEEE TPDS 12(6), 2001 (the profile); BGL-FAULT §3.3 (partitions).
    """

    @property
    def now(self) -> float:
        """The profile's first breakpoint, seconds."""
        ...

    def earliest(self, size: int, duration: float) -> tuple[float, object]:
        """The earliest start (seconds; inf: never) at which ``size`` nodes stay free for ``duration`` seconds, and where."""
        ...

    def room_now(self, size: int, duration: float) -> tuple[bool, object]:
        """Whether ``size`` nodes stay free from now for ``duration`` seconds, and where."""
        ...

    def room_at(self, start_at: float, size: int, duration: float) -> tuple[bool, object]:
        """Whether ``size`` nodes stay free over [start_at, start_at + duration), and where."""
        ...

    def reserve(self, start_at: float, duration: float, size: int, where) -> None:
        """Take the window [start_at, start_at + duration) (nothing when ``start_at`` is inf)."""
        ...

    def reserve_in_order(self, sizes, durations) -> tuple[list[float], list, int]:
        """Each job's :meth:`earliest`, reserved before the next is asked, until no later job could start now.

        Returns:
            (starts in seconds, wheres, jobs taken).
        """
        ...

    def open_for(self, size: int) -> float:
        """How long ``size`` nodes stay free from now, seconds (0.0: not free now; inf: from now on)."""
        ...


class Reserved(NamedTuple):
    """One pass's answer.

    Attributes:
        starting: the positions in the queue, ascending, of the jobs whose reservation is now.
        wheres: for each of them, the allocation the profile reserved (a partition id; a node count on a cluster
            that keeps counts only), or None: the policy's placement picks the nodes (all given or all None).
        head_at: the first waiting job's reservation, seconds (inf: never); None where the pass does not
            say (R-LIST-Q's compiled pass, which no reservation is reported from).
        after: the pass asks to be told once the starts are applied (:meth:`ReservationPass.started`: a profile
            kept between passes); False: the starts may be handed over as a list.
    """

    starting: list[int]
    wheres: list
    head_at: float | None
    after: bool = True


_new_reserved = partial(tuple.__new__, Reserved)
"""``Reserved`` from a 4-tuple without the named tuple's Python-level ``__new__`` (a pass makes one; CTC-SP2 has 145,398)."""


class ReservationPass(Protocol):
    """A platform's pass that reserves for every waiting job, kept from one pass to the next where it stands."""

    def reserve(self, view, jobs: list, sizes: np.ndarray, durations: np.ndarray, ranks: np.ndarray | None = None) -> Reserved:
        """Reserve for ``jobs`` in priority order; the jobs whose reservation is now.

        Args:
            view: the pass's view.
            jobs: the waiting jobs in priority order.
            sizes: int64 ``(q,)``, their sizes (nodes; supernodes on the torus).
            durations: float64 ``(q,)``, how long each holds its nodes once started, seconds.
            ranks: int64 ``(q,)``, their ranks (who they are), where the pass keeps reservations by job; else None.
        """
        ...

    def started(self, view) -> None:
        """Called once the pass's starts are applied (a kept profile is kept then)."""
        ...

    def drop(self) -> None:
        """Forget what is kept between passes: the next pass reserves afresh (a pass that reserved only some jobs came between)."""
        ...


def _predicted_end(view, job) -> float:
    return view.predicted_end(job)


def _attempt_end(view, job) -> float:
    """Where R-LIST's profile releases a running job: its attempt's real end, seconds (RIGID §4.1: run times are known)."""
    return job.end_event.time


class _ProfilePass:
    """The pass on the profile in Python (:func:`~torus_sim.policies.availability.availability_profile`), any platform.

    On a platform with a partition table the last pass's profile stands for a fresh one when nothing but what
    the rule allows happened since (:class:`~torus_sim.policies.kept_profile.ProfileKeeper`): the jobs it
    reserved keep their reservations and the pass goes on from the first one it did not reserve.
    """

    def __init__(self, rule: str, placement) -> None:
        self._placement = placement
        self._end_of = _predicted_end if rule == "predicted" else _attempt_end
        if rule == "predicted":
            self._keeper = ProfileKeeper(across_breakpoints=False)
        else:
            self._keeper = ProfileKeeper(_attempt_end, None)
        self._left = None  # (profile, jobs reserved, starts, wheres, lengths, starting) for started()

    def reserve(self, view, jobs, sizes, durations, ranks=None) -> Reserved:
        now = view.now
        partitions = view.platform.table is not None  # a torus: its profile kept between passes
        kept = self._keeper.take(view, jobs) if partitions else None
        if kept is None:
            end_of = self._end_of
            releases = [(end_of(view, job), job) for job in view.running.values()]
            profile, first, starts, wheres, lengths = availability_profile(view, releases, self._placement), 0, [], [], []
        else:
            profile, first = kept.profile, len(kept.waiting)
            starts, wheres, lengths = list(kept.starts), list(kept.wheres), list(kept.lengths)
        durations = np.maximum(np.asarray(durations[first:], dtype=np.float64), MIN_DURATION)
        found, placed, taken = profile.reserve_in_order(np.asarray(sizes[first:], dtype=np.int64), durations)
        starts += found
        wheres += placed
        lengths += durations[:taken].tolist()
        starting = due_positions(starts, now)
        if partitions:
            self._left = (profile, jobs[: first + taken], starts, wheres, lengths, starting)
        return Reserved(starting, [wheres[position] for position in starting], starts[0] if starts else math.inf, partitions)

    def started(self, view) -> None:
        left, self._left = self._left, None
        if left is not None:  # every start is applied now
            self._keeper.keep(view, *left)

    def drop(self) -> None:
        self._keeper.drop()


class _ArrivalCounts:
    """Conservative backfilling's pass on a cluster, compiled (:class:`~torus_sim.policies.count_reservations.CountProfile`).

    The running jobs' releases come from the engine's columns (:meth:`~torus_sim.engine.view.SchedulingView.running_releases`);
    a pass for which it keeps none runs on the profile in Python.
    """

    def __init__(self, counts, placement) -> None:
        self._new = counts  # the compiled profile's class (or a factory of it)
        self._counts = counts()
        self._plain = _ProfilePass("predicted", placement)
        self._fallen = False  # the last pass ran on the profile in Python (no release columns kept)

    def reserve(self, view, jobs, sizes, durations, ranks=None) -> Reserved:
        releases = view.running_releases()
        if releases is None:
            self._fallen = True
            return self._plain.reserve(view, jobs, sizes, durations)
        self._fallen = False
        head_at, starting = self._counts.plan(view.now, view.free_count(), releases, jobs, sizes, durations)
        return _new_reserved((starting, _counted(view, sizes, starting) if starting else starting, head_at, False))

    def started(self, view) -> None:
        if self._fallen:  # the pass ran on the profile in Python
            self._plain.started(view)

    def drop(self) -> None:
        self._counts = self._new()
        self._plain.drop()


class _StandingCounts:
    """R-LIST-Q's pass on a cluster, compiled (:class:`~torus_sim.policies.count_reservations.KeptReservations`).

    On the running jobs' real ends (the attempts' lengths are known) and the down nodes' known repairs; the
    profile is kept to the next pass while the running jobs and repairs are those it holds
    (:func:`~torus_sim.policies.kept_profile.unchanged_since`).
    """

    def __init__(self, kept) -> None:
        self._kept = kept
        self._left = None  # (running job rank -> end, known repairs) after the last pass

    def reserve(self, view, jobs, sizes, durations, ranks=None) -> Reserved:
        now = view.now
        running = {job.rank: job.end_event.time for job in view.running.values()}
        repairs = tuple(view.platform.repairs_ahead())
        left = self._left
        stands = left is not None and unchanged_since(now, running, repairs, *left)
        if ranks is None:
            ranks = np.fromiter((job.rank for job in jobs), dtype=np.int64, count=len(jobs))
        starting = self._kept.plan(now, view.platform.free_count(), lambda: _releases(view), ranks, sizes, durations, stands)
        starting = starting.tolist()
        for position in starting:  # where the next pass's profile releases them
            running[int(ranks[position])] = window_end(now, float(durations[position]))
        self._left = (running, repairs)
        return _new_reserved((starting, _counted(view, sizes, starting) if starting else starting, None, False))

    def started(self, view) -> None:
        return None

    def drop(self) -> None:
        self._left = None


def _counted(view, sizes: np.ndarray, starting: list[int]) -> list:
    """Where the jobs starting now (``starting``, not empty) go on a cluster: their node counts where it keeps counts only, else None.

    A node count is the allocation on such a cluster; None lets the policy's placement pick the nodes.
    """
    if view.platform.counts_only:
        return np.asarray(sizes)[starting].tolist()
    return [None] * len(starting)


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


def reservation_pass(platform, rule: str, placement=None, compiled: bool = True) -> ReservationPass:
    """The pass that reserves for every waiting job on ``platform``'s profile.

    Args:
        platform: the run's platform (read for what it answers: ``counts_fit``, ``table``).
        rule: one of :data:`RULES`: ``predicted`` (conservative backfilling) or ``known`` (R-LIST-Q).
        placement: the torus profile's choice of reserved partitions (MFP when None).
        compiled: False: the profile in Python on every platform (the reference the compiled passes are held to).

    Returns:
        A :class:`ReservationPass`: compiled over numpy columns on a platform where a job fits by its node
        count and numba imports; else on the profile in Python.

    Raises:
        ValueError: an unknown rule.

    References:
        Mu'alem and Feitelson, IEEE TPDS 12(6), 2001; RIGID §4.1, Alg. 1 (m = |Q|).
    """
    if rule not in RULES:
        raise ValueError(f"unknown reservation rule {rule!r}: one of {', '.join(RULES)}")
    counts = compiled_count_profile() if compiled and platform.counts_fit else None
    if counts is None:
        return _ProfilePass(rule, placement)
    if rule == "predicted":
        return _ArrivalCounts(counts, placement)
    from torus_sim.policies.count_reservations import KeptReservations

    return _StandingCounts(KeptReservations())


def compiled_count_profile():
    """:class:`~torus_sim.policies.count_reservations.CountProfile` (the class), or None where numba cannot be imported.

    Looked up at the first call (the import compiles nothing but loads numba); conservative backfilling
    and R-LIST-Q on a cluster reserve with it (:func:`reservation_pass`).
    """
    global _COUNT_PROFILE
    if _COUNT_PROFILE is False:
        try:
            from torus_sim.policies import count_reservations
        except ImportError:  # numba missing: the Python profile gives the same reservations, slower
            _COUNT_PROFILE = None
            return None
        kernels.watch()  # a compile of its kernels (a fresh installation's first use) is announced
        _COUNT_PROFILE = count_reservations.CountProfile
    return _COUNT_PROFILE


_COUNT_PROFILE = False
"""The compiled pass's class once looked up (None: not available); False: not looked up yet."""
