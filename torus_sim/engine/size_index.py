"""Waiting jobs of each partition size, searchable by remaining time: "the next job of size s after this one that ends by t".

Krevat's backfilling on the torus (BGL-FAULT §5.1) looks, for each partition size, for the earliest
waiting job that ends before the head's reservation when no partition keeps the head's spot for a
longer one. When RICC-2010-2 is replayed on the 4x4x8 torus as it is (offered load 8.8) hundreds of
thousands of one-supernode jobs wait, and walking them for a short one made a pass cost the queue.

Here every job of the workload has a fixed slot among the jobs of its size, in FCFS order (the order
of the queue's per-size lists), taken from the workload's columns before any job is made; a min-tree over the slots holds each waiting job's remaining time
(+inf for a job not waiting), so both "the next waiting job after slot i" and "the next one with
remaining time <= t" are a descent of the tree (O(log n)), and an entry or exit one update.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["MinTree", "SizeIndex"]


class MinTree:
    """Values on slots 0 .. count-1 (+inf at first) and the first slot from a given one whose value is <= a bound.

    Args:
        count: number of slots.

    A segment tree of minima in a Python list (leaves from ``size``), updated in O(log count).
    """

    __slots__ = ("_size", "_tree", "count")

    def __init__(self, count: int) -> None:
        self.count = int(count)
        size = 1
        while size < max(self.count, 1):
            size <<= 1
        self._size = size
        self._tree = [math.inf] * (2 * size)

    def __getitem__(self, slot: int) -> float:
        return self._tree[self._size + slot]

    def set(self, slot: int, value: float) -> None:
        """Put ``value`` at ``slot`` (math.inf: empty); O(log count).

        Args:
            slot: 0 .. count-1.
            value: a remaining time in seconds (finite), or math.inf to empty the slot.

        Raises:
            IndexError: ``slot`` beyond the tree's leaves.
        """
        tree = self._tree
        index = self._size + slot
        tree[index] = value
        index >>= 1
        while index:
            left, right = tree[2 * index], tree[2 * index + 1]
            least = left if left <= right else right
            if tree[index] == least:  # unchanged here: unchanged above (each node is its children's minimum)
                break
            tree[index] = least
            index >>= 1

    def first_at_most(self, start: int, bound: float) -> int:
        """The first slot ``>= start`` whose value is ``<= bound``, or -1.

        Args:
            start: the first slot to consider (any integer >= 0).
            bound: the largest value accepted (math.inf: any non-empty slot is not found by this; use
                :meth:`first_filled`).
        """
        if start >= self.count:
            return -1
        tree, size = self._tree, self._size
        index = size + start
        if tree[index] <= bound:
            return start
        while index > 1:
            if not index & 1 and tree[index + 1] <= bound:  # a left child whose right sibling holds one
                index += 1
                break
            index >>= 1
        else:
            return -1
        while index < size:
            index <<= 1
            if tree[index] > bound:
                index += 1
        return index - size

    def least(self) -> float:
        """The least value (math.inf when every slot is empty)."""
        return self._tree[1]

    def first_filled(self, start: int) -> int:
        """The first slot ``>= start`` with a finite value, or -1."""
        return self.first_at_most(start, _LARGEST)


_LARGEST = 1.7976931348623157e308  # the largest float: every finite value is <= it


class SizeIndex:
    """Every job's slot among the workload's jobs of its size, and one :class:`MinTree` per size.

    Args:
        jobs: the run's jobs in rank order, read by column (``partition_size``, ``submitted_at``,
            ``job_id``: :class:`~torus_sim.engine.arrivals.RunJobs`); each size's jobs get slots in
            FCFS order, ``(submitted_at, job_id)`` (:func:`~torus_sim.core.job.fcfs_key`), fixed per job.
        remaining: ``job -> seconds``, the remaining time the index searches by (its walltime for
            Krevat, the run's prediction for EASY), asked when a job enters the queue.
        holds: what ``remaining`` gives, ``"walltime"`` or ``"predicted"`` (a pass checks it asks the same).

    The slots come from the workload's columns, so no job is made before it arrives; the index holds
    the waiting jobs only (a slot's job from its entry to its exit). The remaining time must not
    change while a job waits (the engine changes predictions, saved work and checkpoint settings only
    outside the queue).
    """

    __slots__ = ("_jobs", "_remaining", "_slot", "_trees", "holds")

    def __init__(self, jobs, remaining, holds: str = "predicted") -> None:
        self._remaining = remaining
        self.holds = holds
        sizes = jobs.column("partition_size")
        fcfs = np.lexsort((jobs.column("job_id"), jobs.column("submitted_at")))  # stable: rank breaks a tie
        ordered_sizes = sizes[fcfs]
        self._slot = np.empty(len(sizes), dtype=np.int64)  # rank -> slot among its size's jobs
        self._jobs: dict[int, dict[int, object]] = {}  # size -> slot -> the waiting job there
        self._trees: dict[int, MinTree] = {}
        for size in sorted(set(sizes.tolist())):  # not np.unique: it imports numpy.ma at a run's start
            members = fcfs[ordered_sizes == size]
            self._slot[members] = np.arange(len(members))
            self._jobs[size] = {}
            self._trees[size] = MinTree(len(members))

    def enter(self, job) -> None:
        """``job`` entered the queue: its slot holds its remaining time (seconds, asked now).

        Raises:
            KeyError: ``job``'s size is not one of the run's.
        """
        slot = int(self._slot[job.rank])
        self._jobs[job.partition_size][slot] = job
        self._trees[job.partition_size].set(slot, self._remaining(job))

    def leave(self, job) -> None:
        """``job`` left the queue: its slot is emptied.

        Raises:
            KeyError: ``job``'s size is not one of the run's.
        """
        slot = int(self._slot[job.rank])
        del self._jobs[job.partition_size][slot]
        self._trees[job.partition_size].set(slot, math.inf)

    def slot(self, job) -> int:
        """The job's slot among the jobs of its size."""
        return int(self._slot[job.rank])

    def job(self, size: int, slot: int):
        """The waiting job at ``slot`` of ``size``.

        Raises:
            KeyError: no job waits there.
        """
        return self._jobs[size][slot]

    def next_waiting(self, size: int, slot: int) -> int:
        """The first waiting job's slot of ``size`` at or after ``slot``, or -1."""
        tree = self._trees.get(size)
        return -1 if tree is None else tree.first_filled(slot)

    def next_ending_by(self, size: int, slot: int, slack: float) -> int:
        """The first waiting job's slot of ``size`` at or after ``slot`` whose remaining time is <= ``slack`` seconds, or -1."""
        tree = self._trees.get(size)
        return -1 if tree is None else tree.first_at_most(slot, slack if slack < _LARGEST else _LARGEST)

    def sizes(self) -> list[int]:
        """Partition sizes with a waiting job, ascending (a size's tree holds a finite value)."""
        return sorted(size for size, tree in self._trees.items() if tree.least() < math.inf)

    def least(self, size: int) -> float:
        """The least remaining time among the waiting jobs of ``size`` (seconds; math.inf when none waits)."""
        tree = self._trees.get(size)
        return math.inf if tree is None else tree.least()

    def waiting(self, size: int) -> list:
        """The waiting jobs of ``size`` in slot (queue) order, as a new list."""
        found = []
        slot = self.next_waiting(size, 0)
        while slot >= 0:
            found.append(self._jobs[size][slot])
            slot = self.next_waiting(size, slot + 1)
        return found
