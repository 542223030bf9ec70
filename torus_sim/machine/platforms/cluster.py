"""The cluster platform: P nodes with identities, no topology.

Any free nodes will do for a job (RIGID §3.1, MOLDABLE §3.1, PV-EASY §3: P identical processors), but
each node has an identity, so it can fail, be repaired, and be avoided by a fault-aware placement.

A cluster built with ``identities=False`` is the flat machine of P identical processors when nothing
in the run can tell nodes apart (no node failures, no placement that scores nodes): it keeps only the
count of free nodes, and an allocation is a node count. That is what the batch experiments of RIGID
and MOLDABLE run on (hundreds of thousands of attempts, where a node-id array per attempt would
double the cost); the engine turns identities on whenever node failures or a fault-aware placement
are in the run, and the schedule is the same either way (tested).
"""

from __future__ import annotations

import math

import numpy as np

from torus_sim.core.errors import ConfigurationError, SimulationError
from torus_sim.machine.platforms.base import interval_text

__all__ = ["MAX_NODES", "NO_JOB", "ClusterOccupancy", "ClusterPlatform"]

MAX_NODES = 2**22
"""The largest platform accepted (4,194,304 nodes or processors: its per-node arrays stay near 100 MB)."""

NO_JOB = -1
"""``job_at`` value of a node that runs no job."""


class ClusterOccupancy:
    """A planning copy of a cluster's occupancy: how many nodes are free.

    On a cluster only the count matters for whether a job fits (any free nodes will do), so a
    policy plans reservations and backfilling on counts.

    Attributes:
        free: nodes free in the plan.
    """

    __slots__ = ("free",)

    kind = "cluster"

    def __init__(self, free: int) -> None:
        self.free = free

    def copy(self) -> ClusterOccupancy:
        """An independent copy."""
        return ClusterOccupancy(self.free)

    def fits(self, size: int) -> bool:
        """Whether ``size`` nodes are free in the plan."""
        return size <= self.free

    def vacate(self, job) -> None:
        """A running job's nodes are free in the plan."""
        self.free += job.allocated_size

    def vacate_node(self, node: int) -> None:
        """A down node is back in the plan."""
        self.free += 1

    def occupy(self, allocation) -> None:
        """An allocation (node ids or a node count) is taken in the plan."""
        self.free -= len(allocation) if hasattr(allocation, "__len__") else int(allocation)

    def room_after(self, size: int, need: int) -> bool:
        """Whether taking ``size`` more nodes still leaves ``need`` free (EASY's "extra" nodes)."""
        return size <= self.free - need


