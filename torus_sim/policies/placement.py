"""Placement policies: which free partition (torus) or which free nodes (cluster) a job gets.

A placement policy is the extension point of the fault-aware schedulers (BGL-FAULT §5.2): on the
torus it gets the free partitions of the job's size and returns one; on a cluster it gets the free
nodes and returns as many as the job needs. Subclasses override :meth:`PlacementPolicy.choose` and
:meth:`PlacementPolicy.choose_nodes`, and register with ``PLACEMENTS.register``.
"""

from __future__ import annotations

import numpy as np

from torus_sim.core.job import Job
from torus_sim.inputs.registry import Registry
from torus_sim.machine.partition_table import PartitionTable

__all__ = ["DEFAULT_PLACEMENT_NAME", "MFP", "PLACEMENTS", "PLACEMENT_ENTRY_POINTS", "MfpPlacement", "PlacementPolicy"]


class PlacementPolicy:
    """Base class: choose one partition among free candidates.

    Override:
        choose(table, job, candidate_ids, words, now) -> int (torus)
        choose_nodes(free_nodes, job, now) -> node ids (cluster; the lowest ids by default)
        and, for a policy that uses a predictor or randomness, attach / observe_failure.
    """

    name = "base"
    predictor = None
    default_predictor = "null"
    """The failure predictor a scenario's run gives the placement when it names none (a registry name)."""
    occupancy_only = False
    """True when :meth:`choose` depends only on ``candidate_ids`` and ``words`` (a scheduler may then reuse a choice)."""

    def attach(self, log, rng: np.random.Generator, n_supernodes: int) -> None:
        """Receive the run's failure log, generator and platform size (passed on to a predictor)."""
        if self.predictor is not None:
            self.predictor.attach(log, rng, n_supernodes)

    def observe_failure(self, at: float, supernode: int) -> None:
        """A failure happened (seconds, supernode); passed on to a predictor."""
        if self.predictor is not None:
            self.predictor.observe_failure(at, supernode)

    def choose(self, table: PartitionTable, job: Job, candidate_ids: np.ndarray, words: np.ndarray, now: float) -> int:
        """Pick a partition id.

        Args:
            table: the torus's partition table.
            job: the job to place.
            candidate_ids: ids of free partitions of the job's partition size, int64 ``(C,)``, C >= 1.
            words: packed blocked supernodes before the placement.
            now: current time, seconds.

        Returns:
            One of ``candidate_ids``.
        """
        raise NotImplementedError

    def place_in_order(self, table: PartitionTable, jobs: list[Job], words: np.ndarray, now: float) -> list[int]:
        """Place jobs one after another, each on the occupancy the previous ones leave.

        Args:
            table: the torus's partition table.
            jobs: the jobs, in the order they are placed.
            words: packed blocked supernodes before the first placement, uint64 ``(K,)``.
            now: current time, seconds.

        Returns:
            The partition id of each job placed, in order; shorter than ``jobs`` when one has no free
            partition of its size (the list stops before it).
        """
        blocked = np.unpackbits(words.view(np.uint8), bitorder="little").astype(bool)
        placed = []
        for job in jobs:
            words = table.pack(blocked)
            candidates = table.free_ids_of_size(words, job.partition_size)
            if not len(candidates):
                break
            partition_id = self.choose(table, job, candidates, words, now)
            placed.append(partition_id)
            blocked[table.members[partition_id]] = True
        return placed

    def choose_nodes(self, free_nodes: np.ndarray, job: Job, now: float) -> np.ndarray:
        """Pick the nodes of a job on a cluster.

        Args:
            free_nodes: ids of the free nodes, ascending, int64 ``(F,)``, F >= the job's size.
            job: the job to place (``partition_size`` nodes).
            now: current time, seconds.

        Returns:
            int64 ``(size,)``: the lowest free ids (no node is better than another).
        """
        return free_nodes[: job.partition_size]


class MfpPlacement(PlacementPolicy):
    """Krevat's maximal-free-partition heuristic: keep the largest MFP after placing the job.

    Ties go to the lowest partition id (largest shape order, then base), so runs are
    deterministic.

    References:
        BGL-FAULT §5.1 and Fig. 1 (MFP heuristic); Krevat, Castaños, Moreira, "Job scheduling
        for the BlueGene/L system", JSSPP 2002.
    """

    name = "mfp"
    occupancy_only = True

    def choose(self, table: PartitionTable, job: Job, candidate_ids: np.ndarray, words: np.ndarray, now: float) -> int:  # noqa: D102
        if len(candidate_ids) == 1:
            return int(candidate_ids[0])
        return int(candidate_ids[table.mfp_choice(candidate_ids, words)])

    def place_in_order(self, table: PartitionTable, jobs: list[Job], words: np.ndarray, now: float) -> list[int]:
        """:meth:`PlacementPolicy.place_in_order` on the free partitions' bits, kept up to date.

        After each placement the free partitions are the previous ones disjoint from it (one AND of
        ``ceil(P / 64)`` words), so no occupancy is packed or its free partitions recounted: a third
        of the time of placing one job after another (Krevat's repacks).
        """
        free = table.free_bits(words).copy()
        placed = []
        for job in jobs:
            candidates = table.free_ids_in(free, job.partition_size)
            if not len(candidates):
                break
            partition_id = int(candidates[table.mfp_choice_in(candidates, free) if len(candidates) > 1 else 0])
            placed.append(partition_id)
            free &= table.disjoint_row(partition_id)
        return placed


MFP = MfpPlacement()
"""The MFP heuristic (stateless), the placement of policies that name none."""

DEFAULT_PLACEMENT_NAME = "mfp"
"""The placement a run builds for a policy whose entry declares none (``default_placement``)."""

PLACEMENT_ENTRY_POINTS = "torus_sim.placements"
"""The entry-point group installed packages add their placement policies to."""

PLACEMENTS: Registry[PlacementPolicy] = Registry("placement", PLACEMENT_ENTRY_POINTS, PlacementPolicy)
"""Placement policies by name: ``PLACEMENTS.register(name, factory)``, ``PLACEMENTS.build(name, params, offered)``;
installed plug-ins under the ``torus_sim.placements`` entry points; import paths ``package.module:Class``."""
PLACEMENTS.register("mfp", MfpPlacement)
