"""Placement policies: which free partition a job gets.

A placement policy is the extension point of the fault-aware schedulers (BGL-FAULT §5.2): it
gets the free partitions of the job's size and returns one. Subclasses override
:meth:`PlacementPolicy.choose` and register with ``PLACEMENTS.register``.
"""

from __future__ import annotations

import numpy as np

from torus_sim.job import Job
from torus_sim.partitions import PartitionTable
from torus_sim.registry import Registry

__all__ = ["PLACEMENTS", "MfpPlacement", "PlacementPolicy"]


class PlacementPolicy:
    """Base class: choose one partition among free candidates.

    Override:
        choose(table, job, candidate_ids, words, now) -> int
        and, for a policy that uses a predictor or randomness, attach / observe_failure.
    """

    name = "base"
    predictor = None

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


class MfpPlacement(PlacementPolicy):
    """Krevat's maximal-free-partition heuristic: keep the largest MFP after placing the job.

    Ties go to the lowest partition id (largest shape order, then base), so runs are
    deterministic.

    References:
        BGL-FAULT §5.1 and Fig. 1 (MFP heuristic); Krevat, Castaños, Moreira, "Job scheduling
        for the BlueGene/L system", JSSPP 2002.
    """

    name = "mfp"

    def choose(self, table: PartitionTable, job: Job, candidate_ids: np.ndarray, words: np.ndarray, now: float) -> int:  # noqa: D102
        if len(candidate_ids) == 1:
            return int(candidate_ids[0])
        remaining = table.mfp_after(candidate_ids, words)
        return int(candidate_ids[int(np.argmax(remaining))])


PLACEMENTS: Registry[PlacementPolicy] = Registry("placement")
"""Placement policies by name: ``PLACEMENTS.register(name, factory)``, ``PLACEMENTS.make(name)``."""
PLACEMENTS.register("mfp", MfpPlacement)
