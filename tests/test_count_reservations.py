"""Conservative backfilling on a count cluster in compiled code (issue 32) against the plain profile.

``reserve_in_order`` must give every reservation the Python profile gives (float for float), the
engine's release columns must follow the running jobs, and a whole replay through the kept profile
(:class:`CountProfile`: passes with only arrivals place only the arrivals) must start every job when
the plain pass (:func:`~torus_sim.policies.reservations.reservation_pass` with ``compiled=False``) starts it.
"""

from __future__ import annotations

import hashlib
from contextlib import contextmanager
from functools import partial

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from predictors.runtime import make_runtime_predictor
from tests.conftest import SHARED_DATA, make_workload
from tests.test_cross import columns_bounds, trace
from torus_sim.engine.model import SchedulingModel
from torus_sim.engine.running_ends import ReleaseColumns
from torus_sim.machine.platforms.cluster import ClusterPlatform
from torus_sim.policies import reservations
from torus_sim.policies.availability import AvailabilityProfile
from torus_sim.policies.count_reservations import (
    BLOCK,
    CountProfile,
    KeptReservations,
    _reservations,
    reserve_in_order,
    starts_now,
)
from torus_sim.policies.easy import ConservativePolicy
from torus_sim.policies.reservations import reservation_pass

RICC = SHARED_DATA / "swf" / "RICC-2010-2.swf.gz"
CTC = SHARED_DATA / "swf" / "CTC-SP2-1996-3.1-cln.swf.gz"


def plain_reservations(now, free_now, ends, nodes, sizes, durations) -> list[float]:
    """The reference: AvailabilityProfile.earliest then reserve, job after job."""
    profile = AvailabilityProfile(now, free_now, list(zip(ends, nodes, strict=True)))
    starts = []
    for size, duration in zip(sizes, durations, strict=True):
        duration = max(duration, 1e-9)
        start_at, _ = profile.earliest(size, duration)
        profile.reserve(start_at, duration, size)
        starts.append(start_at)
    return starts


# durations that make runs of identical jobs, an empty window (1e-12 and 0 are raised to 1e-9, which a
# now of 1.3e7 does not move: start + 1e-9 == start there) and fractions that split steps
DURATIONS = st.sampled_from([0.0, 1e-12, 1.0, 2.0, 2.5, 3.0, 7.0, 40.0])


# blocks of 2 to 4 breakpoints split at almost every reservation and make windows of many blocks (reserved
# whole by their offset); BLOCK is what runs
BLOCKS = st.sampled_from([2, 3, 4, BLOCK])


@settings(max_examples=400, deadline=None)
@given(
    st.sampled_from([0.0, 100.0, 1.3e7]),
    st.integers(0, 12),
    st.lists(st.tuples(st.sampled_from([-5.0, 0.0, 1e-10, 1.0, 2.0, 2.5, 3.0, 6.0, 11.0]), st.integers(1, 4)), max_size=8),
    st.lists(st.tuples(st.integers(0, 24), DURATIONS, st.integers(1, 4)), max_size=12),
    BLOCKS,
)
# job 1 (3 nodes) is reserved at 2 after the search went over the step of 2 nodes at 1 whole: that block's most
# free is 2, so job 2 (2 nodes, 1 s) must still find it
@example(0.0, 0, [(1.0, 2), (2.0, 1)], [(3, 5.0, 1), (2, 1.0, 1)], 2)
def test_compiled_reservations_are_the_plain_profiles_start_for_start(now, free_now, releases, waiting, block):
    releases = sorted((now + offset, nodes) for offset, nodes in releases)
    sizes, durations = [], []
    for size, duration, copies in waiting:  # runs of identical jobs, as job arrays make them
        sizes += [size] * copies
        durations += [duration] * copies
    ends = [end for end, _ in releases]
    nodes = [count for _, count in releases]
    expected = plain_reservations(now, free_now, ends, nodes, sizes, durations)
    found = reserve_in_order(now, free_now, np.array(ends), np.array(nodes), np.array(sizes), np.array(durations), block)
    assert found.tolist() == expected


