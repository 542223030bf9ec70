"""A heterogeneous cluster: partitions of node types, each with its cores, memory and GPUs per node.

``platform = "heterogeneous"`` with ``node_types = "NAME:NODES:CORES:MEMORY_GIB[:GPUS],..."`` builds a
:class:`~torus_sim.machine.platforms.partitioned.PartitionedPlatform` of one partition per node type. A job asks
processors (its size), memory (SWF field 10, the requested memory in KB per processor; none when the log gives -1)
and GPUs (SWF has no field for them: the ``gpus`` column of the resources table ``torus-sim convert`` writes beside the
log, ``LOG.resources.csv``, when it is there; none otherwise). Nodes are given whole to one job (Slurm's exclusive nodes, the PWA logs' machines); on a
node type of ``c`` cores, ``m`` GiB and ``g`` GPUs per node, a job of ``p`` processors, ``M`` GiB in all and ``G``
GPUs occupies ``n = max(ceil(p / c), ceil(M / m), ceil(G / g))`` nodes. It runs on the first node type, in the order
the scenario lists them, that has that many nodes (a site lists its general nodes first, as a default partition
comes first in Slurm); a job no type can hold stops the run with a sentence that names it.

The platform counts processors, as the logs do (SWF's sizes and MaxProcs, a cluster's P): a partition of ``N`` nodes
of ``c`` cores is ``N c`` processors given out ``c`` at a time, and a job occupies ``n c`` of them (its
``partition_size``), the cores of its whole nodes. Its size stays the processors it asked, so the cores a job holds
but does not use count as lost capacity (ω_lost, BGL-FAULT §6.1), as a torus's rounding up to a partition does.
Every allocation is whole nodes: each is a multiple of ``c`` processors taken lowest ids first from a free set that is
a union of whole nodes. Node failures are not modelled on it (a run with failures is refused).

References:
    SWF 2.2 (Chapin et al., JSSPP 1999; the Parallel Workloads Archive's definition): field 10, requested memory in
    kilobytes per processor; Slurm's ``slurm.conf`` node definitions (CPUs, RealMemory, Gres=gpu) and partitions.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from torus_sim.core.errors import ConfigurationError
from torus_sim.core.files import sidecar_path
from torus_sim.inputs.workload.queues import JobValues
from torus_sim.machine.platforms.base import PlatformKind
from torus_sim.machine.platforms.cluster import MAX_NODES, ClusterPlatform
from torus_sim.machine.platforms.partitioned import PartitionedPlatform

__all__ = ["DEMAND_FIELDS", "HeterogeneousKind", "NodeType", "node_router", "parse_node_types", "resource_gpus"]

DEMAND_FIELDS = ("requested_memory",)
"""The SWF fields (besides ``job_id``) the heterogeneous cluster reads of each job: field 10, KB per processor."""

KIB_PER_GIB = 2**20
"""Kilobytes (SWF's KB, 1,024 bytes) in a GiB."""


class NodeType(NamedTuple):
    """One partition of a heterogeneous cluster: its nodes and what each has.

    Attributes:
        name: the partition's name.
        nodes: how many nodes (>= 1).
        cores: processors per node (>= 1).
        memory_gib: memory per node, GiB (> 0).
        gpus: GPUs per node (>= 0).
    """

    name: str
    nodes: int
    cores: int
    memory_gib: float
    gpus: int = 0

    def nodes_for(self, processors: int, memory_gib: float, gpus: int) -> int | float:
        """Nodes a job needs on this type: ``max(ceil(p / cores), ceil(M / memory), ceil(G / gpus))`` (inf: no GPUs here)."""
        needed = max(math.ceil(processors / self.cores), math.ceil(memory_gib / self.memory_gib - 1e-9), 1)
        if gpus > 0:
            needed = max(needed, math.ceil(gpus / self.gpus)) if self.gpus > 0 else math.inf
        return needed


def parse_node_types(text: str) -> tuple[NodeType, ...]:
    """The node types of ``node_types = "NAME:NODES:CORES:MEMORY_GIB[:GPUS],..."`` (``"thin:224:8:16,fat:16:8:64"``).

    Raises:
        ConfigurationError: an empty list, a malformed entry (named with what was expected), a repeated name, or more
            nodes than are simulated.
    """
    kinds = []
    for entry in (piece.strip() for piece in str(text).split(",")):
        parts = entry.split(":")
        try:
            if len(parts) not in (4, 5) or not parts[0]:
                raise ValueError
            name, nodes, cores, memory = parts[0], int(parts[1]), int(parts[2]), float(parts[3])
            gpus = int(parts[4]) if len(parts) == 5 else 0
            if nodes < 1 or cores < 1 or not 0 < memory < math.inf or gpus < 0:
                raise ValueError
        except ValueError:
            raise ConfigurationError(
                f"node_types: {entry!r} is not NAME:NODES:CORES:MEMORY_GIB[:GPUS] with NODES, CORES >= 1, MEMORY_GIB > 0 "
                "and GPUS >= 0 (for instance thin:224:8:16,gpu:8:8:64:4)"
            ) from None
        kinds.append(NodeType(name, nodes, cores, memory, gpus))
    names = [kind.name for kind in kinds]
    if len(set(names)) != len(names):
        raise ConfigurationError(f"node_types: each type needs its own name, got {names}")
    if sum(kind.nodes for kind in kinds) > MAX_NODES:
        raise ConfigurationError(f"node_types: at most {MAX_NODES:,} nodes are simulated")
    return tuple(kinds)


def node_router(types: tuple[NodeType, ...], job_ids, memory_kib_per_processor, gpus=None):
    """The router of a heterogeneous cluster: ``job -> (node type's index, nodes)``.

    Args:
        types: the node types, in the order a job tries them.
        job_ids: int ``(n,)``, the jobs the demands are given for.
        memory_kib_per_processor: float ``(n,)``, SWF field 10 (KB per processor; < 0 where unknown: none asked).
        gpus: int ``(n,)`` GPUs per job, or None (none asked).

    Returns:
        A callable for :class:`~torus_sim.machine.platforms.partitioned.PartitionedPlatform` giving ``(type, the
        processors of the job's whole nodes)``; it raises ConfigurationError for a job no type can hold (its processors,
        memory and GPUs named).
    """
    ids = np.asarray(job_ids, dtype=np.int64)  # per job as arrays (JobValues), not dicts of every job
    memory = JobValues(ids, np.maximum(np.asarray(memory_kib_per_processor, dtype=np.float64), 0.0))
    asked_gpus = {} if gpus is None else JobValues(ids, np.asarray(gpus, dtype=np.int64))

    def route(job) -> tuple[int, int]:
        processors = job.size
        total = processors * memory.get(job.job_id, 0.0) / KIB_PER_GIB
        wanted = asked_gpus.get(job.job_id, 0)
        for index, kind in enumerate(types):
            needed = kind.nodes_for(processors, total, wanted)
            if needed <= kind.nodes:
                return index, int(needed) * kind.cores
        raise ConfigurationError(
            f"job {job.job_id} asks {processors} processors, {total:.3g} GiB and {wanted} GPUs, which no node type of "
            f"{', '.join(kind.name for kind in types)} can hold"
        )

    return route


def resource_gpus(log, job_ids) -> np.ndarray | None:
    """GPUs per job from the resources table beside a converted log (``LOG.resources.csv``), or None without one.

    Args:
        log: the SWF log's path.
        job_ids: int ``(n,)``, the jobs to give GPUs for (the table's ``job_id`` is the SWF job number).

    Returns:
        int ``(n,)``: each job's GPUs (0 where the table leaves it empty or names no such job); None when no table is
        beside the log.

    Raises:
        ConfigurationError: a table without ``job_id`` and ``gpus`` columns, or with a GPU count that is no whole
            number >= 0 (named with the file).
    """
    path = sidecar_path(log, ".resources.csv")
    if not path.is_file():
        return None
    import pandas as pd

    try:
        table = pd.read_csv(path, usecols=["job_id", "gpus"])
    except ValueError as error:
        raise ConfigurationError(f"{path}: a resources table needs job_id and gpus columns ({error})") from None
    gpus = pd.to_numeric(table["gpus"], errors="coerce").fillna(0)
    if (gpus < 0).any() or (gpus != gpus.round()).any():
        raise ConfigurationError(f"{path}: gpus must be whole numbers >= 0")
    # a join by bisection over the table's ids (an id given twice keeps its last row), not a dict of every job
    ids, counts = table["job_id"].to_numpy(dtype=np.int64)[::-1], gpus.to_numpy(dtype=np.int64)[::-1]
    known, last = np.unique(ids, return_index=True)
    wanted = np.asarray(job_ids, dtype=np.int64)
    if not len(known):
        return np.zeros(len(wanted), dtype=np.int64)
    at = np.minimum(np.searchsorted(known, wanted), len(known) - 1)
    return np.where(known[at] == wanted, counts[last][at], 0).astype(np.int64)


class HeterogeneousKind(PlatformKind):
    """``platform = "heterogeneous"``: partitions of node types (``node_types``), a job on the first type that holds it.

    A kind whose ``job_fields`` names SWF fields is built with ``jobs``, the replayed log's trace of those fields
    (and ``job_id``); a workload that is no SWF log gives none (every job then asks no memory).

    References:
        SWF 2.2's requested memory (field 10); Slurm's node and partition definitions.
    """

    name = "heterogeneous"
    default_rules = "pv-easy"
    sizes_from_workload = False
    from_scenario = ("node_types",)

    def _types(self, fields) -> tuple[NodeType, ...]:
        if not fields.node_types:
            raise ConfigurationError(
                'a heterogeneous cluster needs its node types: node_types = "NAME:NODES:CORES:MEMORY_GIB[:GPUS],..."'
            )
        return parse_node_types(fields.node_types)

    def capacity(self, fields, named: int | None) -> int:
        """Processors (cores) of every node of every type."""
        return sum(kind.nodes * kind.cores for kind in self._types(fields))

    def node_word(self, fields) -> str:
        """``processor``: its sizes, capacity and lost work are counted in processors (cores)."""
        return "processor"

    def job_fields(self, fields) -> tuple[str, ...]:
        """SWF field 10 (requested memory), read of each job of the replayed log."""
        return DEMAND_FIELDS

    def build(self, fields, nodes: int, node_identities: bool = False, jobs=None) -> PartitionedPlatform:
        """One cluster of processors per node type (with identities), the router over the jobs' demands.

        Args:
            fields: the scenario's ``node_types``.
            nodes: the capacity in processors (:meth:`capacity`).
            node_identities: unused (the partitions always keep node identities).
            jobs: the log's trace with ``job_id`` and :data:`DEMAND_FIELDS`, or None (no job asks memory); the GPUs
                come from the resources table beside its file (:func:`resource_gpus`).
        """
        types = self._types(fields)
        if jobs is None:
            router = node_router(types, [], [])
        else:
            ids = jobs.column("job_id")
            router = node_router(types, ids, jobs.column("requested_memory"), resource_gpus(jobs.path, ids))
        parts = [ClusterPlatform(kind.nodes * kind.cores, identities=True) for kind in types]
        return PartitionedPlatform(
            [kind.name for kind in types],
            parts,
            router,
            kind=self.name,
            node_word="processor",
            failure_refusal="node failures on a heterogeneous cluster (whole nodes of several processors) are not modelled",
        )

    def describe(self, platform, fields) -> dict:
        """The manifest's entry: kind, processors (``nodes``, the unit every platform's capacity is counted in) and the node types as given."""
        return {"kind": platform.kind, "nodes": platform.capacity, "node_types": fields.node_types}

    def header(self, described: dict) -> str:
        """``heterogeneous cluster of 1,088 processors (thin:120:8:16,fat:16:8:64)``."""
        return f"heterogeneous cluster of {described['nodes']:,} processors ({described['node_types']})"

    def label(self, platform, fields) -> str:
        """The platform's own label (each partition's nodes)."""
        return platform.label
