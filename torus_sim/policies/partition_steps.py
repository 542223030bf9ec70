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

import numba
import numpy as np

__all__ = ["StepArrays"]


@numba.njit(cache=True)
def _any_free(masks, start, end, words):  # pragma: no cover - compiled
    """Whether a partition in ``[start, end)`` of ``masks`` (``(P, K)`` uint64) meets none of ``words``."""
    width = masks.shape[1]
    for partition in range(start, end):
        free = True
        for k in range(width):
            if masks[partition, k] & words[k]:
                free = False
                break
        if free:
            return True
    return False


@numba.njit(cache=True)
def _search(dates, words, flags, count, first, duration, masks, start, end):  # pragma: no cover - compiled
    """The first step from ``first`` on whose window holds a free partition of ``[start, end)``; -1: none.

    A step is tried only when its flag is set; a step with no partition free in it alone gets flag 0.
    The window of step i is the steps j >= i with ``dates[j] < dates[i] + duration``.
    """
    width = words.shape[1]
    window = np.empty(width, dtype=np.uint64)
    for index in range(first, count):
        if flags[index] == 0:
            continue
        if not _any_free(masks, start, end, words[index]):
            flags[index] = 0
            continue
        end_at = dates[index] + duration
        for k in range(width):
            window[k] = words[index, k]
        later = index + 1
        while later < count and dates[later] < end_at:
            for k in range(width):
                window[k] |= words[later, k]
            later += 1
        if _any_free(masks, start, end, window):
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
        self._ids_of_size = table.ids_of_size
        self.count = len(dates)
        room = max(16, 2 * self.count)
        self.dates = np.empty(room, dtype=np.float64)
        self.dates[: self.count] = dates
        self.words = np.zeros((room, self._masks.shape[1]), dtype=np.uint64)
        self.words[: self.count] = words
        self.flags = np.ones((4, room), dtype=np.uint8)
        self._rows: dict[int, int] = {}  # size -> its row of flags

    def _row(self, size: int) -> int:
        row = self._rows.get(size)
        if row is None:
            row = self._rows[size] = len(self._rows)
            if row == self.flags.shape[0]:
                self.flags = np.concatenate([self.flags, np.ones_like(self.flags)])
            self.flags[row, : self.count] = 1
        return row

    def search(self, size: int, first: int, duration: float) -> int:
        """The first step from index ``first`` whose window of ``duration`` seconds holds a free partition of ``size``; -1: none."""
        ids = self._ids_of_size(size)
        if not len(ids):
            return -1
        row = self._row(size)  # first: a new size may grow the flags
        flags = self.flags[row]
        return int(_search(self.dates, self.words, flags, self.count, first, duration, self._masks, ids.start, ids.stop))

    def split(self, index: int, date: float) -> None:
        """Insert a step dated ``date`` after step ``index``, a copy of it."""
        if self.count == len(self.dates):
            room = 2 * len(self.dates)
            self.dates = np.resize(self.dates, room)
            self.words = np.concatenate([self.words, np.zeros_like(self.words)])
            self.flags = np.concatenate([self.flags, np.ones_like(self.flags)], axis=1)
        _split(self.dates, self.words, self.flags, len(self._rows), self.count, index, date)
        self.count += 1

    def take(self, first: int, last: int, where: int) -> None:
        """Mark partition ``where``'s supernodes taken in steps ``[first, last)``."""
        _take(self.words, first, last, self._masks[where])
