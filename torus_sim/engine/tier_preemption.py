"""Preemption by tier: a waiting job of a higher queue tier takes the nodes of running jobs of lower tiers.

Production schedulers let some queues preempt others: Slurm's ``PreemptType=preempt/partition_prio`` (a pending job
of a partition with a higher ``PriorityTier`` preempts running jobs of lower tiers when it cannot start otherwise;
``PreemptMode=REQUEUE`` kills and requeues them, ``SUSPEND`` keeps their work), PBS's and Maui's preemptor and
preemptee QOS. :class:`TierPreemption` does it at each pass's start, before the policy plans: in queue order, a job
that does not fit now and whose tier is above the lowest running tier takes victims among the running jobs of lower
tiers, the lowest tier first and, within a tier, the latest started first (the least work lost), as few as free its
nodes; when they do, they are preempted and the job starts at once on the nodes they freed. A preempted job returns
to the queue and keeps what the run's preemption mode says (``kill``: nothing, its lost work counts in the wasted
load; ``checkpoint``: its last checkpoint; ``suspend``: everything). Clusters only (on a torus the freed supernodes
need not make a partition).

References:
    Slurm's documentation, "Preemption" (preempt/partition_prio, PriorityTier, PreemptMode=REQUEUE / SUSPEND);
    PV-EASY §4.2 and §5.3 (what a preempted job keeps, the wasted load).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator

from torus_sim.policies.base import Preempt, Start

__all__ = ["TierPreemption"]


class TierPreemption:
    """The tier of each job and the preemptions a pass makes for the waiting jobs of higher tiers.

    Args:
        tiers: job id -> its tier (a number; higher preempts lower; a job the map does not name: 0), as the queue
            factors of :func:`~torus_sim.inputs.workload.queues.job_queue_factors` (the job's queue tier over the
            highest).

    Attributes:
        preemptors: jobs started by preempting others so far (the preemptions themselves: the run's ``preemptions``).
    """

    def __init__(self, tiers: dict) -> None:
        self._tiers = tiers
        self.preemptors = 0

    def tier(self, job) -> float:
        """A job's tier (0 when its queue has none)."""
        return self._tiers.get(job.job_id, 0.0)

    def actions(self, view) -> Iterator:
        """The preemptions and starts of this pass, in order: for each helped job, its victims, then its start.

        Args:
            view: the engine's :class:`~torus_sim.engine.view.SchedulingView` (its queue, running jobs, free nodes and
                placement); the actions are applied one by one as they are yielded, so each sees the one before.

        Yields:
            :class:`~torus_sim.policies.base.Preempt` and :class:`~torus_sim.policies.base.Start` actions.
        """
        running = view.running
        if not running or not len(view.queue):
            return
        victims, tiers, prefix = self._victims(running)
        for job in view.queue.jobs():
            rank = self.tier(job)
            if rank <= tiers[0]:
                continue  # no running job of a lower tier
            need = job.partition_size
            free = view.free_count()
            if need <= free:
                continue  # it fits: the policy's to start or to hold
            lower = bisect.bisect_left(tiers, rank)  # victims[:lower] are of lower tiers
            if free + prefix[lower] < need:
                continue  # all of them would not free enough
            chosen = victims[: bisect.bisect_left(prefix, need - free)]
            for victim in chosen:
                yield Preempt(victim)
            allocation = view.place(job)
            if allocation is None:  # cannot happen on a cluster (any free nodes will do)
                continue
            self.preemptors += 1
            yield Start(job, allocation)
            if not running:
                return
            victims, tiers, prefix = self._victims(running)

    def _victims(self, running) -> tuple[list, list, list]:
        """The running jobs in the order they are preempted, their tiers and the nodes the first k of them hold.

        Returns:
            ``(victims, tiers, prefix)``: the running jobs by (tier, latest started first, higher id first), their tiers
            in that order (ascending) and ``prefix[k]``, the nodes of the first ``k`` (``prefix[0] = 0``).
        """
        tier = self.tier
        victims = sorted(running.values(), key=lambda victim: (tier(victim), -victim.started_at, -victim.job_id))
        prefix = [0]
        for victim in victims:
            prefix.append(prefix[-1] + victim.allocated_size)
        return victims, [tier(victim) for victim in victims], prefix
