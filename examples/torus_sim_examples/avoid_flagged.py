"""Example 2: a fault-aware placement that keeps jobs off the nodes a failure predictor flags."""

import numpy as np
from torus_sim.api import MFP, FailurePredictor, PlacementPolicy


class AvoidFlagged(PlacementPolicy):
    """Among the free allocations, the one with the fewest nodes flagged over the job's walltime.

    A node is flagged when the predictor's probability that it fails in ``[now, now + walltime)``
    is at least ``threshold``. On the torus the least-flagged partitions are compared by the MFP
    heuristic (BGL-FAULT §5.1); on a cluster the job gets unflagged nodes first, lowest ids first.

    Args:
        predictor: offered by the engine: the failure predictor the scenario names
            (``--predictor history`` learns from past failures only).
        threshold: probability from which a node counts as flagged, in [0, 1].
    """

    name = "avoid-flagged"

    def __init__(self, predictor: FailurePredictor, threshold: float = 0.5) -> None:
        if not 0.0 <= threshold <= 1.0:
            raise ValueError(f"threshold must lie in [0, 1], got {threshold}")
        self.predictor = predictor
        self.threshold = threshold

    def _flagged(self, job, now) -> np.ndarray:
        return self.predictor.supernode_probabilities(now, job.walltime) >= self.threshold

    def choose(self, table, job, candidate_ids, words, now):
        """The least-flagged candidate partitions, then MFP among them."""
        flagged = self._flagged(job, now)
        counts = np.array([np.count_nonzero(flagged[table.members[i]]) for i in candidate_ids])
        best = candidate_ids[counts == counts.min()]
        return MFP.choose(table, job, best, words, now)

    def choose_nodes(self, free_nodes, job, now):
        """Unflagged free nodes first, then flagged ones, lowest ids first within each."""
        flagged = self._flagged(job, now)[free_nodes]
        order = np.concatenate([free_nodes[~flagged], free_nodes[flagged]])
        return np.sort(order[: job.partition_size])
