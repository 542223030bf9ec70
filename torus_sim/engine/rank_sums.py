"""Sums over job ranks that a pass asks often: a Fenwick (binary indexed) tree of the running jobs' sizes.

PV-EASY's fairness columns ask at every pass how many nodes the running jobs of lower priority than
the head hold (§3.1: could the head have started without them?). Summing over every running job
made that question cost the whole running set per pass (the largest share of an online pass on a
8,192-processor cluster with ~30 running jobs); the tree answers it in O(log n) and is updated in
O(log n) at each start and end. Up to :data:`DENSE_RANKS` jobs the tree is a list (an update half the time
of a dict's: CTC-SP2's 154,000 updates 0.26 -> 0.13 s); beyond, it is sparse (a dict of its non-zero nodes):
it holds O(running jobs x log n) entries, not one per job of the log (a 10-million-job log's list was 80 MB).

References:
    Fenwick, "A new data structure for cumulative frequency tables", Software: Practice and
    Experience 24(3), 1994; PV-EASY §3.1 (the head's readiness without the backfilled jobs).
"""

from __future__ import annotations

__all__ = ["DENSE_RANKS", "RankSums"]

DENSE_RANKS = 1 << 20
"""Ranks up to which the tree is a list (8 MB at most); a dict of its non-zero nodes beyond."""


class RankSums:
    """Integer amounts keyed by job rank (0 .. count-1), with sums over the ranks above a given one.

    Args:
        count: number of ranks (jobs of the workload).

    Attributes:
        total: the sum of every amount.

    Raises:
        IndexError: from :meth:`add` with a rank outside 0 .. count-1.
    """

    __slots__ = ("_asked", "_asked_sum", "_dense", "_size", "_tree", "total")

    def __init__(self, count: int) -> None:
        self._size = int(count)
        self._dense = self._size <= DENSE_RANKS
        # node -> its sum: every node in a list, or only the non-zero ones in a dict (a node back at 0 is removed)
        self._tree: list[int] | dict[int, int] = [0] * (self._size + 1) if self._dense else {}
        self.total = 0
        self._asked = -2  # the rank :meth:`above` was last asked about (a pass asks of its head, again and again)
        self._asked_sum = 0  # its answer, kept up to date by :meth:`add`

    def add(self, rank: int, amount: int) -> None:
        """Add ``amount`` (negative to take away) at ``rank``."""
        if not 0 <= rank < self._size:
            raise IndexError(f"rank {rank} outside 0..{self._size - 1}")
        self.total += amount
        if rank > self._asked:
            self._asked_sum += amount
        tree, size = self._tree, self._size
        index = rank + 1
        if self._dense:
            while index <= size:
                tree[index] += amount
                index += index & -index
            return
        while index <= size:
            value = tree.get(index, 0) + amount
            if value:
                tree[index] = value
            else:
                tree.pop(index, None)
            index += index & -index

    def above(self, rank: int) -> int:
        """The sum of the amounts at ranks greater than ``rank`` (any integer)."""
        if rank < 0:
            return self.total
        if rank == self._asked:
            return self._asked_sum
        tree = self._tree
        index = min(rank + 1, self._size)
        below = 0
        if self._dense:
            while index > 0:
                below += tree[index]
                index -= index & -index
        else:
            get = tree.get
            while index > 0:
                below += get(index, 0)
                index -= index & -index
        self._asked, self._asked_sum = rank, self.total - below
        return self._asked_sum
