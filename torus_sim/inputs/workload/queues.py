"""Each job's queue and each user's group, from the SWF log the jobs came from, for the multifactor priority.

An SWF log keeps each job's queue (field 15; the header's ``Queue:`` lines name them: SDSC-SP2's interactive,
express, high, normal, low, standby). A production scheduler orders its queue by them (Slurm's partition factor,
LoadLeveler's class priorities): for a quarter of SDSC-SP2's waited jobs a later job at least as large and as long
started at least ten minutes earlier, mostly from another queue. The jobs of a run carry no queue; the factor is read
from the log by job id when the priority weighs queues (:func:`job_queue_factors`): each queue's tier, given by the site
(:func:`parse_queue_tiers`), over the highest (:func:`queue_factors`). The log's groups (field 13) are the accounts of a
fair share by group (:func:`user_accounts`).

References:
    Slurm's documentation, "Multifactor Priority Plugin" (PriorityWeightPartition, a partition's PriorityJobFactor;
    the fair share by account); Jackson, Snell and Clement, "Core algorithms of the Maui scheduler", JSSPP 2001 (group
    fair share); the SWF definition (fields 13 and 15).
"""

from __future__ import annotations

import math

import numpy as np

from torus_sim.core.errors import ConfigurationError

__all__ = [
    "ACCOUNT_FIELDS",
    "QUEUE_FIELDS",
    "JobValues",
    "job_queue_factors",
    "job_queues",
    "log_queues",
    "parse_queue_tiers",
    "queue_factors",
    "user_accounts",
]

_DENSE_SLACK = 4
"""Ids spread over at most this many times their count (plus 1,024) are held in an array indexed by id."""


class JobValues:
    """A number per job id, kept in numpy arrays: the log's queue, or queue factor, of each of millions of jobs.

    A dict of ten million jobs holds about a gigabyte (each entry, its key and its value are objects); these arrays
    hold 9 bytes a job where the ids are dense (most logs number their jobs 1..n, with gaps: an array indexed by id and
    a mask of the ids present) and 16 where they are not (the ids sorted, searched by bisection). An id given twice
    keeps its last value, as a dict built from the pairs would.

    Args:
        job_ids: int ``(n,)``, the jobs' ids.
        values: ``(n,)`` numbers, each job's value (int or float).

    Raises:
        ValueError: the two differ in length.
    """

    __slots__ = ("_first", "_ids", "_present", "_values")

    def __init__(self, job_ids, values) -> None:
        ids = np.asarray(job_ids, dtype=np.int64).ravel()
        numbers = np.asarray(values).ravel()
        if len(ids) != len(numbers):
            raise ValueError(f"{len(ids)} job ids and {len(numbers)} values")
        if len(ids) and len(np.unique(ids)) != len(ids):  # the last value of an id given twice, as a dict keeps it
            backwards, last = np.unique(ids[::-1], return_index=True)
            ids, numbers = backwards, numbers[::-1][last]
        self._first = int(ids.min()) if len(ids) else 0
        span = int(ids.max()) - self._first + 1 if len(ids) else 0
        if span <= _DENSE_SLACK * len(ids) + 1024:
            self._ids = None
            self._values = np.zeros(span, dtype=numbers.dtype)
            self._present = np.zeros(span, dtype=bool)
            self._values[ids - self._first] = numbers
            self._present[ids - self._first] = True
        else:
            order = np.argsort(ids, kind="stable")
            self._ids, self._values, self._present = ids[order], numbers[order], None

    def __len__(self) -> int:
        """Jobs with a value."""
        return int(self._present.sum()) if self._ids is None else len(self._ids)

    def get(self, job_id: int, default=None):
        """``job_id``'s value (a Python int or float), or ``default`` where it has none."""
        if self._ids is None:
            index = job_id - self._first
            if 0 <= index < len(self._present) and self._present.item(index):
                return self._values.item(index)
            return default
        index = int(np.searchsorted(self._ids, job_id))
        if index < len(self._ids) and self._ids.item(index) == job_id:
            return self._values.item(index)
        return default

    def as_dict(self) -> dict:
        """Job id -> value, every job with one (for a test or a small log)."""
        if self._ids is None:
            where = np.flatnonzero(self._present)
            return dict(zip((where + self._first).tolist(), self._values[where].tolist(), strict=True))
        return dict(zip(self._ids.tolist(), self._values.tolist(), strict=True))


def parse_queue_tiers(text: str) -> dict[int, float]:
    """Each queue's tier from ``"QUEUE:TIER,..."`` (``"1:4,2:3,3:2,4:1"``).

    Args:
        text: comma-separated ``queue:tier`` pairs; a queue is an SWF queue number (an integer), a tier a number >= 0.

    Returns:
        queue -> tier.

    Raises:
        ValueError: a pair that is not ``integer:number >= 0``, a queue named twice, or every tier 0.
    """
    tiers: dict[int, float] = {}
    for pair in text.split(","):
        queue, colon, tier = pair.strip().partition(":")
        try:
            number, value = int(queue), float(tier)
        except ValueError:
            raise ValueError(f"priority_queue_tiers: expected QUEUE:TIER pairs like 1:4,2:3, got {pair.strip()!r}") from None
        if not colon or not 0 <= value < math.inf:
            raise ValueError(f"priority_queue_tiers: a tier is a number >= 0, got {pair.strip()!r}")
        if number in tiers:
            raise ValueError(f"priority_queue_tiers: queue {number} is named twice")
        tiers[number] = value
    if not any(tiers.values()):
        raise ValueError("priority_queue_tiers: every tier is 0 (the queue factor would be 0 for every job)")
    return tiers


