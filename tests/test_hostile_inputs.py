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

import pytest

from torus_sim.cli import main

from .conftest import cli_process


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
def test_row1_a_huge_synthetic_failure_count_is_refused_at_once(capsys, tmp_path, count):
    began = time.perf_counter()
    err = refused(capsys, tmp_path, "--failures", f"synthetic:{count}", "--max-jobs", "500")
    assert time.perf_counter() - began < 20
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


def test_row11_a_huge_torus_is_refused_at_once(capsys, tmp_path):
    began = time.perf_counter()
    err = refused(capsys, tmp_path, "--torus-dims", "1000x1000x1000")
    assert time.perf_counter() - began < 5
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

    from torus_sim.runner import ConfiguredModel

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


def test_row12_a_grid_of_a_million_runs_is_refused_at_once_unless_allowed(capsys, tmp_path):
    import resource

    file = tmp_path / "huge.toml"
    values = ", ".join(str(value) for value in range(1000))
    file.write_text(
        f"[workload]\nmax_jobs = 10\n[grid]\nseed = [{values}]\nconfidence = [{', '.join(str(v / 1000) for v in range(1000))}]\n"
    )
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    began = time.perf_counter()
    err = refused(capsys, tmp_path, str(file), command="sweep")
    assert time.perf_counter() - began < 10
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
    began = time.perf_counter()
    code = main(["run", "--workload", "bundled", "--out", out])  # the whole bundled log: seconds if it ran
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert time.perf_counter() - began < 3
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
    from torus_sim import files
    from torus_sim.reports import write_results
    from torus_sim.runner import Scenario, run

    result = run(Scenario(max_jobs=30, failures="none"))
    written = []
    original = Path.write_bytes

    def killed_after_jobs(self, data):
        written.append(self.name)
        if self.name == "summary.json":
            raise KeyboardInterrupt  # the run is killed between jobs.csv and summary.json
        return original(self, data)

    monkeypatch.setattr(Path, "write_bytes", killed_after_jobs)
    with pytest.raises(KeyboardInterrupt):
        write_results(tmp_path / "new", result)
    assert written == ["jobs.csv", "summary.json"] and not (tmp_path / "new").exists()
    assert [p.name for p in tmp_path.iterdir()] == []  # the staging folder is gone too
    monkeypatch.setattr(Path, "write_bytes", original)
    paths = write_results(tmp_path / "new", result)
    assert set(paths) == {"jobs", "summary"}
    # into an existing folder: the old manifest goes first, the new one comes last
    order = []
    real = files.atomic_write
    monkeypatch.setattr(
        files, "atomic_write", lambda path, write, binary=False: order.append(Path(path).name) or real(path, write, binary)
    )
    write_results(tmp_path / "new", result)
    assert order == ["jobs.csv", "summary.json"]


# -- row 19: the README's Dask snippet, saved to a file and run with python ------------------------------------------


def test_row19_the_readme_dask_snippet_runs_as_written(tmp_path):
    import re

    pytest.importorskip("dask.distributed")
    readme = (Path(__file__).parents[1] / "README.md").read_text()
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
    assert "(the first 200 jobs, online; cleaning {'walltime_from_runtime': 200}; offered load " in out
    assert json_roundtrip(tmp_path / "a" / "summary.json")["inputs"]["policy"] == "balancing"
    arguments = ["run", "--platform", "cluster", "--policy", "PV-EASY", "--max-jobs", "200", "--failures", "bundled"]
    assert main([*arguments, "--out", str(tmp_path / "b"), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "policy    PV-EASY; c = 1; seed 0" in out and "migration on" not in out
    assert "work lost (node-s)" in out and "supernode" not in out


# -- row 25: L(f) follows RIGID Eq. 5-6, V excluded, unless asked ---------------------------------------------------


def test_row25_the_rigid_lower_bound_leaves_the_verification_time_out_by_default():
    import numpy as np

    from torus_sim.runner import Scenario, run
    from torus_sim.workload.refcode import read_failure_scenarios, read_rigid_jobs

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
    began = time.perf_counter()
    err = refused(capsys, tmp_path, "--platform", "cluster", "--nodes", "128", "--workload", str(log))
    assert time.perf_counter() - began < 5 and resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 500_000  # KiB
    assert "log.swf" in err and expected in err, err


# -- row 18: messages that name the right thing ---------------------------------------------------------------------


def test_row18_a_batsim_json_syntax_error_is_not_called_an_swf_line(capsys, tmp_path):
    workload = tmp_path / "w.json"
    workload.write_text('{"nb_res": 4,\n "jobs": [\n}')
    err = refused(capsys, tmp_path, "--platform", "cluster", "--workload", str(workload))
    assert "w.json:3: malformed Batsim JSON line" in err and "SWF" not in err


def test_row18_a_lanl_unterminated_quote_is_reported_at_its_line(tmp_path):
    from failure_logs.lanl import read_lanl
    from torus_sim.errors import FailureLogFormatError

    header = "System,machine type,nodes,procstot,procsinnode,nodenum,nodenumz,node install,node prod,node decom,fru type,mem,cputype,memtype,num intf,Prob Started,Prob Fixed,Down Time,Facilities,Hardware,Human Error,Network,Undetermined,Software"
    good = "20,cluster,512,2048,4,1,1,,,,part,4,cpu,mem,1,06/01/2004 10:00,06/01/2004 11:00,60,,,,,,Other"
    lines = [header] + [good] * 20 + ['20,"cluster,512'] + [good] * 3
    (tmp_path / "l.csv").write_text("\n".join(lines) + "\n")
    with pytest.raises(FailureLogFormatError, match=r"l.csv:22: "):
        read_lanl(tmp_path / "l.csv", 20, 128)


def test_row18_a_lanl_node_beyond_the_system_is_named_with_its_line(tmp_path):
    from failure_logs.lanl import read_lanl
    from torus_sim.errors import FailureLogFormatError

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
