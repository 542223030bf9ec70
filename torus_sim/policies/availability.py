"""Availability profiles: free nodes over time, from which reservations are cut.

Conservative backfilling and R-LIST with m >= 1 reservations give waiting jobs the earliest start
that delays no earlier reservation. On a cluster the profile is a step function of free node counts
(:class:`AvailabilityProfile`); on the torus a job needs a free *partition*, so the profile keeps
which supernodes are taken in each interval (:class:`PartitionProfile`) and a reservation is a
partition that stays free over the job's whole window.

Both take the running jobs' expected ends; an attempt ending now still holds its nodes until its
own end event runs (then a new pass follows).

References:
    RIGID §4.1 (reservations that delay no higher-priority reservation); Mu'alem and Feitelson,
    "Utilization, predictability, workloads, and user runtime estimates in scheduling the IBM SP2
    with backfilling", IEEE TPDS 12(6), 2001 (conservative backfilling); BGL-FAULT §3.3 (partitions).
"""

from __future__ import annotations

import bisect
import math

import numpy as np

from torus_sim.policies import kernels
from torus_sim.policies.placement import MFP, MfpPlacement

__all__ = [
    "MIN_DURATION",
    "AvailabilityProfile",
    "PartitionProfile",
    "StartFloors",
    "StartsLeft",
    "availability_profile",
    "window_end",
]

MIN_DURATION = 1e-9
"""Seconds a waiting job is taken to hold its nodes at least (a zero prediction still reserves)."""


def window_end(start_at: float, duration: float) -> float:
    """The end of a job's window in a profile: ``start_at + duration``, at least the next float after ``start_at``.

    A job of run time 0 (SDSC-SP2 has 10) or one whose duration is below the start's last digit
    (1e-9 s at t = 3e7 s) still holds its nodes for an instant: a second job started in the same pass
    is not given them too (the engine would refuse it: "a job runs on part of it").

    Args:
        start_at: the window's start, seconds.
        duration: the job's (predicted) duration, seconds, >= 0.

    Returns:
        The window's end, seconds (> ``start_at`` whenever ``start_at`` is finite).

    References:
        Mu'alem and Feitelson, IEEE TPDS 12(6), 2001 (the profile); RIGID §4.1 (R-LIST's reservations).
    """
    end_at = start_at + duration
    return end_at if end_at > start_at else math.nextafter(start_at, math.inf)


def _window_indices(dates: list[float], values: list, start_at: float, end_at: float, clone) -> range:
    """Split the steps at ``start_at`` and ``end_at``; the indices of the steps inside [start_at, end_at).

    A new step copies its predecessor's value with ``clone``.
    """
    for date in (start_at, end_at):
        index = bisect.bisect_right(dates, date) - 1
        if dates[index] != date:
            dates.insert(index + 1, date)
            values.insert(index + 1, clone(values[index]))
    first = bisect.bisect_left(dates, start_at)
    last = bisect.bisect_left(dates, end_at)
    return range(first, last)


