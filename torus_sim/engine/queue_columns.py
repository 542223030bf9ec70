"""The waiting jobs as numpy columns in one order: partition size, predicted remaining time and rank.

A backfilling pass asks, of every waiting job after the head, "does it fit in the free nodes and
end by the shadow time, or fit in the extra nodes?". On RICC-2010-2 the queue holds thousands of
jobs for days and a pass runs at every arrival and end, so that question, asked one job at a time
in Python, grew with the queue. Kept as columns (updated when a job enters or leaves the queue) it
is a few vectorized comparisons per pass (:func:`torus_sim.policies.backfilling.easy_pass`).

The predicted remaining time is taken once, when the job enters the queue: the engine changes a
job's prediction, saved work and checkpoint settings only while it is not waiting (at arrival, at a
start, a kill, a preemption or a silent error), so the value is the one a pass would ask for.
"""

from __future__ import annotations

import operator
from bisect import bisect_left, bisect_right

import numpy as np

from torus_sim.core.errors import SimulationError

__all__ = ["JobColumns"]

_SMALLEST = 1024  # rows allocated at first


def position(keys: list, jobs: list, entry, job) -> int:
    """Where ``job`` sits in ``jobs`` (ascending ``keys``): its key's first position, then along equal keys; -1 if absent.

    Args:
        keys: the jobs' keys, ascending (equal keys in insertion order).
        jobs: the jobs, in the same order.
        entry: ``job``'s key.
        job: the job looked for (by identity).
    """
    index = bisect_left(keys, entry)
    end = len(jobs)
    while index < end and jobs[index] is not job and keys[index] == entry:
        index += 1
    return index if index < end and jobs[index] is job else -1


