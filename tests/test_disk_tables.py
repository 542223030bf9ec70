"""The record's tables held a chunk at a time in memory and the rest on disk: the same values read back."""

from __future__ import annotations

import gc
import math
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import torus_sim.core.disk_tables as disk_tables
from torus_sim.core.disk_tables import GrowingTable, SpillFolder, TableSnapshot
from torus_sim.experiments.runner import Scenario, run
from torus_sim.metrics.summary import job_table, record_job_table

from .test_input_errors import SDSC

TYPES = {"time": "d", "count": "q", "flag": "?"}
COLUMNS = ["time", "count", "flag", "outcome"]

rows_strategy = st.lists(
    st.tuples(
        st.floats(allow_nan=True, allow_infinity=True),
        st.integers(-(2**63), 2**63 - 1),
        st.booleans(),
        st.sampled_from(["completed", "killed", "", "0-3 7", "12"]),
    ),
    max_size=40,
)


def _table(spill_rows: int) -> GrowingTable:
    return GrowingTable("t", COLUMNS, TYPES, ("outcome",), SpillFolder(), spill_rows)


def _same(read, expected) -> bool:
    """Bit for bit (NaN included) for floats, equal for the rest."""
    if isinstance(read, np.ndarray) and read.dtype.kind == "f":
        return np.array_equal(read.view(np.int64), np.array(expected, dtype=np.float64).view(np.int64))
    return list(read) == list(expected)


@settings(max_examples=60, deadline=None)
@given(rows=rows_strategy, spill_rows=st.integers(1, 9), first=st.integers(0, 45), cut=st.integers(0, 45))
def test_columns_read_back_bit_for_bit_whatever_went_to_disk(rows, spill_rows, first, cut):
    table = _table(spill_rows)
    cut = min(cut, len(rows))
    for index, (time, count, flag, outcome) in enumerate(rows):
        if index == cut:
            early = table.snapshot()
        table.add({"time": time, "count": count, "flag": flag, "outcome": outcome})
    if cut == len(rows):
        early = table.snapshot()
    assert len(table) == len(rows) and table.on_disk == len(rows) - len(rows) % spill_rows
    whole = table.snapshot()
    for position, name in enumerate(COLUMNS):
        values = [row[position] for row in rows]
        column = whole.column(name)
        assert _same(column, values), name
        if name in TYPES:
            assert column.dtype == np.dtype(TYPES[name])
        assert _same(whole.column(name, first), values[first:])
        assert _same(early.column(name), values[:cut])  # rows added after a snapshot are not in it
    sliced = table.rows(min(first, len(rows)), len(rows))
    assert _same(sliced["count"], [row[1] for row in rows][first:])
    some = table.rows(min(first, len(rows)), len(rows), ("outcome", "time"))  # only the columns asked for
    assert list(some) == ["outcome", "time"] and _same(some["time"], [row[0] for row in rows][first:])


@settings(max_examples=60, deadline=None)
@given(rows=rows_strategy, spill_rows=st.integers(1, 9), settled=st.integers(0, 45), first=st.integers(0, 45))
def test_rows_added_one_at_a_time_read_the_same_before_they_settle(rows, spill_rows, settled, first):
    """add_row's rows wait in a list until 512 of them or a read settles them: rows() of only waiting rows reads them
    there (the learning environment's reward after each step), typed as the settled columns are."""
    table, twin = _table(spill_rows), _table(spill_rows)
    settled = min(settled, len(rows))
    for index, row in enumerate(rows):
        table.add_row(row)
        twin.add_row(row)
        if index + 1 == settled:
            len(twin.snapshot())  # settles the rows so far (a snapshot reads them)
            table.snapshot()
    assert len(table) == len(rows)
    first = min(max(first, settled), len(rows))
    waiting = table.rows(first, len(rows))  # only rows not yet settled when first >= settled
    twin.spill()
    whole = twin.rows(first, len(rows))
    for name in COLUMNS:
        assert _same(waiting[name], whole[name]), name
        if name in TYPES and len(rows) > first:
            assert waiting[name].dtype == whole[name].dtype
    with pytest.raises(KeyError):
        table.rows(first, len(rows), ("nope",))