class AvailabilityProfile:
    """Free nodes over time from now on (counts): a step function the reservations are cut from.

    Args:
        now: the current time, seconds.
        free: nodes free now.
        releases: ``(end_at, nodes)`` of every running job (and down node with a known repair).

    Attributes:
        dates: ascending breakpoints, seconds; ``dates[0] == now``.
        free: nodes free from ``dates[i]`` to ``dates[i + 1]`` (the last one to infinity).
        value_type: the type of the amounts (``int`` nodes; a subclass may count watts as ``float``).
    """

    value_type = int

    def __init__(self, now: float, free: int, releases) -> None:
        self.dates = [now]
        self.free = [free]
        soon = math.nextafter(now, math.inf)
        for end_at, used in sorted((max(end_at, soon), used) for end_at, used in releases):
            if end_at <= self.dates[-1]:
                self.free[-1] += used
            else:
                self.dates.append(end_at)
                self.free.append(self.free[-1] + used)

    @property
    def now(self) -> float:
        """The profile's first breakpoint, seconds."""
        return self.dates[0]

    def fits(self, start_at: float, need: int, duration: float) -> bool:
        """Whether ``need`` nodes stay free over [start_at, start_at + duration)."""
        index = bisect.bisect_right(self.dates, start_at) - 1
        end_at = window_end(start_at, duration)
        dates, free = self.dates, self.free
        while index < len(dates) and dates[index] < end_at:
            if free[index] < need:
                return False
            index += 1
        return True

    def earliest(self, need: int, duration: float) -> tuple[float, None]:
        """The earliest breakpoint from which ``need`` nodes stay free for ``duration`` seconds.

        One scan of the steps: a run of steps with ``need`` free that lasts ``duration`` from its first
        breakpoint answers; a step short of nodes ends every window that reaches it, so the next
        candidate is the step after it (the same answer as trying each breakpoint with :meth:`fits`).

        Returns:
            (start time, None); the start is inf when ``need`` is never free.
        """
        dates, free = self.dates, self.free
        last = len(dates) - 1
        first = -1  # the first step of the current run with need free (-1: none)
        for index in range(len(dates)):
            if free[index] < need:
                first = -1
                continue
            if first < 0:
                first = index
            if index == last or dates[index + 1] >= dates[first] + duration:
                return dates[first], None
        return math.inf, None

    def open_for(self, need: int) -> float:
        """How long ``need`` nodes stay free from now, seconds (0.0: not free now; inf: from now on).

        A job of that size lasting longer cannot start now (:class:`StartsLeft`).
        """
        dates, free = self.dates, self.free
        index = 0
        while index < len(dates) and free[index] >= need:
            index += 1
        if index == len(dates):
            return math.inf
        return dates[index] - dates[0]

    def reserve_in_order(self, sizes: list[int], durations: list[float]) -> tuple[list[float], list[None], int]:
        """Reserve for jobs in priority order, each at its :meth:`earliest`, until no later job could start now (:class:`StartsLeft`).

        Args:
            sizes: the jobs' node counts, in priority order (a list or an int64 array).
            durations: their predicted durations, seconds (> 0), in the same order (a list or a float64 array).

        Returns:
            (start of each job taken, seconds (inf: never); None for each (nodes are picked at the start); jobs taken).

        References:
            Mu'alem and Feitelson, IEEE TPDS 12(6), 2001 (conservative backfilling); RIGID §4.1 (R-LIST).
        """
        return _reserve_each(self, sizes, durations)

    def room_at(self, start_at: float, need: int, duration: float) -> tuple[bool, None]:
        """Whether ``need`` nodes stay free over [start_at, start_at + duration); None: the placement picks them at the start."""
        return self.fits(start_at, need, duration), None

    def room_now(self, need: int, duration: float) -> tuple[bool, None]:
        """Whether ``need`` nodes stay free from now for ``duration`` seconds; None: the placement picks them at the start."""
        return self.fits(self.dates[0], need, duration), None

    def reserve(self, start_at: float, duration: float, need: int, where=None) -> None:
        """Take ``need`` nodes over [start_at, start_at + duration) (nothing when start_at is inf)."""
        if math.isinf(start_at):
            return
        for index in _window_indices(self.dates, self.free, start_at, window_end(start_at, duration), self.value_type):
            self.free[index] -= need