class ClusterPlatform:
    """Occupancy of P nodes.

    Args:
        nodes: P, the number of nodes (>= 1).
        identities: keep which node runs which job (needed for node failures and fault-aware
            placement); with False only counts are kept and an allocation is a node count.

    Attributes:
        job_at: int64 ``(P,)``, the job on each node, ``NO_JOB`` if none (identities only).
        down_until: float64 ``(P,)``, end of each node's downtime (seconds; -inf when up, +inf when
            the repair time is unknown; identities only).
        spare: bool ``(P,)``, nodes held back from scheduling, open to migrations (identities only).
        held_out: nodes taken out of the machine by :meth:`hold_out` (counts only).
        returning: ``{end (seconds): nodes}`` of those held out until a known end (counts only).

    Raises:
        ConfigurationError: P < 1.

    References:
        RIGID §3.1, MOLDABLE §3.1 (P identical processors; the running jobs never hold more than P);
        PV-EASY §3 (a parallel machine of P processors).
    """

    kind = "cluster"
    guard = None  # the run's ExtensionCalls when it has a plug-in: changes refused while its code runs
    counts_fit = True  # any free nodes make an allocation (the Platform protocol's capabilities)
    table = None  # no partitions: every set of free nodes is one
    node_word = "node"

    def __init__(self, nodes: int, identities: bool = True) -> None:
        if int(nodes) != nodes or nodes < 1:
            raise ConfigurationError(f"the number of nodes P must be a positive integer, got {nodes!r}")
        self._capacity = int(nodes)
        self.identities = bool(identities)
        # the protocol's capabilities, read on the hot paths as attributes: fixed once identities are (never changed)
        self.tracks_nodes = self.identities
        self.counts_only = not self.identities
        self.free = self._capacity  # nodes neither busy nor down nor spare
        self.held: dict[int, int] = {}  # count mode: job id -> nodes held
        self.held_out = 0  # count mode: nodes taken out of the machine (hold_out)
        self.returning: dict[float, int] = {}  # count mode: end of a hold -> nodes held out until then (finite ends)
        self._ahead: list[tuple[float, int]] = []  # count mode: repairs_ahead's rows, made from returning at each change
        if self.identities:
            self.job_at = np.full(self._capacity, NO_JOB, dtype=np.int64)
            self.down_until = np.full(self._capacity, -np.inf)
            self.spare = np.zeros(self._capacity, dtype=bool)

    @property
    def capacity(self) -> int:
        """P."""
        return self._capacity

    def round_size(self, size: int) -> int:
        """The nodes a job of ``size`` occupies: ``size`` (no shape to round to)."""
        return size

    def _need_identities(self, what: str) -> None:
        if not self.identities:
            raise SimulationError(f"{what} needs node identities: build the cluster with identities=True")

    # -- queries ------------------------------------------------------------------------------

    def free_count(self) -> int:
        """Nodes neither busy nor down nor spare."""
        return self.free

    @property
    def busy(self) -> np.ndarray:
        """Bool ``(P,)``: True where a job runs."""
        self._need_identities("busy")
        return self.job_at != NO_JOB

    @property
    def down(self) -> np.ndarray:
        """Bool ``(P,)``: True where the node is down."""
        self._need_identities("down")
        return self.down_until > -np.inf

    def blocked(self) -> np.ndarray:
        """Bool ``(P,)``: busy, down or spare."""
        return self.busy | self.down | self.spare

    def fits_now(self, size: int) -> bool:
        """Whether a job of ``size`` nodes can start now: as many nodes free (the Platform protocol)."""
        return size <= self.free

    def mfp(self) -> int:
        """The largest allocation free now: every free node (a cluster's maximal free partition)."""
        return self.free

    def size_refusal(self, size: int) -> str | None:
        """Why no job of ``size`` nodes can ever run here (more than P), or None."""
        return None if size <= self._capacity else f"which a cluster of {self._capacity} cannot give"

    @property
    def label(self) -> str:
        """``cluster of 128 nodes``."""
        return f"cluster of {self._capacity} nodes"

    def coordinate(self, node: int) -> tuple[int, int]:
        """(row, column) of the node on the near-square grid of :meth:`layout`."""
        return divmod(node, self.layout()[1])

    def allocation_text(self, allocation) -> str:
        """The allocation's node ids as Batsim's interval-set text; "" for a count (no identities)."""
        return interval_text(allocation) if self.identities else ""

    def free_nodes(self) -> np.ndarray:
        """Ids of the free nodes, ascending, int64."""
        return np.flatnonzero(~self.blocked())

    def find(self, size: int):
        """An allocation of ``size`` free nodes (the lowest ids, or a count), or None (the Platform protocol)."""
        if not 0 < size <= self.free:
            return None
        return self.free_nodes()[:size] if self.identities else size

    def size_of(self, allocation) -> int:
        """Nodes of an allocation."""
        return len(allocation) if self.identities else int(allocation)

    def members(self, allocation) -> np.ndarray:
        """Node ids of an allocation, int64."""
        self._need_identities("members")
        return allocation

    def job_on(self, node: int) -> int:
        """Id of the job running on a node, ``NO_JOB`` if none."""
        self._need_identities("job_on")
        return int(self.job_at[node])

    def neighbours(self, node: int) -> list[int]:
        """The nodes next to ``node`` in id order (a cluster has no topology; bursts of failures use these)."""
        return [other for other in (node - 1, node + 1) if 0 <= other < self._capacity]

    def snapshot(self) -> ClusterOccupancy:
        """A planning copy of the occupancy."""
        return ClusterOccupancy(self.free)

    def repairs_ahead(self) -> list[tuple[float, int]]:
        """``(repair time, node)`` of every down node with a known repair time, by time.

        On a cluster that keeps counts only: ``(end, -1)`` for each node held out until a known end (:meth:`hold_out`).
        """
        if not self.identities:
            return list(self._ahead)
        down = np.flatnonzero((self.down_until > -np.inf) & (self.down_until < np.inf))
        return sorted((float(self.down_until[n]), int(n)) for n in down)

    # -- changes (the engine's) ------------------------------------------------------------

    def allocation_refusal(self, allocation, size: int, spares: bool = False, freed=None) -> str | None:
        """Why ``allocation`` cannot be given to a job of ``size`` nodes now, or None when it can.

        The engine asks this of every allocation a policy returns, before changing anything.

        Args:
            allocation: what the policy returned: node ids, int ``(size,)`` (a cluster with node
                identities) or a node count (without).
            size: the nodes the job occupies.
            spares: spare nodes count as free (a migration may land on them).
            freed: node ids counted free although busy (a repack releases them first), or None.

        Returns:
            A sentence, or None.

        References:
            RIGID §3.1, PV-EASY §3 (a job holds its nodes alone).
        """
        if not self.identities:
            if isinstance(allocation, bool) or not isinstance(allocation, (int, np.integer)):
                return f"allocation {allocation!r} is not a node count (this cluster does not tell nodes apart)"
            if allocation != size:
                return f"allocation of {allocation} nodes, the job occupies {size}"
            if size > self.free + (0 if freed is None else int(freed)):
                return f"{size} nodes asked, {self.free} free"
            return None
        try:
            nodes = np.asarray(allocation)
        except Exception:  # noqa: BLE001 - anything that is not an array of ids is refused below
            nodes = None
        if nodes is None or nodes.ndim != 1 or not (nodes.dtype.kind in "iu" or len(nodes) == 0):
            return f"allocation {allocation!r} is not a list of node ids"
        if len(nodes) != size:
            return f"allocation of {len(nodes)} nodes, the job occupies {size}"
        ids = nodes.tolist()  # a job's few ids: Python's min, max and set before numpy's per-call costs
        if ids and (min(ids) < 0 or max(ids) >= self._capacity):
            return f"node ids must lie in 0..{self._capacity - 1}, got {ids}"
        if len(set(ids)) != len(ids):
            return f"allocation names a node twice: {ids}"
        down = self.down_until[nodes] > -np.inf
        if down.any():
            return f"nodes {nodes[down].tolist()} are down"
        busy = self.job_at[nodes] != NO_JOB
        if freed is not None and len(freed):
            busy &= ~np.isin(nodes, freed)
        if busy.any():
            return f"nodes {nodes[busy].tolist()} are busy"
        if not spares:
            held_back = self.spare[nodes]
            if held_back.any():
                return f"nodes {nodes[held_back].tolist()} are spares (held back for migrations)"
        return None

    def allocate(self, allocation, job_id: int) -> None:
        """Give nodes to a job (spares only to a migrating job: the policies never see them free).

        Raises:
            SimulationError: a node is busy or down, or too few nodes are free.
        """
        if self.guard is not None:
            self.guard.check_engine_write("the platform")
        if not self.identities:
            if allocation > self.free or allocation < 1:
                raise SimulationError(f"job {job_id} asks {allocation} nodes, {self.free} of {self._capacity} are free")
            if job_id in self.held:
                raise SimulationError(f"job {job_id} already holds {self.held[job_id]} nodes")
            self.free -= allocation
            self.held[job_id] = allocation
            return
        if np.any(self.job_at[allocation] != NO_JOB) or np.any(self.down_until[allocation] > -np.inf):
            raise SimulationError(f"nodes {allocation.tolist()} are not all free for job {job_id}")
        self.job_at[allocation] = job_id
        self.free -= len(allocation) - int(np.count_nonzero(self.spare[allocation]))  # a migration may land on spares

    def release(self, allocation, job_id: int) -> None:
        """Take back the nodes a job holds.

        Raises:
            SimulationError: the job does not hold exactly that allocation.
        """
        if self.guard is not None:
            self.guard.check_engine_write("the platform")
        if not self.identities:
            if self.held.get(job_id) != allocation:
                raise SimulationError(f"job {job_id} holds {self.held.get(job_id, 0)} nodes, not {allocation}")
            del self.held[job_id]
            self.free += allocation
            return
        if np.any(self.job_at[allocation] != job_id):
            raise SimulationError(f"nodes {allocation.tolist()} are not all held by job {job_id}")
        self.job_at[allocation] = NO_JOB
        self.free += len(allocation) - int(np.count_nonzero(self.spare[allocation]))

    def move(self, old, new, job_id: int) -> None:
        """Move a job from one allocation to another of the same size (a migration)."""
        self.release(old, job_id)
        self.allocate(new, job_id)

    def take_down(self, node: int, until: float) -> None:
        """Mark a node down until ``until`` (seconds; +inf = unknown); extends a downtime.

        Raises:
            SimulationError: a job still runs on it (the engine kills the job first).
        """
        if self.guard is not None:
            self.guard.check_engine_write("the platform")
        self._need_identities("take_down")
        if self.job_at[node] != NO_JOB:
            raise SimulationError(f"node {node} still runs job {self.job_at[node]}")
        if self.down_until[node] == -np.inf and not self.spare[node]:
            self.free -= 1
        self.down_until[node] = max(self.down_until[node], until)

    def hold_out(self, count: int, until: float = math.inf) -> None:
        """Count mode: take ``count`` free nodes out of the machine until ``until`` (an effective size, a reservation).

        They are neither free nor busy: the view counts them down (:attr:`held_out`). Held until a finite end, they are
        rows ``(until, -1)`` of :meth:`repairs_ahead` (every policy's planning counts them back there) until
        :meth:`give_back` returns them; held for good (``until`` inf: a constant effective size) they never come back.

        Args:
            count: nodes to take (at most the free ones).
            until: when they come back, seconds of the run's clock; ``math.inf``: never.

        Raises:
            SimulationError: a cluster with node identities (it takes nodes down by id), or more than the free nodes.
        """
        if self.guard is not None:
            self.guard.check_engine_write("the platform")
        if self.identities:
            raise SimulationError("hold_out is for a cluster that keeps counts only: take nodes down by id")
        if not 0 <= count <= self.free:
            raise SimulationError(f"cannot hold {count} nodes out of {self.free} free")
        self.free -= count
        self.held_out += count
        if count and until < math.inf:
            self.returning[until] = self.returning.get(until, 0) + count
            self._returns_changed()

    def give_back(self, count: int, until: float) -> None:
        """Count mode: ``count`` nodes held out until ``until`` (:meth:`hold_out`) are free again (the hold's end).

        Args:
            count: nodes to give back (at most those held until ``until``).
            until: the end they were held until, seconds of the run's clock (the same float :meth:`hold_out` got).

        Raises:
            SimulationError: a cluster with node identities, or fewer nodes held until ``until``.
        """
        if self.guard is not None:
            self.guard.check_engine_write("the platform")
        if self.identities:
            raise SimulationError("give_back is for a cluster that keeps counts only: repair nodes by id")
        held = self.returning.get(until, 0)
        if not 0 <= count <= held:
            raise SimulationError(f"cannot give back {count} nodes: {held} are held until {until:g} s")
        if held == count:
            del self.returning[until]
        else:
            self.returning[until] = held - count
        self.free += count
        self.held_out -= count
        self._returns_changed()

    def _returns_changed(self) -> None:
        """Make :meth:`repairs_ahead`'s rows again from :attr:`returning`: ``(end, -1)`` per node, by end."""
        self._ahead = [(end, NO_JOB) for end in sorted(self.returning) for _ in range(self.returning[end])]

    def repair(self, node: int, at: float) -> bool:
        """Bring a node back if its downtime has ended by ``at``.

        Returns:
            True if it came back; False if a later failure extended its downtime, or if it is not down
            (two failures of one node with the same repair time schedule two repairs: the second finds
            it up; counting it back again would make a free node out of a busy one).
        """
        if self.guard is not None:
            self.guard.check_engine_write("the platform")
        self._need_identities("repair")
        if self.down_until[node] > at or self.down_until[node] == -np.inf:  # not yet, or not down (a repair already ran)
            return False
        self.down_until[node] = -np.inf
        if not self.spare[node]:
            self.free += 1
        return True

    def reserve_spares(self, count: int) -> np.ndarray:
        """Hold back ``count`` nodes (the highest ids) as spares for preventive migration.

        Raises:
            ConfigurationError: ``count`` outside [0, P).

        References:
            CKPT-MIG, "Preventive migration" (n spare nodes).
        """
        if self.guard is not None:
            self.guard.check_engine_write("the platform")
        self._need_identities("spares")
        if not 0 <= count < self._capacity:
            raise ConfigurationError(f"spares must lie in [0, {self._capacity}), got {count}")
        self.spare[:] = False
        self.spare[self._capacity - count :] = True
        self.free = int(np.count_nonzero(~self.blocked()))
        return np.flatnonzero(self.spare)

    def largest_free(self, blocked: np.ndarray) -> int:
        """The largest job that fits when ``blocked`` nodes are taken (the MFP of a cluster: the free count)."""
        return int(np.count_nonzero(~blocked))

    def layout(self) -> tuple[int, int]:
        """(rows, columns) of a near-square grid for drawing the nodes."""
        columns = math.ceil(math.sqrt(self._capacity))
        return math.ceil(self._capacity / columns), columns