@pytest.mark.parametrize("block", [2, 5, BLOCK])
def test_a_saturated_profile_of_hundreds_of_breakpoints_gives_the_plain_reservations(block):
    """RICC's regime in small: 300 running jobs ending over a day on 512 nodes, 600 waiting jobs in job arrays of
    mostly one node with estimates of minutes to days, so reservations reach far and windows span many blocks."""
    rng = np.random.default_rng(32)
    ends = np.sort(np.round(rng.uniform(0.0, 86_400.0, 300), 1))
    nodes = rng.integers(1, 4, 300)
    sizes, durations = [], []
    while len(sizes) < 600:
        copies = int(rng.integers(1, 40))
        sizes += [int(rng.choice([1, 1, 1, 2, 8, 32]))] * copies
        durations += [float(rng.choice([60.0, 900.0, 3_600.0, 43_200.0, 259_200.0]))] * copies
    expected = plain_reservations(0.0, 0, ends, nodes, sizes, durations)
    assert np.isfinite(expected).all() and len(set(expected)) > 100
    found = reserve_in_order(0.0, 0, ends, nodes, np.array(sizes), np.array(durations), block)
    assert found.tolist() == expected


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from([0.0, 1.3e7]),
    st.integers(0, 12),
    st.lists(st.tuples(st.sampled_from([-5.0, 0.0, 1e-10, 1.0, 2.0, 2.5, 6.0, 11.0]), st.integers(1, 4)), max_size=8),
    st.lists(st.tuples(st.integers(0, 14), DURATIONS, st.integers(1, 4)), max_size=14),
    BLOCKS,
)
# job 0 (4 nodes from 1) takes every node over [1, 41): job 1 (2 nodes, 40 s) no longer starts now, job 2
# (1 node, 1 s) still does, through a window that ends inside job 0's
@example(0.0, 3, [(1.0, 1)], [(4, 40.0, 1), (2, 40.0, 1), (1, 1.0, 1)], 2)
def test_the_jobs_that_start_now_are_those_every_reservation_starts_now(now, free_now, releases, waiting, block):
    """starts_now stops reserving once no job left can start now: the same positions as reserving every job."""
    releases = sorted((now + offset, nodes) for offset, nodes in releases)
    sizes, durations = [], []
    for size, duration, copies in waiting:
        sizes += [size] * copies
        durations += [duration] * copies
    ends, nodes = np.array([end for end, _ in releases]), np.array([count for _, count in releases], dtype=np.int64)
    every = reserve_in_order(now, free_now, ends, nodes, np.array(sizes), np.array(durations), block)
    found = starts_now(now, free_now, ends, nodes, np.array(sizes, dtype=np.int64), np.array(durations), block)
    assert found.tolist() == np.flatnonzero(every <= now).tolist()
    assert_reserved_up_to_the_last_start(now, free_now, ends, nodes, sizes, durations, block, every)


def assert_reserved_up_to_the_last_start(now, free_now, ends, nodes, sizes, durations, block, every) -> np.ndarray:
    """The jobs reserved are a first run of the queue, each where every reservation puts it, and every job that
    starts now among them; returns starts_now's reservations (NaN: not reserved)."""
    reserved = _reservations(now, free_now, ends, nodes, np.array(sizes), np.array(durations), block, True)
    count = int(np.count_nonzero(~np.isnan(reserved)))
    assert np.isnan(reserved[count:]).all()
    assert reserved[:count].tolist() == every[:count].tolist()
    assert not (every[count:] <= now).any()
    return reserved


