"""What a policy may see of the engine: a read-only view of now, the queue, the running jobs, the platform.

The view is live: a policy written as a generator sees the effect of each action it yielded (the
engine applies it before asking for the next). Nothing here changes state; planning copies
(:meth:`SchedulingView.snapshot`) are the policy's own to change.
"""

from __future__ import annotations

import heapq
import math
from types import MappingProxyType

import numpy as np

__all__ = ["SchedulingView"]


def _release_key(entry: tuple) -> tuple:
    """A release's order in :meth:`SchedulingView.shadow`: its time, jobs before repairs, then rank or node."""
    return entry[:3]


def _kept_releases(kept, repairs: list, now: float):
    """The running jobs' releases in the kept order, merged with the known repairs, as the sort in :meth:`shadow` gives.

    Args:
        kept: the :class:`~torus_sim.engine.running_ends.RunningEnds` order of the running jobs.
        repairs: ``(repair time, node)`` of the down nodes with a known repair (the platform's ``repairs_ahead``).
        now: the pass's time, seconds (a repair due by now comes back now).

    Returns:
        An iterable of ``(time, job)`` for the jobs and ``(time, node id)`` for the repairs, in the order of sorting
        ``(predicted end, 0, rank)`` and ``(repair time, 1, node)`` (a job's end before a repair at the same instant).
    """
    if not repairs:
        return kept.releases(now)
    fixes = sorted((max(at, now), 1, int(node), None) for at, node in repairs)
    ends = ((end_at, 0, job.rank, job) for end_at, job in kept.releases(now))
    return ((end_at, which if job is None else job) for end_at, _, which, job in heapq.merge(ends, fixes, key=_release_key))


