"""Conservative backfilling's reservations on a cluster that keeps node counts, compiled (numba).

Conservative backfilling gives every waiting job, in priority order, the earliest start on the
availability profile that delays no earlier reservation, and starts the jobs whose reservation is
now; the reservations are computed afresh at every pass (RIGID §4.1: "each job completion [is] a
trigger, which deletes all previous reservations and makes a fresh round"). On RICC-2010-2 the queue
holds thousands of jobs for days and a pass runs at every arrival and end, so a pass is thousands of
profile searches; in Python (:class:`~torus_sim.policies.availability.AvailabilityProfile`) a 20,000-job
prefix took 107 s. Here the same searches run in compiled code, on numpy arrays:

* the profile is a step function of free nodes: breakpoints (ascending dates, seconds) and the free
  count from each to the next, in blocks of at most :data:`BLOCK` breakpoints that know their fewest
  and (at least) their most free nodes and their last date; a reservation splits a step at its end
  (a full block splits in two) and takes its nodes, from whole blocks by an offset;
* a search finds the first breakpoint with enough free nodes (past blocks whose most is fewer), the
  end of its window (bisecting the blocks' last dates, then the block's dates) and, from that end
  backwards, the last breakpoint with too few (past blocks whose fewest is enough): every start up to
  that one has it in its window, so the search goes on after it;
* consecutive waiting jobs of the same size and predicted duration (a job array: RICC's 447,794 jobs
  are 30,243 such runs) are placed together: ``m`` copies start where the first does when the window's
  smallest free count holds ``m`` of them, exactly what placing them one by one gives, and the next
  copies are looked for after the last breakpoint of that window left too small;
* a pass after which only jobs arrived (nothing ended, started or was re-keyed since the last
  pass) keeps every earlier reservation (:class:`CountProfile`): only the arrivals are placed, on the
  last pass's profile; the whole pass (whether the kept profile stands, the placement, the jobs that
  start now, the first and last left waiting) is one compiled call, as SDSC-SP2's queue in CQSim's
  mode holds 27 jobs on average and the numpy calls around the search took longer than the search;
* R-LIST-Q, which acts only on the jobs reserved now, stops reserving once no job left could start now
  (:func:`starts_now`) and keeps the reservations it made while the profile stands, undoing those after
  the first job that entered among them (:class:`KeptReservations`).

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

from torus_sim.policies.availability import MIN_DURATION

__all__ = ["BLOCK", "MIN_DURATION", "CountProfile", "KeptReservations", "reserve_in_order", "starts_now"]


BLOCK = 32
"""Breakpoints a block of the profile holds at most (a full block splits in two halves)."""

_MANY = 1 << 62
"""More nodes than any profile holds (the fewest free over no breakpoint)."""


@numba.njit(cache=True)
def _limits(block, dates, free, slot, length, offset, fewest, most, last_date, p):
    """Set block ``p``'s fewest and most free nodes and its last date from its breakpoints."""
    base = slot[p] * block
    low = high = free[base]
    for k in range(1, length[p]):
        value = free[base + k]
        if value < low:
            low = value
        if value > high:
            high = value
    fewest[p] = low + offset[p]
    most[p] = high + offset[p]
    last_date[p] = dates[base + length[p] - 1]


@numba.njit(cache=True)
def _base_profile(block, now, free_now, release_ends, release_sizes, dates, free, slot, length, offset, fewest, most, last_date):
    """Fill the blocks with the profile of the running jobs' releases, half full; returns the blocks used.

    A release at or before now counts just after now (the next float), as the plain profile does.
    """
    half = block // 2
    p = 0
    k = 1
    dates[0] = now
    free[0] = free_now
    last_at = now
    free_then = free_now
    soon = np.nextafter(now, np.inf)
    for index in range(release_ends.shape[0]):
        end_at = release_ends[index]
        if end_at < soon:
            end_at = soon
        free_then += release_sizes[index]
        if end_at <= last_at:
            free[p * block + k - 1] = free_then
        else:
            if k == half:
                length[p] = k
                p += 1
                k = 0
            dates[p * block + k] = end_at
            free[p * block + k] = free_then
            k += 1
            last_at = end_at
    length[p] = k
    for q in range(p + 1):
        slot[q] = q
        offset[q] = 0
        _limits(block, dates, free, slot, length, offset, fewest, most, last_date, q)
    return p + 1


@numba.njit(cache=True)
def _window_end(start_at, duration):
    """:func:`~torus_sim.policies.availability.window_end` compiled: ``start_at + duration`` (seconds), at least the next float."""
    end_at = start_at + duration
    if end_at == start_at:  # a duration under the start's last digit still holds the nodes an instant
        end_at = np.nextafter(start_at, np.inf)
    return end_at


