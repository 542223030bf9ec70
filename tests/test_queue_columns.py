"""The wait queue's numpy columns (issue 32) against plain sorted lists, under any order of entries and exits."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from torus_sim.core.job import Job
from torus_sim.engine import queue_columns, wait_queue
from torus_sim.engine.wait_queue import WaitQueue


def _remaining(job: Job) -> float:
    return job.walltime - job.saved_work


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 50), st.integers(1, 64), st.sampled_from([1.0, 5.0, 60.0, 3600.0])), min_size=1, max_size=120
    ),
    st.lists(st.tuples(st.booleans(), st.integers(0, 10_000)), max_size=400),
    st.booleans(),
    st.sampled_from([2, 1024]),
    st.sampled_from([(0, 0), (6, 3), (48, 16), "always"]),
)
def test_the_columns_follow_the_queue_through_arrivals_starts_and_returns(rows, moves, burst, smallest, bounds):
    """Jobs enter (in a burst on an empty queue, one by one, or back in the middle after a start) and leave
    (the head or any other); after every move both column orders equal the plain lists they replace
    (buffers of 2 rows at first make them grow and re-centre often), and they are kept exactly while
    the queue is long (made at the first bound, dropped below the second), or at every length, the
    empty queue included, when asked ``always`` (whatever the bounds)."""
    kept = queue_columns._SMALLEST, wait_queue.COLUMNS_KEPT_FROM, wait_queue.COLUMNS_DROPPED_BELOW
    always = bounds == "always"
    queue_columns._SMALLEST = smallest
    wait_queue.COLUMNS_KEPT_FROM, wait_queue.COLUMNS_DROPPED_BELOW = (48, 16) if always else bounds
    try:
        _replay(rows, moves, burst, *((0, 0) if always else bounds), always=always)
    finally:
        queue_columns._SMALLEST, wait_queue.COLUMNS_KEPT_FROM, wait_queue.COLUMNS_DROPPED_BELOW = kept


def _replay(rows, moves, burst, kept_from, dropped_below, always=False):
    jobs = [Job(index + 1, submit, walltime, walltime, size, rank=index) for index, (submit, size, walltime) in enumerate(rows)]
    queue = WaitQueue(by_size=False)
    queue.keep_columns(_remaining, shortest=True, always=always)
    assert (queue.columns is not None) == (kept_from == 0)  # made at once for an empty queue only when always
    waiting, out = [], list(jobs)
    if burst:
        queue.extend(out)
        waiting, out = list(out), []
    kept = len(waiting) >= kept_from
    for enter, pick in moves:
        if enter and out:
            job = out.pop(pick % len(out))
            queue.add(job)
            waiting.append(job)
        elif waiting:
            job = queue.head if pick % 3 == 0 else waiting[pick % len(waiting)]
            queue.remove(job)
            waiting.remove(job)
            out.append(job)
        kept = len(waiting) >= kept_from or (kept and len(waiting) >= dropped_below)
        assert (queue.columns is not None) == kept == (queue.shortest is not None)
        if not kept:
            continue
        fcfs = sorted(waiting, key=lambda job: (job.submitted_at, job.job_id))
        assert queue.columns.jobs == fcfs == queue.jobs()
        assert queue.columns.sizes.tolist() == [job.partition_size for job in fcfs]
        assert queue.columns.remaining.tolist() == [_remaining(job) for job in fcfs]
        assert queue.columns.ranks.tolist() == [job.rank for job in fcfs]
        shortest = sorted(waiting, key=lambda job: (_remaining(job), job.rank))
        assert queue.shortest.jobs == shortest
        assert np.array_equal(queue.shortest.sizes, np.array([job.partition_size for job in shortest], dtype=np.int64))
        assert queue.shortest.remaining.tolist() == [_remaining(job) for job in shortest]
        assert queue.shortest.ranks.tolist() == [job.rank for job in shortest]


class _Columns:
    """Jobs read by column, in rank order (what the size index reads of the engine's RunJobs)."""

    def __init__(self, jobs):
        self.jobs = jobs

    def column(self, name):
        return np.array([getattr(job, name) for job in self.jobs])


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 50), st.sampled_from([1, 2, 4, 8]), st.sampled_from([1.0, 5.0, 60.0, 3600.0])),
        min_size=1,
        max_size=80,
    ),
    st.lists(st.tuples(st.booleans(), st.integers(0, 10_000)), max_size=300),
    st.booleans(),
)
def test_the_size_index_answers_what_the_per_size_lists_answer(rows, moves, burst):
    """A queue with the size index (the torus's, issue 32) and one with the per-size lists, through the same entries
    and exits: the same order, sizes, jobs of each size and least walltime after every move."""

    def make():
        return [
            Job(index + 1, submit, walltime, walltime, size, rank=index) for index, (submit, size, walltime) in enumerate(rows)
        ]

    indexed_jobs, listed_jobs = make(), make()
    indexed, listed = WaitQueue(by_size=True), WaitQueue(by_size=True)
    indexed.keep_size_index(_Columns(indexed_jobs), lambda job: job.walltime, "walltime")
    waiting, out = set(), list(range(len(rows)))
    if burst:
        indexed.extend(indexed_jobs)
        listed.extend(listed_jobs)
        waiting, out = set(out), []
    for enter, pick in moves:
        if enter and out:
            number = out.pop(pick % len(out))
            indexed.add(indexed_jobs[number])
            listed.add(listed_jobs[number])
            waiting.add(number)
        elif waiting:
            number = indexed.head.rank if pick % 3 == 0 else sorted(waiting)[pick % len(waiting)]
            indexed.remove(indexed_jobs[number])
            listed.remove(listed_jobs[number])
            waiting.discard(number)
            out.append(number)
        assert [job.rank for job in indexed] == [job.rank for job in listed]
        assert indexed.sizes() == listed.sizes()
        for size in (1, 2, 4, 8):
            assert [job.rank for job in indexed.of_size(size)] == [job.rank for job in listed.of_size(size)]
            assert indexed.least_walltime(size) == listed.least_walltime(size)


