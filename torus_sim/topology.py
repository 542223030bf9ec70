"""The 3-D torus a BlueGene/L scheduler sees.

BG/L is a 32x32x64 torus of compute nodes; jobs get electrically isolated partitions made of
8x8x8 node blocks, so the scheduler sees a 4x4x8 torus of 512-node *supernodes*
(BGL-FAULT §3.1). Both tori are :class:`Torus` objects; every dimension wraps around.

Supernodes are numbered in row-major order: ``index = (x * Y + y) * Z + z``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import networkx as nx
import numpy as np

from torus_sim.errors import ConfigurationError

__all__ = ["BGL_NODE_TORUS", "BGL_SUPERNODE_TORUS", "NODES_PER_SUPERNODE", "Torus"]


@dataclass(frozen=True)
class Torus:
    """A 3-D torus with wrap-around links in every dimension.

    Args:
        dims: ``(X, Y, Z)``, the number of supernodes (or nodes) along each dimension; each >= 1.

    Raises:
        ConfigurationError: a dimension is not a positive integer, or there are not exactly three.

    References:
        BGL-FAULT §3.1 (4x4x8 supernodes of 8x8x8 nodes; the full machine is 32x32x64 nodes).
    """

    dims: tuple[int, int, int]

    def __post_init__(self) -> None:
        dims = tuple(self.dims)
        if len(dims) != 3 or not all(isinstance(d, (int, np.integer)) and d >= 1 for d in dims):
            raise ConfigurationError(f"torus dims must be three positive integers, got {self.dims!r}")
        object.__setattr__(self, "dims", tuple(int(d) for d in dims))

    @property
    def size(self) -> int:
        """Number of supernodes (or nodes) in the torus, ``X * Y * Z``."""
        return self.dims[0] * self.dims[1] * self.dims[2]

    def index(self, coordinate: tuple[int, int, int]) -> int:
        """Row-major index of a coordinate, wrapping each component around its dimension.

        Args:
            coordinate: ``(x, y, z)``; any integers (taken modulo the dimension sizes).

        Returns:
            The index in ``[0, size)``.
        """
        x, y, z = (int(c) % d for c, d in zip(coordinate, self.dims, strict=True))
        return (x * self.dims[1] + y) * self.dims[2] + z

    def coordinate(self, index: int) -> tuple[int, int, int]:
        """Coordinate of a supernode index.

        Args:
            index: in ``[0, size)``.

        Returns:
            ``(x, y, z)``.

        Raises:
            IndexError: the index is outside the torus.
        """
        if not 0 <= index < self.size:
            raise IndexError(f"supernode index {index} outside a torus of {self.size}")
        yz = self.dims[1] * self.dims[2]
        return (index // yz, (index // self.dims[2]) % self.dims[1], index % self.dims[2])

    @cached_property
    def coordinates(self) -> np.ndarray:
        """All coordinates, shape ``(size, 3)``, row ``i`` is the coordinate of supernode ``i``."""
        grid = np.indices(self.dims).reshape(3, -1).T
        return grid.astype(np.int64)

    def graph(self) -> nx.Graph:
        """The torus as a networkx graph whose nodes are supernode indices.

        Not used on the scheduling hot path; it serves neighbour queries and the mapping of
        failure-log locations.

        Returns:
            An undirected graph with ``size`` nodes and an edge between torus neighbours.
        """
        # grid_graph numbers its node tuples in reverse order of `dim`, so reversed dims give (x, y, z).
        grid = nx.grid_graph(dim=list(reversed(self.dims)), periodic=True)
        return nx.relabel_nodes(grid, {node: self.index(node) for node in grid})

    def neighbours(self, index: int) -> list[int]:
        """The distinct torus neighbours of a supernode (up to 6), in ascending order.

        Args:
            index: a supernode index in ``[0, size)``.

        Returns:
            Sorted supernode indices.

        Raises:
            IndexError: the index is outside the torus.
        """
        x, y, z = self.coordinate(index)
        around = set()
        for dx, dy, dz in ((1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1)):
            around.add(self.index((x + dx, y + dy, z + dz)))
        around.discard(index)
        return sorted(around)


NODES_PER_SUPERNODE = 512
"""Compute nodes in one 8x8x8 supernode (BGL-FAULT §3.1)."""

BGL_SUPERNODE_TORUS = Torus((4, 4, 8))
"""The scheduler's view of BG/L: 128 supernodes (BGL-FAULT §3.1, §6.1)."""

BGL_NODE_TORUS = Torus((32, 32, 64))
"""The full BG/L node torus: 65,536 compute nodes (BGL-FAULT §3.1)."""
