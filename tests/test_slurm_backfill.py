"""Slurm's backfill settings on EASY (issue 77 §1): a backfill pass at most every bf_interval, at most bf_max_job_test jobs,
no reservation beyond bf_window, the shadow time in blocks of bf_resolution."""

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


def test_no_reservation_beyond_bf_window():
    # A holds 3 of 4 nodes until 1000; B (4 nodes) is the blocked head from 10, its shadow at 1000; C (1 node,
    # 5,000 s) at 20 would end after it: the textbook EASY keeps C waiting for B. With a window of 500 s, B's shadow
    # is beyond it: no reservation, C is backfilled at 20 and B waits for C's end (5,020)
    jobs = [_job(1, 0, 1000, 3), _job(2, 10, 100, 4), _job(3, 20, 5000, 1)]
    assert _starts([job.fresh_copy() for job in jobs]) == {1: 0.0, 2: 1000.0, 3: 1100.0}
    assert _starts([job.fresh_copy() for job in jobs], bf_window=2000.0) == {1: 0.0, 2: 1000.0, 3: 1100.0}
    assert _starts(jobs, bf_window=500.0) == {1: 0.0, 2: 5020.0, 3: 20.0}


def test_the_shadow_time_rounds_up_to_bf_resolution():
    # as above, C (1 node, 990 s) at 20 ends at 1,010, 10 s after B's shadow (1,000): not backfilled exactly; in
    # blocks of 600 s the shadow is 1,200 and C is backfilled, delaying B by 10 s
    jobs = [_job(1, 0, 1000, 3), _job(2, 10, 100, 4), _job(3, 20, 990, 1)]
    assert _starts([job.fresh_copy() for job in jobs]) == {1: 0.0, 2: 1000.0, 3: 1100.0}
    assert _starts([job.fresh_copy() for job in jobs], bf_resolution=100.0) == {1: 0.0, 2: 1000.0, 3: 1100.0}
    assert _starts(jobs, bf_resolution=600.0) == {1: 0.0, 2: 1010.0, 3: 20.0}


def test_slurm_settings_are_refused_when_they_mean_nothing():
    for bad in (
        {"bf_interval": 0.0},
        {"bf_interval": True},
        {"bf_max_job_test": 0},
        {"bf_max_job_test": 2.5},
        {"bf_window": -1.0},
        {"bf_resolution": float("inf")},
    ):
        with pytest.raises(ConfigurationError, match="bf_"):
            EasyPolicy(**bad)
    torus = Scenario(workload=str(BUNDLED_NASA_LOG), policy="FCFS-EASY", max_jobs=50, policy_params={"bf_max_job_test": 5})
    with pytest.raises(ConfigurationError, match="bf_max_job_test applies to clusters"):
        build_model(torus, {})
    with pytest.raises(ConfigurationError, match="bf_window applies to clusters"):
        build_model(torus.replace(policy_params={"bf_window": 3600}), {})
    cluster = torus.replace(
        platform="cluster", policy_params={"bf_max_job_test": 5, "bf_interval": 30, "bf_window": 86400, "bf_resolution": 60}
    )
    assert len(build_model(cluster, {}).run().jobs) == 50
