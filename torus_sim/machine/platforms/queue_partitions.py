"""A cluster split into partitions by the log's queues or by rules: each job runs only on its partition's processors.

``platform = "partitions"`` with ``partitions = "NAME:PROCESSORS:QUEUES[:max_time=SECONDS][:max_nodes=N],..."``
builds a :class:`~torus_sim.machine.platforms.partitioned.PartitionedPlatform` of one cluster per partition:
``QUEUES`` is the log's queue numbers (SWF field 15; field 16, the partition number, with
``partition_field = "partition"``) joined by ``+``, or ``*`` for every queue no other partition names. A job runs only on
the processors of the partition its queue is routed to, with its own instance of the run's policy over the jobs routed
there (Slurm's disjoint partitions, PBS's queues with their own nodes, LoadLeveler's classes on their own nodes).

A partition's limits are Slurm's ``MaxTime`` and ``MaxNodes``: the longest requested time (SWF field 9) and the most
processors one job of it may ask. With ``partition_field = "rules"`` the log's queues are not read: each job goes to
the first partition, in the order given, whose limits admit it and whose processors hold it (PBS's routing queue,
whose destinations are tried in order; a site routing short and small jobs to their own nodes), and every partition's
``QUEUES`` is ``*``. A queue the log does not have, a partition without processors, a queue named twice, a job larger
than its partition or over its limits, or a job no partition admits is refused in one sentence.

References:
    SWF 2.2 (Chapin et al., JSSPP 1999): field 9 (requested time), field 15 (queue number), field 16 (partition number);
    Slurm's ``slurm.conf`` partitions (``PartitionName``, ``Nodes``, ``MaxTime``, ``MaxNodes``), whose jobs are tested
    only against their partition's nodes; PBS Professional's routing queues (``route_destinations``, tried in order,
    each with its ``resources_max``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from torus_sim.core.errors import ConfigurationError
from torus_sim.inputs.workload.queues import JobValues, log_queues
from torus_sim.machine.platforms.base import PlatformKind
from torus_sim.machine.platforms.cluster import MAX_NODES, ClusterPlatform
from torus_sim.machine.platforms.partitioned import PartitionedPlatform

__all__ = ["EVERY_OTHER", "LIMITS", "QueuePartition", "QueuePartitionsKind", "parse_partitions", "queue_router", "rule_router"]

EVERY_OTHER = "*"
"""The ``QUEUES`` of the partition that takes every queue no other partition names (every job, routed by rules)."""

LIMITS = ("max_time", "max_nodes")
"""A partition's limits: the longest requested time of a job, seconds (Slurm's ``MaxTime``), and the most processors one
job may ask (Slurm's ``MaxNodes``)."""


class QueuePartition(NamedTuple):
    """One partition: its name, its processors, the log's queues routed to it and its limits.

    Attributes:
        name: the partition's name.
        processors: its processors (>= 1).
        queues: the queue numbers routed to it, or None: every queue no other partition names (every job, by rules).
        max_time: the longest requested time a job of it may ask, seconds (None: no limit).
        max_nodes: the most processors a job of it may ask (None: its processors).
    """

    name: str
    processors: int
    queues: frozenset[int] | None
    max_time: float | None = None
    max_nodes: int | None = None

    def refusal(self, job) -> str | None:
        """Why this partition does not admit ``job`` (a clause), or None when it does.

        Args:
            job: a job (its ``size``, processors, and ``walltime``, the requested time in seconds).
        """
        if job.size > self.processors:
            return f"asks {job.size} processors; partition {self.name!r} has {self.processors}"
        if self.max_nodes is not None and job.size > self.max_nodes:
            return f"asks {job.size} processors; partition {self.name!r} allows at most {self.max_nodes} (max_nodes)"
        if self.max_time is not None and job.walltime > self.max_time:
            return f"asks {job.walltime:,.0f} s; partition {self.name!r} allows at most {self.max_time:,.0f} s (max_time)"
        return None


def _limits(name: str, items: list[str]) -> dict:
    """``max_time=SECONDS`` and ``max_nodes=N`` items of partition ``name``."""
    limits: dict = {}
    for item in items:
        key, equals, value = (part.strip() for part in item.partition("="))
        if not equals or key not in LIMITS:
            raise ConfigurationError(
                f"partitions: {name}'s limits are max_time=SECONDS and max_nodes=N after NAME:PROCESSORS:QUEUES, got {item!r}"
            )
        if key in limits:
            raise ConfigurationError(f"partitions: {name} gives {key} twice")
        try:
            number = float(value)
        except ValueError:
            number = float("nan")
        if key == "max_nodes" and not (value.isdigit() and 1 <= int(value) <= MAX_NODES):
            raise ConfigurationError(
                f"partitions: {name}'s max_nodes must be a whole number in [1, {MAX_NODES:,}], got {value!r}"
            )
        if key == "max_time" and not (number > 0 and number < float("inf")):
            raise ConfigurationError(f"partitions: {name}'s max_time must be a number of seconds above 0, got {value!r}")
        limits[key] = int(value) if key == "max_nodes" else number
    return limits


def parse_partitions(text: str, by_rules: bool = False) -> tuple[QueuePartition, ...]:
    """Read ``"NAME:PROCESSORS:QUEUES[:max_time=SECONDS][:max_nodes=N],..."`` (``batch:100:1+2,small:28:*:max_time=3600``).

    Args:
        text: the partitions, comma-separated; each its name, its processors and its queues (``+``-joined numbers, or
            ``*`` for every other queue), then its limits if any.
        by_rules: the jobs are routed by the partitions' limits (``partition_field = "rules"``): every ``QUEUES`` is ``*``.

    Returns:
        The partitions in the given order.

    Raises:
        ConfigurationError: a malformed partition, processors that are not a whole number in [1, 4,194,304], a limit
            that is not ``max_time`` above 0 seconds or ``max_nodes`` a whole number in the same range, a name or a
            queue given twice, more than one ``*`` (by queue), or a partition naming queues (by rules).
    """
    partitions: list[QueuePartition] = []
    for item in (part.strip() for part in text.split(",")):
        fields = [field.strip() for field in item.split(":")]
        if len(fields) < 3 or not fields[0]:
            raise ConfigurationError(
                f"partitions: expected NAME:PROCESSORS:QUEUES (as batch:100:1+2 or small:28:*), got {item!r}"
            )
        name, processors, queues = fields[:3]
        limits = _limits(name, fields[3:])
        if not processors.isdigit() or not 1 <= int(processors) <= MAX_NODES:
            raise ConfigurationError(
                f"partitions: {name}'s processors must be a whole number in [1, {MAX_NODES:,}], got {processors!r}"
            )
        if queues == EVERY_OTHER:
            routed = None
        elif by_rules:
            raise ConfigurationError(
                f'partitions: routed by rules (partition_field = "rules"), {name}\'s queues are {EVERY_OTHER}, got {queues!r}'
            )
        else:
            numbers = queues.split("+")
            if not all(number.strip().lstrip("-").isdigit() for number in numbers):
                raise ConfigurationError(f"partitions: {name}'s queues must be numbers joined by + or *, got {queues!r}")
            routed = frozenset(int(number) for number in numbers)
        partitions.append(QueuePartition(name, int(processors), routed, **limits))
    names = [partition.name for partition in partitions]
    if len(set(names)) != len(names):
        raise ConfigurationError(f"partitions: a name given twice in {names}")
    if not by_rules and sum(partition.queues is None for partition in partitions) > 1:
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
        ConfigurationError for a job whose queue no partition takes, or that is larger than its partition or over its
        limits.
    """
    by_job = JobValues(job_ids, np.asarray(queues, dtype=np.int64))  # arrays, not a dict of every job
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
        refusal = partitions[index].refusal(job)
        if refusal is not None:
            raise ConfigurationError(f"job {job.job_id} ({word} {queue}) {refusal}")
        return index, int(job.size)

    return route


def rule_router(partitions: tuple[QueuePartition, ...]):
    """The router of a cluster partitioned by rules: each job to the first partition, in order, that admits it.

    Args:
        partitions: the partitions (:func:`parse_partitions` with ``by_rules``), in the order their limits are tried.

    Returns:
        A callable ``job -> (partition's index, processors)`` for
        :class:`~torus_sim.machine.platforms.partitioned.PartitionedPlatform`; it raises ConfigurationError for a job no
        partition admits, naming why the last one does not.

    References:
        PBS Professional's routing queues (``route_destinations`` tried in order, each queue's ``resources_max``);
        Slurm's ``MaxTime`` and ``MaxNodes`` of a partition.
    """

    def route(job) -> tuple[int, int]:
        refusal = None
        for index, partition in enumerate(partitions):
            refusal = partition.refusal(job)
            if refusal is None:
                return index, int(job.size)
        raise ConfigurationError(f"job {job.job_id} fits no partition: it {refusal} (and every partition before it refuses it)")

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
        return parse_partitions(fields.partitions, by_rules=fields.partition_field == "rules")

    def capacity(self, fields, named: int | None) -> int:
        """Processors of every partition.

        Raises:
            ConfigurationError: no partitions, or partitions that hold more processors than the machine the workload
                names (an SWF log's ``MaxProcs``).
        """
        total = sum(partition.processors for partition in self._partitions(fields))
        if named is not None and total > named:
            raise ConfigurationError(
                f"partitions: they hold {total:,} processors, more than the workload's machine ({named:,}, an SWF log's MaxProcs)"
            )
        return total

    def job_fields(self, fields) -> tuple[str, ...]:
        """SWF field 15 (``queue``), or 16 (``partition``) with ``partition_field = "partition"``; none by rules."""
        if fields.partition_field == "rules":
            return ()
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
        clusters = [ClusterPlatform(partition.processors, identities=True) for partition in partitions]
        names = [partition.name for partition in partitions]
        if word == "rules":
            return PartitionedPlatform(names, clusters, rule_router(partitions), kind=self.name)
        if jobs is None:
            raise ConfigurationError(
                f"a cluster partitioned by {word} reads each job's {word} from an SWF log: the workload is none"
            )
        queues = jobs.column(word).astype(np.int64)
        present = log_queues(jobs, word)  # the lines' and the header's (a queue the header names may hold no line)
        for partition in partitions:
            missing = sorted((partition.queues or frozenset()) - present)
            if missing:
                raise ConfigurationError(
                    f"partitions: {partition.name} names {word} {missing[0]}, which {jobs.path.name} does not have (its "
                    f"{word}s: {', '.join(str(queue) for queue in sorted(present))})"
                )
        return PartitionedPlatform(names, clusters, queue_router(partitions, jobs.column("job_id"), queues, word), kind=self.name)

    def describe(self, platform, fields) -> dict:
        """The manifest's entry: kind, processors and the partitions as given."""
        return {"kind": platform.kind, "nodes": platform.capacity, "partitions": fields.partitions}

    def header(self, described: dict) -> str:
        """``cluster of 128 processors in partitions (batch:100:1+2,small:28:*)``."""
        return f"cluster of {described['nodes']:,} processors in partitions ({described['partitions']})"

    def label(self, platform, fields) -> str:
        """The platform's own label (each partition's nodes)."""
        return platform.label
