"""The per-size min-trees of the torus's wait queue (issue 32) against the plain walks they replace."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from failure_logs.events import FailureLog
from torus_sim.engine.model import SchedulingModel
from torus_sim.engine.size_index import MinTree
from torus_sim.machine.topology import Torus
from torus_sim.policies.easy import EasyPolicy
from torus_sim.policies.krevat import KrevatScheduler

from .conftest import make_workload


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 70),
    st.lists(st.tuples(st.integers(0, 69), st.one_of(st.just(math.inf), st.floats(0, 100))), max_size=60),
    st.lists(st.tuples(st.integers(0, 75), st.sampled_from([0.0, 5.0, 50.0, 100.0, math.inf])), min_size=1, max_size=20),
)
def test_the_first_slot_at_most_a_bound_is_the_plain_scans(count, updates, questions):
    """After any updates, first_at_most / first_filled answer what a scan of the values from the start slot answers."""
    tree, plain = MinTree(count), [math.inf] * count
    for slot, value in updates:
        if slot < count:
            tree.set(slot, value)
            plain[slot] = value
    for start, bound in questions:
        expected = next((slot for slot in range(start, count) if plain[slot] <= bound), -1)
        assert tree.first_at_most(start, bound) == expected
        filled = next((slot for slot in range(start, count) if plain[slot] < math.inf), -1)
        assert tree.first_filled(start) == filled
        assert all(tree[slot] == plain[slot] for slot in range(count))


class WalkingKrevat(KrevatScheduler):
    """Krevat without the queue's size index: the plain walk over each size's jobs."""

    size_index = None


class WalkingEasy(EasyPolicy):
    """FCFS-EASY on the torus without the size index."""

    size_index = None


def _trace(record):
    table = record.jobs.sort_values("job_id")
    return [(int(r.job_id), r.started_at, r.finished_at, int(r.kills)) for r in table.itertuples()]


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 60), st.integers(1, 80), st.integers(0, 60), st.sampled_from([1, 1, 1, 2, 4, 8, 16])),
        min_size=5,
        max_size=45,
    ),
    st.lists(st.tuples(st.integers(0, 200), st.integers(0, 31)), max_size=4),
    st.booleans(),
)
def test_backfilling_over_the_size_index_starts_what_the_walk_starts(rows, fails, easy):
    """Krevat (walltimes) and FCFS-EASY (predictions) on a 2x2x8 torus with failures and kills: the same schedule
    with the queue's per-size trees as with the walk over each size's jobs."""
    jobs = [(index + 1, submit, runtime, runtime + extra, size) for index, (submit, runtime, extra, size) in enumerate(rows)]
    log = None
    if fails:
        fails = sorted(fails)
        log = FailureLog(
            np.array([at for at, _ in fails], dtype=float), np.array([node for _, node in fails]), np.full(len(fails), np.nan)
        )
    indexed, walking = (EasyPolicy, WalkingEasy) if easy else (KrevatScheduler, WalkingKrevat)

    def replay(policy):
        return SchedulingModel(make_workload(jobs, dims=(2, 2, 8)), policy(), Torus((2, 2, 8)), failures=log, downtime=15.0).run()

    assert _trace(replay(indexed)) == _trace(replay(walking))
