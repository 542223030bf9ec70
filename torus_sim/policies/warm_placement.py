"""A placement that prefers nodes that are on: the fewest switched-off midplanes (torus) or on nodes first (cluster).

With idle nodes switched off (``idle_off_after``) a job given an off node waits for it to boot. This
placement gives each job the free partition with the fewest switched-off midplanes (MFP among those,
BGL-FAULT §5.1), and on a cluster the free nodes that are on before the off ones (lowest ids within
each): a job boots only when the on nodes cannot hold it, and Krevat's repacking moves jobs onto on
midplanes first. Without switched-off nodes it is MFP (torus) and the lowest free ids (cluster).

References:
    BGL-FAULT §5.1 (MFP), §5.2 (placement as the scheduler's extension point); SLURM's power saving
    (the scheduler prefers powered-up nodes); issue 45 §1.
"""

from __future__ import annotations

import numpy as np

from torus_sim.core.job import Job
from torus_sim.machine.partition_table import PartitionTable
from torus_sim.policies.placement import PLACEMENTS, PlacementPolicy

__all__ = ["WarmPlacement"]


class WarmPlacement(PlacementPolicy):
    """Fewest switched-off nodes first, then MFP (torus) or the lowest ids (cluster).

    Attributes:
        power_states: the run's :class:`~torus_sim.engine.power_states.NodePowerStates` (read only), set
            by the policy's ``attach`` when idle nodes are switched off; None otherwise.
    """

    name = "warm"
    uses_power_states = True  # Policy.attach hands it the run's power states

    def __init__(self) -> None:
        self.power_states = None

    def choose(self, table: PartitionTable, job: Job, candidate_ids: np.ndarray, words: np.ndarray, now: float) -> int:
        """The candidate with the fewest switched-off supernodes; MFP's choice among those tied.

        Args:
            table: the torus's partition table.
            job: the job to place.
            candidate_ids: free partitions of its size, int64 ``(C,)``.
            words: packed blocked supernodes.
            now: seconds.

        Returns:
            One of ``candidate_ids``.
        """
        if len(candidate_ids) > 1 and self.power_states is not None:
            off = self.power_states.off(now)
            if off.any():
                counts = np.array([np.count_nonzero(off[table.members[int(pid)]]) for pid in candidate_ids])
                candidate_ids = candidate_ids[counts == counts.min()]
        if len(candidate_ids) == 1:
            return int(candidate_ids[0])
        return int(candidate_ids[table.mfp_choice(candidate_ids, words)])

    def choose_nodes(self, free_nodes: np.ndarray, job: Job, now: float) -> np.ndarray:
        """The free nodes that are on (lowest ids first), then the switched-off ones.

        Args:
            free_nodes: free node ids, ascending, int64 ``(F,)``.
            job: the job (``partition_size`` nodes).
            now: seconds.

        Returns:
            int64 ``(size,)``.
        """
        size = job.partition_size
        if self.power_states is None:
            return free_nodes[:size]
        off = self.power_states.off(now)[free_nodes]
        if not off[:size].any():
            return free_nodes[:size]
        return free_nodes[np.argsort(off, kind="stable")[:size]]


PLACEMENTS.register("warm", WarmPlacement)
