"""Batch experiment files (RIGID / MOLDABLE): a tiny run through the CLI, resume, summaries, and bad files."""

from __future__ import annotations

import pandas as pd
import pytest

from torus_sim.core.errors import ConfigurationError
from torus_sim.experiments import expected_ratio_table, load_experiment
from torus_sim.interfaces.cli import main

TINY = """title = "tiny"
sets = 2
[platform]
platform = "cluster"
nodes = 2000
[workload]
workload = "rigid"
jobs = 12
[silent_errors]
scenarios = 3
[run]
seed = 5
[grid]
mean_failure_probability = [0.0, 0.5]
policy = ["R-LIST-0", "R-SHELFFILL-B"]
priority = ["LPT"]
[[figure]]
name = "ratio"
x = "mean_failure_probability"
series = "policy"
y = ["mean_ratio"]
"""


def test_a_tiny_rigid_experiment_writes_rows_summary_and_figure_then_resumes(tmp_path):
    spec = tmp_path / "tiny.toml"
    spec.write_text(TINY)
    out = tmp_path / "out"
    assert main(["sweep", str(spec), "--out", str(out), "--no-progress"]) == 0
    table = pd.read_csv(out / "results.csv")
    assert len(table) == 2 * 2 * 2 and set(table.scenarios) == {3} and set(table.job_set) == {0, 1}
    assert (table.mean_ratio >= 1).all() and (table.max_ratio >= table.mean_ratio).all()
    no_failures = table[table.mean_failure_probability == 0.0]
    assert (no_failures.mean_failures == 0).all()
    assert (out / "ratio.png").stat().st_size > 0
    summary = pd.read_csv(out / "summary.csv")
    assert {"mean_failure_probability", "policy", "expected", "maximum", "sets"} <= set(summary.columns)
    assert set(summary.sets) == {2}
    assert len(list((out / "runs").glob("*.json"))) == 8
    # a second run reuses the stored runs and gives the same table
    assert main(["sweep", str(spec), "--out", str(out), "--no-progress"]) == 0
    again = pd.read_csv(out / "results.csv")
    pd.testing.assert_frame_equal(again.drop(columns="wall_time"), table.drop(columns="wall_time"))


def test_every_heuristic_of_a_set_sees_the_same_job_set_and_scenarios(tmp_path):
    spec = tmp_path / "tiny.toml"
    spec.write_text(TINY)
    table = pd.read_csv(tmp_path / "results.csv") if (tmp_path / "results.csv").exists() else None
    assert table is None
    experiment = load_experiment(spec)
    from torus_sim.experiments.runner import batch_set

    sets = {}
    for point in experiment.points():
        scenario = experiment.scenario(point)
        batch = batch_set(scenario)
        key = (scenario.job_set, scenario.mean_failure_probability)
        found = ([job.runtime for job in batch.workload.jobs], batch.silent_errors.tolist())
        assert sets.setdefault(key, found) == found


def test_expected_ratio_is_the_mean_over_sets_and_maximum_the_max():
    table = pd.DataFrame({"workload": ["a", "a"], "set": [0, 1], "mean_ratio": [1.0, 2.0], "max_ratio": [1.5, 3.0]})
    summary = expected_ratio_table(table, ["workload"])
    assert summary.to_dict("records") == [{"workload": "a", "expected": 1.5, "maximum": 3.0, "sets": 2}]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('kind = "rigid"\n', "unknown key"),
        ('[grid]\npolicy = ["R-LIST-7"]\n', "unknown policy"),
        ('[workload]\nworkload = "moldable:amdhal"\n[platform]\nplatform = "cluster"\n', ""),
        ('[grid]\nalgorithm = ["LPA"]\n', "unknown key"),
        ("sets = -1\n", "sets: Input should be greater than or equal to 0"),
        ('[[figure]]\nname = "x"\nx = "model"\ny = ["mean_ratio"]\n', "not a run parameter"),
        ('[silent_errors]\nscenarios = "lots"\n', "scenarios"),
        ('[workload]\nmax_jobs = "lots"\n', r"\[workload\] max_jobs.*valid integer"),
    ],
)
def test_bad_scenario_files_are_refused_with_the_file_and_key_named(tmp_path, text, reason):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    if not reason:  # a speedup model name is checked when the job set is made
        from torus_sim.experiments.runner import run

        with pytest.raises(ConfigurationError, match="unknown speedup model"):
            run(load_experiment(path).scenario({}))
        return
    with pytest.raises(ConfigurationError, match=reason) as caught:
        load_experiment(path)
    assert str(path) in str(caught.value)


def test_summarize_counts_a_setting_shared_by_several_files_once(tmp_path):
    row = {"workload": "moldable:mix", "policy": "LPA", "priority": "LPT", "jobs": 500, "error_rate": 1e-7, "job_set": 0}
    default = {**row, "nodes": 7500, "mean_ratio": 1.0, "max_ratio": 1.2}
    varied = {**row, "nodes": 1000, "mean_ratio": 2.0, "max_ratio": 3.0}
    pd.DataFrame([default, varied]).to_csv(tmp_path / "a.csv", index=False)
    pd.DataFrame([default]).to_csv(tmp_path / "b.csv", index=False)
    out = tmp_path / "summary.csv"
    assert main(["summarize", str(tmp_path / "a.csv"), str(tmp_path / "b.csv"), "--out", str(out)]) == 0
    summary = pd.read_csv(out)
    assert summary[["expected", "maximum", "settings"]].to_dict("records") == [{"expected": 1.5, "maximum": 3.0, "settings": 2}]


def test_a_categorical_x_is_drawn_as_bars_with_a_log_scale_when_values_span_decades(tmp_path):
    from torus_sim.experiments import FigureSpec
    from torus_sim.outputs.figures import draw_figure

    table = pd.DataFrame(
        {"workload": ["mix", "mix", "power", "power"], "policy": ["LPA", "MINAREA"] * 2, "mean_ratio": [1.9, 22.0, 1.8, 2.5]}
    )
    spec = FigureSpec("bars", "workload", "policy", ("mean_ratio",), {})
    path = draw_figure(table, spec, tmp_path / "bars.png")
    assert path.stat().st_size > 0 and not (tmp_path / ".bars.png.tmp.png").exists()
