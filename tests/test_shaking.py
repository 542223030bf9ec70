"""Input shaking (Tsafrir, Ouaknine, Feitelson, MASCOTS 2007): each job's submit time moved by a seeded uniform draw."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from torus_sim.core.errors import ConfigurationError
from torus_sim.core.job import Job
from torus_sim.experiments.runner import Scenario, build_model, run
from torus_sim.experiments.sweep import run_key
from torus_sim.inputs.workload.jobs import JobColumns, Workload
from torus_sim.inputs.workload.shaking import SHAKE_STREAM, shaken


def _workload(submits, kind: str = "online") -> Workload:
    jobs = [
        Job(index + 1, at, runtime=10.0 * (index + 1), walltime=20.0 * (index + 1), size=index % 3 + 1, user_id=index % 2)
        for index, at in enumerate(submits)
    ]
    return Workload(jobs=jobs, source="hand-made", kind=kind)


def test_a_job_moves_by_the_seeds_own_draw_and_the_jobs_take_their_new_order():
    # three jobs 5 s apart moved by at most 10 s: each lands at its submit + the seed's draw (clipped at 0), in order
    workload = _workload([0.0, 5.0, 10.0])
    moves = np.random.default_rng([7, SHAKE_STREAM]).uniform(-10.0, 10.0, 3)
    expected = np.maximum(np.array([0.0, 5.0, 10.0]) + moves, 0.0)
    moved = shaken(workload, 10.0, 7)
    assert isinstance(moved.jobs, JobColumns)
    by_id = dict(zip(moved.jobs.column("job_id").tolist(), moved.jobs.column("submitted_at").tolist(), strict=True))
    assert by_id == dict(zip([1, 2, 3], expected.tolist(), strict=True))
    order = sorted(by_id, key=lambda job_id: (by_id[job_id], job_id))
    assert moved.jobs.column("job_id").tolist() == order
    assert [job.rank for job in moved.jobs] == [0, 1, 2]
    # nothing else of a job moves
    for job in moved.jobs:
        assert (job.runtime, job.walltime, job.size, job.user_id) == (
            10.0 * job.job_id,
            20.0 * job.job_id,
            (job.job_id - 1) % 3 + 1,
            (job.job_id - 1) % 2,
        )
    assert moved.source == workload.source and moved.kind == "online"


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(0.0, 1e6, allow_nan=False), min_size=1, max_size=40).map(sorted),
    st.floats(0.001, 1e4, allow_nan=False),
    st.integers(0, 2**31),
)
def test_every_job_stays_within_the_shake_never_before_zero_in_submission_order(submits, seconds, seed):
    workload = _workload(submits)
    moved = shaken(workload, seconds, seed)
    ids = moved.jobs.column("job_id")
    times = moved.jobs.column("submitted_at")
    assert sorted(ids.tolist()) == list(range(1, len(submits) + 1))
    before = np.array(submits)[ids - 1]
    assert np.all(np.abs(times - before) <= seconds + 1e-9) and np.all(times >= 0.0)
    assert np.all(np.diff(times) >= 0.0)
    again = shaken(workload, seconds, seed)
    assert again.jobs.column("submitted_at").tolist() == times.tolist()  # one seed, one shaking


def test_seeds_shake_alike_within_and_apart_across():
    workload = _workload(np.arange(50) * 100.0)
    first, second = shaken(workload, 30.0, 1), shaken(workload, 30.0, 2)
    assert shaken(workload, 30.0, 1).jobs.column("submitted_at").tolist() == first.jobs.column("submitted_at").tolist()
    assert first.jobs.column("submitted_at").tolist() != second.jobs.column("submitted_at").tolist()


def test_a_batch_or_a_shake_that_is_no_positive_number_is_one_sentence():
    with pytest.raises(ConfigurationError, match="batch workload is released at once"):
        shaken(_workload([0.0, 0.0], kind="batch"), 5.0, 0)
    for bad in (0.0, -1.0, float("inf"), float("nan")):
        with pytest.raises(ConfigurationError, match="shake must be positive seconds"):
            shaken(_workload([0.0]), bad, 0)
    with pytest.raises(ConfigurationError, match="shake"):
        Scenario.make(shake=0)
    with pytest.raises(ConfigurationError, match="batch workload is released at once"):
        build_model(Scenario.make(workload="rigid", platform="cluster", policy="R-LIST-0", jobs=10, shake=5.0))


def test_a_scenario_shakes_the_log_it_replays_by_its_seed_and_unset_leaves_it_as_logged():
    fields = dict(max_jobs=300, failures="none", platform="cluster", policy="FCFS-EASY")
    plain = Scenario.make(**fields)
    shook = plain.replace(shake=60.0, seed=3)
    assert run_key(plain) != run_key(shook) != run_key(shook.replace(seed=4))
    logged = run(plain).jobs.set_index("job_id")
    moved = run(shook).jobs.set_index("job_id").reindex(logged.index)
    shift = moved["submitted_at"] - logged["submitted_at"]
    assert shift.abs().max() <= 60.0 and shift.abs().gt(0).mean() > 0.9
    assert (moved["runtime"] == logged["runtime"]).all()


def test_every_reader_of_a_scenarios_workload_gets_it_shaken_the_learning_environment_too():
    from torus_sim.experiments.run_inputs import load_workload
    from torus_sim.rl.env import SchedulingEnv

    plain = Scenario.make(max_jobs=200, failures="none", platform="cluster", policy="FCFS-EASY")
    shook = plain.replace(shake=30.0, seed=5)
    expected = load_workload(shook).jobs.column("submitted_at")
    assert expected.tolist() != load_workload(plain).jobs.column("submitted_at").tolist()
    env = SchedulingEnv(shook, window=40, queue_slots=6)
    assert [job.submitted_at for job in env.workload.jobs] == expected.tolist()


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.integers(0, 500), min_size=1, max_size=60).map(sorted),
    st.floats(0.5, 200.0, allow_nan=False),
    st.integers(1, 9),
    st.integers(0, 1000),
)
def test_shaken_a_piece_at_a_time_is_the_whole_log_shaken_at_once(submits, seconds, rows, seed):
    # the stream writes a job once no later job can move before it: the same jobs in the same order as one sort of all
    import torus_sim.inputs.workload.shaking as shaking

    workload = Workload(jobs=JobColumns(*_columns(submits)), source="hand-made")
    moves = np.random.default_rng([seed, SHAKE_STREAM]).uniform(-seconds, seconds, len(submits))
    times = np.maximum(np.asarray(submits, dtype=float) + moves, 0.0)
    order = np.lexsort((np.arange(1, len(submits) + 1), times))
    before = shaking.PIECE_ROWS
    try:
        shaking.PIECE_ROWS = rows
        moved = shaken(workload, seconds, seed)
    finally:
        shaking.PIECE_ROWS = before
    assert moved.jobs.column("job_id").tolist() == (order + 1).tolist()
    assert moved.jobs.column("submitted_at").tolist() == times[order].tolist()
    assert moved.jobs.column("runtime").tolist() == (10.0 * (order + 1)).tolist()


def _columns(submits):
    ids = np.arange(1, len(submits) + 1)
    return ids, np.asarray(submits, dtype=float), 10.0 * ids, 20.0 * ids, ids % 3 + 1, ids % 3 + 1, ids % 2
