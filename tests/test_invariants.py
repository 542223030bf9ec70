"""Invariants checked after every event on random workloads with random failures."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from failure_logs.events import FailureLog
from torus_sim.core.job import JobState
from torus_sim.machine.partitions import feasible_sizes
from torus_sim.machine.platforms import NO_JOB
from torus_sim.machine.topology import Torus
from torus_sim.metrics import summarize
from torus_sim.policies.krevat import KrevatScheduler

from .conftest import make_workload, torus_model

DIMS = (2, 2, 4)
N = 16

jobs_strategy = st.lists(
    st.tuples(
        st.integers(0, 2000),  # submitted_at
        st.integers(0, 400),  # runtime
        st.integers(0, 300),  # walltime error (walltime = runtime + error, or below runtime when odd)
        st.integers(1, N),  # size
    ),
    min_size=1,
    max_size=30,
)
failures_strategy = st.lists(st.tuples(st.integers(0, 3000), st.integers(0, N - 1), st.integers(0, 200)), max_size=12)


def check_invariants(model):
    platform = model.platform
    busy, down = platform.busy, platform.down
    assert not np.any(busy & down), "a job runs on a down supernode"
    covered = np.zeros(N, dtype=int)
    for job_id, job in model.running_jobs.items():
        assert job.state is JobState.RUNNING
        members = platform.members(job.allocation)
        assert np.all(platform.job_at[members] == job_id)
        covered[members] += 1
    assert covered.max(initial=0) <= 1, "two jobs share a supernode"
    assert np.array_equal(covered == 1, busy), "platform occupancy disagrees with the running jobs"
    assert platform.free_count() + int(busy.sum()) + int(down.sum()) == N
    queued = {id(job) for job in model.scheduler.queue}
    assert all(job.state is JobState.QUEUED for job in model.scheduler.queue)
    assert not queued & {id(job) for job in model.running_jobs.values()}
    states = [job.state for job in model.run_jobs.live.values()]  # the jobs arrived and not completed
    assert states.count(JobState.RUNNING) == len(model.running_jobs)
    assert states.count(JobState.QUEUED) == len(model.scheduler.queue)
    assert model.scheduler.queue.demand == sum(job.partition_size for job in model.scheduler.queue)


@settings(max_examples=300, deadline=None)
@given(jobs_strategy, failures_strategy, st.booleans(), st.booleans(), st.sampled_from(["transient", "log", 25.0]))
def test_invariants_hold_after_every_event(job_rows, failure_rows, backfill, migration, downtime):
    rows = []
    for index, (submitted_at, runtime, error, size) in enumerate(job_rows, start=1):
        walltime = runtime + error if error % 2 == 0 else max(1, runtime - error)  # estimates too long and too short
        rows.append((index, float(submitted_at), float(runtime), float(walltime), size))
    workload = make_workload(rows, dims=DIMS)
    assert all(job.partition_size in feasible_sizes(DIMS) for job in workload.jobs)
    log = FailureLog(
        np.array([float(t) for t, _, _ in failure_rows]),
        np.array([n for _, n, _ in failure_rows], dtype=np.int64),
        np.array([float(t + d) for t, _, d in failure_rows]),
    )
    model = torus_model(
        workload, log, KrevatScheduler(backfill=backfill, migration=migration), torus=Torus(DIMS), downtime=downtime
    )
    while model.step_event():
        check_invariants(model)
    record = model.run()
    assert model.completed == len(workload.jobs)
    table = record.jobs
    assert (table["started_at"] >= table["submitted_at"]).all()
    assert np.allclose(table["finished_at"] - table["started_at"], table["runtime"])  # migration cost 0
    summary = summarize(record)
    parts = summary["omega_util"], summary["omega_unused"], summary["omega_lost"]
    if summary["makespan"] > 0:
        assert abs(sum(parts) - 1.0) < 1e-12
        assert all(-1e-9 <= part <= 1 + 1e-9 for part in parts), parts
    else:  # every job has zero runtime and the same submit time: the fractions are undefined
        assert all(np.isnan(part) for part in parts)
    assert summary["job_kills"] == int(table["kills"].sum())
    assert (model.platform.job_at == NO_JOB).all()
