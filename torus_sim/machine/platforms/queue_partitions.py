"""A cluster split into partitions by the log's queues: each queue's jobs run only on its partition's processors.

``platform = "partitions"`` with ``partitions = "NAME:PROCESSORS:QUEUES,..."`` builds a
:class:`~torus_sim.machine.platforms.partitioned.PartitionedPlatform` of one cluster per partition: ``QUEUES`` is the
log's queue numbers (SWF field 15; field 16, the partition number, with ``partition_field = "partition"``) joined by
``+``, or ``*`` for every queue no other partition names. A job runs only on the processors of the partition its queue
is routed to, with its own instance of the run's policy over the jobs routed there (Slurm's disjoint partitions,
PBS's queues with their own nodes, LoadLeveler's classes on their own nodes). A queue the log does not have, a
partition without processors, a queue named twice or a job larger than its partition is refused in one sentence.

References:
    SWF 2.2 (Chapin et al., JSSPP 1999): field 15 (queue number), field 16 (partition number); Slurm's ``slurm.conf``
    partitions (``PartitionName``, ``Nodes``), whose jobs are tested only against their partition's nodes.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from torus_sim.core.errors import ConfigurationError
from torus_sim.machine.platforms.base import PlatformKind
from torus_sim.machine.platforms.cluster import MAX_NODES, ClusterPlatform
from torus_sim.machine.platforms.partitioned import PartitionedPlatform

__all__ = ["EVERY_OTHER", "QueuePartition", "QueuePartitionsKind", "parse_partitions", "queue_router"]

EVERY_OTHER = "*"
"""The ``QUEUES`` of the partition that takes every queue no other partition names."""


class QueuePartition(NamedTuple):
    """One partition: its name, its processors and the log's queues routed to it.

    Attributes:
        name: the partition's name.
        processors: its processors (>= 1).
        queues: the queue numbers routed to it, or None: every queue no other partition names.
    """

    name: str
    processors: int
    queues: frozenset[int] | None


def parse_partitions(text: str) -> tuple[QueuePartition, ...]:
    """Read ``"NAME:PROCESSORS:QUEUES,..."`` (``batch:100:1+2,small:28:*``).

    Args:
        text: the partitions, comma-separated; each its name, its processors and its queues (``+``-joined numbers, or
            ``*`` for every other queue).

    Returns:
        The partitions in the given order.

    Raises:
        ConfigurationError: a malformed partition, processors that are not a whole number in [1, 4,194,304], a name
            or a queue given twice, or more than one ``*``.
    """
    partitions: list[QueuePartition] = []
    for item in (part.strip() for part in text.split(",")):
        fields = [field.strip() for field in item.split(":")]
        if len(fields) != 3 or not fields[0]:
            raise ConfigurationError(
                f"partitions: expected NAME:PROCESSORS:QUEUES (as batch:100:1+2 or small:28:*), got {item!r}"
            )
        name, processors, queues = fields
        if not processors.isdigit() or not 1 <= int(processors) <= MAX_NODES:
            raise ConfigurationError(
                f"partitions: {name}'s processors must be a whole number in [1, {MAX_NODES:,}], got {processors!r}"
            )
        if queues == EVERY_OTHER:
            routed = None
        else:
            numbers = queues.split("+")
            if not all(number.strip().lstrip("-").isdigit() for number in numbers):
                raise ConfigurationError(f"partitions: {name}'s queues must be numbers joined by + or *, got {queues!r}")
            routed = frozenset(int(number) for number in numbers)
        partitions.append(QueuePartition(name, int(processors), routed))
    names = [partition.name for partition in partitions]
    if len(set(names)) != len(names):
        raise ConfigurationError(f"partitions: a name given twice in {names}")
    if sum(partition.queues is None for partition in partitions) > 1:
        raise ConfigurationError("partitions: only one partition may take every other queue (*)")
    seen: set[int] = set()
    for partition in partitions:
        twice = seen & (partition.queues or frozenset())
        if twice:
            raise ConfigurationError(f"partitions: queue {min(twice)} is routed to two partitions")
        seen |= partition.queues or frozenset()
    return tuple(partitions)


def queue_router(partitions: tuple[QueuePartition, ...], job_ids, queues, word: str = "queue"):
    """The router of a cluster partitioned by queue: ``job -> (partition's index, processors)``.

    Args:
        partitions: the partitions (:func:`parse_partitions`).
        job_ids: int ``(n,)``, the jobs the queues are given for.
        queues: int ``(n,)``, each job's queue (or partition) number, -1 where the log gives none.
        word: what the numbers are (``queue``, ``partition``), for the sentences.

    Returns:
        A callable for :class:`~torus_sim.machine.platforms.partitioned.PartitionedPlatform`; it raises
        ConfigurationError for a job whose queue no partition takes, or that is larger than its partition.
    """
    by_job = dict(zip(np.asarray(job_ids, dtype=np.int64).tolist(), np.asarray(queues, dtype=np.int64).tolist(), strict=True))
    explicit = {queue: index for index, partition in enumerate(partitions) for queue in (partition.queues or ())}
    default = next((index for index, partition in enumerate(partitions) if partition.queues is None), None)

    def route(job) -> tuple[int, int]:
        queue = by_job.get(job.job_id, -1)
        index = explicit.get(queue, default)
        if index is None:
            raise ConfigurationError(
                f"job {job.job_id} is in {word} {queue}, which no partition takes: name it in a partition or give one "
                f"partition {EVERY_OTHER}"
            )
        partition = partitions[index]
        if job.size > partition.processors:
            raise ConfigurationError(
                f"job {job.job_id} asks {job.size} processors; its partition {partition.name!r} ({word} {queue}) has "
                f"{partition.processors}"
            )
        return index, int(job.size)

    return route


class QueuePartitionsKind(PlatformKind):
    """``platform = "partitions"``: a cluster split by the log's queues (``partitions``, ``partition_field``).

    References:
        SWF 2.2's queue and partition fields (15, 16); Slurm's disjoint partitions.
    """

    name = "partitions"
    default_rules = "pv-easy"
    sizes_from_workload = False
    from_scenario = ("partitions", "partition_field")

    def _partitions(self, fields) -> tuple[QueuePartition, ...]:
        if not fields.partitions:
            raise ConfigurationError('a partitioned cluster needs its partitions: partitions = "NAME:PROCESSORS:QUEUES,..."')
        return parse_partitions(fields.partitions)

    def capacity(self, fields, named: int | None) -> int:
        """Processors of every partition."""
        return sum(partition.processors for partition in self._partitions(fields))

    def job_fields(self, fields) -> tuple[str, ...]:
        """SWF field 15 (``queue``), or 16 (``partition``) with ``partition_field = "partition"``."""
        return (fields.partition_field or "queue",)

    def build(self, fields, nodes: int, node_identities: bool = False, jobs=None) -> PartitionedPlatform:
        """One cluster per partition (with identities), the router over the jobs' queues.

        Args:
            fields: the scenario's ``partitions`` and ``partition_field``.
            nodes: the processors of every partition (:meth:`capacity`).
            node_identities: unused (the partitions always keep node identities).
            jobs: the log's trace with ``job_id`` and the queue (or partition) field.

        Raises:
            ConfigurationError: no SWF log to read the queues of, or a partition naming a queue the log does not have
                (the log's queues named).
        """
        partitions = self._partitions(fields)
        word = fields.partition_field or "queue"
        if jobs is None:
            raise ConfigurationError(
                f"a cluster partitioned by {word} reads each job's {word} from an SWF log: the workload is none"
            )
        queues = jobs.column(word).astype(np.int64)
        present = set(np.unique(queues).tolist())
        for partition in partitions:
            missing = sorted((partition.queues or frozenset()) - present)
            if missing:
                raise ConfigurationError(
                    f"partitions: {partition.name} names {word} {missing[0]}, which {jobs.path.name} does not have (its "
                    f"{word}s: {', '.join(str(queue) for queue in sorted(present))})"
                )
        return PartitionedPlatform(
            [partition.name for partition in partitions],
            [ClusterPlatform(partition.processors, identities=True) for partition in partitions],
            queue_router(partitions, jobs.column("job_id"), queues, word),
            kind=self.name,
        )

    def describe(self, platform, fields) -> dict:
        """The manifest's entry: kind, processors and the partitions as given."""
        return {"kind": platform.kind, "nodes": platform.capacity, "partitions": fields.partitions}

    def header(self, described: dict) -> str:
        """``cluster of 128 processors in partitions (batch:100:1+2,small:28:*)``."""
        return f"cluster of {described['nodes']:,} processors in partitions ({described['partitions']})"

    def label(self, platform, fields) -> str:
        """The platform's own label (each partition's nodes)."""
        return platform.label
