"""Dependency-preserving replay (Zakay and Feitelson, MASCOTS 2014): a job waits for its user's previous job's end."""

from __future__ import annotations

import numpy as np
import pytest

from torus_sim.core.errors import ConfigurationError
from torus_sim.core.job import Job
from torus_sim.experiments.runner import Scenario, build_model
from torus_sim.experiments.sweep import run_key
from torus_sim.inputs.workload.dependencies import BATCH_REFUSED, user_dependencies
from torus_sim.inputs.workload.logged import LoggedSchedule
from torus_sim.interfaces.cli import main


def _schedule(rows) -> LoggedSchedule:
    """A logged schedule from ``(job_id, submit, wait, run)`` rows (every job completed)."""
    ids, submits, waits, runs = (np.array(column) for column in zip(*rows, strict=True))
    return LoggedSchedule(
        path="hand-made",
        sha256="",
        job_id=ids.astype(np.int64),
        submitted_at=submits.astype(float),
        wait=waits.astype(float),
        run_time=runs.astype(float),
        processors=np.ones(len(ids), dtype=np.int64),
        status=np.ones(len(ids), dtype=np.int64),
        machine=4,
        unix_start_time=None,
        time_zone=None,
        scheduler_notes=(),
    )


def test_a_job_depends_on_its_users_job_that_ended_last_before_it_within_the_think_time():
    # (job id, submit, wait, run, user): user 1's job 1 ends at 500 (logged); job 2, submitted 60 s later, waits for it;
    # job 6 (submitted at 640) for job 2 (ended at 610), not for job 1; job 4 comes 4,350 s after job 6's end (past
    # 1,200 s: a new session); user 2's job 3 and job 5 find nothing of theirs ended (job 3 ends after job 5 is
    # submitted); job 7's user is unknown (-1); job 8's only earlier job of user 3 is not placed (no wait logged)
    rows = [
        (1, 0, 400, 100, 1),
        (3, 100, 0, 1000, 2),
        (5, 150, 0, 10, 2),
        (2, 560, 0, 50, 1),
        (6, 640, 0, 10, 1),
        (9, 650, -1, 10, 3),
        (7, 700, 0, 10, -1),
        (8, 800, 0, 10, 3),
        (4, 5000, 0, 10, 1),
    ]
    jobs = [Job(job_id, submit, runtime=run, walltime=run, size=1, user_id=user) for job_id, submit, _, run, user in rows]
    dependencies = user_dependencies(jobs, _schedule([row[:4] for row in rows]), 1200.0)
    assert dependencies.held.tolist() == [False, False, False, True, True, False, False, False, False]
    assert dependencies.predecessor.tolist() == [1, 2]  # by the job whose end submits them
    assert dependencies.rank.tolist() == [3, 4]
    assert dependencies.think.tolist() == [60.0, 30.0]
    assert len(dependencies) == 2
    # a bound below a think time drops that dependency only
    assert user_dependencies(jobs, _schedule([row[:4] for row in rows]), 45.0).rank.tolist() == [4]


def test_a_job_the_log_does_not_have_or_a_bound_that_is_not_positive_is_one_sentence():
    jobs = [Job(1, 0.0, runtime=1.0, walltime=1.0, size=1, user_id=1), Job(2, 5.0, runtime=1.0, walltime=1.0, size=1)]
    with pytest.raises(ConfigurationError, match="job 2 is not in the log's schedule"):
        user_dependencies(jobs, _schedule([(1, 0, 0, 1)]), 60.0)
    with pytest.raises(ConfigurationError, match="must be positive"):
        user_dependencies(jobs, _schedule([(1, 0, 0, 1), (2, 5, 0, 1)]), 0.0)


# id submit wait run alloc cpu mem req_procs req_time req_mem status user group exe queue partition preceding think
CHAIN = """; MaxProcs: 4
1 0 400 100 4 -1 -1 4 100 -1 1 1 1 -1 1 -1 -1 -1
3 120 0 1000 2 -1 -1 2 1000 -1 1 2 1 -1 1 -1 -1 -1
2 560 0 50 2 -1 -1 2 50 -1 1 1 1 -1 1 -1 -1 -1
6 640 0 10 2 -1 -1 2 10 -1 1 1 1 -1 1 -1 -1 -1
4 5000 0 10 2 -1 -1 2 10 -1 1 1 1 -1 1 -1 -1 -1
"""