@settings(max_examples=80, deadline=None)
@given(
    st.integers(0, 8),
    st.lists(st.tuples(st.sampled_from([0.0, 1.0, 2.0, 2.5, 6.0]), st.integers(1, 4)), max_size=6),
    st.lists(st.tuples(st.integers(1, 10), st.sampled_from([1.0, 2.0, 2.5, 3.0, 7.0, 40.0])), max_size=12),
)
def test_starts_now_stops_reserving_as_soon_as_no_job_left_can_start_now(free_now, releases, waiting):
    """The jobs reserved are exactly the first m, m the fewest after whose reservations no later job starts now
    (each later job tried alone after them): the watched jobs' fewest free is lowered by every reservation that
    reaches them (no two neighbours alike here: a run of identical jobs is reserved together)."""
    waiting = [job for index, job in enumerate(waiting) if index == 0 or job != waiting[index - 1]]
    releases = sorted(releases)
    ends, nodes = np.array([end for end, _ in releases]), np.array([count for _, count in releases], dtype=np.int64)
    sizes, durations = np.array([size for size, _ in waiting], dtype=np.int64), np.array([d for _, d in waiting])

    def starts_now_after(first: int, job: int) -> bool:
        picked = [*range(first), job]
        return reserve_in_order(0.0, free_now, ends, nodes, sizes[picked], durations[picked])[-1] <= 0.0

    fewest = next(m for m in range(len(waiting) + 1) if not any(starts_now_after(m, j) for j in range(m, len(waiting))))
    every = reserve_in_order(0.0, free_now, ends, nodes, sizes, durations)
    reserved = assert_reserved_up_to_the_last_start(0.0, free_now, ends, nodes, sizes, durations, BLOCK, every)
    assert int(np.count_nonzero(~np.isnan(reserved))) == fewest


@pytest.mark.parametrize("longest_first", [False, True])
def test_starts_now_on_a_saturated_profile_in_job_arrays_finds_the_starts_of_every_reservation(longest_first):
    """R-LIST-Q's regime on node ids in small: 200 running jobs, 1,500 waiting in job arrays, in queue order or
    longest first (LPT, where the last jobs to start are the short ones at the queue's end)."""
    for seed in range(20):
        rng = np.random.default_rng(seed)
        ends = np.sort(np.round(rng.uniform(0.0, 86_400.0, 200), 1))
        nodes = rng.integers(1, 4, 200)
        sizes, durations = [], []
        while len(sizes) < 1_500:
            copies = int(rng.integers(1, 20))
            sizes += [int(rng.choice([1, 1, 2, 8, 32]))] * copies
            durations += [float(rng.choice([0.0, 60.0, 900.0, 3_600.0, 43_200.0]))] * copies
        sizes, durations = np.array(sizes), np.array(durations)
        if longest_first:
            order = np.argsort(-durations, kind="stable")
            sizes, durations = sizes[order], durations[order]
        free_now = int(rng.integers(0, 24))
        every = reserve_in_order(0.0, free_now, ends, nodes, sizes, durations)
        assert starts_now(0.0, free_now, ends, nodes, sizes, durations).tolist() == np.flatnonzero(every <= 0.0).tolist()
        assert_reserved_up_to_the_last_start(0.0, free_now, ends, nodes, sizes, durations, BLOCK, every)


def test_a_job_larger_than_the_machine_ever_frees_never_starts_and_takes_nothing():
    found = reserve_in_order(0.0, 2, np.array([5.0]), np.array([2]), np.array([9, 3, 3]), np.array([10.0, 4.0, 4.0]))
    assert found.tolist() == [np.inf, 5.0, 9.0]


def test_reserve_in_order_refuses_arrays_that_do_not_pair_up_or_ends_out_of_order():
    with pytest.raises(ValueError, match="must be 1-d and match in pairs"):
        reserve_in_order(0.0, 1, np.array([1.0, 2.0]), np.array([1]), np.array([1]), np.array([1.0]))
    with pytest.raises(ValueError, match="ascending"):
        reserve_in_order(0.0, 1, np.array([2.0, 1.0]), np.array([1, 1]), np.array([1]), np.array([1.0]))
    with pytest.raises(ValueError, match="at least 2 breakpoints"):
        reserve_in_order(0.0, 1, np.array([1.0]), np.array([1]), np.array([1]), np.array([1.0]), block=1)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.sampled_from([1.0, 2.0, 2.0, 3.5, 9.0]), st.integers(1, 3)), max_size=60))
def test_release_columns_hold_the_running_jobs_releases_in_order_through_starts_and_stops(moves):
    columns = ReleaseColumns([(4.0, 2), (2.0, 1)])
    held = [(2.0, 1), (4.0, 2)]
    changes = 0
    for add, end, size in moves:
        if add or (end, size) not in held:
            columns.add(end, size)
            held.append((end, size))
        else:
            columns.remove(end, size)
            held.remove((end, size))
        changes += 1
        held.sort()
        assert columns.ends.tolist() == [end for end, _ in held]
        assert sorted(zip(columns.ends.tolist(), columns.sizes.tolist(), strict=True)) == held
        assert columns.changes == changes
    with pytest.raises(KeyError, match="no release of 7 nodes at 1.5"):
        columns.remove(1.5, 7)


