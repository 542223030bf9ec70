"""The field's formats: Batsim job records (read by evalys), SWF schedules, Batsim workloads, Parquet, progress."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from procset import ProcSet

from failure_logs.events import FailureLog
from torus_sim.core.errors import InputFileError, WorkloadFormatError
from torus_sim.engine.model import SchedulingModel
from torus_sim.experiments.runner import run
from torus_sim.experiments.scenario import Scenario
from torus_sim.inputs.workload.batsim import read_batsim_workload
from torus_sim.inputs.workload.jobs import jobs_from_swf
from torus_sim.inputs.workload.swf import read_swf
from torus_sim.interfaces.cli import main
from torus_sim.machine.platforms.cluster import ClusterPlatform
from torus_sim.outputs.formats.batsim import BATSIM_COLUMNS, batsim_jobs
from torus_sim.outputs.formats.parquet import read_manifest
from torus_sim.outputs.reports import write_results
from torus_sim.policies.easy import EasyPolicy
from torus_sim.policies.krevat import KrevatScheduler

from .conftest import make_workload
from .test_input_errors import SDSC

ARTIFACTS = Path(os.environ.get("TORUS_SIM_ARTIFACTS", Path(__file__).resolve().parent / "artifacts"))


def one_failure(at: float, node: int) -> FailureLog:
    return FailureLog(np.array([at]), np.array([node]), np.array([np.nan]))


# -- Batsim job records -------------------------------------------------------------------------


def small_torus_run():
    """Three jobs on the 4x4x8 torus; a supernode of J1's partition fails at 40: J1 runs twice."""
    rows = [(1, 0, 100, 100, 64), (2, 1, 10, 10, 128), (3, 25, 50, 50, 32)]
    model = SchedulingModel(make_workload(rows), KrevatScheduler(), None, one_failure(40.0, 0))
    record = model.run()
    from torus_sim.metrics.summary import job_table

    return record, job_table(record.jobs)


def test_a_killed_job_gets_a_row_per_attempt_with_batsims_states_and_its_supernodes():
    record, jobs = small_torus_run()
    table = batsim_jobs(record, jobs, "hand")
    assert list(table.columns) == BATSIM_COLUMNS
    first = table[table["job_id"] == "1"].iloc[0]
    again = table[table["job_id"] == "1#1"].iloc[0]
    assert (first["final_state"], first["success"], first["starting_time"], first["finish_time"]) == (
        "COMPLETED_KILLED",
        0,
        0.0,
        40.0,
    )
    assert first["metadata"] == "attempt 1, killed by a failure"
    assert 0 in ProcSet.from_str(first["allocated_resources"]) and len(ProcSet.from_str(first["allocated_resources"])) == 64
    assert again["final_state"] == "COMPLETED_SUCCESSFULLY" and again["success"] == 1
    assert again["waiting_time"] == again["starting_time"] - 0.0 and again["execution_time"] == 100.0
    assert again["stretch"] == pytest.approx(again["turnaround_time"] / 100.0)
    assert set(table["job_id"].str.split("#").str[0]) == {"1", "2", "3"}
    assert (table["consumed_energy"] == -1).all() and (table["profile"] == "delay").all()


def test_evalys_reads_the_job_record_and_draws_its_gantt_chart(tmp_path):
    evalys = pytest.importorskip("evalys.jobset")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    record, jobs = small_torus_run()
    path = tmp_path / "batsim_jobs.csv"
    batsim_jobs(record, jobs, "hand").to_csv(path, index=False)
    jobset = evalys.JobSet.from_csv(str(path))
    assert len(jobset.df) == len(batsim_jobs(record, jobs, "hand"))
    assert jobset.MaxProcs <= 128 and jobset.df["proc_alloc"].sum() > 0
    jobset.gantt(title="torus-sim: 3 jobs, one failure at t = 40 s")  # evalys draws on a figure of its own
    figure = plt.gcf()
    assert figure.axes and figure.axes[0].patches  # one rectangle per row of the record
    out = ARTIFACTS / "gantt_small_torus.png"
    out.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(out)
    plt.close(figure)
    assert out.stat().st_size > 5_000


def test_migrations_split_an_attempt_into_placements():
    result = run(Scenario.make("test", max_jobs=300, reduced_failures="count"))  # every BG/L failure in 300 jobs: migrations
    record = result.record
    assert len(record.migrations) > 0
    table = batsim_jobs(record, result.jobs, "nasa")
    moved = table[table["metadata"].str.endswith("migrated")]
    assert len(moved) == len(record.migrations)
    # every placement of an attempt ends where the next begins, and the attempt's rows cover it exactly
    executions = table.groupby(table["job_id"].str.split("#").str[0])["execution_time"].sum()
    attempts = record.attempts.assign(length=record.attempts["ended_at"] - record.attempts["started_at"])
    expected = attempts.groupby(attempts["job_id"].astype(str))["length"].sum()
    pd.testing.assert_series_equal(executions.sort_index(), expected.sort_index(), check_names=False)


