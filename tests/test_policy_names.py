"""Names and inputs that say what ran (issue 40 §5): EASY-SJBF and its alias, a job file's header."""

from __future__ import annotations

import json

import pytest

from torus_sim.experiments.scenario import Scenario
from torus_sim.inputs.registry import Registry
from torus_sim.interfaces.cli import main
from torus_sim.policies.catalog import POLICIES

from .conftest import SHARED_DATA

CTC = SHARED_DATA / "swf" / "CTC-SP2-1996-3.1-cln.swf.gz"


def test_sjf_easy_is_an_alias_of_easy_sjbf_and_says_so():
    factory, info = POLICIES.resolve("SJF-EASY")
    assert factory is POLICIES.resolve("EASY-SJBF")[0]
    assert info.alias_of == "EASY-SJBF" and not info.plugin
    assert info.describe() == "SJF-EASY (= EASY-SJBF)"
    assert "SJF-EASY" in POLICIES and POLICIES.is_builtin("SJF-EASY")
    assert POLICIES.build("SJF-EASY").name == "EASY-SJBF"
    assert "SJF-EASY = EASY-SJBF" in POLICIES.unknown_message("SJF")
    target, says = POLICIES.aliases()["SJF-EASY"]
    assert target == "EASY-SJBF" and "shortest job backfilled first" in says


def test_an_alias_must_name_a_registered_entry():
    registry = Registry("thing")
    with pytest.raises(KeyError, match="not registered"):
        registry.alias("old", "new", "what it is")


@pytest.mark.skipif(not CTC.exists(), reason=f"needs CTC-SP2 under {SHARED_DATA}")
def test_the_alias_and_the_name_run_the_same_schedule(tmp_path, capsys):
    arguments = ["run", "--platform", "cluster", "--nodes", "430", "--workload", str(CTC), "--max-jobs", "1500"]
    assert main([*arguments, "--policy", "SJF-EASY", "--out", str(tmp_path / "alias")]) == 0
    assert "policy    SJF-EASY (= EASY-SJBF)" in capsys.readouterr().out
    assert main([*arguments, "--policy", "EASY-SJBF", "--out", str(tmp_path / "name")]) == 0
    assert "policy    EASY-SJBF;" in capsys.readouterr().out
    alias = (tmp_path / "alias" / "jobs.csv").read_text()
    assert alias == (tmp_path / "name" / "jobs.csv").read_text()
    summary = json.loads((tmp_path / "alias" / "summary.json").read_text())
    assert summary["inputs"]["policy"] == "EASY-SJBF"
    assert summary["inputs"]["extensions"]["policy"]["alias_of"] == "EASY-SJBF"
    fcfs = tmp_path / "fcfs"
    assert main([*arguments, "--policy", "FCFS-EASY", "--out", str(fcfs)]) == 0
    assert (fcfs / "jobs.csv").read_text() != alias  # the candidates' order matters on this prefix


JOBS = """3.2e-08 1000 {v} {priority} {batch} {naive} {shelf}
Task0 rgd 1500.0 300
Task1 rgd 250.0 600
Task2 rgd 13000.0 400
Task3 rgd 700.0 900
Task4 rgd 4000.0 100
"""


def _job_file(tmp_path, v=5.0, priority="rlength", batch=0, naive=0, shelf=0):
    path = tmp_path / "jobs.txt"
    path.write_text(JOBS.format(v=v, priority=priority, batch=batch, naive=naive, shelf=shelf))
    return f"refcode:{path}"


@pytest.mark.parametrize(
    ("flags", "heuristic"), [({}, "R-LIST-0"), ({"shelf": 1}, "R-SHELF-B"), ({"shelf": 1, "naive": 1}, "R-SHELF-NB")]
)
def test_a_job_files_header_gives_what_the_scenario_leaves_out(tmp_path, flags, heuristic):
    scenario = Scenario(platform="cluster", workload=_job_file(tmp_path, **flags))
    assert (scenario.policy, scenario.priority, scenario.verification_time) == (heuristic, "SPT", 5.0)


def test_options_given_win_over_the_header(tmp_path):
    workload = _job_file(tmp_path)
    scenario = Scenario(platform="cluster", workload=workload, policy="R-LIST-1", priority="LPT", verification_time=0)
    assert (scenario.policy, scenario.priority, scenario.verification_time) == ("R-LIST-1", "LPT", 0.0)
    assert Scenario(platform="cluster", workload=workload, scheduler="R-LIST-Q").policy == "R-LIST-Q"


def test_the_header_s_values_change_the_schedule_and_the_run_says_which_ran(tmp_path, capsys):
    workload = _job_file(tmp_path)
    base = ["run", "--platform", "cluster", "--workload", workload]
    assert main([*base, "--out", str(tmp_path / "header")]) == 0
    out = capsys.readouterr().out
    assert "policy    R-LIST-0;" in out
    assert "ran policy R-LIST-0 (the header's), priority SPT (the header's), verification_time 5.0 (the header's)" in out
    assert main([*base, "--priority", "LPT", "--verification-time", "0", "--out", str(tmp_path / "given")]) == 0
    assert "priority LPT (given; the header's: SPT), verification_time 0.0 (given; the header's: 5.0)" in capsys.readouterr().out
    header = json.loads((tmp_path / "header" / "summary.json").read_text())
    given = json.loads((tmp_path / "given" / "summary.json").read_text())
    assert header["inputs"]["workload"]["declared"]["priority"] == {"declared": "SPT", "ran": "SPT"}
    assert given["inputs"]["workload"]["declared"]["priority"] == {"declared": "SPT", "ran": "LPT"}
    assert header["summary"]["makespan"] != given["summary"]["makespan"]  # V = 5 s per attempt, SPT order


def test_a_header_that_names_no_heuristic_needs_a_policy(tmp_path, capsys):
    workload = _job_file(tmp_path, batch=1)
    with pytest.raises(ValueError, match="names no heuristic"):  # pydantic's ValidationError; callers make it a sentence
        Scenario(platform="cluster", workload=workload)
    assert main(["run", "--platform", "cluster", "--workload", workload, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "names no heuristic" in err and "--policy" in err and "Traceback" not in err
    assert (
        main(["run", "--platform", "cluster", "--workload", workload, "--policy", "R-LIST-1", "--out", str(tmp_path / "o")]) == 0
    )


def test_a_missing_or_malformed_job_file_declares_nothing_and_its_run_says_why(tmp_path, capsys):
    missing = f"refcode:{tmp_path / 'none.txt'}"
    assert Scenario(platform="cluster", workload=missing).policy == "krevat"  # the default; the run stops first
    assert main(["run", "--platform", "cluster", "--workload", missing, "--out", str(tmp_path / "o")]) == 2
    assert "none.txt" in capsys.readouterr().err
    bad = tmp_path / "bad.txt"
    bad.write_text("not a header\n")
    assert main(["run", "--platform", "cluster", "--workload", f"refcode:{bad}", "--out", str(tmp_path / "o")]) == 2
    assert "bad.txt" in capsys.readouterr().err