class PlainConservative(ConservativePolicy):
    """Conservative backfilling through the Python profile on every platform (the reference)."""

    def plan(self, view):
        if self._pass is None or self._platform is not view.platform:
            self._pass, self._platform = (
                reservation_pass(view.platform, "predicted", self.placement, compiled=False),
                view.platform,
            )
        return super().plan(view)


def replay(jobs, policy, nodes, **keywords):
    model = SchedulingModel(make_workload(jobs, dims=(1, 1, nodes)), policy, ClusterPlatform(nodes, identities=False), **keywords)
    return model, model.run()


# job arrays: (submit, runtime, extra walltime, size, copies); several arrive at one instant, some end
# early (runtime < walltime), some at their walltime, some never fit beside the others
ARRAYS = st.lists(
    st.tuples(st.integers(0, 40), st.integers(0, 90), st.integers(0, 40), st.integers(1, 16), st.integers(1, 5)),
    min_size=3,
    max_size=20,
)


def expand(arrays) -> list[tuple]:
    jobs = []
    for submit, runtime, extra, size, copies in arrays:
        for _ in range(copies):
            jobs.append((len(jobs) + 1, submit, runtime, runtime + extra, size))
    return jobs


@contextmanager
def count_blocks(block: int):
    """Conservative's compiled pass with ``block`` breakpoints per block of its kept profile."""
    saved = reservations._COUNT_PROFILE
    reservations._COUNT_PROFILE = partial(CountProfile, block=block, rows=2)  # the arrays grow in kept passes too
    try:
        yield
    finally:
        reservations._COUNT_PROFILE = saved


@settings(max_examples=60, deadline=None)
@given(ARRAYS, st.sampled_from([(0, 0), (6, 3)]), st.sampled_from([None, "last"]), BLOCKS)
def test_conservative_on_a_count_cluster_starts_every_job_when_the_plain_pass_does(arrays, bounds, predictor, block):
    """The compiled pass with its kept profile (blocks that split as arrivals are placed on it), the queue's
    columns from the first waiting job on (or made at 6 and dropped below 3), with the user's estimates or the
    Last Model (running jobs outlive their prediction: their releases are re-keyed to the walltime), against the
    plain pass."""
    jobs = expand(arrays)
    keywords = {} if predictor is None else {"runtime_predictor": partial(make_runtime_predictor, predictor)}
    _, plain = replay(jobs, PlainConservative(), 16, **keywords)
    with columns_bounds(*bounds), count_blocks(block):
        model, fast = replay(jobs, ConservativePolicy(), 16, **keywords)
    assert trace(fast) == trace(plain)
    counts = model.policy._pass._counts
    assert counts is not None and counts.recomputed >= 1


def test_a_pass_after_arrivals_only_keeps_the_reservations_and_places_the_arrivals():
    """Job 1 holds 3 of 4 nodes until 100; job 2 (4 nodes, 50 s) arrives at 5 and is reserved at 100; jobs 3 and 4
    arrive alone at 10 and 20. Nothing ends between 0 and 20, so the passes at 5, 10 and 20 keep the profile: job 3
    (1 node, 50 s) starts at once, job 4 (1 node, 200 s) would delay job 2 and is reserved at 150, when job 2 ends."""
    jobs = [(1, 0, 100, 100, 3), (2, 5, 50, 50, 4), (3, 10, 50, 50, 1), (4, 20, 200, 200, 1)]
    model, fast = replay(jobs, ConservativePolicy(), 4)
    _, plain = replay(jobs, PlainConservative(), 4)
    assert trace(fast) == trace(plain)
    starts = {int(row.job_id): float(row.started_at) for row in fast.jobs.itertuples()}
    assert starts == {1: 0.0, 2: 100.0, 3: 10.0, 4: 150.0}
    assert model.policy._pass._counts.kept == 3  # the passes at 5, 10 and 20