class PartitionProfile:
    """Taken supernodes over time from now on: the torus's availability profile.

    Each step's occupancy is a Python int (bit i = supernode i, the partition table's
    :meth:`~torus_sim.machine.partition_table.PartitionTable.occupied_of` form): a window's occupancy is a few
    ``|`` and the table's memo of free partitions answers most questions (many steps repeat an
    occupancy). Where numba imports, the steps are held as uint64 words beside their dates
    (:class:`~torus_sim.policies.partition_steps.StepArrays`): :meth:`earliest`'s search, :meth:`reserve`,
    :meth:`open_for`, :meth:`fits_now` and (with the MFP placement) a whole pass of
    :meth:`reserve_in_order` run over them compiled, with the same answers; ``dates`` and ``occupied`` are
    then copied from the arrays when read.

    Args:
        now: the current time, seconds.
        table: the torus's partition table.
        blocked: bool ``(N,)``, supernodes taken now (busy, down or spare).
        releases: ``(end_at, supernodes)`` of every running job and down supernode with a known
            repair; ``supernodes`` is an int of bits (a partition's
            :attr:`~torus_sim.machine.partition_table.PartitionTable.mask_ints` entry, ``1 << node``) or an int
            array of supernode ids.
        placement: chooses the partition of a reservation among those free over its window (the
            MFP heuristic on the window's occupancy).

    Attributes:
        dates: ascending breakpoints, seconds; ``dates[0] == now``.
        occupied: ints, the supernodes taken from ``dates[i]`` to ``dates[i + 1]`` (bit i = supernode i).

    References:
        Mu'alem and Feitelson, IEEE TPDS 12(6), 2001 (the profile); BGL-FAULT §3.3 and Appendix 9
        (partitions as sets of supernodes, occupancies as bitmasks).
    """

    def __init__(self, now: float, table, blocked: np.ndarray, releases, placement=None) -> None:
        self.table = table
        self.placement = placement or MFP
        self._now = now
        dates = [now]
        occupied = [table.occupied_of(table.pack(np.asarray(blocked, dtype=bool)))]
        self._found: dict[int, StartFloors] = {}  # size -> the earliest starts answered, by duration
        self._maybe: dict[int, bytearray] = {}  # size -> per step: 0 when no partition of it is free there alone
        soon = math.nextafter(now, math.inf)
        for end_at, members in sorted(((max(end_at, soon), members) for end_at, members in releases), key=lambda r: r[0]):
            if end_at > dates[-1]:
                dates.append(end_at)
                occupied.append(occupied[-1])
            occupied[-1] &= ~(members if isinstance(members, int) else _bits(members))
        self._dates, self._occupied = dates, occupied
        self._steps = _step_arrays(table, dates, occupied)  # the compiled search's copy (None: numba missing)
        # with the step arrays they are the profile and the lists a copy made when read (stale after a reservation)
        self._stale = False
        self._mfp = type(self.placement).choose is MfpPlacement.choose  # the MFP heuristic: chosen in compiled code too

    @property
    def now(self) -> float:
        """The profile's first breakpoint, seconds."""
        return self._now

    @property
    def dates(self) -> list[float]:
        """Ascending breakpoints, seconds; ``dates[0] == now``."""
        if self._stale:
            self._copy_steps()
        return self._dates

    @property
    def occupied(self) -> list[int]:
        """Ints, the supernodes taken from ``dates[i]`` to ``dates[i + 1]`` (bit i = supernode i)."""
        if self._stale:
            self._copy_steps()
        return self._occupied

    def _copy_steps(self) -> None:
        """The lists copied from the step arrays (after reservations made on the arrays alone)."""
        steps = self._steps
        self._dates = steps.dates[: steps.count].tolist()
        self._occupied = steps.occupied_ints(self.table)
        self._stale = False

    def next_date(self) -> float:
        """The profile's second breakpoint, seconds (inf: it has one step)."""
        if self._steps is not None:
            return float(self._steps.dates[1]) if self._steps.count > 1 else math.inf
        return self._dates[1] if len(self._dates) > 1 else math.inf

    def move_to(self, now: float) -> None:
        """Move the profile's first breakpoint to ``now`` (seconds, at or after it): a kept profile's next pass.

        The steps that ended by ``now`` are dropped and the one holding ``now`` starts at ``now``; what is left is
        the profile from ``now`` on, unchanged (the per-size flags and start floors stay true: it only filled).
        """
        self._now = now
        if self._steps is not None:  # the arrays are the profile; the lists are copied from them when read
            self._steps.advance(now)
            self._stale = True
            return
        dates = self._dates
        index = bisect.bisect_right(dates, now) - 1
        if index > 0:
            del dates[:index]
            del self._occupied[:index]
            for flags in self._maybe.values():
                del flags[:index]
        dates[0] = now

    def cancel(self, starts: list[float], durations: list[float], wheres: list[int | None]) -> None:
        """Undo reservations this profile holds: each partition is free again over its window.

        The profile is then the one the reservations left would have made (the steps split at the
        windows' ends stay, which changes no search); the per-size flags of those steps are set to
        "maybe free" and the start floors forgotten (they held only while the profile filled).

        Args:
            starts: the reservations' starts, seconds, at or after :attr:`now` (inf: took nothing).
            durations: their durations as reserved, seconds.
            wheres: their partition ids (None: took nothing).

        Raises:
            ValueError: the three lists differ in length.

        References:
            Mu'alem and Feitelson, IEEE TPDS 12(6), 2001 (the profile); BGL-FAULT Appendix 9 (occupancies as bitmasks).
        """
        self._found.clear()
        ends = [window_end(start_at, duration) for start_at, duration in zip(starts, durations, strict=True)]
        if self._steps is not None:
            ids = np.array([-1 if where is None else where for where in wheres], dtype=np.int64)
            self._steps.cancel(np.asarray(starts, dtype=np.float64), np.asarray(ends, dtype=np.float64), ids)
            self._stale = True
            return
        dates, occupied, masks = self._dates, self._occupied, self.table.mask_ints
        for start_at, end_at, where in zip(starts, ends, wheres, strict=True):
            if math.isinf(start_at) or where is None:
                continue
            first, stop = bisect.bisect_left(dates, start_at), bisect.bisect_left(dates, end_at)
            for index in range(first, stop):
                occupied[index] &= ~masks[where]
            for flags in self._maybe.values():
                flags[first:stop] = b"\x01" * (stop - first)

    def occupied_now(self) -> int:
        """The supernodes taken in the first step (from ``now`` to the next breakpoint), as an int (bit i = supernode i)."""
        if self._steps is not None:
            return self.table.occupied_of(self._steps.words[0])
        return self._occupied[0]

    def _window(self, index: int, duration: float) -> int:
        """The supernodes taken at any time in [dates[index], dates[index] + duration), as an int."""
        dates, occupied = self.dates, self.occupied
        end_at = dates[index] + duration
        combined = occupied[index]
        later = index + 1
        while later < len(dates) and dates[later] < end_at:
            combined |= occupied[later]
            later += 1
        return combined

    def _choose(self, candidates: np.ndarray, window: int, at: float) -> int:
        return self.placement.choose(self.table, None, candidates, self.table.words_of(window).copy(), at)

    def earliest(self, size: int, duration: float) -> tuple[float, int | None]:
        """The earliest breakpoint from which a partition of ``size`` stays free for ``duration`` seconds.

        The search starts at the latest start this profile gave a job of the same size and no longer
        duration: the profile only fills (nothing is ever given back), so no earlier breakpoint can
        hold this job (:class:`StartFloors`, one per size). The answer is the one a search from
        ``dates[0]`` gives.

        Returns:
            (start time, partition id); (inf, None) when no partition is ever free.
        """
        found = self._found.get(size)
        if found is None:
            found = self._found[size] = StartFloors()
        answer = self._search(size, duration, max(self._now, found.floor(duration)))
        found.add(duration, answer[0])
        return answer

    def _search(self, size: int, duration: float, floor: float) -> tuple[float, int | None]:
        """The first step from ``floor`` on where a partition of ``size`` is free over the whole window.

        A step qualifies only if a partition of ``size`` is free in that step alone. Each size keeps a
        flag per step, 0 once a search found none free there: a step's occupancy only grows during a
        pass (a new step copies its predecessor's occupancy and flag), so that stays true and
        ``bytearray.find`` skips those steps in C; the others are asked as the plain scan asks them
        (:func:`benchmarks.reservations.plain_search`, the same answers: tests/test_flat_policies.py).
        Where numba imports the same scan runs compiled over the step arrays (their own flags); only the
        answer's partition is chosen here.
        """
        if math.isinf(floor):
            return math.inf, None
        steps = self._steps
        if steps is not None:  # the same steps tried in the same order, compiled (the MFP heuristic's choice too)
            if self._mfp:
                index, where = steps.earliest_mfp(size, floor, duration)
                return (math.inf, None) if index < 0 else (float(steps.dates[index]), where)
            index = steps.search(size, steps.first_at(floor), duration)
            if index < 0:
                return math.inf, None
            window = steps.window(index, duration)
            start_at = float(steps.dates[index])
            return start_at, int(self.placement.choose(self.table, None, steps.free_ids(size, window), window, start_at))
        free_under = self.table.free_ids_under
        dates, occupied = self.dates, self.occupied
        maybe = self._maybe.get(size)
        if maybe is None:
            maybe = self._maybe[size] = bytearray(b"\x01") * len(dates)
        index = maybe.find(1, bisect.bisect_left(dates, floor))
        while index >= 0:
            if not len(free_under(occupied[index], size)):
                maybe[index] = 0
            else:
                window = self._window(index, duration)
                candidates = free_under(window, size)
                if len(candidates):
                    start_at = dates[index]
                    return start_at, self._choose(candidates, window, start_at)
            index = maybe.find(1, index + 1)
        return math.inf, None

    def open_for(self, size: int) -> float:
        """How long some partition of ``size`` stays free from now, seconds (0.0: none free now; inf: from now on).

        A job of that size lasting longer cannot start now (:class:`StartsLeft`).
        """
        if self._steps is not None:
            return self._steps.open_for(size)
        free_under = self.table.free_ids_under
        dates, occupied = self.dates, self.occupied
        taken = 0
        for index in range(len(dates)):
            taken |= occupied[index]
            if not len(free_under(taken, size)):
                return dates[index] - dates[0]
        return math.inf

    def free_at(self, start_at: float, size: int, duration: float) -> int | None:
        """A partition of ``size`` free over [start_at, start_at + duration) (the placement's choice), or None.

        ``start_at`` need not be a breakpoint: the step holding it counts from ``start_at`` on.
        """
        dates, occupied = self.dates, self.occupied
        index = max(bisect.bisect_right(dates, start_at) - 1, 0)
        end_at = window_end(start_at, duration)
        window = occupied[index]
        later = index + 1
        while later < len(dates) and dates[later] < end_at:
            window |= occupied[later]
            later += 1
        candidates = self.table.free_ids_under(window, size)
        return self._choose(candidates, window, start_at) if len(candidates) else None

    def room_at(self, start_at: float, size: int, duration: float) -> tuple[bool, int | None]:
        """Whether a partition of ``size`` stays free over [start_at, start_at + duration), and which (:meth:`free_at`)."""
        where = self.free_at(start_at, size, duration)
        return where is not None, where

    def fits_now(self, size: int, duration: float) -> int | None:
        """A partition of ``size`` free from now for ``duration`` seconds (the placement's choice), or None."""
        steps = self._steps
        if steps is not None:
            window = steps.window(0, duration)
            if self._mfp:
                where = steps.mfp_choice(size, window)
                return None if where < 0 else where
            candidates = steps.free_ids(size, window)
            return int(self.placement.choose(self.table, None, candidates, window, self._now)) if len(candidates) else None
        window = self._window(0, duration)
        candidates = self.table.free_ids_under(window, size)
        return self._choose(candidates, window, self.dates[0]) if len(candidates) else None

    def room_now(self, size: int, duration: float) -> tuple[bool, int | None]:
        """Whether a partition of ``size`` stays free from now for ``duration`` seconds, and which (:meth:`fits_now`)."""
        where = self.fits_now(size, duration)
        return where is not None, where

    def reserve_in_order(self, sizes: list[int], durations: list[float]) -> tuple[list[float], list[int | None], int]:
        """Reserve for jobs in priority order, each at its :meth:`earliest`, until no later job could start now.

        A pass of conservative backfilling or R-LIST-Q: each job's earliest start and partition, reserved
        before the next is asked; the pass stops after the first job from which :class:`StartsLeft` says no
        later job could start now (their reservations would change nothing this pass). With the MFP
        placement and numba the whole loop runs compiled
        (:meth:`~torus_sim.policies.partition_steps.StepArrays.plan`), with the same answers.

        Args:
            sizes: the jobs' partition sizes, supernodes, in priority order (a list or an int64 array).
            durations: their predicted durations, seconds (> 0), in the same order (a list or a float64 array).

        Returns:
            (start of each job taken, seconds (inf: never); its partition (None: never); jobs taken).

        References:
            Mu'alem and Feitelson, IEEE TPDS 12(6), 2001 (conservative backfilling); RIGID §4.1 (R-LIST).
        """
        steps = self._steps
        if steps is not None and self._mfp:
            starts, wheres, taken = steps.plan(self._now, sizes, durations)
            self._stale = True
            return starts, [None if where < 0 else where for where in wheres], taken
        return _reserve_each(self, sizes, durations)

    def reserve(self, start_at: float, duration: float, size: int, where: int | None) -> None:
        """Take partition ``where`` over [start_at, start_at + duration) (nothing when start_at is inf)."""
        if math.isinf(start_at) or where is None:
            return
        if self._steps is not None:  # the arrays are the profile; the lists are copied from them when read
            self._steps.reserve(start_at, window_end(start_at, duration), where)
            self._stale = True
            return
        bits = self.table.mask_ints[where]
        dates, occupied, maybe = self._dates, self._occupied, self._maybe.values()
        end_at = window_end(start_at, duration)
        for date in (start_at, end_at):  # split the steps at the window's ends (a new step copies its predecessor)
            index = bisect.bisect_right(dates, date) - 1
            if dates[index] != date:
                dates.insert(index + 1, date)
                occupied.insert(index + 1, occupied[index])
                for flags in maybe:
                    flags.insert(index + 1, flags[index])
        first = bisect.bisect_left(dates, start_at)
        last = bisect.bisect_left(dates, end_at)
        for index in range(first, last):
            occupied[index] |= bits


