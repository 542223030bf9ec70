"""The torus profile's steps as arrays, and its reservation search compiled (numba).

:class:`~torus_sim.policies.availability.PartitionProfile` keeps each step's taken supernodes as a
Python int and asks the partition table's memo of free partitions, step by step, for the first step
from which a partition of a size stays free over a job's window. On Mira's torus with Mira's
failures R-LIST-Q asked 2.65 million such searches in its first 9,878 jobs (about 21 steps tried
and 2 memo questions per step each: three quarters of the run's time, profiled). Here the same steps
are mirrored as uint64 words (``(steps, K)``, bit i of word i // 64 = supernode i) next to their
dates, with one flag per size and step (0: no partition of the size is free in that step alone, so
no window holding it is either), and the search runs over them in compiled code: the same steps tried
in the same order, the same flags set, the same answer (tests/test_flat_policies.py compares it with
the plain scan on random profiles; the matrix digests in tests/test_matrix.py pin the schedules).

References:
    Mu'alem and Feitelson, IEEE TPDS 12(6), 2001 (the availability profile); BGL-FAULT §3.3 and
    Appendix 9 (partitions as sets of supernodes, occupancies as bitmasks).
"""

from __future__ import annotations

import weakref

import numba
import numpy as np

__all__ = ["StepArrays"]


@numba.njit(cache=True)
def _free(masks, partition, words):  # pragma: no cover - compiled
    """Whether partition ``partition`` of ``masks`` (``(P, K)`` uint64) meets none of the supernodes in ``words``."""
    for k in range(masks.shape[1]):
        if masks[partition, k] & words[k]:
            return False
    return True


@numba.njit(cache=True)
def _any_free(masks, start, end, words):  # pragma: no cover - compiled
    """Whether a partition in ``[start, end)`` of ``masks`` (``(P, K)`` uint64) meets none of ``words``."""
    for partition in range(start, end):
        if _free(masks, partition, words):
            return True
    return False


@numba.njit(cache=True)
def _any_free_remembered(keys, answers, masks, start, end, words):  # pragma: no cover - compiled
    """:func:`_any_free` through a direct-mapped memo of its answers (1: a partition is free, 0: none).

    ``keys`` (:func:`_memo_slot`) holds per slot ``start + 1`` and the occupancy's words. A question whose slot
    holds another key is answered afresh and takes the slot: the memo changes no answer, only how often the partitions of a size are scanned (a step's or a window's
    occupancy repeats from one search to the next; a scan that finds none free reads every partition of the
    size: most of a reservation's time on BG/L's torus before).
    """
    slot = _memo_slot(keys, start, words)
    if slot < 0:
        return answers[-1 - slot] != 0
    answer = _any_free(masks, start, end, words)
    answers[slot] = 1 if answer else 0
    return answer


@numba.njit(cache=True)
def _memo_slot(keys, start, words):  # pragma: no cover - compiled
    """The slot of a direct-mapped memo for the key (``start``, ``words``): ``-1 - slot`` when it holds that key.

    ``keys`` (``(E, K + 1)`` uint64, E a power of two) holds per slot ``start + 1`` (0: empty) and the words.
    A slot that holds another key is given to this one (its key is written; the caller writes the answer).
    """
    width = words.shape[0]
    mixed = np.uint64(start + 1) * np.uint64(0x9E3779B97F4A7C15)
    for k in range(width):
        mixed = (mixed ^ words[k]) * np.uint64(0xBF58476D1CE4E5B9)
        mixed ^= mixed >> np.uint64(31)
    slot = np.int64(mixed & np.uint64(keys.shape[0] - 1))
    same = keys[slot, 0] == np.uint64(start + 1)
    if same:
        for k in range(width):
            if keys[slot, k + 1] != words[k]:
                same = False
                break
    if same:
        return -1 - slot
    keys[slot, 0] = np.uint64(start + 1)
    for k in range(width):
        keys[slot, k + 1] = words[k]
    return slot


@numba.njit(cache=True)
def _bisect_left(values, low, high, value):  # pragma: no cover - compiled
    """The first index in ``[low, high)`` whose value is >= ``value`` (``values`` ascending there); ``high`` if none."""
    while low < high:
        middle = (low + high) // 2
        if values[middle] < value:
            low = middle + 1
        else:
            high = middle
    return low


