"""The torus platform: which supernode runs which job, which are down.

The platform holds the occupancy and applies allocations, releases, failures and repairs; it
answers "which partitions of size s are free?" through a :class:`~torus_sim.machine.partition_table.PartitionTable`.
It never decides anything: that is the policy's job (:mod:`torus_sim.policies.krevat`).
"""

from __future__ import annotations

import numpy as np

from torus_sim.core.errors import ConfigurationError, SimulationError
from torus_sim.machine.partition_table import PartitionTable
from torus_sim.machine.partitions import Partition, round_up_to_feasible_size
from torus_sim.machine.platforms.base import interval_text
from torus_sim.machine.topology import BGL_SUPERNODE_TORUS, Torus

__all__ = ["NO_JOB", "TorusOccupancy", "TorusPlatform"]

NO_JOB = -1
"""``job_at`` value of a supernode that runs no job."""


class TorusOccupancy:
    """A planning copy of a torus's occupancy: which supernodes are taken.

    A policy plans reservations and backfilling on it: whether a job fits is whether a free
    partition of its partition size exists (BGL-FAULT §3.3), not whether enough supernodes are free.

    Args:
        table: the torus's partition table.
        blocked: bool ``(N,)``, taken supernodes (the copy is owned by this object).
    """

    __slots__ = ("blocked", "table")

    kind = "torus"

    def __init__(self, table: PartitionTable, blocked: np.ndarray) -> None:
        self.table = table
        self.blocked = blocked

    def copy(self) -> TorusOccupancy:
        """An independent copy."""
        return TorusOccupancy(self.table, self.blocked.copy())

    @property
    def free(self) -> int:
        """Supernodes free in the plan."""
        return int(len(self.blocked) - np.count_nonzero(self.blocked))

    def spots(self, size: int) -> np.ndarray:
        """Free partitions of ``size`` supernodes in the plan (ids)."""
        return self.table.free_ids_of_size(self.table.pack(self.blocked), size)

    def fits(self, size: int) -> bool:
        """Whether a free partition of ``size`` supernodes exists in the plan."""
        return len(self.spots(size)) > 0

    def vacate(self, job) -> None:
        """A running job's partition is free in the plan."""
        self.blocked[self.table.members[job.allocation]] = False

    def vacate_node(self, node: int) -> None:
        """A down supernode is back in the plan."""
        self.blocked[node] = False

    def occupy(self, partition_id: int) -> None:
        """A partition is taken in the plan."""
        self.blocked[self.table.members[partition_id]] = True


