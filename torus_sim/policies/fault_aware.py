"""The fault-aware placements of BGL-FAULT §5.2: balancing and tie-break.

Both keep Krevat's FCFS, backfilling and migration (:class:`~torus_sim.policies.krevat.KrevatScheduler`)
and change only which free partition a job gets, using a failure predictor over the window
``[now, now + walltime)`` (the job's estimated runtime).
"""

from __future__ import annotations

import numpy as np

from predictors.base import FailurePredictor
from torus_sim.core.errors import ConfigurationError
from torus_sim.core.job import Job
from torus_sim.machine.partition_table import PartitionTable
from torus_sim.policies.placement import PLACEMENTS, PlacementPolicy

__all__ = ["PF_FORMS", "TIE_ALL_ALARMED", "TIE_CANDIDATES", "TIE_DIAGNOSTICS", "BalancingPlacement", "TieBreakPlacement"]

PF_FORMS = ("product", "max")
"""How supernode probabilities combine into P_f: ``product`` = 1 - prod(1 - p_n) (BGL-FAULT
§5.2.1), ``max`` = max p_n (BGL-FAULT §4.1)."""


def _lowest_id_of_best(candidate_ids: np.ndarray, mfp_after: np.ndarray, mask: np.ndarray) -> int:
    """Among candidates where ``mask`` holds, the one keeping the largest MFP, then the lowest id."""
    ids, kept = candidate_ids[mask], mfp_after[mask]
    return int(ids[int(np.argmax(kept))])


class BalancingPlacement(PlacementPolicy):
    """BGL-FAULT's balancing heuristic: minimize E_loss = L_MFP + L_PF.

    For each candidate partition P: L_MFP = MFP before - MFP after placing the job in P;
    P_f = 1 - prod over n in P of (1 - p_f_n) with p_f_n from the predictor over the job's
    walltime; L_PF = P_f x s_j. The candidate with the smallest E_loss wins; ties go to the
    larger MFP after placement, then the lowest partition id.

    Args:
        predictor: gives p_f_n (the oracle-confidence predictor in the paper).
        pf_form: ``product`` (§5.2.1) or ``max`` (§4.1).

    Raises:
        ConfigurationError: unknown ``pf_form``.

    References:
        BGL-FAULT §5.2.1 (E_loss = L_MFP + L_PF), §4.1.
    """

    name = "balancing"

    def __init__(self, predictor: FailurePredictor, pf_form: str = "product") -> None:
        if pf_form not in PF_FORMS:
            raise ConfigurationError(f"P_f form must be one of {PF_FORMS}, got {pf_form!r}")
        self.predictor = predictor
        self.pf_form = pf_form

    def expected_loss(self, table: PartitionTable, job: Job, candidate_ids: np.ndarray, words: np.ndarray, now: float):
        """E_loss of every candidate and the MFP each leaves.

        Args:
            table: the partition table.
            job: the job to place (``size`` is s_j, ``walltime`` the window).
            candidate_ids: free partitions of the job's partition size, int ``(C,)``.
            words: packed blocked supernodes.
            now: seconds.

        Returns:
            ``(e_loss, mfp_after)``, float64 ``(C,)`` and int64 ``(C,)``.
        """
        mfp_after = table.mfp_after(candidate_ids, words)
        loss_mfp = table.mfp(words) - mfp_after
        probabilities = self.predictor.supernode_probabilities(now, job.walltime)
        if not probabilities.any():
            return loss_mfp.astype(np.float64), mfp_after
        member_p = probabilities[table.member_matrix(candidate_ids)]
        if self.pf_form == "product":
            p_fail = 1.0 - np.prod(1.0 - member_p, axis=1)
        else:
            p_fail = member_p.max(axis=1)
        return loss_mfp + p_fail * job.size, mfp_after

    def choose(self, table, job, candidate_ids, words, now):  # noqa: D102
        if len(candidate_ids) == 1:
            return int(candidate_ids[0])
        loss, mfp_after = self.expected_loss(table, job, candidate_ids, words, now)
        return _lowest_id_of_best(candidate_ids, mfp_after, loss <= loss.min() + 1e-12)

    def choose_nodes(self, free_nodes, job, now):
        """On a cluster: the free nodes least likely to fail within the walltime (lowest ids on ties).

        There is no fragmentation on a cluster (L_MFP is the same for every choice), and P_f, in
        either form, is smallest for the nodes with the smallest p_n: E_loss = P_f x s_j is least.
        """
        probabilities = self.predictor.supernode_probabilities(now, job.walltime)[free_nodes]
        order = np.argsort(probabilities, kind="stable")[: job.partition_size]
        return np.sort(free_nodes[order])


TIE_CANDIDATES = ("best-mfp", "all")
"""Which partitions the tie-break alarm decides among: ``best-mfp`` (those leaving the largest MFP;
"a tie ... with same MFP", BGL-FAULT §5.2.2, Fig. 2(c-d)) or ``all`` (every free partition of the
job's size; "two partitions of the same size", §4.2 and §7.3), the MFP then choosing among the
partitions without an alarm."""

TIE_ALL_ALARMED = ("random", "mfp")
"""What the tie-break does when every candidate rings: ``random`` ("an arbitrary choice", §4.2)
or ``mfp`` (Krevat's choice, as if there were no predictor)."""