class JobColumns:
    """Waiting jobs in ascending order of a key, with their sizes, predicted remaining times and ranks as numpy columns.

    Args:
        remaining: ``job -> seconds``, the predicted remaining time of a waiting job (the engine's
            :meth:`~torus_sim.engine.progress.CheckpointProgress.predicted_remaining`), asked once per entry.
        key: ``(job, remaining seconds) -> key``, unique per job (smaller first); None: the key the
            caller passes to :meth:`insert` (the wait queue's own order).

    Attributes:
        jobs: the jobs in order (read only).

    The columns live in buffers with free rows on both sides, so a job leaving the front (the usual
    start of the head) or entering at the back (an arrival) moves nothing, and one in the middle
    moves the shorter side.
    """

    __slots__ = ("_hi", "_key", "_keys", "_lo", "_ranks", "_remaining", "_rems", "_sizes", "jobs")

    def __init__(self, remaining, key=None) -> None:
        self._remaining = remaining
        self._key = key
        self._keys: list = []
        self.jobs: list = []
        self._sizes = np.empty(_SMALLEST, dtype=np.int64)
        self._rems = np.empty(_SMALLEST, dtype=np.float64)
        self._ranks = np.empty(_SMALLEST, dtype=np.int64)
        self._lo = self._hi = _SMALLEST // 2

    def __len__(self) -> int:
        return len(self.jobs)

    @property
    def sizes(self) -> np.ndarray:
        """Partition sizes (nodes) of the waiting jobs in order, shape (n,), int64; a view: copy before the queue changes."""
        return self._sizes[self._lo : self._hi]

    @property
    def remaining(self) -> np.ndarray:
        """Predicted remaining times (seconds) of the waiting jobs in order, shape (n,), float64; a view."""
        return self._rems[self._lo : self._hi]

    @property
    def ranks(self) -> np.ndarray:
        """Ranks (positions in the run's job list) of the waiting jobs in order, shape (n,), int64; a view."""
        return self._ranks[self._lo : self._hi]

    def key_of(self, job, key=None):
        """The key ``job`` sorts by here.

        Args:
            job: a job.
            key: its key in the caller's order, returned as it is when the columns follow that order.

        Returns:
            ``key``, or ``key(job, remaining seconds)`` of the columns' own order (SJF: (seconds, rank)).
        """
        return key if self._key is None else self._key(job, self._remaining(job))

    def insert(self, job, key=None) -> None:
        """Add a job at its key's position (after equal keys).

        Args:
            job: the job entering the queue.
            key: its key in the caller's order (when the columns were made without ``key``).
        """
        entry = self.key_of(job, key)
        keys = self._keys
        index = bisect_right(keys, entry) if keys and entry < keys[-1] else len(keys)
        keys.insert(index, entry)
        self.jobs.insert(index, job)
        count = len(keys) - 1  # rows before this one
        lo, hi = self._lo, self._hi
        if index == count and hi < len(self._sizes):
            row = hi
            self._hi = hi + 1
        elif index == 0 and lo > 0:
            row = lo = self._lo = lo - 1
        else:
            if lo == 0 or hi == len(self._sizes):
                self._room(count + 1)
                lo, hi = self._lo, self._hi
            row = lo + index
            if index < count - index:  # move the front rows one up
                self._shift(lo, row, -1)
                row -= 1
                self._lo = lo - 1
            else:  # move the back rows one down
                self._shift(row, hi, 1)
                self._hi = hi + 1
        self._sizes[row] = job.partition_size
        self._rems[row] = self._remaining(job)
        self._ranks[row] = job.rank

    def fill(self, jobs: list, keys: list) -> None:
        """Replace the content with ``jobs`` already in order (a burst of arrivals on an empty queue).

        Args:
            jobs: the jobs, ascending by key.
            keys: their keys (the caller's when the columns follow its order), ascending.
        """
        if self._key is not None:
            keys = [self._key(job, self._remaining(job)) for job in jobs]
            order = sorted(range(len(jobs)), key=keys.__getitem__)
            jobs = [jobs[index] for index in order]
            keys = [keys[index] for index in order]
        count = len(jobs)
        rows = max(_SMALLEST, 4 * count)
        self._sizes = np.empty(rows, dtype=np.int64)
        self._rems = np.empty(rows, dtype=np.float64)
        self._ranks = np.empty(rows, dtype=np.int64)
        self._lo = lo = (rows - count) // 2
        self._hi = lo + count
        self._sizes[lo : self._hi] = [job.partition_size for job in jobs]
        remaining = self._remaining
        self._rems[lo : self._hi] = [remaining(job) for job in jobs]
        self._ranks[lo : self._hi] = [job.rank for job in jobs]
        self.jobs = list(jobs)
        self._keys = list(keys)

    def reorder(self, jobs: list, keys: list, order=None) -> None:
        """Put the same jobs in a new order (a reordered queue), their rows moved, nothing asked again.

        A waiting job's size, predicted remaining time and rank do not change while it waits, so its row moves
        with it.

        Args:
            jobs: the jobs here, ascending by their new keys.
            keys: those keys (the caller's order; columns made without ``key``), ascending.
            order: where each job was: ``jobs[i]`` is the job of row ``order[i]`` before (the caller's sort of the
                rows by their new keys), or None: found by the jobs' identities.

        Raises:
            SimulationError: the columns have their own order (``key``: it does not follow the caller's), or ``jobs``
                are not the jobs here.
        """
        if self._key is not None:
            raise SimulationError("columns in their own order do not follow the queue's")
        if len(jobs) == len(self.jobs) and all(map(operator.is_, jobs, self.jobs)):  # the same order: only the keys move
            self._keys = list(keys)
            return
        if order is not None:
            if len(order) != len(self.jobs) or len(jobs) != len(self.jobs):
                raise SimulationError("a reorder keeps the same jobs")
            order = np.asarray(order, dtype=np.int64)
        else:
            rows = {id(job): row for row, job in enumerate(self.jobs)}
            if len(jobs) != len(rows):
                raise SimulationError("a reorder keeps the same jobs")
            try:
                order = np.fromiter((rows[id(job)] for job in jobs), dtype=np.int64, count=len(jobs))
            except KeyError:
                raise SimulationError("a reorder keeps the same jobs") from None
        live = slice(self._lo, self._hi)
        for column in (self._sizes, self._rems, self._ranks):
            column[live] = column[live][order]
        self.jobs = list(jobs)
        self._keys = list(keys)

    def index(self, job, key=None) -> int:
        """The row of a job here (0 = first).

        Args:
            job: a job inserted before.
            key: its key in the caller's order (when the columns were made without ``key``).

        Raises:
            SimulationError: the job is not here.
        """
        jobs = self.jobs
        if jobs and jobs[0] is job:
            return 0
        index = position(self._keys, jobs, self.key_of(job, key), job)
        if index < 0:
            raise SimulationError(f"{job!r} is not in the queue's columns")
        return index

    def remove(self, job, key=None) -> None:
        """Take a job out.

        Args:
            job: a job inserted before.
            key: its key in the caller's order (when the columns were made without ``key``).

        Raises:
            SimulationError: the job is not here.
        """
        index = self.index(job, key)
        jobs = self.jobs
        del jobs[index]
        del self._keys[index]
        lo, hi = self._lo, self._hi
        row = lo + index
        if index == 0:
            self._lo = lo + 1
        elif row == hi - 1:
            self._hi = hi - 1
        elif index < hi - row:  # move the front rows one down
            self._shift(lo, row, 1)
            self._lo = lo + 1
        else:
            self._shift(row + 1, hi, -1)
            self._hi = hi - 1

    def _shift(self, start: int, stop: int, by: int) -> None:
        """Move rows ``start .. stop-1`` of every column by ``by`` rows (numpy copies overlapping slices right)."""
        for column in (self._sizes, self._rems, self._ranks):
            column[start + by : stop + by] = column[start:stop]

    def _room(self, count: int) -> None:
        """Re-centre the rows in buffers of at least twice ``count`` rows (free rows on both sides)."""
        rows = max(_SMALLEST, 4 * count)
        live = slice(self._lo, self._hi)
        lo = (rows - (self._hi - self._lo)) // 2
        for name in ("_sizes", "_rems", "_ranks"):
            old = getattr(self, name)
            new = np.empty(rows, dtype=old.dtype)
            new[lo : lo + self._hi - self._lo] = old[live]
            setattr(self, name, new)
        self._hi = lo + self._hi - self._lo
        self._lo = lo
