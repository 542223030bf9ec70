"""Non-oracle predictors on real failures: recency weighting, window-by-window scoring, LANL vs its FTA form."""

from __future__ import annotations

import math

import numpy as np
import pytest

from failure_logs.events import FailureLog
from failure_logs.lanl import read_lanl
from predictors import PREDICTORS, HistoryPredictor
from predictors.evaluation import WEEK, score_predictor, summarize_scores
from torus_sim.core.errors import ConfigurationError
from torus_sim.experiments.runner import run
from torus_sim.experiments.scenario import Scenario

from .test_input_errors import LANL, SDSC, lanl_as_fta


def test_recency_weights_each_past_failure_by_its_half_life_by_hand():
    predictor = HistoryPredictor(prior_strength=1.0, half_life=100.0)
    predictor.attach(FailureLog.empty(), np.random.default_rng(0), 2)
    predictor.observe_failure(0.0, 0)
    predictor.observe_failure(100.0, 1)
    # at t = 200: supernode 0's failure is 200 s old (weight 1/4), supernode 1's 100 s (weight 1/2)
    tau = 100.0 / math.log(2.0)
    exposure = tau * (1 - math.exp(-200.0 / tau))
    machine = 0.75 / (2 * exposure)
    rates = predictor.rates(200.0)
    assert rates[0] == pytest.approx((0.25 + 1) / (exposure + 1 / machine))
    assert rates[1] == pytest.approx((0.5 + 1) / (exposure + 1 / machine))
    # without a half-life both count 1: equal rates (the plain history predictor)
    plain = HistoryPredictor(prior_strength=1.0)
    plain.attach(FailureLog.empty(), np.random.default_rng(0), 2)
    plain.observe_failure(0.0, 0)
    plain.observe_failure(100.0, 1)
    assert plain.rates(200.0)[0] == plain.rates(200.0)[1] == pytest.approx(2 / (200 + 200))


def test_the_recency_predictor_is_registered_and_refuses_a_non_positive_half_life():
    predictor = PREDICTORS.make("recency")
    assert predictor.name == "recency" and predictor.half_life == 90 * 86400
    with pytest.raises(ConfigurationError, match="half-life"):
        HistoryPredictor(half_life=0)


def test_scores_of_a_hand_made_log():
    # supernode 1 fails in weeks 0, 1 and 2; supernode 3 once in week 2; N = 4
    log = FailureLog(np.array([10.0, WEEK + 10, 2 * WEEK + 10, 2 * WEEK + 20]), np.array([1, 1, 1, 3]), np.full(4, np.nan))
    scores = score_predictor(HistoryPredictor(alarm_threshold=0.5), log, 4, start=0.0, end=3 * WEEK)
    assert scores["failing"].tolist() == [1, 1, 2]
    assert scores["alarms"].iloc[0] == 0 and math.isnan(scores["precision"].iloc[0])  # nothing seen at t = 0
    # from week 1 on, supernode 1 (2 failures in 2 weeks by week 2) ranks first: precision at k = 1 / 1, then 1 / 2
    assert scores["precision_at_k"].tolist()[1:] == [1.0, 0.5]
    # week 2: the failing supernodes 1 and 3 against 0 and 2: 1 ranks above both, 3 ties with both -> (2 + 1) / 4
    assert scores["auc"].iloc[2] == pytest.approx(0.75)
    summary = summarize_scores(scores, 4)
    assert summary["windows"] == 3 and summary["base_rate"] == pytest.approx(4 / 12)


def test_the_history_predictor_ranks_the_lanl_nodes_that_fail_next_far_above_chance():
    log = read_lanl(LANL, system=20, n_supernodes=128)
    history = summarize_scores(score_predictor(HistoryPredictor(origin=log.span[0]), log, 128), 128)
    assert history["windows"] == 195
    assert history["auc"] > 0.7  # measured 0.748
    assert history["precision_at_k"] > 2.5 * history["base_rate"]  # measured 0.212 vs 0.069
    assert 0.25 < history["precision"] < 0.4 and 0.1 < history["recall"] < 0.2  # measured 0.308, 0.139


def test_a_reduced_balancing_run_reads_the_same_with_the_lanl_csv_and_its_fta_form(tmp_path):
    fta = tmp_path / "lanl20.tab"
    lanl_as_fta(fta, systems=("19", "20"))
    common = dict(workload=str(SDSC), max_jobs=1500, policy="balancing", predictor="history", downtime="log")
    from_csv = run(Scenario.make("test", failures=str(LANL), **common))
    from_fta = run(Scenario.make("test", failures=str(fta), fta_system="20", fta_nodes=512, **common))
    assert from_csv.summary["failures"] == from_fta.summary["failures"] == 195  # the prefix's share of the 2,478
    for key in ("avg_bounded_slowdown", "avg_wait_time", "omega_util", "omega_lost", "job_kills"):
        assert from_csv.summary[key] == from_fta.summary[key], key