class SchedulingView:
    """A read-only window on the engine for its policy: made from the parts it reads, never the model.

    Args:
        clock: the run's simulator (its ``time`` is now, seconds).
        book: the run's :class:`~torus_sim.engine.job_book.JobBook` (the running jobs, the sizes by rank, the kept ends).
        queue: the wait queue (the scheduler agent's).
        platform: the run's platform.
        progress: the job progress model (predicted ends and remaining times).
        passes: the scheduling pass component (the jobs returned since the last pass).
        rng: the run's one generator.
        verification_time: V, seconds added to every attempt.

    Attributes:
        queue: the wait queue (:class:`~torus_sim.engine.wait_queue.WaitQueue`), in the policy's order; read only.
        running: running jobs by job id; a read-only mapping (a live view of the engine's).
        platform: the platform; read only (only the engine allocates, releases, fails and repairs).
        ended: for policies that plan after every attempt end (RIGID Alg. 1): ``(job, failed)`` of
            the attempt that just ended (``failed``: a silent error was found); None in other passes.

    References:
        PV-EASY §4 (a scheduler sees the queue, the running jobs and their predictions); BGL-FAULT §5.
    """

    __slots__ = ("_book", "_clock", "_passes", "_progress", "_rng", "_verification_time", "ended", "platform", "queue", "running")

    def __init__(self, clock, book, queue, platform, progress, passes, rng, verification_time: float) -> None:
        self._clock, self._book, self._progress, self._passes = clock, book, progress, passes
        self._rng, self._verification_time = rng, verification_time
        self.queue = queue
        self.running = MappingProxyType(book.running)  # live, and read-only to the policy
        self.platform = platform
        self.ended = None

    # -- state ------------------------------------------------------------------------------

    @property
    def now(self) -> float:
        """Current simulated time, seconds."""
        return self._clock.time

    @property
    def returned(self) -> list:
        """Jobs a fail-stop failure or a preemption sent back to the queue since the last pass."""
        return self._passes.returned

    @property
    def rng(self) -> np.random.Generator:
        """The run's one generator (for a policy's random choices)."""
        return self._rng

    @property
    def verification_time(self) -> float:
        """V, seconds the engine adds to every attempt for the silent-error detector."""
        return self._verification_time

    def down_count(self) -> int:
        """Nodes down now (on a cluster that keeps counts only: those held out for good, else 0)."""
        platform = self.platform
        if platform.tracks_nodes:
            return int(np.count_nonzero(platform.down_until > -np.inf))
        return getattr(platform, "held_out", 0)

    def free_count(self) -> int:
        """Nodes free now."""
        return self.platform.free_count()

    # -- predictions ---------------------------------------------------------------------------

    def predicted_end(self, job) -> float:
        """When the scheduler expects a running job to end, seconds (never before now)."""
        return self._progress.predicted_end(job, self._clock.time)

    def predicted_remaining(self, job) -> float:
        """Wall time a waiting job is expected to hold its nodes once started, seconds."""
        return self._progress.predicted_remaining(job)

    def remaining_estimator(self):
        """:meth:`predicted_remaining` as the engine's own function, for a scan over thousands of waiting jobs.

        Returns:
            A callable ``job -> seconds`` giving the same values as :meth:`predicted_remaining` this
            pass (without the view's call around it).
        """
        return self._progress.predicted_remaining

    # -- planning ----------------------------------------------------------------------------

    def snapshot(self):
        """A planning copy of the occupancy now (yours to change): counts on a cluster, supernodes on a torus."""
        return self.platform.snapshot()

    def held_above(self, rank: int) -> int | None:
        """Nodes held by the running jobs of rank greater than ``rank`` (PV-EASY's shadow load below a job).

        Args:
            rank: a job's rank (0 = first submitted; any integer).

        Returns:
            The node count, from the engine's sums by rank (O(log n)); None where it keeps none (a
            torus or a cluster with node identities, or a policy that does not ask: sum it yourself).

        References:
            PV-EASY §4.1 (sunny and shadow load), §4.2 (SLP: would the head fit without the shadow load?).
        """
        sums = self._book.rank_sums
        return None if sums is None else sums.above(rank)

    def running_releases(self):
        """The running jobs' predicted ends and node counts as numpy columns (a cluster's releases).

        For a profile built at every pass on a cluster (conservative backfilling,
        :mod:`torus_sim.policies.count_reservations`). Where the cluster keeps node counts the engine
        keeps the columns from the first call on, a row in or out per start and stop, instead of a
        sort of the running jobs. On a cluster with node identities they are built for this pass
        from :meth:`predicted_end` of every running job plus one node at each down node's known
        repair time (the rows :func:`~torus_sim.policies.availability.availability_profile` gives the
        profile), with ``changes`` = -1: nothing kept between passes stands for them.

        Returns:
            ReleaseColumns: read only (:class:`~torus_sim.engine.running_ends.ReleaseColumns`); ``ends``, float64 ``(r,)``
            predicted ends in seconds, ascending (an end at or before now stands for now); ``sizes``,
            int64 ``(r,)``, the nodes each releases (views, valid until the next action is applied);
            ``changes``, rows added and removed so far (-1: built for this pass). None on a torus and
            where a count cluster's engine keeps no such order (periodic checkpoints, preemption
            arithmetic): sort ``predicted_end`` over :attr:`running` there.

        References:
            Mu'alem and Feitelson, IEEE TPDS 12(6), 2001 (the profile of running jobs' expected ends).
        """
        platform = self.platform
        if not platform.counts_fit:
            return None
        if platform.counts_only and not getattr(platform, "returning", None):  # no held node comes back
            kept = self._book.running_ends()
            return None if kept is None else kept.columns(self._clock.time)
        from torus_sim.engine.running_ends import ReleaseColumns

        rows = [(self.predicted_end(job), job.allocated_size) for job in self.running.values()]
        rows += [(at, 1) for at, _ in platform.repairs_ahead()]
        columns = ReleaseColumns(rows)
        columns.changes = -1
        return columns

    def shadow(
        self, need: int, releasing, vacated=(), together: bool = True, above_rank: int | None = None
    ) -> tuple[float, object]:
        """When ``need`` nodes fit, releasing running jobs at their predicted ends (EASY's shadow time).

        Args:
            need: the blocked job's partition size.
            releasing: running jobs whose predicted ends free nodes, considered in order of
                (predicted end, rank); None: every running job (read from the engine's kept order,
                :class:`~torus_sim.engine.running_ends.RunningEnds`, where it keeps one). Down nodes
                with known repair times come back at those times.
            vacated: running jobs counted as free from now (PV-EASY's shadow load).
            above_rank: with ``releasing`` None: the running jobs of greater rank count as free from
                now and the others are released (PV-EASY's shadow and sunny load below and above
                the job of that rank), the same answer as passing them as ``vacated`` and ``releasing``.
            together: release every job that ends at the shadow instant before answering (the textbook
                rule, Krevat's torus planner's, CQSim's); False checks after each job, in (end, rank)
                order, as PV-EASY's count-based code does (the occupancy then holds only the jobs needed).

        Returns:
            (shadow time in seconds, inf when never; the planning occupancy at that time).

        References:
            Lifka (EASY); Mu'alem and Feitelson, IEEE TPDS 12(6), 2001; PV-EASY §4.3 step 1;
            BGL-FAULT §5.1 (the reservation on the torus is a partition, not a count).
        """
        platform = self.platform
        if releasing is None and above_rank is None and platform.counts_only and not getattr(platform, "returning", None):
            kept = self._book.running_ends()  # node counts, no repairs in the profile: the kept walk (EASY's every pass)
            if kept is not None:
                occupancy = platform.snapshot()
                for job in vacated:
                    occupancy.vacate(job)
                now = self._clock.time
                if need <= occupancy.free:
                    return now, occupancy
                shadow_at, occupancy.free = kept.count_shadow(now, occupancy.free, need, together)
                return shadow_at, occupancy
        occupancy = self.snapshot()
        held = None if above_rank is None else self.held_above(above_rank)
        if above_rank is not None:
            if held is not None:
                occupancy.free += held  # the shadow load's nodes, from the engine's sums (a count cluster)
            else:
                vacated = [job for job in self.running.values() if job.rank > above_rank]
        for job in vacated:
            occupancy.vacate(job)
        now = self.now
        if occupancy.fits(need):
            return now, occupancy
        repairs = self.platform.repairs_ahead()
        kept = self._book.running_ends() if releasing is None and (not repairs or above_rank is None) else None
        if kept is not None:
            shadow_at = None
            for end_at, job in _kept_releases(kept, repairs, now):  # the order the sort below gives, kept between passes
                if shadow_at is not None and end_at != shadow_at:
                    return shadow_at, occupancy  # together: every release of the shadow instant is counted
                if repairs and type(job) is int:  # a down node back at its repair time
                    occupancy.vacate_node(job)
                elif above_rank is not None and job.rank > above_rank:
                    continue  # counted free already
                else:
                    occupancy.vacate(job)
                if shadow_at is None and occupancy.fits(need):
                    if not together:
                        return end_at, occupancy
                    shadow_at = end_at
            return (math.inf if shadow_at is None else shadow_at), occupancy
        if releasing is None:
            releasing = self.running.values()
            if above_rank is not None:
                releasing = [job for job in releasing if job.rank < above_rank]
        predicted_end = self._progress.predicted_end
        releases = sorted((predicted_end(job, now), 0, job.rank, job) for job in releasing)
        if repairs:
            releases = sorted(releases + [(max(at, now), 1, node, None) for at, node in repairs], key=lambda item: item[:3])
        for index, (end_at, _, which, job) in enumerate(releases):
            if job is None:
                occupancy.vacate_node(which)
            else:
                occupancy.vacate(job)
            if together and index + 1 < len(releases) and releases[index + 1][0] == end_at:
                continue
            if occupancy.fits(need):
                return end_at, occupancy
        return math.inf, occupancy

    def open_sizes(self) -> set[int] | None:
        """Partition sizes with a free partition now (torus), None on a cluster (any size up to the free count fits).

        A pass that only starts jobs can skip every job of a size not in this set: occupancy only
        grows, so such a size stays closed for the rest of the pass.
        """
        platform = self.platform
        table = platform.table
        if table is None:
            return None
        return set(table.open_sizes(platform.words()))

    def place(self, job, keep_room: tuple | None = None, placement=None, size: int | None = None, taken: tuple = ()):
        """Where ``job`` can start now, as the policy's placement chooses, or None.

        Args:
            job: a waiting job (its ``partition_size`` nodes).
            keep_room: ``(occupancy, need)``: only allocations that leave ``need`` nodes (a
                partition of that size on the torus) free in that planning occupancy, i.e. that do
                not delay a reservation (EASY backfilling of a job ending after the shadow time).
            placement: the placement policy (the MFP heuristic on the torus, the lowest free ids
                on a cluster when None).
            size: the nodes to place (a moldable job's processors for this attempt); the job's
                ``partition_size`` when None.
            taken: allocations this pass has handed out and the engine has not applied yet (a plan
                collected as a list before any of it is applied): placed as if they were held.

        Returns:
            A partition id (torus), node ids or a node count (cluster), or None.

        References:
            BGL-FAULT §5.1 (MFP placement, backfilling that keeps a box for the head), §5.2.
        """
        platform = self.platform
        if size is None:
            size = job.partition_size
        if platform.counts_fit:
            held = sum(platform.size_of(allocation) for allocation in taken) if taken else 0  # no generator per call
            if size > platform.free - held:
                return None
            if keep_room is not None and not keep_room[0].room_after(size + held, keep_room[1]):
                return None
            if platform.counts_only:
                return size
            free_nodes = platform.free_nodes()
            if taken:
                free_nodes = np.setdiff1d(free_nodes, np.concatenate([np.asarray(a, dtype=np.int64) for a in taken]))
            if placement is None or size != job.partition_size:
                return free_nodes[:size]
            return placement.choose_nodes(free_nodes, job, self._clock.time)
        table = platform.table
        words = platform.words()
        if taken:
            occupied = table.occupied_of(words)
            for partition in taken:
                occupied |= table.mask_ints[partition]
            words = table.words_of(occupied)
        candidates = table.free_ids_of_size(words, size)
        if not len(candidates):
            return None
        if keep_room is not None:
            spots = keep_room[0].spots(keep_room[1])
            candidates = candidates[~table.overlaps(candidates, spots).all(axis=1)]
            if not len(candidates):
                return None
        if placement is None:
            from torus_sim.policies.placement import MFP

            placement = MFP
        return placement.choose(table, job, candidates, words, self._clock.time)
