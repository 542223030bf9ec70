"""A replay's log relogged (``--format relogged``): the log with each job's wait and run time as the run gave them."""

import pytest

from torus_sim.core.errors import ConfigurationError
from torus_sim.experiments.log_replay import against_log
from torus_sim.experiments.runner import Scenario, run
from torus_sim.interfaces.cli import main
from torus_sim.outputs.formats.swf_schedule import relogged_log, relogged_swf

from . import test_against_log as hand_made
from .test_against_log import HEADER, _line

log = hand_made.log  # the fixture: five jobs on 4 processors, FCFS, worked by hand there

pytestmark = pytest.mark.filterwarnings("ignore:the offered load after cleaning")


def _scenario(path, **fields):
    return Scenario(platform="cluster", nodes=4, workload=str(path), failures="none", policy="FCFS", **fields)


def test_the_relogged_log_holds_the_hand_worked_schedule_and_every_other_byte_as_logged(log, tmp_path):
    out = tmp_path / "out"
    arguments = ["run", "--platform", "cluster", "--nodes", "4", "--workload", str(log), "--failures", "none"]
    assert main([*arguments, "--policy", "FCFS", "--format", "relogged", "--out", str(out), "--no-progress"]) == 0
    lines = (out / "relogged.swf").read_text().splitlines()
    header = HEADER.splitlines()
    assert lines[: len(header)] == header
    notes = lines[len(header) : len(header) + 2]  # the relog's two notes close the header
    assert notes[0].startswith("; Note: relogged by torus-sim") and "run times (field 4) of 4 jobs" in notes[0]
    assert notes[1].startswith("; Note: replay configuration {")
    # FCFS by hand: J1 (4 procs) 0-100; J2, J3 (no logged wait) and J4 start at 100 when J1 ends; J5 never ran
    assert lines[len(header) + 2 :] == [
        _line(1, 0, 0, 100, 4).strip(),
        _line(2, 10, 90, 50, 2).strip(),
        _line(3, 20, 80, 30, 1).strip(),  # the log had no wait for it; the run has one
        _line(4, 30, 70, 7200, 1).strip(),
        _line(5, 50, 0, -1, 1, status=5).strip(),  # not replayed: as logged
    ]


def test_a_relogged_log_replayed_with_the_settings_that_made_it_is_its_own_schedule(log, tmp_path):
    relogged = tmp_path / "relogged.swf"
    relogged.write_text(relogged_log(run(_scenario(log))))
    comparison = against_log(run(_scenario(relogged)))
    wait = comparison.summary["wait"]
    assert comparison.summary["jobs"]["compared"] == 4  # J3 has a wait now
    assert wait["difference_mean_absolute"] == 0.0 and wait["within_1_min"] == 1.0
    assert comparison.summary["ks"]["statistic"] == 0.0


def test_relogged_swf_replaces_only_the_two_fields_keeping_separators_rounding_and_lines():
    text = relogged_swf(
        [
            "; Version: 2.2\n",
            "   7   10  999   42  3 -1 -1 3 60 -1 1 5 1 -1 1 -1 -1 -1\n",  # leading blanks, wide separators
            "7 10 999 42 3 -1 -1 3 60 -1 1 5 1 -1 1 -1 -1 -1\n",  # the same job number again: kept
            "8 11 5 6 1 -1 -1 1 60 -1 1 5 1 -1 1 -1 -1 -1\n",  # no entry: kept
            "\n",
        ],
        {7: (12.5, 30.49), 9: (1.0, 1.0)},
        ["made by hand"],
    )
    assert text.splitlines() == [
        "; Version: 2.2",
        "; Note: made by hand",
        "   7   10  13   30  3 -1 -1 3 60 -1 1 5 1 -1 1 -1 -1 -1",  # 12.5 rounds half up, 30.49 down
        "7 10 999 42 3 -1 -1 3 60 -1 1 5 1 -1 1 -1 -1 -1",
        "8 11 5 6 1 -1 -1 1 60 -1 1 5 1 -1 1 -1 -1 -1",
        "",
    ]
    assert relogged_swf(["; Version: 2.2\n"], {}, ["no job"]) == "; Version: 2.2\n; Note: no job\n"
    assert relogged_swf(["1 0 5 5 1 -1 -1 1 9 -1 1 1 1 -1 1 -1 -1 -1"], {1: (-1.0, 3.0)}).startswith("1 0 -1 3 ")


def test_a_run_a_relogged_log_cannot_hold_is_refused_with_a_sentence_and_nothing_written(log, tmp_path):
    with pytest.raises(ConfigurationError, match="run it at c = 1"):
        relogged_log(run(_scenario(log, load_scale=1.5)))
    batch = run(
        Scenario(platform="cluster", nodes=64, workload="rigid", jobs=10, scenarios=1, failures="none", policy="R-LIST-0")
    )
    with pytest.raises(ConfigurationError, match="not a log file"):
        relogged_log(batch)
    out = tmp_path / "scaled"
    arguments = ["run", "--platform", "cluster", "--nodes", "4", "--workload", str(log), "--failures", "none"]
    assert main([*arguments, "--load-scale", "1.5", "--format", "relogged", "--out", str(out), "--no-progress"]) == 2
    assert not out.exists()


def test_a_run_that_restarted_a_job_is_refused(tmp_path):
    path = tmp_path / "long.swf"
    path.write_text(HEADER + "".join(_line(job, job * 10, 0, 50_000, 2) for job in range(1, 9)))
    scenario = Scenario(platform="cluster", nodes=4, workload=str(path), failures="synthetic:40", policy="FCFS", seed=3)
    result = run(scenario)
    assert (result.jobs["attempts"] > 1).any()  # the failures killed a job, which ran again
    with pytest.raises(ConfigurationError, match="more than once"):
        relogged_log(result)
