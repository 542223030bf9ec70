"""Issue 30's rows, one test each: hostile or mistaken input is one sentence, exit code 2, nothing written.

Each case failed (a traceback, a hang or a wrong number) before the change that made it pass.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from torus_sim.interfaces.cli import main

from .conftest import cli_process


def never(monkeypatch, target: str) -> None:
    """Make ``target`` (``module.attribute``) fail the test if it is called: a refusal must come before it.

    The deterministic form of "refused at once": the expensive step (building the model, drawing failures) is never
    reached, however loaded the machine running the suite is (a wall-clock bound is not a test of that).
    """

    def reached(*args, **kwargs):
        raise AssertionError(f"{target} was called: the input should have been refused before it")

    monkeypatch.setattr(target, reached)


def refused(capsys, tmp_path, *arguments, command="run"):
    """Run the CLI; return its one-line error (asserting exit 2, one line, no traceback, no output folder)."""
    out = tmp_path / "out"
    code = main([command, *arguments, "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("torus-sim: error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    assert not out.exists()
    return err


# -- row 1: synthetic failures bounded by the span and the platform -----------------------------


@pytest.mark.parametrize("count", ["999999999999", "1000000"])
def test_row1_a_huge_synthetic_failure_count_is_refused_at_once(capsys, tmp_path, monkeypatch, count):
    never(monkeypatch, "failure_logs.synthetic.SyntheticFailures.draw")  # refused before one failure is drawn
    err = refused(capsys, tmp_path, "--failures", f"synthetic:{count}", "--max-jobs", "500")
    assert f"synthetic:{count} asks {int(count):,} failures; at most" in err and "one per node per hour" in err


# -- row 2: a negative seed ---------------------------------------------------------------------


def test_row2_a_negative_seed_is_refused(capsys, tmp_path):
    assert "seed: Input should be greater than or equal to 0 (got -1)" in refused(capsys, tmp_path, "--seed", "-1")
    scenario = tmp_path / "s.toml"
    scenario.write_text("[run]\nseed = -1\n")
    assert "[run] seed: Input should be greater than or equal to 0" in refused(capsys, tmp_path, str(scenario))


# -- row 4: deep nesting -------------------------------------------------------------------------


def test_row4_deeply_nested_toml_and_json_are_refused(capsys, tmp_path):
    toml = tmp_path / "deep.toml"
    toml.write_text("a = " + "[" * 100_000)
    assert "not valid TOML" in refused(capsys, tmp_path, str(toml))
    workload = tmp_path / "deep.json"
    workload.write_text("[" * 200_000)
    assert "deep.json" in refused(capsys, tmp_path, "--platform", "cluster", "--nodes", "4", "--workload", str(workload))


# -- row 5: Batsim nb_res beyond any machine -------------------------------------------------------


@pytest.mark.parametrize("digits", [400, 5000])
def test_row5_a_batsim_nb_res_of_many_digits_is_refused(capsys, tmp_path, digits):
    workload = tmp_path / "huge.json"
    workload.write_text('{"nb_res": ' + "9" * digits + ', "jobs": [], "profiles": {}}')
    err = refused(capsys, tmp_path, "--platform", "cluster", "--workload", str(workload))
    assert "huge.json" in err


# -- row 6: platform sizes ---------------------------------------------------------------------------


@pytest.mark.parametrize("nodes", ["10000000000", "1e20"])
def test_row6_a_cluster_beyond_the_largest_is_refused(capsys, tmp_path, nodes):
    err = refused(capsys, tmp_path, "--platform", "cluster", "--nodes", nodes, "--failures", "synthetic:10")
    assert "[platform] nodes:" in err and ("less than or equal to 4194304" in err or "exceeded maximum size" in err)


def test_row6_an_swf_header_maxprocs_of_23_digits_is_refused(capsys, tmp_path):
    log = tmp_path / "big.swf"
    log.write_text("; MaxProcs: " + "9" * 23 + "\n1 0 0 10 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1\n")
    err = refused(capsys, tmp_path, "--platform", "cluster", "--workload", str(log))
    assert "at most 4,194,304 are simulated: give nodes" in err


# -- row 7: silent-error counts ------------------------------------------------------------------------


def test_row7_silent_error_counts_of_23_digits_are_refused(capsys, tmp_path):
    jobs, failures = tmp_path / "jobs.txt", tmp_path / "failures.txt"
    assert main(["generate-rigid", str(tmp_path), "--jobs", "5", "--scenarios", "2"]) == 0
    capsys.readouterr()
    failures.write_text(" ".join(["1"] * 4 + ["9" * 23]) + "\n")
    err = refused(
        capsys,
        tmp_path,
        "--platform",
        "cluster",
        "--workload",
        f"refcode:{jobs}",
        "--silent-errors",
        str(failures),
        "--policy",
        "R-LIST-0",
    )
    assert "failures.txt:1: " in err and "at most 1,000,000" in err


# -- row 11: a torus too large is refused before anything is built ---------------------------------------


def test_row11_a_huge_torus_is_refused_at_once(capsys, tmp_path, monkeypatch):
    never(monkeypatch, "torus_sim.experiments.model_builder.build_platform")  # refused before any node is made
    never(monkeypatch, "torus_sim.experiments.runner.build_model")
    err = refused(capsys, tmp_path, "--torus-dims", "1000x1000x1000")
    assert "a 1000x1000x1000 torus has" in err and "at most 200,000" in err


# -- row 16: infinities and empty sweeps ------------------------------------------------------------------


@pytest.mark.parametrize(
    "option, value",
    [("--verification-time", "inf"), ("--gamma", "inf"), ("--time-cost", "inf"), ("--slowdown", "inf"), ("--load-scale", "nan")],
)
def test_row16_infinite_or_nan_parameters_are_refused(capsys, tmp_path, option, value):
    err = refused(capsys, tmp_path, option, value)
    assert "Input should be a finite number" in err


# -- row 17: drawn silent errors on a table: workload are the same in every process ---------------------------


def test_row17_a_table_workload_with_drawn_silent_errors_is_the_same_in_two_processes(tmp_path):
    table = tmp_path / "times.txt"
    table.write_text("\n".join(" ".join(str(1000.0 / p * (1 + 0.05 * j)) for p in range(1, 9)) for j in range(12)) + "\n")
    outputs = []
    for salt in ("1", "2"):
        out = tmp_path / f"out{salt}"
        arguments = ["--platform", "cluster", "--nodes", "8", "--workload", f"table:{table}", "--error-rate", "0.0005"]
        cli_process("run", *arguments, "--scenarios", "5", "--policy", "LPA", "--out", str(out), env={"PYTHONHASHSEED": salt})
        outputs.append((out / "scenarios.csv").read_bytes())
    assert outputs[0] == outputs[1]


def test_row17_no_string_hash_seeds_anywhere():
    root = Path(__file__).parents[1]
    offenders = [
        f"{path.relative_to(root)}:{number}"
        for folder in ("torus_sim", "failure_logs", "predictors", "agents")
        for path in (root / folder).rglob("*.py")
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if " hash(" in line or "(hash(" in line or "[hash(" in line
    ]
    assert not offenders


# -- row 24: the batch_run counter of failures no longer hides the parameter ------------------------------------


def test_row24_batch_run_rows_keep_the_failures_parameter():
    import mesa

    from torus_sim.experiments.runner import ConfiguredModel

    rows = mesa.batch_run(
        ConfiguredModel,
        {"max_jobs": 40, "failures": "synthetic:5", "seed": [0], "step_seconds": 86400.0},
        iterations=1,
        max_steps=200,
        number_processes=1,
        display_progress=False,
    )
    assert {row["failures"] for row in rows} == {"synthetic:5"}
    assert rows[-1]["failures_so_far"] >= 0


def test_row24_the_default_output_folder_is_ignored_by_git():
    ignored = (Path(__file__).parents[1] / ".gitignore").read_text().splitlines()
    assert "torus-sim-results/" in ignored


def json_roundtrip(path: Path) -> dict:
    return json.loads(path.read_text())


# -- row 3: sweep files of the wrong shape ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "body, expected",
    [
        ("grid = 5", "grid: expected a table of keys, got 5"),
        ("case = 5", "case: expected a list"),
        ('case = ["a"]', "case.0: expected a table of keys, got 'a'"),
        ("figure = [1]", "figure.0: expected a table of keys, got 1"),
        ("paper = 5", "paper: expected a list"),
        ("paper = [5]", "paper.0: expected a table of keys, got 5"),
        ('[[figure]]\nname = "f"\nx = "seed"\ny = 5', "figure.0.y: expected a list"),
        ('[[figure]]\nname = "f"\nx = "seed"\ny = ["jobs"]\nwhere = "x"', "figure.0.where: expected a table of keys, got 'x'"),
        ('seeds = "0"', "seeds: expected a list"),
        ("max_runs = 0", "max_runs: Input should be greater than or equal to 1"),
    ],
)
def test_row3_a_sweep_file_of_the_wrong_shape_is_one_sentence(capsys, tmp_path, body, expected):
    file = tmp_path / "bad.toml"
    file.write_text(body + "\n")
    err = refused(capsys, tmp_path, str(file), command="sweep")
    assert f"{file}: " in err and expected in err, err


# -- row 12: a huge grid is refused before it is built --------------------------------------------------------


def test_row12_a_grid_of_a_million_runs_is_refused_at_once_unless_allowed(capsys, tmp_path, monkeypatch):
    import resource

    file = tmp_path / "huge.toml"
    values = ", ".join(str(value) for value in range(1000))
    file.write_text(
        f"[workload]\nmax_jobs = 10\n[grid]\nseed = [{values}]\nconfidence = [{', '.join(str(v / 1000) for v in range(1000))}]\n"
    )
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    never(monkeypatch, "torus_sim.experiments.run_experiment")  # refused before a run
    err = refused(capsys, tmp_path, str(file), command="sweep")
    assert "the sweep has 1,000,000 runs, more than 10,000; set max_runs = 1000000 in the file or pass --yes" in err
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200_000  # KiB: no million points in memory
    from torus_sim.experiments import load_experiment

    experiment = load_experiment(file)
    experiment.max_runs = 10**6
    experiment.check_size()  # allowed by the file's max_runs


@pytest.mark.parametrize("option, value", [("--sets", "-1"), ("--max-jobs", "0"), ("--scenarios", "0")])
def test_row16_sweep_counts_must_be_positive(capsys, tmp_path, option, value):
    file = tmp_path / "ok.toml"
    file.write_text("[workload]\nmax_jobs = 10\n")
    with pytest.raises(SystemExit) as caught:
        main(["sweep", str(file), option, value, "--out", str(tmp_path / "out")])
    assert caught.value.code == 2
    assert "expected an integer >= 1" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


# -- row 8: the output folder is checked before the simulation ------------------------------------------------


@pytest.mark.parametrize("kind", ["file", "under-file", "dev-null", "root", "empty", "proc"])
def test_row8_an_output_folder_that_cannot_be_written_is_refused_before_simulating(capsys, tmp_path, monkeypatch, kind):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "FILE").write_text("x")
    out = {"file": "FILE", "under-file": "FILE/sub", "dev-null": "/dev/null", "root": "/", "empty": "", "proc": "/proc/x"}[kind]
    never(monkeypatch, "torus_sim.experiments.runner.build_model")  # refused before the simulation is built
    code = main(["run", "--workload", "bundled", "--out", out])  # the whole bundled log: seconds if it ran
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert "output folder" in err or "cannot write there" in err
    assert (tmp_path / "FILE").read_text() == "x" and sorted(p.name for p in tmp_path.iterdir()) == ["FILE"]


def test_row8_a_result_name_that_is_a_folder_is_refused_before_simulating(capsys, tmp_path):
    (tmp_path / "out" / "summary.json").mkdir(parents=True)
    code = main(["run", "--max-jobs", "50", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and "would replace a folder" in err
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["summary.json"]


# -- row 9: a truncated run record is run again --------------------------------------------------------------


def test_row9_a_truncated_run_record_is_treated_as_not_done(capsys, tmp_path):
    file = tmp_path / "two.toml"
    file.write_text('[workload]\nmax_jobs = 30\n[failures]\nfailures = "none"\n[grid]\nseed = [0, 1]\n')
    out = tmp_path / "out"
    assert main(["sweep", str(file), "--out", str(out), "--no-progress"]) == 0
    records = sorted((out / "runs").glob("*.json"))
    first = records[0].read_text()
    records[0].write_text(first[: len(first) // 2])
    capsys.readouterr()
    assert main(["sweep", str(file), "--out", str(out), "--no-progress"]) == 0
    assert f"{records[0]} is truncated or not a run record: running it again" in capsys.readouterr().err
    assert json_roundtrip(records[0])["key"] == records[0].stem


# -- row 10: no Dask scheduler at the address ----------------------------------------------------------------------


def test_row10_a_dask_address_where_nothing_answers_is_one_sentence(capsys, tmp_path):
    pytest.importorskip("dask.distributed")
    file = tmp_path / "one.toml"
    file.write_text("[workload]\nmax_jobs = 10\n")
    began = time.perf_counter()
    code = main(
        ["sweep", str(file), "--executor", "dask", "--scheduler-address", "tcp://127.0.0.1:1", "--out", str(tmp_path / "o")]
    )
    err = capsys.readouterr().err
    assert code == 2 and "no Dask scheduler answers at tcp://127.0.0.1:1" in err and "Traceback" not in err, err
    assert time.perf_counter() - began < 25


# -- row 15: a run's folder appears whole --------------------------------------------------------------------------


def test_row15_results_appear_whole_and_the_manifest_comes_last(tmp_path, monkeypatch):
    from torus_sim.core import files
    from torus_sim.experiments.runner import Scenario, run
    from torus_sim.outputs.reports import write_results

    result = run(Scenario(max_jobs=30, failures="none"))
    written = []
    original = files._write_content  # every file of a new folder is written through it (a table piece by piece)

    def killed_after_jobs(path, content):
        written.append(path.name)
        if path.name == "summary.json":
            raise KeyboardInterrupt  # the run is killed between jobs.csv and summary.json
        return original(path, content)

    monkeypatch.setattr(files, "_write_content", killed_after_jobs)
    with pytest.raises(KeyboardInterrupt):
        write_results(tmp_path / "new", result)
    assert written == ["jobs.csv", "summary.json"] and not (tmp_path / "new").exists()
    assert [p.name for p in tmp_path.iterdir()] == []  # the staging folder is gone too
    monkeypatch.setattr(files, "_write_content", original)
    paths = write_results(tmp_path / "new", result)
    assert set(paths) == {"jobs", "summary"}
    # into an existing folder: every file is on disk before anything is replaced; the new manifest comes last
    order = []
    real = files.os.replace
    monkeypatch.setattr(files.os, "replace", lambda source, target: order.append(Path(target).name) or real(source, target))
    write_results(tmp_path / "new", result)
    assert order == ["jobs.csv", "summary.json"]


# -- row 19: the README's Dask snippet, saved to a file and run with python ------------------------------------------


def test_row19_the_readme_dask_snippet_runs_as_written(tmp_path):
    import re

    pytest.importorskip("dask.distributed")
    readme = (Path(__file__).parents[1] / "docs" / "guide" / "sweeps.md").read_text()  # the README's sweep section moved there
    snippet = re.search(r"```python\n(import torus_sim\n\nif __name__ == \"__main__\":\n.*?)```", readme, re.S).group(1)
    (tmp_path / "sweep_script.py").write_text(snippet)
    done = subprocess.run([sys.executable, "sweep_script.py"], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "confidence" in done.stdout and len(list((tmp_path / "runs" / "conf" / "runs").glob("*.json"))) == 18


# -- row 20: the figure command on a fresh clone, never over tracked files --------------------------------------------


def test_row20_figure_from_the_shipped_results_writes_where_it_is_told(capsys, tmp_path, monkeypatch):
    root = Path(__file__).parents[1]
    monkeypatch.chdir(root)
    shipped = root / "docs" / "bgl_fault" / "failures_sdsc" / "fig3_bsld_vs_failures.png"
    before = shipped.read_bytes()
    out = tmp_path / "figures"
    assert main(["figure", "fig3_bsld_vs_failures", "--results", "docs/bgl_fault/failures_sdsc", "--out", str(out)]) == 0
    assert (out / "fig3_bsld_vs_failures.png").exists() and shipped.read_bytes() == before


# -- row 21: the Gantt script without evalys ----------------------------------------------------------------------------


def test_row21_the_gantt_script_says_which_package_it_needs(tmp_path):
    blocker = tmp_path / "evalys"
    blocker.mkdir()
    (blocker / "__init__.py").write_text("raise ImportError('evalys is not installed')\n")
    script = Path(__file__).parents[1] / "docs" / "exchange" / "gantt.py"
    done = subprocess.run(
        [sys.executable, str(script)],
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0 and "pip install evalys" in done.stderr and "Traceback" not in done.stderr


# -- row 23: help texts, progress bars off a terminal, resume keyed by what runs ------------------------------------------


def test_row23_help_texts_show_each_default_once(capsys):
    for command in (["sweep", "--help"], ["figure", "--help"]):
        with pytest.raises(SystemExit):
            main(command)
        text = capsys.readouterr().out
        assert "(default: True)" not in text and "(default: None)" not in text and ") (default:" not in text


def test_row23_a_sweep_written_to_a_file_shows_no_progress_bar(tmp_path):
    file = tmp_path / "one.toml"
    file.write_text('[workload]\nmax_jobs = 20\n[failures]\nfailures = "none"\n')
    done = cli_process("sweep", str(file), "--out", str(tmp_path / "out"))
    assert "run/s" not in done.stderr and "it/s" not in done.stderr and "\r" not in done.stderr


def test_row23_an_online_sweep_resumes_whatever_its_batch_only_options(capsys, tmp_path):
    file = tmp_path / "online.toml"
    file.write_text('[workload]\nmax_jobs = 30\n[failures]\nfailures = "none"\n[grid]\nseed = [0, 1, 2]\n')
    out = tmp_path / "out"
    assert main(["sweep", str(file), "--out", str(out), "--no-progress", "--scenarios", "5"]) == 0
    stored = {path.name: path.stat().st_mtime_ns for path in (out / "runs").glob("*.json")}
    assert len(stored) == 3
    assert main(["sweep", str(file), "--out", str(out), "--no-progress"]) == 0
    assert {path.name: path.stat().st_mtime_ns for path in (out / "runs").glob("*.json")} == stored  # nothing re-ran


# -- row 22: the run header says what ran -----------------------------------------------------------------------------


def test_row22_the_header_and_manifest_name_what_ran(capsys, tmp_path):
    assert main(["run", "--policy", "balancing", "--max-jobs", "200", "--out", str(tmp_path / "a"), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "policy    balancing (predictor oracle-confidence), backfill on, migration on" in out
    assert "(the first 200 jobs, online; cleaning walltime from runtime 200; offered load " in out
    assert json_roundtrip(tmp_path / "a" / "summary.json")["inputs"]["policy"] == "balancing"
    arguments = ["run", "--platform", "cluster", "--policy", "PV-EASY", "--max-jobs", "200", "--failures", "bundled"]
    assert main([*arguments, "--out", str(tmp_path / "b"), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "policy    PV-EASY; c = 1; seed 0" in out and "migration on" not in out
    assert "work lost (node-s)" in out and "supernode" not in out


# -- row 25: L(f) follows RIGID Eq. 5-6, V excluded, unless asked ---------------------------------------------------


def test_row25_the_rigid_lower_bound_leaves_the_verification_time_out_by_default():
    import numpy as np

    from torus_sim.experiments.runner import Scenario, run
    from torus_sim.inputs.workload.refcode import read_failure_scenarios, read_rigid_jobs

    golden = Path(__file__).parent / "golden" / "rigid"
    fields = {
        "platform": "cluster",
        "workload": f"refcode:{golden / 'jobs.txt'}",
        "silent_errors": str(golden / "failures.txt"),
        "scenarios": 3,
        "policy": "R-LIST-0",
        "verification_time": 10.0,
    }
    header, jobs = read_rigid_jobs(golden / "jobs.txt")
    failures = read_failure_scenarios(golden / "failures.txt", len(jobs.runtimes), 3)
    attempts = failures + 1
    by_hand = np.maximum(
        (attempts * jobs.runtimes).max(axis=1), (attempts * jobs.runtimes * jobs.processors).sum(axis=1) / header.processors
    )
    paper = run(Scenario(**fields)).scenarios["lower_bound"].to_numpy()
    assert np.array_equal(paper, by_hand)
    with_v = run(Scenario(**fields, bound_verification=True)).scenarios["lower_bound"].to_numpy()
    assert (with_v > paper).all()


# -- row 14: every input of every run is read before the first run --------------------------------------------------


def test_row14_a_malformed_second_failure_log_stops_the_sweep_before_its_first_run(capsys, tmp_path):
    bad = tmp_path / "bad.log"
    bad.write_text(
        "- 1117838570 2005.06.03 R02-M1-N0-C:J12-U11 2005-06-03-15.42.50.675872 R02-M1-N0-C:J12-U11 RAS KERNEL FATAL\nnot a RAS line at all\n"
    )
    file = tmp_path / "grid.toml"
    file.write_text(f'[workload]\nmax_jobs = 20\n[grid]\nfailures = ["none", "{bad}"]\n')
    out = tmp_path / "out"
    code = main(["sweep", str(file), "--out", str(out), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "bad.log" in err and "Traceback" not in err, err
    assert not list(out.glob("runs/*.json"))


# -- rows 13 and 18: binary, zstd, UTF-16 and sparse files, symbolic-link loops ------------------------------------------


@pytest.mark.parametrize(
    "kind, expected",
    [
        ("zstd", "is zstd-compressed"),
        ("utf16", "is UTF-16 text"),
        ("sparse", "holds binary data (NUL bytes)"),
        ("loop", "is a symbolic link that leads nowhere"),
    ],
)
def test_row13_row18_files_that_are_not_text_are_named_for_what_they_are(capsys, tmp_path, kind, expected):
    log = tmp_path / "log.swf"
    if kind == "zstd":
        log.write_bytes(b"\x28\xb5\x2f\xfd" + b"\x00" * 100)
    elif kind == "utf16":
        log.write_text("; MaxProcs: 128\n1 0 0 10 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1\n", encoding="utf-16")
    elif kind == "sparse":
        with open(log, "wb") as handle:
            handle.truncate(1 << 30)  # 1 GiB of NULs, sparse on disk
    else:
        log.symlink_to(tmp_path / "log.swf")
    import resource

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    err = refused(capsys, tmp_path, "--platform", "cluster", "--nodes", "128", "--workload", str(log))
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 500_000  # KiB: the file is never read whole
    assert "log.swf" in err and expected in err, err


def test_row13_a_binary_workload_is_refused_from_its_first_bytes_before_its_bytes_are_hashed(tmp_path, monkeypatch):
    """read_swf hashes a file to know a second read of it: a sparse or binary file is refused from its first 64 KiB
    before that (a 1 GiB sparse file took 3.4 s to refuse, most of it hashing NULs; now about 0.5 s, the start-up)."""
    from torus_sim.core.errors import InputFileError
    from torus_sim.inputs.workload import swf

    log = tmp_path / "log.swf"
    with open(log, "wb") as handle:
        handle.truncate(1 << 30)

    def hashed(path):
        raise AssertionError(f"{path} hashed before it was sniffed")

    monkeypatch.setattr(swf, "file_sha256", hashed)
    with pytest.raises(InputFileError, match="holds binary data"):
        swf.read_swf(log)


# -- row 18: messages that name the right thing ---------------------------------------------------------------------


def test_row18_a_batsim_json_syntax_error_is_not_called_an_swf_line(capsys, tmp_path):
    workload = tmp_path / "w.json"
    workload.write_text('{"nb_res": 4,\n "jobs": [\n}')
    err = refused(capsys, tmp_path, "--platform", "cluster", "--workload", str(workload))
    assert "w.json:3: malformed Batsim JSON line" in err and "SWF" not in err


def test_row18_a_lanl_unterminated_quote_is_reported_at_its_line(tmp_path):
    from failure_logs.lanl import read_lanl
    from torus_sim.core.errors import FailureLogFormatError

    header = "System,machine type,nodes,procstot,procsinnode,nodenum,nodenumz,node install,node prod,node decom,fru type,mem,cputype,memtype,num intf,Prob Started,Prob Fixed,Down Time,Facilities,Hardware,Human Error,Network,Undetermined,Software"
    good = "20,cluster,512,2048,4,1,1,,,,part,4,cpu,mem,1,06/01/2004 10:00,06/01/2004 11:00,60,,,,,,Other"
    lines = [header] + [good] * 20 + ['20,"cluster,512'] + [good] * 3
    (tmp_path / "l.csv").write_text("\n".join(lines) + "\n")
    with pytest.raises(FailureLogFormatError, match=r"l.csv:22: "):
        read_lanl(tmp_path / "l.csv", 20, 128)


def test_row18_a_lanl_node_beyond_the_system_is_named_with_its_line(tmp_path):
    from failure_logs.lanl import read_lanl
    from torus_sim.core.errors import FailureLogFormatError

    header = "System,machine type,nodes,procstot,procsinnode,nodenum,nodenumz,node install,node prod,node decom,fru type,mem,cputype,memtype,num intf,Prob Started,Prob Fixed,Down Time,Facilities,Hardware,Human Error,Network,Undetermined,Software"
    row = "20,cluster,512,2048,4,1,{node},,,,part,4,cpu,mem,1,06/01/2004 10:00,06/01/2004 11:00,60,,,,,,Other"
    (tmp_path / "l.csv").write_text("\n".join([header, row.format(node=3), row.format(node=700)]) + "\n")
    with pytest.raises(FailureLogFormatError, match=r"l.csv:3: .*'nodenumz' 700 is not below the system's node count 512"):
        read_lanl(tmp_path / "l.csv", 20, 128)


def test_row18_swf_header_and_duplicate_ids_are_named_with_their_lines(capsys, tmp_path):
    log = tmp_path / "h.swf"
    log.write_text("; Version: 2.2\n; MaxProcs: abc\n1 0 0 10 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1\n")
    assert "h.swf:2: malformed SWF line: header 'MaxProcs' is not an integer" in refused(
        capsys, tmp_path, "--platform", "cluster", "--workload", str(log)
    )
    log.write_text(
        "; MaxProcs: 8\n1 0 0 10 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1\n2 5 0 10 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1\n\n1 9 0 10 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1\n"
    )
    assert "h.swf:5: malformed SWF line: job id 1 appears again (first at line 2)" in refused(
        capsys, tmp_path, "--platform", "cluster", "--workload", str(log)
    )
    log.write_text("; MaxProcs: -5\n1 0 0 10 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1\n")
    assert "h.swf:1: malformed SWF line: header 'MaxProcs' must be a positive machine size, got -5" in refused(
        capsys, tmp_path, "--platform", "cluster", "--workload", str(log)
    )


def test_row18_an_infinite_load_scale_in_a_file_names_the_file(capsys, tmp_path):
    file = tmp_path / "s.toml"
    file.write_text("[workload]\nload_scale = inf\n")
    err = refused(capsys, tmp_path, str(file))
    assert f"{file}: [workload] load_scale: Input should be a finite number" in err


def test_row18_every_failure_reader_refuses_an_empty_file(capsys, tmp_path):
    for name in ("empty.log", "empty.csv", "empty.tab"):
        (tmp_path / name).write_text("")
        err = refused(capsys, tmp_path, "--failures", str(tmp_path / name), "--max-jobs", "10")
        assert name in err and ("empty" in err or "no header" in err), err


def test_row18_warnings_are_one_line_and_a_single_failure_is_not_a_gap(tmp_path):
    def run_cli(*arguments):  # a process of its own: pytest would capture the warnings
        return [line for line in cli_process("run", *arguments).stderr.splitlines() if line]

    log = tmp_path / "one.log"
    log.write_text(
        "- 1117838570 2005.06.03 R02-M1-N0-C:J12-U11 2005-06-03-15.42.50.675872 R02-M1-N0-C:J12-U11 RAS KERNEL FATAL x\n"
    )
    assert run_cli("--failures", str(log), "--max-jobs", "50", "--out", str(tmp_path / "o")) == []
    two = tmp_path / "two.log"
    two.write_text(log.read_text() + log.read_text().replace("1117838570", "1117838600"))
    lines = run_cli("--failures", str(two), "--max-jobs", "50", "--no-fit-failures", "--out", str(tmp_path / "p"))
    assert len(lines) == 1 and lines[0].startswith("torus-sim: warning: failure log ") and "no failures in" in lines[0], lines


# ======================================================================================================
# Issue 41: a scenario file is data, not code; the browser server trusts no message; the last crash paths.
# One test (or one parametrized test) per row; each failed before the change that made it pass.
# ======================================================================================================

HOSTILE_MODULE = """
import os, sys, time
from torus_sim.api import Policy, Reserve, Start
from torus_sim.policies.easy import EasyPolicy
from torus_sim.policies.placement import PlacementPolicy
from predictors.base import FailurePredictor
from predictors.runtime import RuntimePredictor