class StartFloors:
    """The latest earliest start a profile answered for a job of one size and no longer duration.

    :meth:`PartitionProfile.earliest` keeps one per size: the profile only fills during a pass (and
    while it is kept between passes), so a job of the size lasting ``d`` cannot start before the
    latest start answered for one lasting ``d`` or less. Kept as a staircase: durations ascending and
    starts ascending, an answer (d, s) dropped once another has d' <= d and s' >= s; so a question
    is one bisection, however many answers the pass gave (a kept profile of a queue of 2,000 jobs
    answers millions over a log: scanning them all cost a quarter of conservative backfilling's
    time on Mira's torus with LANL's failures, profiled).

    References:
        Mu'alem and Feitelson, IEEE TPDS 12(6), 2001 (the profile only fills as reservations are made).
    """

    __slots__ = ("durations", "starts")

    def __init__(self) -> None:
        self.durations: list[float] = []  # strictly ascending, seconds
        self.starts: list[float] = []  # strictly ascending, seconds (inf: never)

    def floor(self, duration: float) -> float:
        """The latest start answered for a duration of at most ``duration`` seconds (-inf: none)."""
        at = bisect.bisect_right(self.durations, duration)
        return self.starts[at - 1] if at else -math.inf

    def add(self, duration: float, start_at: float) -> None:
        """Remember that a job lasting ``duration`` seconds was answered ``start_at`` (seconds, inf: never)."""
        durations, starts = self.durations, self.starts
        at = bisect.bisect_right(durations, duration)
        if at and starts[at - 1] >= start_at:
            return  # a shorter or equal duration already answered as late
        low = bisect.bisect_left(durations, duration, 0, at)  # an equal duration answered earlier: replaced
        high = bisect.bisect_right(starts, start_at, at)  # longer durations answered no later: dominated
        durations[low:high] = [duration]
        starts[low:high] = [start_at]


