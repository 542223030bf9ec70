"""What a logged line occupied (issue 77 §1): cancelled (status 5) and failed (status 0) SWF lines run as logged, or are skipped."""

from __future__ import annotations

from torus_sim.experiments.run_inputs import load_workload
from torus_sim.experiments.runner import Scenario, build_model
from torus_sim.experiments.sweep import run_key

# id submit wait run alloc cpu mem req_procs req_time req_mem status user group exe queue partition preceding think
LINES = """; MaxProcs: 4
1 0 0 100 4 -1 -1 4 100 -1 1 1 1 -1 1 -1 -1 -1
2 10 90 500 4 -1 -1 4 500 -1 5 2 1 -1 1 -1 -1 -1
3 20 80 100 2 -1 -1 2 100 -1 1 1 1 -1 1 -1 -1 -1
4 30 -1 -1 4 -1 -1 4 100 -1 5 3 1 -1 1 -1 -1 -1
5 40 0 50 2 -1 -1 2 50 -1 0 1 1 -1 1 -1 -1 -1
"""


def test_a_cancelled_line_runs_as_logged_by_default_and_is_skipped_when_asked(tmp_path):
    log = tmp_path / "four.swf"
    log.write_text(LINES)
    plain = Scenario(workload=str(log), platform="cluster", failures="none", policy="FCFS-EASY")
    skipping = plain.replace(cancelled="skip")
    assert plain.cancelled == "run" and run_key(plain) != run_key(skipping)
    ran = load_workload(plain)
    assert [job.job_id for job in ran.jobs] == [1, 2, 3, 5] and "skipped_cancelled" not in ran.cleaning
    skipped = load_workload(skipping)
    assert [job.job_id for job in skipped.jobs] == [1, 3, 5]  # the failed line (status 0) ran: it is kept
    assert skipped.cleaning["skipped_cancelled"] == 2  # the one with a run time and the one cancelled before start
    starts = build_model(skipping, {}).run().jobs.set_index("job_id")["started_at"].to_dict()
    assert starts == {1: 0.0, 3: 100.0, 5: 100.0}  # job 2's 500 s of logged run never held the machine
    starts = build_model(plain, {}).run().jobs.set_index("job_id")["started_at"].to_dict()
    assert starts == {1: 0.0, 2: 100.0, 3: 600.0, 5: 600.0}


def test_a_failed_line_runs_as_logged_by_default_and_is_skipped_when_asked(tmp_path):
    """Job 5 (status 0, failed) asks 2 processors for 50 s; skipped, it is no job of the run, counted apart from the
    cancelled lines, and both readings compose (the cancelled line 2 skipped too)."""
    log = tmp_path / "four.swf"
    log.write_text(LINES)
    plain = Scenario(workload=str(log), platform="cluster", failures="none", policy="FCFS-EASY")
    skipping = plain.replace(failed="skip")
    assert plain.failed == "run" and run_key(plain) != run_key(skipping) != run_key(plain.replace(cancelled="skip"))
    skipped = load_workload(skipping)
    assert [job.job_id for job in skipped.jobs] == [1, 2, 3] and skipped.cleaning["skipped_failed"] == 1
    assert "skipped_cancelled" not in skipped.cleaning and "skipped_failed" not in load_workload(plain).cleaning
    both = load_workload(skipping.replace(cancelled="skip"))
    assert [job.job_id for job in both.jobs] == [1, 3]
    assert (both.cleaning["skipped_cancelled"], both.cleaning["skipped_failed"]) == (2, 1)
    starts = build_model(skipping, {}).run().jobs.set_index("job_id")["started_at"].to_dict()
    assert starts == {1: 0.0, 2: 100.0, 3: 600.0}


def test_a_failed_reading_that_is_not_run_or_skip_is_one_sentence_and_exit_2(tmp_path):
    import subprocess
    import sys

    log = tmp_path / "four.swf"
    log.write_text(LINES)
    command = [sys.executable, "-m", "torus_sim.interfaces.cli", "run", "--platform", "cluster", "--workload", str(log)]
    done = subprocess.run([*command, "--failed", "drop", "--out", str(tmp_path / "out")], capture_output=True, text=True)
    assert done.returncode == 2 and "Traceback" not in done.stderr and "--failed: invalid choice: 'drop'" in done.stderr
    assert not (tmp_path / "out").exists()
    scenario = tmp_path / "failed.toml"
    scenario.write_text(f'[workload]\nworkload = "{log.as_posix()}"\nfailed = "drop"\n[platform]\nplatform = "cluster"\n')
    done = subprocess.run(
        [sys.executable, "-m", "torus_sim.interfaces.cli", "run", str(scenario), "--out", str(tmp_path / "o2")],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr and "failed" in done.stderr
    assert not (tmp_path / "o2").exists()


OVERRUN = """; MaxProcs: 4
1 0 0 300 4 -1 -1 4 100 -1 1 1 1 -1 1 -1 -1 -1
2 10 0 50 4 -1 -1 4 100 -1 1 1 1 -1 1 -1 -1 -1
"""


def test_a_job_past_its_requested_time_is_killed_there_or_runs_on_as_asked(tmp_path):
    # job 1 requested 100 s and ran 300: the cluster's rules (pv-easy) kill it at 100, kill_at_walltime = false does
    # not; on the torus (bgl-fault's rules: no kill) kill_at_walltime = true cuts it
    log = tmp_path / "overrun.swf"
    log.write_text(OVERRUN)
    cluster = Scenario(workload=str(log), platform="cluster", failures="none", policy="FCFS")
    running_on = cluster.replace(kill_at_walltime=False)
    assert cluster.kill_at_walltime is None and run_key(cluster) != run_key(running_on)
    killed = load_workload(cluster)
    assert killed.jobs[0].runtime == 100.0 and killed.cleaning["cut_at_walltime"] == 1
    kept = load_workload(running_on)
    assert kept.jobs[0].runtime == 300.0 and "cut_at_walltime" not in kept.cleaning
    assert build_model(running_on, {}).run().jobs.set_index("job_id")["started_at"].to_dict() == {1: 0.0, 2: 300.0}
    torus = Scenario(workload=str(log), platform="torus", failures="none", policy="krevat")
    assert load_workload(torus).jobs[0].runtime == 300.0
    assert load_workload(torus.replace(kill_at_walltime=True)).jobs[0].runtime == 100.0
