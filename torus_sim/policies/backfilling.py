"""The passes every online policy is made of: start in priority order, then EASY backfilling.

:func:`start_in_order` starts waiting jobs while the first one fits (FCFS); :func:`easy_pass` adds the
reservation for the blocked head and backfills what does not delay it. They read only the public
view (:class:`~torus_sim.engine.view.SchedulingView`) and yield actions, so a plug-in policy can use them
as the built-ins do (FCFS, FCFS-EASY / EASY-SJBF on a cluster, Krevat's pass on a cluster).
"""

from __future__ import annotations

import math

import numpy as np

from torus_sim.policies.base import Reserve, Start

__all__ = ["easy_pass", "start_from_columns", "start_in_order"]

_RESCAN_AFTER = 32
"""Stale candidates in a row (they fitted when the pass's mask was taken, no longer) before the mask is taken again."""


def start_in_order(view, placement=None):
    """Start waiting jobs in priority order while the first one fits (the FCFS part of every policy here).

    Safe as a list: the engine applies each yielded start before it asks for the next, and the next
    job is then the queue's new head; a caller that collects the starts first (``list(start_in_order(view))``
    inside a plug-in's ``plan``) finds the head still waiting when it asks again, and the helper then
    places each next job around the allocations it has already handed out (``view.place(..., taken=)``),
    so the list holds the same starts, in the same order, as the engine's own loop (it never offers the
    same head twice).

    Args:
        view: the engine's :class:`~torus_sim.engine.view.SchedulingView`.
        placement: the placement policy (MFP / lowest free ids when None).

    Yields:
        :class:`Start` actions, in priority order, until the next job does not fit.

    References:
        PV-EASY §4 ("schedule jobs according to their priorities, until the idle resource is not
        sufficient for the highest priority job"); BGL-FAULT §5.1.
    """
    queue = view.queue
    while queue:
        head = queue.head
        allocation = view.place(head, placement=placement)
        if allocation is None:
            return
        yield Start(head, allocation)
        if queue.head is head:  # not applied: the caller collects the starts, so plan around what was handed out
            yield from _start_around(view, placement, head, allocation)
            return


def _start_around(view, placement, first, allocation):
    """:func:`start_in_order` for a caller that collects: the jobs after ``first`` placed around the allocations handed out."""
    taken = [allocation]
    for job in view.queue.jobs()[1:]:
        allocation = view.place(job, placement=placement, taken=tuple(taken))
        if allocation is None:
            return
        yield Start(job, allocation)
        taken.append(allocation)


def easy_pass(
    policy,
    view,
    order: str = "fcfs",
    placement=None,
    backfill: bool = True,
    together: bool = True,
    max_tested: int | None = None,
    window: float | None = None,
    resolution: float | None = None,
):
    """One EASY pass: start in order, reserve for the blocked head, backfill what does not delay it.

    A waiting job is backfilled when it fits now and either is predicted to end by the head's shadow
    time, or leaves the head its nodes (a partition on the torus) at the shadow time.

    Args:
        policy: the calling policy (for its name in messages).
        view: the engine's view.
        order: ``fcfs`` or ``sjf`` (shortest predicted runtime first) for the backfill candidates.
        placement: the placement policy (MFP / lowest free ids when None).
        backfill: False gives plain FCFS.
        together: jobs ending at the shadow instant all count free then (the textbook extra nodes; False:
            PV-EASY's count, see :meth:`~torus_sim.engine.view.SchedulingView.shadow`).
        max_tested: the scan tests at most this many waiting jobs after the head, in its order (Slurm's
            ``bf_max_job_test``); None: all.
        window: seconds: a shadow time further ahead than this is no reservation (infinite: every job that fits
            is backfilled; Slurm's ``bf_window``); None: none.
        resolution: seconds: the shadow time rounds up to a multiple of this (Slurm's ``bf_resolution``); None: exact.

    Yields:
        :class:`Start` and :class:`Reserve` actions.

    References:
        Lifka (EASY); Mu'alem and Feitelson, IEEE TPDS 12(6), 2001; PV-EASY §3, §5.2.2; BGL-FAULT §5.1.
    """
    yield from start_in_order(view, placement)
    queue = view.queue
    if not queue or not backfill:
        return
    head = queue.head
    need = head.partition_size
    shadow_at, occupancy = view.shadow(need, None, together=together)
    if window is not None and shadow_at > view.now + window:  # planned beyond the window: no reservation at all
        shadow_at = math.inf
    elif resolution is not None and math.isfinite(shadow_at):  # job ends kept in blocks: the shadow's block's end
        shadow_at = math.ceil(shadow_at / resolution) * resolution
    yield Reserve(head, shadow_at)
    free = view.free_count()
    if free == 0:  # nothing fits (the scan below would stop at its first job)
        return
    counts = view.platform.counts_only
    columns = (queue.shortest if order == "sjf" else queue.columns) if counts else None  # kept while the queue is long
    if columns is not None and max_tested is None:
        short = (view.now + columns.remaining) <= shadow_at  # ends by the shadow time
        yield from start_from_columns(view, columns, head, free, short, occupancy, need)
        return
    candidates = queue.jobs()[1:]
    if order == "sjf":
        remaining = view.predicted_remaining
        candidates = sorted(candidates, key=lambda job: (remaining(job), job.rank))
    if max_tested is not None:
        candidates = candidates[:max_tested]
    yield from backfill_scan(view, candidates, occupancy, need, shadow_at, placement)


