"""The offered load: reported by every online run, warned about above 1, and chosen with --offered-load (issue 32)."""

from __future__ import annotations

import pytest

from torus_sim.core.errors import ConfigurationError
from torus_sim.experiments.runner import Scenario, load_workload, run

from .conftest import SHARED_DATA, cli_process

SDSC = SHARED_DATA / "swf" / "SDSC-SP2-1998-4.2-cln.swf.gz"


def test_the_offered_load_is_work_over_capacity_and_span():
    workload = load_workload(Scenario(platform="cluster", nodes=128, max_jobs=500))
    jobs = workload.jobs.build()
    span = jobs[-1].submitted_at - jobs[0].submitted_at
    by_hand = sum(job.partition_size * job.runtime for job in jobs) / (128 * span)
    assert workload.offered_load(128) == pytest.approx(by_hand, rel=1e-12)
    result = run(Scenario(platform="cluster", nodes=128, max_jobs=500))
    assert result.summary["offered_load"] == pytest.approx(by_hand, rel=1e-12)
    assert result.inputs["workload"]["offered_load"] == pytest.approx(by_hand, rel=1e-12)


def test_offered_load_picks_the_load_scale_that_gives_it():
    base = load_workload(Scenario(platform="cluster", nodes=64, max_jobs=2000)).offered_load(64)
    chosen = load_workload(Scenario(platform="cluster", nodes=64, max_jobs=2000, offered_load=0.9))
    assert chosen.offered_load(64) == pytest.approx(0.9, rel=1e-9)
    assert chosen.load_scale == pytest.approx(0.9 / base, rel=1e-12)
    with pytest.raises(ConfigurationError, match="not both"):
        Scenario.make(load_scale=1.2, offered_load=0.9)


def test_a_saturated_replay_warns_in_one_line(tmp_path):
    arguments = ["--platform", "cluster", "--nodes", "32", "--max-jobs", "300", "--load-scale", "8"]
    done = cli_process("run", *arguments, "--out", str(tmp_path / "o"))
    warnings = [line for line in done.stderr.splitlines() if "offered load" in line]
    assert len(warnings) == 1 and warnings[0].startswith("torus-sim: warning: the offered load after cleaning is ")
    assert "> 1 (c = 8)" in warnings[0] and "--offered-load 0.9" in warnings[0]


@pytest.mark.skipif(not SDSC.exists(), reason=f"needs SDSC-SP2 under {SHARED_DATA}")
def test_the_header_says_the_offered_load_and_the_c_that_gave_it(tmp_path, capsys):
    from torus_sim.interfaces.cli import main

    arguments = ["run", "--platform", "cluster", "--workload", str(SDSC), "--max-jobs", "3000", "--offered-load", "0.9"]
    assert main([*arguments, "--policy", "FCFS-EASY", "--out", str(tmp_path / "o"), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "offered load 0.900 at c = " in out and "offered load (after cleaning)                  0.900" in out
