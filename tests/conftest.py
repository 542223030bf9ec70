"""Shared fixtures: small tori, hand-made workloads and the bundled inputs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from torus_sim.core.job import Job
from torus_sim.inputs.workload.jobs import Workload
from torus_sim.machine.partition_table import PartitionTable
from torus_sim.machine.partitions import round_up_to_feasible_size
from torus_sim.machine.topology import BGL_SUPERNODE_TORUS, Torus

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"

if SHARED_DATA.is_dir():  # the field's logs by name (pwa:SDSC-SP2, ...) come from this mirror: no network in the tests
    os.environ.setdefault("TORUS_SIM_DATA", str(SHARED_DATA))


def cli_process(*arguments: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """``torus-sim ARGUMENTS`` in a process of its own (its warnings, progress bar and hash seed its own), exit 0 asserted."""
    done = subprocess.run(
        [sys.executable, "-m", "torus_sim.interfaces.cli", *arguments],
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    return done


@pytest.fixture(scope="session")
def bgl_table() -> PartitionTable:
    return PartitionTable(BGL_SUPERNODE_TORUS)


def make_workload(rows, dims=(4, 4, 8)) -> Workload:
    """Jobs from (job_id, submitted_at, runtime, walltime, size) rows."""
    jobs = [
        Job(job_id, submitted_at, runtime, walltime, size, round_up_to_feasible_size(dims, size))
        for job_id, submitted_at, runtime, walltime, size in rows
    ]
    jobs.sort(key=lambda job: (job.submitted_at, job.job_id))
    return Workload(jobs=jobs, source="test")


def ring(n: int) -> Torus:
    return Torus((1, 1, n))


def torus_model(workload, failures=None, scheduler=None, torus: Torus = BGL_SUPERNODE_TORUS, table=None, **keywords):
    """The one engine on a torus, with the argument order the torus tests read best in."""
    from torus_sim.engine.model import SchedulingModel
    from torus_sim.machine.platforms.torus import TorusPlatform

    return SchedulingModel(workload, scheduler, TorusPlatform(torus, table), failures, **keywords)
