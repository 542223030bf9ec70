"""A dispatch latency (issue 77 §1): a submitted job reaches the wait queue a fixed time after its submission."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from failure_logs.events import FailureLog
from torus_sim.core.errors import ConfigurationError
from torus_sim.core.job import Job
from torus_sim.engine.model import SchedulingModel
from torus_sim.experiments.runner import Scenario, build_model
from torus_sim.experiments.sweep import run_key
from torus_sim.inputs.workload.jobs import Workload
from torus_sim.policies.catalog import ONLINE_POLICIES, POLICIES
from torus_sim.policies.easy import EasyPolicy
from torus_sim.policies.rigid import ListPolicy

CLUSTER_POLICIES = [name for name in ONLINE_POLICIES if name not in ("krevat", "balancing", "tiebreak")]


def _job(job_id: int, at: float, runtime: float, size: int) -> Job:
    return Job(job_id, at, runtime=runtime, walltime=runtime, size=size, user_id=1)


def _run(jobs, nodes: int, policy=None, **engine):
    model = SchedulingModel(Workload(jobs=jobs, source="hand-made"), policy or EasyPolicy(), nodes, **engine)
    return model, model.run().jobs.set_index("job_id")


def test_each_job_reaches_the_queue_the_latency_after_its_submission_and_its_wait_counts_from_then():
    # 8 nodes, FCFS-EASY, 30 s: jobs 1 (4 nodes) and 2 (2) submitted at 0 start at 30; job 3 (4), submitted at 10, is
    # in the queue at 40 with 2 nodes free and starts when job 2 ends (80); job 4 at 200 starts at 230
    jobs = [_job(1, 0, 100, 4), _job(2, 0, 50, 2), _job(3, 10, 30, 4), _job(4, 200, 10, 1)]
    _, plain = _run([job.fresh_copy() for job in jobs], 8)
    assert plain["started_at"].to_dict() == {1: 0.0, 2: 0.0, 3: 50.0, 4: 200.0}
    model, table = _run(jobs, 8, dispatch_latency=30.0)
    assert table["started_at"].to_dict() == {1: 30.0, 2: 30.0, 3: 80.0, 4: 230.0}
    assert (table["started_at"] - table["submitted_at"]).to_dict() == {1: 30.0, 2: 30.0, 3: 70.0, 4: 30.0}
    assert model.scheduler.dispatch.pending == 0


def test_the_latency_and_the_cycle_compose():
    # a pass at most every 100 s: the pass at 0 sees nothing (job 1 is due at 30), the one asked at 30 runs then (the
    # last pass was at 0, 100 s are not over: it waits until 100); job 2, due at 130, starts at 200
    jobs = [_job(1, 0, 50, 2), _job(2, 100, 10, 2)]
    _, table = _run(jobs, 4, dispatch_latency=30.0, sched_min_interval=100.0)
    assert table["started_at"].to_dict() == {1: 100.0, 2: 200.0}


def test_a_killed_job_returns_to_the_queue_at_once():
    # job 1 (4 nodes) is in the queue at 30 and starts; a failure at 50 kills it: back in the queue at once, it
    # restarts at 50 (transient downtime), not 30 s later
    failures = FailureLog(np.array([50.0]), np.array([0]), np.array([np.nan]))
    _, table = _run([_job(1, 0, 100, 4)], 4, POLICIES.make("FCFS"), failures=failures, dispatch_latency=30.0)
    assert table.loc[1, "started_at"] == 50.0 and table.loc[1, "finished_at"] == 150.0


@settings(max_examples=30, deadline=None)
@given(
    submits=st.lists(st.integers(0, 300), min_size=1, max_size=20),
    sizes=st.lists(st.integers(1, 8), min_size=20, max_size=20),
    runtimes=st.lists(st.integers(1, 120), min_size=20, max_size=20),
    latency=st.sampled_from([1.0, 17.5, 60.0]),
    policy=st.sampled_from(CLUSTER_POLICIES),
)
def test_no_job_starts_before_its_latency_under_any_cluster_policy(submits, sizes, runtimes, latency, policy):
    jobs = [_job(index + 1, float(at), float(runtimes[index]), sizes[index]) for index, at in enumerate(sorted(submits))]
    _, table = _run(jobs, 8, POLICIES.make(policy), dispatch_latency=latency)
    assert len(table) == len(jobs) and table["finished_at"].notna().all()
    assert ((table["started_at"] - table["submitted_at"]) >= latency - 1e-9).all()


def test_the_torus_takes_the_latency_and_a_scenario_carries_it():
    fields = dict(max_jobs=300, failures="none")
    plain = Scenario.make(**fields)
    delayed = plain.replace(dispatch_latency=120.0)
    assert run_key(plain) != run_key(delayed)
    table = build_model(delayed).run().jobs
    free = build_model(plain).run().jobs
    waits = table["started_at"] - table["submitted_at"]
    assert (waits >= 120.0).all() and waits.mean() > (free["started_at"] - free["submitted_at"]).mean()


def test_a_bad_latency_or_a_batch_policy_is_one_sentence():
    with pytest.raises(ConfigurationError, match="dispatch_latency"):
        Scenario.make(dispatch_latency=0)
    with pytest.raises(ConfigurationError, match="dispatch_latency must be positive seconds"):
        _run([_job(1, 0, 10, 1)], 4, dispatch_latency=float("inf"))
    with pytest.raises(ConfigurationError, match="dispatch_latency: .* plans after each attempt end"):
        _run([_job(1, 0, 10, 1)], 4, ListPolicy(), dispatch_latency=5.0)