class TorusPlatform:
    """Occupancy of a torus of supernodes.

    Args:
        torus: the torus (default BG/L's 4x4x8 supernodes).
        table: a prebuilt partition table for this torus (built when None; share one table
            between runs to save the ~0.3 s it takes).

    Attributes:
        job_at: int64 array ``(N,)``, the id of the job on each supernode, ``NO_JOB`` if none.
        partition_at: int64 array ``(N,)``, the partition id allocated on each supernode, -1 if none.
        down_until: float64 array ``(N,)``, end of each supernode's downtime (seconds; -inf when up,
            +inf when the repair time is unknown).

    References:
        BGL-FAULT §3.3 (one job per node, contiguous rectangular partitions, failing nodes).
    """

    kind = "torus"
    guard = None  # the run's ExtensionCalls when it has a plug-in: changes refused while its code runs
    tracks_nodes = True  # the Platform protocol's capabilities: every supernode has an identity,
    counts_fit = False  # a job needs a free box of its shape, not only as many free supernodes,
    counts_only = False  # and holds a partition id of ``table``
    node_word = "supernode"

    def __init__(self, torus: Torus = BGL_SUPERNODE_TORUS, table: PartitionTable | None = None) -> None:
        self.torus = torus
        self.table = table if table is not None else PartitionTable(torus)
        if self.table.torus != torus:
            raise SimulationError("partition table was built for another torus")
        self.job_at = np.full(torus.size, NO_JOB, dtype=np.int64)
        self.partition_at = np.full(torus.size, -1, dtype=np.int64)
        self.down_until = np.full(torus.size, -np.inf)
        self.spare = np.zeros(torus.size, dtype=bool)  # held back from scheduling, open to migrations
        self._busy_bits = self._down_bits = self._spare_bits = 0  # the same three sets as ints, bit i = supernode i
        self._holder: dict[int, int] = {}  # partition id -> the job on it (job_at of its supernodes)
        self._texts: dict[int, str] = {}  # partition id -> its members' interval text (the record's, once each)
        self._changed(downtimes=True)

    def _changed(self, downtimes: bool = False) -> None:
        """Forget what is derived from the occupancy (every change goes through a method that calls this).

        Args:
            downtimes: the downtimes changed too (a failure or a repair), not only which jobs run where.
        """
        self._words: np.ndarray | None = None
        self._blocked: np.ndarray | None = None
        if downtimes:
            self._repairs: list[tuple[float, int]] | None = None

    @property
    def capacity(self) -> int:
        """Number of supernodes."""
        return self.torus.size

    def round_size(self, size: int) -> int:
        """The partition size a job of ``size`` supernodes occupies (next size with a shape)."""
        return round_up_to_feasible_size(self.torus.dims, size)

    @property
    def busy(self) -> np.ndarray:
        """Bool ``(N,)``: True where a job runs."""
        return self.job_at != NO_JOB

    @property
    def down(self) -> np.ndarray:
        """Bool ``(N,)``: True where the supernode is down."""
        return self.down_until > -np.inf

    def blocked(self) -> np.ndarray:
        """Bool ``(N,)``, a fresh copy: busy, down or spare, i.e. not available to a newly scheduled job."""
        if self._blocked is None:
            self._blocked = self.busy | self.down | self.spare
        return self._blocked.copy()

    def reserve_spares(self, count: int) -> np.ndarray:
        """Hold back ``count`` supernodes as spares for preventive migration, from the top plane of the last dimension down.

        Spares fill whole planes of the last dimension first (z = Z-1, then Z-2, ...), so the boxes left
        for scheduling stay as large as possible (16 spares on the 4x4x8 torus leave a 4x4x7 box). Spares are never
        given to a newly scheduled job; a migrating job may move onto them.

        Args:
            count: number of spares n.

        Returns:
            The spare supernode indices, ascending.

        Raises:
            ConfigurationError: ``count`` outside [0, N).

        References:
            CKPT-MIG, "Preventive migration" (n spare nodes).
        """
        if not 0 <= count < self.capacity:
            raise ConfigurationError(f"spares must lie in [0, {self.capacity}), got {count}")
        coordinates = self.torus.coordinates
        # the last dimension descending, then the others in row-major order (z descending, then x, y on a 3-D torus)
        keys = tuple(coordinates[:, axis] for axis in range(self.torus.ndim - 2, -1, -1)) + (-coordinates[:, -1],)
        order = np.lexsort(keys)
        self.spare[:] = False
        self.spare[order[:count]] = True
        self._spare_bits = self.table.occupied_of(self.table.pack(self.spare))
        self._changed()
        return np.flatnonzero(self.spare)

    def words(self) -> np.ndarray:
        """The blocked supernodes packed for the partition table (cached until the next change)."""
        if self._words is None:
            self._words = self.table.pack(self.blocked())
        return self._words

    def occupied(self) -> int:
        """The blocked supernodes (busy, down or spare) as a Python int, bit i = supernode i.

        The same supernodes as :meth:`blocked` (:meth:`PartitionTable.occupied_of` of its packed form), kept up to
        date by every allocation, release, failure and repair with one ``|`` or ``&~`` each.

        Returns:
            A non-negative int below ``2 ** N``.

        References:
            BGL-FAULT §3.3 (busy and failing nodes); Krevat's pass plans on it (§5.1).
        """
        return self._busy_bits | self._down_bits | self._spare_bits

    def free_count(self) -> int:
        """Supernodes neither busy nor down nor spare (BGL-FAULT §6.1's f(t))."""
        return self.capacity - (self._busy_bits | self._down_bits | self._spare_bits).bit_count()

    def mfp(self) -> int:
        """Size of the maximal free partition now (BGL-FAULT §5.1)."""
        return self.table.mfp(self.words())

    def find(self, size: int) -> int | None:
        """The lowest-id free partition of ``size`` supernodes, or None (the :class:`Platform` protocol).

        Placement policies choose among all free partitions (MFP, balancing, tie-break); this is the
        protocol's plain "can a job of this size start now, and where?".
        """
        ids = self.table.free_ids_of_size(self.words(), self.round_size(size)) if 0 < size <= self.capacity else ()
        return int(ids[0]) if len(ids) else None

    def fits_now(self, size: int) -> bool:
        """Whether a job of ``size`` supernodes can start now: a free partition of its size (the Platform protocol)."""
        return self.find(size) is not None

    def size_refusal(self, size: int) -> str | None:
        """Why no job of ``size`` supernodes can ever run here (more than the torus, or no box of that size), or None."""
        if size > self.capacity or size != self.round_size(size):
            return f"which the torus {self.torus.dims} cannot give"
        return None

    @property
    def label(self) -> str:
        """``torus 4x4x8``."""
        return f"torus {self.torus.label}"

    def coordinate(self, node: int) -> tuple[int, ...]:
        """The supernode's coordinate on the torus."""
        return self.torus.coordinate(node)

    def allocation_text(self, allocation: int) -> str:
        """The partition's supernodes as Batsim's interval-set text (made once per partition id)."""
        text = self._texts.get(allocation)
        if text is None:
            text = self._texts[allocation] = interval_text(self.members(allocation))
        return text

    def size_of(self, partition_id: int) -> int:
        """Supernodes of a partition id."""
        return len(self.table.members[partition_id])

    def snapshot(self) -> TorusOccupancy:
        """A planning copy of the occupancy (busy, down and spare supernodes taken)."""
        return TorusOccupancy(self.table, self.blocked())

    def neighbours(self, node: int) -> list[int]:
        """The torus neighbours of a supernode (bursts of failures spread to these)."""
        return self.torus.neighbours(node)

    def largest_free(self, blocked: np.ndarray) -> int:
        """The largest partition free when ``blocked`` supernodes are taken (the MFP)."""
        return self.table.mfp(self.table.pack(blocked))

    def move(self, old: int, new: int, job_id: int) -> None:
        """Move a job from one partition to another (a migration)."""
        self.release(old, job_id)
        self.allocate(new, job_id)

    def partition(self, partition_id: int) -> Partition:
        """The box of a partition id."""
        return self.table.partitions[partition_id]

    def members(self, partition_id: int) -> np.ndarray:
        """Supernode indices of a partition id, int64 ``(size,)``."""
        return self.table.members[partition_id]

    def allocation_refusal(self, allocation, size: int, spares: bool = False, freed: int = 0) -> str | None:
        """Why ``allocation`` cannot be given to a job of ``size`` supernodes now, or None when it can.

        The engine asks this of every allocation a policy returns, before changing anything.

        Args:
            allocation: what the policy returned (a partition id is expected).
            size: the supernodes the job occupies.
            spares: spare supernodes count as free (a migration may land on them).
            freed: supernodes (bit i = supernode i) counted free although busy (a repack releases them first).

        Returns:
            A sentence, or None.

        References:
            BGL-FAULT §3.3 (a job runs on a free, contiguous, rectangular partition of its size).
        """
        if isinstance(allocation, bool) or not isinstance(allocation, (int, np.integer)):
            return f"allocation {allocation!r} is not a partition id (an int from the partition table)"
        count = len(self.table.members)
        if not 0 <= allocation < count:
            return f"partition id {allocation} does not exist (this torus has ids 0..{count - 1})"
        partition_id = int(allocation)
        members = len(self.table.members[partition_id])
        if members != size:
            return f"partition {self.partition(partition_id)} has {members} supernodes, the job occupies {size}"
        mask = self.table.mask_ints[partition_id]
        if mask & self._down_bits:
            return f"partition {self.partition(partition_id)} holds a down supernode"
        if mask & self._busy_bits & ~freed:
            return f"partition {self.partition(partition_id)} is not free (a job runs on part of it)"
        if not spares and mask & self._spare_bits:
            return f"partition {self.partition(partition_id)} holds a spare supernode (held back for migrations)"
        return None

    def held_bits(self, allocation) -> int:
        """The supernodes of a held partition as an int (bit i = supernode i)."""
        return self.table.mask_ints[int(allocation)]

    def allocate(self, partition_id: int, job_id: int) -> None:
        """Give a free partition to a job.

        Raises:
            SimulationError: a supernode of the partition is busy or down.
        """
        if self.guard is not None:
            self.guard.check_engine_write("the platform")
        mask = self.table.mask_ints[partition_id]
        if mask & (self._busy_bits | self._down_bits):
            raise SimulationError(f"partition {self.partition(partition_id)} is not free for job {job_id}")
        members = self.table.members[partition_id]
        self.job_at[members] = job_id
        self.partition_at[members] = partition_id
        self._holder[partition_id] = job_id
        self._busy_bits |= mask
        self._changed()

    def release(self, partition_id: int, job_id: int) -> None:
        """Take a partition back from the job that holds it.

        Raises:
            SimulationError: the partition is not held by that job.
        """
        if self.guard is not None:
            self.guard.check_engine_write("the platform")
        if self._holder.get(partition_id) != job_id:  # the job_at of its supernodes, kept by allocate and release
            raise SimulationError(f"partition {self.partition(partition_id)} is not held by job {job_id}")
        del self._holder[partition_id]
        members = self.table.members[partition_id]
        self.job_at[members] = NO_JOB
        self.partition_at[members] = -1
        self._busy_bits &= ~self.table.mask_ints[partition_id]
        self._changed()

    def job_on(self, supernode: int) -> int:
        """Id of the job running on a supernode, ``NO_JOB`` if none."""
        return int(self.job_at[supernode])

    def take_down(self, supernode: int, until: float) -> None:
        """Mark a supernode down until ``until`` (seconds; +inf = unknown); extends a downtime.

        Raises:
            SimulationError: a job still runs on it (the engine kills the job first).
        """
        if self.guard is not None:
            self.guard.check_engine_write("the platform")
        if self.job_at[supernode] != NO_JOB:
            raise SimulationError(f"supernode {supernode} still runs job {self.job_at[supernode]}")
        self.down_until[supernode] = max(self.down_until[supernode], until)
        if self.down_until[supernode] > -np.inf:
            self._down_bits |= 1 << int(supernode)
        self._changed(downtimes=True)

    def repair(self, supernode: int, at: float) -> bool:
        """Bring a supernode back if its downtime has ended by ``at``.

        Returns:
            True if it came back; False if a later failure extended its downtime, or if it is not down
            (two failures of one node with the same repair time schedule two repairs: the second finds
            it up; counting it back again would make a free node out of a busy one).
        """
        if self.guard is not None:
            self.guard.check_engine_write("the platform")
        if (
            self.down_until[supernode] > at or self.down_until[supernode] == -np.inf
        ):  # not yet, or not down (a repair already ran)
            return False
        self.down_until[supernode] = -np.inf
        self._down_bits &= ~(1 << int(supernode))
        self._changed(downtimes=True)
        return True

    def repairs_ahead(self) -> list[tuple[float, int]]:
        """``(repair time, supernode)`` of every down supernode with a known repair time, by time."""
        if self._repairs is None:
            down = np.flatnonzero((self.down_until > -np.inf) & (self.down_until < np.inf))
            self._repairs = sorted((float(self.down_until[n]), int(n)) for n in down)
        return list(self._repairs)