def queue_factors(job_ids, queues, tiers: dict[int, float]) -> dict[int, float]:
    """Each job's queue factor: its queue's tier over the highest tier (Slurm's partition factor, normalised).

    Args:
        job_ids: int ``(n,)``, the jobs' ids.
        queues: int ``(n,)``, their SWF queue numbers (field 15).
        tiers: queue -> tier (:func:`parse_queue_tiers`); a queue not listed has tier 0.

    Returns:
        job id -> factor in [0, 1], for the jobs whose factor is not 0.
    """
    top = max(tiers.values())
    return {
        int(job_id): tiers[int(queue)] / top for job_id, queue in zip(job_ids, queues, strict=True) if tiers.get(int(queue), 0.0)
    }


QUEUE_FIELDS = ("job_id", "queue")
"""The SWF fields :func:`job_queue_factors` reads."""

ACCOUNT_FIELDS = ("user_id", "group_id")
"""The SWF fields :func:`user_accounts` reads."""


def log_queues(log, field: str = "queue") -> set[int]:
    """The queues an SWF log knows: those its lines use (field 15) and those its header's ``Queue:`` lines name.

    SDSC-SP2's header names queue 0 (interactive), which its cleaned lines no longer use: a site may still give it a
    tier or a partition.

    Args:
        log: the log's trace with ``field`` (:func:`~torus_sim.inputs.workload.logged.workload_log`).
        field: ``"queue"`` (field 15, the header's ``Queue:`` lines) or ``"partition"`` (field 16, ``Partition:``).

    Returns:
        The queue (or partition) numbers.
    """
    known = set(np.unique(log.column(field).astype(np.int64)).tolist())
    for line in str(log.header.get(field.capitalize(), "")).splitlines():
        number = line.split(maxsplit=1)[0] if line.strip() else ""
        if number.lstrip("-").isdigit():
            known.add(int(number))
    return known


def job_queue_factors(tiers: str, log) -> JobValues:
    """Each job's queue factor for the tiers ``tiers``, from the replayed SWF log.

    Args:
        tiers: each queue's tier, ``"QUEUE:TIER,..."`` (:func:`parse_queue_tiers`).
        log: the log's trace with :data:`QUEUE_FIELDS` (:func:`~torus_sim.inputs.workload.logged.workload_log`).

    Returns:
        :class:`JobValues`: job id -> factor in (0, 1], the factors of :func:`queue_factors` (jobs of tier 0 left out:
        ``get(job_id, 0.0)``), held as arrays.

    Raises:
        ValueError: malformed ``tiers`` (:func:`parse_queue_tiers`).
        ConfigurationError: ``tiers`` names a queue the log neither uses nor names in its header (:func:`log_queues`).
    """
    table = parse_queue_tiers(tiers)
    known = log_queues(log)
    unknown = sorted(set(table) - known)
    if unknown:
        name = getattr(getattr(log, "path", None), "name", "the log")
        raise ConfigurationError(
            f"priority_queue_tiers names queue {unknown[0]}, which {name} does not have (its queues: "
            f"{', '.join(str(queue) for queue in sorted(known))})"
        )
    top = max(table.values())
    queues = log.column("queue").astype(np.int64)
    known, inverse = np.unique(queues, return_inverse=True)
    factors = (np.array([table.get(int(queue), 0.0) for queue in known.tolist()], dtype=np.float64) / top)[inverse]
    kept = factors != 0.0
    return JobValues(log.column("job_id").astype(np.int64)[kept], factors[kept])


def user_accounts(log) -> dict[int, int]:
    """Each user's account for a fair share by group: the group (SWF field 13) of the user's first job in the log.

    Args:
        log: the log's trace with :data:`ACCOUNT_FIELDS` (:func:`~torus_sim.inputs.workload.logged.workload_log`).

    Returns:
        user id -> group id (-1 where the log gives none: those users share one account).
    """
    accounts: dict[int, int] = {}
    for user, group in zip(log.column("user_id").astype(int).tolist(), log.column("group_id").astype(int).tolist(), strict=True):
        accounts.setdefault(user, group)
    return accounts


def job_queues(log) -> JobValues:
    """Each job's queue (SWF field 15), for limits per queue.

    Args:
        log: the log's trace with :data:`QUEUE_FIELDS` (:func:`~torus_sim.inputs.workload.logged.workload_log`).

    Returns:
        :class:`JobValues`: job id -> queue number (-1 where the log gives none), held as arrays.
    """
    return JobValues(log.column("job_id").astype(np.int64), log.column("queue").astype(np.int64))