def test_conservative_on_node_ids_reads_the_queue_columns_and_keeps_its_schedule(monkeypatch):
    # issue 61 §2: on a cluster with node ids the queue kept no columns, so conservative backfilling's compiled
    # pass asked every waiting job's predicted time at every pass (59 M calls, a third of the whole-log cell's
    # time under LANL's failures); the columns hold the same values, taken when a job enters the queue
    import pandas as pd

    from torus_sim.experiments.runner import Scenario, run
    from torus_sim.policies.easy import ConservativePolicy

    from .test_input_errors import SDSC

    scenario = Scenario(
        platform="cluster", nodes=128, workload=str(SDSC), max_jobs=2500, policy="conservative", failures="synthetic:400", seed=2
    )
    asked = []
    plan = ConservativePolicy.plan

    def watched(self, view):
        if view.queue:
            asked.append(view.queue.columns is not None)
        return plan(self, view)

    monkeypatch.setattr(ConservativePolicy, "plan", watched)
    with_columns = run(scenario)  # conservative declares queue_columns = "always": every pass reads them
    assert asked and all(asked) and with_columns.summary["failures"] > 0  # node ids: the failures hit nodes
    asked.clear()
    monkeypatch.setattr(ConservativePolicy, "queue_columns", None)  # the queue keeps none: each job asked per pass
    without = run(scenario)
    assert not any(asked)
    pd.testing.assert_frame_equal(with_columns.jobs, without.jobs)
    assert with_columns.summary == without.summary


