"""RIGID §5 and MOLDABLE §5 / Table 1 on reduced runs (full sizes: docs/rigid, docs/moldable).

Reduced: RIGID 3 sets x 10 scenarios (paper: 30 x 1000); MOLDABLE 2 sets x 8 scenarios
(paper: 30 x 100). Job sets and scenarios come from the same seeds as the full runs.
"""

from __future__ import annotations

import pandas as pd
import pytest

from torus_sim.experiments.batch import run_set

MODELS = ["roofline", "communication", "amdahl", "mix-low-com", "mix", "power"]
# MOLDABLE Table 1, expected ratios (LPT)
PAPER_LPA = dict(zip(MODELS, [1.057, 1.312, 1.961, 1.896, 1.867, 1.861], strict=True))
PAPER_MINTIME = dict(zip(MODELS, [1.057, 2.044, 15.567, 2.810, 2.704, 20.386], strict=True))
PAPER_BATCH = dict(zip(MODELS, [1.158, 1.434, 1.529, 1.548, 1.571, 1.549], strict=True))


@pytest.fixture(scope="module")
def rigid() -> pd.DataFrame:
    grid = {
        "jobs": [100],
        "processors": [10000],
        "mean_failure_probability": [0.3],
        "heuristic": ["R-LIST-0", "R-LIST-1", "R-LIST-Q", "R-SHELF-B", "R-SHELF-NB", "R-SHELFFILL-B", "R-SHELFFILL-NB"],
        "priority": ["LPT", "SPT", "HPA", "LPA", "LA", "SA", "RANDOM"],
    }
    rows = [row for index in range(3) for row in run_set("rigid", grid, 10, 2020, index)]
    return pd.DataFrame(rows).groupby(["heuristic", "priority"]).mean_ratio.mean().unstack()


@pytest.fixture(scope="module")
def moldable() -> pd.DataFrame:
    grid = {
        "jobs": [500],
        "processors": [7500],
        "error_rate": [1e-7],
        "model": MODELS,
        "algorithm": ["LPA", "BATCH", "MINTIME", "MINAREA"],
        "priority": ["LPT"],
    }
    rows = [row for index in range(2) for row in run_set("moldable", grid, 8, 2021, index)]
    return pd.DataFrame(rows).groupby(["algorithm", "model"]).mean_ratio.mean().unstack()


def test_rigid_lpt_and_la_are_the_best_priorities_for_list_heuristics(rigid):
    # RIGID §5.3: "LA and LPT are the two best priority rules for all heuristics"
    for heuristic in ["R-LIST-0", "R-LIST-1", "R-LIST-Q"]:
        best_two = set(rigid.loc[heuristic].nsmallest(2).index)
        assert best_two == {"LPT", "LA"}, rigid.loc[heuristic]


def test_rigid_greedy_is_the_best_list_heuristic_with_la(rigid):
    # RIGID §5.3 / Fig. 5(f): R-LIST-0 with LA is the best; R-LIST-Q suffers most from failures
    assert rigid.loc["R-LIST-0", "LA"] <= rigid.loc["R-LIST-1", "LA"] < rigid.loc["R-LIST-Q", "LA"]


def test_rigid_shelffill_improves_on_shelf(rigid):
    # RIGID §5.2 (measured with LPT): R-SHELFFILL-B (NB) improves on R-SHELF-B (NB). Filling is not better
    # in every scenario (a refilled job can change the next shelves), so per rule only on average.
    for fill, shelf in [("R-SHELFFILL-B", "R-SHELF-B"), ("R-SHELFFILL-NB", "R-SHELF-NB")]:
        assert rigid.loc[fill, "LPT"] <= rigid.loc[shelf, "LPT"]
        assert rigid.loc[fill].mean() < rigid.loc[shelf].mean()


def test_rigid_heuristics_with_lpt_stay_within_one_point_four_of_the_bound(rigid):
    # RIGID §5.2-5.3: the best shelf heuristic peaks at 1.2; every list heuristic stays near 1
    assert rigid["LPT"].max() < 1.4
    assert rigid.loc[["R-LIST-0", "R-LIST-1", "R-LIST-Q"], ["LPT", "LA"]].to_numpy().max() < 1.15


@pytest.mark.parametrize("model", MODELS)
def test_moldable_lpa_expected_ratio_is_near_table_1(moldable, model):
    # LPA's allocation is local, so the default setting is representative of Table 1's mean:
    # full runs are within 3% (docs/moldable); 2 x 8 reduced runs within 12%.
    assert moldable.loc["LPA", model] == pytest.approx(PAPER_LPA[model], rel=0.12)


@pytest.mark.parametrize("model", MODELS)
def test_moldable_batch_expected_ratio_is_near_table_1(moldable, model):
    # MT-ALLOTMENT as the authors' simulator runs it (steps, area slack 1.1): full runs within 5% of
    # Table 1 on every model (docs/moldable); 2 x 8 reduced runs within 8%. The tight variant
    # (allotment = exact, area_slack = 1) was 39% above on communication.
    assert moldable.loc["BATCH", model] == pytest.approx(PAPER_BATCH[model], rel=0.08)


@pytest.mark.parametrize("model", ["roofline", "communication", "amdahl", "power"])
def test_moldable_mintime_expected_ratio_is_near_table_1(moldable, model):
    assert moldable.loc["MINTIME", model] == pytest.approx(PAPER_MINTIME[model], rel=0.12)


def test_moldable_orderings_of_table_1(moldable):
    # roofline: LPA = MINTIME (MOLDABLE §5.4); LPA and BATCH beat the baselines on Amdahl and power
    assert moldable.loc["LPA", "roofline"] == pytest.approx(moldable.loc["MINTIME", "roofline"], rel=1e-9)
    for model in ["amdahl", "power"]:
        assert max(moldable.loc["LPA", model], moldable.loc["BATCH", model]) < moldable.loc["MINTIME", model] / 4
    # "LPA performs the best for the roofline and communication models while BATCH performs the best
    # for the other models" (MOLDABLE App. D, Fig. 5)
    for model in ["roofline", "communication"]:
        assert moldable.loc["LPA", model] < moldable.loc["BATCH", model]
    for model in ["amdahl", "mix-low-com", "mix", "power"]:
        assert moldable.loc["BATCH", model] < moldable.loc["LPA", model]
    # MINAREA is the worst everywhere but power
    for model in ["roofline", "communication", "amdahl", "mix-low-com", "mix"]:
        assert moldable.loc["MINAREA", model] == moldable[model].max() and moldable.loc["MINAREA", model] > 9
