"""A machine of disjoint partitions: each job is routed to one partition and runs only on its nodes.

A partitioned platform is the machine of a centre whose nodes are split into partitions (Slurm's partitions, PBS's
queues with their own nodes, the node types of a heterogeneous cluster): every partition is a cluster of its own
nodes (:class:`~torus_sim.machine.platforms.cluster.ClusterPlatform`), a job is routed to one partition when it first
arrives (by the router the platform is built with: the job's partition field, its memory or GPUs) and occupies there
the nodes its demand needs. The engine schedules each partition with its own instance of the run's policy, over the
waiting jobs routed to it in the queue's order (a job that cannot start in one partition never holds back a job of
another: Slurm's scheduling of disjoint partitions, Alea's per-cluster queues), and applies every start to the
partition it was planned on. Node ids are global: partition ``k``'s nodes are ``offsets[k] .. offsets[k] +
capacity_k - 1``, so failures, repairs and the record name the same node everywhere.

References:
    Slurm's documentation of partitions (``slurm.conf``'s PartitionName, Nodes) and of the main and backfill
    schedulers, which test a job only against its partition's nodes; Klusáček and Rudová, Alea 2 (SIMUTools 2010):
    one queue per cluster of a heterogeneous grid.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

from torus_sim.core.errors import ConfigurationError, SimulationError
from torus_sim.core.job_columns import PLATFORM
from torus_sim.machine.platforms.cluster import ClusterPlatform

__all__ = ["PartAllocation", "PartitionedPlatform"]


class PartAllocation(NamedTuple):
    """The platform's handle for the nodes a job holds: its partition and the partition's own allocation.

    Attributes:
        part: the partition's index (0-based, in the platform's order).
        inner: the partition's allocation (its node ids, local to the partition, int ``(n,)``).
    """

    part: int
    inner: object


class PartitionedPlatform:
    """Disjoint partitions of nodes, each a cluster, with a router that puts each job in one.

    Args:
        names: the partitions' names, ``(K,)``, distinct.
        parts: the partitions' clusters, ``(K,)``, each with node identities (failures and repairs name nodes).
        router: ``job -> (part, nodes)``: the partition a job runs in and the nodes it occupies there (>= 1). Called
            once per job, at its first arrival; it may raise ConfigurationError for a job no partition can run.
        kind: the platform kind's registry name (the manifest's ``kind``).
        node_word: what its nodes are called in messages and reports (``node``; ``processor`` where a node is a core).
        failure_refusal: why node failures cannot be run on it (a sentence the engine raises when a run has failures),
            or None: they can.

    Attributes:
        failure_refusal: why the platform cannot run node failures (a sentence), or None.
        job_columns: the job-table columns it adds (:data:`torus_sim.core.job_columns.PLATFORM`'s ``partition``).
        parts: the partitions' clusters; the engine schedules each with its own instance of the policy.
        names: their names.
        offsets: int ``(K,)``: partition ``k``'s first global node id.

    Raises:
        ConfigurationError: no partition, names not distinct or not one per partition, a partition without node
            identities.
    """

    guard = None
    counts_fit = False  # a job fits in its partition only: the engine plans each partition on its own
    counts_only = False
    tracks_nodes = True
    table = None
    job_columns = tuple(column for column in PLATFORM if column.name == "partition")  # what it adds to jobs.csv

    def __init__(
        self,
        names: Sequence[str],
        parts: Sequence[ClusterPlatform],
        router: Callable,
        kind: str = "partitioned",
        node_word: str = "node",
        failure_refusal: str | None = None,
    ):
        if not parts:
            raise ConfigurationError("a partitioned platform needs at least one partition")
        if len(names) != len(parts) or len(set(names)) != len(names):
            raise ConfigurationError(f"partitions need one distinct name each, got {list(names)!r} for {len(parts)} partitions")
        if not all(part.tracks_nodes for part in parts):
            raise ConfigurationError("every partition keeps node identities (build its cluster with identities=True)")
        self.kind, self.node_word, self.failure_refusal = kind, node_word, failure_refusal
        self.names = tuple(names)
        self.parts = tuple(parts)
        sizes = np.array([part.capacity for part in parts], dtype=np.int64)
        self.offsets = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64)
        self._ends = np.cumsum(sizes)
        self._router = router
        self._part_of: dict[int, int] = {}

    # -- the jobs' partitions ------------------------------------------------------------------------------------

    def route(self, job) -> int:
        """The partition of ``job``, routed on its first call: its ``partition_size`` becomes the nodes it occupies there.

        Args:
            job: a job (its id, size and whatever the router reads).

        Returns:
            The partition's index.

        Raises:
            ConfigurationError: the router gave no partition of this platform or no positive node count that the
                partition has.
        """
        part = self._part_of.get(job.job_id)
        if part is not None:
            return part
        part, nodes = self._router(job)
        if not 0 <= part < len(self.parts):
            raise ConfigurationError(f"job {job.job_id}: routed to partition {part!r}, which is not one of {len(self.parts)}")
        if not 1 <= nodes <= self.parts[part].capacity:
            raise ConfigurationError(
                f"job {job.job_id} needs {nodes} nodes of partition {self.names[part]!r}, which has {self.parts[part].capacity}"
            )
        job.partition_size = int(nodes)
        self._part_of[job.job_id] = part
        return part

    def part_of(self, job_id: int) -> int | None:
        """The partition a job was routed to, or None before its arrival."""
        return self._part_of.get(job_id)

    def job_column(self, name: str, job_ids) -> np.ndarray:
        """The values of one of :attr:`job_columns` for ``job_ids`` (``partition``: each job's partition, -1 if never routed).

        Raises:
            KeyError: a column the platform does not give.
        """
        if name != "partition":
            raise KeyError(name)
        part_of = self._part_of
        return np.array([part_of.get(int(job_id), -1) for job_id in job_ids], dtype=np.int64)

    def forget(self, job_id: int) -> None:
        """Drop a completed job's routing (a streamed run lets its jobs go)."""
        self._part_of.pop(job_id, None)

    # -- the whole machine ----------------------------------------------------------------------------------------

    @property
    def capacity(self) -> int:
        """Nodes of every partition."""
        return int(self._ends[-1])

    @property
    def label(self) -> str:
        """``partitioned cluster of 136 nodes (cpu 128, gpu 8)``."""
        shares = ", ".join(f"{name} {part.capacity}" for name, part in zip(self.names, self.parts, strict=True))
        return f"{self.kind} cluster of {self.capacity:,} nodes ({shares})"

    def free_count(self) -> int:
        """Nodes free now in every partition."""
        return sum(part.free for part in self.parts)

    def round_size(self, size: int) -> int:
        """A size as it comes (the router gives a job's nodes in its partition)."""
        return size

    def _local(self, node: int) -> tuple[int, int]:
        part = int(np.searchsorted(self._ends, node, side="right"))
        if not 0 <= node < self.capacity:
            raise SimulationError(f"node {node} is not one of 0..{self.capacity - 1}")
        return part, int(node - self.offsets[part])

    @property
    def job_at(self) -> np.ndarray:
        """int64 ``(P,)``: the job on each node (a copy; ``NO_JOB`` where none)."""
        return np.concatenate([part.job_at for part in self.parts])

    @property
    def down_until(self) -> np.ndarray:
        """float64 ``(P,)``: the end of each node's downtime (a copy; -inf when up)."""
        return np.concatenate([part.down_until for part in self.parts])

    @property
    def spare(self) -> np.ndarray:
        """Nodes held back from scheduling, bool ``(P,)`` (a copy)."""
        return np.concatenate([part.spare for part in self.parts])

    def free_nodes(self) -> np.ndarray:
        """Global ids of the free nodes, ascending."""
        return np.concatenate([part.free_nodes() + offset for part, offset in zip(self.parts, self.offsets, strict=True)])

    def find(self, size: int):
        """None: where a job fits depends on its partition (the engine asks the partition, :meth:`route`)."""
        return None

    def fits_now(self, size: int) -> bool:
        """Whether some partition has ``size`` free nodes now."""
        return any(size <= part.free for part in self.parts)

    def fits_job_now(self, job) -> bool:
        """Whether a routed waiting job fits now in its partition."""
        return job.partition_size <= self.parts[self.route(job)].free

    def mfp(self) -> int:
        """The most free nodes of one partition."""
        return max(part.free for part in self.parts)

    def size_refusal(self, size: int) -> str | None:
        """None: a job's nodes are its partition's question (the router refuses what no partition can run)."""
        return None

    def size_of(self, allocation: PartAllocation) -> int:
        """The allocation's node count."""
        return self.parts[allocation.part].size_of(allocation.inner)

    def members(self, allocation: PartAllocation) -> np.ndarray:
        """The allocation's global node ids."""
        return np.asarray(allocation.inner, dtype=np.int64) + self.offsets[allocation.part]

    def allocation_text(self, allocation: PartAllocation) -> str:
        """The allocation's global node ids as Batsim's interval-set text."""
        return self.parts[allocation.part].allocation_text(self.members(allocation))

    def snapshot(self):
        """None of the whole machine is planned at once: each partition's policy plans on its partition's snapshot."""
        raise SimulationError("a partitioned platform is planned one partition at a time (its parts' snapshots)")

    def allocation_refusal(self, allocation, size: int, spares: bool = False, freed=None) -> str | None:
        """Why the engine must refuse ``allocation`` for a job of ``size`` nodes, or None (its partition's answer)."""
        if not isinstance(allocation, PartAllocation) or not 0 <= allocation.part < len(self.parts):
            return f"allocation {allocation!r} names no partition of this platform"
        return self.parts[allocation.part].allocation_refusal(allocation.inner, size, spares, freed)

    def allocate(self, allocation: PartAllocation, job_id: int) -> None:
        """Take the allocation's nodes of its partition for ``job_id``."""
        self.parts[allocation.part].allocate(allocation.inner, job_id)

    def release(self, allocation: PartAllocation, job_id: int) -> None:
        """Give the allocation's nodes back to its partition."""
        self.parts[allocation.part].release(allocation.inner, job_id)

    def job_on(self, node: int) -> int:
        """The job on a node (global id), or ``NO_JOB``."""
        part, local = self._local(node)
        return self.parts[part].job_on(local)

    def neighbours(self, node: int) -> list[int]:
        """The nodes beside ``node`` in its partition (global ids)."""
        part, local = self._local(node)
        offset = int(self.offsets[part])
        return [offset + other for other in self.parts[part].neighbours(local)]

    def take_down(self, node: int, until: float) -> None:
        """A node fails (global id) until ``until`` seconds."""
        part, local = self._local(node)
        self.parts[part].take_down(local, until)

    def repair(self, node: int, at: float) -> bool:
        """A node's repair at ``at`` seconds; False when a later failure keeps it down."""
        part, local = self._local(node)
        return self.parts[part].repair(local, at)

    def repairs_ahead(self) -> list[tuple[float, int]]:
        """``(repair time, global node id)`` of the down nodes, ascending."""
        ahead = [
            (at, int(node) + int(offset))
            for part, offset in zip(self.parts, self.offsets, strict=True)
            for at, node in part.repairs_ahead()
        ]
        return sorted(ahead)

    def coordinate(self, node: int) -> tuple[int, int]:
        """Where a node is drawn: (its partition, its index there)."""
        return self._local(node)

    def layout(self) -> tuple[int, int]:
        """(rows, columns) of a near-square grid for drawing every node, partitions one after the other (the browser's)."""
        columns = math.ceil(math.sqrt(self.capacity))
        return math.ceil(self.capacity / columns), columns
