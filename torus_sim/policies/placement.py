"""Placement policies: which free partition (torus) or which free nodes (cluster) a job gets.

A placement policy is the extension point of the fault-aware schedulers (BGL-FAULT §5.2): on the
torus it gets the free partitions of the job's size and returns one; on a cluster it gets the free
nodes and returns as many as the job needs. Subclasses override :meth:`PlacementPolicy.choose` and
:meth:`PlacementPolicy.choose_nodes`, and register with ``PLACEMENTS.register``.
"""

from __future__ import annotations

import numpy as np

from torus_sim.job import Job
from torus_sim.partitions import PartitionTable
from torus_sim.registry import Registry

__all__ = ["MFP", "PLACEMENTS", "MfpPlacement", "PlacementPolicy"]


class PlacementPolicy:
    """Base class: choose one partition among free candidates.

    Override:
        choose(table, job, candidate_ids, words, now) -> int (torus)
        choose_nodes(free_nodes, job, now) -> node ids (cluster; the lowest ids by default)
        and, for a policy that uses a predictor or randomness, attach / observe_failure.
    """

    name = "base"
    predictor = None
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


MFP = MfpPlacement()
"""The MFP heuristic (stateless), the placement of policies that name none."""

PLACEMENTS: Registry[PlacementPolicy] = Registry("placement")
"""Placement policies by name: ``PLACEMENTS.register(name, factory)``, ``PLACEMENTS.make(name)``."""
PLACEMENTS.register("mfp", MfpPlacement)