class _Easy(EasyPolicy):
    def __init__(self):
        super().__init__("fcfs")
        self.name = type(self).__name__


class RaisesKeyboardInterrupt(_Easy):
    def plan(self, view):
        raise KeyboardInterrupt


class RaisesBaseException(_Easy):
    def plan(self, view):
        raise BaseException("bare")


class ExitsZero(_Easy):
    def plan(self, view):
        sys.exit(0)


class ExitsThree(_Easy):
    def plan(self, view):
        sys.exit(3)


class HardExit(_Easy):
    def plan(self, view):
        os._exit(0)


class Spins(_Easy):
    def plan(self, view):
        while True:
            pass


class SpinsCatchingEverything(_Easy):
    def plan(self, view):
        while True:
            try:
                time.sleep(0.01)
            except Exception:
                pass


class Sleeps(_Easy):
    def plan(self, view):
        time.sleep(10**6)


class SlowAndMarks(_Easy):
    def plan(self, view):
        open(os.environ["TORUS_SIM_TEST_MARKER"], "w").close()
        time.sleep(0.05)
        yield from super().plan(view)


class MutatesTheHead(_Easy):
    def plan(self, view):
        head = view.queue.head
        if head is not None:
            head.runtime = 0
            head.size = 0
        yield from super().plan(view)


