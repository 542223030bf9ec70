"""Bad input, tried as a new user would: one sentence naming the file, exit code 2, no output left.

And the Failure Trace Archive reader, checked against the LANL reader on the same data.
"""

from __future__ import annotations

import gzip
import lzma

import numpy as np
import pytest

from benchmarks.matrix import FTA_HEADER
from benchmarks.matrix import write_lanl_as_fta as lanl_as_fta  # noqa: F401  (the readers' tests use it from here)
from failure_logs.bgl_ras import read_bgl_ras
from failure_logs.fta import read_fta
from failure_logs.lanl import read_lanl
from failure_logs.sources import load_failure_source
from torus_sim.core.errors import ConfigurationError, FailureLogFormatError, InputFileError, WorkloadFormatError
from torus_sim.inputs.workload.jobs import jobs_from_swf
from torus_sim.inputs.workload.swf import read_swf
from torus_sim.interfaces.cli import main

from .conftest import SHARED_DATA

LANL = SHARED_DATA / "failures" / "lanl" / "LA-UR-05-7318-failure-data-1996-2005.csv.xz"
SDSC = SHARED_DATA / "swf" / "SDSC-SP2-1998-4.2-cln.swf.gz"


def run_cli(tmp_path, *arguments):
    """(exit code, output folder) of ``torus-sim run ... --out tmp/out``."""
    out = tmp_path / "out"
    return main(["run", *arguments, "--out", str(out)]), out


@pytest.fixture
def chdir_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


# -- the table, row by row ------------------------------------------------------------


def test_a_truncated_gzip_workload_is_refused_naming_the_file(chdir_tmp, capsys):
    (chdir_tmp / "cut.swf.gz").write_bytes(SDSC.read_bytes()[:50_000])
    code, out = run_cli(chdir_tmp, "--workload", "cut.swf.gz")
    error = capsys.readouterr().err
    assert code == 2 and not out.exists()
    assert error.startswith("torus-sim: error: cut.swf.gz: truncated or corrupt gzip file")
    assert "Traceback" not in error


def test_a_truncated_xz_failure_log_is_refused_naming_the_file(chdir_tmp, capsys):
    (chdir_tmp / "cut.csv.xz").write_bytes(LANL.read_bytes()[:20_000])
    code, out = run_cli(chdir_tmp, "--max-jobs", "20", "--failures", "cut.csv.xz")
    error = capsys.readouterr().err
    assert code == 2 and not out.exists()
    assert "cut.csv.xz: truncated or corrupt xz file" in error


def test_a_directory_as_workload_is_refused(chdir_tmp, capsys):
    (chdir_tmp / "logs").mkdir()
    code, out = run_cli(chdir_tmp, "--workload", "logs")
    assert code == 2 and not out.exists()
    assert "logs: is a directory, not a workload file" in capsys.readouterr().err


def test_an_swf_without_jobs_is_refused_with_the_cleaning_counts(chdir_tmp, capsys):
    (chdir_tmp / "empty.swf").write_text("; MaxNodes: 128\n")
    (chdir_tmp / "unusable.swf").write_text("; MaxNodes: 128\n1 0 -1 -1 4 -1 -1 4 100 -1 1 1 1 1 1 1 -1 -1\n")
    code, out = run_cli(chdir_tmp, "--workload", "empty.swf")
    assert code == 2 and not out.exists()
    assert "empty.swf: no job left after cleaning (0 job lines; cleaning: none" in capsys.readouterr().err
    with pytest.raises(InputFileError, match=r"no job left after cleaning \(1 job lines; cleaning: skipped_unknown_runtime 1"):
        jobs_from_swf(read_swf(chdir_tmp / "unusable.swf"), 128)


def test_a_run_time_no_job_can_have_is_refused_with_file_line_and_bound(chdir_tmp, capsys):
    (chdir_tmp / "huge.swf").write_text("; MaxNodes: 128\n1 0 0 1e300 4 -1 -1 4 1e300 -1 1 1 1 1 1 1 -1 -1\n")
    code, out = run_cli(chdir_tmp, "--workload", "huge.swf")
    error = capsys.readouterr().err
    assert code == 2 and not out.exists()
    assert "huge.swf:2: malformed SWF line: field 'run_time' = 1e300 s is beyond any job's (|value| <= 1e+10 s" in error


def test_a_scenario_value_of_the_wrong_type_names_file_key_and_type(chdir_tmp, capsys):
    (chdir_tmp / "lots.toml").write_text('[workload]\nmax_jobs = "lots"\n')
    code, out = run_cli(chdir_tmp, "lots.toml")
    error = capsys.readouterr().err
    assert code == 2 and not out.exists()
    assert "lots.toml: [workload] max_jobs: Input should be a valid integer" in error and "'lots'" in error


