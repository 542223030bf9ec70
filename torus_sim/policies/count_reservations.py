"""Conservative backfilling's reservations on a cluster that keeps node counts, compiled (numba).

Conservative backfilling gives every waiting job, in priority order, the earliest start on the
availability profile that delays no earlier reservation, and starts the jobs whose reservation is
now; the reservations are computed afresh at every pass (RIGID §4.1: "each job completion [is] a
trigger, which deletes all previous reservations and makes a fresh round"). On RICC-2010-2 the queue
holds thousands of jobs for days and a pass runs at every arrival and end, so a pass is thousands of
profile searches; in Python (:class:`~torus_sim.policies.availability.AvailabilityProfile`) a 20,000-job
prefix took 107 s. Here the same searches run in compiled code, on numpy arrays:

* the profile is a step function of free nodes: breakpoints ``dates`` (ascending, seconds) and the
  free count from each to the next; a reservation splits it at its end and takes its nodes;
* a search walks the breakpoints once, jumping past a blocking breakpoint (every start between the
  candidate and it has it in its window);
* consecutive waiting jobs of the same size and predicted duration (a job array: RICC's 447,794 jobs
  are 30,243 such runs) are placed together: ``m`` copies start where the first does when the window's
  smallest free count holds ``m`` of them, exactly what placing them one by one gives, and the next
  copies are looked for after the last breakpoint of that window left too small;
* a pass after which only jobs arrived (nothing ended, started or was re-keyed since the last
  pass) keeps every earlier reservation (:class:`CountProfile`): only the arrivals are placed, on the
  last pass's profile.

The answer is the plain profile's, start for start, float for float (Hypothesis tests against
:class:`~torus_sim.policies.availability.AvailabilityProfile`; schedules of RICC and CTC prefixes).

References:
    Mu'alem and Feitelson, "Utilization, predictability, workloads, and user runtime estimates in
    scheduling the IBM SP2 with backfilling", IEEE TPDS 12(6), 2001 (conservative backfilling, the
    profile); RIGID §4.1 (R-LIST with m = |Q|, reservations recomputed at each trigger).
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["MIN_DURATION", "CountProfile", "reserve_in_order"]

MIN_DURATION = 1e-9
"""Seconds a waiting job is taken to hold its nodes at least (a zero prediction still reserves)."""

_MANY = 1 << 62
"""More nodes than any profile holds (the fewest free over no breakpoint)."""


@numba.njit(cache=True)
def _base_profile(now, free_now, release_ends, release_sizes, dates, free):
    """Fill ``dates`` / ``free`` with the profile of the running jobs' releases; returns its length.

    A release at or before now counts just after now (the next float), as the plain profile does.
    """
    dates[0] = now
    free[0] = free_now
    count = 1
    soon = np.nextafter(now, np.inf)
    for index in range(release_ends.shape[0]):
        end_at = release_ends[index]
        if end_at < soon:
            end_at = soon
        if end_at <= dates[count - 1]:
            free[count - 1] += release_sizes[index]
        else:
            dates[count] = end_at
            free[count] = free[count - 1] + release_sizes[index]
            count += 1
    return count


@numba.njit(cache=True)
def _earliest(dates, free, count, first, need, duration, known_to, known_smallest):
    """The earliest breakpoint from ``first`` on where ``need`` nodes stay free for ``duration`` seconds.

    A candidate whose window meets a breakpoint with fewer nodes is left for the breakpoint after
    that one: every start in between has it in its window too. With ``known_to > first`` the caller
    knows that ``first`` is a candidate: breakpoints ``first .. known_to - 1`` all lie in its window
    with at least ``need`` free, ``known_smallest`` the fewest; the scan goes on from ``known_to``.

    Returns:
        ``(index, later, smallest)``: the breakpoint (-1: never), the first breakpoint at or after
        its window's end (``count``: none) and the fewest free nodes over the window.
    """
    index = first
    while index < count:
        if index < known_to:
            smallest = known_smallest
            later = known_to
        else:
            smallest = free[index]
            later = index + 1
        if smallest >= need:
            end_at = dates[index] + duration
            while later < count and dates[later] < end_at:
                value = free[later]
                if value < need:
                    break
                if value < smallest:
                    smallest = value
                later += 1
            else:
                return index, later, smallest
            index = later + 1
        else:
            index += 1
    return -1, count, 0


@numba.njit(cache=True)
def _place_in_order(dates, free, count, sizes, durations, starts):
    """Reserve for each job in turn on the profile ``dates[:count]`` / ``free[:count]``; returns its new length.

    ``starts`` gets each job's start (inf: never). The arrays need room for one breakpoint per job.
    """
    jobs = sizes.shape[0]
    job = 0
    while job < jobs:
        need = sizes[job]
        duration = durations[job]
        if duration < MIN_DURATION:
            duration = MIN_DURATION
        last = job + 1  # the run of identical jobs: [job, last)
        while last < jobs and sizes[last] == need and max(durations[last], MIN_DURATION) == duration:
            last += 1
        index = known_to = known_smallest = 0
        while job < last:
            found, later, smallest = _earliest(dates, free, count, index, need, duration, known_to, known_smallest)
            if found < 0:
                while job < last:
                    starts[job] = np.inf
                    job += 1
                break
            start_at = dates[found]
            end_at = start_at + duration
            if end_at == start_at or need <= 0:  # an empty window (or no nodes) takes nothing: all start here
                while job < last:
                    starts[job] = start_at
                    job += 1
                break
            copies = min(smallest // need, last - job)
            for _ in range(copies):
                starts[job] = start_at
                job += 1
            if later == count or dates[later] != end_at:  # split the step at the window's end
                for step in range(count, later, -1):
                    dates[step] = dates[step - 1]
                    free[step] = free[step - 1]
                dates[later] = end_at
                free[later] = free[later - 1]
                count += 1
            taken = copies * need
            blocking = found - 1  # the window's last breakpoint left with fewer than need nodes
            known_smallest = _MANY  # the fewest free after it, in the window
            for step in range(found, later):
                value = free[step] - taken
                free[step] = value
                if value < need:
                    blocking = step
                    known_smallest = _MANY
                elif value < known_smallest:
                    known_smallest = value
            index = blocking + 1  # every start up to it has it in its window; the next candidate, if in it
            known_to = later  # its window holds the rest of this one (it ends later)
    return count


@numba.njit(cache=True)
def _reserve_in_order(now, free_now, release_ends, release_sizes, sizes, durations, starts, dates, free):
    """The profile of the releases, then every job's reservation on it; returns the profile's length."""
    count = _base_profile(now, free_now, release_ends, release_sizes, dates, free)
    return _place_in_order(dates, free, count, sizes, durations, starts)


def _checked(release_ends, release_sizes, sizes, durations) -> tuple:
    """The arrays as contiguous float64 / int64 (ValueError when lengths differ or ends are not ascending)."""
    release_ends = np.ascontiguousarray(release_ends, dtype=np.float64)
    release_sizes = np.ascontiguousarray(release_sizes, dtype=np.int64)
    sizes = np.ascontiguousarray(sizes, dtype=np.int64)
    durations = np.ascontiguousarray(durations, dtype=np.float64)
    if release_ends.shape != release_sizes.shape or sizes.shape != durations.shape or release_ends.ndim != 1 or sizes.ndim != 1:
        raise ValueError(
            f"release ends {release_ends.shape} and sizes {release_sizes.shape}, job sizes {sizes.shape} "
            f"and durations {durations.shape} must be 1-d and match in pairs"
        )
    if len(release_ends) > 1 and not np.all(release_ends[1:] >= release_ends[:-1]):
        raise ValueError("release ends must be ascending")
    return release_ends, release_sizes, sizes, durations


def reserve_in_order(
    now: float,
    free_now: int,
    release_ends: np.ndarray,
    release_sizes: np.ndarray,
    sizes: np.ndarray,
    durations: np.ndarray,
) -> np.ndarray:
    """Every waiting job's reservation on a count cluster's profile, in priority order (conservative backfilling).

    Job ``i`` gets the earliest start, among now and the profile's breakpoints, from which
    ``sizes[i]`` nodes stay free for ``max(durations[i], MIN_DURATION)`` seconds once jobs ``0 .. i-1``
    hold their reservations; the same answer as
    :meth:`~torus_sim.policies.availability.AvailabilityProfile.earliest` and ``reserve`` in turn.

    Args:
        now: the current time, seconds.
        free_now: nodes free now.
        release_ends: float64 ``(r,)``, ascending: when each running job is expected to free its
            nodes, seconds (an end at or before now counts just after now).
        release_sizes: int64 ``(r,)``: the nodes each frees.
        sizes: int64 ``(q,)``: the waiting jobs' sizes, in priority order.
        durations: float64 ``(q,)``: their predicted run times, seconds.

    Returns:
        float64 ``(q,)``: each job's reservation start, seconds; ``now`` for the jobs that start now,
        inf for a job that never fits.

    Raises:
        ValueError: arrays that are not 1-d or of different lengths in pairs, or ends not ascending.

    References:
        Mu'alem and Feitelson, IEEE TPDS 12(6), 2001 (conservative backfilling); RIGID §4.1 (m = |Q|).
    """
    release_ends, release_sizes, sizes, durations = _checked(release_ends, release_sizes, sizes, durations)
    starts = np.empty(len(sizes), dtype=np.float64)
    room = len(release_ends) + len(sizes) + 1
    if len(sizes):
        _reserve_in_order(
            float(now), int(free_now), release_ends, release_sizes, sizes, durations, starts,
            np.empty(room, dtype=np.float64), np.empty(room, dtype=np.int64),
        )  # fmt: skip
    return starts


class CountProfile:
    """Conservative backfilling's profile on a count cluster, kept from one pass to the next.

    :meth:`plan` gives the pass's answer: the first waiting job's reservation and the jobs that start
    now. A pass recomputes every reservation (:func:`reserve_in_order`) unless nothing but arrivals
    happened since the last one: the releases' change count (:attr:`~torus_sim.running_ends.ReleaseColumns.changes`)
    is the last pass's plus its starts, no release is due (an end at or before now would count just
    after now, which moves with now), the jobs left waiting are still the queue's first ones and the
    free count now is the kept profile's. Then every reservation stays where it was (the starts of the
    last pass only took nodes the profile had given them; later starters fit after every earlier
    reservation; no breakpoint lies between the two passes) and only the arrivals, at the queue's
    end, are placed on the kept profile.

    Attributes:
        recomputed: passes that placed every waiting job.
        kept: passes that placed only the arrivals.

    References:
        Mu'alem and Feitelson, IEEE TPDS 12(6), 2001 (conservative backfilling keeps a profile);
        RIGID §4.1 (reservations recomputed at each trigger: the kept ones are those it would give).
    """

    __slots__ = (
        "_changes",
        "_count",
        "_dates",
        "_first",
        "_free",
        "_head_at",
        "_last",
        "_valid",
        "_waiting",
        "kept",
        "recomputed",
    )

    def __init__(self) -> None:
        self._dates = np.empty(256, dtype=np.float64)
        self._free = np.empty(256, dtype=np.int64)
        self._count = 0
        self._valid = False  # the kept profile stands for the next pass if nothing but arrivals happen
        self._changes = -1  # the releases' change count it stands for (after the last pass's starts)
        self._waiting = 0  # jobs left waiting by the last pass: the queue's first ones
        self._first = self._last = None  # the first and last of them
        self._head_at = np.inf  # the first one's reservation, seconds
        self.recomputed = self.kept = 0

    def _room(self, rows: int) -> None:
        """Grow the profile's arrays to hold ``rows`` breakpoints (keeping the first :attr:`_count`)."""
        if rows > len(self._dates):
            size = max(rows, 2 * len(self._dates))
            dates, free = np.empty(size, dtype=np.float64), np.empty(size, dtype=np.int64)
            dates[: self._count] = self._dates[: self._count]
            free[: self._count] = self._free[: self._count]
            self._dates, self._free = dates, free

    def _keeps(self, now: float, free_now: int, releases, jobs: list) -> bool:
        """Whether the last pass's profile and reservations stand now (see the class docstring)."""
        if not self._valid or releases.changes != self._changes:
            return False
        ends = releases.ends
        if len(ends) and ends[0] <= now:
            return False
        waiting = self._waiting
        if waiting and (len(jobs) < waiting or jobs[0] is not self._first or jobs[waiting - 1] is not self._last):
            return False
        # no breakpoint between the last pass and now; the free count on the first step is now's
        return (self._count < 2 or self._dates[1] > now) and self._free[0] == free_now

    def plan(
        self, now: float, free_now: int, releases, jobs: list, sizes: np.ndarray, durations: np.ndarray
    ) -> tuple[float, list]:
        """One conservative pass on a count cluster: the head's reservation and the jobs that start now.

        Args:
            now: the pass's time, seconds.
            free_now: nodes free now.
            releases: the running jobs' :class:`~torus_sim.running_ends.ReleaseColumns` (predicted ends
                ascending, node counts, change count).
            jobs: the waiting jobs in priority order (not changed here).
            sizes: int64 ``(q,)``: their sizes.
            durations: float64 ``(q,)``: their predicted run times, seconds.

        Returns:
            ``(head_at, starting)``: the first waiting job's reservation (seconds; inf: never) and the
            positions in ``jobs`` of those whose reservation is now, ascending.

        References:
            Mu'alem and Feitelson, IEEE TPDS 12(6), 2001; RIGID §4.1, Alg. 1 (m = |Q|).
        """
        count = len(jobs)
        if self._keeps(now, free_now, releases, jobs):
            self.kept += 1
            fresh = self._waiting  # the arrivals: jobs[fresh:]
            self._dates[0] = now
            self._room(self._count + count - fresh + 1)
            starts = np.empty(count - fresh, dtype=np.float64)
            if count > fresh:
                self._count = _place_in_order(self._dates, self._free, self._count, sizes[fresh:], durations[fresh:], starts)
        else:
            self.recomputed += 1
            fresh = 0
            self._count = 0
            self._room(len(releases) + count + 1)
            starts = np.empty(count, dtype=np.float64)
            self._count = _reserve_in_order(
                float(now), int(free_now), releases.ends, releases.sizes, sizes, durations, starts, self._dates, self._free
            )
        starting = np.flatnonzero(starts <= now)
        if fresh:
            starting += fresh
        head_at = float(starts[0]) if fresh == 0 else self._head_at
        # what the next pass keeps if only arrivals come: the jobs left waiting, in order, and the first one's reservation
        left = count - len(starting)
        self._valid = not (len(releases) and releases.ends[0] <= now)
        self._changes = releases.changes + len(starting)
        self._waiting = left
        if not left:
            self._first = self._last = None
            self._head_at = np.inf
            return head_at, starting.tolist()
        first, last = 0, count - 1
        if len(starting):
            waiting = np.ones(count, dtype=bool)
            waiting[starting] = False
            first, last = np.flatnonzero(waiting)[[0, -1]].tolist()
        if first >= fresh:  # a job whose reservation this pass computed
            self._head_at = float(starts[first - fresh])
        self._first, self._last = jobs[first], jobs[last]
        return head_at, starting.tolist()
