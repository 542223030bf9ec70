"""A replay held against the schedule its log records (issue 63, part 1): hand-made logs where every difference is known."""

import gzip
import json

import numpy as np
import pytest
from scipy import stats

from torus_sim.core.errors import ConfigurationError
from torus_sim.experiments.log_replay import against_log
from torus_sim.experiments.runner import Scenario, run
from torus_sim.interfaces.cli import main
from torus_sim.metrics.against_log import busy_fraction_by_day

pytestmark = pytest.mark.filterwarnings("ignore:the offered load after cleaning")

HEADER = "; UnixStartTime: 0\n; TimeZoneString: UTC\n; MaxNodes: 4\n; MaxProcs: 4\n; Note: uses a FCFS scheduler\n"


def _line(job, submit, wait, run_time, processors, status=1):
    requested = max(run_time, 1)
    return f"{job} {submit} {wait} {run_time} {processors} -1 -1 {processors} {requested} -1 {status} 1 1 -1 -1 -1 -1 -1\n"


@pytest.fixture
def log(tmp_path):
    """Five jobs on a 4-processor machine, FCFS: the simulated schedule is known by hand.

    J1 (4 procs, 100 s) starts at 0 both ways. J2 (2 procs, 50 s, submitted at 10) waits for J1: 90 s simulated,
    200 s logged. J3 has no logged wait (-1): the log cannot place it. J4 (1 proc, 7,200 s, submitted at 30) starts
    beside J2 and J3 at 100: 70 s simulated, 40 s logged. J5 was cancelled before it started (status 5, no run time).
    """
    path = tmp_path / "hand.swf"
    path.write_text(
        HEADER
        + _line(1, 0, 0, 100, 4)
        + _line(2, 10, 200, 50, 2)
        + _line(3, 20, -1, 30, 1)
        + _line(4, 30, 40, 7200, 1)
        + _line(5, 50, 0, -1, 1, status=5)
    )
    return path


def _scenario(path, **fields):
    return Scenario(platform="cluster", nodes=4, workload=str(path), failures="none", policy="FCFS", **fields)


def test_every_difference_of_a_hand_made_log_is_the_one_worked_out_by_hand(log):
    result = run(_scenario(log))
    comparison = against_log(result)
    summary = comparison.summary
    assert summary["jobs"] == {
        "log_jobs": 5,
        "simulated": 4,  # J5's unknown run time: the cleaning skipped it
        "compared": 3,
        "not_placed": {"wait unknown": 1, "cancelled before start": 1},
        "not_placed_simulated": 1,  # J3
        "not_simulated": 0,
    }
    assert summary["log"]["scheduler_notes"] == ["uses a FCFS scheduler"]
    assert comparison.waits["job_id"].tolist() == [1, 2, 4]
    assert comparison.waits["simulated_wait"].tolist() == [0.0, 90.0, 70.0]
    assert comparison.waits["logged_wait"].tolist() == [0.0, 200.0, 40.0]
    wait = summary["wait"]
    assert wait["simulated_mean"] == pytest.approx(160 / 3) and wait["logged_mean"] == pytest.approx(80.0)
    assert wait["difference_mean"] == pytest.approx(-80 / 3)  # (0 - 110 + 30) / 3
    assert wait["difference_median"] == 0.0
    assert wait["difference_mean_absolute"] == pytest.approx(140 / 3)
    assert wait["within_1_min"] == pytest.approx(2 / 3) and wait["within_1_h"] == 1.0
    assert summary["ks"]["statistic"] == pytest.approx(1 / 3)  # the ECDFs part by a third at 40 s and at 90 s
    assert summary["ks"]["p_value"] == pytest.approx(stats.ks_2samp([0, 90, 70], [0, 200, 40]).pvalue)
    logged_bsld = [1.0, 250 / 50, 7240 / 7200]
    simulated_bsld = [1.0, 140 / 50, 7270 / 7200]
    assert summary["bounded_slowdown"]["logged_mean"] == pytest.approx(np.mean(logged_bsld))
    assert summary["bounded_slowdown"]["simulated_mean"] == pytest.approx(np.mean(simulated_bsld))
    by_size = comparison.by_size.set_index("size_class")
    assert list(by_size.index) == ["(P/8, P/4]", "(P/4, P/2]", "(P/2, P]"]  # J4 (1 of 4), J2 (2), J1 (4)
    assert by_size.loc["(P/4, P/2]", "simulated_wait"] == 90.0 and by_size.loc["(P/4, P/2]", "logged_bsld"] == 5.0
    assert comparison.by_month.to_dict(orient="records") == [
        {
            "month": "1970-01",
            "jobs": 3,
            "simulated_wait": pytest.approx(160 / 3),
            "logged_wait": pytest.approx(80.0),
            "simulated_bsld": pytest.approx(np.mean(simulated_bsld)),
            "logged_bsld": pytest.approx(np.mean(logged_bsld)),
        }
    ]
    day = comparison.by_day.iloc[0]
    busy = 4 * 100 + 2 * 50 + 1 * 7200  # node-seconds of J1, J2, J4 both ways
    assert (day["day"], day["date"]) == (0, "1970-01-01")
    assert day["simulated_utilization"] == pytest.approx(busy / (4 * 86400))
    assert day["logged_utilization"] == pytest.approx(busy / (4 * 86400))
    assert comparison.summary["utilization"]["daily_difference_mean_absolute"] == pytest.approx(0.0)


