"""Every partition of a torus as a bitmask (BGL-FAULT Appendix 9's SHAPES x bases, once per torus): fast free-partition and MFP queries.

One query "which partitions of size s are free?" is one vectorized AND over the partitions of size s;
shapes, sizes and the plain reference finders are in :mod:`torus_sim.machine.partitions`.
"""

from __future__ import annotations

import numpy as np

from torus_sim.core.errors import ConfigurationError
from torus_sim.machine.partitions import MAX_PARTITIONS, Partition, feasible_sizes, partition_count, partitions_of_size
from torus_sim.machine.topology import Torus

__all__ = [
    "DISJOINT_MEMO_SIZE",
    "FREE_FLAGS_MEMO_SIZE",
    "FREE_IDS_MEMO_SIZE",
    "MFP_AFTER_MEMO_SIZE",
    "MFP_CHOICE_MEMO_SIZE",
    "PartitionTable",
]

MFP_AFTER_MEMO_SIZE = 4096
"""Answers :meth:`PartitionTable.mfp_after` keeps (the memo is emptied when full; about 10 MiB at most)."""

MFP_CHOICE_MEMO_SIZE = 16_384
"""Answers :meth:`PartitionTable.mfp_choice` keeps (emptied when full; about 5 MiB at most)."""

FREE_IDS_MEMO_SIZE = 16_384
"""Answers :meth:`PartitionTable.free_ids_of_size` keeps (emptied when full; about 10 MiB at most)."""

FREE_FLAGS_MEMO_SIZE = 1024
"""Answers :meth:`PartitionTable.free_flags` keeps (emptied when full; 10 MiB on the 4x4x8 torus, 9,633 partitions)."""

DISJOINT_MEMO_SIZE = 16_384
"""Answers :meth:`PartitionTable.disjoint_from_any` keeps (emptied when full; a few MiB at most)."""


def _remember(memo: dict, limit: int, key, answer):
    """Store a computed answer in a bounded memo (emptied when it holds ``limit``) and return it; arrays read-only."""
    if isinstance(answer, np.ndarray):
        answer.setflags(write=False)
    if len(memo) >= limit:
        memo.clear()
    memo[key] = answer
    return answer


