"""Maintenance windows (issue 77 §1): no job starts in a window, nor, drained, one whose requested time reaches into it."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from torus_sim.core.errors import ConfigurationError, InputFormatError
from torus_sim.core.job import Job
from torus_sim.engine.model import SchedulingModel
from torus_sim.experiments.runner import Scenario, build_model
from torus_sim.experiments.sweep import run_key
from torus_sim.inputs.maintenance import read_windows
from torus_sim.inputs.workload.jobs import Workload
from torus_sim.inputs.workload.logged import LoggedSchedule, idle_windows
from torus_sim.inputs.workload.sources import BUNDLED_NASA_LOG
from torus_sim.policies.catalog import ONLINE_POLICIES, POLICIES
from torus_sim.policies.rigid import ListPolicy

from .conftest import SHARED_DATA

CLUSTER_POLICIES = [name for name in ONLINE_POLICIES if name not in ("krevat", "balancing", "tiebreak")]


def _job(job_id: int, at: float, runtime: float, size: int, walltime: float | None = None) -> Job:
    return Job(job_id, at, runtime=runtime, walltime=runtime if walltime is None else walltime, size=size, user_id=job_id % 3)


def _starts(jobs, nodes: int, windows, policy: str, drain: bool = True):
    model = SchedulingModel(
        Workload(jobs=jobs, source="hand-made"), POLICIES.make(policy), nodes, maintenance=windows, maintenance_drain=drain
    )
    return model, model.run().jobs.set_index("job_id")


@pytest.mark.parametrize("policy", CLUSTER_POLICIES)
def test_a_drained_machine_starts_nothing_that_reaches_into_the_window(policy):
    # 4 nodes, a window 1000-2000: job 2 (800 s) would reach into it at 500 and waits for its end; job 3 (300 s)
    # fits before it and starts at 500; job 4 comes during the window and starts after job 2
    jobs = [_job(1, 0, 500, 4), _job(2, 0, 800, 4), _job(3, 100, 300, 4), _job(4, 1500, 100, 4)]
    model, table = _starts(jobs, 4, [(1000.0, 2000.0)], policy)
    assert table["started_at"].to_dict() == {1: 0.0, 3: 500.0, 2: 2000.0, 4: 2800.0}
    assert model.counters["jobs_held_for_maintenance"] == 2 and model.scheduler.maintenance.held == 0


@pytest.mark.parametrize("policy", ["FCFS", "FCFS-EASY", "conservative"])
def test_an_outage_holds_jobs_only_while_it_lasts(policy):
    # undrained: job 2 starts at 500 and runs into the window; job 4, submitted in it, starts at its end
    jobs = [_job(1, 0, 500, 4), _job(2, 0, 800, 4), _job(3, 100, 300, 4), _job(4, 1500, 100, 4)]
    _, table = _starts(jobs, 4, [(1000.0, 2000.0)], policy, drain=False)
    assert table["started_at"].to_dict() == {1: 0.0, 2: 500.0, 3: 1300.0 + 700.0, 4: 2300.0}


@settings(max_examples=40, deadline=None)
@given(
    submits=st.lists(st.integers(0, 20_000), min_size=1, max_size=20),
    sizes=st.lists(st.integers(1, 8), min_size=20, max_size=20),
    runtimes=st.lists(st.integers(1, 3000), min_size=20, max_size=20),
    windows=st.lists(st.tuples(st.integers(0, 25_000), st.integers(1, 5000)), min_size=1, max_size=4),
    policy=st.sampled_from([*CLUSTER_POLICIES, "krevat"]),
    drain=st.booleans(),
)
def test_no_job_starts_in_a_window_and_drained_none_reaches_into_one(submits, sizes, runtimes, windows, policy, drain):
    jobs = [_job(i + 1, float(at), float(runtimes[i]), sizes[i]) for i, at in enumerate(sorted(submits))]
    spans = [(float(start), float(start + length)) for start, length in windows]
    torus = policy == "krevat"
    model = SchedulingModel(
        Workload(jobs=jobs, source="drawn"),
        POLICIES.make(policy),
        None if torus else 8,
        maintenance=spans,
        maintenance_drain=drain,
    )
    table = model.run().jobs
    assert len(table) == len(jobs) and table["finished_at"].notna().all()
    merged = model.scheduler.maintenance.windows
    started = table["started_at"].to_numpy()
    walltime = table["walltime"].to_numpy()
    for start, end in merged:
        assert not np.any((started >= start) & (started < end))
        if drain:
            assert not np.any((started < start) & (started + walltime > start))


def test_the_log_records_its_idle_spans():
    # job 1 runs 0-100; job 2 (submitted at 50) waits until 5000 while nothing runs from 100: one span 100-5000;
    # job 3 waits 6000-6100 while job 2 runs (busy: no span); a cancelled line that never ran counts for nothing
    schedule = LoggedSchedule(
        path="hand-made",
        sha256="",
        job_id=np.array([1, 2, 3, 4]),
        submitted_at=np.array([0.0, 50.0, 6000.0, 10.0]),
        wait=np.array([0.0, 4950.0, 100.0, 9000.0]),
        run_time=np.array([100.0, 2000.0, 10.0, 0.0]),
        processors=np.array([1, 1, 1, 1]),
        status=np.array([1, 1, 1, 5]),
        machine=4,
        unix_start_time=None,
        time_zone=None,
        scheduler_notes=(),
    )
    assert idle_windows(schedule, 3600.0).tolist() == [[100.0, 5000.0]]
    assert idle_windows(schedule, 5000.0).tolist() == []
    with pytest.raises(ValueError, match="positive"):
        idle_windows(schedule, 0.0)


@pytest.mark.skipif(not (SHARED_DATA / "swf").is_dir(), reason=f"needs the logs under {SHARED_DATA}")
def test_ctc_sp2_ran_nothing_for_its_first_90_hours_and_a_run_with_its_windows_starts_nothing_in_them():
    scenario = Scenario(
        workload="pwa:CTC-SP2", platform="cluster", failures="none", policy="FCFS-EASY", max_jobs=3000, maintenance="inferred"
    )
    model = build_model(scenario, {})
    windows = model.scheduler.maintenance.windows
    assert len(windows) == 28 and windows[0, 0] == 0.0 and windows[0, 1] == pytest.approx(90.21 * 3600, abs=60)
    table = model.run().jobs
    assert table["started_at"].min() >= windows[0, 1]  # the log's first jobs waited out the first 90 hours


def test_a_window_file_is_read_and_a_bad_line_is_named(tmp_path):
    good = tmp_path / "windows.csv"
    good.write_text("start,end\n# the March maintenance\n1000,2000\n\n5000, 5600  # a reboot\n")
    assert read_windows(good).tolist() == [[1000.0, 2000.0], [5000.0, 5600.0]]
    for text, reason in (
        ("1000\n", "two numbers"),
        ("a,b\n", "in seconds"),
        ("2000,1000\n", "start < end"),
        ("-5,10\n", "start < end"),
    ):
        bad = tmp_path / "bad.csv"
        bad.write_text("1,2\n" + text)
        with pytest.raises(InputFormatError, match=f"bad.csv:2: .*{reason}"):
            read_windows(bad)


def test_windows_are_scenario_fields_that_leave_earlier_keys_and_are_refused_where_they_mean_nothing(tmp_path):
    plain = Scenario(workload=str(BUNDLED_NASA_LOG), platform="cluster", policy="FCFS-EASY", max_jobs=500)
    windows = tmp_path / "windows.csv"
    windows.write_text("100000,200000\n")
    with_file = plain.replace(maintenance=str(windows))
    assert plain.maintenance is None and run_key(plain) != run_key(with_file)
    assert run_key(with_file) != run_key(with_file.replace(maintenance_drain=False))
    model = build_model(with_file, {})
    table = model.run().jobs
    started = table["started_at"].to_numpy()
    assert not np.any((started >= 100000) & (started < 200000))
    with pytest.raises(ConfigurationError, match="need maintenance windows"):
        build_model(plain.replace(maintenance_min_length=600.0), {})
    with pytest.raises(ConfigurationError, match="inferred.* only"):
        build_model(with_file.replace(maintenance_min_length=600.0), {})
    with pytest.raises(ConfigurationError, match="c = 1"):
        build_model(plain.replace(maintenance="inferred", load_scale=1.2), {})
    with pytest.raises(ConfigurationError, match="not a log file"):
        build_model(
            Scenario(workload="lublin", platform="cluster", nodes=64, policy="FCFS-EASY", max_jobs=200, maintenance="inferred"),
            {},
        )
    with pytest.raises(ConfigurationError, match="maintenance windows: .* plans after each attempt end"):
        SchedulingModel(
            Workload(jobs=[_job(1, 0.0, 10.0, 1)], source="one", kind="batch"), ListPolicy(), 4, maintenance=[(5.0, 6.0)]
        )
    with pytest.raises(ConfigurationError, match="finite start before its end"):
        SchedulingModel(Workload(jobs=[_job(1, 0.0, 10.0, 1)], source="one"), POLICIES.make("FCFS"), 4, maintenance=[(6.0, 5.0)])


def test_the_runs_inputs_name_its_windows_as_built(tmp_path):
    from torus_sim.experiments.runner import run

    windows = tmp_path / "windows.csv"
    windows.write_text("100000,200000\n300000,300600\n")
    plain = Scenario(workload=str(BUNDLED_NASA_LOG), platform="cluster", policy="FCFS-EASY", max_jobs=300)
    assert "maintenance" not in run(plain).inputs  # a run without windows records as before
    recorded = run(plain.replace(maintenance=str(windows))).inputs["maintenance"]
    assert recorded["windows"] == 2 and recorded["hours"] == pytest.approx(100600 / 3600, abs=1e-3)
    assert recorded["drain"] is True and len(recorded["sha256"]) == 64


def test_a_run_that_reads_its_log_for_windows_and_groups_reads_it_once(tmp_path, monkeypatch):
    # the readings of the log (the logged schedule's idle spans, the groups of a fair share by group) come from the
    # same pass over the file as the jobs: the trace read for the jobs holds their fields; a second model built from
    # the same inputs reads it again (the first took it)
    from torus_sim.inputs.workload import logged, trace_sources

    reads = []
    real = trace_sources.read_swf

    def counted(path, fields=None):
        reads.append(tuple(fields or ()))
        return real(path, fields)

    monkeypatch.setattr(trace_sources, "read_swf", counted)
    monkeypatch.setattr(logged, "read_swf", counted)
    scenario = Scenario(
        workload="bundled",
        platform="cluster",
        failures="none",
        policy="FCFS-EASY",
        max_jobs=300,
        maintenance="inferred",
        priority_weight_fairshare=1.0,
        priority_fairshare_by="group",
    )
    inputs: dict = {}
    first = build_model(scenario, inputs)
    assert len(reads) == 1 and {"wait_time", "group_id"} <= set(reads[0]), reads
    assert inputs["workload"].log is None  # taken by the readings
    second = build_model(scenario, inputs)
    assert len(reads) == 2
    assert np.array_equal(first.scheduler.maintenance.windows, second.scheduler.maintenance.windows)
    assert first.run().jobs.equals(second.run().jobs)
