"""The torus a Blue Gene scheduler sees: N dimensions of midplanes, each a ring or a mesh.

BG/L is a 32x32x64 torus of compute nodes; jobs get electrically isolated partitions made of
8x8x8 node blocks, so the scheduler sees a 4x4x8 torus of 512-node *supernodes*
(BGL-FAULT §3.1). Its successors kept the design and changed the torus: Blue Gene/Q Mira is a
5-D node torus whose 512-node midplanes form a 4-D torus of 2x3x4x4 (ALCF machine overview;
see :mod:`torus_sim.machine.machines`). A :class:`Torus` has 1 to 6 dimensions; each wraps around (a
ring) unless the machine says it is a mesh.

Supernodes are numbered in row-major order: on a 3-D torus ``index = (x * Y + y) * Z + z``,
and likewise over every dimension of an N-D one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache, cached_property

import numpy as np

from torus_sim.core.errors import ConfigurationError

__all__ = ["BGL_NODE_TORUS", "BGL_SUPERNODE_TORUS", "MAX_DIMENSIONS", "NODES_PER_SUPERNODE", "Torus", "shapes_of_size"]

MAX_DIMENSIONS = 6
"""The most dimensions a :class:`Torus` may have (Blue Gene/Q's node torus has 5)."""


@dataclass(frozen=True)
class Torus:
    """An N-dimensional torus of supernodes (midplanes): each dimension a ring or a mesh.

    Args:
        dims: the number of supernodes (or nodes) along each dimension, 1 to
            :data:`MAX_DIMENSIONS` of them, each >= 1; ``(4, 4, 8)`` is BG/L's supernode torus,
            ``(2, 3, 4, 4)`` Mira's midplane torus.
        wraps: per dimension, True where it wraps around (a ring, the default in every
            dimension), False where it is a mesh (no link from the last supernode to the first).
        block_sizes: the partition sizes (supernodes) the machine allows, None for every size that
            has a box (BG/L); Mira allows 1, 2, 4, 8, 16, 24, 32, 48, 64 and 96 midplanes.
        block_shapes: the box shapes the machine allows, None for every box of an allowed size.

    Raises:
        ConfigurationError: no dimension, more than :data:`MAX_DIMENSIONS`, a dimension that is
            not a positive integer, ``wraps`` of another length, a block size outside
            ``1..size`` or a block shape that does not fit.

    References:
        BGL-FAULT §3.1 (4x4x8 supernodes of 8x8x8 nodes; the full machine is 32x32x64 nodes);
        ALCF, "Machine Overview for Mira" (5-D torus; 512-node midplanes).
    """

    dims: tuple[int, ...]
    wraps: tuple[bool, ...] | None = None
    block_sizes: tuple[int, ...] | None = None
    block_shapes: tuple[tuple[int, ...], ...] | None = None

    def __post_init__(self) -> None:
        try:
            dims = tuple(self.dims)
        except TypeError:
            raise ConfigurationError(f"torus dims must be a sequence of positive integers, got {self.dims!r}") from None
        if not 1 <= len(dims) <= MAX_DIMENSIONS or not all(
            isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d >= 1 for d in dims
        ):
            raise ConfigurationError(f"torus dims must be 1 to {MAX_DIMENSIONS} positive integers, got {self.dims!r}")
        wraps = (True,) * len(dims) if self.wraps is None else tuple(bool(w) for w in self.wraps)
        if len(wraps) != len(dims):
            raise ConfigurationError(f"torus wraps {self.wraps!r} must give one flag per dimension of {tuple(dims)}")
        object.__setattr__(self, "dims", tuple(int(d) for d in dims))
        object.__setattr__(self, "wraps", wraps)
        if self.block_sizes is not None:
            sizes = tuple(sorted({int(s) for s in self.block_sizes}))
            if not sizes or sizes[0] < 1 or sizes[-1] > self.size:
                raise ConfigurationError(f"block sizes {self.block_sizes!r} must lie in 1..{self.size} supernodes")
            object.__setattr__(self, "block_sizes", sizes)
        if self.block_shapes is not None:
            shapes = tuple(sorted({tuple(int(e) for e in shape) for shape in self.block_shapes}))
            for shape in shapes:
                if len(shape) != self.ndim or not all(1 <= e <= d for e, d in zip(shape, self.dims, strict=True)):
                    raise ConfigurationError(f"block shape {shape} does not fit the torus {self.dims}")
            object.__setattr__(self, "block_shapes", shapes)
        if self.block_sizes is not None or self.block_shapes is not None:
            self._check_blocks()

    def _check_blocks(self) -> None:
        """Every allowed block size has an allowed box shape, and every allowed shape an allowed size.

        Raises:
            ConfigurationError: a block size no box of the torus (or of the allowed shapes) has, or a
                block shape whose size is not an allowed block size.
        """
        for shape in self.block_shapes or ():
            if self.block_sizes is not None and math.prod(shape) not in self.block_sizes:
                raise ConfigurationError(
                    f"block shape {shape} has {math.prod(shape)} supernodes, not one of the block sizes {self.block_sizes}"
                )
        for size in self.block_sizes or ():
            if not shapes_of_size(self, size):
                raise ConfigurationError(
                    f"block size {size} has no {'allowed ' if self.block_shapes else ''}box shape on the {self.label} torus: "
                    "no partition could be formed of it"
                )

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return len(self.dims)

    @cached_property
    def size(self) -> int:
        """Number of supernodes (or nodes) in the torus, the product of the dimensions."""
        return math.prod(self.dims)

    @property
    def label(self) -> str:
        """The dims as ``--torus-dims`` takes them: ``4x4x8``, with ``m`` after each mesh dimension (``4x4x8m``)."""
        return "x".join(f"{d}{'' if w else 'm'}" for d, w in zip(self.dims, self.wraps, strict=True))

    @cached_property
    def _strides(self) -> tuple[int, ...]:
        strides = [1] * self.ndim
        for axis in range(self.ndim - 2, -1, -1):
            strides[axis] = strides[axis + 1] * self.dims[axis + 1]
        return tuple(strides)

    def index(self, coordinate: tuple[int, ...]) -> int:
        """Row-major index of a coordinate, each component taken modulo its dimension.

        Args:
            coordinate: one integer per dimension (taken modulo the dimension sizes, also along
                a mesh dimension: the caller keeps mesh coordinates in range).

        Returns:
            The index in ``[0, size)``.
        """
        return sum((int(c) % d) * s for c, d, s in zip(coordinate, self.dims, self._strides, strict=True))

    def coordinate(self, index: int) -> tuple[int, ...]:
        """Coordinate of a supernode index.

        Args:
            index: in ``[0, size)``.

        Returns:
            One integer per dimension.

        Raises:
            IndexError: the index is outside the torus.
        """
        if not 0 <= index < self.size:
            raise IndexError(f"supernode index {index} outside a torus of {self.size}")
        return tuple(int(c) for c in np.unravel_index(int(index), self.dims))

    @cached_property
    def coordinates(self) -> np.ndarray:
        """All coordinates, shape ``(size, ndim)``, row ``i`` is the coordinate of supernode ``i``."""
        grid = np.indices(self.dims).reshape(self.ndim, -1).T
        return grid.astype(np.int64)

    def neighbours(self, index: int) -> list[int]:
        """The distinct torus neighbours of a supernode (up to 2 per dimension), ascending.

        Args:
            index: a supernode index in ``[0, size)``.

        Returns:
            Sorted supernode indices; along a mesh dimension the ends have one neighbour.

        Raises:
            IndexError: the index is outside the torus.
        """
        coordinate = self.coordinate(index)
        around = set()
        for axis, (dim, wraps) in enumerate(zip(self.dims, self.wraps, strict=True)):
            for step in (1, -1):
                moved = coordinate[axis] + step
                if not wraps and not 0 <= moved < dim:
                    continue
                around.add(self.index(coordinate[:axis] + (moved,) + coordinate[axis + 1 :]))
        around.discard(index)
        return sorted(around)


def _divisors_up_to(n: int, bound: int) -> list[int]:
    return [d for d in range(1, min(n, bound) + 1) if n % d == 0]


def _box_shapes(dims: tuple[int, ...], size: int) -> list[tuple[int, ...]]:
    """Every extent tuple with product ``size`` inside ``dims``, lexicographic."""
    if len(dims) == 1:
        return [(size,)] if size <= dims[0] else []
    shapes = []
    for first in _divisors_up_to(size, dims[0]):
        shapes.extend((first, *rest) for rest in _box_shapes(dims[1:], size // first))
    return shapes


@cache
def shapes_of_size(dims: Torus | tuple[int, ...], size: int) -> tuple[tuple[int, ...], ...]:
    """All box shapes whose extents multiply to ``size`` and fit in the torus.

    Args:
        dims: the torus, or its dimensions (every shape allowed). A torus of a machine that allows
            only some block sizes or shapes (:mod:`torus_sim.machine.machines`) gives only those.
        size: number of supernodes, >= 1.

    Returns:
        Shapes in lexicographic order; empty when the size has no (allowed) box shape.

    References:
        BGL-FAULT Appendix 9 (SHAPES, found from the divisors of s), in N dimensions; here, beside the torus, because
        :class:`Torus` checks its allowed block sizes with it.
    """
    torus = dims if isinstance(dims, Torus) else Torus(tuple(dims))
    if torus.block_sizes is not None and size not in torus.block_sizes:
        return ()
    shapes = _box_shapes(torus.dims, size)
    if torus.block_shapes is not None:
        shapes = [shape for shape in shapes if shape in torus.block_shapes]
    return tuple(shapes)


NODES_PER_SUPERNODE = 512
"""Compute nodes in one 8x8x8 supernode (BGL-FAULT §3.1)."""

BGL_SUPERNODE_TORUS = Torus((4, 4, 8))
"""The scheduler's view of BG/L: 128 supernodes (BGL-FAULT §3.1, §6.1)."""

BGL_NODE_TORUS = Torus((32, 32, 64))
"""The full BG/L node torus: 65,536 compute nodes (BGL-FAULT §3.1)."""
