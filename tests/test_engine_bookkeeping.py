"""The engine's compact bookkeeping against the plain forms it replaces (issue 17: a 450k-job log in < 1 GiB).

Each test fails on a broken version: the Fenwick sums against brute force, the tree-read fairness
column against the sum over running jobs, the typed record tables against their dtypes (and a run
that goes on after a mid-run read), arrivals out of submit order, and the column-held SWF workload
against the jobs it stands for.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from torus_sim.core.job import Job
from torus_sim.engine.arrivals import RunJobs
from torus_sim.engine.handlers import _arrival_groups, _arrivals
from torus_sim.engine.model import SchedulingModel
from torus_sim.engine.rank_sums import RankSums
from torus_sim.experiments.runner import Scenario, build_model
from torus_sim.inputs.workload.jobs import JobColumns, Workload
from torus_sim.inputs.workload.sources import BUNDLED_NASA_LOG
from torus_sim.policies.easy import EasyPolicy


@pytest.mark.parametrize("dense", [True, False])
@settings(max_examples=200, deadline=None)
@given(
    count=st.integers(1, 40),
    steps=st.lists(st.tuples(st.integers(0, 39), st.integers(-5, 9), st.integers(-2, 41)), max_size=60),
)
def test_rank_sums_equal_brute_force_sums_above_a_rank(dense, count, steps):
    # the answer for the rank asked last is kept and moved by each add: asked again after adds below, at and above it;
    # the tree as a list (up to DENSE_RANKS jobs) and as a dict of its non-zero nodes (beyond)
    sums = RankSums(count)
    if not dense:
        sums._dense, sums._tree = False, {}
    amounts = [0] * count
    previous = -2
    for rank, amount, query in steps:
        rank %= count
        sums.add(rank, amount)
        amounts[rank] += amount
        assert sums.above(previous) == sum(amounts[max(previous + 1, 0) :])
        assert sums.above(query) == sum(amounts[max(query + 1, 0) :])
        assert sums.total == sum(amounts)
        previous = query if rank % 2 else previous


def _nasa_model(**fields) -> SchedulingModel:
    scenario = Scenario(workload=str(BUNDLED_NASA_LOG), platform="cluster", policy="FCFS-EASY", max_jobs=1500, **fields)
    return build_model(scenario, {}, record=True)


def test_head_ready_from_the_tree_equals_the_sum_over_running_jobs_with_kills():
    fast = _nasa_model(failures="synthetic:300", seed=3, downtime="300")
    plain = _nasa_model(failures="synthetic:300", seed=3, downtime="300")
    assert fast.book.rank_sums is not None and fast.settings.fairness
    plain.book.rank_sums = None  # the sum over every running job of lower priority
    fast_record, plain_record = fast.run(), plain.run()
    assert fast_record.counters["job_kills"] > 0  # jobs left the running set by a kill too
    assert fast_record.capacity["head_ready"].any() and not fast_record.capacity["head_ready"].all()
    pd.testing.assert_frame_equal(fast_record.capacity, plain_record.capacity)


def test_record_tables_are_typed_and_a_run_goes_on_after_a_mid_run_read():
    model = _nasa_model()
    for _ in range(400):
        model.step_event()
    early = model.table("capacity"), model.table("jobs"), model.table("attempts")  # kept alive across the rest
    record = model.run()
    assert len(record.capacity) > len(early[0]) > 0 and len(record.jobs) == 1500
    assert record.capacity["head_ready"].dtype == bool and record.capacity["time"].dtype == np.float64
    assert record.capacity["free"].dtype == np.int64 and record.jobs["attempts"].dtype == np.int64
    assert record.attempts["outcome"].dtype == object and set(record.attempts["outcome"]) == {"completed"}
    pd.testing.assert_frame_equal(record.capacity.iloc[: len(early[0])], early[0])


def _job(job_id: int, submitted_at: float, size: int = 1) -> Job:
    return Job(job_id, submitted_at, runtime=10.0, walltime=10.0, size=size)


def test_arrivals_out_of_submit_order_arrive_by_time_then_rank():
    # listed (rank order) 10, 0, 10, 5: arrivals at 0 (job 2), 5 (job 4), 10 (jobs 1 then 3)
    jobs = [_job(1, 10.0), _job(2, 0.0), _job(3, 10.0), _job(4, 5.0)]
    model = SchedulingModel(Workload(jobs=jobs, source="hand-made"), EasyPolicy(), 1, failures=None)
    record = model.run()
    started = record.jobs.set_index("job_id")["started_at"].to_dict()
    assert started == {2: 0.0, 4: 10.0, 1: 20.0, 3: 30.0}


@settings(max_examples=200, deadline=None)
@given(submits=st.lists(st.sampled_from([0.0, 0.0, 3.0, 7.5, 9.0]), max_size=30))
def test_arrival_groups_are_the_jobs_by_submit_time_then_rank(submits):
    """The grouping (read from the submit-time column) against a plain sort and group-by."""
    jobs = [_job(index + 1, at) for index, at in enumerate(submits)]
    order, bounds = _arrival_groups(np.array(submits, dtype=float))
    positions = list(range(len(jobs))) if order is None else order.tolist()
    groups = [[jobs[position].job_id for position in positions[bounds[g] : bounds[g + 1]]] for g in range(len(bounds) - 1)]
    by_time = sorted(enumerate(submits), key=lambda item: (item[1], item[0]))
    expected = [[index + 1 for index, _ in group] for _, group in itertools.groupby(by_time, key=lambda item: item[1])]
    assert groups == expected
    assert bounds[0] == 0 and bounds[-1] == len(jobs)


@settings(max_examples=200, deadline=None)
@given(
    submits=st.lists(st.sampled_from([0.0, 0.0, 3.0, 7.5, 9.0]), max_size=30),
    chunk=st.sampled_from([1, 2, 3, 7, 1 << 16]),
    each=st.booleans(),
)
def test_arrivals_read_a_chunk_at_a_time_are_the_same_groups(submits, chunk, each):
    """Issue 61 §1: a streamed log's arrival groups from its submit times a chunk at a time (no per-job array), in
    order or not (then the whole column's sort), equal the plain sort and group-by; ``each``: one job per group."""
    import torus_sim.inputs.workload.jobs as jobs_module

    count = len(submits)
    columns = JobColumns(range(1, count + 1), submits, [1.0] * count, [1.0] * count, [1] * count, [1] * count, [0] * count)
    run_jobs = RunJobs(Workload(columns, "test"), None, streamed=True)
    saved, jobs_module.CHUNK_ROWS = jobs_module.CHUNK_ROWS, chunk
    try:
        groups = [(at, list(ranks)) for at, ranks in _arrivals(run_jobs, each)]
    finally:
        jobs_module.CHUNK_ROWS = saved
    by_time = sorted(enumerate(submits), key=lambda item: (item[1], item[0]))
    if each:
        expected = [(at, [rank]) for rank, at in by_time]
    else:
        expected = [(at, [rank for rank, _ in group]) for at, group in itertools.groupby(by_time, key=lambda item: item[1])]
    assert groups == expected


def test_job_columns_read_as_the_list_of_jobs_they_stand_for():
    columns = JobColumns([7, 3, 9], [0.0, 1.5, 1.5], [10.0, 20.0, 30.0], [12.0, 20.0, 40.0], [1, 2, 4], [1, 2, 4], [5, -1, 6])
    built = columns.build()
    described = [(j.job_id, j.submitted_at, j.runtime, j.walltime, j.size, j.partition_size, j.user_id, j.rank) for j in built]
    assert described == [(7, 0.0, 10.0, 12.0, 1, 1, 5, 0), (3, 1.5, 20.0, 20.0, 2, 2, -1, 1), (9, 1.5, 30.0, 40.0, 4, 4, 6, 2)]
    assert len(columns) == 3 and columns[-1].job_id == 9 and columns[1].rank == 1
    assert [job.job_id for job in columns[1:]] == [3, 9] and [job.job_id for job in columns] == [7, 3, 9]
    assert all(job.state.name == "PENDING" for job in built) and columns.build()[0] is not built[0]
    workload = Workload(jobs=columns, source="columns")
    assert workload.span == (0.0, 1.5)


_TIMES = st.sampled_from([0.0, 5.0, 10.0, 10.0, 20.0, 35.0, 50.0, 100.0])


@settings(max_examples=200, deadline=None)
@given(
    jobs=st.lists(
        st.tuples(_TIMES, st.sampled_from([0.0, 2.0]), st.sampled_from([0.0, 4.0]), _TIMES, st.one_of(st.none(), _TIMES)),
        min_size=1,
        max_size=12,
    ),
    nows=st.lists(_TIMES, min_size=1, max_size=4),
    dropped=st.sets(st.integers(0, 11)),
)
def test_kept_order_of_predicted_ends_equals_the_sort_at_every_pass(jobs, nows, dropped):
    from torus_sim.core.job import JobState
    from torus_sim.engine.progress import CheckpointProgress
    from torus_sim.engine.running_ends import RunningEnds

    progress, kept, running = CheckpointProgress(), RunningEnds(), []
    for rank, (resumed, overhead, done, walltime, prediction) in enumerate(jobs):
        job = Job(rank + 1, 0.0, runtime=walltime + 1.0, walltime=walltime + 1.0, size=1, rank=len(jobs) - rank)
        job.state, job.resumed_at, job.attempt_overhead, job.progress_at_resume = JobState.RUNNING, resumed, overhead, done
        job.prediction = prediction
        job.allocated_size = 1 + rank % 3
        kept.add(job)
        running.append(job)
    for index in sorted(dropped):
        if index < len(running):
            kept.discard(running[index])
    running = [job for index, job in enumerate(running) if index not in dropped]
    for now in sorted(nows):  # passes at later and later times (a prediction that runs out is re-keyed once)
        expected = [
            (end, job) for end, _, _, job in sorted((progress.predicted_end(job, now), 0, job.rank, job) for job in running)
        ]
        assert list(kept.releases(now)) == expected
        for free, need, together in itertools.product((0, 2), (1, 3, 9, 40), (True, False)):
            # EASY's shadow on counts (kept between passes while no job starts or stops): the walk of the sort's order
            shadow_at, free_then = math.inf, free
            for end, job in expected:
                if shadow_at != math.inf and end != shadow_at:
                    break
                free_then += job.allocated_size
                if shadow_at == math.inf and need <= free_then:
                    shadow_at = end
                    if not together:
                        break
            if need > free:  # the caller asks only when the job does not fit now
                assert kept.count_shadow(now, free, need, together) == (shadow_at, free_then)
                assert kept.count_shadow(now, free, need, together) == (shadow_at, free_then)  # asked again: the kept answer
    assert len(kept) == len(running)


def test_the_kept_count_shadow_is_forgotten_when_a_job_starts_or_stops():
    from torus_sim.core.job import JobState
    from torus_sim.engine.running_ends import RunningEnds

    kept, jobs = RunningEnds(), []
    for rank, (walltime, nodes) in enumerate([(100.0, 4), (50.0, 2), (200.0, 8)]):
        job = Job(rank + 1, 0.0, runtime=walltime, walltime=walltime, size=nodes, rank=rank)
        job.state, job.resumed_at, job.allocated_size = JobState.RUNNING, 0.0, nodes
        jobs.append(job)
    kept.add(jobs[0])
    kept.add(jobs[1])
    assert kept.count_shadow(10.0, 1, 6) == (100.0, 7)  # 2 nodes at 50 s, 4 more at 100 s
    kept.add(jobs[2])
    assert kept.count_shadow(10.0, 1, 6) == (100.0, 7)
    assert kept.count_shadow(10.0, 1, 9) == (200.0, 15)
    kept.discard(jobs[0])
    assert kept.count_shadow(10.0, 1, 6) == (200.0, 11)
    assert kept.count_shadow(10.0, 1, 20) == (math.inf, 11)


@settings(max_examples=100, deadline=None)
@given(
    rows=st.lists(st.tuples(st.sampled_from([1, 2, 4, 8, 16]), st.floats(0.0, 1e6)), min_size=1, max_size=40),
    chunk=st.sampled_from([1, 2, 5, 1 << 16]),
)
def test_sizes_and_offered_load_read_a_chunk_at_a_time_equal_the_lists(rows, chunk):
    """Issue 61 §1: each size's first job and the offered load of a log's columns, read a chunk at a time, are the
    list's (the same dict, the same bits)."""
    import torus_sim.inputs.workload.jobs as jobs_module

    count = len(rows)
    sizes, runtimes = [size for size, _ in rows], [runtime for _, runtime in rows]
    submits = [float(index) for index in range(count)]
    columns = JobColumns(range(1, count + 1), submits, runtimes, runtimes, sizes, sizes, [0] * count)
    listed = [Job(index + 1, submits[index], runtimes[index], runtimes[index], sizes[index]) for index in range(count)]
    saved, jobs_module.CHUNK_ROWS = jobs_module.CHUNK_ROWS, chunk
    try:
        from_columns = RunJobs(Workload(columns, "test"), None, streamed=True).partition_sizes()
        load = Workload(columns, "test").offered_load(16)
    finally:
        jobs_module.CHUNK_ROWS = saved
    assert from_columns == RunJobs(Workload(listed, "test"), None, streamed=True).partition_sizes()
    whole = float(np.dot(np.array(sizes, dtype=float), np.array(runtimes)))
    assert load == (None if count < 2 else whole / (16 * (count - 1)))
