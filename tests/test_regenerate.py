"""Every documented result regenerates from the current code (issue 40 §3): ``torus-sim sweep --check``.

The cheap documented results (``python docs/regenerate.py --list`` marks them) are re-run on every CI
run and compared value for value with what is committed; a changed value is reported with its table,
row and column, and the check exits 1.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from torus_sim.experiments.check import compare_tables, results_columns
from torus_sim.interfaces.cli import main

from .conftest import SHARED_DATA

ROOT = Path(__file__).resolve().parents[1]
SDSC = SHARED_DATA / "swf" / "SDSC-SP2-1998-4.2-cln.swf.gz"

SMALL_SWEEP = f"""
title = "two policies on 300 jobs"
reference = "test"
[workload]
workload = "{SDSC}"
max_jobs = 300
[[case]]
name = "FCFS-EASY"
policy = "FCFS-EASY"
[[case]]
name = "Krevat"
policy = "krevat"
"""


@pytest.fixture
def committed(tmp_path):
    sweep = tmp_path / "small.toml"
    sweep.write_text(SMALL_SWEEP)
    out = tmp_path / "committed"
    assert main(["sweep", str(sweep), "--out", str(out), "--no-progress"]) == 0
    return sweep, out


def test_a_results_folder_the_code_still_makes_checks_identical(committed, capsys):
    sweep, out = committed
    assert main(["sweep", str(sweep), "--out", str(out), "--check", "--no-progress"]) == 0
    assert "identical" in capsys.readouterr().out


def test_a_changed_value_is_named_with_its_row_and_column_and_exits_1(committed, capsys):
    sweep, out = committed
    table = pd.read_csv(out / "results.csv")
    table.loc[1, "avg_wait_time"] = table.loc[1, "avg_wait_time"] + 1.0
    table.to_csv(out / "results.csv", index=False, float_format="%.10g")
    assert main(["sweep", str(sweep), "--out", str(out), "--check", "--no-progress"]) == 1
    text = capsys.readouterr().out
    assert "results.csv Krevat (row 2) avg_wait_time: committed" in text
    assert "1 of" in text and "values differ" in text


def test_the_check_leaves_out_wall_time_key_and_the_scenarios_fields(committed):
    _, out = committed
    columns = results_columns(pd.read_csv(out / "results.csv"))
    assert "avg_wait_time" in columns and "job_kills" in columns
    assert not {"wall_time", "key", "workload", "policy", "seed"} & set(columns)
    scratch = out.parent / "moved"
    shutil.copytree(out, scratch)
    table = pd.read_csv(scratch / "results.csv")
    table["wall_time"] = table["wall_time"] * 3
    table["workload"] = "elsewhere/SDSC.swf"
    table.to_csv(scratch / "results.csv", index=False, float_format="%.10g")
    assert compare_tables(out, scratch).identical


def test_rows_are_matched_by_their_scenario_fields_not_their_position(committed):
    """A grid that expands in another order than when the table was written holds the same runs in other rows."""
    _, out = committed
    scratch = out.parent / "reordered"
    shutil.copytree(out, scratch)
    table = pd.read_csv(scratch / "results.csv")
    table.iloc[::-1].to_csv(scratch / "results.csv", index=False, float_format="%.10g")
    assert compare_tables(out, scratch).identical
    table.loc[0, "avg_wait_time"] += 1.0  # a value that differs is still found, in the committed row's place
    table.iloc[::-1].to_csv(scratch / "results.csv", index=False, float_format="%.10g")
    report = compare_tables(out, scratch)
    assert [(row, column) for _, row, column, _, _ in report.differences] == [
        (f"{table.loc[0, 'name']} (row 1)", "avg_wait_time")
    ]


def test_a_missing_results_folder_is_a_sentence(tmp_path, capsys):
    sweep = tmp_path / "small.toml"
    sweep.write_text(SMALL_SWEEP)
    assert main(["sweep", str(sweep), "--out", str(tmp_path / "none"), "--check", "--no-progress"]) == 2
    assert "does not exist" in capsys.readouterr().err


@pytest.mark.skipif(not SDSC.exists(), reason=f"needs the logs under {SHARED_DATA}")
def test_the_cheap_documented_results_regenerate_identically():
    done = subprocess.run(
        [sys.executable, str(ROOT / "docs" / "regenerate.py"), "--check", "--cheap"], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "pv_easy/ctc_suspend: identical" in done.stdout and "mira/study: identical" in done.stdout
    assert "exchange/gantt: identical" in done.stdout  # the README's Gantt chart's record (a script's result)


def test_every_sweep_file_under_experiments_is_a_documented_result():
    from importlib import util

    spec = util.spec_from_file_location("regenerate", ROOT / "docs" / "regenerate.py")
    regenerate = util.module_from_spec(spec)
    sys.modules["regenerate"] = regenerate  # its dataclass looks its module up
    try:
        spec.loader.exec_module(regenerate)
    finally:
        del sys.modules["regenerate"]
    listed = {entry.sweep for entry in regenerate.DOCUMENTED if entry.sweep}
    on_disk = {  # the site files are no sweeps: a run's production settings (test_experiments runs each)
        str(path.relative_to(ROOT)) for path in (ROOT / "experiments").glob("*/*.toml") if path.parent.name != "sites"
    }
    undocumented = on_disk - listed
    # the figures' inputs that no doc publishes yet (MOLDABLE Figs. 3-4, CKPT-MIG yields: tests check them)
    assert undocumented <= {
        "experiments/moldable/fig3_priorities.toml",
        "experiments/moldable/fig4_error_rate.toml",
        "experiments/moldable/fig4_processors.toml",
        "experiments/ckpt_migration/yields.toml",
    }, undocumented
    assert listed <= on_disk