@settings(max_examples=15, deadline=None)
@given(rows=st.lists(st.tuples(st.integers(0, 200), st.integers(0, 60), st.integers(1, 10)), min_size=1, max_size=12))
@example(rows=[(0, 0, 3)])  # a job of run time 0: its end is its start (RICC has them)
@example(rows=[(0, 5, 10), (5, 0, 10), (5, 4, 10)])  # an instant between two jobs that hold every node
@example(rows=[(0, 1, 1), (1, 1, 1), (0, 0, 10)])  # an instant (every node) before a start of its time
def test_node_ids_assigned_on_a_counts_cluster_never_overlap_in_time(rows):
    jobs = [(index + 1, submit, runtime, runtime, size) for index, (submit, runtime, size) in enumerate(rows)]
    model = SchedulingModel(make_workload(jobs), EasyPolicy(), ClusterPlatform(10, identities=False))
    record = model.run()
    from torus_sim.metrics.summary import job_table

    table = batsim_jobs(record, job_table(record.jobs), "random")
    sets = [ProcSet.from_str(text) for text in table["allocated_resources"]]
    assert all(len(ids) == size for ids, size in zip(sets, table["requested_number_of_resources"], strict=True))
    for i in range(len(table)):
        for j in range(i + 1, len(table)):
            overlap_in_time = (
                table["starting_time"][i] < table["finish_time"][j] and table["starting_time"][j] < table["finish_time"][i]
            )
            if overlap_in_time:
                assert not (sets[i] & sets[j]), (i, j)
    assert max(ids.max for ids in sets) < 10


# -- SWF out ----------------------------------------------------------------------------------


def test_the_swf_schedule_reads_back_and_a_failure_free_fcfs_replay_of_it_gives_the_same_starts(tmp_path):
    scenario = Scenario.make(
        "test", workload=str(SDSC), platform="cluster", nodes=128, policy="FCFS-EASY", failures="none", max_jobs=400
    )
    first = run(scenario)
    write_results(tmp_path / "a", first, swf=True)
    trace = read_swf(tmp_path / "a" / "schedule.swf")
    assert trace.header_int("MaxNodes") == 128 and "torus-sim" in trace.header["Computer"]
    assert "SDSC-SP2" in trace.header["Note"] and trace.header_int("UnixStartTime") > 0
    assert len(trace.records) == 400 and {record.status for record in trace.records} == {1}
    starts = {record.job_id: record.submit_time + record.wait_time for record in trace.records}
    expected = first.jobs.set_index("job_id")["started_at"]
    assert np.allclose([starts[job] for job in expected.index], expected.to_numpy(), rtol=0, atol=1e-6)
    again = run(scenario.model_copy(update={"workload": str(tmp_path / "a" / "schedule.swf"), "max_jobs": None}))
    replayed = again.jobs.set_index("job_id")["started_at"]
    assert np.allclose(replayed.loc[expected.index].to_numpy(), expected.to_numpy(), rtol=0, atol=1e-6)


def test_killed_attempts_are_status_0_lines_of_the_same_job():
    record, jobs = small_torus_run()
    from torus_sim.outputs.formats.swf_schedule import schedule_swf

    lines = [line.split() for line in schedule_swf(record, jobs, {"MaxNodes": "128"}).splitlines() if not line.startswith(";")]
    job_one = [line for line in lines if line[0] == "1"]
    assert [(line[10], line[3]) for line in job_one] == [("0", "40"), ("1", "100")]
    assert all(len(line) == 18 for line in lines)


# -- Batsim workloads in ------------------------------------------------------------------------


def batsim_workload(jobs, profiles=None, nb_res=16):
    profiles = profiles or {"p100": {"type": "delay", "delay": 100}, "p50": {"type": "delay", "delay": 50.5}}
    return {"nb_res": nb_res, "jobs": jobs, "profiles": profiles}


def test_a_batsim_workload_runs_with_the_swf_cleaning_rules(tmp_path):
    data = batsim_workload(
        [
            {"id": 1, "subtime": 0, "walltime": 200, "res": 8, "profile": "p100"},
            {"id": "2", "subtime": 10, "walltime": 60, "res": 16, "profile": "p50"},
            {"id": "w0!3", "subtime": 20, "res": 4, "profile": "p50"},
            {"id": 4, "subtime": 30, "walltime": 10, "res": 64, "profile": "p50"},  # larger than the machine
        ]
    )
    path = tmp_path / "workload.json.gz"
    path.write_bytes(gzip.compress(json.dumps(data).encode()))
    trace = read_batsim_workload(path)
    assert trace.header_int("MaxNodes") == 16 and [record.job_id for record in trace.records] == [1, 2, 3, 4]
    assert "numbered by position" in trace.header["Note"]
    workload = jobs_from_swf(trace, 16)
    assert [job.runtime for job in workload.jobs] == [100.0, 50.5, 50.5]
    assert workload.cleaning["skipped_too_large"] == 1 and workload.cleaning["walltime_from_runtime"] == 1
    result = run(Scenario.make("test", workload=str(path), platform="cluster", policy="FCFS-EASY", failures="none"))
    started = result.jobs.set_index("job_id")["started_at"].to_dict()
    assert started == {1: 0.0, 2: 100.0, 3: 20.0}  # J2 needs all 16 nodes: after J1; J3 backfills