def kept_after(change) -> bool:
    """Whether a second pass keeps the first's profile after ``change`` (releases, queue) -> (now, free, jobs).

    First pass at 0: 4 nodes free, one running job (3 nodes) expected to end at 100; waiting: job a (4 nodes, 50 s,
    reserved at 100) and b (1 node, 500 s, reserved at 150). The second pass comes at 10 with job c arrived."""
    releases = ReleaseColumns([(100.0, 3)])
    profile = CountProfile()
    head_at, starting = profile.plan(0.0, 1, releases, ["a", "b"], np.array([4, 1]), np.array([50.0, 500.0]))
    assert (head_at, starting) == (100.0, [])
    now, free, jobs = change(releases)
    before = profile.kept
    profile.plan(now, free, releases, jobs, np.array([4, 1, 1][: len(jobs)]), np.array([50.0, 500.0, 5.0][: len(jobs)]))
    return profile.kept == before + 1


def test_a_pass_keeps_the_last_profile_only_when_nothing_but_arrivals_happened():
    assert kept_after(lambda releases: (10.0, 1, ["a", "b", "c"]))
    # a release in or out since the last pass (an end, a start that pass did not make)
    assert not kept_after(lambda releases: (releases.remove(100.0, 3), releases.add(100.0, 3), (10.0, 1, ["a", "b", "c"]))[-1])
    # a release due (its job outlived its prediction): it counts just after now, which moves with now
    assert not kept_after(lambda releases: (100.0, 1, ["a", "b", "c"]))
    # a breakpoint between the two passes, or another free count now
    assert not kept_after(lambda releases: (120.0, 1, ["a", "b", "c"]))
    assert not kept_after(lambda releases: (10.0, 2, ["a", "b", "c"]))
    # the jobs left waiting are not the queue's first ones any more
    assert not kept_after(lambda releases: (10.0, 1, ["c", "a", "b"]))
    assert not kept_after(lambda releases: (10.0, 1, ["a", "c", "b"]))
    assert not kept_after(lambda releases: (10.0, 1, ["a"]))


def test_without_numba_the_plain_profile_gives_the_same_schedule(monkeypatch):
    jobs = expand([(0, 30, 5, 3, 2), (1, 10, 50, 8, 1), (2, 5, 0, 1, 4), (2, 60, 10, 2, 3)])
    _, fast = replay(jobs, ConservativePolicy(), 8)
    monkeypatch.setattr(reservations, "_COUNT_PROFILE", None)
    model, plain = replay(jobs, ConservativePolicy(), 8)
    assert isinstance(model.policy._pass, reservations._ProfilePass)
    assert trace(fast) == trace(plain)


def starts_digest(record) -> str:
    jobs = record.jobs.sort_values("job_id")
    text = "\n".join(f"{int(r.job_id)} {float(r.started_at)!r} {float(r.finished_at)!r}" for r in jobs.itertuples())
    return hashlib.sha256(text.encode()).hexdigest()


needs_ricc = pytest.mark.skipif(not RICC.exists(), reason=f"needs {RICC}")


@needs_ricc
def test_ricc_first_20000_jobs_under_conservative_start_as_the_plain_profile_started_them():
    """RICC-2010-2's first 20,000 jobs on its 8,192 processors (queues of up to 2,494 jobs, job arrays, bursts):
    the digest pinned from the plain profile (the Python profile pass at 702c744, 107 s there;
    1 s compiled). Both kinds of pass ran."""
    from torus_sim.experiments.runner import Scenario, build_model

    scenario = Scenario(workload=str(RICC), max_jobs=20_000, failures="none", platform="cluster", policy="conservative")
    model = build_model(scenario, {}, record=True)
    record = model.run()
    assert starts_digest(record) == "3f8c0d168005f27f504651a6c1f60b8174893ce26616c0370318b68238a30fef"
    counts = model.policy._pass._counts
    assert counts.kept > 1000 and counts.recomputed > 1000


