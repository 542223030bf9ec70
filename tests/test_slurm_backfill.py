"""Slurm's backfill settings on EASY (issue 77 §1): a backfill pass at most every bf_interval, at most bf_max_job_test jobs."""

from __future__ import annotations

import pytest

from torus_sim.core.errors import ConfigurationError
from torus_sim.core.job import Job
from torus_sim.engine.model import SchedulingModel
from torus_sim.experiments.runner import Scenario, build_model
from torus_sim.inputs.workload.jobs import Workload
from torus_sim.inputs.workload.sources import BUNDLED_NASA_LOG
from torus_sim.policies.easy import EasyPolicy


def _starts(jobs, **settings) -> dict[int, float]:
    model = SchedulingModel(Workload(jobs=jobs, source="hand-made"), EasyPolicy(**settings), 4)
    return model.run().jobs.set_index("job_id")["started_at"].to_dict()


def _job(job_id, at, runtime, size):
    return Job(job_id, at, runtime=runtime, walltime=runtime, size=size)


def test_backfill_waits_for_the_interval_while_the_main_pass_starts_in_order():
    # A holds 3 of 4 nodes until 100; B (4 nodes) is the blocked head from 10; C (1 node, 50 s) backfills at 20 in
    # the textbook EASY; with a backfill every 60 s the passes at 10 and 20 only start in order, the next backfill
    # pass (at 100) starts B in order, and C waits for B
    jobs = [_job(1, 0, 100, 3), _job(2, 10, 100, 4), _job(3, 20, 50, 1)]
    assert _starts([job.fresh_copy() for job in jobs]) == {1: 0.0, 2: 100.0, 3: 20.0}
    assert _starts(jobs, bf_interval=60.0) == {1: 0.0, 2: 100.0, 3: 200.0}


def test_the_backfill_scan_tests_at_most_bf_max_job_test_jobs():
    # C (2 nodes) does not fit beside A; D (1 node) does: with one job tested only C is, and D waits for B
    jobs = [_job(1, 0, 100, 3), _job(2, 10, 100, 4), _job(3, 11, 10, 2), _job(4, 12, 10, 1)]
    assert _starts([job.fresh_copy() for job in jobs]) == {1: 0.0, 2: 100.0, 3: 200.0, 4: 12.0}
    assert _starts([job.fresh_copy() for job in jobs], bf_max_job_test=2) == {1: 0.0, 2: 100.0, 3: 200.0, 4: 12.0}
    assert _starts(jobs, bf_max_job_test=1) == {1: 0.0, 2: 100.0, 3: 200.0, 4: 200.0}


def test_slurm_settings_are_refused_when_they_mean_nothing():
    for bad in ({"bf_interval": 0.0}, {"bf_interval": True}, {"bf_max_job_test": 0}, {"bf_max_job_test": 2.5}):
        with pytest.raises(ConfigurationError, match="bf_"):
            EasyPolicy(**bad)
    torus = Scenario(workload=str(BUNDLED_NASA_LOG), policy="FCFS-EASY", max_jobs=50, policy_params={"bf_max_job_test": 5})
    with pytest.raises(ConfigurationError, match="bf_max_job_test applies to clusters"):
        build_model(torus, {})
    cluster = torus.replace(platform="cluster", policy_params={"bf_max_job_test": 5, "bf_interval": 30})
    assert len(build_model(cluster, {}).run().jobs) == 50
