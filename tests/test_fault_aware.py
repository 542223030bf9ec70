"""Predictors (BGL-FAULT §4) and the balancing / tie-break placements (§5.2)."""

import numpy as np
import pytest

from failure_logs.events import FailureLog
from predictors import HistoryPredictor, NullPredictor, OracleAccuracyPredictor, OracleConfidencePredictor
from torus_sim.core.errors import ConfigurationError
from torus_sim.machine.partition_table import PartitionTable
from torus_sim.policies.fault_aware import BalancingPlacement, TieBreakPlacement
from torus_sim.policies.krevat import KrevatScheduler
from torus_sim.policies.placement import MfpPlacement

from .conftest import make_workload, ring, torus_model


def log_of(*rows):
    return FailureLog(np.array([r[0] for r in rows], dtype=float), np.array([r[1] for r in rows]), np.full(len(rows), np.nan))


def attached(predictor, log, n=8, seed=0):
    predictor.attach(log, np.random.default_rng(seed), n)
    return predictor


def ring_of_8_with_supernode_3_busy():
    """(table, packed busy supernodes, a 2-supernode job, the free 2-boxes): {4,5} and {1,2} leave MFP 5, {5,6} 4."""
    table = PartitionTable(ring(8))
    blocked = np.zeros(8, dtype=bool)
    blocked[3] = True
    words = table.pack(blocked)
    job = make_workload([(1, 0, 100, 100, 2)], dims=(1, 1, 8)).jobs[0]
    return table, words, job, table.free_ids_of_size(words, 2)


def test_confidence_predictor_gives_a_to_supernodes_failing_in_the_window_and_zero_elsewhere():
    predictor = attached(OracleConfidencePredictor(confidence=0.3), log_of((100, 2), (250, 5)))
    assert predictor.supernode_probabilities(50, 100).tolist() == [0, 0, 0.3, 0, 0, 0, 0, 0]
    assert predictor.supernode_probabilities(100, 150).tolist() == [0, 0, 0.3, 0, 0, 0, 0, 0]  # [100, 250): 250 excluded
    assert predictor.supernode_probabilities(101, 150).tolist() == [0, 0, 0, 0, 0, 0.3, 0, 0]
    assert predictor.partition_failure_probability([2, 5], 0, 300) == pytest.approx(1 - 0.7 * 0.7)


def test_accuracy_predictor_detects_every_failure_at_a_1_none_at_a_0_and_never_raises_false_alarms():
    log = log_of(*[(10 * i, i % 8) for i in range(1, 200)])
    sure = attached(OracleAccuracyPredictor(accuracy=1.0), log)
    blind = attached(OracleAccuracyPredictor(accuracy=0.0), log)
    truth = attached(OracleConfidencePredictor(confidence=1.0), log)
    for start in range(0, 2000, 37):
        assert np.array_equal(sure.supernode_alarms(start, 25), truth.supernode_probabilities(start, 25) == 1)
        assert not blind.supernode_alarms(start, 25).any()


def test_accuracy_predictor_detects_about_a_fraction_a_of_failures():
    log = log_of(*[(float(i), i % 128) for i in range(10000)])
    predictor = attached(OracleAccuracyPredictor(accuracy=0.3), log, n=128, seed=4)
    detected = sum(predictor.supernode_alarms(float(i), 0.5)[i % 128] for i in range(0, 10000, 7))
    assert detected / len(range(0, 10000, 7)) == pytest.approx(0.3, abs=0.05)


def test_false_positive_rate_raises_alarms_on_healthy_supernodes():
    predictor = attached(OracleAccuracyPredictor(accuracy=0.0, false_positive_rate=0.25), log_of((5, 0)), n=128, seed=1)
    rate = np.mean([predictor.supernode_alarms(1000.0 + i, 10).mean() for i in range(200)])
    assert rate == pytest.approx(0.25, abs=0.02)


def test_history_predictor_learns_higher_rates_for_supernodes_that_failed_more():
    predictor = attached(HistoryPredictor(prior_strength=1.0), FailureLog.empty(), n=4)
    assert not predictor.supernode_probabilities(100, 50).any()  # nothing seen yet
    for at, node in [(10, 1), (20, 1), (30, 1), (40, 2)]:
        predictor.observe_failure(at, node)
    p = predictor.supernode_probabilities(100, 50)
    assert p[1] > p[2] > p[0] == p[3] > 0
    # 4 failures on 4 supernodes in 100 s: machine rate 0.01/s; supernode 1: (3 + 1) / (100 + 100) = 0.02/s
    assert predictor.rates(100)[1] == pytest.approx(0.02)


