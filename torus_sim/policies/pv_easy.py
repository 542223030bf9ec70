"""PV-EASY: preemptive venture EASY backfilling (shadow-load preemption + venture backfilling).

Running jobs whose priority is higher than every waiting job form the *sunny load*; running jobs
with a lower priority than some waiting job form the *shadow load*. At every pass:

1. waiting jobs start in priority order while the first one fits;
2. shadow-load preemption (SLP): when the first blocked job would fit in the free nodes plus those
   of the shadow load below it, shadow jobs are preempted from the lowest priority up until it fits,
   and it starts (then step 1 again);
3. venture backfilling: the blocked job's reservation is computed from the sunny load and the
   runtime predictions (the shadow load counts as free); waiting jobs that fit are backfilled,
   nearest predicted completion first, while they are predicted to end by the reservation;
4. any nodes still idle take waiting jobs in priority order, whatever their prediction.

Preempted jobs return to the queue at their priority; the engine's preemption mode decides what
they keep (kill/restart, checkpoint/restart, suspend/resume). On the torus "fits" means a free
partition of the job's size, so SLP preempts until a partition opens for the head.

References:
    PV-EASY §4.1 (sunny and shadow load), §4.2 (SLP), §4.3 (venture backfilling, steps 1-4).
"""

from __future__ import annotations

import numpy as np

from torus_sim.policies.backfilling import start_from_columns, start_in_order
from torus_sim.policies.base import Policy, Preempt, Reserve, Start

__all__ = ["PvEasyPolicy"]


class PvEasyPolicy(Policy):
    """PV-EASY (see the module docstring).

    Args:
        placement: which partition / nodes a job gets (MFP / lowest free ids when None).
    """

    name = "PV-EASY"
    starts_head_when_it_fits = True
    shadow_load = True  # the engine keeps the running jobs' sizes by rank (held_above) on a cluster
    queue_columns = "shortest"  # steps 3 and 4 over the queue's columns on a count cluster

    def __init__(self, placement=None) -> None:
        self.placement = placement

    def plan(self, view):
        """One pass: start in order with SLP, then venture backfilling steps 1-4."""
        queue = view.queue
        placement = self.placement
        while True:
            yield from start_in_order(view, placement)
            if not queue:
                return
            head = queue.head
            held = view.held_above(head.rank)
            if held is not None and head.partition_size > view.free_count() + held:
                break  # the head does not fit even without the shadow load (a count, as below)
            shadow = sorted((job for job in view.running.values() if job.rank > head.rank), key=lambda job: -job.rank)
            if held is None:
                occupancy = view.snapshot()
                for job in shadow:
                    occupancy.vacate(job)
                if not occupancy.fits(head.partition_size):
                    break
            for job in shadow:  # lowest priority first
                if view.place(head, placement=placement) is not None:
                    break
                yield Preempt(job)
        head = queue.head
        # PV-EASY's own count: the first end that makes the head fit (its code; not the textbook extra nodes)
        reservation_at, _ = view.shadow(head.partition_size, None, above_rank=head.rank, together=False)
        yield Reserve(head, reservation_at)
        now = view.now
        counts = view.platform.counts_only
        if counts and queue.shortest is not None:
            yield from self._backfill_columns(view, queue, head, now, reservation_at)
            return
        waiting = queue.jobs()[1:]
        # on the torus, sizes with no free partition stay closed for the rest of the pass
        open_sizes = view.open_sizes()
        if open_sizes is not None:
            waiting = [job for job in waiting if job.partition_size in open_sizes]
        # step 3: nearest predicted completion first, while predicted to end by the reservation
        remaining = view.predicted_remaining
        for predicted, _, job in sorted((remaining(job), job.rank, job) for job in waiting):
            if now + predicted > reservation_at:
                break  # and so are all after it (nearest first)
            if open_sizes is not None and job.partition_size not in open_sizes:
                continue
            allocation = view.place(job, placement=placement)
            if allocation is not None:
                yield Start(job, allocation)
                if open_sizes is not None:
                    open_sizes = view.open_sizes()
                    if not open_sizes:
                        return
        # step 4: fill what is left in priority order
        if view.free_count() > 0:
            for job in queue.jobs()[1:]:
                if open_sizes is not None and job.partition_size not in open_sizes:
                    continue
                allocation = view.place(job, placement=placement)
                if allocation is not None:
                    yield Start(job, allocation)
                    if view.free_count() == 0:
                        break
                    if open_sizes is not None:
                        open_sizes = view.open_sizes()
                        if not open_sizes:
                            return

    @staticmethod
    def _backfill_columns(view, queue, head, now: float, reservation_at: float):
        """Steps 3 and 4 on a count cluster over the queue's columns: the same starts as the loops above.

        Step 3 walks the SJF-ordered columns (predicted remaining time, then rank), where the jobs
        ending by the reservation are a prefix; step 4 the queue-ordered ones, every job that fits.
        """
        free = view.free_count()
        if free > 0:
            shortest = queue.shortest
            short = (now + shortest.remaining) <= reservation_at
            yield from start_from_columns(view, shortest, head, free, short)
        free = view.free_count()
        if free > 0:
            columns = queue.columns  # None when step 3's starts left the queue short (the columns are dropped then)
            if columns is not None:
                yield from start_from_columns(view, columns, head, free, np.ones(len(columns), dtype=bool))
                return
            for job in queue.jobs()[1:]:  # step 4 job by job, as the loop of plan() on a count cluster
                if job.partition_size <= view.free_count():
                    yield Start(job, job.partition_size)
                    if view.free_count() == 0:
                        break