@numba.njit(cache=True)
def _first_reaching(last_date, low, used, at):
    """The first block from ``low`` (below ``used``) whose last breakpoint is at or after ``at``; ``used`` when none."""
    high = used
    while low < high:
        middle = (low + high) >> 1
        if last_date[middle] < at:
            low = middle + 1
        else:
            high = middle
    return low


@numba.njit(cache=True)
def _fewest_until(block, dates, free, slot, length, offset, fewest, last_date, used, end_at):
    """The fewest free nodes over the steps that begin before ``end_at``, from the profile's first breakpoint."""
    low = _MANY
    for p in range(used):
        if last_date[p] < end_at:
            if fewest[p] < low:
                low = fewest[p]
            continue
        base = slot[p] * block
        add = offset[p]
        for k in range(length[p]):
            if dates[base + k] >= end_at:
                break
            value = free[base + k] + add
            if value < low:
                low = value
        break
    return low


@numba.njit(cache=True)
def _place_in_order(
    block, dates, free, slot, length, offset, fewest, most, last_date, used, sizes, durations, starts, reach, floor, alive, watched
):  # fmt: skip
    """Reserve for each job in turn on the block profile of ``used`` blocks; returns the blocks used after.

    ``starts`` gets each job's start (inf: never). The arrays need room for one breakpoint per job
    (:class:`_Blocks`).

    With ``watched`` >= 0 the pass only has to find the jobs that start now (the profile's first date):
    ``alive[:watched]`` holds, ascending, the positions of the jobs that would start now if they came
    next (``floor[j]``, the fewest free over ``[now, reach[j])``, is at least their size). A reservation
    only lowers the profile, so a job that would not start now never will in this pass; each reservation
    updates the floors it can lower (over its whole window: the floor drops to the window's fewest free
    left, :func:`_fewest_until` when the window passes ``reach[j]``) and the jobs left after the last
    watched one are not placed: their start is NaN. ``watched`` = -1 places every job.
    """
    jobs = sizes.shape[0]
    job = 0
    while job < jobs:
        if watched >= 0 and (watched == 0 or alive[watched - 1] < job):  # no job still to place can start now
            while job < jobs:
                starts[job] = np.nan
                job += 1
            break
        need = sizes[job]
        duration = durations[job]
        if duration < MIN_DURATION:
            duration = MIN_DURATION
        last = job + 1  # the run of identical jobs: [job, last)
        while last < jobs and sizes[last] == need and max(durations[last], MIN_DURATION) == duration:
            last += 1
        sp = si = 0  # where the search for the next candidate goes on: block sp, breakpoint si in it
        while job < last:
            if watched >= 0 and (watched == 0 or alive[watched - 1] < job):
                break  # (the rest of the run is not reserved either)
            # the candidate: the next breakpoint with need nodes free (a block whose most is fewer is skipped)
            cp, ci = sp, si
            while cp < used:
                if ci == 0 and most[cp] < need:
                    cp += 1
                    continue
                base = slot[cp] * block
                add = offset[cp]
                if ci == 0:
                    high = -_MANY
                    while ci < length[cp]:
                        value = free[base + ci] + add
                        if value >= need:
                            break
                        if value > high:
                            high = value
                        ci += 1
                    else:
                        most[cp] = high  # seen whole: the most, exactly (else it is an upper bound)
                else:
                    while ci < length[cp] and free[base + ci] + offset[cp] < need:
                        ci += 1
                if ci < length[cp]:
                    break
                cp += 1
                ci = 0
            if cp >= used:
                while job < last:
                    starts[job] = np.inf
                    job += 1
                break
            start_at = dates[slot[cp] * block + ci]
            end_at = _window_end(start_at, duration)
            if need <= 0:  # no nodes: takes nothing, all start here
                while job < last:
                    starts[job] = start_at
                    job += 1
                break
            # the window: from the candidate to the first breakpoint at or after end_at; its last breakpoint (wp, wi)
            low = _first_reaching(last_date, cp, used, end_at)
            if low == used:  # the window runs past the last breakpoint
                split_end = True
                wp = used - 1
                wi = length[wp] - 1
            else:
                base = slot[low] * block
                k = ci + 1 if low == cp else 0
                high = length[low]
                while k < high:
                    middle = (k + high) >> 1
                    if dates[base + middle] < end_at:
                        k = middle + 1
                    else:
                        high = middle
                split_end = dates[base + k] != end_at
                if k > 0:
                    wp, wi = low, k - 1
                else:
                    wp = low - 1
                    wi = length[wp] - 1
            # the window's last breakpoint with fewer than need free, from its end backwards (blocks by their
            # fewest); if none, the fewest free over the window
            smallest = _MANY
            lp = li = -1
            p = wp
            while True:
                first = ci if p == cp else 0
                top = wi if p == wp else length[p] - 1
                if first == 0 and top == length[p] - 1 and fewest[p] >= need:
                    if fewest[p] < smallest:
                        smallest = fewest[p]
                else:
                    base = slot[p] * block
                    add = offset[p]
                    for k in range(top, first - 1, -1):
                        value = free[base + k] + add
                        if value < need:
                            lp, li = p, k
                            break
                        if value < smallest:
                            smallest = value
                    if lp >= 0:
                        break
                if p == cp:
                    break
                p -= 1
            if lp >= 0:  # every start up to that breakpoint has it in its window: go on after it
                if li + 1 < length[lp]:
                    sp, si = lp, li + 1
                else:
                    sp, si = lp + 1, 0
                continue
            copies = min(smallest // need, last - job)
            for _ in range(copies):
                starts[job] = start_at
                job += 1
            taken = copies * need
            before = free[slot[wp] * block + wi] + offset[wp]  # the window's last step, before the reservation
            # take the nodes over the window (whole blocks by their offset), noting the last breakpoint left too small
            lp = li = -1
            for p in range(cp, wp + 1):
                first = ci if p == cp else 0
                top = wi if p == wp else length[p] - 1
                if first == 0 and top == length[p] - 1:
                    offset[p] -= taken
                    fewest[p] -= taken
                    most[p] -= taken
                    if fewest[p] < need:
                        lp, li = p, -1
                else:
                    base = slot[p] * block
                    add = offset[p]
                    low = fewest[p]
                    for k in range(first, top + 1):
                        value = free[base + k] - taken
                        free[base + k] = value
                        value += add
                        if value < low:
                            low = value
                        if value < need:
                            lp, li = p, k
                    fewest[p] = low  # exact; the most stays an upper bound
            if lp >= 0 and li < 0:
                base = slot[lp] * block
                li = length[lp] - 1
                while free[base + li] + offset[lp] >= need:
                    li -= 1
            if lp < 0:  # nothing left too small (the run is placed): go on from the candidate
                lp, li = cp, ci - 1
            if split_end:  # a breakpoint at the window's end, right after (wp, wi), with the step before it
                at = wi + 1
                if length[wp] == block:  # split the full block: its upper half goes to a new block after it
                    half = block // 2
                    for q in range(used, wp + 1, -1):
                        slot[q] = slot[q - 1]
                        length[q] = length[q - 1]
                        offset[q] = offset[q - 1]
                        fewest[q] = fewest[q - 1]
                        most[q] = most[q - 1]
                        last_date[q] = last_date[q - 1]
                    upper = wp + 1
                    slot[upper] = used
                    used += 1
                    source = slot[wp] * block
                    target = slot[upper] * block
                    for k in range(half, block):
                        dates[target + k - half] = dates[source + k]
                        free[target + k - half] = free[source + k]
                    length[upper] = block - half
                    length[wp] = half
                    offset[upper] = offset[wp]
                    _limits(block, dates, free, slot, length, offset, fewest, most, last_date, wp)
                    _limits(block, dates, free, slot, length, offset, fewest, most, last_date, upper)
                    if lp == wp and li >= half:  # (lp is in the window: never after wp)
                        lp, li = upper, li - half
                    if at > half:
                        wp, at = upper, at - half
                base = slot[wp] * block
                for k in range(length[wp], at, -1):
                    dates[base + k] = dates[base + k - 1]
                    free[base + k] = free[base + k - 1]
                dates[base + at] = end_at
                free[base + at] = before - offset[wp]
                length[wp] += 1
                if at == length[wp] - 1:
                    last_date[wp] = end_at
                if before > most[wp]:  # (the fewest stays: the step before it now holds taken fewer)
                    most[wp] = before
            if watched > 0:  # the floors this reservation lowers: those whose window reaches past its start
                left = smallest - taken  # its window's fewest free now
                kept = 0
                for a in range(watched):
                    j = alive[a]
                    if j < job:
                        continue  # placed
                    if reach[j] > start_at:
                        if reach[j] >= end_at:
                            if left < floor[j]:
                                floor[j] = left
                        else:
                            floor[j] = _fewest_until(block, dates, free, slot, length, offset, fewest, last_date, used, reach[j])
                    if floor[j] >= sizes[j]:
                        alive[kept] = j
                        kept += 1
                watched = kept
            if li + 1 < length[lp]:
                sp, si = lp, li + 1
            else:
                sp, si = lp + 1, 0
    return used


@numba.njit(cache=True)
def _watched(block, now, dates, free, slot, length, offset, used, sizes, durations):
    """Each job's window end from now (``reach``, seconds), the fewest free nodes over it (``floor``) and the positions of the jobs that fit there.

    Returns ``(reach, floor, alive, watched)``: ``alive[:watched]`` ascending (:func:`_place_in_order`).
    """
    # the profile as a staircase: each breakpoint's date and the fewest free from now to it
    steps = 0
    for p in range(used):
        steps += length[p]
    step_dates = np.empty(steps, dtype=np.float64)
    step_fewest = np.empty(steps, dtype=np.int64)
    low = _MANY
    n = 0
    for p in range(used):
        base = slot[p] * block
        for k in range(length[p]):
            value = free[base + k] + offset[p]
            if value < low:
                low = value
            step_dates[n] = dates[base + k]
            step_fewest[n] = low
            n += 1
    jobs = sizes.shape[0]
    reach = np.empty(jobs, dtype=np.float64)
    for j in range(jobs):
        reach[j] = _window_end(now, max(durations[j], MIN_DURATION))
    floor = step_fewest[np.searchsorted(step_dates, reach) - 1]  # over the steps that begin before reach (now's first)
    alive = np.empty(jobs, dtype=np.int64)
    watched = 0
    for j in range(jobs):
        if floor[j] >= sizes[j]:
            alive[watched] = j
            watched += 1
    return reach, floor, alive, watched


@numba.njit(cache=True)
def _move_to(block, now, dates, free, slot, length, offset, fewest, most, last_date, used):
    """Drop the breakpoints before the last one at or before ``now`` and date that one ``now``; returns the blocks used.

    The storage of the blocks dropped is reused: the kept blocks stored past the new count move into it
    (the blocks' slots stay a permutation of the storage in use).
    """
    first = 0
    while first + 1 < used and dates[slot[first + 1] * block] <= now:
        first += 1
    if first:
        kept = used - first
        holes = np.empty(first, dtype=np.int64)
        count = 0
        for q in range(first):
            if slot[q] < kept:
                holes[count] = slot[q]
                count += 1
        count = 0
        for q in range(first, used):
            if slot[q] >= kept:
                source, target = slot[q] * block, holes[count] * block
                count += 1
                for k in range(length[q]):
                    dates[target + k] = dates[source + k]
                    free[target + k] = free[source + k]
                slot[q] = target // block
        for q in range(kept):
            slot[q] = slot[q + first]
            length[q] = length[q + first]
            offset[q] = offset[q + first]
            fewest[q] = fewest[q + first]
            most[q] = most[q + first]
            last_date[q] = last_date[q + first]
        used = kept
    base = slot[0] * block
    drop = 0
    while drop + 1 < length[0] and dates[base + drop + 1] <= now:
        drop += 1
    if drop:
        for k in range(length[0] - drop):
            dates[base + k] = dates[base + k + drop]
            free[base + k] = free[base + k + drop]
        length[0] -= drop
    dates[base] = now
    _limits(block, dates, free, slot, length, offset, fewest, most, last_date, 0)
    return used


@numba.njit(cache=True)
def _unreserve(block, dates, free, slot, length, offset, fewest, most, last_date, used, starts, sizes, durations):
    """Give back each reservation's nodes over its window (its start and end are breakpoints; inf: it took nothing)."""
    for job in range(starts.shape[0]):
        start_at = starts[job]
        need = sizes[job]
        if not start_at < np.inf or need <= 0:
            continue
        end_at = _window_end(start_at, max(durations[job], MIN_DURATION))
        for p in range(_first_reaching(last_date, 0, used, start_at), used):
            base = slot[p] * block
            if dates[base] >= end_at:
                break
            if dates[base] >= start_at and last_date[p] < end_at:  # the whole block: by its offset
                offset[p] += need
                fewest[p] += need
                most[p] += need
            else:
                for k in range(length[p]):
                    if start_at <= dates[base + k] < end_at:
                        free[base + k] += need
                _limits(block, dates, free, slot, length, offset, fewest, most, last_date, p)


@numba.njit(cache=True)
def _reserve_in_order(
    block,
    now,
    free_now,
    release_ends,
    release_sizes,
    sizes,
    durations,
    starts,
    dates,
    free,
    slot,
    length,
    offset,
    fewest,
    most,
    last_date,
    until_none_starts_now,
):
    """The profile of the releases, then every job's reservation on it, or (``until_none_starts_now``) until no job left can start now; returns the blocks used."""
    used = _base_profile(
        block, now, free_now, release_ends, release_sizes, dates, free, slot, length, offset, fewest, most, last_date
    )
    if until_none_starts_now:
        reach, floor, alive, watched = _watched(block, now, dates, free, slot, length, offset, used, sizes, durations)
    else:
        reach = np.empty(0, dtype=np.float64)
        floor = alive = np.empty(0, dtype=np.int64)
        watched = -1
    return _place_in_order(
        block, dates, free, slot, length, offset, fewest, most, last_date, used, sizes, durations, starts,
        reach, floor, alive, watched,
    )  # fmt: skip


@numba.njit(cache=True)
def _conservative_pass(
    block, now, free_now, release_ends, release_sizes, sizes, durations, fresh, starts, starting,
    dates, free, slot, length, offset, fewest, most, last_date, used,
):  # fmt: skip
    """:meth:`CountProfile.plan`'s pass: the reservations of ``jobs[fresh:]`` on the kept profile, or of every job afresh.

    With ``fresh`` >= 0 the caller found the last pass's jobs still first in the queue and nothing but
    arrivals since; the profile is kept if, besides, no release is due (``release_ends[0] <= now``), no
    breakpoint lies between the last pass and now and the first step's free count is ``free_now``:
    then its first breakpoint moves to now and only ``jobs[fresh:]`` are placed. Otherwise (or with
    ``fresh`` = -1) the profile is built from the releases and every job is placed.

    ``starts`` (float64, the queue's length) gets the reservations placed (seconds; those before the
    first placed job are left as they are: kept, and after now); ``starting`` (int64, room for the
    queue) the positions, ascending, of the jobs whose reservation is now.

    Returns:
        ``(used, kept, starters, first, last)``: the blocks used, whether the profile was kept, how many
        positions ``starting`` holds, and the positions of the first and last job left waiting (-1: none).
    """
    jobs = sizes.shape[0]
    due = release_ends.shape[0] > 0 and release_ends[0] <= now
    kept = False
    if fresh >= 0 and not due and used > 0 and free[slot[0] * block] + offset[0] == free_now:
        if length[0] > 1:
            second = dates[slot[0] * block + 1]
        elif used > 1:
            second = dates[slot[1] * block]
        else:
            second = np.inf
        kept = second > now
    if kept:
        dates[slot[0] * block] = now
        if length[0] == 1:
            last_date[0] = now
        if jobs > fresh:
            used = _place_in_order(
                block, dates, free, slot, length, offset, fewest, most, last_date, used, sizes[fresh:],
                durations[fresh:], starts[fresh:], np.empty(0, dtype=np.float64), np.empty(0, dtype=np.int64),
                np.empty(0, dtype=np.int64), -1,
            )  # fmt: skip
    else:
        fresh = 0
        used = _reserve_in_order(
            block, now, free_now, release_ends, release_sizes, sizes, durations, starts, dates, free, slot, length,
            offset, fewest, most, last_date, False,
        )  # fmt: skip
    starters = 0
    first = 0 if fresh > 0 else -1  # the kept jobs wait: their reservations are breakpoints after now
    last = fresh - 1
    for job in range(fresh, jobs):
        if starts[job] <= now:
            starting[starters] = job
            starters += 1
        else:
            if first < 0:
                first = job
            last = job
    return used, kept, starters, first, last


class _Blocks:
    """A profile of free nodes in blocks of at most ``block`` breakpoints, as numpy arrays (the kernel's state).

    Block ``p`` (in date order) keeps its breakpoints at ``slot[p] * block`` in ``dates`` (ascending,
    seconds) and ``free`` (nodes free from each to the next, less ``offset[p]``, which a reservation
    over the whole block changes instead); ``length[p]`` breakpoints, ``fewest[p]`` the fewest free
    (exact), ``most[p]`` at least the most, ``last_date[p]`` its last date. A block is half full when
    built and splits when full, so ``rows`` breakpoints need at most ``rows // (block // 2) + 2`` blocks
    (one more is allocated).

    Raises:
        ValueError: a block under 2 breakpoints (it could not split).
    """

    __slots__ = ("block", "dates", "free", "fewest", "last_date", "length", "most", "offset", "slot", "used")

    def __init__(self, block: int, rows: int) -> None:
        if block < 2:
            raise ValueError(f"a block holds at least 2 breakpoints, not {block}")
        self.block = block
        blocks = rows // (block // 2) + 3
        self.dates = np.empty(blocks * block, dtype=np.float64)
        self.free = np.empty(blocks * block, dtype=np.int64)
        self.slot, self.length, self.offset, self.fewest, self.most = (np.zeros(blocks, dtype=np.int64) for _ in range(5))
        self.last_date = np.zeros(blocks, dtype=np.float64)
        self.used = 0

    def room(self, rows: int) -> None:
        """Grow the arrays to hold ``rows`` breakpoints, keeping the blocks in use."""
        blocks = rows // (self.block // 2) + 3
        if blocks > len(self.slot):
            bigger = _Blocks(self.block, max(rows, 2 * len(self.slot) * (self.block // 2)))
            cells = self.used * self.block
            bigger.dates[:cells] = self.dates[:cells]
            bigger.free[:cells] = self.free[:cells]
            for name in ("slot", "length", "offset", "fewest", "most", "last_date"):
                getattr(bigger, name)[: self.used] = getattr(self, name)[: self.used]
            bigger.used = self.used
            for name in self.__slots__:
                setattr(self, name, getattr(bigger, name))

    @property
    def arrays(self) -> tuple:
        """The kernel's arguments after the block size: dates, free, slot, length, offset, fewest, most, last_date."""
        return (self.dates, self.free, self.slot, self.length, self.offset, self.fewest, self.most, self.last_date)

    def first_free(self) -> int:
        """Nodes free on the profile's first step."""
        return int(self.free[self.slot[0] * self.block] + self.offset[0])


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
    block: int = BLOCK,
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
        block: breakpoints per block of the profile (at least 2): a speed setting, the answer is the same.

    Returns:
        float64 ``(q,)``: each job's reservation start, seconds; ``now`` for the jobs that start now,
        inf for a job that never fits.

    Raises:
        ValueError: arrays that are not 1-d or of different lengths in pairs, ends not ascending, or a
            block under 2.

    References:
        Mu'alem and Feitelson, IEEE TPDS 12(6), 2001 (conservative backfilling); RIGID §4.1 (m = |Q|).
    """
    return _reservations(now, free_now, release_ends, release_sizes, sizes, durations, block, False)


def starts_now(
    now: float,
    free_now: int,
    release_ends: np.ndarray,
    release_sizes: np.ndarray,
    sizes: np.ndarray,
    durations: np.ndarray,
    block: int = BLOCK,
) -> np.ndarray:
    """The waiting jobs whose conservative reservation is now: :func:`reserve_in_order`'s, found sooner.

    A pass that recomputes every reservation and keeps none (R-LIST-Q on a cluster: RIGID §4.1) only
    starts the jobs reserved now. Reservations are made in priority order, as in
    :func:`reserve_in_order`, and stop once no job left could start now: a job starts now only if its
    size fits the fewest free nodes over ``[now, now + duration)``, and every reservation only lowers
    that (the jobs still able to start now are watched and their fewest free updated as reservations
    are made). Under a backlog of thousands the last job to start is most often among the first
    hundreds.

    Args:
        now: the current time, seconds.
        free_now: nodes free now.
        release_ends: float64 ``(r,)``, ascending: when each running job frees its nodes, seconds (an
            end at or before now counts just after now).
        release_sizes: int64 ``(r,)``: the nodes each frees.
        sizes: int64 ``(q,)``: the waiting jobs' sizes, in priority order.
        durations: float64 ``(q,)``: their run times as reserved, seconds.
        block: breakpoints per block of the profile (at least 2): a speed setting, the answer is the same.

    Returns:
        int64 ``(k,)``: the positions, ascending, of the jobs whose reservation is now; the same as
        ``np.flatnonzero(reserve_in_order(...) <= now)``.

    Raises:
        ValueError: as :func:`reserve_in_order`.

    References:
        RIGID §4.1, Alg. 1 (R-LIST with m = |Q|: reservations recomputed at each trigger); Mu'alem and
        Feitelson, IEEE TPDS 12(6), 2001 (conservative backfilling).
    """
    return np.flatnonzero(_reservations(now, free_now, release_ends, release_sizes, sizes, durations, block, True) <= now)


def _reservations(now, free_now, release_ends, release_sizes, sizes, durations, block, until_none_starts_now) -> np.ndarray:
    """:func:`reserve_in_order`'s reservations, or :func:`starts_now`'s (``until_none_starts_now``): float64 ``(q,)`` starts, seconds (inf: never; NaN: not reserved)."""
    release_ends, release_sizes, sizes, durations = _checked(release_ends, release_sizes, sizes, durations)
    blocks = _Blocks(block, len(release_ends) + len(sizes) + 1)
    starts = np.empty(len(sizes), dtype=np.float64)
    if len(sizes):
        _reserve_in_order(
            block, float(now), int(free_now), release_ends, release_sizes, sizes, durations, starts, *blocks.arrays,
            until_none_starts_now,
        )  # fmt: skip
    return starts


class CountProfile:
    """Conservative backfilling's profile on a count cluster, kept from one pass to the next.

    :meth:`plan` gives the pass's answer: the first waiting job's reservation and the jobs that start
    now. A pass recomputes every reservation (:func:`reserve_in_order`) unless nothing but arrivals
    happened since the last one: the releases' change count (:attr:`~torus_sim.engine.running_ends.ReleaseColumns.changes`)
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
        "_blocks",
        "_changes",
        "_first",
        "_head_at",
        "_last",
        "_rows",
        "_starting",
        "_valid",
        "_waiting",
        "kept",
        "recomputed",
    )

    def __init__(self, block: int = BLOCK, rows: int = 256) -> None:
        """A profile with no pass yet.

        Args:
            block: breakpoints per block of the profile (at least 2).
            rows: breakpoints the first arrays hold (they grow as the queue does).

        Neither changes an answer.

        Raises:
            ValueError: a block under 2.
        """
        self._blocks = _Blocks(block, rows)
        self._rows = 0  # at least the breakpoints the profile holds
        self._valid = False  # the kept profile stands for the next pass if nothing but arrivals happen
        self._changes = -1  # the releases' change count it stands for (after the last pass's starts)
        self._waiting = 0  # jobs left waiting by the last pass: the queue's first ones
        self._first = self._last = None  # the first and last of them
        self._head_at = np.inf  # the first one's reservation, seconds
        self._starting = np.empty(0, dtype=np.int64)  # the kernel's positions of the jobs that start now
        self.recomputed = self.kept = 0

    def plan(
        self, now: float, free_now: int, releases, jobs: list, sizes: np.ndarray, durations: np.ndarray
    ) -> tuple[float, list]:
        """One conservative pass on a count cluster: the head's reservation and the jobs that start now.

        Args:
            now: the pass's time, seconds.
            free_now: nodes free now.
            releases: the running jobs' :class:`~torus_sim.engine.running_ends.ReleaseColumns` (predicted ends
                ascending, node counts, change count; a count of -1, columns built for this pass only,
                makes the next pass recompute every reservation).
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
        blocks = self._blocks
        fresh = -1  # the profile may stand only if nothing but arrivals happened (the kernel checks the rest)
        waiting = self._waiting
        if self._valid and releases.changes == self._changes and releases.changes >= 0:
            if not waiting or (count >= waiting and jobs[0] is self._first and jobs[waiting - 1] is self._last):
                fresh = waiting
        rows = len(releases) + count + 1  # room for either way: every breakpoint afresh, or the kept ones and the arrivals
        if fresh >= 0 and self._rows + count - fresh > rows:
            rows = self._rows + count - fresh
        if rows > len(self._starting):  # the blocks hold as many breakpoints as this buffer has rows
            blocks.room(rows)
            self._starting = np.empty(rows, dtype=np.int64)
        starts = np.empty(count, dtype=np.float64)
        blocks.used, kept, starters, first, last = _conservative_pass(
            blocks.block, float(now), int(free_now), releases.ends, releases.sizes, sizes, durations, fresh, starts,
            self._starting, *blocks.arrays, blocks.used,
        )  # fmt: skip
        if kept:
            self.kept += 1
            self._rows += count - fresh
        else:
            self.recomputed += 1
            fresh = 0
            self._rows = len(releases) + count + 1
        head_at = float(starts[0]) if fresh == 0 else self._head_at
        starting = self._starting[:starters].tolist()
        # what the next pass keeps if only arrivals come: the jobs left waiting, in order, and the first one's reservation
        self._valid = not (len(releases) and releases.ends[0] <= now)
        self._changes = releases.changes + starters
        self._waiting = count - starters
        if first < 0:
            self._first = self._last = None
            self._head_at = np.inf
        else:
            if first >= fresh:  # a job whose reservation this pass computed
                self._head_at = float(starts[first])
            self._first, self._last = jobs[first], jobs[last]
        return head_at, starting


class KeptReservations:
    """R-LIST-Q's count profile kept from one pass to the next: the jobs it reserved keep their reservations.

    A pass reserves in priority order until no job left can start now (:func:`starts_now`). The next
    pass's profile is the same one moved to now when nothing but the queue changed: the running jobs
    ended where the profile released them (R-LIST knows the attempts' lengths), the jobs started
    hold the windows reserved for them, no node failed or came back off the profile (the caller checks
    those: ``stands``), and the free nodes now are the profile's. Then the reserved jobs that are still
    the queue's first ones, in order, keep their reservations (a reservation depends only on the ones
    before it); those after the first job that entered among them (an arrival or a returned job at its
    priority) are undone, their nodes given back over their windows, and the pass goes on from there.
    Breakpoints left by undone reservations change no answer: a window from inside a step holds the
    window from the step's start.

    Attributes:
        kept: passes that kept the first reservations.
        recomputed: passes that built the profile afresh.

    References:
        RIGID §4.1, Alg. 1 (R-LIST with m = |Q|: the reservations a fresh round gives); Mu'alem and
        Feitelson, IEEE TPDS 12(6), 2001 (conservative backfilling's profile).
    """

    __slots__ = ("_blocks", "_durations", "_ranks", "_sizes", "_starts", "kept", "recomputed")

    def __init__(self, block: int = BLOCK, rows: int = 256) -> None:
        """No profile yet (``block``: breakpoints per block, at least 2; ``rows``: the first arrays' room; neither changes an answer).

        Raises:
            ValueError: a block under 2.
        """
        self._blocks = _Blocks(block, rows)
        self._ranks = None  # int64: the reserved jobs left waiting, in priority order (None: nothing kept)
        self._starts = self._sizes = self._durations = None  # their reservations, sizes and reserved durations
        self.kept = self.recomputed = 0

    def plan(
        self, now: float, free_now: int, releases, ranks: np.ndarray, sizes: np.ndarray, durations: np.ndarray, stands: bool
    ) -> np.ndarray:
        """One pass: the positions, ascending, of the waiting jobs whose reservation is now.

        Args:
            now: the pass's time, seconds.
            free_now: nodes free now.
            releases: ``() -> (ends, nodes)``, the running jobs' and repairs' releases (float64 ascending,
                int64), asked only when the profile is built afresh.
            ranks: int64 ``(q,)``: the waiting jobs' ranks, in priority order (who they are).
            sizes: int64 ``(q,)``: their sizes.
            durations: float64 ``(q,)``: their reserved durations, seconds.
            stands: the running jobs, their ends and the known repairs are those the last pass left.

        Returns:
            int64 positions in the queue; the same as :func:`starts_now`'s on a fresh profile.

        Raises:
            ValueError: as :func:`reserve_in_order`.

        References:
            RIGID §4.1, Alg. 1 (m = |Q|).
        """
        blocks = self._blocks
        first = -1
        kept_starts = self._starts
        if stands and self._ranks is not None and not (len(kept_starts) and kept_starts.min() < now):
            kept = len(self._ranks)
            same = min(kept, len(ranks))
            apart = np.flatnonzero(self._ranks[:same] != ranks[:same])
            first = int(apart[0]) if len(apart) else same
            blocks.used = _move_to(blocks.block, now, *blocks.arrays, blocks.used)
            if first < kept:
                _unreserve(
                    blocks.block, *blocks.arrays, blocks.used, kept_starts[first:], self._sizes[first:], self._durations[first:]
                )
            due = kept_starts[:first] <= now
            if blocks.first_free() != free_now - int(self._sizes[:first][due].sum()):
                first = -1  # the profile does not hold what is free now
        if first < 0:
            self.recomputed += 1
            ends, nodes = releases()
            ends, nodes, sizes, durations = _checked(ends, nodes, sizes, durations)
            blocks.used = 0
            blocks.room(len(ends) + len(sizes) + 1)
            blocks.used = _base_profile(blocks.block, float(now), int(free_now), ends, nodes, *blocks.arrays)
            first, kept_starts = 0, np.empty(0, dtype=np.float64)
        else:
            self.kept += 1
            sizes = np.ascontiguousarray(sizes, dtype=np.int64)
            durations = np.ascontiguousarray(durations, dtype=np.float64)
            blocks.room(int(blocks.length[: blocks.used].sum()) + len(sizes) - first + 1)
        placed = np.empty(len(sizes) - first, dtype=np.float64)
        if len(placed):
            block = blocks.block
            dates, free, slot, length, offset = blocks.arrays[:5]
            watch = _watched(block, float(now), dates, free, slot, length, offset, blocks.used, sizes[first:], durations[first:])
            blocks.used = _place_in_order(block, *blocks.arrays, blocks.used, sizes[first:], durations[first:], placed, *watch)
        starts = np.concatenate([kept_starts[:first], placed])
        reserved = first + int(np.count_nonzero(~np.isnan(placed)))  # a first run of the queue
        starts = starts[:reserved]
        waiting = starts > now
        self._ranks = np.asarray(ranks[:reserved])[waiting]
        self._starts, self._sizes, self._durations = starts[waiting], sizes[:reserved][waiting], durations[:reserved][waiting]
        return np.flatnonzero(starts <= now)

    def drop(self) -> None:
        """Forget the kept profile: the next pass builds it afresh."""
        self._ranks = None
