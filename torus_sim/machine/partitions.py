"""Contiguous rectangular partitions of a torus, the partition finder and the MFP.

A partition is a box ``<base, shape>`` on the torus, wrapping around along every ring dimension
(BGL-FAULT §3.3, Appendix 9), in as many dimensions as the torus has (1 to 6; Mira's midplanes
form a 4-D torus) and never wrapping along a mesh dimension. A box that spans a whole dimension
covers the same supernodes whatever its base along that dimension, so its canonical base there
is 0: each set of supernodes is one partition.

Two finders answer "which partitions of size s are free?", both returning the same set (tested against
the plain cell-by-cell search of every base and shape, ``tests/reference.py``):

* :class:`~torus_sim.machine.partition_table.PartitionTable` precomputes every partition of the torus as a bitmask
  (9,633 partitions on the 4x4x8 torus, 3,549 on Mira's 2x3x4x4) so that one query is one vectorized AND over the
  partitions of size s. This is BGL-FAULT Appendix 9's enumeration of SHAPES x bases, done once.
* :func:`free_partitions_by_box_sums` runs Appendix 9 on a boolean occupancy with
  summed-area tables (circular along rings); it needs no table, so it also serves tori too large to tabulate
  (BG/L's 32x32x64 node torus).

The *maximal free partition* (MFP) is the largest free partition (BGL-FAULT §5.1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from itertools import product

import numpy as np

from torus_sim.core.errors import ConfigurationError
from torus_sim.machine.topology import Torus, shapes_of_size

__all__ = [
    "MAX_PARTITIONS",
    "Partition",
    "feasible_sizes",
    "free_partitions_by_box_sums",
    "mfp_by_box_sums",
    "partition_count",
    "partitions_of_size",
    "round_up_to_feasible_size",
    "shapes_of_size",
]


@dataclass(frozen=True, order=True)
class Partition:
    """A box of supernodes on a torus.

    Attributes:
        base: corner of the box, one integer per dimension; 0 along every dimension the box
            spans whole (a ring) or where it starts (a mesh: ``base + extent <= dim``).
        shape: extent along each dimension, each between 1 and the dimension size.

    References:
        BGL-FAULT Appendix 9 (PARTS = {<B, S>}), in as many dimensions as the torus has.
    """

    base: tuple[int, ...]
    shape: tuple[int, ...]

    @property
    def size(self) -> int:
        """Number of supernodes in the partition."""
        return int(math.prod(self.shape))

    def supernodes(self, torus: Torus) -> np.ndarray:
        """Indices of the supernodes in the box, ascending.

        Args:
            torus: the torus the partition lives on.

        Returns:
            int64 array of shape ``(size,)``.
        """
        axes = [(np.arange(extent) + start) % dim for start, extent, dim in zip(self.base, self.shape, torus.dims, strict=True)]
        grids = np.meshgrid(*axes, indexing="ij")
        indices = np.ravel_multi_index(tuple(grids), torus.dims)
        return np.sort(indices.ravel()).astype(np.int64)


def _as_torus(torus: Torus | tuple[int, ...]) -> Torus:
    """A :class:`Torus` as given, or the all-ring torus of a dims tuple."""
    return torus if isinstance(torus, Torus) else Torus(tuple(torus))


def _base_range(extent: int, dim: int, wraps: bool) -> range:
    if extent == dim:
        return range(1)
    return range(dim) if wraps else range(dim - extent + 1)


def _bases(torus: Torus, shape: tuple[int, ...]):
    return product(*(_base_range(extent, dim, wraps) for extent, dim, wraps in zip(shape, torus.dims, torus.wraps, strict=True)))


def partitions_of_size(torus: Torus, size: int) -> list[Partition]:
    """Every partition of a given size on an empty torus, canonical and without repeats.

    Args:
        torus: the torus (a box wraps around only along its ring dimensions).
        size: number of supernodes.

    Returns:
        Partitions ordered by shape, then base.

    References:
        BGL-FAULT Appendix 9 (PARTS).
    """
    return [Partition(base, shape) for shape in shapes_of_size(torus, size) for base in _bases(torus, shape)]


@cache
def feasible_sizes(dims: Torus | tuple[int, ...]) -> tuple[int, ...]:
    """The sizes that have at least one (allowed) box shape on the torus, ascending.

    Args:
        dims: the torus, or its dimensions.

    Returns:
        Sorted sizes; on the 4x4x8 torus 11, 13, 17, 19, 22, 23, ... are missing; on a machine
        with a list of block sizes, those of them that have a shape.
    """
    torus = _as_torus(dims)
    products = {1}
    for dim in torus.dims:
        products = {product * extent for product in products for extent in range(1, dim + 1)}
    sizes = tuple(sorted(products))
    if torus.block_sizes is not None or torus.block_shapes is not None:
        sizes = tuple(s for s in sizes if shapes_of_size(torus, s))
    return sizes


def round_up_to_feasible_size(dims: Torus | tuple[int, ...], size: int) -> int:
    """The smallest size >= ``size`` that has an (allowed) box shape on the torus.

    A job whose size has no shape (11 supernodes on a 4x4x8 torus; 3 midplanes on Mira, whose
    smallest block above 2 is 4) gets the next size that has one (12; 4); the extra supernodes are
    allocated but do no work, so they count as lost capacity.

    Args:
        dims: the torus, or its dimensions.
        size: requested supernodes, >= 1.

    Returns:
        The partition size the job will occupy.

    Raises:
        ConfigurationError: ``size`` is below 1 or larger than the largest partition.

    References:
        ../shared/data/SOURCES.md (rounding rule for the 128-node logs); BGL-FAULT §6.2;
        ALCF, "Determining allocation requirements" (a job runs on the next block size up).
    """
    sizes = feasible_sizes(dims)
    if size < 1 or size > sizes[-1]:
        raise ConfigurationError(f"job size {size} outside 1..{sizes[-1]}")
    return sizes[int(np.searchsorted(sizes, size))]


MAX_PARTITIONS = 200_000
"""The most partitions a :class:`PartitionTable` tabulates (a memory guard: the 4x4x8 torus has 9,633)."""


def partition_count(dims: Torus | tuple[int, ...]) -> int:
    """Number of distinct partitions of every size on a torus (9,633 on the 4x4x8 torus, 3,549 on Mira's 2x3x4x4).

    Args:
        dims: the torus, or its dimensions (every dimension a ring).

    Returns:
        The count: on a torus allowing every box, the product over dimensions of the (extent,
        base) choices; otherwise the sum over allowed shapes of their bases.
    """
    torus = _as_torus(dims)
    if torus.block_sizes is None and torus.block_shapes is None:
        count = 1
        for dim, wraps in zip(torus.dims, torus.wraps, strict=True):
            # a ring: extents 1..dim-1 at every base, plus the whole ring once; a mesh: dim - e + 1 bases per extent e
            count *= (dim - 1) * dim + 1 if wraps else dim * (dim + 1) // 2
        return count
    return sum(
        int(np.prod([len(_base_range(e, d, w)) for e, d, w in zip(shape, torus.dims, torus.wraps, strict=True)]))
        for size in feasible_sizes(torus)
        for shape in shapes_of_size(torus, size)
    )


def _box_counts(grid: np.ndarray, shape: tuple[int, ...], wraps: tuple[bool, ...]) -> np.ndarray:
    """Count of True cells in the box of the given shape at every base (wrapping along rings).

    Prefix sums along one axis at a time: along axis k the window sum is ``S[b + e] - S[b]`` of the
    cumulative sum S with a leading 0 (a ring is first extended by its first ``e - 1`` cells).
    Along a ring the result has ``dim`` bases, along a mesh ``dim - e + 1``.
    """
    counts = grid.astype(np.int32)
    for axis, (extent, wrap) in enumerate(zip(shape, wraps, strict=True)):
        if wrap and extent > 1:
            counts = np.concatenate([counts, np.take(counts, np.arange(extent - 1), axis=axis)], axis=axis)
        sums = np.cumsum(counts, axis=axis)
        sums = np.concatenate([np.zeros_like(np.take(sums, [0], axis=axis)), sums], axis=axis)
        length = sums.shape[axis]
        counts = np.take(sums, np.arange(extent, length), axis=axis) - np.take(sums, np.arange(0, length - extent), axis=axis)
    return counts


def free_partitions_by_box_sums(torus: Torus, blocked: np.ndarray, size: int) -> list[Partition]:
    """Free partitions of a size via summed-area tables (no precomputed table).

    For each shape of the size, one summed-area table gives the number of blocked supernodes
    in the box at every base at once; boxes with zero are free.

    Args:
        torus: the torus (any size; this is the finder for tori too large to tabulate).
        blocked: bool array of shape ``(torus.size,)``.
        size: partition size.

    Returns:
        Free partitions ordered by shape, then base.

    Notes:
        O(f(s)^N * M^N) numpy work for an M^N torus, as BGL-FAULT Appendix 9 in N dimensions.
    """
    grid = np.asarray(blocked, dtype=bool).reshape(torus.dims)
    found = []
    for shape in shapes_of_size(torus, size):
        counts = _box_counts(grid, shape, torus.wraps)
        limits = tuple(
            slice(0, len(_base_range(extent, dim, wraps)))
            for extent, dim, wraps in zip(shape, torus.dims, torus.wraps, strict=True)
        )
        for base in np.argwhere(counts[limits] == 0):
            found.append(Partition(tuple(int(v) for v in base), shape))
    return found


def mfp_by_box_sums(torus: Torus, blocked: np.ndarray) -> int:
    """Size of the maximal free partition, searching sizes from the largest down.

    Args:
        torus: the torus.
        blocked: bool array of shape ``(torus.size,)``.

    Returns:
        The MFP size; 0 when every supernode is blocked.

    References:
        BGL-FAULT §5.1 (MFP), Appendix 9.
    """
    free_count = int(torus.size - np.count_nonzero(blocked))
    for size in reversed(feasible_sizes(torus)):
        if size <= free_count and free_partitions_by_box_sums(torus, blocked, size):
            return size
    return 0