def test_text_read_from_disk_is_one_object_per_distinct_value():
    table = _table(2)
    for outcome in ["completed", "killed", "completed", "completed", "killed"]:
        table.add({"time": 0.0, "count": 1, "flag": False, "outcome": outcome})
    outcomes = table.snapshot().column("outcome")
    assert outcomes == ["completed", "killed", "completed", "completed", "killed"]
    assert outcomes[0] is outcomes[2] is outcomes[3]


def test_a_table_with_other_python_values_never_goes_to_disk():
    table = GrowingTable("failures", ["time", "node"], {}, (), SpillFolder(), 2)
    for node in range(5):
        table.add({"time": float(node), "node": node})
    assert table.on_disk == 0 and table.folder is None
    assert table.snapshot().column("node") == [0, 1, 2, 3, 4]


def test_the_folder_is_made_at_the_first_chunk_and_removed_with_the_last_reference():
    folder = SpillFolder()
    table = GrowingTable("t", COLUMNS, TYPES, ("outcome",), folder, 3)
    for count in range(2):
        table.add({"time": 1.0, "count": count, "flag": True, "outcome": "x"})
    assert folder._folder is None  # a short table writes nothing
    table.add({"time": 1.0, "count": 2, "flag": True, "outcome": "x"})
    path = Path(folder._folder.name)
    assert sorted(file.name for file in path.iterdir()) == ["t.count", "t.flag", "t.outcome", "t.time"]
    snapshot = table.snapshot()
    del table, folder
    gc.collect()
    assert path.exists()  # the snapshot still reads from it
    assert snapshot.column("count").tolist() == [0, 1, 2]
    del snapshot
    gc.collect()
    assert not path.exists()


def test_a_view_is_shared_only_once_the_table_takes_no_more_rows():
    table = _table(100)
    table.add({"time": 1.5, "count": 1, "flag": True, "outcome": "x"})
    copied = TableSnapshot(table, 1).column("time")
    table.add({"time": 2.5, "count": 2, "flag": False, "outcome": "y"})  # an exported buffer would refuse this
    shared = TableSnapshot(table, 2, shared=True).column("time")
    assert copied.tolist() == [1.5] and shared.tolist() == [1.5, 2.5]
    assert np.shares_memory(shared, np.frombuffer(table.memory["time"], dtype=np.float64))


@pytest.fixture(scope="module")
def runs():
    """One torus run with failures (kills, several attempts) recorded with chunks of 7 rows and with the default."""
    scenario = Scenario(workload=str(SDSC), max_jobs=1500, failures="synthetic:300", seed=4)
    default = run(scenario)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(disk_tables, "SPILL_ROWS", 7)
        chunked = run(scenario)
    return default, chunked


def test_a_run_recorded_in_chunks_of_7_rows_has_the_same_tables_summary_and_job_table(runs):
    default, chunked = runs
    assert chunked.record.count("attempts") > chunked.record.count("jobs") > 1000  # kills: more attempts than jobs
    for name in ("jobs", "attempts", "capacity", "failures", "migrations"):
        pd.testing.assert_frame_equal(getattr(default.record, name), getattr(chunked.record, name))
    assert default.summary.keys() == chunked.summary.keys()
    assert all(
        value == chunked.summary[key] or (math.isnan(value) and math.isnan(chunked.summary[key]))
        for key, value in default.summary.items()
    )
    pd.testing.assert_frame_equal(default.jobs, chunked.jobs)


def test_the_job_table_read_column_by_column_is_the_sorted_tables(runs):
    _, chunked = runs
    record = chunked.record
    expected = job_table(record.jobs, 7.0, "printed")
    pd.testing.assert_frame_equal(record_job_table(record, 7.0, "printed"), expected)
    assert expected["job_id"].is_monotonic_increasing and not record.jobs["job_id"].is_monotonic_increasing


