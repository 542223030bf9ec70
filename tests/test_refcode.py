"""The reference code's text formats: round trip, and bad files named by file and line."""

from __future__ import annotations

import numpy as np
import pytest

from torus_sim.core.errors import ConfigurationError, JobSetFormatError
from torus_sim.inputs.workload.batch import RigidJobSet
from torus_sim.inputs.workload.refcode import (
    RefcodeHeader,
    read_failure_scenarios,
    read_rigid_jobs,
    write_failure_scenarios,
    write_rigid_jobs,
)
from torus_sim.interfaces.cli import main

# The first lines of the reference repository's sample_1_0.3 (RIGID §5.1 set-up, q̄ = 0.3).
SAMPLE = """3.80120423962e-08 10000 10 length 0 0 0
Task0 rgd 1518.62619684 1147
Task1 rgd 257.092980124 516
Task2 rgd 13571.1410455 411
"""


def test_reads_the_reference_sample_header_and_jobs(tmp_path):
    path = tmp_path / "sample"
    path.write_text(SAMPLE)
    header, jobs = read_rigid_jobs(path)
    assert header == RefcodeHeader(3.80120423962e-08, 10000, 10.0, "LPT", 0, 0, 0)
    assert header.heuristic() == "R-LIST-0"
    assert jobs.names == ("Task0", "Task1", "Task2")
    assert jobs.runtimes.tolist() == [1518.62619684, 257.092980124, 13571.1410455]
    assert jobs.processors.tolist() == [1147, 516, 411]


def test_job_set_and_scenarios_round_trip_at_full_precision(tmp_path):
    rng = np.random.default_rng(0)
    jobs = RigidJobSet(rng.uniform(100, 20000, 5), rng.integers(50, 2000, 5))
    header = RefcodeHeader(1.234567890123e-08, 10000, 0.0, "SA", 0, 1, 1)
    write_rigid_jobs(tmp_path / "jobs", header, jobs)
    failures = rng.integers(0, 4, (7, 5))
    write_failure_scenarios(tmp_path / "failures", failures)
    read_header, read_jobs = read_rigid_jobs(tmp_path / "jobs")
    assert read_header == header and read_header.heuristic() == "R-SHELF-NB"
    assert read_jobs.runtimes.tolist() == jobs.runtimes.tolist()
    assert read_failure_scenarios(tmp_path / "failures", 5).tolist() == failures.tolist()
    assert read_failure_scenarios(tmp_path / "failures", 5, scenarios=3).shape == (3, 5)


@pytest.mark.parametrize(
    ("text", "line", "reason"),
    [
        ("1e-8 100 0 length 0 0\n", 1, "7 fields"),
        ("1e-8 100 0 longest 0 0 0\n", 1, "unknown priority"),
        ("1e-8 100 0 length 0 0 0\nTask0 rgd -5 10\n", 2, "must be > 0"),
        ("1e-8 100 0 length 0 0 0\nTask0 rgd 5 0\n", 2, "1..P"),
        ("1e-8 100 0 length 0 0 0\nTask0 rgd 5 101\n", 2, "1..P"),
        ("1e-8 100 0 length 0 0 0\nTask0 rgd 5 10\nTask1 rgd five 10\n", 3, "not a number"),
        ("1e-8 100 0 length 0 0 0\nTask0 mld 5 lin\n", 2, "mld"),
        ("1e-8 100 0 length 0 0 0\n", 1, "no job"),
    ],
)
def test_bad_job_files_name_the_file_and_line(tmp_path, text, line, reason):
    path = tmp_path / "jobs"
    path.write_text(text)
    with pytest.raises(JobSetFormatError, match=reason) as caught:
        read_rigid_jobs(path)
    assert str(caught.value).startswith(f"{path}:{line}:")


@pytest.mark.parametrize(
    ("text", "scenarios", "line", "reason"),
    [
        ("0 1 2\n0 1\n", None, 2, "expected 3 failure counts"),
        ("0 1 2\n", 2, 2, "2 scenarios needed, the file has 1"),  # the reference code would read zeros
        ("0 -1 2\n", None, 1, ">= 0"),
        ("0 x 2\n", None, 1, "not an integer"),
    ],
)
def test_bad_failure_files_are_refused_where_the_reference_code_reads_zeros(tmp_path, text, scenarios, line, reason):
    path = tmp_path / "failures"
    path.write_text(text)
    with pytest.raises(JobSetFormatError, match=reason) as caught:
        read_failure_scenarios(path, 3, scenarios)
    assert str(caught.value).startswith(f"{path}:{line}:")


def test_batch_flag_is_not_a_rigid_heuristic():
    with pytest.raises(ConfigurationError, match="batch"):
        RefcodeHeader(0.0, 10, 0.0, "LPT", 1, 0, 0).heuristic()


def test_cli_generates_then_replays_reference_files_with_full_precision(tmp_path, capsys):
    import pandas as pd

    assert main(["generate-rigid", str(tmp_path), "--jobs", "20", "--scenarios", "4", "--seed", "3"]) == 0
    capsys.readouterr()
    jobs, failures, out = tmp_path / "jobs.txt", tmp_path / "failures.txt", tmp_path / "out"
    arguments = [
        "run",
        "--platform",
        "cluster",
        "--workload",
        f"refcode:{jobs}",
        "--silent-errors",
        str(failures),
        "--out",
        str(out),
    ]
    assert main([*arguments, "--policy", "R-LIST-1"]) == 0
    table = pd.read_csv(out / "scenarios.csv")
    assert len(table) == 4 and (table.makespan >= table.lower_bound).all() and (table.failures >= 0).all()
    assert len(repr(table.makespan[0]).split(".")[-1]) > 6  # written at full precision
    assert main([*arguments, "--scenarios", "5"]) == 2
    assert "5 scenarios needed" in capsys.readouterr().err


def test_the_old_flat_command_names_its_new_form(capsys):
    assert main(["flat", "rigid", "jobs.txt", "failures.txt"]) == 2
    assert "torus-sim run --platform cluster --workload refcode:JOBS --silent-errors FAILURES" in capsys.readouterr().err