@pytest.mark.parametrize(
    "build",
    [
        lambda: OracleConfidencePredictor(1.2),
        lambda: OracleAccuracyPredictor(-0.1),
        lambda: OracleAccuracyPredictor(0.5, 2.0),
        lambda: HistoryPredictor(0),
    ],
)
def test_predictor_parameters_outside_their_domain_are_refused(build):
    with pytest.raises(ConfigurationError):
        build()


def test_balancing_loss_is_mfp_loss_plus_failure_probability_times_job_size():
    torus = ring(8)
    table = PartitionTable(torus)
    predictor = attached(OracleConfidencePredictor(confidence=0.5), log_of((50, 0), (50, 1)), n=8)
    placement = BalancingPlacement(predictor)
    job = make_workload([(1, 0, 100, 100, 2)], dims=(1, 1, 8)).jobs[0]
    words = table.pack(np.zeros(8, dtype=bool))
    candidates = table.free_ids_of_size(words, 2)
    loss, after = placement.expected_loss(table, job, candidates, words, now=0.0)
    for pid, l_total, mfp_left in zip(candidates, loss, after, strict=True):
        members = set(table.members[pid].tolist())
        p_fail = 1 - 0.5 ** len(members & {0, 1})
        assert l_total == pytest.approx((8 - mfp_left) + p_fail * 2)
    chosen = placement.choose(table, job, candidates, words, 0.0)
    assert not set(table.members[chosen].tolist()) & {0, 1}
    assert MfpPlacement().choose(table, job, candidates, words, 0.0) != chosen  # the MFP heuristic alone takes {0, 1}


@pytest.mark.parametrize(("confidence", "expected"), [(0.3, {4, 5}), (0.49, {4, 5}), (0.51, {5, 6}), (0.9, {5, 6})])
def test_balancing_trades_one_supernode_of_mfp_for_stability_only_when_p_f_exceeds_one_half(confidence, expected):
    # BGL-FAULT §5.2.1 (Fig. 2 a/b): "the choice ... [is] decided based on whether P_f is greater than 0.5".
    # Ring of 8 with supernode 3 busy: a 2-job in {4,5} or {1,2} leaves MFP 5 (L_MFP = 2); in {5,6} it leaves 4
    # (L_MFP = 3). Supernodes 4 and 1 will fail, so the MFP-best boxes have P_f = a and E_loss = 2 + 2a,
    # against 3 for the stable {5,6}.
    table, words, job, candidates = ring_of_8_with_supernode_3_busy()
    placement = BalancingPlacement(attached(OracleConfidencePredictor(confidence), log_of((50, 4), (50, 1)), n=8))
    chosen = set(table.members[placement.choose(table, job, candidates, words, 0.0)].tolist())
    assert chosen == expected or (expected == {4, 5} and chosen == {1, 2})


def test_tiebreak_prefers_a_tied_partition_without_alarms_and_chooses_at_random_when_all_ring():
    torus = ring(8)
    table = PartitionTable(torus)
    words = table.pack(np.zeros(8, dtype=bool))
    job = make_workload([(1, 0, 100, 100, 1)], dims=(1, 1, 8)).jobs[0]
    candidates = table.free_ids_of_size(words, 1)  # every single supernode leaves MFP 7: all tie
    placement = TieBreakPlacement(attached(OracleAccuracyPredictor(1.0), log_of((10, 0), (10, 1)), n=8))
    placement.attach(log_of((10, 0), (10, 1)), np.random.default_rng(0), 8)
    assert table.members[placement.choose(table, job, candidates, words, 0.0)].tolist() == [2]
    everywhere = log_of(*[(10, n) for n in range(8)])
    picks = set()
    for seed in range(20):
        doomed = TieBreakPlacement(OracleAccuracyPredictor(1.0))
        doomed.attach(everywhere, np.random.default_rng(seed), 8)
        picks.add(int(table.members[doomed.choose(table, job, candidates, words, 0.0)][0]))
    assert len(picks) > 1


