"""Krevat's BlueGene/L scheduler: FCFS, MFP placement, backfilling and migration.

One scheduling pass (the engine runs one after every instant at which something happened)
plans, on a scratch copy of the occupancy, a list of actions the engine then applies in order:

1. **FCFS.** While the head of the wait queue (ordered by arrival) fits in a free partition,
   start it where the placement policy says (MFP heuristic by default).
2. **Migration.** If the head does not fit only because of fragmentation (enough free
   supernodes, no free box of its size), repack: place the head, then every running job from
   the largest down, on a torus where only down supernodes are taken. If all fit, the running
   jobs move (a :class:`Repack`, each move costing ``migration_cost`` seconds) and the head
   starts. Then back to step 1.
3. **Backfilling.** The head's *reservation* is the earliest time a partition of its size is
   expected free, releasing running jobs at their estimated ends (start + walltime) and down
   supernodes at their known repair times. A later job may start now if it fits and either
   ends (by its walltime) before the reservation, or leaves a partition for the head free at
   the reservation time. This is EASY backfilling with the torus's geometry.

On a cluster there is no fragmentation, so migration never applies: the scheduler is FCFS with EASY
backfilling against the head's reservation (walltimes and known repair times), and its placement
chooses which free nodes a job gets (the lowest ids, or the fault-aware choices of BGL-FAULT §5.2).

References:
    BGL-FAULT §5.1 (Krevat's FCFS + backfilling + migration, MFP heuristic), §6.1; Krevat,
    Castaños, Moreira, "Job scheduling for the BlueGene/L system", JSSPP 2002; Lifka, "The
    ANL/IBM SP scheduling system", JSSPP 1995 (EASY backfilling).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from torus_sim.core.errors import ConfigurationError
from torus_sim.core.job import Job, fcfs_key
from torus_sim.machine.partition_table import PartitionTable
from torus_sim.machine.platforms.torus import TorusPlatform
from torus_sim.policies.backfilling import easy_pass
from torus_sim.policies.base import Policy, Repack, Reserve, Start
from torus_sim.policies.placement import MfpPlacement, PlacementPolicy

if TYPE_CHECKING:
    from torus_sim.policies.context import WaitingJobs

__all__ = ["REPACK_TRIE_SIZE", "KrevatScheduler", "Repack", "Start", "walltime_ends"]

REPACK_TRIE_SIZE = 200_000
"""Repack placements :class:`KrevatScheduler` remembers (emptied when full; about 40 MiB at most)."""


def walltime_ends(running: Sequence[Job], now: float) -> dict[Job, float]:
    """When each running job is expected to end, from its walltime: ``Job.estimated_end(now)``, bit for bit.

    Jobs without periodic checkpoints (all of BGL-FAULT's) take the inline form of the same
    arithmetic, ``max(now, resumed_at + overhead + (walltime - progress at resume))``: one pass
    asks it of every running job, and the method call with its checks was 7% of a torus replay.

    Args:
        running: running jobs.
        now: current time, seconds.

    Returns:
        job -> expected end, seconds (never before ``now``).

    References:
        BGL-FAULT §3.2 (t_f = t_e + t_s), §5.1 (Krevat's reservation from the walltimes).
    """
    ends = {}
    for job in running:
        if job.checkpoint_interval is None:
            end = job.resumed_at + job.attempt_overhead + (job.walltime - job.progress_at_resume)
            ends[job] = end if end > now else now
        else:
            ends[job] = job.estimated_end(now)
    return ends


class KrevatScheduler(Policy):
    """FCFS with backfilling and migration (BGL-FAULT §5.1), on the torus or a cluster.

    Args:
        placement: which free partition (nodes) a job gets; :class:`MfpPlacement` when None.
        backfill: let later jobs start when they do not delay the head's reservation.
        migration: repack running jobs when fragmentation alone blocks the head (torus only).
        migration_cost: seconds each moved job loses (checkpoint + restart); 0 as in BGL-FAULT.

    Raises:
        ConfigurationError: negative migration cost.

    References:
        BGL-FAULT §5.1 and §5.2; Krevat, Castaños, Moreira, JSSPP 2002.
    """

    name = "krevat"
    size_index = "walltime"  # backfilling compares walltimes with the reservation (the queue's per-size trees)
    starts_head_when_it_fits = True
    queue_by_size = True

    def __init__(
        self,
        placement: PlacementPolicy | None = None,
        backfill: bool = True,
        migration: bool = True,
        migration_cost: float = 0.0,
    ) -> None:
        if migration_cost < 0:
            raise ConfigurationError(f"migration cost must be >= 0 seconds, got {migration_cost}")
        self.placement = placement or MfpPlacement()
        self.backfill = backfill
        self.migration = migration
        self.migration_cost = float(migration_cost)
        self._failed_repack: tuple[int, int] | None = None
        self.repack_attempts = 0
        self.reservation: tuple[int, float] | None = None  # (head job id, reserved start) of the last pass
        self._remaining = None
        self._repack_trie: dict[tuple[int, int], tuple[int, int]] = {}  # see _place_in_order_memo
        self._repack_roots: dict[tuple, int] = {}

    @property
    def needs_node_identities(self) -> bool:
        """A fault-aware placement scores nodes (on a cluster too)."""
        return self.placement.predictor is not None

    def settings(self) -> str:
        """Backfilling and migration, on or off (BGL-FAULT §5.1)."""
        return f"backfill {'on' if self.backfill else 'off'}, migration {'on' if self.migration else 'off'}"

    def plan(self, view) -> list:
        """Plan one scheduling pass (the torus plan on a scratch copy; on a cluster, FCFS + EASY).

        Args:
            view: the engine's read-only view.

        Returns:
            Actions in the order the engine must apply them.
        """
        if view.platform.table is not None:  # partitions of a torus: the planner on its table
            actions = self.plan_torus(view.now, view.queue, list(view.running.values()), view.platform)
            if self.reservation is not None:
                actions.append(Reserve(self._reserved_job, self.reservation[1]))
            return actions
        return easy_pass(self, view, order="fcfs", placement=self.placement, backfill=self.backfill)

    def plan_torus(
        self,
        now: float,
        queue: WaitingJobs,
        running: Sequence[Job],
        platform: TorusPlatform,
        predicted_end=None,
        predicted_remaining=None,
    ) -> list[Start | Repack]:
        """Plan one scheduling pass on the torus.

        Args:
            now: current time, seconds.
            queue: the wait queue (FCFS order, indexed by size); read, never changed.
            running: jobs on partitions (``job.allocation`` is their partition id).
            platform: the torus; read, never changed.
            predicted_end: when a running job is expected to end (its walltime's end when None,
                as Krevat's scheduler); EASY passes the run's runtime predictions.
            predicted_remaining: how long a waiting job is expected to run (its walltime when None).

        Returns:
            Actions in the order the engine must apply them.
        """
        self._remaining = predicted_remaining
        self.reservation = None
        if not len(queue):
            return []
        table = platform.table
        masks = table.mask_ints
        occupied = platform.occupied()  # busy, down and spare supernodes as an int: the pass plans on it
        allocation = {job: job.allocation for job in running}
        changes: list[tuple[Job, float | None]] = []  # this pass's starts (job, end) and moves (job, None), in order
        actions: list[Start | Repack] = []
        started: set[int] = set()

        for head in queue:
            partition_id = self._place(table, head, occupied, now)
            if partition_id is None and self.migration:
                repack = self._repack(table, head, allocation, occupied, platform, now)
                if repack is not None:
                    moves, partition_id = repack
                    actions.append(Repack(moves))
                    for job, _ in moves:
                        occupied &= ~masks[allocation[job]]
                    for job, new_id in moves:
                        occupied |= masks[new_id]
                        allocation[job] = new_id
                        changes.append((job, None))
            if partition_id is None:
                if self.backfill and len(queue) > len(started) + 1:
                    started.add(id(head))
                    expected_end = self._expected_ends(running, now, predicted_end, changes)
                    actions.extend(
                        self._backfill(
                            table, queue, head, started, occupied, allocation, expected_end, platform.repairs_ahead(), now
                        )
                    )
                break
            actions.append(Start(head, partition_id))
            started.add(id(head))
            occupied |= masks[partition_id]
            allocation[head] = partition_id
            changes.append((head, now + (head.walltime if predicted_remaining is None else predicted_remaining(head))))
        return actions

    def _expected_ends(self, running, now, predicted_end, changes) -> dict[Job, float]:
        """When each job on the torus is expected to end, asked only by a pass that backfills.

        The running jobs' ends (walltimes, or ``predicted_end``), then this pass's ``changes`` in order: a
        start sets its job's end, a move adds the migration cost (the arithmetic of updating as they happen).
        """
        expected_end = walltime_ends(running, now) if predicted_end is None else {job: predicted_end(job) for job in running}
        for job, end in changes:
            if end is None:
                expected_end[job] += self.migration_cost
            else:
                expected_end[job] = end
        return expected_end

    def _place(self, table: PartitionTable, job: Job, occupied: int, now: float) -> int | None:
        candidates = table.free_ids_under(occupied, job.partition_size)
        if not len(candidates):
            return None
        return self.placement.choose(table, job, candidates, table.words_of(occupied), now)

    def _repack(self, table, head, allocation, occupied, platform, now):
        """Place the head and then every running job, largest first, on a torus of only down supernodes.

        A repack that failed is not tried again until the occupancy or the head changes: whether all
        jobs fit depends almost only on their sizes and the down supernodes, and each try costs one
        placement per running job.
        """
        free = table.torus.size - occupied.bit_count()
        if free < head.partition_size:
            return None  # not fragmentation: not enough free supernodes
        key = (occupied, head.job_id)
        if key == self._failed_repack:
            return None
        self.repack_attempts += 1
        down = platform.down
        order = [head] + sorted(allocation, key=lambda job: (-job.partition_size, job.submitted_at, job.job_id))
        if self.placement.occupancy_only:
            placed = self._place_in_order_memo(table, order, down, now)
        else:
            placed = self.placement.place_in_order(table, order, table.pack(down), now)
            placed = placed if len(placed) == len(order) else None
        if placed is None:
            self._failed_repack = key
            return None
        moves = tuple((job, new_id) for job, new_id in zip(order[1:], placed[1:], strict=True) if new_id != allocation[job])
        return moves, placed[0]

    def _place_in_order_memo(self, table, jobs, down, now) -> list[int] | None:
        """The placement's ``place_in_order`` from ``down``, for a placement whose choice depends only on the occupancy.

        Then the partitions a repack gives depend only on the down supernodes and the sequence of
        sizes, and repacks of one pass after another share long prefixes (sizes descend; the small
        jobs change most): a trie of (prefix, size) -> (longer prefix, partition id, -1 for none)
        replays a known prefix without a placement, and places the rest on the occupancy it leads to.
        """
        trie = self._repack_trie
        if len(trie) > REPACK_TRIE_SIZE:
            trie.clear()
            self._repack_roots.clear()
        root = (table.torus, down.tobytes())  # a policy may serve tori of other shapes (wraps, blocks) in turn
        node = self._repack_roots.get(root)
        if node is None:
            node = self._repack_roots[root] = len(self._repack_roots) + len(trie) + 1
        placed: list[int] = []
        for index, job in enumerate(jobs):
            known = trie.get((node, job.partition_size))
            if known is None:  # a new prefix: this job and the rest are placed and remembered
                scratch = down.copy()
                for partition_id in placed:
                    scratch[table.members[partition_id]] = True
                rest = self.placement.place_in_order(table, jobs[index:], table.pack(scratch), now)
                for later, partition_id in zip(jobs[index:], [*rest, -1], strict=False):  # up to the one that does not fit
                    child = len(self._repack_roots) + len(trie) + 1
                    trie[(node, later.partition_size)] = (child, partition_id)
                    node = child
                    if partition_id < 0:
                        return None
                    placed.append(partition_id)
                return placed
            node, partition_id = known
            if partition_id < 0:
                return None
            placed.append(partition_id)
        return placed

    def _reservation(self, table, head, occupied, allocation, expected_end, repairs, now):
        """Earliest expected time the head fits, and the occupancy expected then.

        Releases come at the running jobs' expected ends and the known repair times (never before
        ``now``); all releases of one instant count together. The occupancy is a Python int (bit i =
        supernode i); the releases of each instant are OR-ed into one mask and taken off it in time order
        until a partition of the head's size is free (:meth:`PartitionTable.has_free`, memoized by
        occupancy: the occupancies expected later repeat from pass to pass). The plain reference on boolean
        arrays, one instant released after another, is ``tests/reference.py``'s.

        Args:
            table: the torus's partition table.
            head: the blocked head (its ``partition_size``).
            occupied: blocked supernodes now, as an int (bit i = supernode i).
            allocation: running job -> partition id.
            expected_end: running job -> expected end, seconds.
            repairs: ``(repair time, supernode)`` of the down supernodes with a known repair, by time.
            now: current time, seconds.

        Returns:
            (reservation time, seconds, math.inf when no known release frees a partition of the head's
            size; occupied supernodes expected then, as an int: every release up to that time taken off).
        """
        if not occupied:  # nothing to release (a repair's supernode is blocked too)
            return math.inf, occupied
        masks = table.mask_ints
        releases: dict[float, int] = {}
        for job, partition_id in allocation.items():
            at = expected_end[job]
            releases[at] = releases.get(at, 0) | masks[partition_id]
        for repair_at, supernode in repairs:
            at = max(repair_at, now)
            releases[at] = releases.get(at, 0) | (1 << supernode)
        size = head.partition_size
        if table.has_free(occupied, size):  # a partition is free already: the first release, as the plain loop gives
            if not releases:
                return math.inf, occupied
            first = min(releases)
            return first, occupied & ~releases[first]
        for at in sorted(releases):
            occupied &= ~releases[at]
            if table.has_free(occupied, size):
                return at, occupied
        return math.inf, occupied

    def _backfill(self, table, queue, head, skip, occupied, allocation, expected_end, repairs, now):
        """EASY backfilling behind a blocked head, one candidate per partition size at a time.

        Within a pass the blocked supernodes and the head's expected occupancy only grow, so a
        size with no free partition stays without one, and a size none of whose partitions
        leaves the head a spot stays so: later jobs of such sizes are skipped without a look.
        The earliest remaining job of every size is merged in FCFS order with a heap.
        """
        reservation_at, shadow = self._reservation(table, head, occupied, allocation, expected_end, repairs, now)
        masks = table.mask_ints
        self.reservation = (head.job_id, reservation_at)
        self._reserved_job = head
        slack = reservation_at - now  # a job with walltime <= slack ends before the reservation
        remaining = self._remaining
        by_walltime = remaining is None
        if by_walltime:

            def remaining(job):
                return job.walltime

        head_spots = table.free_ids_under(shadow, head.partition_size)
        open_sizes = table.open_sizes_under(occupied)
        index = queue.size_index
        if index is None or index.holds != ("walltime" if by_walltime else "predicted"):
            index = _SizeLists(queue, remaining, by_walltime)  # the plain walk over each size's list
        starts = []
        heap = []
        for size in open_sizes.intersection(queue.sizes()):
            cursor = index.next_waiting(size, 0)
            while cursor >= 0 and id(index.job(size, cursor)) in skip:
                cursor = index.next_waiting(size, cursor + 1)
            if cursor >= 0:
                heap.append((fcfs_key(index.job(size, cursor)), size, cursor))
        heapq.heapify(heap)
        no_late_start: set[int] = set()  # sizes where a job ending after the reservation cannot start
        while heap:
            _, size, cursor = heapq.heappop(heap)
            if size not in open_sizes:
                continue  # no free partition of this size for the rest of the pass
            job = index.job(size, cursor)
            candidates = table.free_ids_under(occupied, size)
            late = remaining(job) > slack
            if late and size not in no_late_start:
                keeps_head = table.disjoint_from_any(candidates, head_spots)
                if np.count_nonzero(keeps_head):
                    candidates = candidates[keeps_head]
                else:
                    no_late_start.add(size)
            if late and size in no_late_start:
                cursor = index.next_ending_by(size, cursor + 1, slack)
                if cursor >= 0:
                    heapq.heappush(heap, (fcfs_key(index.job(size, cursor)), size, cursor))
                continue
            partition_id = self.placement.choose(table, job, candidates, table.words_of(occupied), now)
            starts.append(Start(job, partition_id))
            occupied |= masks[partition_id]
            open_sizes = table.open_sizes_under(occupied)
            if late:
                shadow |= masks[partition_id]
                head_spots = table.free_ids_under(shadow, head.partition_size)
            cursor = index.next_waiting(size, cursor + 1)
            if cursor >= 0:
                heapq.heappush(heap, (fcfs_key(index.job(size, cursor)), size, cursor))
            if not open_sizes:
                break
        return starts


class _SizeLists:
    """The queue's per-size lists with :class:`~torus_sim.engine.size_index.SizeIndex`'s questions: a cursor is a list index.

    "The next job of this size that ends by the reservation" walks the list (after the queue's least
    walltime of the size rules it out, for walltimes); the size index answers the same with a tree.
    """

    __slots__ = ("_by_walltime", "_queue", "_remaining")

    def __init__(self, queue: WaitingJobs, remaining, by_walltime: bool) -> None:
        self._queue = queue
        self._remaining = remaining
        self._by_walltime = by_walltime

    def job(self, size: int, cursor: int) -> Job:
        return self._queue.of_size(size)[cursor]

    def next_waiting(self, size: int, cursor: int) -> int:
        return cursor if cursor < len(self._queue.of_size(size)) else -1

    def next_ending_by(self, size: int, cursor: int, slack: float) -> int:
        if self._by_walltime and self._queue.least_walltime(size) > slack:
            return -1  # every job of this size ends after the reservation
        jobs, remaining = self._queue.of_size(size), self._remaining
        while cursor < len(jobs) and remaining(jobs[cursor]) > slack:
            cursor += 1
        return cursor if cursor < len(jobs) else -1