class RemovesFromTheQueue(_Easy):
    def plan(self, view):
        if len(view.queue):
            view.queue.remove(view.queue.head)
        yield from super().plan(view)


class ClearsTheRunningSet(_Easy):
    def plan(self, view):
        view.running.clear()
        yield from super().plan(view)


class AllocatesItself(_Easy):
    def plan(self, view):
        if len(view.queue) and view.platform.kind == "cluster":
            view.platform.allocate(1, view.queue.head.job_id)
        yield from super().plan(view)


class KeyRaises(_Easy):
    def queue_key(self, job):
        raise RuntimeError("no key")


class KeyNaN(_Easy):
    def queue_key(self, job):
        return (float("nan"), job.job_id)


class KeyMixed(_Easy):
    def queue_key(self, job):
        return "text" if job.job_id % 2 else job.job_id


class AttachRaises(_Easy):
    def attach(self, model):
        raise RuntimeError("cannot attach")


class PlatformsNotNames(_Easy):
    platforms = 5


class ReservesAtNaN(_Easy):
    def plan(self, view):
        if view.queue.head is not None:
            yield Reserve(view.queue.head, float("nan"))
        yield from super().plan(view)


class ReservesInThePast(_Easy):
    def plan(self, view):
        if view.queue.head is not None:
            yield Reserve(view.queue.head, view.now - 100.0)
        yield from super().plan(view)