def _pack_bits(flags: np.ndarray) -> np.ndarray:
    """Bool ``(..., n)`` -> uint64 ``(..., ceil(n / 64))``, bit i of word i // 64 for flag i (little-endian)."""
    flags = np.asarray(flags, dtype=bool)
    width = -(-flags.shape[-1] // 64) * 64
    if flags.shape[-1] != width:
        flags = np.pad(flags, [(0, 0)] * (flags.ndim - 1) + [(0, width - flags.shape[-1])])
    return np.packbits(flags, axis=-1, bitorder="little").view(np.uint64)


def _members(partitions: list[Partition], torus: Torus, width: int) -> tuple[list[np.ndarray], np.ndarray]:
    """Each partition's supernodes, ascending (:meth:`Partition.supernodes` of each), and as bool flags ``(P, width)``.

    The flags (``width >= N``) have row p set at p's supernodes. The partitions of one shape differ only in their base: the box's offsets are made once and added to
    every base at once (the 4x4x8 torus's 9,633 partitions: 0.39 s one at a time, ~0.03 s by shape).
    """
    dims = np.array(torus.dims, dtype=np.int64)
    by_shape: dict[tuple[int, ...], list[int]] = {}
    for pid, partition in enumerate(partitions):
        by_shape.setdefault(partition.shape, []).append(pid)
    members: list[np.ndarray | None] = [None] * len(partitions)
    flags = np.zeros((len(partitions), width), dtype=bool)
    for shape, pids in by_shape.items():
        offsets = np.stack(np.meshgrid(*(np.arange(extent) for extent in shape), indexing="ij"), axis=-1).reshape(-1, len(shape))
        bases = np.array([partitions[pid].base for pid in pids], dtype=np.int64)
        coordinates = (bases[:, None, :] + offsets[None, :, :]) % dims  # (partitions, cells, dimensions)
        indices = np.sort(np.ravel_multi_index(tuple(np.moveaxis(coordinates, -1, 0)), torus.dims), axis=1).astype(np.int64)
        for row, pid in enumerate(pids):
            members[pid] = indices[row]
        flags[np.array(pids)[:, None], indices] = True
    return members, flags


class PartitionTable:
    """Every partition of a torus as a bitmask, for fast free-partition and MFP queries.

    Partitions are numbered by descending size, then shape, then base, so partition ids of
    one size form a contiguous range and a lower id is never smaller. An occupancy is packed
    into ``words`` (uint64 array of shape ``(K,)``, K = ceil(N / 64), bit i = supernode i).

    Args:
        torus: the torus; its partition count must not exceed ``max_partitions``.
        max_partitions: refuse tori with more partitions than this (memory guard).

    Raises:
        ConfigurationError: the torus has too many partitions to tabulate; use
            :func:`free_partitions_by_box_sums` for it.

    References:
        BGL-FAULT Appendix 9 (the finder), §5.1 (MFP).
    """

    def __init__(self, torus: Torus, max_partitions: int | None = None) -> None:
        max_partitions = MAX_PARTITIONS if max_partitions is None else max_partitions
        self.torus = torus
        sizes = feasible_sizes(torus)
        if partition_count(torus) > max_partitions:
            raise ConfigurationError(f"torus {torus.dims} has too many partitions to tabulate (> {max_partitions})")
        self.words = (torus.size + 63) // 64
        partitions: list[Partition] = []
        for size in reversed(sizes):
            partitions.extend(partitions_of_size(torus, size))
        self.partitions = partitions
        self.sizes = np.array([p.size for p in partitions], dtype=np.int64)
        self.members, member_flags = _members(partitions, torus, self.words * 64)
        self.masks = self.pack(member_flags)
        self._mask_columns = [np.ascontiguousarray(self.masks[:, k]) for k in range(self.words)]
        self._size_range: dict[int, tuple[int, int]] = {}
        starts = np.flatnonzero(np.r_[True, self.sizes[1:] != self.sizes[:-1]])
        ends = np.r_[starts[1:], len(partitions)]
        self._group_starts = starts
        self._group_sizes = self.sizes[starts]
        for start, end in zip(starts, ends, strict=True):
            self._size_range[int(self.sizes[start])] = (int(start), int(end))
        self._mfp_after_memo: dict[tuple[bytes, bytes], np.ndarray] = {}
        self._free_ids_memo: dict[tuple[int, int], np.ndarray] = {}
        self._disjoint_memo: dict[tuple[bytes, bytes], np.ndarray] = {}
        self._mask_ints: list[int] | None = None  # see mask_ints
        self._free_flags_memo: dict[bytes, np.ndarray] = {}
        self._open_sizes_memo: dict[int, frozenset[int]] = {}
        self._disjoint: np.ndarray | None = None  # see _disjoint_bits
        self._disjoint_cols: list[np.ndarray | None] = [None] * -(-len(partitions) // 64)  # see _disjoint_column
        self._apart: list[tuple[np.ndarray, np.ndarray]] | None = None  # see _apart_by_axis
        self._disjoint_row_memo: dict[int, np.ndarray] = {}  # see disjoint_row
        self._mfp_choice_memo: dict[tuple[bytes, bytes], int] = {}
        group_ends = np.r_[starts[1:], len(partitions)]
        self._group_end_of = np.repeat(group_ends, group_ends - starts).tolist()  # partition id -> end of its size's ids
        self._free_bits_memo: dict[bytes, np.ndarray] = {}
        self._bit_buffer = np.zeros(-(-len(partitions) // 64) * 64, dtype=bool)  # padded flags, packed in place

    def pack(self, flags: np.ndarray) -> np.ndarray:
        """Pack boolean supernode flags into uint64 words.

        Args:
            flags: bool array of shape ``(..., N)`` or ``(..., K * 64)``.

        Returns:
            uint64 array of shape ``(..., K)``.
        """
        width = self.words * 64
        if flags.shape == (width,) and flags.dtype == bool:  # one occupancy of a torus of K * 64 supernodes
            return np.packbits(flags, bitorder="little").view(np.uint64)
        if flags.ndim == 1 and flags.dtype == bool and flags.shape[0] < width:  # one occupancy (Mira's 96 midplanes)
            padded = np.zeros(width, dtype=bool)
            padded[: flags.shape[0]] = flags
            return np.packbits(padded, bitorder="little").view(np.uint64)
        flags = np.asarray(flags, dtype=bool)
        if flags.shape[-1] != width:
            pad = [(0, 0)] * (flags.ndim - 1) + [(0, width - flags.shape[-1])]
            flags = np.pad(flags, pad)
        packed = np.packbits(flags, axis=-1, bitorder="little")
        return packed.view(np.uint64) if flags.ndim == 1 else packed.view(np.uint64).reshape(*flags.shape[:-1], self.words)

    @property
    def mask_ints(self) -> list[int]:
        """Partition id -> its supernodes as a Python int (bit i = supernode i), made on first use.

        An occupancy as one int (:meth:`occupied_of`) takes a partition with one ``|``, and is its own
        memo key: Krevat's reservation releases running jobs onto it one instant after another.

        Returns:
            A list of P non-negative ints below ``2 ** (64 * K)`` (the same bits as :attr:`masks`).

        References:
            BGL-FAULT §3.3 and Appendix 9 (partitions as sets of supernodes).
        """
        if self._mask_ints is None:
            self._mask_ints = [self.occupied_of(mask) for mask in self.masks]
        return self._mask_ints

    def occupied_of(self, words: np.ndarray) -> int:
        """A packed occupancy as a Python int, bit i = supernode i.

        Args:
            words: uint64 ``(K,)`` (:meth:`pack`), or any uint64 array of K words (a row of :attr:`masks`).

        Returns:
            A non-negative int below ``2 ** (64 * K)``; :meth:`words_of` gives the words back.

        References:
            BGL-FAULT Appendix 9 (occupancies as bitmasks).
        """
        return int.from_bytes(words.tobytes(), "little")

    def words_of(self, occupied: int) -> np.ndarray:
        """:meth:`occupied_of` inverted: the words :meth:`pack` gives for the same supernodes.

        Args:
            occupied: taken supernodes as an int (bit i = supernode i).

        Returns:
            uint64 ``(K,)``, read-only (a view of the int's bytes).

        Raises:
            OverflowError: ``occupied`` has a bit at or past ``64 * K`` (or is negative).
        """
        return np.frombuffer(occupied.to_bytes(8 * self.words, "little"), dtype=np.uint64)

    def has_free(self, occupied: int, size: int) -> bool:
        """Whether a partition of ``size`` supernodes is free when the supernodes set in ``occupied`` are taken.

        Args:
            occupied: taken supernodes as an int (bit i = supernode i; :meth:`occupied_of`).
            size: partition size, supernodes (False when the size has no shape).

        Returns:
            True when some partition of that size holds no taken supernode (from :meth:`free_ids_under`'s memo).

        References:
            BGL-FAULT Appendix 9 (the partition finder).
        """
        return len(self.free_ids_under(occupied, size)) > 0

    def ids_of_size(self, size: int) -> range:
        """The partition ids of one size (empty when the size has no shape)."""
        start, end = self._size_range.get(size, (0, 0))
        return range(start, end)

    def free_ids_of_size(self, words: np.ndarray, size: int) -> np.ndarray:
        """Ids of the free partitions of one size (:meth:`free_ids_under` of the packed occupancy).

        Args:
            words: packed blocked supernodes, uint64 array of shape ``(K,)``.
            size: partition size.

        Returns:
            Ascending int64 ids, read-only.
        """
        return self.free_ids_under(self.occupied_of(words), size)

    def free_ids_under(self, occupied: int, size: int) -> np.ndarray:
        """Ids of the free partitions of one size when the supernodes set in ``occupied`` are taken.

        Args:
            occupied: taken supernodes as an int (bit i = supernode i; :meth:`occupied_of`).
            size: partition size, supernodes (none when the size has no shape).

        Returns:
            Ascending int64 ids, read-only (answers are memoized by occupancy and size, up to
            :data:`FREE_IDS_MEMO_SIZE`: 75% of an HPC2N replay's questions repeat one exactly).

        References:
            BGL-FAULT Appendix 9 (the partition finder).
        """
        key = (occupied, size)
        known = self._free_ids_memo.get(key)
        if known is None:
            start, end = self._size_range.get(size, (0, 0))
            if start < end:
                found = np.flatnonzero(self._free_flags(self.words_of(occupied), start, end)) + start
            else:
                found = np.empty(0, dtype=np.int64)
            known = _remember(self._free_ids_memo, FREE_IDS_MEMO_SIZE, key, found)
        return known

    def _free_flags(self, words: np.ndarray, start: int = 0, end: int | None = None) -> np.ndarray:
        columns = self._mask_columns
        hits = columns[0][start:end] & words[0]
        for k in range(1, self.words):
            hits |= columns[k][start:end] & words[k]
        return hits == 0

    def free_flags(self, words: np.ndarray) -> np.ndarray:
        """Bool ``(P,)``, read-only: which partitions are free under the packed blocked supernodes.

        Memoized by occupancy, up to :data:`FREE_FLAGS_MEMO_SIZE` answers.
        """
        key = words.tobytes()
        known = self._free_flags_memo.get(key)
        if known is None:
            known = _remember(self._free_flags_memo, FREE_FLAGS_MEMO_SIZE, key, self._free_flags(words))
        return known

    def sizes_with_free(self, flags: np.ndarray) -> set[int]:
        """The partition sizes that have at least one free partition.

        Args:
            flags: the output of :meth:`free_flags`.

        Returns:
            A set of sizes.
        """
        return set(self._group_sizes[np.logical_or.reduceat(flags, self._group_starts)].tolist())

    def open_sizes(self, words: np.ndarray) -> frozenset[int]:
        """The partition sizes with at least one free partition (:meth:`open_sizes_under` of the packed occupancy).

        Args:
            words: packed blocked supernodes, uint64 ``(K,)``.

        Returns:
            A frozenset of sizes (supernodes).
        """
        return self.open_sizes_under(self.occupied_of(words))

    def open_sizes_under(self, occupied: int) -> frozenset[int]:
        """The partition sizes with at least one free partition when the supernodes set in ``occupied`` are taken.

        Args:
            occupied: taken supernodes as an int (bit i = supernode i; :meth:`occupied_of`).

        Returns:
            A frozenset of sizes (supernodes), memoized by occupancy up to :data:`FREE_FLAGS_MEMO_SIZE` answers.

        References:
            BGL-FAULT Appendix 9 (free partitions by size); used by Krevat's backfilling (§5.1).
        """
        known = self._open_sizes_memo.get(occupied)
        if known is None:
            flags = self.free_flags(self.words_of(occupied))
            known = _remember(self._open_sizes_memo, FREE_FLAGS_MEMO_SIZE, occupied, frozenset(self.sizes_with_free(flags)))
        return known

    def free_ids(self, words: np.ndarray) -> np.ndarray:
        """Ids of every free partition, ascending (so by descending size)."""
        return np.flatnonzero(self.free_flags(words))

    def mfp(self, words: np.ndarray) -> int:
        """Size of the maximal free partition; 0 when none is free."""
        free = self.free_flags(words)
        first = int(np.argmax(free))
        return int(self.sizes[first]) if free[first] else 0

    def member_matrix(self, ids: np.ndarray) -> np.ndarray:
        """Supernodes of partitions of one size, int64 ``(len(ids), size)``.

        Raises:
            ValueError: the partitions are not all of one size.
        """
        return np.stack([self.members[i] for i in ids])

    def hits(self, ids: np.ndarray, words: np.ndarray) -> np.ndarray:
        """Bool ``(len(ids),)``: which partitions contain a supernode set in the packed ``words``."""
        columns = self._mask_columns
        found = columns[0][ids] & words[0]
        for k in range(1, self.words):
            found |= columns[k][ids] & words[k]
        return found != 0

    def overlaps(self, ids_a: np.ndarray, ids_b: np.ndarray) -> np.ndarray:
        """Which pairs of partitions share a supernode.

        Args:
            ids_a: partition ids, int ``(A,)``.
            ids_b: partition ids, int ``(B,)``.

        Returns:
            bool ``(A, B)``, True where partition ``ids_a[i]`` and ``ids_b[j]`` intersect.
        """
        columns = self._mask_columns
        hits = columns[0][ids_a][:, None] & columns[0][ids_b][None, :]
        for k in range(1, self.words):
            hits |= columns[k][ids_a][:, None] & columns[k][ids_b][None, :]
        return hits != 0

    def disjoint_from_any(self, ids: np.ndarray, others: np.ndarray) -> np.ndarray:
        """Which partitions share no supernode with at least one of ``others``.

        The same as ``~overlaps(ids, others).all(axis=1)`` (tested), from the disjointness bitsets read by
        columns: only the words that hold one of ``others`` (a few: they are mostly of one size), instead
        of ``len(others)`` pairs (a third of the time in Krevat's backfilling on HPC2N) or whole rows.

        Args:
            ids: partition ids, int ``(A,)``.
            others: partition ids, int ``(B,)``.

        Returns:
            bool ``(A,)``, read-only: True where partition ``ids[i]`` is disjoint from some ``others[j]`` (False
            when B = 0). Memoized by the two id lists, up to :data:`DISJOINT_MEMO_SIZE` answers: 85% of the
            questions of an SDSC-SP2 replay with 4,000 failures repeat one (the occupancy often comes back).

        References:
            BGL-FAULT §5.1 (a backfilled job must leave the head a partition at its reservation).
        """
        ids = np.asarray(ids, dtype=np.int64)
        others = np.asarray(others, dtype=np.int64)
        key = (ids.tobytes(), others.tobytes())
        known = self._disjoint_memo.get(key)
        if known is None:
            known = _remember(self._disjoint_memo, DISJOINT_MEMO_SIZE, key, self._disjoint_from_any(ids, others))
        return known

    def _disjoint_from_any(self, ids: np.ndarray, others: np.ndarray) -> np.ndarray:
        buffer = self._bit_buffer
        buffer[:] = False
        buffer[others] = True
        wanted = np.packbits(buffer, bitorder="little").view(np.uint64)
        columns = self._disjoint_cols
        found = np.zeros(len(ids), dtype=np.uint64)
        for k in np.flatnonzero(wanted).tolist():  # the words that hold one of ``others``: few, they are often of one size
            column = columns[k]
            found |= (self._disjoint_column(k) if column is None else column)[ids] & wanted[k]
        return found != 0

    def mfp_after(self, candidate_ids: np.ndarray, words: np.ndarray) -> np.ndarray:
        """MFP that would remain after placing a job in each candidate partition.

        Args:
            candidate_ids: ids of free partitions, int array of shape ``(C,)``.
            words: packed blocked supernodes before the placement.

        Returns:
            int64 array of shape ``(C,)``, read-only: for each candidate, the size of the largest
            free partition disjoint from it (0 if none).

        Notes:
            Free partitions are visited one size group at a time from the largest; each group
            settles every candidate that is disjoint from one of its members, so the work stops
            as soon as every candidate has its answer. Answers are memoized by (occupancy,
            candidates), up to :data:`MFP_AFTER_MEMO_SIZE` of them: the scheduler asks the same
            question again and again (61% of the calls of an HPC2N replay repeat one exactly).

        References:
            BGL-FAULT §5.1 (MFP heuristic, Fig. 1), §5.2.1 (L_MFP).
        """
        candidate_ids = np.asarray(candidate_ids, dtype=np.int64)
        key = (words.tobytes(), candidate_ids.tobytes())
        known = self._mfp_after_memo.get(key)
        if known is None:
            known = _remember(self._mfp_after_memo, MFP_AFTER_MEMO_SIZE, key, self._mfp_after(candidate_ids, words))
        return known

    def _mfp_after(self, candidate_ids: np.ndarray, words: np.ndarray) -> np.ndarray:
        """The answer from bitsets: free partitions & disjoint from the candidate, first set bit.

        Partition ids run by descending size, so the lowest id left in a candidate's row is a
        largest free partition disjoint from it. One row of ``ceil(P / 64)`` words per candidate.
        """
        if not len(candidate_ids):
            return np.zeros(0, dtype=np.int64)
        rows = self._free_bits(words) & self._disjoint_rows(candidate_ids)
        nonzero = rows != 0
        found = nonzero.any(axis=1)
        word_index = nonzero.argmax(axis=1)
        word = rows[np.arange(len(candidate_ids)), word_index]
        lowest = word & (~word + np.uint64(1))  # the lowest set bit alone (two's complement)
        bit = np.zeros(len(word), dtype=np.int64)
        bit[found] = np.log2(lowest[found].astype(np.float64)).astype(np.int64)  # exact for powers of two
        partition = np.minimum(word_index * 64 + bit, len(self.partitions) - 1)
        return np.where(found, self.sizes[partition], 0).astype(np.int64)

    def _free_bits(self, words: np.ndarray) -> np.ndarray:
        """uint64 ``(ceil(P / 64),)``: :meth:`free_flags` packed, bit p for partition p (memoized like it)."""
        key = words.tobytes()
        known = self._free_bits_memo.get(key)
        if known is None:
            buffer = self._bit_buffer
            buffer[: len(self.partitions)] = self.free_flags(words)
            packed = np.packbits(buffer, bitorder="little").view(np.uint64)
            known = _remember(self._free_bits_memo, FREE_FLAGS_MEMO_SIZE, key, packed)
        return known

    def mfp_choice(self, candidate_ids: np.ndarray, words: np.ndarray) -> int:
        """Which candidate keeps the largest MFP: ``argmax(mfp_after(candidate_ids, words))``, without the other answers.

        Args:
            candidate_ids: ids of free partitions, int64 ``(C,)``, C >= 1.
            words: packed blocked supernodes before the placement, uint64 ``(K,)``.

        Returns:
            The position in ``candidate_ids`` (not the id) of the first candidate whose MFP after
            placement is the largest; 0 when no candidate leaves a free partition.

        Notes:
            The largest MFP after placement is the size of the lowest-id free partition disjoint from
            some candidate: the lowest bit of the OR over the candidates of (free & disjoint), found one
            64-partition word at a time from the first free word (2 words on average on HPC2N).
            The winner is then the first candidate disjoint from any free partition of that size;
            later words of that size are asked only of the candidates before the best so far.
            The disjointness bitsets are read by columns (one word of every partition), so a call
            touches C words per word visited instead of C rows of ``ceil(P / 64)`` words. Memoized
            like :meth:`mfp_after`, up to :data:`MFP_CHOICE_MEMO_SIZE` answers.

        References:
            BGL-FAULT §5.1 (MFP heuristic, Fig. 1); Krevat, Castaños, Moreira, JSSPP 2002.
        """
        key = (words.tobytes(), candidate_ids.tobytes())
        known = self._mfp_choice_memo.get(key)
        if known is None:
            known = _remember(self._mfp_choice_memo, MFP_CHOICE_MEMO_SIZE, key, self._mfp_choice(candidate_ids, words))
        return known

    def _mfp_choice(self, candidate_ids: np.ndarray, words: np.ndarray) -> int:
        return self.mfp_choice_in(candidate_ids, self._free_bits(words))

    def mfp_choice_in(self, candidate_ids: np.ndarray, free: np.ndarray) -> int:
        """:meth:`mfp_choice` from the free partitions' bits (:meth:`free_bits`), without a memo.

        Args:
            candidate_ids: partition ids, int64 ``(C,)``, C >= 1.
            free: uint64 ``(ceil(P / 64),)``, bit p set where partition p is free.

        Returns:
            The position in ``candidate_ids`` of the first candidate with the largest MFP after placement
            (0 when no candidate leaves a free partition).

        Raises:
            IndexError: a candidate id outside ``0 .. P - 1``.

        References:
            BGL-FAULT §5.1 (MFP heuristic, Fig. 1).
        """
        columns = self._disjoint_cols
        for k in np.flatnonzero(free).tolist():
            column = columns[k]
            column = (self._disjoint_column(k) if column is None else column)[candidate_ids]
            column &= free[k]
            either = int(np.bitwise_or.reduce(column))
            if not either:
                continue  # no candidate is disjoint from a free partition of this word
            best = 64 * k + (either & -either).bit_length() - 1  # lowest id: a largest free partition left
            end = self._group_end_of[best]  # ids [.., end) have best's size; none below best is set
            if end < 64 * k + 64:
                column &= np.uint64((1 << (end - 64 * k)) - 1)
            first = int(np.argmax(column != 0))
            k += 1
            while first and 64 * k < end:  # more partitions of that size: only earlier candidates can win
                bits = int(free[k])
                if end < 64 * k + 64:
                    bits &= (1 << (end - 64 * k)) - 1
                if bits:
                    column = columns[k]
                    hit = ((self._disjoint_column(k) if column is None else column)[candidate_ids[:first]] & np.uint64(bits)) != 0
                    if np.count_nonzero(hit):
                        first = int(np.argmax(hit))
                k += 1
            return first
        return 0

    def free_ids_in(self, free: np.ndarray, size: int) -> np.ndarray:
        """Ids of the free partitions of one size, ascending, from the free partitions' bits.

        Args:
            free: uint64 ``(ceil(P / 64),)`` (:meth:`free_bits`, or bits kept up to date with :meth:`disjoint_row`).
            size: partition size, supernodes.

        Returns:
            int64 ids; empty when none is free or the size has no shape (never raises).

        References:
            BGL-FAULT Appendix 9 (free partitions of size s).
        """
        start, end = self._size_range.get(size, (0, 0))
        if start == end:
            return np.empty(0, dtype=np.int64)
        low = start // 8
        flags = np.unpackbits(free.view(np.uint8)[low : -(-end // 8)], bitorder="little")
        return np.flatnonzero(flags[start - 8 * low : end - 8 * low]) + start

    def free_bits(self, words: np.ndarray) -> np.ndarray:
        """uint64 ``(ceil(P / 64),)``, read-only: bit p set where partition p is free under the packed occupancy.

        After a job takes partition q, the bits of the new occupancy are ``free_bits & disjoint_row(q)``.
        Memoized like :meth:`free_flags`.

        Args:
            words: packed blocked supernodes, uint64 ``(K,)``.

        References:
            BGL-FAULT Appendix 9 (free partitions), as bits.
        """
        return self._free_bits(words)

    def disjoint_row(self, partition_id: int) -> np.ndarray:
        """uint64 ``(ceil(P / 64),)``, read-only: bit q set where partition q shares no supernode with ``partition_id``.

        Args:
            partition_id: a partition id, ``0 .. P - 1`` (the row is made from the bitsets by dimension,
                :meth:`_apart_by_axis`, and kept).

        Raises:
            IndexError: an id outside the table.
        """
        row = self._disjoint_row_memo.get(partition_id)
        if row is None:
            row = self._disjoint_rows(np.array([partition_id]))[0]
            row.setflags(write=False)
            self._disjoint_row_memo[partition_id] = row
        return row

    def _disjoint_column(self, k: int) -> np.ndarray:
        """uint64 ``(P,)``: word k of every partition's disjointness bits (column k of :meth:`_disjoint_bits`).

        Made on first use of word k from the bitsets by dimension (:meth:`_apart_by_axis`: three gathers of P
        words on a 3-D torus, ~0.1 ms) and kept: a run asks for the few words that hold the large
        partitions, not for the whole 11 MiB table of the 4x4x8 torus that the columns once were.
        """
        column = self._disjoint_cols[k]
        if column is None:
            column = None
            for bits, which in self._apart_by_axis():
                gathered = np.ascontiguousarray(bits[:, k])[which]
                column = gathered if column is None else column | gathered
            column.setflags(write=False)
            self._disjoint_cols[k] = column
        return column

    def _disjoint_rows(self, ids: np.ndarray) -> np.ndarray:
        """uint64 ``(len(ids), ceil(P / 64))``: the rows of :meth:`_disjoint_bits` for these partition ids."""
        rows = None
        for bits, which in self._apart_by_axis():
            gathered = bits[which[ids]]
            rows = gathered if rows is None else rows | gathered
        return rows

    def _apart_by_axis(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per dimension d, ``(bits, which)``: the partitions whose interval along d misses each distinct interval.

        ``which`` (int64 ``(P,)``) is each partition's interval along d (an index into the distinct intervals);
        row u of ``bits`` (uint64 ``(U_d, ceil(P / 64))``) has bit q set when q's interval along d misses
        interval u. Two boxes share no supernode when their intervals are disjoint along at least one dimension, so partition
        p's disjointness row is the OR over d of ``bits[which[p]]`` (4, 13 and 57 distinct intervals on the
        4x4x8 torus: 74 rows of 151 words instead of 9,633). Built on first use, ~5 ms.
        """
        if self._apart is None:
            count = len(self.partitions)
            bases = np.array([partition.base for partition in self.partitions], dtype=np.int64).reshape(count, -1)
            shapes = np.array([partition.shape for partition in self.partitions], dtype=np.int64).reshape(count, -1)
            by_axis = []
            for axis, extent in enumerate(self.torus.dims):
                intervals, which = np.unique(bases[:, axis] * (extent + 1) + shapes[:, axis], return_inverse=True)
                starts, lengths = np.divmod(intervals, extent + 1)
                offsets = np.arange(extent)
                covered = np.zeros((len(intervals), extent), dtype=bool)  # interval u covers coordinate x
                cells = (starts[:, None] + offsets[None, :]) % extent
                covered[np.repeat(np.arange(len(intervals)), extent), cells.ravel()] = (offsets < lengths[:, None]).ravel()
                apart = ~(covered[:, None, :] & covered[None, :, :]).any(axis=2)  # (U, U): intervals u and v share no coordinate
                which = which.ravel()
                by_axis.append((_pack_bits(np.ascontiguousarray(apart[:, which])), which))  # (U, P) bits
            self._apart = by_axis
        return self._apart

    def _disjoint_bits(self) -> np.ndarray:
        """uint64 ``(P, ceil(P / 64))``: row p has bit q set when partitions p and q share no supernode.

        The whole table, from the boxes' product structure (:meth:`_apart_by_axis`): 11 MiB on the 4x4x8
        torus, made only when asked (tests compare it with the pairwise test of :meth:`overlaps`); the
        engine reads single rows (:meth:`disjoint_row`, :meth:`_disjoint_rows`) and columns
        (:meth:`_disjoint_column`) made from the same bitsets. Padding bits are clear.
        """
        if self._disjoint is None:
            self._disjoint = self._disjoint_rows(np.arange(len(self.partitions)))
            self._disjoint.setflags(write=False)
        return self._disjoint