def test_a_policy_declaring_always_gets_the_columns_at_every_length_and_an_unknown_choice_is_refused():
    """``queue_columns = "always"`` (conservative backfilling's): the engine keeps the columns from the empty queue on,
    and never drops them; a value out of the documented ones is a sentence naming them."""
    import pytest

    from torus_sim.core.errors import ConfigurationError
    from torus_sim.experiments.runner import Scenario, build_model
    from torus_sim.policies.base import Policy, check_declarations
    from torus_sim.policies.easy import ConservativePolicy

    assert ConservativePolicy().queue_columns == "always"
    check_declarations(ConservativePolicy())
    model = build_model(Scenario(platform="cluster", nodes=128, max_jobs=300, policy="conservative", failures="none"))
    assert model.queue.columns is not None and len(model.queue) == 0  # made for the empty queue
    lengths = []
    while model.step_event():
        lengths.append(len(model.queue))
        assert model.queue.columns is not None and model.queue.columns.jobs == model.queue.jobs()
    assert 0 in lengths and max(lengths) > 0  # through empty and short queues (under the default 16 and 48 bounds)

    class Sometimes(Policy):
        name = "sometimes"
        queue_columns = "sometimes"

        def plan(self, view):
            return ()

    with pytest.raises(ConfigurationError, match=r"declares queue_columns = 'sometimes'; expected one of .*'always'"):
        check_declarations(Sometimes())


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 50), st.integers(1, 64), st.sampled_from([1.0, 5.0, 60.0])), min_size=1, max_size=60),
    st.lists(st.integers(-3, 3), min_size=60, max_size=60),
    st.sampled_from([0, 8, 1000]),
)
def test_a_reordered_queue_keeps_columns_that_equal_columns_made_anew(rows, shifts, kept_from):
    """A priority that changes with time reorders the queue: every job keyed anew (here its submit time plus a shift,
    or the same key: an order that does not move), the queue's order is the keys', and columns kept through the
    reorder (their rows moved with their jobs, or only their keys where nothing moved) hold what columns made from
    scratch in that order hold; below the columns' bound they are made again or not at all."""
    keys: dict[int, tuple] = {}
    jobs = [Job(index + 1, submit, walltime, walltime, size, rank=index) for index, (submit, size, walltime) in enumerate(rows)]
    for job in jobs:
        keys[job.job_id] = (job.submitted_at, job.job_id)
    queue = WaitQueue(key=lambda job: keys[job.job_id], by_size=False)
    kept = wait_queue.COLUMNS_KEPT_FROM, wait_queue.COLUMNS_DROPPED_BELOW
    wait_queue.COLUMNS_KEPT_FROM, wait_queue.COLUMNS_DROPPED_BELOW = kept_from, min(kept_from, 4)
    try:
        queue.keep_columns(_remaining, shortest=True)
        for job in jobs:
            queue.add(job)
        for moved in (True, False):
            for job, shift in zip(jobs, shifts, strict=False):
                keys[job.job_id] = (job.submitted_at + (shift * 7 if moved else 0), job.job_id)
            queue.reorder()
            order = sorted(jobs, key=lambda job: keys[job.job_id])
            assert queue.jobs() == order and queue.head is order[0]
            assert [job.queue_key for job in order] == [keys[job.job_id] for job in order]
            assert (queue.columns is not None) == (len(jobs) >= kept_from)
            if queue.columns is not None:
                fresh = queue_columns.JobColumns(_remaining)
                fresh.fill(order, [keys[job.job_id] for job in order])
                assert queue.columns.jobs == order
                for column in ("sizes", "remaining", "ranks"):
                    assert np.array_equal(getattr(queue.columns, column), getattr(fresh, column)), column
                shortest = sorted(order, key=lambda job: (_remaining(job), job.rank))
                assert queue.shortest.jobs == shortest
                queue.remove(order[0])  # the kept columns still follow entries and exits
                assert queue.columns.jobs == order[1:]
                queue.add(order[0])
                assert queue.columns.jobs == order
    finally:
        wait_queue.COLUMNS_KEPT_FROM, wait_queue.COLUMNS_DROPPED_BELOW = kept


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 50), st.integers(1, 64)), min_size=1, max_size=40),
    st.lists(st.tuples(st.sampled_from(["add", "remove", "rescale", "shift"]), st.integers(0, 80)), max_size=40),
    st.sampled_from([4, 1000]),
)
def test_a_reorder_that_keeps_the_order_places_later_jobs_by_the_new_keys(rows, steps, load):
    """A reorder whose new keys keep the jobs' order rewrites the keys the sorted list keeps beside them: jobs that
    enter later (keyed on the new scale) and exits find their places by the new keys, across the list's sublists
    (``load`` 4: many), as a queue sorted from scratch has them."""
    scale = [1.0, 0.0]  # key = (scale x submit + offset, id): a rescale or a shift keeps the order and moves every key
    jobs = {index + 1: Job(index + 1, float(submit), 10.0, 10.0, size) for index, (submit, size) in enumerate(rows)}
    queue = WaitQueue(key=lambda job: (scale[0] * job.submitted_at + scale[1], job.job_id), by_size=False)
    queue._sorted._reset(load)
    waiting = dict(jobs)
    for job in waiting.values():
        queue.add(job)
    next_id = len(jobs) + 1
    for what, value in steps:
        if what == "add":
            job = Job(next_id, float(value), 10.0, 10.0, 1)
            next_id += 1
            waiting[job.job_id] = job
            queue.add(job)
        elif what == "remove" and waiting:
            job = waiting.pop(sorted(waiting)[value % len(waiting)])
            queue.remove(job)
        elif what == "rescale":
            scale[0] *= 1.0 + value / 10.0
            queue.reorder()
        else:
            scale[1] += value * 100.0
            queue.reorder()
        order = sorted(waiting.values(), key=lambda job: (scale[0] * job.submitted_at + scale[1], job.job_id))
        assert queue.jobs() == order
        assert queue.head is (order[0] if order else None)
        queue._sorted._check()
