"""The machine's effective size over time (issue 77 §1): spans in which only part of the machine is there to use."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from failure_logs.events import FailureLog
from torus_sim.core.errors import ConfigurationError, EffectiveSizeFormatError, SimulationError
from torus_sim.core.job import Job
from torus_sim.engine.effective_size import size_spans
from torus_sim.engine.model import SchedulingModel
from torus_sim.experiments.runner import Scenario, build_model
from torus_sim.experiments.sweep import run_key
from torus_sim.inputs.effective_size import inferred_spans, read_spans
from torus_sim.inputs.workload.jobs import Workload
from torus_sim.inputs.workload.logged import SCHEDULE_FIELDS, busy_peaks, logged_schedule
from torus_sim.inputs.workload.sources import workload_source
from torus_sim.inputs.workload.swf import read_swf
from torus_sim.machine.platforms.cluster import ClusterPlatform
from torus_sim.policies.catalog import ONLINE_POLICIES, POLICIES
from torus_sim.policies.easy import EasyPolicy
from torus_sim.policies.rigid import ListPolicy

CLUSTER_POLICIES = [name for name in ONLINE_POLICIES if name not in ("krevat", "balancing", "tiebreak")]


def _job(job_id: int, at: float, runtime: float, size: int = 1) -> Job:
    return Job(job_id, at, runtime=runtime, walltime=runtime, size=size, user_id=1)


def _run(jobs, nodes: int, policy=None, **engine):
    model = SchedulingModel(Workload(jobs=jobs, source="hand-made"), policy or EasyPolicy(), nodes, **engine)
    return model, model.run().jobs.set_index("job_id")


def test_a_span_holds_nodes_out_as_they_free_and_gives_them_back_at_its_end():
    # 4 nodes; from 100 s to 1000 s only 2. Job 1 (2 nodes, 0-500) and job 2 (1 node, 50-150) run at the span's
    # start: one node is free and held at 100, job 2's node is held when it ends at 150 (nothing is killed). Job 3 (2
    # nodes, at 150) waits for job 1's end at 500; job 4 (1 node, at 160) finds no node beside job 3 and starts at
    # job 3's end, 600; job 5 (4 nodes, at 170) waits for the span's end at 1000. Held: 900 s + 850 s = 1750 node-s.
    jobs = [_job(1, 0, 500, 2), _job(2, 50, 100), _job(3, 150, 100, 2), _job(4, 160, 100), _job(5, 170, 2000, 4)]
    model, table = _run(jobs, 4, effective_size=[(100.0, 1000.0, 2)])
    assert table["started_at"].to_dict() == {1: 0.0, 2: 50.0, 3: 500.0, 4: 600.0, 5: 1000.0}
    assert model.counters["node_hours_held_out"] == pytest.approx(1750 / 3600)
    assert model.passes.held_nodes.held == []  # all given back
    # without the span: job 3 starts at 150 beside job 1, job 4 at its end (250), job 5 at 500
    _, free = _run(jobs, 4)
    assert free["started_at"].to_dict() == {1: 0.0, 2: 50.0, 3: 150.0, 4: 250.0, 5: 500.0}


def test_easy_plans_the_nodes_back_at_the_spans_end():
    # 4 nodes, 2 usable until 1000 s. Job 1 (2 nodes, 0-2000) holds both; job 2 (4 nodes) is the head: EASY's shadow is
    # at job 1's end (2000 s), when all 4 are there again; job 3 (2 nodes, 500 s) fits from 1000 s (the span's end)
    # and ends at 1500, before the shadow: backfilled at 1000 s
    jobs = [_job(1, 0, 2000, 2), _job(2, 10, 100, 4), _job(3, 20, 500, 2)]
    _, table = _run(jobs, 4, effective_size=[(0.0, 1000.0, 2)])
    assert table["started_at"].to_dict() == {1: 0.0, 2: 2000.0, 3: 1000.0}


@pytest.mark.parametrize("policy", ["FCFS-EASY", "conservative"])
def test_easy_counts_the_held_nodes_back_in_its_shadow_on_a_count_cluster(policy):
    # 4 nodes, 2 usable until 1000 s, no node ids kept. Job 1 (1 node, 0-3000) runs; job 2 (3 nodes) is the head:
    # the 2 held nodes back at 1000 s make 3 free, its shadow time, with no extra node. Job 3 (1 node, 1500 s) would
    # run past it on a node the head needs: not backfilled, it starts at job 2's end (1100 s). A shadow that forgot
    # the held nodes' return would be never (job 1's end frees 2 of 3) and backfill job 3 at once. Conservative
    # backfilling reserves job 2 there and starts job 3 at its end as well
    jobs = [_job(1, 0, 3000, 1), _job(2, 10, 100, 3), _job(3, 20, 1500, 1)]
    model, table = _run(jobs, 4, POLICIES.make(policy), effective_size=[(0.0, 1000.0, 2)])
    assert model.platform.counts_only
    assert table["started_at"].to_dict() == {1: 0.0, 2: 1000.0, 3: 1100.0}


def test_a_failure_of_a_held_node_ends_its_downtime_when_the_node_returns():
    # 4 nodes, 3 usable from 0 to 1000: node 3 is held. It fails at 200 with a repair at 300, while held: the repair
    # finds it held (it stays out) and its downtime closes when the span gives it back at 1000 (800 s); a second
    # failure at 1500 (repair 1600) then counts 100 s more, not from the first failure on
    jobs = [_job(1, 0, 100, 1), _job(2, 1400, 400, 1)]
    failures = FailureLog(np.array([200.0, 1500.0]), np.array([3, 3]), np.array([300.0, 1600.0]))
    model = SchedulingModel(
        Workload(jobs=jobs, source="hand-made"), EasyPolicy(), 4, failures, downtime="log", effective_size=[(0.0, 1000.0, 3)]
    )
    model.run()
    agent = model.node_agents[3]
    assert agent.downtime == pytest.approx(800.0 + 100.0) and np.isnan(agent.down_since)


def _drawn(submits, sizes, lengths, spans):
    """Jobs every 10 s of the drawn submits, and the drawn spans that do not overlap an earlier one (10 s units)."""
    jobs = [_job(index + 1, at * 10.0, lengths[index] * 10.0, sizes[index]) for index, at in enumerate(sorted(submits))]
    chosen, last_end = [], -1.0
    for start, length, nodes in sorted(spans):
        if start * 10.0 >= last_end:
            chosen.append((start * 10.0, (start + length) * 10.0, nodes))
            last_end = (start + length) * 10.0
    return jobs, chosen


@settings(max_examples=30, deadline=None)
@given(
    submits=st.lists(st.integers(0, 400), min_size=1, max_size=20),
    sizes=st.lists(st.integers(1, 8), min_size=20, max_size=20),
    lengths=st.lists(st.integers(1, 60), min_size=20, max_size=20),
    spans=st.lists(st.tuples(st.integers(0, 300), st.integers(1, 200), st.integers(1, 8)), min_size=1, max_size=3),
    policy=st.sampled_from(CLUSTER_POLICIES),
)
def test_no_job_starts_into_more_than_the_effective_size_under_any_cluster_policy(submits, sizes, lengths, spans, policy):
    jobs, chosen = _drawn(submits, sizes, lengths, spans)
    _, table = _run(jobs, 8, POLICIES.make(policy), effective_size=chosen)
    assert len(table) == len(jobs) and table["finished_at"].notna().all()
    begun, ended, size = table["started_at"].to_numpy(), table["finished_at"].to_numpy(), table["size"].to_numpy()
    for start, end, nodes in chosen:
        for at in np.unique(begun[(begun >= start) & (begun < end)]):
            busy = size[(begun <= at) & (ended > at)].sum()  # after every start of that instant
            assert busy <= nodes, (policy, start, end, nodes, at, busy)


@settings(max_examples=40, deadline=None)
@given(
    submits=st.lists(st.integers(0, 400), min_size=1, max_size=20),
    sizes=st.lists(st.integers(1, 8), min_size=20, max_size=20),
    lengths=st.lists(st.integers(1, 60), min_size=20, max_size=20),
    spans=st.lists(st.tuples(st.integers(0, 300), st.integers(1, 200), st.integers(1, 8)), min_size=1, max_size=3),
    policy=st.sampled_from(CLUSTER_POLICIES),
)
def test_spans_held_as_counts_make_the_schedule_node_identities_make(submits, sizes, lengths, spans, policy):
    # an effective size's spans need no node ids on a cluster: held as counts (hold_out until the span's end, rows of
    # repairs_ahead), every policy starts every job when the same run with node identities (nodes taken down by id)
    # starts it, and the held node-hours are the same
    jobs, chosen = _drawn(submits, sizes, lengths, spans)
    counted, by_count = _run(
        [_job(job.job_id, job.submitted_at, job.runtime, job.size) for job in jobs],
        8,
        POLICIES.make(policy),
        effective_size=chosen,
    )
    assert counted.platform.counts_only
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("torus_sim.engine.model._held_by_id", lambda held: held is not None)
        identified, by_id = _run(jobs, 8, POLICIES.make(policy), effective_size=chosen)
    assert identified.platform.tracks_nodes
    columns = ["started_at", "finished_at"]
    assert by_count[columns].equals(by_id[columns]), policy
    assert counted.counters["node_hours_held_out"] == pytest.approx(identified.counters["node_hours_held_out"])


def test_a_count_cluster_holds_nodes_until_an_end_and_plans_them_back():
    platform = ClusterPlatform(8, identities=False)
    platform.allocate(3, job_id=1)
    platform.hold_out(2, 500.0)
    platform.hold_out(1, 500.0)
    platform.hold_out(1, 200.0)
    platform.hold_out(1)  # for good: no row
    assert (platform.free, platform.held_out, platform.returning) == (0, 5, {200.0: 1, 500.0: 3})
    assert platform.repairs_ahead() == [(200.0, -1), (500.0, -1), (500.0, -1), (500.0, -1)]
    platform.give_back(1, 200.0)
    assert (platform.free, platform.held_out, platform.returning) == (1, 4, {500.0: 3})
    with pytest.raises(SimulationError, match="3 are held until 500"):
        platform.give_back(4, 500.0)
    with pytest.raises(SimulationError, match="cannot hold 2 nodes out of 1 free"):
        platform.hold_out(2, 900.0)
    with pytest.raises(SimulationError, match="counts only"):
        ClusterPlatform(8).give_back(1, 500.0)


def test_sdsc_sp2_never_used_more_than_115_of_its_128_processors_for_seven_months():
    source = workload_source("pwa:SDSC-SP2", {})
    schedule = logged_schedule(read_swf(source.path, fields=SCHEDULE_FIELDS))
    peaks = busy_peaks(schedule, 30 * 86_400.0)
    assert peaks[:7].tolist() == [115] * 7 and peaks[7] > 128  # cancelled lines left out; status 0 lines overlap
    assert inferred_spans(schedule, 128).tolist() == [[0.0, 7 * 30 * 86_400.0, 115.0]]
    assert inferred_spans(schedule, 64).tolist() == [[0.0, 7 * 30 * 86_400.0, 57.0]]  # a share of another machine


def test_an_inferred_size_on_a_replay_of_sdsc_sp2_and_the_torus_from_a_file(tmp_path):
    plain = Scenario.make(workload="pwa:SDSC-SP2", max_jobs=2000, platform="cluster", policy="FCFS-EASY")
    sized = plain.replace(effective_size="inferred")
    assert run_key(plain) != run_key(sized)
    model = build_model(sized)
    assert size_spans(model.passes.held_nodes.reservations, 128) == [[0.0, 7 * 30 * 86_400.0, 115.0]]
    table = model.run().jobs
    assert model.counters["node_hours_held_out"] > 0
    free = build_model(plain).run().jobs
    waits = (table["first_started_at"] - table["submitted_at"]).mean()
    assert waits > (free["first_started_at"] - free["submitted_at"]).mean()  # 13 processors fewer: longer waits
    # the torus: 96 of the 128 supernodes for the first ten days, from a file
    spans = tmp_path / "sizes.csv"
    spans.write_text("start,end,nodes\n0,864000,96  # a comment\n")
    torus = build_model(Scenario.make(workload="pwa:SDSC-SP2", max_jobs=300, failures="none", effective_size=str(spans)))
    jobs = torus.run().jobs
    first = jobs["submitted_at"].min()  # the first pass: 32 supernodes held from there to the span's end
    assert torus.counters["node_hours_held_out"] == pytest.approx(32 * (864000 - first) / 3600)
    early = jobs[jobs["started_at"] < 864000]
    for at in early["started_at"].unique():
        running = jobs[(jobs["started_at"] <= at) & (jobs["finished_at"] > at)]
        assert running["partition_size"].sum() <= 96


def test_a_share_holds_the_rest_of_the_machine_out_all_run_long_but_never_below_the_largest_job(tmp_path):
    log = tmp_path / "small.swf"
    rows = [(1, 0, 100, 2), (2, 0, 100, 2), (3, 0, 100, 1)]  # (id, submit, runtime, processors) on 8 processors
    log.write_text(
        "; MaxProcs: 8\n"
        + "".join(f"{job} {at} 0 {run} {size} -1 -1 {size} {run} -1 1 1 1 1 -1 -1 -1 -1\n" for job, at, run, size in rows)
    )
    base = Scenario.make(workload=str(log), platform="cluster", policy="FCFS-EASY", failures="none")
    # a share of 0.3 is 2 processors (floor of 2.4): one job at a time
    model = build_model(base.replace(effective_size_share=0.3))
    table = model.run().jobs.set_index("job_id")
    assert table["started_at"].to_dict() == {1: 0.0, 2: 100.0, 3: 200.0}
    assert model.counters["node_hours_held_out"] == pytest.approx(6 * 300 / 3600)  # 6 held until the run's end
    assert not model.platform.tracks_nodes and model.view.down_count() == 6  # counts held for good: no node ids needed
    failing = build_model(base.replace(effective_size_share=0.3, failures="synthetic:1:exponential"))
    assert failing.platform.tracks_nodes  # failures need node ids: the same share held by id
    assert failing.run().jobs["started_at"].tolist() == [0.0, 100.0, 200.0]
    # a share of 0.1 (0 processors) is raised to the largest job's 2; a share of the whole machine holds nothing
    assert build_model(base.replace(effective_size_share=0.1)).run().jobs["started_at"].tolist() == [0.0, 100.0, 200.0]
    whole = build_model(base.replace(effective_size_share=1.0))
    assert whole.passes.held_nodes is None and whole.run().jobs["started_at"].tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(ConfigurationError, match="effective_size_share and effective_size: give one"):
        build_model(base.replace(effective_size_share=0.5, effective_size="inferred"))
    with pytest.raises(ConfigurationError, match="not of the torus platform's nodes"):
        build_model(base.replace(effective_size_share=0.5, platform="torus"))


def test_bad_effective_sizes_are_one_sentence(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("0,100,4\n100,50,4\n")
    with pytest.raises(EffectiveSizeFormatError, match=r"bad.csv:2: .*0 <= start < end"):
        read_spans(bad)
    bad.write_text("0,100,2.5\n")
    with pytest.raises(EffectiveSizeFormatError, match="whole number"):
        read_spans(bad)
    with pytest.raises(ConfigurationError, match=r"whole number of nodes in \[1, 4\], got 5"):
        _run([_job(1, 0, 10)], 4, effective_size=[(0, 10, 5)])
    with pytest.raises(ConfigurationError, match="effective-size spans overlap: 0-100 s and 50-200 s"):
        _run([_job(1, 0, 10)], 4, effective_size=[(50, 200, 2), (0, 100, 3)])
    with pytest.raises(ConfigurationError, match="effective_size: .* plans after each attempt end"):
        _run([_job(1, 0, 10)], 4, ListPolicy(), effective_size=[(0, 10, 2)])
    with pytest.raises(ConfigurationError, match="effective_size_period needs"):
        build_model(Scenario.make(workload="pwa:SDSC-SP2", max_jobs=50, effective_size_period=86400.0))
    with pytest.raises(ConfigurationError, match="run it at c = 1"):
        build_model(Scenario.make(workload="pwa:SDSC-SP2", max_jobs=50, load_scale=1.5, effective_size="inferred"))


def test_the_cli_refuses_a_malformed_file_in_one_sentence_and_writes_nothing(tmp_path):
    spans = tmp_path / "sizes.csv"
    spans.write_text("0,100\n")
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "torus_sim.interfaces.cli", "run", "--effective-size", str(spans), "--out", str(out)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "sizes.csv:1:" in done.stderr and "start,end,nodes" in done.stderr
    assert not out.exists()


def _starved_log(tmp_path):
    """8 processors: job 1 (4) runs 0-10,000; job 2 (2, submitted at 100) waits to 8,000 although 4 stand idle (it
    fitted them: the span 100-8,000 at its busiest, 4); job 3 (6, at 200) waits for 1 to end (it did not fit); job 4,
    cancelled (status 5), would fill the idle processors if it counted."""
    rows = [(1, 0, 0, 10_000, 4, 1), (2, 100, 7_900, 500, 2, 1), (3, 200, 9_800, 100, 6, 1), (4, 300, 0, 9_000, 4, 5)]
    log = tmp_path / "starved.swf"
    log.write_text(
        "; MaxProcs: 8\n"
        + "".join(
            f"{job} {at} {wait} {run} {size} -1 -1 {size} {run + 1000} -1 {status} 1 1 1 -1 -1 -1 -1\n"
            for job, at, wait, run, size, status in rows
        )
    )
    return log


def test_a_starved_span_is_where_the_oldest_waiting_job_fitted_the_idle_processors(tmp_path):
    from torus_sim.inputs.effective_size import starved_size_spans
    from torus_sim.inputs.workload.logged import starved_spans

    schedule = logged_schedule(read_swf(_starved_log(tmp_path), fields=SCHEDULE_FIELDS))
    assert starved_spans(schedule).tolist() == [[100.0, 8000.0, 4.0]]  # job 3 (6) never fitted the 4 idle
    assert starved_spans(schedule, min_length=8000.0).tolist() == []  # 7,900 s: shorter
    assert starved_spans(schedule, min_idle=0.6).tolist() == []  # half the machine idle, not 60%
    assert starved_size_spans(schedule, 4).tolist() == [[100.0, 8000.0, 2.0]]  # a share of another machine
    with pytest.raises(ValueError, match="in \\(0, 1\\)"):
        starved_spans(schedule, min_idle=1.0)
    # a line that gives no processors (-1 in fields 5 and 8) neither holds nor asks for any
    log = tmp_path / "starved.swf"
    log.write_text(log.read_text() + "5 150 8000 100 -1 -1 -1 -1 2000 -1 1 1 1 1 -1 -1 -1 -1\n")
    unknown = logged_schedule(read_swf(log, fields=SCHEDULE_FIELDS))
    assert starved_spans(unknown).tolist() == [[100.0, 8000.0, 4.0]]


def test_the_starved_spans_replayed_keep_the_job_the_log_kept_waiting_and_compose_with_a_share(tmp_path):
    log = _starved_log(tmp_path)
    base = Scenario.make(workload=str(log), platform="cluster", policy="FCFS-EASY", failures="none", cancelled="skip")
    free = build_model(base).run().jobs.set_index("job_id")["started_at"].to_dict()
    assert free == {1: 0.0, 2: 100.0, 3: 10_000.0}
    starved = base.replace(effective_size_starved=True)
    assert run_key(starved) != run_key(base)
    model = build_model(starved)
    assert size_spans(model.passes.held_nodes.reservations, 8) == [[100.0, 8000.0, 4.0]]
    assert model.run().jobs.set_index("job_id")["started_at"].to_dict() == {1: 0.0, 2: 8000.0, 3: 10_000.0}
    # a log without starved spans (job 2 starts at once) runs as without the reading: nothing held
    quick = tmp_path / "quick.swf"
    quick.write_text(log.read_text().replace("2 100 7900 500", "2 100 0 500"))
    unstarved = build_model(base.replace(workload=str(quick), effective_size_starved=True))
    assert unstarved.passes.held_nodes is None
    # beside a share of 6 processors (the largest job's size): the fewer of the two at each instant
    both = build_model(starved.replace(effective_size_share=0.7))
    assert size_spans(both.passes.held_nodes.reservations, 8) == [
        [0.0, 100.0, 6.0],
        [100.0, 8000.0, 4.0],
        [8000.0, float("inf"), 6.0],
    ]


def test_lowest_spans_take_the_fewest_nodes_any_reading_leaves():
    from torus_sim.inputs.effective_size import lowest_spans

    assert lowest_spans(10).tolist() == []
    assert lowest_spans(10, [(0, 50, 10), (50, 60, 9)]).tolist() == [[50.0, 60.0, 9.0]]
    periods = [(0, 100, 8), (100, 200, 9)]
    starved = [(50, 120, 6), (120, 150, 9), (300, 400, 5)]
    assert lowest_spans(10, periods, starved).tolist() == [
        [0.0, 50.0, 8.0],
        [50.0, 120.0, 6.0],
        [120.0, 200.0, 9.0],
        [300.0, 400.0, 5.0],
    ]


def test_ctc_sp2_lost_a_sixth_of_its_span_to_starved_spans():
    """CTC-SP2 ran EASY: 353 spans of an hour or more (16.9% of its span) in which its oldest waiting job fitted at
    least 5% of the machine idle; the first is its 90 idle hours at the start."""
    from torus_sim.inputs.workload.logged import starved_spans

    source = workload_source("pwa:CTC-SP2", {})
    schedule = logged_schedule(read_swf(source.path, fields=SCHEDULE_FIELDS))
    spans = starved_spans(schedule)
    assert len(spans) == 353
    span = schedule.submitted_at.max()
    assert (spans[:, 1] - spans[:, 0]).sum() / span == pytest.approx(0.169, abs=5e-4)
    assert spans[0, 0] == 0.0 and spans[0, 1] > 90 * 3600
    assert np.all(spans[:, 2] <= 338 * 0.95)  # at least 5% idle throughout


def test_bad_starved_settings_are_one_sentence(tmp_path):
    log = _starved_log(tmp_path)
    base = Scenario.make(workload=str(log), platform="cluster", policy="FCFS-EASY", failures="none")
    with pytest.raises(ConfigurationError, match="need effective_size_starved = true"):
        build_model(base.replace(effective_size_starved_min_length=600.0))
    with pytest.raises(ConfigurationError, match="effective_size_starved = true reads the log's own schedule"):
        build_model(base.replace(effective_size_starved=True, load_scale=1.5))
    with pytest.raises(ConfigurationError, match="effective_size_starved_min_idle"):
        Scenario.make(workload=str(log), effective_size_starved=True, effective_size_starved_min_idle=1.5)
    out = tmp_path / "out"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "torus_sim.interfaces.cli",
            "run",
            "--workload",
            str(log),
            "--platform",
            "cluster",
            "--effective-size-starved-min-idle",
            "0.2",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr and "need effective_size_starved" in done.stderr
    assert not out.exists()