def test_a_record_reads_only_the_columns_asked_for(monkeypatch):
    monkeypatch.setattr(disk_tables, "SPILL_ROWS", 7)
    record = run(Scenario(workload=str(SDSC), max_jobs=200, failures="synthetic:50", seed=4)).record
    assert isinstance(record.__dict__["_jobs"], TableSnapshot)  # the run read columns only: no table built
    waits = record.columns("jobs", ["started_at", "submitted_at"])
    assert list(waits.columns) == ["started_at", "submitted_at"]
    assert isinstance(record.__dict__["_jobs"], TableSnapshot)
    assert record.count("jobs") == 200 and record.has_column("capacity", "free")
    assert not record.has_column("jobs", "wait_time")
    assert record.column("jobs", "kills").dtype == np.int64
    assert isinstance(record.jobs, pd.DataFrame) and record.jobs is record.jobs  # built once, when asked for
    with pytest.raises(KeyError, match="no table"):
        record.count("passes")


def test_jobs_csv_read_from_the_record_a_piece_at_a_time_is_the_whole_tables_bytes(runs):
    import io

    from torus_sim.metrics.summary import JobTableRows
    from torus_sim.outputs.output_columns import csv_writer

    _, chunked = runs
    record = chunked.record
    expected = io.BytesIO()
    csv_writer("jobs", job_table(record.jobs))(expected)
    pieces = JobTableRows(record)
    assert pieces.columns == list(job_table(record.jobs).columns) and len(pieces) == record.count("jobs")
    for rows in (1, 13, 10**6):
        written = io.BytesIO()
        csv_writer("jobs", pieces, rows)(written)
        assert written.getvalue() == expected.getvalue(), rows
    pd.testing.assert_frame_equal(pieces.frame(), job_table(record.jobs))


def test_a_record_or_a_result_made_without_a_table_has_none_or_an_empty_one():
    from torus_sim.engine.record import SimulationRecord
    from torus_sim.experiments.runner import RunResult

    record = SimulationRecord(None, None, None, None, 4, {}, 0.0, "cluster")
    assert record.migrations is None and record.jobs is None and record.count("jobs") == 0
    assert not record.has_column("capacity", "time")
    result = RunResult(Scenario(), {})
    assert result.record is None and result.rows_in("scenarios") == 0 and result.rows_in("power") == 0
    assert result.jobs.empty and result.power.empty and result.inputs == {}


def test_a_dead_processs_record_folder_is_removed_and_a_running_ones_kept(tmp_path):
    # a process killed (or a worker ended by os._exit) leaves its record folder: the next one removes it
    import os
    import subprocess
    import sys

    from torus_sim.core.disk_tables import FOLDER_PREFIX, remove_stale_folders

    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    dead = tmp_path / f"{FOLDER_PREFIX}{int(ended.stdout)}-abc"
    alive = tmp_path / f"{FOLDER_PREFIX}{os.getpid()}-def"
    other = tmp_path / "torus-sim-results"
    for folder in (dead, alive, other):
        folder.mkdir()
        (folder / "jobs.time").write_bytes(b"12345678")
    assert remove_stale_folders(tmp_path) == [dead]
    assert not dead.exists() and alive.exists() and other.exists()


def test_a_folder_whose_process_id_was_given_to_a_later_process_is_removed(tmp_path):
    """Issue 78 §7: process ids are recycled; a folder last written before its id's process started is not that
    process's (it ran before), so it goes; the same id's folder written since stays."""
    import os

    from torus_sim.core.disk_tables import FOLDER_PREFIX, remove_stale_folders

    recycled = tmp_path / f"{FOLDER_PREFIX}{os.getpid()}-old"
    mine = tmp_path / f"{FOLDER_PREFIX}{os.getpid()}-new"
    for folder in (recycled, mine):
        folder.mkdir()
        (folder / "jobs.time").write_bytes(b"12345678")
    os.utime(recycled, (1_000_000_000, 1_000_000_000))  # 2001: before this process started
    assert remove_stale_folders(tmp_path) == [recycled]
    assert mine.exists()