class StartsLeft:
    """Whether a job later in the queue could still start now, as a pass reserves in priority order.

    A pass of conservative backfilling (or R-LIST with reservations) acts only on the jobs whose
    reservation is now and on the first job's reservation; the reservations of the others are made
    again at the next pass. The profile only fills as the pass goes on, so a job of size s and
    predicted duration d that cannot start now rules out every later job of size s lasting d or
    longer, and a job longer than any partition (or count) of its size stays free from now is ruled
    out (the profile's :meth:`open_for`, asked again after each start and after each reservation that
    begins inside that span). Once no job left is ruled in, the rest of the pass would start nothing:
    the pass stops there, with the same actions.

    Args:
        profile: the pass's :class:`AvailabilityProfile` or :class:`PartitionProfile`.
        sizes: the waiting jobs' sizes (nodes or supernodes), in the order the pass takes them.
        durations: their predicted durations, seconds, in the same order.

    References:
        Mu'alem and Feitelson, IEEE TPDS 12(6), 2001 (conservative backfilling); RIGID §4.1.
    """

    def __init__(self, profile, sizes, durations) -> None:
        self.profile = profile
        self._left: dict[int, list[float]] = {}  # size -> durations of the jobs not taken yet, ascending
        for size, duration in zip(sizes, durations, strict=True):
            self._left.setdefault(size, []).append(duration)
        for left in self._left.values():
            left.sort()
        self._below: dict[int, float] = {}  # size -> a job of it can start now only if shorter than this
        self._alive: dict[int, int] = {}  # size -> jobs left that may still start now
        self.alive = 0
        for size in self._left:
            self._rule(size, self._open(size))

    def _open(self, size: int) -> float:
        """A job of ``size`` can start now only if shorter than this (a margin over :meth:`open_for` for rounding)."""
        longest = self.profile.open_for(size)
        return longest * (1.0 + 1e-9) + 1e-6 if longest > 0.0 else 0.0

    def _rule(self, size: int, below: float) -> None:
        self._below[size] = below
        alive = bisect.bisect_left(self._left[size], below) if below > 0.0 else 0
        self.alive += alive - self._alive.get(size, 0)
        self._alive[size] = alive

    def passed(self, size: int, duration: float, started: bool, start_at: float | None = None) -> bool:
        """Count one job as taken; whether a later job could still start now.

        Args:
            size: its size (nodes or supernodes).
            duration: its predicted duration, seconds.
            started: it starts now.
            start_at: its reservation, seconds (None: not said); a reservation that begins before a
                size's free span from now ends may shorten that span, which is then asked again.
        """
        left = self._left[size]
        del left[bisect.bisect_left(left, duration)]
        if started:  # the first steps filled: each size may stay free for less long from now
            start_at = self.profile.now
        else:
            self._rule(size, min(self._below[size], duration))
        if start_at is not None:
            horizon = start_at - self.profile.now
            for other, below in list(self._below.items()):
                if below > horizon and self._alive[other]:
                    self._rule(other, min(below, self._open(other)))
        return self.alive > 0


