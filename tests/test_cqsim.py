"""Agreement with CQSim job for job (issue 40 §4): its cleaning, its event order, EASY's extra nodes."""

from __future__ import annotations

import gzip

import numpy as np
import pandas as pd
import pytest

from tests.reference import jobs_by_lines
from torus_sim.core.errors import ConfigurationError, InputFileError
from torus_sim.experiments.runner import Scenario, run
from torus_sim.inputs.workload.jobs import SWF_RULES, jobs_from_swf
from torus_sim.inputs.workload.swf import read_swf
from torus_sim.metrics.peers import agreement, read_cqsim_schedule

from .conftest import SHARED_DATA

PEERS = SHARED_DATA.parent / "peers" / "cqsim"
LOGS = {"CTC-SP2": "CTC-SP2-1996-3.1-cln", "SDSC-SP2": "SDSC-SP2-1998-4.2-cln"}


def _swf(tmp_path, rows, name="log.swf", header="; MaxProcs: 12\n"):
    """An SWF file of ``(id, submit, run, requested time, allocated, requested processors)`` rows."""
    lines = [header]
    for job_id, submit, runtime, walltime, allocated, requested in rows:
        lines.append(f"{job_id} {submit} 0 {runtime} {allocated} -1 -1 {requested} {walltime} -1 1 1 1 -1 1 -1 -1 -1\n")
    path = tmp_path / name
    path.write_text("".join(lines))
    return path


def test_the_cqsim_rules_keep_what_cqsims_filter_keeps(tmp_path):
    path = _swf(
        tmp_path,
        [
            (1, 0, 100, 200, 4, 6),  # CQSim's size is the requested processors (6)
            (2, 1, 0, 200, 4, 4),  # ran 0 s: dropped
            (3, 2, 50, -1, 4, 4),  # no requested time: dropped
            (4, 3, 300, 200, -1, 5),  # ran past its request: cut at 200
            (5, 4, 10, 20, 3, -1),  # no requested processors: the allocated ones
        ],
    )
    trace = read_swf(path)
    workload = jobs_from_swf(trace, 12, rules=SWF_RULES["cqsim"])
    jobs = {job.job_id: job for job in workload.jobs}
    assert sorted(jobs) == [1, 4, 5]
    assert (jobs[1].size, jobs[4].size, jobs[5].size) == (6, 5, 3)
    assert (jobs[4].runtime, jobs[4].walltime) == (200, 200)
    assert workload.cleaning == {
        "skipped_short_runtime": 1,
        "skipped_no_walltime": 1,
        "cut_at_walltime": 1,
        "size_from_allocation": 1,
    }
    rows, cleaning = jobs_by_lines(trace, 12, None, 1.0, SWF_RULES["cqsim"])  # the line-at-a-time reference
    assert [row[0] for row in rows] == [1, 4, 5] and cleaning == workload.cleaning
    default = jobs_from_swf(trace, 12, rules=SWF_RULES["pv-easy"])  # ours keeps them all, sized by allocation
    assert len(default.jobs) == 5 and {job.job_id: job.size for job in default.jobs}[1] == 4


def _starts(tmp_path, rows, **fields) -> dict[int, float]:
    scenario = Scenario(platform="cluster", nodes=12, workload=str(_swf(tmp_path, rows)), policy="FCFS-EASY", **fields)
    with pytest.warns(UserWarning, match="offered load"):  # a handful of jobs on 12 nodes: overloaded by design
        table = run(scenario).jobs
    return dict(zip(table.job_id, table.first_started_at, strict=True))


# Jobs 1 and 2 (4 nodes each) end at t = 100; the head (job 3, 6 nodes) waits for them; job 4 (3 nodes,
# 1,000 s) could start at t = 2 only if both ends count toward the extra nodes at the shadow time.
SAME_INSTANT_ENDS = [(1, 0, 100, 100, 4, 4), (2, 0, 100, 100, 4, 4), (3, 1, 10, 10, 6, 6), (4, 2, 1000, 1000, 3, 3)]


def test_textbook_extra_nodes_count_every_job_that_ends_at_the_shadow_time(tmp_path):
    textbook = _starts(tmp_path, SAME_INSTANT_ENDS, easy_extra="textbook")
    assert textbook[3] == 100 and textbook[4] == 2  # 12 - 6 = 6 extra nodes at t = 100: job 4 fits them
    pv_easy = _starts(tmp_path, SAME_INSTANT_ENDS, easy_extra="pv-easy")
    assert pv_easy[3] == 100 and pv_easy[4] == 100  # job 1's 4 nodes make the head fit: 8 - 6 = 2 extra