@pytest.mark.parametrize(
    ("data", "error", "message"),
    [
        (
            '{"nb_res": 4, "jobs": [\n  {"id": 1,,}]}',
            WorkloadFormatError,
            r":2: malformed Batsim JSON line: not a Batsim JSON workload",
        ),
        ({"jobs": []}, InputFileError, "a JSON object with 'nb_res'"),
        (
            batsim_workload([{"id": 1, "subtime": 0, "res": 2, "profile": "nope"}]),
            InputFileError,
            "which 'profiles' does not define",
        ),
        (
            batsim_workload([{"id": 1, "subtime": 0, "res": 2, "profile": "ptask"}], {"ptask": {"type": "parallel_homogeneous"}}),
            InputFileError,
            "type 'parallel_homogeneous'; only 'delay' profiles",
        ),
        (batsim_workload([{"id": 1, "subtime": -5, "res": 2, "profile": "p100"}]), InputFileError, "subtime must be a number"),
        (batsim_workload([{"id": 1, "subtime": 0, "res": 2.5, "profile": "p100"}]), InputFileError, "res must be an integer"),
        (batsim_workload([{"id": 1, "subtime": 0, "profile": "p100"}]), InputFileError, "job 1 has no res"),
    ],
)
def test_bad_batsim_workloads_are_refused_naming_the_file(tmp_path, data, error, message):
    path = tmp_path / "w.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    with pytest.raises(error, match=message) as caught:
        read_batsim_workload(path)
    assert str(path) in str(caught.value)


# -- Parquet, the command line, progress ------------------------------------------------------------


def test_the_command_line_writes_every_format_from_any_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    code = main(["run", "--max-jobs", "200", "--batsim", "--swf", "--parquet", "--out", "out"])
    assert code == 0
    names = sorted(path.name for path in (tmp_path / "out").iterdir())
    assert names == [
        "batsim_jobs.csv",
        "batsim_jobs.parquet",
        "jobs.csv",
        "jobs.parquet",
        "schedule.swf",
        "summary.json",
    ]
    csv = pd.read_csv(tmp_path / "out" / "jobs.csv")
    parquet = pd.read_parquet(tmp_path / "out" / "jobs.parquet")
    # the CSV rounds times to the millisecond; the Parquet file keeps every digit (a failure's scaled timestamp)
    pd.testing.assert_frame_equal(csv, parquet, check_dtype=False, check_exact=False, atol=5e-4, rtol=0)
    assert (parquet["started_at"] != parquet["started_at"].round(3)).any()  # there are digits below the millisecond
    assert (csv["started_at"] == csv["started_at"].round(3)).all()
    assert parquet["job_id"].dtype == np.int64
    manifest = read_manifest(tmp_path / "out" / "batsim_jobs.parquet")
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary.pop("files") == sorted(path.name for path in (tmp_path / "out").iterdir())  # the folder's listing
    assert manifest == summary  # the run's manifest, in every Parquet file
    assert capsys.readouterr().err == ""  # no progress bar when standard error is not a terminal


def test_progress_changes_nothing_in_the_results():
    scenario = Scenario.make("test", max_jobs=500)
    assert run(scenario, progress=True).summary == run(scenario).summary


def test_a_sweep_also_writes_its_tables_as_parquet(tmp_path, capsys):
    from .test_fuzz_readers import SCENARIO

    path = tmp_path / "grid.toml"
    path.write_text(SCENARIO)
    assert main(["sweep", str(path), "--out", str(tmp_path / "out"), "--parquet", "--no-progress"]) == 0
    results = pd.read_parquet(tmp_path / "out" / "results.parquet")
    from_csv = pd.read_csv(tmp_path / "out" / "results.csv")
    assert list(results.columns) == list(from_csv.columns)
    numbers = from_csv.select_dtypes("number").columns
    pd.testing.assert_frame_equal(results[numbers].astype(float), from_csv[numbers].astype(float), atol=1e-9)
    assert sorted(results["priority"]) == ["LPT", "SPT"]
    assert read_manifest(tmp_path / "out" / "results.parquet") == {
        "scenario_file": str(path),
        "title": "fuzz",
        "reference": "none",
    }


@settings(max_examples=200, deadline=None)
@given(ids=st.sets(st.integers(0, 300), max_size=80))
def test_interval_text_is_procsets_text(ids):
    from torus_sim.machine.platforms.base import interval_text

    assert interval_text(sorted(ids, reverse=True)) == str(ProcSet(*ids))