def test_a_dependent_job_is_submitted_its_think_time_after_its_predecessor_ends_in_the_run(tmp_path):
    # job 1 waited 400 s on the logged machine and ended at 500; job 2 was submitted 60 s after that, job 6 30 s after
    # job 2's end (610). Replayed on an idle machine job 1 ends at 100: job 2 comes at 160 and ends at 210, job 6 at
    # 240. Job 3 (another user's) and job 4 (4,350 s after job 6's end: a new session) keep their logged times.
    log = tmp_path / "chain.swf"
    log.write_text(CHAIN)
    plain = Scenario(workload=str(log), platform="cluster", failures="none", policy="FCFS-EASY")
    kept = plain.replace(dependencies=1200.0)
    assert plain.dependencies is None and run_key(plain) != run_key(kept)
    model = build_model(kept, {})
    jobs = model.run().jobs.set_index("job_id")
    assert jobs["submitted_at"].to_dict() == {1: 0.0, 3: 120.0, 2: 160.0, 6: 240.0, 4: 5000.0}
    assert jobs["started_at"].to_dict() == {1: 0.0, 3: 120.0, 2: 160.0, 6: 240.0, 4: 5000.0}
    assert model.counters["dependent_submissions"] == 2
    logged = build_model(plain, {}).run()
    assert logged.jobs.set_index("job_id")["submitted_at"].to_dict() == {1: 0.0, 3: 120.0, 2: 560.0, 6: 640.0, 4: 5000.0}
    assert "dependent_submissions" not in logged.counters


def test_a_later_predecessor_submits_its_dependent_later_and_the_queue_takes_the_runs_order(tmp_path):
    # job 2 (user 1) ran at once on the logged machine (ends at 100) but here waits for user 2's job 1 (the whole
    # machine from 0 to 300, first in FCFS order): job 2 runs 300-400 and its dependent job 3 (logged 60 s after job
    # 2's end, at 160) comes at 460. Job 4, logged at 200, is then ahead of job 3 in the queue's order.
    text = """; MaxProcs: 4
1 0 100 300 4 -1 -1 4 300 -1 1 2 1 -1 1 -1 -1 -1
2 0 0 100 4 -1 -1 4 100 -1 1 1 1 -1 1 -1 -1 -1
3 160 0 100 4 -1 -1 4 100 -1 1 1 1 -1 1 -1 -1 -1
4 200 0 100 4 -1 -1 4 100 -1 1 3 1 -1 1 -1 -1 -1
"""
    log = tmp_path / "later.swf"
    log.write_text(text)
    scenario = Scenario(workload=str(log), platform="cluster", failures="none", policy="FCFS", dependencies=600.0)
    jobs = build_model(scenario, {}).run().jobs.set_index("job_id")
    assert jobs["submitted_at"].to_dict() == {1: 0.0, 2: 0.0, 3: 460.0, 4: 200.0}
    assert jobs["started_at"].to_dict() == {1: 0.0, 2: 300.0, 4: 400.0, 3: 500.0}


def test_dependencies_with_a_batch_another_load_or_no_positive_bound_are_one_sentence(tmp_path, capsys):
    with pytest.raises(ConfigurationError, match="a batch workload is released at once") as refused:
        build_model(Scenario(workload="rigid", platform="cluster", policy="R-LIST-0", dependencies=1200.0), {})
    assert str(refused.value) == BATCH_REFUSED
    log = tmp_path / "chain.swf"
    log.write_text(CHAIN)
    scaled = Scenario(workload=str(log), platform="cluster", failures="none", policy="FCFS", load_scale=2.0, dependencies=60.0)
    with pytest.raises(ConfigurationError, match="run it at c = 1"):
        build_model(scaled, {})
    out = tmp_path / "out"
    assert main(["run", "--workload", str(log), "--platform", "cluster", "--dependencies", "-5", "--out", str(out)]) == 2
    assert "dependencies" in capsys.readouterr().err and not out.exists()


def test_the_run_says_its_dependencies(tmp_path, capsys):
    log = tmp_path / "chain.swf"
    log.write_text(CHAIN)
    out = tmp_path / "out"
    arguments = ["run", "--workload", str(log), "--platform", "cluster", "--failures", "none", "--policy", "FCFS-EASY"]
    assert main([*arguments, "--dependencies", "1200", "--no-progress", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "jobs submitted after the job they waited for (think times up to 1200 s)" in printed
    assert "jobs submitted after a job they waited for" in printed
