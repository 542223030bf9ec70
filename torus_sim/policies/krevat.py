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

References:
    BGL-FAULT §5.1 (Krevat's FCFS + backfilling + migration, MFP heuristic), §6.1; Krevat,
    Castaños, Moreira, "Job scheduling for the BlueGene/L system", JSSPP 2002; Lifka, "The
    ANL/IBM SP scheduling system", JSSPP 1995 (EASY backfilling).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from torus_sim.errors import ConfigurationError
from torus_sim.job import Job
from torus_sim.partitions import PartitionTable
from torus_sim.platforms.torus import TorusPlatform
from torus_sim.policies.placement import MfpPlacement, PlacementPolicy

__all__ = ["KrevatScheduler", "Repack", "Start"]


@dataclass(frozen=True)
class Start:
    """Start a queued job on a free partition now."""

    job: Job
    partition_id: int


@dataclass(frozen=True)
class Repack:
    """Migrate running jobs: each ``(job, new partition id)``; all old partitions are released first."""

    moves: tuple[tuple[Job, int], ...]


class KrevatScheduler:
    """FCFS with backfilling and migration on the torus (BGL-FAULT §5.1).

    Args:
        placement: which free partition a job gets; :class:`MfpPlacement` when None.
        backfill: let later jobs start when they do not delay the head's reservation.
        migration: repack running jobs when fragmentation alone blocks the head.
        migration_cost: seconds each moved job loses (checkpoint + restart); 0 as in BGL-FAULT.

    Raises:
        ConfigurationError: negative migration cost.
    """

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
        self._failed_repack: tuple[bytes, int] | None = None
        self.repack_attempts = 0

    def plan(self, now: float, queue: Sequence[Job], running: Sequence[Job], platform: TorusPlatform) -> list[Start | Repack]:
        """Plan one scheduling pass.

        Args:
            now: current time, seconds.
            queue: waiting jobs in FCFS order.
            running: jobs on partitions (``job.partition`` is their partition id).
            platform: the torus; read, never changed.

        Returns:
            Actions in the order the engine must apply them.
        """
        table = platform.table
        blocked = platform.blocked().copy()
        down = platform.down.copy()
        allocation = {job: job.partition for job in running}
        expected_end = {job: job.estimated_end(now) for job in running}
        actions: list[Start | Repack] = []
        pending = list(queue)

        while pending:
            head = pending[0]
            partition_id = self._place(table, head, blocked, now)
            if partition_id is None and self.migration:
                repack = self._repack(table, head, allocation, blocked, down, now)
                if repack is not None:
                    moves, partition_id = repack
                    actions.append(Repack(moves))
                    for job, new_id in moves:
                        blocked[table.members[allocation[job]]] = False
                    for job, new_id in moves:
                        blocked[table.members[new_id]] = True
                        allocation[job] = new_id
                        expected_end[job] += self.migration_cost
            if partition_id is None:
                break
            actions.append(Start(head, partition_id))
            blocked[table.members[partition_id]] = True
            allocation[head] = partition_id
            expected_end[head] = now + head.walltime
            pending.pop(0)

        if self.backfill and len(pending) > 1:
            actions.extend(self._backfill(table, pending, blocked, allocation, expected_end, platform.repairs_ahead(), now))
        return actions

    def _place(self, table: PartitionTable, job: Job, blocked: np.ndarray, now: float) -> int | None:
        words = table.pack(blocked)
        candidates = table.free_ids_of_size(words, job.partition_size)
        if not len(candidates):
            return None
        return self.placement.choose(table, job, candidates, words, now)

    def _repack(self, table, head, allocation, blocked, down, now):
        """Place the head and then every running job, largest first, on a torus of only down supernodes."""
        free = len(blocked) - int(np.count_nonzero(blocked))
        if free < head.partition_size:
            return None  # not fragmentation: not enough free supernodes
        key = (table.pack(blocked).tobytes(), head.job_id)
        if key == self._failed_repack:
            return None
        self.repack_attempts += 1
        scratch = down.copy()
        order = [head] + sorted(allocation, key=lambda job: (-job.partition_size, job.submitted_at, job.job_id))
        placed = {}
        for job in order:
            partition_id = self._place(table, job, scratch, now)
            if partition_id is None:
                self._failed_repack = key
                return None
            placed[job] = partition_id
            scratch[table.members[partition_id]] = True
        moves = tuple((job, placed[job]) for job in order[1:] if placed[job] != allocation[job])
        return moves, placed[head]

    def _reservation(self, table, head, blocked, allocation, expected_end, repairs, now):
        """Earliest expected time the head fits, and the occupancy expected then."""
        releases: dict[float, list[np.ndarray]] = {}
        for job, partition_id in allocation.items():
            releases.setdefault(expected_end[job], []).append(table.members[partition_id])
        for repair_at, supernode in repairs:
            releases.setdefault(max(repair_at, now), []).append(np.array([supernode]))
        shadow = blocked.copy()
        for at in sorted(releases):
            for members in releases[at]:
                shadow[members] = False
            if len(table.free_ids_of_size(table.pack(shadow), head.partition_size)):
                return at, shadow
        return math.inf, shadow

    def _backfill(self, table, pending, blocked, allocation, expected_end, repairs, now):
        head = pending[0]
        reservation_at, shadow = self._reservation(table, head, blocked, allocation, expected_end, repairs, now)
        head_spots = table.free_ids_of_size(table.pack(shadow), head.partition_size)
        mfp = table.mfp(table.pack(blocked))
        starts = []
        for job in pending[1:]:
            if job.partition_size > mfp:
                continue
            words = table.pack(blocked)
            candidates = table.free_ids_of_size(words, job.partition_size)
            if not len(candidates):
                continue
            ends_after_reservation = now + job.walltime > reservation_at
            if ends_after_reservation:
                keeps_head = ~table.overlaps(candidates, head_spots).all(axis=1)
                candidates = candidates[keeps_head]
                if not len(candidates):
                    continue
            partition_id = self.placement.choose(table, job, candidates, words, now)
            starts.append(Start(job, partition_id))
            members = table.members[partition_id]
            blocked[members] = True
            if ends_after_reservation:
                shadow[members] = True
                head_spots = table.free_ids_of_size(table.pack(shadow), head.partition_size)
            mfp = table.mfp(table.pack(blocked))
            if mfp == 0:
                break
        return starts