@numba.njit(cache=True)
def _bisect_right(values, low, high, value):  # pragma: no cover - compiled
    """The first index in ``[low, high)`` whose value is > ``value`` (``values`` ascending there); ``high`` if none."""
    while low < high:
        middle = (low + high) // 2
        if value < values[middle]:
            high = middle
        else:
            low = middle + 1
    return low


@numba.njit(cache=True)
def _search(
    dates, words, flags, count, first, duration, masks, start, end, free_keys, free_answers
):  # pragma: no cover - compiled
    """The first step from ``first`` on whose window holds a free partition of ``[start, end)``; -1: none.

    A step is tried only when its flag is set; a step with no partition free in it alone gets flag 0.
    The window of step i is the steps j >= i with ``dates[j] < dates[i] + duration``. Whether a partition
    is free under an occupancy is asked through the memo ``free_keys``, ``free_answers``
    (:func:`_any_free_remembered`).
    """
    window = np.empty(words.shape[1], dtype=np.uint64)
    for index in range(first, count):
        if flags[index] == 0:
            continue
        if not _any_free_remembered(free_keys, free_answers, masks, start, end, words[index]):
            flags[index] = 0
            continue
        _window_words(dates, words, count, index, duration, window)
        if _any_free_remembered(free_keys, free_answers, masks, start, end, window):
            return index
    return -1


@numba.njit(cache=True)
def _split(dates, words, flags, rows, count, index, date):  # pragma: no cover - compiled
    """Insert a step at ``index + 1`` dated ``date`` that copies step ``index`` (words and every size's flag)."""
    width = words.shape[1]
    for moved in range(count, index + 1, -1):
        dates[moved] = dates[moved - 1]
        for k in range(width):
            words[moved, k] = words[moved - 1, k]
        for row in range(rows):
            flags[row, moved] = flags[row, moved - 1]
    dates[index + 1] = date
    for k in range(width):
        words[index + 1, k] = words[index, k]
    for row in range(rows):
        flags[row, index + 1] = flags[row, index]


@numba.njit(cache=True)
def _take(words, first, last, mask):  # pragma: no cover - compiled
    """Mark the supernodes of ``mask`` (``(K,)`` uint64) taken in steps ``[first, last)``."""
    for index in range(first, last):
        for k in range(words.shape[1]):
            words[index, k] |= mask[k]


@numba.njit(cache=True)
def _first_at(dates, count, floor):  # pragma: no cover - compiled
    """The first step index whose date is >= ``floor`` (``bisect_left`` over the steps in use)."""
    return _bisect_left(dates, 0, count, floor)


@numba.njit(cache=True)
def _window_words(dates, words, count, index, duration, window):  # pragma: no cover - compiled
    """Fill ``window`` with the supernodes taken at any time in [dates[index], dates[index] + duration)."""
    width = words.shape[1]
    end_at = dates[index] + duration
    for k in range(width):
        window[k] = words[index, k]
    later = index + 1
    while later < count and dates[later] < end_at:
        for k in range(width):
            window[k] |= words[later, k]
        later += 1