def test_the_removed_online_command_points_at_a_command_that_runs_from_any_folder(chdir_tmp, capsys):
    assert main(["online", "run"]) == 2
    message = capsys.readouterr().err
    command = message.split("use: ")[1].split(" (")[0].split()
    assert command[:2] == ["torus-sim", "run"] and "--workload" not in command  # the bundled real trace
    code, out = run_cli(chdir_tmp, *command[2:], "--max-jobs", "60")
    assert code == 0 and (out / "summary.json").exists()
    assert "NASA-iPSC" in capsys.readouterr().out


# -- the Failure Trace Archive ----------------------------------------------------------------


def test_the_fta_form_of_lanl_system_20_reads_as_the_lanl_csv_does(tmp_path):
    path = tmp_path / "lanl.tab"
    lines = lanl_as_fta(path, systems=("19", "20"), up_every=10)
    fta = read_fta(path, 128, system="20", nodes=512)
    lanl = read_lanl(LANL, system=20, n_supernodes=128)
    assert len(fta) == len(lanl) == 2478
    np.testing.assert_array_equal(fta.failed_at, lanl.failed_at)
    np.testing.assert_array_equal(fta.supernodes, lanl.supernodes)
    np.testing.assert_array_equal(fta.repair_at, lanl.repair_at)
    assert fta.counts["lines"] == lines
    assert fta.counts["down_intervals"] == 2478 and fta.counts["up_intervals"] == 248
    assert fta.counts["other_system"] == 3284 + 329  # system 19's down and up intervals
    by_platform = read_fta(path, 128, platform=20, nodes=512)
    np.testing.assert_array_equal(by_platform.supernodes, lanl.supernodes)
    inferred = read_fta(path, 128, system="20")  # system 20's failures name nodes 0..509 only
    assert inferred.counts["nodes"] == 510 and inferred.counts["nodes_inferred"] == 1
    for capacity in (96, 338):  # Mira's midplanes and the matrix's cluster: the same log (the matrix's FTA cells)
        fta, lanl = read_fta(path, capacity, system="20", nodes=512), read_lanl(LANL, system=20, n_supernodes=capacity)
        np.testing.assert_array_equal(fta.supernodes, lanl.supernodes)
        np.testing.assert_array_equal(fta.failed_at, lanl.failed_at)
        np.testing.assert_array_equal(fta.repair_at, lanl.repair_at)
        assert fta.supernodes.max() < capacity


def test_an_fta_table_runs_from_the_command_line_with_its_downtime(chdir_tmp, capsys):
    lanl_as_fta(chdir_tmp / "lanl.tab.gz")
    code, out = run_cli(
        chdir_tmp,
        "--workload",
        str(SDSC),
        "--max-jobs",
        "300",
        "--failures",
        "lanl.tab.gz",
        "--fta-system",
        "20",
        "--fta-nodes",
        "512",
        "--downtime",
        "log",
    )
    printed = capsys.readouterr().out
    assert code == 0 and (out / "summary.json").exists()
    assert "lanl.tab.gz#system=20  (" in printed and "|fit=" not in printed  # the file and system read, no internal spec
    assert "fitted onto the whole log's span" in printed and "prefix's part kept" in printed  # the timing, in words
    import json
    import re

    count = int(re.search(r"\(([\d,]+) fail-stop;", printed).group(1).replace(",", ""))
    assert 0 < count < 2478 and json.loads((out / "summary.json").read_text())["inputs"]["failures"]["count"] == count
    log = load_failure_source(str(chdir_tmp / "lanl.tab.gz"), 128, fta_system="20", fta_nodes=512)
    assert np.nanmean(log.downtime) > 0  # real repair times


@pytest.mark.parametrize(
    ("text", "line", "reason"),
    [
        ("", 1, "no header line"),
        ("event_id node_id\n1 2\n", 1, "missing columns"),
        (f"{FTA_HEADER}\n1 0 7 20 20.7 0 100\n", 2, "expected at least 8 fields, found 7"),
        (f"{FTA_HEADER}\n1 0 7 20 20.7 2 100 200 x\n", 2, "event_type must be 0 \\(down\\) or 1 \\(up\\), got 2"),
        (f"{FTA_HEADER}\n1 0 7 20 20.7 0 1e300 200 x\n", 2, "event_start_time 1e300 is outside"),
        (f"{FTA_HEADER}\n1 0 7 20 20.7 0 100 nan x\n", 2, "event_stop_time nan is outside"),
        (f"{FTA_HEADER}\n1 0 7 20 20.7 0 100 200 x\n1 0 seven 20 20.7 0 100 200 x\n", 3, "node_id is not an integer"),
        (f"{FTA_HEADER}\n1 0 7 20 20.700 0 100 200 x\n", 2, "node 700 is not below the node count 512"),
    ],
)
def test_broken_fta_lines_name_the_file_and_line(tmp_path, text, line, reason):
    path = tmp_path / "trace.tab"
    path.write_text(text)
    with pytest.raises(FailureLogFormatError, match=reason) as caught:
        read_fta(path, 128, nodes=512)
    assert caught.value.line_no == line and str(path) in str(caught.value)


