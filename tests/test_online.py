"""Online replay (PV-EASY's set-up) on a slice of the real CTC-SP2 trace: the qualitative results CI asserts."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests.conftest import SHARED_DATA
from torus_sim.engine.progress import Preemption
from torus_sim.experiments.runner import Scenario, load_workload, run

CTC = SHARED_DATA / "swf" / "CTC-SP2-1996-3.1-cln.swf.gz"


def run_online(workload, policy: str, predictor: str = "estimate", nodes: int | None = None, **fields):
    """One online replay on a cluster (PV-EASY's cleaning rules), as the scenario format runs it."""
    predictor = None if predictor == "estimate" else predictor
    return run(
        Scenario(platform="cluster", nodes=nodes, workload=str(workload), policy=policy, runtime_predictor=predictor, **fields)
    )


@pytest.fixture(scope="module")
def results():
    if not CTC.exists():
        pytest.skip("CTC-SP2 trace not found")
    runs = {
        "EASY": ("FCFS-EASY", "estimate"),
        "EASY-Last": ("FCFS-EASY", "last"),
        "SJF-EASY": ("SJF-EASY", "estimate"),
        "PV-EASY": ("PV-EASY", "last"),
        "FCFS": ("FCFS", "estimate"),
    }
    return {
        name: run_online(CTC, policy, predictor, nodes=430, max_jobs=3000).summary for name, (policy, predictor) in runs.items()
    }


def test_pv_easy_is_strictly_fair_and_easy_is_not(results):
    assert results["PV-EASY"]["delayed_jobs"] == 0 and results["PV-EASY"]["blocked_jobs"] > 0
    assert results["EASY"]["delayed_jobs"] > 0


def test_easy_last_violates_reservations_and_neither_easy_nor_pv_easy_does(results):
    assert results["EASY-Last"]["violations"] > 0 and results["EASY-Last"]["mean_dtr_min"] > 0
    assert results["EASY"]["violations"] == 0  # estimates are kill times: a backfilled job cannot overrun
    assert results["PV-EASY"]["violations"] == 0


def test_pv_easy_wastes_little_and_preempts(results):
    assert 0 < results["PV-EASY"]["wasted_load"] < 0.10
    assert results["PV-EASY"]["preempted_jobs"] > 0 and results["PV-EASY"]["mkt"] >= 1


def test_backfilling_beats_plain_fcfs(results):
    assert results["EASY"]["mbs"] < results["FCFS"]["mbs"]
    assert results["FCFS"]["wasted_load"] == 0 and results["EASY"]["total_load"] == pytest.approx(
        results["FCFS"]["total_load"], rel=0.05
    )


def test_preemption_modes_keep_work_as_documented():
    kill, checkpoint, suspend = (Preemption(mode, 3600.0, 60.0, 0.05) for mode in ("kill", "checkpoint", "suspend"))
    assert kill.segment_time(7200.0, True) == 7200.0 and kill.kept_work(5000.0, 7200.0, False) == 0.0
    assert checkpoint.segment_time(7200.0, False) == 7260.0  # one checkpoint between two hours of work
    assert checkpoint.kept_work(3700.0, 7200.0, False) == 3600.0 and checkpoint.kept_work(3600.0, 7200.0, False) == 0.0
    assert suspend.segment_time(1000.0, True) == pytest.approx(60.0 + 1050.0)
    assert suspend.kept_work(60.0 + 525.0, 1000.0, True) == pytest.approx(500.0)
    with pytest.raises(ValueError, match="preemption mode"):
        Preemption("pause")


def swf(tmp_path, rows, header="; MaxProcs: 4\n"):
    """An SWF file from (job_id, submit, runtime, processors, requested_time, user) rows."""
    lines = [f"{j} {s} 0 {r} {p} -1 -1 {p} {q} -1 1 {u} 1 -1 1 -1 -1 -1" for j, s, r, p, q, u in rows]
    path = tmp_path / "trace.swf"
    path.write_text(header + "\n".join(lines) + "\n")
    return path


def trace(result):
    table = result.jobs.set_index("job_id")
    return {job: (row.first_started_at, row.finished_at, int(row.preemptions)) for job, row in table.iterrows()}


def test_easy_backfills_only_what_does_not_delay_the_head(tmp_path):
    workload = swf(tmp_path, [(0, 0, 10, 3, 10, 1), (1, 1, 5, 4, 5, 1), (2, 2, 3, 1, 3, 1), (3, 3, 20, 1, 20, 1)])
    result = run_online(workload, "FCFS-EASY", "estimate")
    # J2 ends by the head's shadow time (10) and is backfilled at 2; J3 (20 s) would delay J1 and waits
    assert trace(result) == {0: (0.0, 10.0, 0), 1: (10.0, 15.0, 0), 2: (2.0, 5.0, 0), 3: (15.0, 35.0, 0)}


def test_pv_easy_ventures_a_job_then_preempts_it_for_the_head(tmp_path):
    workload = swf(tmp_path, [(0, 0, 10, 3, 10, 1), (1, 1, 5, 4, 5, 1), (2, 2, 3, 1, 3, 1), (3, 3, 20, 1, 20, 1)])
    result = run_online(workload, "PV-EASY", "estimate")
    # J3 is backfilled at 5 by step 4 (idle processor); at 10 it is the shadow load that keeps J1 out: killed
    assert trace(result) == {0: (0.0, 10.0, 0), 1: (10.0, 15.0, 0), 2: (2.0, 5.0, 0), 3: (5.0, 35.0, 1)}
    row = result.jobs.set_index("job_id").loc[3]
    assert row.time_sum == 25.0 and result.summary["mean_rtw"] == 0.25 and result.summary["mkt"] == 1.0


def test_strict_fairness_checker_catches_easys_heel_and_toe_and_pv_easy_preempts_instead(tmp_path):
    rows = [(0, 0, 5, 3, 10, 1), (1, 1, 5, 4, 5, 1), (2, 2, 6, 1, 8, 1)]
    workload = swf(tmp_path, rows)
    easy = run_online(workload, "FCFS-EASY", "estimate")
    # J0 ends at 5, early; J1 could start then but for J2 (backfilled under J0's estimate): it waits until 8
    assert trace(easy)[1] == (8.0, 13.0, 0)
    assert easy.summary["delayed_jobs"] == 1 and easy.summary["mean_delay_min"] == pytest.approx(3 / 60)
    other = run_online(workload, "FCFS-EASY", "estimate", fairness_reading="shadow")  # J2 was backfilled past J1: both readings
    assert other.summary["delayed_jobs"] == 1 and other.summary["mean_delay_min"] == pytest.approx(3 / 60)
    pv = run_online(workload, "PV-EASY", "estimate")
    assert trace(pv)[1] == (5.0, 10.0, 0) and trace(pv)[2][2] == 1 and pv.summary["delayed_jobs"] == 0


def test_easy_last_reservation_violation_is_measured_from_the_reservation(tmp_path):
    rows = [(0, 0, 1, 1, 100, 7), (1, 2, 10, 3, 10, 1), (2, 3, 5, 4, 5, 2), (3, 4, 50, 1, 100, 7)]
    workload = swf(tmp_path, rows)
    result = run_online(workload, "FCFS-EASY", "last")
    # user 7's last job used 1% of its estimate: J3 is predicted 1 s, backfilled at 4, runs 50 s past J2's reservation (12)
    assert trace(result)[3] == (4.0, 54.0, 0) and trace(result)[2] == (54.0, 59.0, 0)
    assert result.summary["violations"] == 1 and result.summary["mean_dtr_min"] == pytest.approx(42 / 60)
    other = run_online(workload, "FCFS-EASY", "last", fairness_reading="shadow")  # J3 was backfilled past J2: both readings
    assert other.summary["violations"] == 1 and other.summary["mean_dtr_min"] == pytest.approx(42 / 60)
    assert run_online(workload, "FCFS-EASY", "estimate").summary["violations"] == 0


def test_fairness_readings_differ_on_a_job_backfilled_past_an_earlier_head(tmp_path):
    # P = 4. X (1 node, 30 s) is backfilled at 3 on H1's extra node; H1 starts at 10 (A ends) and runs
    # to 15; H2 (4 nodes) is then the head and waits for X until 33, though it would fit at 15 without X
    rows = [(0, 0, 10, 3, 10, 1), (1, 1, 5, 3, 5, 1), (2, 2, 5, 4, 5, 1), (3, 3, 30, 1, 30, 1)]
    workload = swf(tmp_path, rows)
    shadow = run_online(workload, "FCFS-EASY", "estimate", fairness_reading="shadow")
    assert trace(shadow)[2] == (33.0, 38.0, 0) and trace(shadow)[3] == (3.0, 33.0, 0)
    # shadow load (every lower-priority job): H1 and H2 blocked; H2 delayed 33 - 15 = 18 s by X
    assert shadow.summary["blocked_jobs"] == 2 and shadow.summary["delayed_jobs"] == 1
    assert shadow.summary["mean_delay_min"] == pytest.approx(18 / 60)
    # backfilled past it: X passed H1, not H2; H2 had no job behind it, so only H1 is blocked
    backfilled = run_online(workload, "FCFS-EASY", "estimate", fairness_reading="backfilled")
    assert backfilled.summary["blocked_jobs"] == 1 and backfilled.summary["delayed_jobs"] == 0
    # a delay counts only above min_delay
    assert run_online(workload, "FCFS-EASY", "estimate", fairness_reading="shadow", min_delay=17).summary["delayed_jobs"] == 1
    assert run_online(workload, "FCFS-EASY", "estimate", fairness_reading="shadow", min_delay=18).summary["delayed_jobs"] == 0


def test_violation_readings_count_only_jobs_backfilled_past_the_head(tmp_path):
    # P = 4, EASY-Last. User 7's last job used 20% of its estimate, so X is predicted 20 s (to 24)
    # and is backfilled at 4 on H1's extra node; it runs 50 s. H1 runs 11-16. H2's reservation is 24
    # (X's predicted end); at J5's arrival (30) H2 still waits for X, which ends at 54
    rows = [
        (0, 0, 2, 1, 10, 7),
        (1, 1, 10, 3, 10, 1),
        (2, 2, 5, 3, 5, 1),
        (3, 3, 5, 4, 5, 2),
        (4, 4, 50, 1, 100, 7),
        (5, 30, 1, 4, 1, 3),
    ]
    workload = swf(tmp_path, rows)
    shadow = run_online(workload, "FCFS-EASY", "last", fairness_reading="shadow")
    assert trace(shadow)[3] == (54.0, 59.0, 0) and trace(shadow)[4] == (4.0, 54.0, 0)
    # shadow load: X (lower than H2) holds the node H2 needs past its reservation: DTR 54 - 24 = 30 s
    assert shadow.summary["violations"] == 1 and shadow.summary["mean_dtr_min"] == pytest.approx(30 / 60)
    assert shadow.summary["delayed_jobs"] == 1 and shadow.summary["mean_delay_min"] == pytest.approx(38 / 60)
    # backfilled past it: X was backfilled past H1, so H2 is neither delayed nor violated
    backfilled = run_online(workload, "FCFS-EASY", "last", fairness_reading="backfilled")
    assert backfilled.summary["violations"] == 0 and backfilled.summary["delayed_jobs"] == 0
    assert backfilled.summary["blocked_jobs"] == 2 and shadow.summary["blocked_jobs"] == 3


def test_swf_cleaning_for_online_replay_is_counted(tmp_path):
    rows = [(1, 10, 5, 2, 10, 1), (2, 5, 5, 8, 10, 1), (3, 7, 20, 1, 10, 1), (4, 8, 5, 1, -1, 1), (5, 9, -1, 1, 10, 1)]
    workload = load_workload(Scenario(platform="cluster", workload=str(swf(tmp_path, rows))))
    assert [job.job_id for job in workload.jobs] == [3, 4, 1]  # sorted by submit time
    counts = workload.cleaning
    assert counts["skipped_too_large"] == 1 and counts["skipped_unknown_runtime"] == 1
    assert counts["walltime_from_runtime"] == 1 and counts["cut_at_walltime"] == 1
    assert counts["reordered"] == 2
    assert workload.jobs[0].runtime == 10.0  # cut at its requested time (the kill time)
    assert workload.processors == 4


def test_cli_runs_an_online_replay_and_a_scenario_file_with_named_cases(tmp_path, capsys):
    from torus_sim.interfaces.cli import main

    path = swf(tmp_path, [(0, 0, 10, 3, 10, 1), (1, 1, 5, 4, 5, 1), (2, 2, 3, 1, 3, 1), (3, 3, 20, 1, 20, 1)])
    arguments = ["run", "--platform", "cluster", "--workload", str(path), "--policy", "PV-EASY", "--out", str(tmp_path / "run")]
    assert main(arguments) == 0
    assert (tmp_path / "run" / "jobs.csv").exists() and "preempted_jobs" in (tmp_path / "run" / "summary.json").read_text()
    spec = tmp_path / "exp.toml"
    spec.write_text(
        f'seeds = [0, 1]\n[platform]\nplatform = "cluster"\n[workload]\nworkload = "{path}"\n'
        '[[case]]\nname = "EASY"\npolicy = "FCFS-EASY"\n[[case]]\nname = "PV-EASY"\npolicy = "PV-EASY"\nruntime_predictor = "virtual:20"\n'
        '[[figure]]\nname = "bars"\nx = "name"\ny = ["mbs"]\n'
        '[[paper]]\ncase = "EASY"\nmetric = "mbs"\nvalue = 2.0\n'
    )
    out = tmp_path / "exp"
    assert main(["sweep", str(spec), "--out", str(out), "--no-progress"]) == 0
    results = pd.read_csv(out / "results.csv")
    assert len(results) == 4 and set(results.name) == {"EASY", "PV-EASY"}
    assert (out / "bars.png").exists() and (out / "size_groups.csv").exists()
    assert pd.read_csv(out / "comparison.csv").values.tolist()[0][:2] == ["EASY", "mbs"]
    assert main(["run", "--platform", "cluster", "--workload", str(tmp_path / "missing.swf")]) == 2
    spec.write_text('[[case]]\npolicy = "LIFO"\n')
    assert main(["sweep", str(spec)]) == 2
    assert "unknown policy" in capsys.readouterr().err
    assert main(["online", "run"]) == 2
    assert "torus-sim run --platform cluster" in capsys.readouterr().err


def test_mesa_batch_run_steps_an_online_replay_to_the_same_end():
    import mesa

    from torus_sim.experiments.runner import ConfiguredModel

    if not CTC.exists():
        pytest.skip("CTC-SP2 trace not found")
    rows = mesa.batch_run(
        ConfiguredModel,
        parameters={
            "platform": "cluster",
            "workload": str(CTC),
            "nodes": 430,
            "max_jobs": 300,
            "policy": ["FCFS-EASY", "PV-EASY"],
            "seed": [0],
        },
        iterations=1,
        max_steps=100_000,
        number_processes=1,
        display_progress=False,
    )
    table = pd.DataFrame(rows)
    for policy, group in table.groupby("policy"):
        final = group.sort_values("Step").iloc[-1]
        assert final.completed_jobs == 300 and final.queued_jobs == 0 and final.running_jobs == 0
        assert group.sort_values("Step").time.is_monotonic_increasing
        reference = run_online(CTC, policy, "estimate", nodes=430, max_jobs=300)
        assert final.preemptions == sum(reference.jobs.preemptions)


def _fairness_by_groupby(passes, reading):
    """The pandas reading of ``fairness_table`` before issue 61 (a copy of the head rows, then groupby)."""
    heads = passes[passes["head_job"] >= 0]
    if reading == "shadow":
        blocked = pd.Index(heads["head_job"].unique())
        ready_column, violation_column = "head_ready", "head_ready"
    else:
        behind = heads[(heads["queued_jobs"] > 1) | (heads["head_passed"] > 0)]
        blocked = pd.Index(behind["head_job"].unique())
        ready_column, violation_column = "head_ready_backfilled", "head_ready_underestimated"
    fair = heads[heads[ready_column].astype(bool)].groupby("head_job")["time"].first()
    late = heads[
        heads[violation_column].astype(bool)
        & (heads["head_job"] == heads["previous_head"])
        & heads["previous_reservation_at"].notna()
        & (heads["time"] >= heads["previous_reservation_at"])
    ]
    violated = late.groupby("head_job")["previous_reservation_at"].first()
    return pd.DataFrame({"fair_start_at": fair.reindex(blocked), "violated_at": violated.reindex(blocked)})


@pytest.mark.parametrize("reading", ["backfilled", "shadow"])
def test_the_fairness_table_column_by_column_is_the_groupby_reading(reading):
    # issue 61: the table is read column by column (no copy of the pass table's head rows); the same frame
    from torus_sim.metrics.online import fairness_table

    rng = np.random.default_rng(7)
    for rows in (0, 1, 5, 300, 3000):
        time = np.cumsum(rng.integers(0, 3, size=rows)).astype(float)
        head = rng.integers(-1, max(2, rows // 20), size=rows)
        previous = np.where(rng.random(rows) < 0.7, head, rng.integers(-1, 5, size=rows))
        promised = np.where(rng.random(rows) < 0.3, np.nan, time + rng.integers(-5, 5, size=rows))
        passes = pd.DataFrame(
            {
                "time": time,
                "queued_jobs": rng.integers(0, 4, size=rows),
                "head_job": head,
                "head_ready": rng.random(rows) < 0.3,
                "previous_head": previous,
                "previous_reservation_at": promised,
                "head_passed": rng.integers(0, 2, size=rows),
                "head_ready_backfilled": rng.random(rows) < 0.3,
                "head_ready_underestimated": rng.random(rows) < 0.4,
            }
        )
        expected = _fairness_by_groupby(passes, reading)
        found = fairness_table(passes, reading)
        pd.testing.assert_frame_equal(found, expected, check_index_type=True)
        if rows >= 300:
            assert found["fair_start_at"].notna().sum() > 0 and found["violated_at"].notna().sum() > 0
