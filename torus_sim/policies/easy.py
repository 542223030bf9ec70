"""Online batch policies on the flat platform: FCFS, EASY backfilling (FCFS or SJF candidates), conservative.

The priority is the submission order (FCFS). Backfilling uses the run's runtime predictor: the
user estimate for plain EASY, the Last Model for EASY-Last, the virtual predictor for the
comparisons of PV-EASY §5.2.2. The requested time stays the kill time.
"""

from __future__ import annotations

from torus_sim.errors import ConfigurationError
from torus_sim.policies.rigid import AvailabilityProfile

__all__ = ["ConservativePolicy", "EasyPolicy", "FcfsPolicy", "start_in_order", "shadow_time"]


def start_in_order(model) -> None:
    """Start waiting jobs in priority order while the highest-priority one fits (the FCFS part of every policy here).

    References:
        PV-EASY §4 ("schedule jobs according to their priorities, until the idle resource is not
        sufficient for the highest priority job").
    """
    queue = model.queue
    while queue and queue[0].processors <= model.free():
        model.start(queue[0])


def shadow_time(model, need: int, running, also_free: int = 0) -> tuple[float, int]:
    """When ``need`` processors are predicted free, and how many are spare then (EASY's shadow time and extra).

    Args:
        model: the engine.
        need: processors the blocked head needs.
        running: the running jobs whose predicted ends free processors (all of them for EASY; the
            sunny load for PV-EASY).
        also_free: processors held by running jobs that count as free now (PV-EASY's shadow load,
            which SLP may preempt).

    Returns:
        (shadow time in seconds, inf when never; extra processors at that time).

    References:
        Lifka (EASY); Mu'alem and Feitelson, IEEE TPDS 12(6), 2001; PV-EASY §4.3 step 1.
    """
    free = model.free() + also_free
    if free >= need:
        return model.now, free - need
    for end_at, _, job in sorted((model.predicted_end(job), job.rank, job) for job in running):
        free += job.processors
        if free >= need:
            return end_at, free - need
    return float("inf"), 0


class FcfsPolicy:
    """First come, first served, no backfilling: the baseline of PV-EASY §5 and of backfilling studies."""

    name = "FCFS"

    def schedule(self, model) -> None:
        """Start jobs in order while the first one fits."""
        start_in_order(model)


class EasyPolicy:
    """EASY backfilling: a reservation for the first blocked job, backfill what does not delay it.

    A waiting job is backfilled when it fits now and either ends (by prediction) before the head's
    shadow time or uses only the extra processors. Candidates are taken in FCFS order
    (FCFS-EASY) or shortest predicted runtime first (SJF-EASY).

    Args:
        order: ``fcfs`` or ``sjf``.

    References:
        Lifka (EASY); Mu'alem and Feitelson, IEEE TPDS 12(6), 2001; PV-EASY §3, §5.2.2.
    """

    def __init__(self, order: str = "fcfs") -> None:
        if order not in ("fcfs", "sjf"):
            raise ConfigurationError(f"EASY candidate order must be 'fcfs' or 'sjf', got {order!r}")
        self.order = order
        self.name = "SJF-EASY" if order == "sjf" else "FCFS-EASY"

    def schedule(self, model) -> None:
        """Start in order, then reserve for the head and backfill."""
        start_in_order(model)
        if not model.queue:
            return
        head = model.queue[0]
        shadow_at, extra = shadow_time(model, head.processors, model.running_jobs.values())
        head.reservation_at = shadow_at
        free = model.free()
        candidates = model.queue[1:]
        if self.order == "sjf":
            candidates = sorted(candidates, key=lambda job: (model.predicted_remaining(job), job.rank))
        now = model.now
        for job in candidates:
            if job.processors > free:
                continue
            if now + model.predicted_remaining(job) <= shadow_at:
                model.start(job)
            elif job.processors <= extra:
                model.start(job)
                extra -= job.processors
            else:
                continue
            free -= job.processors
            if free == 0:
                break


class ConservativePolicy:
    """Conservative backfilling: every waiting job gets a reservation, in priority order, on the predicted profile.

    A job starts when its reservation is now; reservations are recomputed at every pass.

    References:
        Mu'alem and Feitelson, IEEE TPDS 12(6), 2001; RIGID §4.1 (m = |Q|).
    """

    name = "conservative"

    def schedule(self, model) -> None:
        """Reserve for every waiting job; start those whose reservation is now."""
        now = model.now
        profile = AvailabilityProfile(
            now, model.free(), [(model.predicted_end(job), job.processors) for job in model.running_jobs.values()]
        )
        starting = []
        for position, job in enumerate(model.queue):
            duration = max(model.predicted_remaining(job), 1e-9)
            start_at = profile.earliest(job.processors, duration)
            profile.reserve(start_at, duration, job.processors)
            if position == 0:
                job.reservation_at = start_at
            if start_at <= now:
                starting.append(job)
        for job in starting:
            model.start(job)
