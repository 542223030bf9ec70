"""Flat experiment files: parsing, a tiny run through the CLI, resume, and bad files."""

from __future__ import annotations

import pandas as pd
import pytest

from torus_sim.cli import main
from torus_sim.errors import ConfigurationError
from torus_sim.flat.experiments import expected_ratio_table, load_flat_experiment

TINY = """title = "tiny"
kind = "rigid"
sets = 2
scenarios = 3
seed = 5
[grid]
jobs = [12]
processors = [2000]
mean_failure_probability = [0.0, 0.5]
heuristic = ["R-LIST-0", "R-SHELFFILL-B"]
priority = ["LPT"]
[[figure]]
name = "ratio"
x = "mean_failure_probability"
series = "heuristic"
y = ["mean_ratio"]
"""


def test_a_tiny_rigid_experiment_writes_rows_summary_and_figure_then_resumes(tmp_path, capsys):
    spec = tmp_path / "tiny.toml"
    spec.write_text(TINY)
    out = tmp_path / "out"
    assert main(["flat", "experiment", str(spec), "--out", str(out), "--no-progress"]) == 0
    table = pd.read_csv(out / "results.csv")
    assert len(table) == 2 * 2 * 2 and set(table.scenarios) == {3}
    assert (table.mean_ratio >= 1).all() and (table.max_ratio >= table.mean_ratio).all()
    no_failures = table[table.mean_failure_probability == 0.0]
    assert (no_failures.mean_failures == 0).all()
    assert (out / "ratio.png").stat().st_size > 0
    summary = pd.read_csv(out / "summary.csv")
    assert set(summary.columns) == {"mean_failure_probability", "heuristic", "expected", "maximum", "sets"}
    stored = sorted(path.name for path in (out / "sets").iterdir())
    assert stored == ["0.json", "1.json"]
    # a second run reuses the stored sets and gives the same table
    assert main(["flat", "experiment", str(spec), "--out", str(out), "--no-progress"]) == 0
    assert pd.read_csv(out / "results.csv").equals(table)


def test_expected_ratio_is_the_mean_over_sets_and_maximum_the_max():
    table = pd.DataFrame({"model": ["a", "a"], "set": [0, 1], "mean_ratio": [1.0, 2.0], "max_ratio": [1.5, 3.0]})
    summary = expected_ratio_table(table, ["model"])
    assert summary.to_dict("records") == [{"model": "a", "expected": 1.5, "maximum": 3.0, "sets": 2}]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('kind = "flat"\n', "kind must be"),
        ('kind = "rigid"\n[grid]\nheuristic = ["R-LIST-7"]\n', "unknown heuristic"),
        ('kind = "moldable"\n[grid]\nmodel = ["amdhal"]\n', "unknown model"),
        ('kind = "rigid"\n[grid]\nalgorithm = ["LPA"]\n', "unknown rigid parameter"),
        ('kind = "rigid"\nsets = 0\n', "sets and scenarios"),
        ('kind = "rigid"\n[[figure]]\nname = "x"\nx = "model"\n', "not a grid parameter"),
    ],
)
def test_bad_flat_experiment_files_are_refused_with_the_file_named(tmp_path, text, reason):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ConfigurationError, match=reason) as caught:
        load_flat_experiment(path)
    assert str(path) in str(caught.value)


def test_summarize_counts_a_setting_shared_by_several_files_once(tmp_path, capsys):
    row = {"model": "mix", "algorithm": "LPA", "priority": "LPT", "jobs": 500, "error_rate": 1e-7, "set": 0}
    default = {**row, "processors": 7500, "mean_ratio": 1.0, "max_ratio": 1.2}
    varied = {**row, "processors": 1000, "mean_ratio": 2.0, "max_ratio": 3.0}
    pd.DataFrame([default, varied]).to_csv(tmp_path / "a.csv", index=False)
    pd.DataFrame([default]).to_csv(tmp_path / "b.csv", index=False)
    out = tmp_path / "summary.csv"
    assert main(["flat", "summarize", str(tmp_path / "a.csv"), str(tmp_path / "b.csv"), "--out", str(out)]) == 0
    summary = pd.read_csv(out)
    assert summary[["expected", "maximum", "settings"]].to_dict("records") == [{"expected": 1.5, "maximum": 3.0, "settings": 2}]


def test_a_categorical_x_is_drawn_as_bars_with_a_log_scale_when_values_span_decades(tmp_path):
    from torus_sim.experiments.scenario import FigureSpec
    from torus_sim.figures import draw_figure

    table = pd.DataFrame(
        {"model": ["mix", "mix", "power", "power"], "algorithm": ["LPA", "MINAREA"] * 2, "mean_ratio": [1.9, 22.0, 1.8, 2.5]}
    )
    spec = FigureSpec("bars", "model", "algorithm", ("mean_ratio",), {})
    path = draw_figure(table, spec, tmp_path / "bars.png")
    assert path.stat().st_size > 0 and not (tmp_path / ".bars.png.tmp.png").exists()