def test_an_fta_selection_without_down_intervals_is_refused(tmp_path):
    path = tmp_path / "trace.tab"
    path.write_text(f"{FTA_HEADER}\n1 0 7 20 20.7 1 100 200 x\n")
    with pytest.raises(ConfigurationError, match="no down interval \\(event_type 0\\) for system 20"):
        read_fta(path, 128, system="20")


def test_fta_names_without_node_numbers_rank_the_node_ids(tmp_path):
    path = tmp_path / "trace.tab"
    path.write_text(f"{FTA_HEADER}\n1 0 900 3 hostA 0 100 200\n2 0 50 3 hostB 0 300 400\n3 0 900 3 hostA 0 500 900\n")
    log = read_fta(path, 4)
    assert log.counts["nodes_from_ids"] == 1 and log.counts["nodes"] == 2
    assert log.supernodes.tolist() == [2, 0, 2]  # node 900 ranks 1 of 2 -> supernode 1 * 4 // 2
    assert log.downtime.tolist() == [100.0, 100.0, 400.0]


def test_a_truncated_compressed_reader_input_names_the_compression(tmp_path):
    text = (SHARED_DATA / "failures" / "bgl" / "BGL_2k.log").read_bytes()
    for name, compress in (("ras.log.gz", gzip.compress), ("ras.log.xz", lzma.compress)):
        path = tmp_path / name
        path.write_bytes(compress(text)[:3000])
        with pytest.raises(InputFileError, match=f"{name}: truncated or corrupt {'gzip' if name.endswith('gz') else 'xz'}"):
            read_bgl_ras(path)


def test_a_workload_time_beyond_the_bound_is_a_line_error_and_minus_one_still_means_unknown(tmp_path):
    path = tmp_path / "w.swf"
    path.write_text("1 0 -1 100 4 -1 -1 4 -1 -1 1 1 1 1 1 1 -1 -1\n2 5 0 100 4 -1 -1 4 2e10 -1 1 1 1 1 1 1 -1 -1\n")
    with pytest.raises(WorkloadFormatError, match="requested_time") as caught:
        read_swf(path)
    assert caught.value.line_no == 2


PUBLISHED_FTA = (
    "event_id\tcomponent_id\tnode_id\tplatform_id\tnode_name\tevent_type\tevent_start_time\tevent_stop_time\tevent_end_reason\n"
    "1\t\t0\t\t2052\t\t20\t20.52\t\t0\t1000\t\t2000\t\t\n"
    "2 \t 0\t\t2052 \t20\t\t20.520\t0\t3000\t4000\t\thardware\n"
    "3\t0\t2005\t20\t20.005\t\t0\t5000\t\t5500\n"
    "4\t0\t2511\t20\t20.511\t1\t6000\t7000\t\n"
    "5\t0\t1905\t19\t19.005\t0\t8000\t9000\t\n"
    "6\t0\t2300\t20\t20.3\t0\t9500\t9900\t\n"
)


def test_the_fta_table_in_its_published_layout_reads_whole_and_by_system(tmp_path):
    """Runs of tabs and spaces, empty fields, decimal node names that collide (20.52 and 20.520 are node 2052)."""
    path = tmp_path / "event_trace.tab"
    path.write_text(PUBLISHED_FTA)
    whole = read_fta(path, 128)
    assert whole.counts["down_intervals"] == 5 and whole.counts["up_intervals"] == 1
    assert whole.counts["nodes_from_ids"] == 1 and whole.counts["nodes"] == 4  # node ids 1905, 2005, 2052, 2300
    system = read_fta(path, 128, system="20", nodes=512)
    assert system.counts["other_system"] == 1 and len(system) == 4
    # node 2052 (both of its names) is one node: its two failures land on one supernode
    assert system.supernodes[0] == system.supernodes[1]
    assert system.failed_at.tolist() == [1000.0, 3000.0, 5000.0, 9500.0]
    assert system.repair_at.tolist() == [2000.0, 4000.0, 5500.0, 9900.0]