TIE_DIAGNOSTICS = ("tie_placements", "tie_ties", "tie_alarmed", "tie_all_alarmed", "tie_changed")
"""The tie-break's counts: placements it decided (starts and the targets of a migration's repack),
those with more than one candidate to decide among, those where a candidate rang, where every
candidate rang, and where its choice differs from Krevat's MFP choice in the same state."""


class TieBreakPlacement(PlacementPolicy):
    """BGL-FAULT's tie-break heuristic: among the best-MFP partitions, prefer one not predicted to fail.

    The candidates that leave the largest MFP tie; among them the lowest-id partition with no
    alarm on any of its supernodes wins. If every tied candidate is predicted to fail, one of
    them is chosen at random with the run's generator (BGL-FAULT: "an arbitrary choice").
    The two other readings of the text are options: ``candidates="all"`` asks the alarm about every
    free partition of the job's size and lets the MFP choose among the quiet ones;
    ``all_alarmed="mfp"`` keeps Krevat's choice when every candidate rings.

    Args:
        predictor: gives boolean alarms (the oracle-accuracy predictor in the paper).
        candidates: one of :data:`TIE_CANDIDATES`.
        all_alarmed: one of :data:`TIE_ALL_ALARMED`.

    Attributes:
        diagnostics: the counts of :data:`TIE_DIAGNOSTICS` (torus placements with one or more candidates).

    Raises:
        ConfigurationError: an unknown reading.

    References:
        BGL-FAULT §5.2.2, §4.2, §7.3.
    """

    name = "tiebreak"

    def __init__(self, predictor: FailurePredictor, candidates: str = "best-mfp", all_alarmed: str = "random") -> None:
        if candidates not in TIE_CANDIDATES or all_alarmed not in TIE_ALL_ALARMED:
            raise ConfigurationError(
                f"tie-break candidates must be one of {TIE_CANDIDATES} and all_alarmed one of {TIE_ALL_ALARMED}, "
                f"got {candidates!r} and {all_alarmed!r}"
            )
        self.predictor = predictor
        self.candidates = candidates
        self.all_alarmed = all_alarmed
        self.rng: np.random.Generator | None = None
        self.diagnostics = dict.fromkeys(TIE_DIAGNOSTICS, 0)

    def attach(self, log, rng, n_supernodes):  # noqa: D102
        super().attach(log, rng, n_supernodes)
        self.rng = rng

    def choose(self, table, job, candidate_ids, words, now):  # noqa: D102
        counts = self.diagnostics
        counts["tie_placements"] += 1
        mfp_after = table.mfp_after(candidate_ids, words) if len(candidate_ids) > 1 else np.zeros(1, dtype=np.int64)
        best = mfp_after == mfp_after.max()
        krevat = int(candidate_ids[int(np.argmax(mfp_after))])
        pool = best if self.candidates == "best-mfp" else np.ones(len(candidate_ids), dtype=bool)
        if pool.sum() > 1:
            counts["tie_ties"] += 1
        alarms = self.predictor.supernode_alarms(now, job.walltime)
        if not alarms.any():
            return krevat
        doomed = np.zeros(len(candidate_ids), dtype=bool)
        doomed[pool] = table.hits(candidate_ids[pool], table.pack(alarms))  # only the candidates in play
        if doomed.any():
            counts["tie_alarmed"] += 1
        quiet = pool & ~doomed
        if quiet.any():
            chosen = _lowest_id_of_best(candidate_ids, mfp_after, quiet)
        else:
            counts["tie_all_alarmed"] += 1
            if self.all_alarmed == "mfp":
                return krevat
            tied = candidate_ids[pool]
            chosen = int(tied[self.rng.integers(len(tied))])
        counts["tie_changed"] += chosen != krevat
        return chosen

    def choose_nodes(self, free_nodes, job, now):
        """On a cluster every choice ties on the MFP: the lowest free nodes with no alarm, if enough.

        When fewer than the job's size are free of alarms, every choice holds a node predicted to
        fail, and one is drawn at random with the run's generator (BGL-FAULT: "an arbitrary choice").
        """
        alarms = self.predictor.supernode_alarms(now, job.walltime)[free_nodes]
        quiet = free_nodes[~alarms]
        if len(quiet) >= job.partition_size:
            return quiet[: job.partition_size]
        return np.sort(self.rng.choice(free_nodes, size=job.partition_size, replace=False))


def _balancing(predictor: FailurePredictor, pf_form: str = "product") -> BalancingPlacement:
    """The balancing placement with the scenario's P_f form (BGL-FAULT §5.2.1)."""
    return BalancingPlacement(predictor, pf_form)


def _tiebreak(
    predictor: FailurePredictor, tie_candidates: str = "best-mfp", tie_all_alarmed: str = "random"
) -> TieBreakPlacement:
    """The tie-break placement with the scenario's candidate and all-alarmed rules (BGL-FAULT §5.2.2)."""
    return TieBreakPlacement(predictor, tie_candidates, tie_all_alarmed)


# the scenario fields each reads, by parameter (offered by the wiring; a [placement.params] value overrides)
_balancing.from_scenario = {"pf_form": "pf_form"}
_tiebreak.from_scenario = {"tie_candidates": "tie_candidates", "tie_all_alarmed": "tie_all_alarmed"}
_balancing.default_predictor = "oracle-confidence"  # BGL-FAULT §4.1: the balancing scheduler's predictor
_tiebreak.default_predictor = "oracle-accuracy"  # BGL-FAULT §4.2: the tie-break scheduler's

PLACEMENTS.register("balancing", _balancing)
PLACEMENTS.register("tiebreak", _tiebreak)
