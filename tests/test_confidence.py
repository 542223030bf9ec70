"""Comparisons with confidence (issue 63): bootstrap intervals, paired differences, Wilcoxon, sweeps and ``torus-sim compare``."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from torus_sim.core.errors import ConfigurationError
from torus_sim.experiments.compare import compare_cases
from torus_sim.interfaces.cli import main
from torus_sim.metrics.confidence import interval_table, mean_interval, mean_intervals, paired_difference, paired_table


def test_bootstrap_intervals_cover_the_true_mean_of_normal_draws_as_the_closed_form_t_interval_does():
    """400 samples of 20 normal draws: the 95% bootstrap interval holds the true mean about 95% of the time,
    and its width is the closed-form t interval's times the bootstrap's known shrink, z / t_19 x sqrt(19/20)."""
    n, samples, mean, sigma = 20, 400, 3.0, 2.0
    draws = np.random.default_rng(63).normal(mean, sigma, size=(samples, n))
    intervals = mean_intervals(draws, resamples=1999)  # one resampling for all 400 rows
    low = np.array([found.low for found in intervals])
    high = np.array([found.high for found in intervals])
    coverage = np.mean((low <= mean) & (mean <= high))
    assert 0.90 <= coverage <= 0.98, coverage  # binomial sd at 0.95 over 400: 0.011
    t_low, t_high = stats.t.interval(0.95, n - 1, loc=draws.mean(axis=1), scale=stats.sem(draws, axis=1))
    t_coverage = np.mean((t_low <= mean) & (mean <= t_high))
    assert abs(coverage - t_coverage) <= 0.04
    ratio = np.mean((high - low) / (t_high - t_low))
    expected = stats.norm.ppf(0.975) / stats.t.ppf(0.975, n - 1) * np.sqrt((n - 1) / n)  # 0.913
    assert ratio == pytest.approx(expected, abs=0.04)
    assert {found.method for found in intervals} == {"BCa"}
    assert [found.mean for found in intervals] == pytest.approx(draws.mean(axis=1))


def test_an_interval_says_when_it_cannot_be_measured_and_is_the_same_every_time():
    one = mean_interval([4.0])
    assert (one.n, one.mean, one.method) == (1, 4.0, "none") and np.isnan(one.low) and np.isnan(one.high)
    flat = mean_interval([2.5, 2.5, 2.5])
    assert (flat.low, flat.mean, flat.high, flat.method) == (2.5, 2.5, 2.5, "constant")
    few = mean_interval([1.0, 2.0])  # two runs: the interval spans them
    assert few.method == "BCa" and few.low == 1.0 and few.high == 2.0
    gaps = mean_interval([1.0, np.nan, 3.0, 2.0])
    assert gaps.n == 3 and gaps.mean == 2.0
    values = np.random.default_rng(1).exponential(size=12)
    assert mean_interval(values) == mean_interval(values)  # seeded: the same table every run


def test_the_paired_test_is_wilcoxons_on_darwins_maize_the_published_example():
    """Fisher's Design of Experiments §17 (Darwin's cross- vs self-fertilised maize, eighths of an inch): the exact
    two-sided Wilcoxon signed-rank test gives W = 24, p = 0.0413 (scipy.stats.wilcoxon's documented example)."""
    differences = np.array([6, 8, 14, 16, 23, 24, 28, 29, 41, -48, 49, 56, 60, -67, 75], dtype=float)
    self_fertilised = np.linspace(100, 200, len(differences))
    found = paired_difference(self_fertilised, self_fertilised + differences)
    assert found.n == 15 and found.zeros == 0
    assert found.statistic == 24.0
    assert found.p_value == pytest.approx(0.041259765625, rel=1e-12)
    assert found.difference.mean == pytest.approx(differences.mean())
    assert found.difference.low < differences.mean() < found.difference.high
    same = paired_difference([1.0, 2.0, 3.0], [1.0, 2.0, 3.0])
    assert (same.statistic, same.p_value, same.zeros) == (0.0, 1.0, 3)


def _results() -> pd.DataFrame:
    """A hand-made sweep: two policies x two loads x four seeds; B is A minus (seed + 1) at load 1, equal at load 2."""
    rows = []
    for seed in (3, 1, 0, 2):  # not in seed order: pairs are made by seed, not by position
        for load in (1.0, 2.0):
            base = 10.0 * load + seed
            rows.append(
                {"name": "A", "policy": "FCFS-EASY", "load_scale": load, "seed": seed, "avg_wait_time": base, "jobs": 100}
            )
            cut = seed + 1 if load == 1.0 else 0
            rows.append(
                {
                    "name": "B",
                    "policy": "conservative",
                    "load_scale": load,
                    "seed": seed,
                    "avg_wait_time": base - cut,
                    "jobs": 100,
                }
            )
    return pd.DataFrame(rows)


def test_interval_and_paired_tables_pair_runs_by_replicate_and_compare_cases_at_equal_other_parameters():
    results = _results()
    intervals = interval_table(results, ["name", "load_scale"], ["avg_wait_time", "jobs", "policy"])
    assert set(intervals["metric"]) == {"avg_wait_time", "jobs"}  # text columns are no metric
    a1 = intervals[(intervals["name"] == "A") & (intervals["load_scale"] == 1.0) & (intervals["metric"] == "avg_wait_time")].iloc[
        0
    ]
    assert (a1["n"], a1["mean"]) == (4, 11.5) and a1["ci_low"] < 11.5 < a1["ci_high"]
    jobs = intervals[intervals["metric"] == "jobs"]
    assert (jobs["ci_method"] == "constant").all() and (jobs["ci_low"] == 100).all()
    paired = paired_table(results, "name", ["load_scale"], ["seed"], ["avg_wait_time"])
    assert len(paired) == 2
    first = paired[paired["load_scale"] == 1.0].iloc[0]
    assert (first["a"], first["b"], first["n"]) == ("A", "B", 4)
    assert first["difference"] == -2.5  # -(seed + 1) averaged over seeds 0..3
    assert first["ci_high"] < 0 and first["wilcoxon"] == 0.0
    assert first["p_value"] == pytest.approx(stats.wilcoxon([-1.0, -2.0, -3.0, -4.0]).pvalue)
    second = paired[paired["load_scale"] == 2.0].iloc[0]
    assert (second["difference"], second["p_value"], second["zeros"]) == (0.0, 1.0, 4)


def test_compare_pairs_two_cases_by_what_else_varies_and_refuses_what_it_cannot_pair():
    results = _results()
    found = compare_cases(results, "A", "B", ["avg_wait_time"], where={"load_scale": "1"})[0]
    assert found.paired_on == ("load_scale", "seed") and found.paired.n == 4
    assert found.paired.difference.mean == -2.5 and found.a.mean == 11.5 and found.b.mean == 9.0
    pooled = compare_cases(results, "policy=FCFS-EASY", "policy=conservative", ["avg_wait_time"])[0]
    assert pooled.paired.n == 8 and pooled.paired.difference.mean == -1.25
    with pytest.raises(ConfigurationError, match="selects no run"):
        compare_cases(results, "A", "C", ["avg_wait_time"])
    with pytest.raises(ConfigurationError, match="not a metric"):
        compare_cases(results, "A", "B", ["policy"])
    with pytest.raises(ConfigurationError, match="no column 'nodes'"):
        compare_cases(results, "nodes=4", "B", ["avg_wait_time"])
    twice = pd.concat([results, results.assign(seed=results["seed"])])
    with pytest.raises(ConfigurationError, match="several runs on the same inputs"):
        compare_cases(twice, "A", "B", ["avg_wait_time"])


def test_compare_command_prints_means_intervals_the_paired_difference_and_the_test(tmp_path, capsys):
    _results().to_csv(tmp_path / "results.csv", index=False)
    assert main(["compare", str(tmp_path), "A", "B", "--metric", "avg_wait_time", "--where", "load_scale=1"]) == 0
    printed = capsys.readouterr().out
    assert "avg_wait_time: B (B) against A (A), 4 pairs of runs (paired on load_scale, seed)" in printed
    assert "A  mean         11.5  95% CI [" in printed and "B - A           -2.5  95% CI [-3.5, -1.5] (BCa bootstrap)" in printed
    assert "Wilcoxon signed-rank: W = 0, p = 0.125 (two-sided)" in printed
    assert main(["compare", str(tmp_path), "A", "Z", "--metric", "avg_wait_time"]) == 2
    assert "case 'Z' selects no run" in capsys.readouterr().err
    assert main(["compare", str(tmp_path / "nowhere"), "A", "B"]) == 2


def test_a_sweep_with_seeds_writes_intervals_and_paired_tables_and_compare_reads_its_folder(tmp_path, capsys):
    sweep_file = tmp_path / "seeds.toml"
    sweep_file.write_text(
        """title = "EASY against conservative over failure draws"
seeds = [0, 1, 2]
[platform]
platform = "cluster"
nodes = 64
[workload]
max_jobs = 150
[failures]
failures = "synthetic:400"
[[case]]
name = "EASY"
policy = "FCFS-EASY"
[[case]]
name = "conservative"
policy = "conservative"
[[figure]]
name = "bsld"
x = "name"
y = ["avg_bounded_slowdown"]
"""
    )
    out = tmp_path / "out"
    assert main(["sweep", str(sweep_file), "--out", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "95% confidence intervals over the replicates (intervals.csv):" in printed
    assert "  EASY, policy = FCFS-EASY: avg_bounded_slowdown " in printed and "(3 runs)" in printed
    assert "  conservative - EASY: avg_bounded_slowdown " in printed and "(3 pairs)" in printed
    intervals = pd.read_csv(out / "intervals.csv")
    paired = pd.read_csv(out / "paired.csv")
    results = pd.read_csv(out / "results.csv")
    bsld = intervals[intervals["metric"] == "avg_bounded_slowdown"].set_index("name")
    assert bsld.loc["EASY", "n"] == 3
    assert bsld.loc["EASY", "mean"] == pytest.approx(results[results["name"] == "EASY"]["avg_bounded_slowdown"].mean(), rel=1e-9)
    row = paired[paired["metric"] == "avg_bounded_slowdown"].iloc[0]
    by_seed = results.pivot(index="seed", columns="name", values="avg_bounded_slowdown")
    assert (row["a"], row["b"], row["n"]) == ("EASY", "conservative", 3)
    assert row["difference"] == pytest.approx((by_seed["conservative"] - by_seed["EASY"]).mean(), rel=1e-9)
    assert (out / "bsld.png").stat().st_size > 0
    assert main(["compare", str(out), "EASY", "conservative"]) == 0
    assert "3 pairs of runs (paired on seed)" in capsys.readouterr().out
    (out / "intervals.csv").unlink()
    assert main(["sweep", str(sweep_file), "--out", str(out), "--replot"]) == 0  # the intervals come from results.csv
    assert pd.read_csv(out / "intervals.csv").equals(intervals)


def test_a_sweep_file_names_its_replicates_and_what_it_compares(tmp_path):
    from torus_sim.experiments import load_experiment

    path = tmp_path / "logs.toml"
    path.write_text(
        'replicates = ["max_jobs"]\ncompare = "policy"\n[platform]\nplatform = "cluster"\nnodes = 64\n'
        '[grid]\nmax_jobs = [50, 60]\npolicy = ["FCFS", "FCFS-EASY"]\n'
    )
    experiment = load_experiment(path)
    assert experiment.replicate_columns == ["max_jobs"] and experiment.compared_column == "policy"
    path.write_text('replicates = ["nodes"]\n[platform]\nplatform = "cluster"\nnodes = 64\n')
    with pytest.raises(ConfigurationError, match="replicates names 'nodes'"):
        load_experiment(path)
    path.write_text('compare = "policy"\nseeds = [0, 1]\n[platform]\nplatform = "cluster"\n')
    with pytest.raises(ConfigurationError, match="compare names 'policy'"):
        load_experiment(path)


def test_where_scipy_cannot_give_a_bca_interval_the_percentile_one_is_used_and_said(monkeypatch):
    """scipy returns NaN ends when BCa's acceleration is undefined; those rows get the percentile interval."""
    from scipy import stats as scipy_stats

    real = scipy_stats.bootstrap

    def no_bca(data, statistic, **options):
        found = real(data, statistic, **options)
        if options.get("method") == "BCa":
            low = np.atleast_1d(found.confidence_interval.low).astype(float).copy()
            high = np.atleast_1d(found.confidence_interval.high).astype(float).copy()
            low[0], high[0] = np.nan, np.nan  # the first row undefined, as scipy leaves it
            interval = type(found.confidence_interval)(low, high)
            return type("Result", (), {"confidence_interval": interval})()
        return found

    monkeypatch.setattr(scipy_stats, "bootstrap", no_bca)
    values = np.array([[1.0, 2.0, 4.0, 8.0], [3.0, 1.0, 2.0, 5.0]])
    first, second = mean_intervals(values, resamples=999)
    assert first.method == "percentile" and second.method == "BCa"
    assert 1.0 <= first.low < first.mean < first.high <= 8.0