class NeverChooses(PlacementPolicy):
    name = "never-chooses"

    def choose(self, table, job, candidate_ids, words, now):
        while True:
            pass

    def choose_nodes(self, free_nodes, job, now):
        while True:
            pass


class ChoosesAnOccupiedPartition(PlacementPolicy):
    name = "wrong-choice"

    def choose(self, table, job, candidate_ids, words, now):
        return -1


class PredictorRaises(RuntimePredictor):
    def predict(self, job):
        raise RuntimeError("no prediction")


def _predicting(value):
    class Predicts(RuntimePredictor):
        def predict(self, job):
            return value

    return Predicts


PredictsNone = _predicting(None)
PredictsText = _predicting("soon")
PredictsNaN = _predicting(float("nan"))
PredictsNegative = _predicting(-5.0)
PredictsInfinity = _predicting(float("inf"))


class ObserveEndRaises(RuntimePredictor):
    def predict(self, job):
        return job.walltime

    def observe_end(self, job):
        raise ValueError("cannot learn")


class WrongShape(FailurePredictor):
    def supernode_probabilities(self, start, window):
        import numpy as np

        return np.zeros(3)


class OutsideZeroOne(FailurePredictor):
    def supernode_probabilities(self, start, window):
        import numpy as np

        return np.full(self.n_supernodes, 1.5)


class NaNProbabilities(FailurePredictor):
    def supernode_probabilities(self, start, window):
        import numpy as np

        return np.full(self.n_supernodes, np.nan)
"""


@pytest.fixture
def hostile(tmp_path, monkeypatch):
    """The misbehaving plug-ins above as an importable module; returns its name."""
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "hostile_plugins.py").write_text(HOSTILE_MODULE)
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.setenv("PYTHONPATH", str(folder) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    sys.modules.pop("hostile_plugins", None)
    return "hostile_plugins"


CLUSTER_RUN = ("--platform", "cluster", "--nodes", "128", "--max-jobs", "200", "--failures", "none")


def one_sentence(err: str, code: int, expected_code: int = 2) -> str:
    assert code == expected_code, err
    assert err.startswith("torus-sim: ") and err.count("\n") == 1 and "Traceback" not in err, err
    return err


def cli_subprocess(*arguments: str, timeout: float = 120, **keywords) -> subprocess.CompletedProcess:
    """``torus-sim ARGUMENTS`` in its own process (for code that would end the test process), any exit code."""
    return subprocess.run(
        [sys.executable, "-m", "torus_sim.interfaces.cli", *arguments],
        capture_output=True,
        text=True,
        timeout=timeout,
        **keywords,
    )


# -- row 1: a name in a scenario never calls an arbitrary function ----------------------------------------------

DANGEROUS = [
    ("os:system", {"command": "touch PWNED"}),
    ("subprocess:run", {"args": ["touch", "PWNED"]}),
    ("builtins:exec", {"source": "open('PWNED', 'w')"}),
    ("shutil:rmtree", {"path": "KEEP"}),
    ("pathlib:Path", {}),
]


def _toml_table(params: dict) -> str:
    return "".join(f"{key} = {json.dumps(value)}\n" for key, value in params.items())


@pytest.mark.parametrize("spec, params", DANGEROUS)
@pytest.mark.parametrize("given_by", ["option", "scenario file", "sweep file"])
def test_i41_row1_a_stdlib_callable_named_as_a_policy_is_refused_before_anything_is_called(
    capsys, tmp_path, monkeypatch, spec, params, given_by
):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "KEEP").mkdir()
    out = tmp_path / "out"
    if given_by == "option":
        options = [f"--policy-param={key}={json.dumps(value)}" for key, value in params.items()]
        code = main(["run", "--policy", spec, *options, "--max-jobs", "20", "--out", str(out)])
    else:
        path = tmp_path / "hostile.toml"
        body = f'[policy]\npolicy = "{spec}"\n[policy.params]\n{_toml_table(params)}[workload]\nmax_jobs = 20\n'
        if given_by == "sweep file":
            body = 'title = "hostile"\nseeds = [0, 1]\n' + body
        path.write_text(body)
        code = main(["run" if given_by == "scenario file" else "sweep", str(path), "--out", str(out)])
    err = one_sentence(capsys.readouterr().err, code)
    assert "nothing was called" in err, err
    assert not (tmp_path / "PWNED").exists() and (tmp_path / "KEEP").is_dir() and not out.exists()


@pytest.mark.parametrize(
    "option", ["--placement", "--predictor", "--runtime-predictor"], ids=["placement", "predictor", "runtime predictor"]
)
def test_i41_row1_every_kind_of_extension_refuses_a_function(capsys, tmp_path, monkeypatch, option):
    monkeypatch.chdir(tmp_path)
    kind_option = option + "-param"
    arguments = ["--policy", "balancing"] if option == "--predictor" else []
    code = main(["run", *arguments, option, "os:system", kind_option, "command=touch PWNED", "--max-jobs", "20", "--out", "o"])
    err = one_sentence(capsys.readouterr().err, code)
    assert "nothing was called" in err and "posix.system" in err and not (tmp_path / "PWNED").exists()


def test_i41_row1_a_function_marked_as_a_factory_may_be_named(tmp_path, monkeypatch):
    from torus_sim.experiments.runner import Scenario, run

    (tmp_path / "made.py").write_text(
        "from torus_sim.api import Policy\nfrom torus_sim.policies.easy import EasyPolicy\n"
        "from torus_sim.api import factory_of\n\n"
        "@factory_of(Policy)\ndef make_easy(order: str = 'fcfs') -> Policy:\n    return EasyPolicy(order)\n\n"
        "def unmarked() -> Policy:\n    return EasyPolicy('fcfs')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("made", None)
    result = run(Scenario(platform="cluster", nodes=128, max_jobs=100, failures="none", policy="made:make_easy"))
    assert len(result.jobs) == 100
    with pytest.raises(Exception, match="is the function made.unmarked, not a Policy"):
        Scenario(platform="cluster", nodes=128, policy="made:unmarked")


def test_i41_row1_the_guide_says_what_a_scenario_file_can_do():
    guide = (Path(__file__).parents[1] / "docs" / "policies" / "README.md").read_text()
    assert "## What a scenario file can do" in guide
    section = guide.split("## What a scenario file can do", 1)[1]
    for words in ("imports", "never calls", "factory_of", "os:system", "os._exit"):
        assert words in section, words


# -- row 2: the browser server takes no value it did not offer ----------------------------------------------------


@pytest.fixture
def audit(tmp_path):
    """Record every file opened and module imported while ``audit.on`` (sys.addaudithook cannot be removed)."""

    class Audit:
        on = False
        opened: list = []
        imported: list = []

    def hook(event, arguments):
        if not Audit.on:
            return
        if event == "open" and arguments and isinstance(arguments[0], (str, Path)):
            Audit.opened.append(str(arguments[0]))
        elif event == "import":
            Audit.imported.append(arguments[0])

    sys.addaudithook(hook)
    yield Audit
    Audit.on = False


@pytest.mark.parametrize(
    "field, value",
    [
        ("workload", "/etc/passwd"),
        ("workload", "{secret}"),
        ("failures", "/etc/passwd"),
        ("failures", "{secret}"),
        ("machine", "{secret}"),
        ("policy", "evil_viz_module:Policy"),
        ("policy", "os:system"),
        ("predictor", "evil_viz_module:Predictor"),
        ("platform", "mainframe"),
    ],
)
def test_i41_row2_the_browser_model_opens_and_imports_nothing_it_did_not_offer(tmp_path, monkeypatch, audit, field, value):
    from torus_sim.interfaces.viz import app

    secret = tmp_path / "secret.toml"
    secret.write_text('name = "x"\ndims = [1, 1, 2]\n')
    (tmp_path / "evil_viz_module.py").write_text(f"open({str(tmp_path / 'IMPORTED')!r}, 'w')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    value = value.format(secret=secret)
    audit.on = True
    try:
        model = app.VizModel(**{field: value}, seed=1)
    finally:
        audit.on = False
    assert "is not one of the choices offered" in model.notice and repr(value)[:40] in model.notice
    assert value not in audit.opened and "/etc/passwd" not in audit.opened
    assert not any("evil_viz_module" in name for name in audit.imported) and not (tmp_path / "IMPORTED").exists()
    assert getattr(model.scenario, field if field != "predictor" else "predictor") != value


@pytest.mark.parametrize(
    "field, value",
    [("load_scale", 1e308), ("load_scale", float("nan")), ("confidence", -3), ("accuracy", "0.5; rm"), ("seed", "9" * 100)],
)
def test_i41_row2_numbers_outside_their_slider_are_refused_on_the_page(field, value):
    from torus_sim.interfaces.viz import app

    model = app.VizModel(**{field: value})
    assert model.notice and ("outside its range" in model.notice or "is not a whole number" in model.notice)
    assert model.scenario.load_scale == 1.0 and model.scenario.seed == 0


def test_i41_row2_viz_on_every_address_says_others_can_reach_it(capsys, monkeypatch):
    import os
    import socket

    started = []  # the server replaces the command's process (os.execve): here it is only recorded
    monkeypatch.setattr(os, "execve", lambda path, command, environment: started.append((command, environment)))
    with socket.create_server(("127.0.0.1", 0)) as probe:  # a free port (viz checks it before starting)
        port = str(probe.getsockname()[1])
    assert main(["viz", "--host", "0.0.0.0", "--port", port]) == 0
    out = capsys.readouterr().out
    assert "reachable by others" in out and out.count("warning") == 1
    command, environment = started[-1]
    assert environment["SOLARA_KERNEL_CULL_TIMEOUT"] == "2m"  # a closed tab's session is freed (issue 44)
    assert command[1:4] == ["-m", "solara", "run"] and "--production" in command and "--no-check-version" in command
    assert main(["viz", "--port", port]) == 0
    assert "reachable by others" not in capsys.readouterr().out


# -- row 3: a plug-in that raises anything, exits or never returns ends the run with a sentence ------------------------


def test_i41_row3_keyboard_interrupt_in_plan_is_one_line_and_exit_130(capsys, tmp_path, hostile):
    code = main(["run", *CLUSTER_RUN, "--policy", f"{hostile}:RaisesKeyboardInterrupt", "--out", str(tmp_path / "out")])
    err = one_sentence(capsys.readouterr().err, code, 130)
    assert "interrupted (Ctrl-C): nothing was written" in err and not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "name, expected",
    [
        ("RaisesBaseException", "plan raised BaseException: bare (at "),
        ("ExitsZero", "plan called sys.exit(0) (at "),
        ("ExitsThree", "plan called sys.exit(3) (at "),
    ],
)
def test_i41_row3_row15_base_exceptions_and_exits_in_plan_are_policy_errors(capsys, tmp_path, hostile, name, expected):
    code = main(["run", *CLUSTER_RUN, "--policy", f"{hostile}:{name}", "--out", str(tmp_path / "out")])
    err = one_sentence(capsys.readouterr().err, code)
    assert f"policy '{name}' at t = " in err and expected in err and "hostile_plugins.py:" in err
    assert not (tmp_path / "out").exists()


def test_i41_row3_os_exit_in_plan_is_refused(tmp_path, hostile):
    done = cli_subprocess("run", *CLUSTER_RUN, "--policy", f"{hostile}:HardExit", "--out", str(tmp_path / "out"))
    one_sentence(done.stderr, done.returncode)
    assert "plan called os._exit(0) (at " in done.stderr and not (tmp_path / "out").exists()


@pytest.mark.parametrize("name", ["Spins", "Sleeps", "SpinsCatchingEverything"])
def test_i41_row3_a_plan_that_never_returns_is_stopped_at_the_wall_limit(tmp_path, hostile, name):
    began = time.perf_counter()
    done = cli_subprocess(
        "run", *CLUSTER_RUN, "--policy", f"{hostile}:{name}", "--plan-timeout", "1", "--out", str(tmp_path / "o")
    )
    one_sentence(done.stderr, done.returncode)
    assert f"policy '{name}' at t = 0.0 s: its pass ran longer than the wall-clock limit of 1 s" in done.stderr
    assert time.perf_counter() - began < 30 and not (tmp_path / "o").exists()


def test_i41_row3_the_wall_limit_holds_in_a_thread_too(hostile):
    """A run in a worker thread (Dask's threads, the browser's) is stopped the same way."""
    import threading

    from torus_sim.core.errors import PolicyError
    from torus_sim.experiments.runner import Scenario, build_model

    model = build_model(
        Scenario(platform="cluster", nodes=128, max_jobs=50, failures="none", policy=f"{hostile}:Spins", plan_timeout=0.5)
    )
    caught = []
    worker = threading.Thread(target=lambda: caught.append(_run_catching(model)), daemon=True)
    worker.start()
    worker.join(20)
    assert not worker.is_alive()
    assert isinstance(caught[0], PolicyError) and "wall-clock limit of 0.5 s" in str(caught[0])


def _run_catching(model):
    try:
        model.run()
    except BaseException as error:  # noqa: BLE001 - the test inspects it
        return error
    return None


def test_i41_row3_ctrl_c_stops_a_run_with_one_line_and_exit_130(tmp_path, hostile):
    import signal

    out, marker = tmp_path / "out", tmp_path / "in-plan"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "torus_sim.interfaces.cli",
            "run",
            *CLUSTER_RUN,
            "--policy",
            f"{hostile}:SlowAndMarks",
            "--out",
            str(out),
        ],
        stderr=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "TORUS_SIM_TEST_MARKER": str(marker)},
        # as a terminal starts it: an earlier test (Dask) may leave SIGINT ignored in this process, and a child
        # inherits an ignored signal (Python then installs no KeyboardInterrupt handler)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 60
    while not marker.exists() and time.monotonic() < deadline:  # the engine runs the plug-in's passes
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert err.strip().splitlines()[-1] == "torus-sim: interrupted (Ctrl-C): nothing was written" and "Traceback" not in err
    assert not out.exists()


def test_i41_row3_the_default_wall_limit_is_generous_and_documented():
    from torus_sim.engine.guard import DEFAULT_PLAN_TIMEOUT
    from torus_sim.experiments.scenario import Scenario

    assert Scenario().plan_timeout == DEFAULT_PLAN_TIMEOUT >= 300
    guide = (Path(__file__).parents[1] / "docs" / "policies" / "README.md").read_text()
    assert "--plan-timeout" in guide and "exit code 130" in guide


# -- row 4: what a policy receives is read-only ---------------------------------------------------------------------


@pytest.mark.parametrize("platform", ["cluster", "torus"])
def test_i41_row4_a_policy_writing_to_a_job_ends_the_run_naming_the_field(capsys, tmp_path, hostile, platform):
    arguments = ["--platform", platform, "--max-jobs", "200", "--failures", "none"]
    code = main(["run", *arguments, "--policy", f"{hostile}:MutatesTheHead", "--out", str(tmp_path / "out")])
    err = one_sentence(capsys.readouterr().err, code)
    assert "runtime is read-only to extensions" in err and "hostile_plugins.py:" in err


def test_i41_row4_built_in_policies_run_unguarded_and_unchanged():
    from torus_sim.experiments.runner import Scenario, build_model

    model = build_model(Scenario(platform="cluster", nodes=128, max_jobs=50, failures="none", policy="FCFS-EASY"))
    assert not model.calls.guarded and model.run_jobs.job_class.__setattr__ is object.__setattr__


# -- rows 5, 6, 7: output never lost, never half-written, never mixed -----------------------------------------------


def test_i41_row5_a_full_disk_is_one_sentence_and_leaves_nothing(capsys, tmp_path, monkeypatch):
    import errno

    from torus_sim.core import files

    real = files._staged

    def full(path, write, binary=False):
        raise OSError(errno.ENOSPC, "No space left on device")

    original_write = Path.write_bytes

    def full_bytes(self, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Path, "write_bytes", full_bytes)
    out = tmp_path / "out"
    code = main(["run", "--max-jobs", "100", "--batsim", "--swf", "--out", str(out)])
    err = one_sentence(capsys.readouterr().err, code)
    assert f"{out}: No space left on device; nothing was written" in err
    assert list(tmp_path.iterdir()) == []
    # an existing folder keeps its earlier results whole
    monkeypatch.setattr(Path, "write_bytes", original_write)
    assert main(["run", "--max-jobs", "50", "--out", str(out)]) == 0
    before = {path.name: path.read_bytes() for path in out.iterdir()}
    capsys.readouterr()
    monkeypatch.setattr(
        files,
        "_staged",
        lambda path, write, binary=False: full(path, write) if path.name == "summary.json" else real(path, write, binary),
    )
    code = main(["run", "--max-jobs", "60", "--out", str(out)])
    one_sentence(capsys.readouterr().err, code)
    assert {path.name: path.read_bytes() for path in out.iterdir()} == before


def test_i41_row5_a_real_full_file_system(capsys, tmp_path):
    """The issue's reproduction: a 200 kB tmpfs (needs root; skipped with the reason elsewhere)."""
    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=200k", "tmpfs", str(mount)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip() or 'not root'}); the monkeypatched test covers it")
    try:
        code = main(["run", "--max-jobs", "2000", "--batsim", "--swf", "--out", str(mount / "out")])
        err = one_sentence(capsys.readouterr().err, code)
        assert "No space left on device; nothing was written" in err
        assert list(mount.iterdir()) == []
    finally:
        subprocess.run(["umount", str(mount)], check=False)