@numba.njit(cache=True)
def _popcount(word):  # pragma: no cover - compiled
    """The set bits of a uint64."""
    word = word - ((word >> np.uint64(1)) & np.uint64(0x5555555555555555))
    word = (word & np.uint64(0x3333333333333333)) + ((word >> np.uint64(2)) & np.uint64(0x3333333333333333))
    word = (word + (word >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return int((word * np.uint64(0x0101010101010101)) >> np.uint64(56))


@numba.njit(cache=True)
def _first_at_most(sizes, limit):  # pragma: no cover - compiled
    """The first id whose size is at most ``limit`` (``sizes`` descending); ``len(sizes)`` when none is."""
    low, high = 0, len(sizes)
    while low < high:
        middle = (low + high) // 2
        if sizes[middle] > limit:
            low = middle + 1
        else:
            high = middle
    return low


@numba.njit(cache=True)
def _disjoint(masks, first, second):  # pragma: no cover - compiled
    """Whether partitions ``first`` and ``second`` share no supernode."""
    for k in range(masks.shape[1]):
        if masks[first, k] & masks[second, k]:
            return False
    return True


@numba.njit(cache=True)
def _mfp_choice(masks, sizes, supernodes, start, end, window):  # pragma: no cover - compiled
    """The MFP heuristic's partition among the free ones of ``[start, end)`` under ``window``; -1: none free.

    The candidates are the partitions of ``[start, end)`` that meet none of ``window``'s supernodes, in id
    order. Each candidate's MFP after placement is the size of the largest free partition disjoint from it;
    partition ids run by descending size, so the largest MFP is the size of the first free partition (in id
    order) disjoint from some candidate, and the winner is the first candidate disjoint from any free
    partition of that size (0th candidate when none leaves a free partition): the answer of
    :meth:`~torus_sim.machine.partition_table.PartitionTable.mfp_choice`.
    """
    candidates = _free_ids(masks, start, end, window)
    found = len(candidates)
    if found <= 1:
        return candidates[0] if found else -1
    # a free partition disjoint from a candidate lies in the supernodes free under the window less the candidate's:
    # the partitions larger than that (the first ids) are skipped unasked
    room = supernodes - sizes[start]
    for k in range(window.shape[0]):
        room -= _popcount(window[k])
    first = _first_at_most(sizes, room)
    best = found  # a position in candidates: none yet
    largest = 0
    for other in range(first, masks.shape[0]):
        if largest and sizes[other] != largest:
            break  # past the size group of the largest MFP: the first winner stands
        if not _free(masks, other, window):
            continue
        for position in range(best if largest else found):
            if _disjoint(masks, candidates[position], other):
                best = position
                largest = sizes[other]
                break
    return candidates[best] if largest else candidates[0]


@numba.njit(cache=True)
def _mfp_remembered(keys, answers, masks, sizes, supernodes, start, end, window):  # pragma: no cover - compiled
    """:func:`_mfp_choice` through a direct-mapped memo of its answers.

    ``keys`` (``(E, K + 1)`` uint64, E a power of two) holds per slot ``start + 1`` (0: empty) and the
    window's words; ``answers`` (``(E,)`` int64) the partition chosen. A question whose slot holds another
    key is answered afresh and takes the slot: the memo changes no answer, only how often one is computed
    (a pass asks the same (size, window) again and again: 96.5% of R-LIST-Q's questions on BG/L's torus with
    LANL's failures repeat one).
    """
    slot = _memo_slot(keys, start, window)
    if slot < 0:
        return answers[-1 - slot]
    answer = _mfp_choice(masks, sizes, supernodes, start, end, window)
    answers[slot] = answer
    return answer


@numba.njit(cache=True)
def _earliest_mfp(
    dates, words, flags, count, floor, duration, masks, sizes, supernodes, start, end, keys, answers, free_keys, free_answers
):  # pragma: no cover - compiled
    """:func:`_search` from the first step at or after ``floor``, then the MFP heuristic's partition over its window.

    Returns:
        (step index, partition id); (-1, -1) when no step's window holds a free partition of ``[start, end)``.
    """
    index = _search(
        dates, words, flags, count, _first_at(dates, count, floor), duration, masks, start, end, free_keys, free_answers
    )
    if index < 0:
        return -1, -1
    window = np.empty(words.shape[1], dtype=np.uint64)
    _window_words(dates, words, count, index, duration, window)
    return index, _mfp_remembered(keys, answers, masks, sizes, supernodes, start, end, window)


@numba.njit(cache=True)
def _free_ids(masks, start, end, window):  # pragma: no cover - compiled
    """The ids of ``[start, end)`` whose partitions meet none of ``window``'s supernodes, ascending."""
    ids = np.empty(end - start, dtype=np.int64)
    found = 0
    for partition in range(start, end):
        if _free(masks, partition, window):
            ids[found] = partition
            found += 1
    return ids[:found]


@numba.njit(cache=True)
def _open_for(dates, words, count, masks, start, end):  # pragma: no cover - compiled
    """Seconds from ``dates[0]`` during which some partition of ``[start, end)`` stays free (inf: from then on)."""
    taken = np.zeros(words.shape[1], dtype=np.uint64)
    for index in range(count):
        for k in range(words.shape[1]):
            taken[k] |= words[index, k]
        if not _any_free(masks, start, end, taken):
            return dates[index] - dates[0]
    return np.inf


@numba.njit(cache=True)
def _cancel(dates, words, flags, count, starts, ends, wheres, masks):  # pragma: no cover - compiled
    """Give back each reservation's partition over its window (both dates breakpoints); its steps' flags set to 1."""
    width = words.shape[1]
    for job in range(starts.shape[0]):
        where = wheres[job]
        if where < 0 or not starts[job] < np.inf:
            continue
        index = np.searchsorted(dates[:count], starts[job])
        while index < count and dates[index] < ends[job]:
            for word in range(width):
                words[index, word] &= ~masks[where, word]
            flags[:, index] = 1
            index += 1


@numba.njit(cache=True)
def _reserve(dates, words, flags, rows, count, start_at, end_at, mask):  # pragma: no cover - compiled
    """Split the steps at ``start_at`` and ``end_at`` and take ``mask`` in between; returns the steps now in use.

    The arrays have room for two more steps. A new step copies its predecessor (its words and flags).
    """
    for date in (start_at, end_at):
        index = _bisect_right(dates, 0, count, date) - 1
        if dates[index] != date:
            _split(dates, words, flags, rows, count, index, date)
            count += 1
    first = _first_at(dates, count, start_at)
    last = _first_at(dates, count, end_at)
    _take(words, first, last, mask)
    return count


@numba.njit(cache=True)
def _stair_floor(durations, starts, n, duration):  # pragma: no cover - compiled
    """:meth:`~torus_sim.policies.availability.StartFloors.floor` over a staircase of ``n`` steps (-inf: none)."""
    at = _bisect_right(durations, 0, n, duration)
    return starts[at - 1] if at else -np.inf


@numba.njit(cache=True)
def _stair_add(durations, starts, n, duration, start_at):  # pragma: no cover - compiled
    """:meth:`~torus_sim.policies.availability.StartFloors.add` on a staircase of ``n`` steps (room for one more); returns its steps."""
    at = _bisect_right(durations, 0, n, duration)
    if at and starts[at - 1] >= start_at:
        return n
    first = _bisect_left(durations, 0, at, duration)  # an equal duration answered earlier is replaced
    last = _bisect_right(starts, at, n, start_at)  # longer durations answered no later are dominated
    if last == first:  # an insertion
        for moved in range(n, first, -1):
            durations[moved] = durations[moved - 1]
            starts[moved] = starts[moved - 1]
        n += 1
    elif last - first > 1:
        gone = last - first - 1
        for moved in range(last, n):
            durations[moved - gone] = durations[moved]
            starts[moved - gone] = starts[moved]
        n -= gone
    durations[first] = duration
    starts[first] = start_at
    return n


@numba.njit(cache=True)
def _opened(dates, words, count, masks, start, end):  # pragma: no cover - compiled
    """A job of the row's size can start now only if shorter than this, seconds (:meth:`StartsLeft._open`)."""
    longest = _open_for(dates, words, count, masks, start, end)
    return longest * (1.0 + 1e-9) + 1e-6 if longest > 0.0 else 0.0


@numba.njit(cache=True)
def _left_below(left, begin, end, below, removed):  # pragma: no cover - compiled
    """Jobs of a row not taken yet whose duration is below ``below`` (``left[begin:end]`` ascending; ``removed`` a Fenwick tree of the taken)."""
    if not below > 0.0:
        return 0
    below_at = _bisect_left(left, begin, end, below)
    return (below_at - begin) - (_fenwick_sum(removed, below_at) - _fenwick_sum(removed, begin))


@numba.njit(cache=True)
def _fenwick_add(tree, index):  # pragma: no cover - compiled
    """Mark 0-based position ``index`` once more in a 1-based Fenwick tree."""
    position = index + 1
    while position < len(tree):
        tree[position] += 1
        position += position & -position


@numba.njit(cache=True)
def _fenwick_sum(tree, position):  # pragma: no cover - compiled
    """The marks at positions below ``position`` (a 1-based Fenwick tree)."""
    total = 0
    while position > 0:
        total += tree[position]
        position -= position & -position
    return total


@numba.njit(cache=True)
def _plan(
    dates,
    words,
    flags,
    rows,
    count,
    now,
    job_rows,
    job_durations,
    ranges,
    masks,
    sizes,
    supernodes,
    keys,
    answers,
    free_keys,
    free_answers,
    stair_durations,
    stair_starts,
    stair_steps,
    out_start,
    out_where,
):  # pragma: no cover - compiled
    """Reserve for jobs in order on the profile (the MFP heuristic's partitions) until no later job can start now.

    Each job (its flag row and predicted duration, seconds): the earliest start from its row's floor
    (:class:`~torus_sim.policies.availability.StartFloors`, a staircase per row), the MFP heuristic's
    partition over its window, the reservation taken; then :class:`~torus_sim.policies.availability.StartsLeft`'s
    test: once no job left could start now, the pass stops. The jobs of each row, their durations ascending,
    are arranged first, their durations ascending (what :class:`~torus_sim.policies.availability.StartsLeft` keeps).

    Returns:
        (steps in use, jobs taken); ``out_start`` (seconds, inf: never) and ``out_where`` (-1: none) of each taken job.
    """
    width = words.shape[1]
    window = np.empty(width, dtype=np.uint64)
    in_rows = np.zeros(
        rows, dtype=np.int64
    )  # the jobs of each row, their durations ascending: left[left_begin[row]:left_end[row]]
    for row in job_rows:
        in_rows[row] += 1
    left_end = np.cumsum(in_rows)
    left_begin = left_end - in_rows
    filled = left_begin.copy()
    left = np.empty(len(job_rows))
    for job in range(len(job_rows)):
        left[filled[job_rows[job]]] = job_durations[job]
        filled[job_rows[job]] += 1
    for row in range(rows):
        left[left_begin[row] : left_end[row]] = np.sort(left[left_begin[row] : left_end[row]])
    pass_rows = np.flatnonzero(in_rows)
    removed = np.zeros(len(left) + 1, dtype=np.int64)
    below = np.zeros(rows)
    alive_of = np.zeros(rows, dtype=np.int64)
    alive = 0
    for row in pass_rows:
        below[row] = _opened(dates, words, count, masks, ranges[row, 0], ranges[row, 1])
        alive_of[row] = _left_below(left, left_begin[row], left_end[row], below[row], removed)
        alive += alive_of[row]
    for job in range(len(job_rows)):
        row = job_rows[job]
        duration = job_durations[job]
        start, end = ranges[row, 0], ranges[row, 1]
        floor = max(now, _stair_floor(stair_durations[row], stair_starts[row], stair_steps[row], duration))
        start_at = np.inf
        where = -1
        if floor < np.inf and start < end:
            first = _first_at(dates, count, floor)
            index = _search(dates, words, flags[row], count, first, duration, masks, start, end, free_keys, free_answers)
            if index >= 0:
                _window_words(dates, words, count, index, duration, window)
                where = _mfp_remembered(keys, answers, masks, sizes, supernodes, start, end, window)
                start_at = dates[index]
        stair_steps[row] = _stair_add(stair_durations[row], stair_starts[row], stair_steps[row], duration, start_at)
        if where >= 0:
            end_at = start_at + duration
            if not end_at > start_at:
                end_at = np.nextafter(start_at, np.inf)
            count = _reserve(dates, words, flags, rows, count, start_at, end_at, masks[where])
        out_start[job] = start_at
        out_where[job] = where
        # StartsLeft.passed: the job is taken
        _fenwick_add(removed, _bisect_left(left, left_begin[row], left_end[row], duration))
        started = start_at <= now
        if not started:
            below[row] = min(below[row], duration)
            fresh = _left_below(left, left_begin[row], left_end[row], below[row], removed)
            alive += fresh - alive_of[row]
            alive_of[row] = fresh
        horizon = 0.0 if started else start_at - now
        for other in pass_rows:
            if below[other] > horizon and alive_of[other]:
                below[other] = min(below[other], _opened(dates, words, count, masks, ranges[other, 0], ranges[other, 1]))
                fresh = _left_below(left, left_begin[other], left_end[other], below[other], removed)
                alive += fresh - alive_of[other]
                alive_of[other] = fresh
        if alive <= 0:
            return count, job + 1
    return count, len(job_rows)


MFP_MEMO_SLOTS = 1 << 15
"""Slots of the compiled MFP choice's memo, one per partition table (``(slots, K + 1)`` uint64 keys: 768 KiB at K = 2)."""

FREE_MEMO_SLOTS = 1 << 15
"""Slots of the compiled memo of "a partition of this size is free under this occupancy", one per partition table (768 KiB at K = 2)."""


def _mfp_memo(table) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The partition table's compiled memos, made on first use and shared by its profiles.

    Returns:
        The MFP choices (keys, answers) and whether a partition of a size is free under an occupancy (keys, answers).
    """
    memo = _MEMOS.get(table)
    if memo is None:
        memo = _MEMOS[table] = (
            np.zeros((MFP_MEMO_SLOTS, table.words + 1), dtype=np.uint64),
            np.zeros(MFP_MEMO_SLOTS, dtype=np.int64),
            np.zeros((FREE_MEMO_SLOTS, table.words + 1), dtype=np.uint64),
            np.zeros(FREE_MEMO_SLOTS, dtype=np.int8),
        )
    return memo


_MEMOS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
"""Partition table -> its compiled MFP memo (dropped with the table)."""


class StepArrays:
    """A torus profile's steps as arrays: dates, taken supernodes as words, a flag per size and step.

    Args:
        table: the partition table (its ``masks``, ``(P, K)`` uint64, and partition ranges per size).
        dates: the profile's breakpoints, ascending, seconds.
        words: uint64 ``(len(dates), K)``, the supernodes taken in each step.

    Attributes:
        count: steps in use (the arrays have room for more; they double when full).
        dates: float64 ``(room,)``, the breakpoints, seconds (the first ``count`` in use).
        words: uint64 ``(room, K)``, the supernodes taken from each breakpoint to the next.
        flags: uint8 ``(sizes, room)``, per size asked and step: 0 once no partition of the size is free
            in the step alone.

    Nothing here raises: sizes without a partition shape answer -1 (never).

    References:
        Mu'alem and Feitelson, IEEE TPDS 12(6), 2001 (the availability profile); BGL-FAULT Appendix 9
        (occupancies as bitmasks).
    """

    def __init__(self, table, dates: list[float], words: np.ndarray) -> None:
        self._masks = np.ascontiguousarray(table.masks, dtype=np.uint64)
        self._sizes = np.ascontiguousarray(table.sizes, dtype=np.int64)  # descending: ids run from the largest size
        self._supernodes = int(table.torus.size)
        self._memo = _mfp_memo(table)
        # the compiled pass's floors per flag row (StartFloors as staircases): durations and starts ascending, steps in use
        self._stair_durations = np.zeros((0, 0))
        self._stair_starts = np.zeros((0, 0))
        self._stair_steps = np.zeros(0, dtype=np.int64)
        self._ids_of_size = table.ids_of_size
        self.count = len(dates)
        room = max(16, 2 * self.count)
        self.dates = np.empty(room, dtype=np.float64)
        self.dates[: self.count] = dates
        self.words = np.zeros((room, self._masks.shape[1]), dtype=np.uint64)
        self.words[: self.count] = words
        self.flags = np.ones((4, room), dtype=np.uint8)
        self._ranges = np.zeros((4, 2), dtype=np.int64)  # per row: its size's partition ids [start, stop) ((0, 0): no shape)
        self._row_of = np.full(self._supernodes + 1, -1, dtype=np.int64)  # size -> its row (-1: none yet)
        self._rows: dict[int, int] = {}  # size -> its row of flags

    def _row(self, size: int) -> int:
        row = self._rows.get(size)
        if row is None:
            row = self._rows[size] = len(self._rows)
            if row == self.flags.shape[0]:
                self.flags = np.concatenate([self.flags, np.ones_like(self.flags)])
                self._ranges = np.concatenate([self._ranges, np.zeros_like(self._ranges)])
            self.flags[row, : self.count] = 1
            ids = self._ids_of_size(size)
            self._ranges[row] = (ids.start, ids.stop) if len(ids) else (0, 0)
            if 0 <= size < len(self._row_of):
                self._row_of[size] = row
        return row

    def search(self, size: int, first: int, duration: float) -> int:
        """The first step from index ``first`` whose window of ``duration`` seconds holds a free partition of ``size``; -1: none."""
        ids = self._ids_of_size(size)
        if not len(ids):
            return -1
        row = self._row(size)  # first: a new size may grow the flags
        flags = self.flags[row]
        return int(
            _search(self.dates, self.words, flags, self.count, first, duration, self._masks, ids.start, ids.stop, *self._memo[2:])
        )

    def earliest_mfp(self, size: int, floor: float, duration: float) -> tuple[int, int]:
        """The first step at or after ``floor`` whose window of ``duration`` seconds holds a free partition of ``size``, and the MFP heuristic's partition there.

        Returns:
            (step index, partition id); (-1, -1) when none (or the size has no partition shape).
        """
        ids = self._ids_of_size(size)
        if not len(ids):
            return -1, -1
        row = self._row(size)  # first: a new size may grow the flags
        index, where = _earliest_mfp(
            self.dates,
            self.words,
            self.flags[row],
            self.count,
            floor,
            duration,
            self._masks,
            self._sizes,
            self._supernodes,
            ids.start,
            ids.stop,
            *self._memo,
        )
        return int(index), int(where)

    def first_at(self, floor: float) -> int:
        """The first step whose date is at or after ``floor`` (seconds); ``count`` when none is."""
        return int(_first_at(self.dates, self.count, floor))

    def window(self, index: int, duration: float) -> np.ndarray:
        """uint64 ``(K,)``: the supernodes taken at any time in [dates[index], dates[index] + duration)."""
        window = np.empty(self.words.shape[1], dtype=np.uint64)
        _window_words(self.dates, self.words, self.count, index, duration, window)
        return window

    def mfp_choice(self, size: int, window: np.ndarray) -> int:
        """The MFP heuristic's choice among the free partitions of ``size`` under ``window`` (-1: none free).

        The same partition as :class:`~torus_sim.policies.placement.MfpPlacement` given those candidates
        and that occupancy (BGL-FAULT §5.1, Fig. 1; Krevat et al., JSSPP 2002); tests/test_flat_policies.py
        compares them on random occupancies.
        """
        ids = self._ids_of_size(size)
        if not len(ids):
            return -1
        return int(_mfp_remembered(*self._memo[:2], self._masks, self._sizes, self._supernodes, ids.start, ids.stop, window))

    def free_ids(self, size: int, window: np.ndarray) -> np.ndarray:
        """int64 ids of the partitions of ``size`` free under ``window`` (uint64 ``(K,)``), ascending."""
        ids = self._ids_of_size(size)
        if not len(ids):
            return np.empty(0, dtype=np.int64)
        return _free_ids(self._masks, ids.start, ids.stop, window)

    def open_for(self, size: int) -> float:
        """Seconds from the first step during which some partition of ``size`` stays free (0.0: none now; inf: always)."""
        ids = self._ids_of_size(size)
        return float(_open_for(self.dates, self.words, self.count, self._masks, ids.start, ids.stop))

    def _room(self, more: int) -> None:
        """Grow the arrays (doubling) until ``more`` steps fit after the ones in use."""
        held = len(self.dates)
        if self.count + more > held:
            room = max(2 * held, self.count + more)
            self.dates = np.resize(self.dates, room)
            self.words = np.concatenate([self.words, np.zeros((room - held, self.words.shape[1]), dtype=np.uint64)])
            self.flags = np.concatenate([self.flags, np.ones((self.flags.shape[0], room - held), dtype=np.uint8)], axis=1)

    def advance(self, now: float) -> None:
        """Drop the steps that ended by ``now`` (seconds, at or after the first date): the step holding ``now`` becomes the first, dated ``now``.

        The flags and the staircases stay: the steps left are the same, and a floor below ``now`` is read as ``now``.
        """
        index = int(_bisect_right(self.dates, 0, self.count, now)) - 1
        if index > 0:
            left = self.count - index
            self.dates[:left] = self.dates[index : self.count]  # numpy copies overlapping slices through a buffer
            self.words[:left] = self.words[index : self.count]
            self.flags[:, :left] = self.flags[:, index : self.count]
            self.count = left
        self.dates[0] = now

    def cancel(self, starts: np.ndarray, ends: np.ndarray, wheres: np.ndarray) -> None:
        """Undo reservations :meth:`reserve` made: each partition given back over its window (both dates breakpoints).

        Args:
            starts: float64 ``(n,)``, the windows' starts, seconds (inf: took nothing).
            ends: float64 ``(n,)``, their ends, seconds.
            wheres: int64 ``(n,)``, their partition ids (-1: took nothing).

        The steps' flags there are set to 1 (maybe free) and every row's start floors dropped: they held
        only while the profile filled.

        References:
            Mu'alem and Feitelson, IEEE TPDS 12(6), 2001 (the profile); BGL-FAULT Appendix 9 (occupancies as bitmasks).
        """
        _cancel(self.dates, self.words, self.flags, self.count, starts, ends, wheres, self._masks)
        self._stair_steps[:] = 0

    def reserve(self, start_at: float, end_at: float, where: int) -> None:
        """Take partition ``where`` over [start_at, end_at) (seconds, ``start_at`` >= the first date), splitting steps there."""
        self._room(2)
        self.count = int(
            _reserve(self.dates, self.words, self.flags, len(self._rows), self.count, start_at, end_at, self._masks[where])
        )

    def plan(self, now: float, sizes: list[int], durations: list[float]) -> tuple[list[float], list[int], int]:
        """Reserve for jobs in priority order with the MFP heuristic, as far as a later job could still start now.

        What :meth:`~torus_sim.policies.availability.PartitionProfile.earliest`,
        :meth:`~torus_sim.policies.availability.PartitionProfile.reserve` and
        :class:`~torus_sim.policies.availability.StartsLeft` give job after job, in one compiled call.

        Args:
            now: the pass's time (the first step's date), seconds.
            sizes: the jobs' partition sizes, supernodes.
            durations: their predicted durations, seconds (> 0).

        Returns:
            (start of each job taken, seconds (inf: never); its partition id (-1: none); jobs taken).
        """
        job_sizes = np.asarray(sizes, dtype=np.int64)
        jobs = len(job_sizes)
        if jobs and 0 < job_sizes.min() and job_sizes.max() < len(self._row_of):
            job_rows = self._row_of[job_sizes]
            if job_rows.min() < 0:  # sizes first seen: their rows first (they may grow the flags)
                for size in np.unique(job_sizes[job_rows < 0]).tolist():
                    self._row(size)
                job_rows = self._row_of[job_sizes]
        else:
            job_rows = np.array([self._row(int(size)) for size in job_sizes.tolist()], dtype=np.int64)
        rows = len(self._rows)
        self._room(2 * jobs)
        self._stair_room(rows, jobs)
        out_start = np.empty(jobs, dtype=np.float64)
        out_where = np.empty(jobs, dtype=np.int64)
        self.count, taken = _plan(
            self.dates, self.words, self.flags, rows, self.count, now, job_rows, np.asarray(durations, dtype=np.float64),
            self._ranges, self._masks, self._sizes, self._supernodes, *self._memo,
            self._stair_durations, self._stair_starts, self._stair_steps, out_start, out_where,
        )  # fmt: skip
        return out_start[:taken].tolist(), out_where[:taken].tolist(), int(taken)

    def _stair_room(self, rows: int, more: int) -> None:
        """Room in the staircases for ``rows`` rows and ``more`` answers past the longest."""
        held = self._stair_durations.shape
        need = (max(rows, held[0]), max(held[1], int(self._stair_steps.max(initial=0)) + more + 1))
        if need != held:
            durations = np.zeros(need)
            starts = np.zeros(need)
            steps = np.zeros(need[0], dtype=np.int64)
            durations[: held[0], : held[1]] = self._stair_durations
            starts[: held[0], : held[1]] = self._stair_starts
            steps[: held[0]] = self._stair_steps
            self._stair_durations, self._stair_starts, self._stair_steps = durations, starts, steps

    def occupied_ints(self, table) -> list[int]:
        """Each step's taken supernodes as a Python int (bit i = supernode i), the Python profile's form."""
        return [table.occupied_of(row) for row in self.words[: self.count]]