# Jobs 1 and 2 end at t = 100, job 2 long before its request; the head (job 3) needs all 12 nodes.
# After job 1's end alone the head's shadow time is job 2's requested end (500): job 4 (ends by then)
# is backfilled, and the head waits for it. Handled together, both ends free the machine for the head.
ENDS_ONE_AT_A_TIME = [(1, 0, 100, 100, 6, 6), (2, 0, 100, 500, 6, 6), (3, 1, 50, 50, 12, 12), (4, 2, 300, 300, 6, 6)]


def test_each_event_runs_the_scheduler_after_each_end_and_each_submission(tmp_path):
    instant = _starts(tmp_path, ENDS_ONE_AT_A_TIME, event_order="instant")
    assert instant[3] == 100 and instant[4] == 150
    each = _starts(tmp_path, ENDS_ONE_AT_A_TIME, event_order="each-event")
    assert each[4] == 100 and each[3] == 400


def test_each_event_submissions_at_one_instant_are_scheduled_one_by_one(tmp_path):
    # two jobs submitted together: the first (12 nodes) blocks; the second (1 node, short) is
    # backfilled in its own pass; the same start either way, one pass per submission
    rows = [(1, 0, 100, 100, 6, 6), (2, 5, 10, 10, 12, 12), (3, 5, 10, 10, 1, 1)]
    assert _starts(tmp_path, rows, event_order="each-event") == _starts(tmp_path, rows, event_order="instant")


def test_unknown_event_orders_and_readings_are_refused():
    from torus_sim.engine import SchedulingModel
    from torus_sim.policies.easy import EasyPolicy

    from .conftest import make_workload

    with pytest.raises(ConfigurationError, match="event_order"):
        SchedulingModel(make_workload([(1, 0.0, 10.0, 10.0, 1)]), EasyPolicy(), 4, event_order="sometimes")
    with pytest.raises(ConfigurationError, match="extra nodes"):
        EasyPolicy(extra="generous")
    with pytest.raises(ValueError, match="event_order"):
        Scenario(event_order="sometimes")


def test_a_cqsim_schedule_is_read_and_a_bad_line_named(tmp_path):
    good = tmp_path / "ok.rst"
    good.write_text("13;8;8;64800.0;8071.0;0.0;1185.0;1185.0;9256.0\n24;24;24;3600.0;3600.0;5.0;18036.0;18041.0;21641.0\n")
    table = read_cqsim_schedule(good)
    assert table.job_id.tolist() == [13, 24] and table.wait.tolist() == [0.0, 5.0]
    bad = tmp_path / "bad.rst"
    bad.write_text("13;8;8;64800.0;8071.0;0.0;1185.0;1185.0;9256.0\n24;24;x\n")
    with pytest.raises(InputFileError, match="bad.rst: line 2"):
        read_cqsim_schedule(bad)
    (tmp_path / "empty.rst").write_text("")
    with pytest.raises(InputFileError, match="no job line"):
        read_cqsim_schedule(tmp_path / "empty.rst")
    ours = pd.DataFrame({"job_id": [13, 24, 99], "submitted_at": [0.0, 10.0, 20.0], "first_started_at": [0.0, 16.0, 20.0]})
    found = agreement(ours, table)
    assert (found["shared"], found["same_wait"], found["first_different"]) == (2, 1, 24)


@pytest.mark.parametrize("log", sorted(LOGS))
def test_cqsim_mode_gives_cqsims_start_for_every_job(log):
    """The whole log, every job: the same jobs and the same wait as CQSim's own output (docs/validation)."""
    stem = LOGS[log]
    swf, schedule = SHARED_DATA / "swf" / f"{stem}.swf.gz", PEERS / f"{stem}.easy.rst.gz"
    if not (swf.exists() and schedule.exists()):
        pytest.skip(f"needs {swf} and {schedule}")
    scenario = Scenario(
        platform="cluster",
        workload=str(swf),
        policy="FCFS-EASY",
        swf_rules="cqsim",
        event_order="each-event",
        easy_extra="textbook",
    )
    peer = read_cqsim_schedule(schedule)
    found = agreement(run(scenario).jobs, peer)
    assert found["ours"] == found["peer"] == found["shared"] == found["same_wait"], found
    assert found["first_different"] is None and found["mean_wait"] == pytest.approx(found["peer_mean_wait"])


def test_the_peer_files_are_what_their_readme_says():
    schedule = PEERS / "SDSC-SP2-1998-4.2-cln.easy.rst.gz"
    if not schedule.exists():
        pytest.skip(f"needs {schedule}")
    with gzip.open(schedule, "rt") as handle:
        first = handle.readline().strip().split(";")
    assert len(first) == 9 and np.isclose(float(first[7]) - float(first[6]), float(first[5]))  # start - submit = wait