def test_balancing_scheduler_avoids_a_partition_that_will_fail_and_saves_the_job():
    # Ring of 4, a 2-job; supernode 0 fails at t=50. Krevat takes {0, 1} and loses 50 s; balancing takes {2, 3}.
    workload = make_workload([(1, 0, 100, 100, 2)], dims=(1, 1, 4))
    failures = FailureLog(np.array([50.0]), np.array([0]), np.array([np.nan]))
    krevat = torus_model(workload, failures, torus=ring(4)).run()
    balancing = torus_model(
        workload, failures, KrevatScheduler(BalancingPlacement(OracleConfidencePredictor(0.1))), torus=ring(4)
    ).run()
    tiebreak = torus_model(
        workload, failures, KrevatScheduler(TieBreakPlacement(OracleAccuracyPredictor(1.0))), torus=ring(4)
    ).run()
    assert krevat.jobs[["started_at", "finished_at", "kills"]].values.tolist() == [[50, 150, 1]]
    assert balancing.jobs[["started_at", "finished_at", "kills"]].values.tolist() == [[0, 100, 0]]
    assert tiebreak.jobs[["started_at", "finished_at", "kills"]].values.tolist() == [[0, 100, 0]]


def test_null_predictor_makes_balancing_identical_to_krevat():
    rows = [(i, 13.0 * i, 50.0 + 7 * i, 60.0 + 7 * i, 1 + (5 * i) % 16) for i in range(1, 40)]
    failures = FailureLog(np.array([30.0, 90.0, 200.0]), np.array([1, 9, 14]), np.full(3, np.nan))
    dims = (2, 2, 4)
    from torus_sim.machine.topology import Torus

    krevat = torus_model(make_workload(rows, dims), failures, torus=Torus(dims)).run()
    balancing = torus_model(
        make_workload(rows, dims), failures, KrevatScheduler(BalancingPlacement(NullPredictor())), torus=Torus(dims)
    ).run()
    assert krevat.jobs.equals(balancing.jobs)


@pytest.mark.parametrize(
    ("candidates", "all_alarmed", "expected", "counts"),
    [
        ("best-mfp", "random", [{4, 5}, {1, 2}], (1, 1, 1, 1)),  # both best boxes ring: a random one of them
        ("best-mfp", "mfp", [{4, 5}, {1, 2}], (1, 1, 1, 0)),  # ... or Krevat's own
        ("all", "random", [{5, 6}], (1, 1, 0, 1)),  # alarm first: the quiet box keeping the largest MFP (4)
    ],
)
def test_tiebreak_readings_and_their_counts(candidates, all_alarmed, expected, counts):
    # Ring of 8 with supernode 3 busy, a 2-job. {4,5} and {1,2} leave MFP 5, {5,6} leaves 4, {6,7} and {7,0} 3.
    # Supernodes 4 and 1 will fail and the predictor (a = 1) says so: both MFP-best boxes ring.
    table, words, job, candidates_ids = ring_of_8_with_supernode_3_busy()
    placement = TieBreakPlacement(OracleAccuracyPredictor(1.0), candidates, all_alarmed)
    placement.attach(log_of((50, 4), (50, 1)), np.random.default_rng(0), 8)
    krevat = MfpPlacement().choose(table, job, candidates_ids, words, 0.0)
    chosen = placement.choose(table, job, candidates_ids, words, 0.0)
    assert set(table.members[chosen].tolist()) in expected
    if all_alarmed == "mfp":
        assert chosen == krevat
    diagnostics = placement.diagnostics
    assert (diagnostics["tie_placements"], diagnostics["tie_ties"], diagnostics["tie_alarmed"]) == (1, 1, 1)
    assert (diagnostics["tie_all_alarmed"], diagnostics["tie_changed"]) == (counts[2], int(chosen != krevat))
    with pytest.raises(ConfigurationError, match="tie-break candidates"):
        TieBreakPlacement(OracleAccuracyPredictor(1.0), "some")


def test_tiebreak_counts_reach_the_run_summary():
    from torus_sim.experiments.runner import run
    from torus_sim.experiments.scenario import Scenario

    summary = run(Scenario.make(policy="tiebreak", accuracy=1.0, max_jobs=300, failures="synthetic:400", seed=1)).summary
    assert summary["tie_placements"] >= summary["tie_alarmed"] >= summary["tie_all_alarmed"]
    assert summary["tie_placements"] >= summary["tie_ties"] > 0 and summary["tie_changed"] <= summary["tie_alarmed"]
    assert "tie_placements" not in run(Scenario.make(policy="krevat", max_jobs=50)).summary