def test_a_run_too_short_to_write_a_table_still_clears_what_a_killed_run_left(tmp_path, monkeypatch):
    """Issue 78 §7: a run killed with SIGKILL leaves its record folder; the next run, even one that keeps every table in
    memory, removes it at its start."""
    import signal
    import subprocess
    import sys
    import tempfile

    from torus_sim.core.disk_tables import FOLDER_PREFIX

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)
    monkeypatch.setattr(disk_tables, "_STALE_CHECKED", False)
    code = (
        "import os, tempfile, time\n"
        f"folder = tempfile.mkdtemp(prefix='{FOLDER_PREFIX}' + str(os.getpid()) + '-')\n"
        "open(os.path.join(folder, 'jobs.time'), 'wb').write(b'x' * 4096)\n"
        "print(folder, flush=True)\n"
        "time.sleep(60)\n"
    )
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env={**os.environ})
    left = Path(child.stdout.readline().strip())
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert left.exists() and left.parent == tmp_path
    run(Scenario(max_jobs=20, failures="none"))
    assert not left.exists()


def test_a_record_on_disk_pickles_with_its_rows_and_reads_without_its_folder(monkeypatch):
    # a result sent to another process (or kept) must not point at files its process removes at exit
    import pickle
    import shutil

    monkeypatch.setattr(disk_tables, "SPILL_ROWS", 7)
    result = run(Scenario(workload=str(SDSC), max_jobs=150, failures="synthetic:40", seed=4))
    record = result.record
    folder = record.__dict__["_jobs"].table.folder._folder.name
    copy = pickle.loads(pickle.dumps(result))
    shutil.rmtree(folder)  # the first process's files gone (its exit)
    assert copy.record.__dict__["_jobs"].table.folder is None
    for name in ("jobs", "attempts", "capacity"):
        assert copy.record.count(name) == record.count(name) > 100
    assert copy.summary == result.summary
    pd.testing.assert_frame_equal(copy.jobs, job_table(copy.record.jobs))
    assert copy.record.attempts["outcome"].isin(["completed", "killed"]).all()


def test_pv_easys_columns_from_the_record_are_its_job_tables(monkeypatch):
    # the summary and a sweep's size groups read online_columns (numpy, from the record's columns); the same
    # values as the DataFrame reading of the whole job and pass tables, in the same (submission) order
    from torus_sim.metrics.families import online_columns
    from torus_sim.metrics.online import job_table as online_job_table
    from torus_sim.metrics.online import size_group_table

    monkeypatch.setattr(disk_tables, "SPILL_ROWS", 7)
    scenario = Scenario(platform="cluster", nodes=128, workload=str(SDSC), max_jobs=1500, policy="FCFS-EASY", failures="none")
    record = run(scenario).record
    assert record.has_column("capacity", "head_job")
    blocked = []
    for reading in ("backfilled", "shadow"):
        expected = online_job_table(record.jobs, record.capacity, reading)
        columns = online_columns(record, reading)
        blocked.append(int(expected["blocked"].sum()))
        for name in ("job_id", "submitted_at", "blocked", "fair_start_at", "violated_at", "wait", "bounded_slowdown"):
            np.testing.assert_array_equal(columns[name], expected[name].to_numpy(), err_msg=name)
        groups = pd.DataFrame({name: columns[name] for name in ("size", "blocked", "bounded_slowdown")})
        pd.testing.assert_frame_equal(
            size_group_table(groups, record.capacity_total), size_group_table(expected, record.capacity_total)
        )
    assert min(blocked) > 10  # the fairness columns were exercised


def test_a_sweep_run_leaves_no_record_folder_behind(monkeypatch, tmp_path):
    # a sweep worker's model and record are in reference cycles: without a collection at the end of the run its
    # folder stayed until the garbage collector ran, and a worker process that ended first left it in TMPDIR
    import os

    from torus_sim.experiments.sweep import run_row

    monkeypatch.setattr(disk_tables, "SPILL_ROWS", 7)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(disk_tables.tempfile, "tempdir", None)  # TMPDIR read again
    done = run_row(Scenario(workload=str(SDSC), max_jobs=120, failures="none"))
    assert done["row"]["jobs"] == 120
    assert not list(tmp_path.glob(f"{disk_tables.FOLDER_PREFIX}{os.getpid()}-*"))