def _reserve_each(profile, sizes, durations) -> tuple[list[float], list, int]:
    """Each job's :meth:`earliest`, reserved before the next is asked, until :class:`StartsLeft` says no later job could start now.

    ``sizes`` and ``durations`` are lists or numpy arrays (read as Python numbers).
    """
    if isinstance(sizes, np.ndarray):
        sizes = sizes.tolist()
    if isinstance(durations, np.ndarray):
        durations = durations.tolist()
    starts_left = StartsLeft(profile, sizes, durations)
    starts, wheres = [], []
    now = profile.now
    for size, duration in zip(sizes, durations, strict=True):
        start_at, where = profile.earliest(size, duration)
        profile.reserve(start_at, duration, size, where)
        starts.append(start_at)
        wheres.append(where)
        if not starts_left.passed(size, duration, start_at <= now, start_at):
            break
    return starts, wheres, len(starts)


def _step_arrays(table, dates: list[float], occupied: list[int]):
    """The profile's steps for the compiled search (:class:`~torus_sim.policies.partition_steps.StepArrays`), or None where numba cannot be imported."""
    try:
        from torus_sim.policies.partition_steps import StepArrays
    except ImportError:  # numba missing: the search in Python gives the same answers, slower
        return None
    kernels.watch()  # a compile of the kernels (a fresh installation's first use) is announced; a no-op after the first
    width = 8 * table.words  # each step's int as its K little-endian words, all read at once
    words = np.frombuffer(b"".join([taken.to_bytes(width, "little") for taken in occupied]), dtype=np.uint64)
    return StepArrays(table, dates, words.reshape(len(occupied), table.words))


def _bits(members) -> int:
    """Supernode ids as an int of bits (bit i = supernode i)."""
    bits = 0
    for member in np.asarray(members).ravel().tolist():
        bits |= 1 << member
    return bits


def availability_profile(view, releases, placement=None):
    """The platform's availability profile from now on.

    Args:
        view: the engine's view.
        releases: ``(end_at, job)`` of the running jobs whose ends free nodes.
        placement: the torus profile's choice of reserved partitions (MFP when None).

    Returns:
        An :class:`AvailabilityProfile` (cluster) or a :class:`PartitionProfile` (torus); down nodes
        with a known repair time come back at it.
    """
    platform = view.platform
    now = view.now
    repairs = platform.repairs_ahead()
    if platform.counts_fit:
        return AvailabilityProfile(
            now,
            platform.free_count(),
            [(end_at, job.allocated_size) for end_at, job in releases] + [(at, 1) for at, _ in repairs],
        )
    masks = platform.table.mask_ints
    return PartitionProfile(
        now,
        platform.table,
        platform.blocked(),
        [(end_at, masks[job.allocation]) for end_at, job in releases] + [(at, 1 << int(node)) for at, node in repairs],
        placement,
    )