def test_i41_row6_an_output_folder_that_is_a_link_loop_is_one_sentence(capsys, tmp_path):
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    code = main(["run", "--max-jobs", "10", "--out", str(tmp_path / "a")])
    err = one_sentence(capsys.readouterr().err, code)
    assert "symbolic-link loop" in err


def test_i41_row7_a_run_replaces_the_previous_results_as_a_whole_with_the_users_umask(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    previous = os.umask(0o022)
    try:
        assert main(["run", "--platform", "cluster", "--nodes", "7500", "--workload", "moldable:mix", "--jobs", "20",
                     "--error-rate", "1e-7", "--scenarios", "3", "--policy", "LPA"]) == 0  # fmt: skip
        folder = tmp_path / "torus-sim-results"
        assert (folder / "scenarios.csv").exists()
        assert oct(folder.stat().st_mode & 0o777) == oct(0o755)
        assert main(["run", "--max-jobs", "30", "--failures", "none", "--parquet"]) == 0
        assert sorted(path.name for path in folder.iterdir()) == ["jobs.csv", "jobs.parquet", "summary.json"]
        (folder / "notes.txt").write_text("mine")  # not a result: never touched
        assert main(["run", "--max-jobs", "30", "--failures", "none"]) == 0
        assert sorted(path.name for path in folder.iterdir()) == ["jobs.csv", "notes.txt", "summary.json"]
    finally:
        os.umask(previous)
    capsys.readouterr()


# -- rows 8, 9, 10: impossible values are said aloud; no NaN printed or written ------------------------------------------

SWF_JOB = "{id} {submit} -1 100 {procs} -1 -1 {procs} 200 -1 1 1 1 -1 -1 -1 -1 -1"


def _swf(path: Path, rows, header: str = "; MaxProcs: 128\n") -> Path:
    path.write_text(header + "".join(SWF_JOB.format(id=i + 1, submit=s, procs=p) + "\n" for i, (s, p) in enumerate(rows)))
    return path


def strict_json(path: Path) -> dict:
    def refuse(name):
        raise ValueError(f"not JSON: {name}")

    return json.loads(path.read_text(), parse_constant=refuse)


def warnings_of(*arguments: str) -> list[str]:
    """The warning lines of ``torus-sim ARGUMENTS`` run in a process of its own (pytest would capture them), exit 0."""
    done = cli_subprocess(*arguments)
    assert done.returncode == 0, done.stderr
    return [line for line in done.stderr.splitlines() if line]


@pytest.mark.parametrize(
    "rows, expected",
    [
        ([(0, 4), (-50, 4), (9000, 4)], "1 job was skipped for impossible values (1 with a negative submit time)"),
        ([(0, 4), (10, -5), (9000, 4)], "1 job was skipped for impossible values (1 with a negative processor count)"),
    ],
)
def test_i41_row8_jobs_skipped_for_impossible_values_are_warned_about(tmp_path, rows, expected):
    log = _swf(tmp_path / "log.swf", rows)
    lines = warnings_of(
        "run", "--platform", "cluster", "--nodes", "8", "--workload", str(log), "--failures", "none", "--out", str(tmp_path / "o")
    )
    assert len(lines) == 1 and lines[0].startswith("torus-sim: warning: ") and expected in lines[0], lines
    strict_json(tmp_path / "o" / "summary.json")


def test_i41_row8_a_batsim_job_without_resources_is_warned_about(tmp_path):
    workload = tmp_path / "w.json"
    jobs = [{"id": str(i), "subtime": 1000 * i, "walltime": 100, "res": 0 if i == 1 else 2, "profile": "p"} for i in range(3)]
    workload.write_text(json.dumps({"nb_res": 16, "jobs": jobs, "profiles": {"p": {"type": "delay", "delay": 50}}}))
    lines = warnings_of(
        "run",
        "--platform",
        "cluster",
        "--workload",
        str(workload),
        "--failures",
        "none",
        "--policy",
        "FCFS-EASY",
        "--out",
        str(tmp_path / "o"),
    )
    assert len(lines) == 1 and "1 job was skipped for impossible values (1 with no processors)" in lines[0], lines


def test_i41_row8_one_job_left_prints_and_writes_no_nan(capsys, tmp_path):
    log = _swf(tmp_path / "one.swf", [(0, 4), (-7, 4)])
    code = main(
        [
            "run",
            "--platform",
            "cluster",
            "--nodes",
            "8",
            "--workload",
            str(log),
            "--failures",
            "none",
            "--out",
            str(tmp_path / "o"),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0 and "nan" not in out.lower().replace("nanoseconds", "")
    assert "offered load (after cleaning)" in out and "n/a" in out
    summary = strict_json(tmp_path / "o" / "summary.json")
    assert summary["metrics"]["offered_load"] is None if "metrics" in summary else True


@pytest.mark.parametrize(
    "header, expected",
    [
        ("; MaxProcs: 0\n", "header MaxProcs = 0 is not a machine size; ignored"),
        ("; MaxProcs: -5\n", "header MaxProcs = -5 is not a machine size; ignored"),
        ("; MaxProcs: 8\n; UnixStartTime: -99999999999999999999\n", "header UnixStartTime = -99999999999999999999 is not a time"),
    ],
)
def test_i41_row9_impossible_swf_header_values_are_warned_about(tmp_path, header, expected):
    log = _swf(tmp_path / "h.swf", [(0, 4), (9000, 2)], header=header)
    out = tmp_path / "o"
    lines = warnings_of(
        "run", "--platform", "cluster", "--nodes", "8", "--workload", str(log), "--failures", "none", "--swf", "--out", str(out)
    )
    assert len(lines) == 1 and expected in lines[0], lines
    assert "-99999999999999999999" not in (out / "schedule.swf").read_text()


def test_i41_row10_a_bgl_ras_failure_outside_the_machine_is_counted_and_warned_about(tmp_path):
    from failure_logs.bgl_ras import read_bgl_ras

    line = "- {epoch} 2005.06.03 {where} 2005-06-03-15.42.50.363779 {where} RAS KERNEL FATAL data TLB error interrupt\n"
    log = tmp_path / "ras.log"
    log.write_text(line.format(epoch=1117838570, where="R02-M1-N0-C:J12-U11") + line.format(epoch=1117838600, where="R99-M9-N9"))
    with pytest.warns(UserWarning, match=r"ras.log:2: 1 FATAL event\(s\) at locations outside the machine \(first: R99-M9-N9\)"):
        failures = read_bgl_ras(log)
    assert len(failures) == 1 and failures.counts["outside_machine"] == 1


# -- rows 11 and 18: the Gymnasium environment checks its arguments, actions and options ---------------------------------

ENV_SCENARIO = {"platform": "cluster", "nodes": 128, "failures": "none", "max_jobs": 400}


@pytest.mark.parametrize(
    "keywords, named",
    [
        ({"window": 2.5}, "window must be a whole number >= 1, got 2.5"),
        ({"window": True}, "window must be a whole number >= 1, got True"),
        ({"max_decisions": -5}, "max_decisions must be a whole number >= 1, got -5"),
        ({"queue_slots": "8"}, "queue_slots must be a whole number >= 1, got '8'"),
        ({"start_range": (0.5, float("nan"))}, "start_range must satisfy"),
        ({"start_range": "all"}, "start_range must be (low, high)"),
        ({"reward": 3}, "reward must be one of"),
    ],
)
def test_i41_row11_environment_arguments_are_checked_by_name(keywords, named):
    pytest.importorskip("gymnasium")
    from torus_sim.core.errors import ConfigurationError
    from torus_sim.rl import SchedulingEnv

    with pytest.raises(ConfigurationError, match=__import__("re").escape(named)):
        SchedulingEnv(ENV_SCENARIO, **{"window": 64, **keywords})


@pytest.fixture(scope="module")
def scheduling_env():
    pytest.importorskip("gymnasium")
    from torus_sim.rl import SchedulingEnv

    env = SchedulingEnv(ENV_SCENARIO, window=32, queue_slots=4)
    env.reset(seed=1)
    return env


@pytest.mark.parametrize(
    "action",
    [float("nan"), float("inf"), "1", None, [0], np.zeros(2, dtype=int), 1.0, True, -1, 10**9],
    ids=["nan", "inf", "text", "None", "list", "array", "float", "bool", "negative", "huge"],
)
def test_i41_row18_environment_actions_outside_the_space_are_one_sentence(scheduling_env, action):
    from torus_sim.core.errors import ConfigurationError

    with pytest.raises(
        ConfigurationError, match=r"step: action must be a whole number in 0\.\.4 \(the action space Discrete\(5\)\)"
    ):
        scheduling_env.step(action)


def test_i41_row18_numpy_integers_are_actions(scheduling_env):
    scheduling_env.step(np.int64(4))
    scheduling_env.step(np.array(4))


@pytest.mark.parametrize(
    "keywords, named",
    [
        ({"seed": -1}, "reset: seed must be a whole number >= 0 or None, got -1"),
        ({"seed": "3"}, "reset: seed must be a whole number >= 0 or None, got '3'"),
        ({"options": ["start", 0]}, "reset: options must be a dict"),
        ({"options": {"start": "0"}}, "reset: options['start'] must be a whole number"),
        ({"options": {"start": float("nan")}}, "reset: options['start'] must be a whole number"),
        ({"options": {"start": 10**9}}, "reset: options['start'] must be a whole number in 0.."),
        ({"options": {"begin": 0}}, "reset: unknown option 'begin'"),
    ],
)
def test_i41_row18_reset_options_of_the_wrong_type_are_named(scheduling_env, keywords, named):
    from torus_sim.core.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match=__import__("re").escape(named)):
        scheduling_env.reset(**keywords)


# -- row 12: every call into extension code goes through the guard --------------------------------------------------


@pytest.mark.parametrize(
    "arguments, expected",
    [
        (("--policy", "{m}:KeyRaises"), "policy 'KeyRaises' at t = 0.0 s, job 1: queue_key raised RuntimeError: no key (at "),
        (("--policy", "{m}:AttachRaises"), "policy 'AttachRaises' at t = 0.0 s: attach raised RuntimeError: cannot attach (at "),
        (("--policy", "{m}:PlatformsNotNames"), "policy 'PlatformsNotNames' declares platforms = 5; expected a tuple of names"),
        (
            ("--policy", "FCFS-EASY", "--runtime-predictor", "{m}:PredictorRaises"),
            "runtime predictor 'PredictorRaises' at t = 0.0 s, job 1: predict raised RuntimeError: no prediction",
        ),
        (
            ("--policy", "FCFS-EASY", "--runtime-predictor", "{m}:PredictsNone"),
            "predict returned None; a prediction is a number of seconds >= 0",
        ),
        (
            ("--policy", "FCFS-EASY", "--runtime-predictor", "{m}:PredictsText"),
            "predict returned 'soon'; a prediction is a number of seconds >= 0",
        ),
        (("--policy", "FCFS-EASY", "--runtime-predictor", "{m}:ObserveEndRaises"), "observe_end raised ValueError: cannot learn"),
    ],
)
def test_i41_row12_extension_code_that_raises_outside_plan_is_one_sentence(capsys, tmp_path, hostile, arguments, expected):
    arguments = [argument.format(m=hostile) for argument in arguments]
    code = main(["run", *CLUSTER_RUN, *arguments, "--out", str(tmp_path / "out")])
    err = one_sentence(capsys.readouterr().err, code)
    assert expected in err and not (tmp_path / "out").exists()


# -- row 13: bad values from extensions are refused where they enter ----------------------------------------------------


@pytest.mark.parametrize(
    "arguments, expected",
    [
        (
            ("--policy", "FCFS-EASY", "--runtime-predictor", "{m}:PredictsNaN"),
            "predict returned nan s; a prediction is a finite number of seconds >= 0",
        ),
        (("--policy", "FCFS-EASY", "--runtime-predictor", "{m}:PredictsNegative"), "predict returned -5.0 s"),
        (("--policy", "FCFS-EASY", "--runtime-predictor", "{m}:PredictsInfinity"), "predict returned inf s"),
        (("--policy", "{m}:KeyNaN"), "queue_key returned (nan, 1), which cannot be ordered"),
        (("--policy", "{m}:KeyMixed"), "every key must be of one kind"),
        (("--policy", "{m}:RemovesFromTheQueue"), "changed the wait queue it was shown"),
        (("--policy", "{m}:AllocatesItself"), "changed the platform it was shown"),
        (("--policy", "{m}:ClearsTheRunningSet"), "'mappingproxy' object has no attribute 'clear'"),
    ],
)
def test_i41_row13_bad_values_and_changes_from_extensions_are_refused(capsys, tmp_path, hostile, arguments, expected):
    arguments = [argument.format(m=hostile) for argument in arguments]
    code = main(["run", *CLUSTER_RUN, *arguments, "--out", str(tmp_path / "out")])
    err = one_sentence(capsys.readouterr().err, code)
    assert expected in err


@pytest.mark.parametrize(
    "predictor, expected",
    [
        ("WrongShape", "failure predictor 'WrongShape' at t = "),
        ("OutsideZeroOne", "each must be a probability in [0, 1]"),
        ("NaNProbabilities", "each must be a probability in [0, 1]"),
    ],
)
def test_i41_row13_a_failure_predictors_answers_are_checked(capsys, tmp_path, hostile, predictor, expected):
    arguments = ["--policy", "balancing", "--predictor", f"{hostile}:{predictor}", "--max-jobs", "300", "--failures", "bundled"]
    code = main(["run", *arguments, "--out", str(tmp_path / "out")])
    err = one_sentence(capsys.readouterr().err, code)
    assert expected in err and "supernode_probabilities" in err


# -- row 14: no hang --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["ReservesAtNaN", "ReservesInThePast"])
@pytest.mark.parametrize("platform", ["cluster", "torus"])
def test_i41_row14_a_reservation_at_nan_or_in_the_past_is_refused_at_once(capsys, tmp_path, hostile, name, platform):
    began = time.perf_counter()
    code = main(
        ["run", "--platform", platform, "--max-jobs", "100", "--policy", f"{hostile}:{name}", "--out", str(tmp_path / "o")]
    )
    err = one_sentence(capsys.readouterr().err, code)
    assert "before now" in err and time.perf_counter() - began < 20


@pytest.mark.parametrize("platform", ["torus", "cluster"])
def test_i41_row14_a_placement_that_never_chooses_is_stopped_at_the_wall_limit(tmp_path, hostile, platform):
    arguments = ["--platform", platform, "--max-jobs", "50", "--policy", "FCFS-EASY", "--placement", f"{hostile}:NeverChooses"]
    arguments += ["--failures", "synthetic:20"]  # a cluster places by node ids (and asks its placement) when nodes fail
    done = cli_subprocess("run", *arguments, "--plan-timeout", "1", "--out", str(tmp_path / "o"))
    one_sentence(done.stderr, done.returncode)
    assert "ran longer than the wall-clock limit of 1 s" in done.stderr


def test_i41_row14_a_placement_choosing_no_candidate_is_named(capsys, tmp_path, hostile):
    code = main(
        [
            "run",
            "--max-jobs",
            "50",
            "--policy",
            "krevat",
            "--placement",
            f"{hostile}:ChoosesAnOccupiedPartition",
            "--out",
            str(tmp_path / "o"),
        ]
    )
    err = one_sentence(capsys.readouterr().err, code)
    assert "placement 'wrong-choice' at t = " in err and "choose returned -1" in err and "not one of the" in err


def test_i41_row14_a_machine_file_that_is_a_fifo_is_refused_unread(capsys, tmp_path):
    fifo = tmp_path / "machine.toml"
    os.mkfifo(fifo)
    began = time.perf_counter()
    err = refused(capsys, tmp_path, "--machine", str(fifo), "--max-jobs", "10")
    assert "is not a regular file" in err and time.perf_counter() - began < 10


# -- row 15: a plug-in module that exits while it is imported ----------------------------------------------------------


@pytest.mark.parametrize("call, said", [("sys.exit(0)", "it called sys.exit(0)"), ("os._exit(0)", "it called os._exit(0)")])
def test_i41_row15_a_plugin_module_exiting_at_import_is_one_sentence(tmp_path, call, said):
    (tmp_path / "exits_at_import.py").write_text(f"import os, sys\n{call}\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = cli_subprocess("run", "--policy", "exits_at_import:Policy", "--max-jobs", "10", "--out", str(tmp_path / "o"), env=env)
    one_sentence(done.stderr, done.returncode)
    assert f"importing 'exits_at_import' failed: {said}" in done.stderr and not (tmp_path / "o").exists()


# -- row 16: the last tracebacks -------------------------------------------------------------------------------------------


def test_i41_row16_a_mira_event_at_an_unknown_midplane_is_counted_not_a_traceback(tmp_path):
    from failure_logs.mira import read_mira

    events = tmp_path / "events.cor"
    line = "event {n} 00040106 1 FATAL BQC MC 2013-04-10;18:53:22.687239 2013-04-10;18:53:22.687239 2 RMNJ {where} 0\n"
    events.write_text("#count=2\n" + line.format(n=1, where="R20-M0-N02-J14") + line.format(n=2, where="R99-M0-N02-J14"))
    with pytest.warns(
        UserWarning, match=r"events.cor:3: 1 FATAL event midplane\(s\) outside Mira's map \(first: R99-M0-N02-J14\)"
    ):
        failures = read_mira(events, maintenance=None)
    assert len(failures) == 1 and failures.counts["outside_machine"] == 1


@pytest.mark.parametrize(
    "machine, expected",
    [
        ('name = "x"\ndims = [2, 2, 2]\nblock_sizes = [3]\n', "block size 3 has no box shape on the 2x2x2 torus"),
        (
            'name = "x"\ndims = [2, 2, 2]\nblock_sizes = [8]\nblock_shapes = [[1, 1, 2]]\n',
            "block shape (1, 1, 2) has 2 supernodes, not one of the block sizes",
        ),
        ('name = "x"\ndims = [4, 4]\nblock_sizes = [5, 16]\n', "block size 5 has no box shape on the 4x4 torus"),
    ],
)
def test_i41_row16_machine_blocks_that_do_not_fit_the_torus_are_one_sentence(capsys, tmp_path, machine, expected):
    path = tmp_path / "machine.toml"
    path.write_text(machine)
    assert expected in refused(capsys, tmp_path, "--machine", str(path), "--max-jobs", "20")


def test_i41_row16_params_that_are_not_a_table_are_one_sentence(capsys, tmp_path):
    path = tmp_path / "s.toml"
    path.write_text('[policy]\npolicy = "FCFS"\nparams = [1, 2]\n')
    assert "[policy] params must be a table of constructor parameters" in refused(capsys, tmp_path, str(path))


def test_i41_row16_a_figure_naming_a_missing_metric_is_one_sentence(capsys, tmp_path):
    path = tmp_path / "sweep.toml"
    path.write_text(
        'title = "t"\n[workload]\nmax_jobs = 20\n[failures]\nfailures = "none"\n[grid]\npolicy = ["FCFS-EASY", "FCFS"]\n'
        '[[figure]]\nname = "f"\nx = "policy"\ny = ["no_such_metric"]\n'
    )
    code = main(["sweep", str(path), "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err.splitlines()[-1] + "\n"  # after the sweep's own progress line
    err = one_sentence(err, code)
    assert "figure 'f': y names 'no_such_metric', which is not a column of the results" in err
    assert (tmp_path / "o" / "results.csv").exists()  # the runs are kept: --replot draws after a fix


def test_i41_row16_summarize_on_a_binary_file_is_one_sentence(capsys, tmp_path):
    path = tmp_path / "results.csv"
    path.write_bytes(bytes(range(256)) * 8)
    code = main(["summarize", str(path), "--by", "policy"])
    err = one_sentence(capsys.readouterr().err, code)
    assert "results.csv: holds binary data" in err


@pytest.mark.parametrize(
    "arguments, expected",
    [
        (["--jobs", "-5"], "argument --jobs: expected an integer from 1 to 1,000,000, got -5"),
        (["--scenarios", "0"], "argument --scenarios: expected an integer from 1 to 1,000,000, got 0"),
        (["--mean-failure-probability", "1.5"], "expected a number in [0, 1), got 1.5"),
    ],
)
def test_i41_row16_generate_rigid_refuses_impossible_sizes(capsys, tmp_path, arguments, expected):
    with pytest.raises(SystemExit) as caught:
        main(["generate-rigid", str(tmp_path / "o"), *arguments])
    assert caught.value.code == 2 and expected in capsys.readouterr().err and not (tmp_path / "o").exists()


def test_i41_row16_generate_rigid_under_a_file_is_one_sentence(capsys, tmp_path):
    (tmp_path / "afile").write_text("x")
    code = main(["generate-rigid", str(tmp_path / "afile" / "sub")])
    assert "which is a file" in one_sentence(capsys.readouterr().err, code)


def test_i41_row16_a_batch_of_a_trillion_jobs_is_refused_before_allocating(capsys, tmp_path, monkeypatch):
    never(monkeypatch, "torus_sim.experiments.runner.build_model")  # refused before a job is made
    err = refused(
        capsys, tmp_path, "--platform", "cluster", "--workload", "rigid", "--jobs", "1000000000000", "--policy", "R-LIST-0"
    )
    assert "[workload] jobs: Input should be less than or equal to 1000000" in err


# -- row 17: nothing accepted without a word ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "arguments, expected",
    [
        (["--offered-load", "1e308"], "offered_load: Input should be less than or equal to 1000000"),
        (["--load-scale", "1e308"], "load_scale: Input should be less than or equal to 1000000"),
        (["--load-scale", "1e-308"], "load_scale: Input should be greater than or equal to 0.000001"),
        (["--offered-load", "1e-308"], "offered_load: Input should be greater than or equal to 0.000001"),
        (["--fta-nodes", "1000000000000"], "fta_nodes: Input should be less than or equal to 10000000"),
        (["--torus-dims", "٤x٤x٨"], "expected 1 to 6 positive integers joined by x"),
        (["--failures", "-3"], "a failure count must be >= 0"),
    ],
)
def test_i41_row17_values_beyond_reason_are_refused(capsys, tmp_path, arguments, expected):
    assert expected in refused(capsys, tmp_path, *arguments, "--max-jobs", "20")


@pytest.mark.parametrize(
    "machine, expected",
    [
        (
            'name = "x"\ndims = [4, 4, 8]\nnodes_per_midplane = 1e12\n',
            "nodes_per_midplane: Input should be a valid integer (got 1000000000000.0)",
        ),
        (
            'name = "x"\ndims = [4, 4, 8]\nnodes_per_midplane = 1000000000\n',
            "nodes_per_midplane: Input should be less than or equal to 65536",
        ),
        ('name = "x"\ndims = [4, 4]\nwraps = ["yes", "no"]\n', "wraps.0: Input should be a valid boolean (got 'yes')"),
    ],
)
def test_i41_row17_machine_files_with_values_of_the_wrong_kind_are_refused(capsys, tmp_path, machine, expected):
    path = tmp_path / "m.toml"
    path.write_text(machine)
    assert expected in refused(capsys, tmp_path, "--machine", str(path), "--max-jobs", "20")


def test_i41_row17_a_lanl_node_beyond_any_system_is_refused(tmp_path):
    from failure_logs.lanl import LANL_COLUMNS, read_lanl
    from torus_sim.core.errors import FailureLogFormatError

    row = dict.fromkeys(LANL_COLUMNS, "")
    row.update(
        {
            "System": "20",
            "nodes": "512",
            "nodenumz": "99999999999",
            "Prob Started": "12/31/2001 13:56",
            "Prob Fixed": "12/31/2001 16:13",
        }
    )
    log = tmp_path / "lanl.csv"
    log.write_text(",".join(LANL_COLUMNS) + "\n" + ",".join(row[column] for column in LANL_COLUMNS) + "\n")
    with pytest.raises(FailureLogFormatError, match="lanl.csv:2: .*'nodenumz' must be an integer in 0..10000000"):
        read_lanl(log, system=20, n_supernodes=128)


def _fta_table(path, *fields):
    """An FTA ``event_trace`` table of the given rows (each its first fields; the rest 0)."""
    from failure_logs.fta import FTA_COLUMNS

    rows = [dict(zip(FTA_COLUMNS, row, strict=False)) for row in fields]
    path.write_text(
        "\t".join(FTA_COLUMNS) + "\n" + "".join("\t".join(row.get(c, "0") for c in FTA_COLUMNS) + "\n" for row in rows)
    )
    return path


def test_i41_row17_an_fta_node_name_without_a_number_is_warned_about(tmp_path):
    from failure_logs.fta import read_fta

    table = _fta_table(
        tmp_path / "event_trace.tab",
        ["1", "0", "7", "1", "banana", "0", "1000", "2000", "0"],
        ["2", "0", "8", "1", "cherry", "0", "3000", "4000", "0"],
    )
    with pytest.warns(UserWarning, match=r"event_trace.tab:2: node_name 'banana' is not <system>.<node>"):
        failures = read_fta(table, 128)
    assert failures.counts["nodes_from_ids"] == 1


def test_i41_row17_an_integer_failure_spec_is_synthetic_and_says_so(capsys, tmp_path):
    path = tmp_path / "s.toml"
    path.write_text("[failures]\nfailures = 5\n")
    assert main(["run", str(path), "--max-jobs", "50", "--out", str(tmp_path / "o")]) == 0
    assert "failures  synthetic:5" in capsys.readouterr().out


def test_i41_row17_a_sweep_with_no_seeds_is_refused(capsys, tmp_path):
    path = tmp_path / "sweep.toml"
    path.write_text('title = "t"\nseeds = []\n[workload]\nmax_jobs = 20\n')
    code = main(["sweep", str(path), "--out", str(tmp_path / "o")])
    err = one_sentence(capsys.readouterr().err, code)
    assert "seeds = [] lists no seed; leave seeds out" in err


# -- a property: whatever a plug-in does, the run ends normally or with one PolicyError -----------------------------------

MISBEHAVIOURS = (
    "raise",
    "base exception",
    "sys.exit",
    "os._exit",
    "garbage action",
    "mutate job",
    "mutate queue",
    "stall",
    "none",
)
HOOKS = ("plan", "queue_key", "predict", "observe_end", "attach")


def _misbehaving_plugins(misbehaviour: str, hook: str, after: int):
    """A policy and a runtime predictor whose ``hook`` misbehaves from its ``after``-th call on."""
    from predictors.runtime import RuntimePredictor
    from torus_sim.policies.base import Start
    from torus_sim.policies.easy import EasyPolicy

    calls = {"count": 0, "effect": False}

    def act(view=None, job=None):
        calls["count"] += 1
        if calls["count"] <= after or misbehaviour == "none":
            return None
        calls["effect"] = misbehaviour not in ("mutate job", "mutate queue", "garbage action")
        if misbehaviour == "raise":
            raise ZeroDivisionError("drawn")
        if misbehaviour == "base exception":
            raise BaseException("drawn")
        if misbehaviour == "sys.exit":
            sys.exit(calls["count"] % 4)
        if misbehaviour == "os._exit":
            os._exit(0)
        if misbehaviour == "stall":
            time.sleep(10**6)
        if misbehaviour == "mutate job" and job is not None:
            calls["effect"] = True
            job.walltime = -1.0
        if misbehaviour == "mutate job" and view is not None and view.queue.head is not None:
            calls["effect"] = True
            view.queue.head.size = 0
        if misbehaviour == "mutate queue" and view is not None and len(view.queue):
            calls["effect"] = True
            view.queue.remove(view.queue.head)
        if misbehaviour == "garbage action" and hook in ("plan", "queue_key", "predict"):
            calls["effect"] = True
            return "garbage"
        return None

    class Drawn(EasyPolicy):
        def __init__(self):
            super().__init__("fcfs")
            self.name = "drawn"

        def attach(self, model):
            if hook == "attach":
                act()
            super().attach(model)

        def queue_key(self, job):
            if hook == "queue_key":
                garbage = act(job=job)
                if garbage is not None:
                    return garbage if job.job_id % 2 else 1.0
            return super().queue_key(job)

        def plan(self, view):
            if hook == "plan":
                garbage = act(view=view)
                if garbage is not None:
                    yield Start(garbage, 3)
            yield from super().plan(view)

    class DrawnPredictor(RuntimePredictor):
        def predict(self, job):
            if hook == "predict":
                garbage = act(job=job)
                if garbage is not None:
                    return garbage
            return job.walltime

        def observe_end(self, job):
            if hook == "observe_end":
                act(job=job)

    return Drawn(), DrawnPredictor(), calls


@pytest.mark.filterwarnings("ignore")
@__import__("hypothesis").settings(max_examples=30, deadline=None, derandomize=True)
@__import__("hypothesis").given(
    misbehaviour=__import__("hypothesis").strategies.sampled_from(MISBEHAVIOURS),
    hook=__import__("hypothesis").strategies.sampled_from(HOOKS),
    after=__import__("hypothesis").strategies.integers(0, 40),
    platform=__import__("hypothesis").strategies.sampled_from(["cluster", "torus"]),
)
def test_i41_property_any_plugin_misbehaviour_ends_the_run_with_one_policy_error(misbehaviour, hook, after, platform):
    from torus_sim.core.errors import PolicyError
    from torus_sim.engine.model import SchedulingModel
    from torus_sim.experiments.runner import Scenario, load_workload

    policy, predictor, calls = _misbehaving_plugins(misbehaviour, hook, after)
    scenario = Scenario(platform=platform, nodes=128 if platform == "cluster" else None, max_jobs=60, failures="none")
    workload = load_workload(scenario)
    platform_spec = 128 if platform == "cluster" else None
    try:
        model = SchedulingModel(
            workload, policy, platform_spec, runtime_predictor=predictor, plan_timeout=1.0
        )  # 0.3 s: stopped a sound pass on a loaded machine
        model.run()
    except PolicyError as error:
        assert calls["effect"], error  # never a PolicyError for a plug-in that did nothing wrong
        assert str(error).startswith(("policy 'drawn' at t = ", "runtime predictor 'DrawnPredictor' at t = ")), error
        assert "\n" not in str(error)
        return
    assert not calls["effect"]  # a misbehaviour that happened never goes unnoticed
    assert model.completed == len(model.run_jobs)


@pytest.mark.parametrize("value", ['"yes"', "1", '"off"', "0.0"])
def test_a_switch_parameter_given_as_text_or_a_number_is_one_sentence(capsys, tmp_path, value):
    """power-window's ``backfill`` is a bool: pydantic's lax mode read "yes", 1 or "off" as true / false, so a switch
    written as anything but ``true`` / ``false`` is refused (a sentence, exit 2), from a file and from the flag."""
    power = ["--power", "--price", "tou:0.05:3", "--max-jobs", "20"]
    path = tmp_path / "s.toml"
    path.write_text(f'[policy]\npolicy = "power-window"\nparams = {{ backfill = {value} }}\n')
    err = refused(capsys, tmp_path, str(path), *power)
    assert "parameter 'backfill'" in err and "valid boolean" in err
    err = refused(capsys, tmp_path, "--policy", "power-window", "--policy-param", f"backfill={value}", *power)
    assert "parameter 'backfill'" in err and "valid boolean" in err


def test_a_switch_parameter_given_true_or_false_runs(tmp_path):
    out = tmp_path / "out"
    power = ["--power", "--price", "tou:0.05:3", "--max-jobs", "20"]
    assert main(["run", "--policy", "power-window", "--policy-param", "backfill=true", *power, "--out", str(out)]) == 0
    assert (out / "summary.json").exists()


@pytest.mark.parametrize(("section", "field"), [("power", "power"), ("policy", "migration"), ("failures", "fit_failures")])
def test_a_scenario_switch_given_as_text_is_one_sentence(capsys, tmp_path, section, field):
    """The scenario's own bool fields are strict too: ``power = "yes"`` was read as true, ``"no"`` as false."""
    path = tmp_path / "s.toml"
    path.write_text(f'[workload]\nmax_jobs = 20\n[{section}]\n{field} = "no"\n')
    err = refused(capsys, tmp_path, str(path))
    assert f"{field}: Input should be a valid boolean (got 'no')" in err


def test_a_sweep_resumed_after_its_input_file_changed_runs_again_and_a_moved_one_does_not(capsys, tmp_path):
    """Run keys count an input file by its content: the same bytes under another path (a results folder used from
    another checkout) resume the stored runs; new bytes at the same path (a workload edited in place) run again,
    where the path alone had reused the numbers made from the old content."""
    import shutil

    from torus_sim.experiments.scenario import Scenario
    from torus_sim.experiments.sweep import run_key

    trace = tmp_path / "data" / "t.swf"
    trace.parent.mkdir()
    lines = "".join(f"{j} {10 * j} 0 {100 + j} 8 -1 -1 8 {200 + j} -1 1 1 1 -1 1 -1 -1 -1\n" for j in range(1, 21))
    trace.write_text("; MaxProcs: 128\n" + lines)
    file = tmp_path / "s.toml"
    file.write_text('[workload]\nworkload = "data/t.swf"\n[failures]\nfailures = "none"\n[grid]\nseed = [0, 1]\n')
    out = tmp_path / "out"
    assert main(["sweep", str(file), "--out", str(out), "--no-progress"]) == 0
    first = {path.name for path in (out / "runs").glob("*.json")}
    assert len(first) == 2
    moved = tmp_path / "elsewhere" / "t.swf"
    moved.parent.mkdir()
    shutil.copy(trace, moved)
    same = Scenario.make("a", workload=str(trace), failures="none")
    assert run_key(same) == run_key(Scenario.make("a", workload=str(moved), failures="none"))
    assert run_key(Scenario.make("a", workload=f"swf-file:{trace}", failures="none")) != run_key(same)  # the prefix counts
    trace.write_text("; MaxProcs: 128\n" + lines.replace(" 8 -1 -1 8 ", " 16 -1 -1 16 "))
    assert main(["sweep", str(file), "--out", str(out), "--no-progress"]) == 0
    second = {path.name for path in (out / "runs").glob("*.json")}
    assert len(second) == 4 and first < second  # two new runs beside the old ones
    capsys.readouterr()


def test_an_fta_node_number_beyond_any_machine_is_warned_about(tmp_path):
    """Issue 64: LANL's system 20 in the FTA layout with node 20.99999999999 was ranked by its node_id in silence."""
    from failure_logs.fta import read_fta

    table = _fta_table(
        tmp_path / "event_trace.tab",
        ["1", "0", "7", "20", "20.7", "0", "1000", "2000", "0"],
        ["2", "0", "8", "20", "20.99999999999", "0", "3000", "4000", "0"],
    )
    with pytest.warns(UserWarning, match=r"event_trace.tab:3: node_name '20.99999999999' numbers a node beyond any machine"):
        failures = read_fta(table, 128, system="20", nodes=512)
    assert failures.counts["nodes_from_ids"] == 1 and len(failures) == 2
