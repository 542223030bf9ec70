"""PV-EASY: preemptive venture EASY backfilling (shadow-load preemption + venture backfilling).

Running jobs whose priority is higher than every waiting job form the *sunny load*; running jobs
with a lower priority than some waiting job form the *shadow load*. At every pass:

1. waiting jobs start in priority order while the first one fits;
2. shadow-load preemption (SLP): when the first blocked job would fit in the free processors plus
   those of the shadow load below it, shadow jobs are preempted from the lowest priority up until
   it fits, and it starts (then step 1 again);
3. venture backfilling: the blocked job's reservation is computed from the sunny load and the
   runtime predictions (the shadow load counts as free); waiting jobs that fit are backfilled,
   nearest predicted completion first, while they are predicted to end by the reservation;
4. any processors still idle take waiting jobs in priority order, whatever their prediction.

Preempted jobs return to the queue at their priority; the engine's preemption mode decides what
they keep (kill/restart, checkpoint/restart, suspend/resume).

References:
    PV-EASY §4.1 (sunny and shadow load), §4.2 (SLP), §4.3 (venture backfilling, steps 1-4).
"""

from __future__ import annotations

from torus_sim.policies.easy import shadow_time, start_in_order

__all__ = ["PvEasyPolicy"]


class PvEasyPolicy:
    """PV-EASY (see the module docstring)."""

    name = "PV-EASY"

    def schedule(self, model) -> None:
        """One pass: start in order with SLP, then venture backfilling steps 1-4."""
        while True:
            start_in_order(model)
            if not model.queue:
                return
            head = model.queue[0]
            shadow = sorted((job for job in model.running_jobs.values() if job.rank > head.rank), key=lambda job: -job.rank)
            if model.free() + sum(job.processors for job in shadow) < head.processors:
                break
            for job in shadow:  # lowest priority first
                if model.free() >= head.processors:
                    break
                model.preempt(job)
        head = model.queue[0]
        sunny = [job for job in model.running_jobs.values() if job.rank < head.rank]
        shadow_free = sum(job.processors for job in model.running_jobs.values() if job.rank > head.rank)
        reservation_at, _ = shadow_time(model, head.processors, sunny, also_free=shadow_free)
        head.reservation_at = reservation_at
        free = model.free()
        now = model.now
        waiting = model.queue[1:]
        # step 3: nearest predicted completion first, while predicted to end by the reservation
        for job in sorted(waiting, key=lambda job: (model.predicted_remaining(job), job.rank)):
            if job.processors <= free and now + model.predicted_remaining(job) <= reservation_at:
                model.start(job)
                free -= job.processors
        # step 4: fill what is left in priority order
        if free > 0:
            for job in list(model.queue[1:]):
                if job.processors <= free:
                    model.start(job)
                    free -= job.processors
                    if free == 0:
                        break
