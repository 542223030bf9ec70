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

__all__ = ["ACCOUNT_FIELDS", "QUEUE_FIELDS", "job_queue_factors", "parse_queue_tiers", "queue_factors", "user_accounts"]


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


def job_queue_factors(tiers: str, log) -> dict[int, float]:
    """Each job's queue factor for the tiers ``tiers``, from the replayed SWF log.

    Args:
        tiers: each queue's tier, ``"QUEUE:TIER,..."`` (:func:`parse_queue_tiers`).
        log: the log's trace with :data:`QUEUE_FIELDS` (:func:`~torus_sim.inputs.workload.logged.workload_log`).

    Returns:
        job id -> factor in (0, 1] (:func:`queue_factors`; jobs of tier 0 left out).

    Raises:
        ValueError: malformed ``tiers`` (:func:`parse_queue_tiers`).
    """
    return queue_factors(log.column("job_id").astype(int), log.column("queue").astype(int), parse_queue_tiers(tiers))


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


def job_queues(log) -> dict[int, int]:
    """Each job's queue (SWF field 15), for limits per queue.

    Args:
        log: the log's trace with :data:`QUEUE_FIELDS` (:func:`~torus_sim.inputs.workload.logged.workload_log`).

    Returns:
        job id -> queue number (-1 where the log gives none).
    """
    return dict(zip(log.column("job_id").astype(int).tolist(), log.column("queue").astype(int).tolist(), strict=True))