@pytest.mark.skipif(not CTC.exists(), reason=f"needs {CTC}")
def test_ctc_with_the_last_model_under_conservative_starts_as_the_plain_pass_does():
    """CTC-SP2's first 3,000 jobs on 430 processors with the Last Model (predictions that run out: re-keyed
    releases; early and late ends) through the runner, compiled against plain: the job and attempt records and
    the pass table with its fairness columns (the head's reservation at every pass) are identical."""
    from torus_sim.experiments.runner import Scenario, build_model

    scenario = Scenario(
        workload=str(CTC), max_jobs=3000, failures="none", platform="cluster", policy="conservative", runtime_predictor="last"
    )
    fast = build_model(scenario, {}, record=True)
    fast_record = fast.run()
    plain = build_model(scenario, {}, record=True)
    plain.policy.__class__ = PlainConservative
    plain_record = plain.run()
    assert fast_record.jobs.equals(plain_record.jobs) and fast_record.attempts.equals(plain_record.attempts)
    passes = fast.table("capacity")
    assert "previous_reservation_at" in passes and passes.equals(plain.table("capacity"))
    assert fast.policy._pass._counts.recomputed > 0 and fast.policy._pass._counts.kept > 0


@pytest.mark.parametrize("seed", range(12))
def test_kept_reservations_start_what_a_fresh_pass_starts_through_ends_and_arrivals_among_them(seed):
    """R-LIST-Q's kept count profile against starts_now on a fresh profile, pass for pass: jobs arrive at their
    priority (among the reserved ones too), the jobs reserved now start, each runs exactly its reserved duration
    and a pass follows every end; now and then a node fails for a while (the caller says the profile no longer
    stands). The same starts at every pass, and some passes keep their reservations."""
    rng = np.random.default_rng(seed)
    nodes, block = int(rng.integers(6, 13)), int(rng.choice([2, 3, 4, BLOCK]))
    events = zip(
        rng.choice([0.0, 0.0, 0.0, 0.5, 1.0, 4.0], 300),
        rng.choice([1, 1, 2, 3, 6, 9], 300),
        rng.choice([0.5, 1.0, 2.0, 3.0, 8.0, 20.0], 300),
        rng.integers(0, 31, 300),
        strict=True,
    )
    kept = KeptReservations(block=block, rows=2)
    now, rank = 0.0, 0
    queue: list[tuple[float, int, int, float]] = []  # (key, rank, size, duration), in priority order
    running: dict[int, tuple[float, int]] = {}  # rank -> (end, size)
    down: list[tuple[float, int]] = []  # (repair, nodes)
    left = None
    passes = 0
    for gap, size, duration, failure in events:
        now += gap  # the next pass: the running jobs that ended by now are gone
        if failure % 7 == 0:  # a failure: a node down for 4 s (an idle one, when there is one)
            down.append((now + 4.0, 1))
        for done in [r for r, (end, _) in running.items() if end <= now]:
            del running[done]
        down = [(repair, count) for repair, count in down if repair > now]
        queue.append((-duration, rank, size, duration))  # LPT, as R-LIST's default rule: short jobs last
        queue.sort()
        rank += 1
        busy = sum(count for _, count in running.values()) + sum(count for _, count in down)
        free_now = max(nodes - busy, 0)
        if nodes - busy < 0:
            down.pop()
            continue
        releases = sorted([*running.values(), *down])
        ends = np.array([end for end, _ in releases])
        sizes_released = np.array([count for _, count in releases], dtype=np.int64)
        ranks = np.array([job[1] for job in queue], dtype=np.int64)
        sizes = np.array([job[2] for job in queue], dtype=np.int64)
        durations = np.array([job[3] for job in queue])
        state = ({r: end for r, (end, _) in running.items()}, tuple(down))
        stands = (
            left is not None
            and state[1] == tuple(d for d in left[1] if d[0] > now)
            and state[0] == {r: end for r, end in left[0].items() if end > now}
        )
        fresh = starts_now(now, free_now, ends, sizes_released, sizes, durations, block)
        found = kept.plan(now, free_now, lambda ends=ends, out=sizes_released: (ends, out), ranks, sizes, durations, stands)
        assert found.tolist() == fresh.tolist()
        passes += 1
        for position in sorted(found.tolist(), reverse=True):
            _, started, size_started, length = queue.pop(position)
            running[started] = (now + length, size_started)
        left = ({r: end for r, (end, _) in running.items()}, tuple(down))
    assert kept.kept + kept.recomputed == passes and kept.kept > passes // 4