def backfill_around(view, head, candidates, placement=None, together: bool = True):
    """EASY's backfilling around a blocked ``head`` that need not be the first waiting job (an agent's pick).

    Args:
        view: the engine's view.
        head: the blocked job the reservation is for.
        candidates: the other waiting jobs, in backfill order.
        placement: the placement policy (MFP / lowest free ids when None).
        together: EASY's extra nodes, textbook (True) or PV-EASY's count (False), as :func:`easy_pass`.

    Yields:
        :class:`Start` actions: jobs that fit now and end by the head's shadow time or leave it its nodes then.

    References:
        Lifka (EASY); Mu'alem and Feitelson, IEEE TPDS 12(6), 2001.
    """
    need = head.partition_size
    shadow_at, occupancy = view.shadow(need, None, together=together)
    yield from backfill_scan(view, candidates, occupancy, need, shadow_at, placement)


def backfill_scan(view, candidates, occupancy, need: int, shadow_at: float, placement=None):
    """EASY's backfill scan over ``candidates`` given the blocked job's ``need`` and its shadow (:func:`easy_pass`).

    Yields:
        :class:`Start` actions, each applied by the engine before the next is looked at.
    """
    free = view.free_count()
    if free == 0:
        return
    if view.platform.counts_only:
        yield from _backfill_counts(view, candidates, free, occupancy, need, shadow_at)
        return
    now = view.now
    # smallest[i]: the smallest job from candidate i on; the scan stops when fewer nodes are free
    # (a job larger than the free count cannot be placed: the same starts, without asking)
    smallest = [job.partition_size for job in candidates]
    for index in range(len(smallest) - 2, -1, -1):
        if smallest[index + 1] < smallest[index]:
            smallest[index] = smallest[index + 1]
    for index, job in enumerate(candidates):
        if free < smallest[index]:
            break
        if job.partition_size > free:
            continue
        if now + view.predicted_remaining(job) <= shadow_at:
            allocation = view.place(job, placement=placement)
            if allocation is None:
                continue
            yield Start(job, allocation)
        else:
            allocation = view.place(job, keep_room=(occupancy, need), placement=placement)
            if allocation is None:
                continue
            yield Start(job, allocation)
            occupancy.occupy(allocation)
        free = view.free_count()
        if free == 0:
            break