def test_the_daily_utilization_is_the_step_function_integrated_exactly():
    starts = np.array([0.0, 43_200.0, 80_000.0])
    ends = np.array([86_400.0, 129_600.0, 90_000.0])
    sizes = np.array([1, 2, 4])
    shares = busy_fraction_by_day(starts, ends, sizes, capacity=8, days=3)
    day0 = (1 * 86_400 + 2 * 43_200 + 4 * 6_400) / (8 * 86_400)
    day1 = (2 * 43_200 + 4 * 3_600) / (8 * 86_400)
    assert shares.tolist() == pytest.approx([day0, day1, 0.0])


def test_a_replay_that_cannot_be_held_against_its_log_is_refused_with_a_sentence(log, tmp_path):
    with pytest.raises(ConfigurationError, match="run it at c = 1"):
        against_log(run(_scenario(log, load_scale=1.5)))
    batch = run(
        Scenario(platform="cluster", nodes=64, workload="rigid", jobs=10, scenarios=1, failures="none", policy="R-LIST-0")
    )
    with pytest.raises(ConfigurationError, match="not a log file"):
        against_log(batch)
    assert (
        main(
            [
                "run",
                "--platform",
                "cluster",
                "--workload",
                str(log),
                "--load-scale",
                "2",
                "--against-log",
                "--out",
                str(tmp_path / "x"),
            ]
        )
        == 2
    )
    assert not (tmp_path / "x").exists()  # refused before the simulation: nothing written


def test_run_against_log_prints_the_distance_and_writes_its_file_and_figure(log, tmp_path, capsys):
    packed = tmp_path / "hand.swf.gz"
    packed.write_bytes(gzip.compress(log.read_bytes()))
    out = tmp_path / "out"
    arguments = ["run", "--platform", "cluster", "--nodes", "4", "--workload", str(packed), "--failures", "none"]
    assert main([*arguments, "--policy", "FCFS", "--against-log", "--out", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert (
        "against the log  hand.swf.gz: 3 of the run's 4 jobs compared; the log cannot place 2 of the 5 lines the run covers"
        in printed
    )
    assert "(wait unknown 1, cancelled before start 1)" in printed
    assert "1 of the run's jobs have no place in the logged schedule (left out)" in printed
    assert (
        "per job, simulated - logged: mean -26.7 s, median 0.0 s, mean |difference| 46.7 s; 66.7% within 1 min, 100.0% within 1 h"
        in printed
    )
    assert "Kolmogorov-Smirnov distance 0.3333" in printed
    written = json.loads((out / "against_log.json").read_text())
    assert written["summary"]["jobs"]["compared"] == 3
    assert [row["quantile"] for row in written["wait_quantiles"]] == [0.1, 0.25, 0.5, 0.75, 0.9, 0.99]
    assert json.loads((out / "summary.json").read_text())["against_log"]["wait"]["within_1_h"] == 1.0
    assert (out / "against_log.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main([*arguments, "--policy", "FCFS", "--out", str(out), "--no-progress"]) == 0  # a run without it
    assert not (out / "against_log.json").exists() and not (out / "against_log.png").exists()


def test_every_key_and_column_of_against_log_json_is_described_in_the_outputs_schema(log):
    from torus_sim.outputs.output_columns import AGAINST_LOG_SUMMARY, AGAINST_LOG_TABLES

    written = against_log(run(_scenario(log))).to_json_ready()

    def dotted(tree, prefix=""):
        for key, value in tree.items():
            if isinstance(value, dict) and key != "not_placed":
                yield from dotted(value, f"{prefix}{key}.")
            else:
                yield f"{prefix}{key}"

    assert sorted(dotted(written["summary"])) == sorted(AGAINST_LOG_SUMMARY)
    described = {
        (table.strip(), column.strip())
        for key in AGAINST_LOG_TABLES
        for table in key.split(":")[0].split(",")
        for column in key.split(":")[1].split(",")
    }
    for table in ("wait_quantiles", "by_size", "by_month", "by_day"):
        for column in written[table][0]:
            assert (table, column) in described, (table, column)


def test_a_prefix_run_counts_the_lines_it_covers_not_the_whole_log(log):
    summary = against_log(run(_scenario(log, max_jobs=2))).summary
    assert summary["jobs"] == {
        "log_jobs": 2,
        "simulated": 2,
        "compared": 2,
        "not_placed": {},
        "not_placed_simulated": 0,
        "not_simulated": 0,
    }
    assert summary["wait"]["difference_mean"] == pytest.approx(-55.0)  # J1 0 - 0, J2 90 - 200