def _backfill_counts(view, candidates: list, free: int, occupancy, need: int, shadow_at: float):
    """:func:`easy_pass`'s backfill scan on a cluster that keeps node counts: the same starts, fewer calls.

    On such a cluster a job of ``size <= free`` nodes is always placed (``view.place`` answers the
    count), and one predicted to run past the shadow time only when ``size <= occupancy.free - need``
    (:meth:`~torus_sim.machine.platforms.cluster.ClusterOccupancy.room_after`); the scan asks exactly those
    questions, in the same order and with the same arithmetic, without the calls around them (on
    RICC-2010-2's queues of thousands, :func:`easy_pass` made 3.2 million ``place`` calls in 40,000 jobs).
    It needs no suffix minimum of the sizes: a job larger than the free count is one comparison here.

    Args:
        view: the engine's view (a cluster without node identities).
        candidates: the waiting jobs after the head, in backfill order.
        free: nodes free now.
        occupancy: the planning occupancy at the shadow time (a :class:`~torus_sim.machine.platforms.cluster.ClusterOccupancy`).
        need: the head's partition size.
        shadow_at: the head's shadow time, seconds.

    Yields:
        :class:`Start` actions (an allocation is a node count).

    References:
        Lifka (EASY); PV-EASY §3 (extra nodes); Mu'alem and Feitelson, IEEE TPDS 12(6), 2001.
    """
    now = view.now
    remaining = view.remaining_estimator()
    for job in candidates:
        size = job.partition_size
        if size > free:
            continue
        if now + remaining(job) <= shadow_at:
            yield Start(job, size)
        elif size <= occupancy.free - need:
            yield Start(job, size)
            occupancy.occupy(size)
        else:
            continue
        free = view.free_count()
        if free == 0:
            break


def start_from_columns(view, columns, head, free: int, short: np.ndarray, occupancy=None, need: int = 0):
    """Start the waiting jobs a job-by-job scan in the columns' order would start: the same starts, one mask per pass.

    A job after ``head`` in the columns' order (FCFS: the queue's; SJF: predicted remaining time,
    then rank) starts when ``size <= free`` and either its row of ``short`` is true (EASY: it ends by
    the shadow time; PV-EASY: by the reservation; True for a plain fill) or, given ``occupancy``,
    ``size <= extra`` (the extra nodes, ``occupancy.free - need``, which a job running past the shadow
    time takes). Both bounds only shrink during the pass, so the next job to start is the first that
    passes them now after the last one started: the scan takes that mask once over the columns,
    walks its hits (each checked again with the current bounds) and takes the mask again after
    :data:`_RESCAN_AFTER` stale hits in a row (Hypothesis tests against the plain scans).

    Args:
        view: the engine's view (a cluster without node identities).
        columns: the queue's :class:`~torus_sim.engine.queue_columns.JobColumns` in candidate order.
        head: the blocked first job (never a candidate).
        free: nodes free now.
        short: bool, shape (len(columns),): the rows that may start in ``size <= free`` nodes alone.
        occupancy: the planning occupancy at the shadow time (a
            :class:`~torus_sim.machine.platforms.cluster.ClusterOccupancy`), or None: no extra nodes.
        need: the head's partition size (with ``occupancy``).

    Yields:
        :class:`Start` actions (an allocation is a node count).

    References:
        Lifka (EASY); PV-EASY §3 (extra nodes), §4.3 steps 3-4; Mu'alem and Feitelson, IEEE TPDS 12(6), 2001.
    """
    jobs = None  # copied at the first hit: the engine takes each started job out of the queue (and the columns)
    sizes = columns.sizes  # the columns' view until then (most passes find nothing to start and copy nothing)
    head_at = columns.index(head)  # never a candidate
    extra = occupancy.free - need if occupancy is not None else -1
    position = 0
    while True:
        window = sizes[position:]
        fits = (window <= free) & short[position:]
        if occupancy is not None:
            fits |= window <= min(extra, free)
        if head_at >= position:
            fits[head_at - position] = False
        hits = np.flatnonzero(fits)
        if not len(hits):
            return
        if jobs is None:  # before the first start changes the queue
            jobs = list(columns.jobs)
            sizes = sizes.copy()
        hits += position
        stale = 0
        for index, size, ends in zip(hits.tolist(), sizes[hits].tolist(), short[hits].tolist(), strict=True):
            if size > free:
                stale += 1
            elif ends:
                yield Start(jobs[index], size)
                stale = 0
            elif occupancy is not None and size <= extra:
                yield Start(jobs[index], size)
                occupancy.occupy(size)
                extra = occupancy.free - need
                stale = 0
            else:
                stale += 1
            if not stale:
                free = view.free_count()
                if free == 0:
                    return
            elif stale > _RESCAN_AFTER:
                position = index + 1
                break
        else:
            return
