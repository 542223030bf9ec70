"""Rigid and moldable policies on the flat platform: whole traces of small hand-made batches."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from torus_sim.core.errors import ConfigurationError, SimulationError
from torus_sim.experiments.batch import run_moldable, run_rigid
from torus_sim.inputs.workload.batch import RigidJobSet
from torus_sim.inputs.workload.speedup import AmdahlModel, ArbitraryModel, MonotonicModel, RooflineModel
from torus_sim.machine.platforms import ClusterPlatform, Platform, TorusPlatform
from torus_sim.policies.allotment import AllotmentTables, lpa_allocation, minarea_allocation, mintime_allocation, mt_allotment
from torus_sim.policies.rigid import AvailabilityProfile

# P = 3; LPT order A (10 s, 2 procs), B (9 s, 3 procs), C (8 s, 1 proc); C fails once.
EASY_JOBS = RigidJobSet(np.array([10.0, 9.0, 8.0]), np.array([2, 3, 1]), ("A", "B", "C"))


def trace(result) -> list[tuple]:
    table = result.attempt_table.sort_values(["started_at", "job_id"])
    return [
        (int(row.job_id), int(row.attempt), row.started_at, row.ended_at, row.outcome == "silent_error")
        for row in table.itertuples()
    ]


def test_both_platforms_speak_the_platform_protocol(bgl_table):
    assert isinstance(ClusterPlatform(8), Platform) and isinstance(ClusterPlatform(8, identities=False), Platform)
    torus = TorusPlatform(table=bgl_table)
    assert isinstance(torus, Platform)
    partition = torus.find(32)
    torus.allocate(partition, job_id=1)
    assert torus.free_count() == 96 and torus.find(128) is None
    flat = ClusterPlatform(8, identities=False)
    assert flat.find(9) is None and flat.find(8) == 8
    flat.allocate(5, job_id=1)
    with pytest.raises(SimulationError):
        flat.allocate(4, job_id=2)
    cluster = ClusterPlatform(8)
    assert cluster.find(9) is None and cluster.find(3).tolist() == [0, 1, 2]
    cluster.allocate(cluster.find(5), job_id=1)
    assert cluster.free_count() == 3 and cluster.job_on(4) == 1 and cluster.job_on(5) == -1
    with pytest.raises(SimulationError):
        cluster.allocate(cluster.free_nodes()[:1] - 1, job_id=2)


def test_greedy_restarts_the_failed_job_at_once_in_the_free_processor():
    result = run_rigid(EASY_JOBS, 3, [0, 0, 1], "R-LIST-0", "LPT", record_attempts=True)
    # A and C start at 0; C fails at 8 and restarts in its own processor; B waits for 3 free processors until 16.
    assert trace(result) == [
        (0, 1, 0.0, 10.0, False),
        (2, 1, 0.0, 8.0, True),
        (2, 2, 8.0, 16.0, False),
        (1, 1, 16.0, 25.0, False),
    ]
    assert result.makespan == 25.0 and result.attempts == 4


@pytest.mark.parametrize("heuristic", ["R-LIST-1", "R-LIST-Q"])
def test_a_reservation_for_the_head_stops_the_failed_job_from_backfilling(heuristic):
    result = run_rigid(EASY_JOBS, 3, [0, 0, 1], heuristic, "LPT", record_attempts=True)
    # At 8, B is reserved at 10 (when A frees 2 processors); C's restart over [8, 16) would delay it.
    assert trace(result) == [
        (0, 1, 0.0, 10.0, False),
        (2, 1, 0.0, 8.0, True),
        (1, 1, 10.0, 19.0, False),
        (2, 2, 19.0, 27.0, False),
    ]


def test_shelffill_reruns_a_failed_job_inside_its_shelf_and_shelf_waits_for_the_next():
    jobs = RigidJobSet(np.array([10.0, 4.0]), np.array([2, 1]))
    shelf = run_rigid(jobs, 3, [0, 1], "R-SHELF-B", record_attempts=True)
    fill = run_rigid(jobs, 3, [0, 1], "R-SHELFFILL-B", record_attempts=True)
    assert trace(shelf) == [(0, 1, 0.0, 10.0, False), (1, 1, 0.0, 4.0, True), (1, 2, 10.0, 14.0, False)]
    assert trace(fill) == [(0, 1, 0.0, 10.0, False), (1, 1, 0.0, 4.0, True), (1, 2, 4.0, 8.0, False)]


def test_next_fit_closes_the_shelf_at_the_first_misfit_and_first_fit_does_not():
    jobs = RigidJobSet(np.array([10.0, 8.0, 4.0]), np.array([2, 2, 1]))
    next_fit = trace(run_rigid(jobs, 3, [0, 0, 0], "R-SHELF-NB", record_attempts=True))
    first_fit = trace(run_rigid(jobs, 3, [0, 0, 0], "R-SHELF-B", record_attempts=True))
    assert next_fit == [(0, 1, 0.0, 10.0, False), (1, 1, 10.0, 18.0, False), (2, 1, 10.0, 14.0, False)]
    assert first_fit == [(0, 1, 0.0, 10.0, False), (2, 1, 0.0, 4.0, False), (1, 1, 10.0, 18.0, False)]


def test_verification_time_lengthens_every_attempt():
    result = run_rigid(EASY_JOBS, 3, [0, 0, 1], "R-LIST-0", verification_time=1.0, record_attempts=True)
    assert trace(result)[:2] == [(0, 1, 0.0, 11.0, False), (2, 1, 0.0, 9.0, True)]


@pytest.mark.parametrize("rule", ["LPT", "SPT", "HPA", "LPA", "LA", "SA", "RANDOM"])
def test_every_priority_rule_runs_every_attempt(rule):
    rng = np.random.default_rng(3)
    jobs = RigidJobSet(rng.uniform(1, 10, 12), rng.integers(1, 5, 12))
    failures = rng.integers(0, 3, 12)
    result = run_rigid(jobs, 6, failures, "R-LIST-0", rule, seed=1, record_attempts=True)
    assert result.attempts == len(jobs) + failures.sum()
    assert result.attempt_table.groupby("job_id").size().tolist() == (failures + 1).tolist()


def test_random_priority_is_seeded():
    rng = np.random.default_rng(4)
    jobs = RigidJobSet(rng.uniform(1, 10, 20), rng.integers(1, 5, 20))
    failures = rng.integers(0, 2, 20)
    makespans = {seed: run_rigid(jobs, 6, failures, "R-LIST-0", "RANDOM", seed=seed).makespan for seed in (1, 1, 2, 3, 4)}
    assert makespans[1] == run_rigid(jobs, 6, failures, "R-LIST-0", "RANDOM", seed=1).makespan
    assert len(set(makespans.values())) > 1


def test_availability_profile_finds_the_earliest_hole_and_cuts_reservations():
    profile = AvailabilityProfile(0.0, 1, [(10.0, 2), (5.0, 1)])
    assert (profile.dates, profile.free) == ([0.0, 5.0, 10.0], [1, 2, 4])
    assert profile.earliest(2, 3.0) == (5.0, None) and profile.earliest(4, 1.0) == (10.0, None)
    assert profile.earliest(5, 1.0)[0] == float("inf")  # never that many free: no reservation
    profile.reserve(5.0, 7.0, 2)
    assert (profile.dates, profile.free) == ([0.0, 5.0, 10.0, 12.0], [1, 0, 2, 4])
    assert not profile.fits(0.0, 1, 6.0) and profile.fits(0.0, 1, 5.0)


@given(
    st.integers(0, 6),
    st.lists(st.tuples(st.integers(1, 30), st.integers(1, 4)), max_size=6),
    st.lists(st.tuples(st.integers(0, 40), st.integers(1, 20), st.integers(1, 6)), max_size=6),
    st.integers(1, 12),
    st.integers(1, 25),
)
@settings(max_examples=150, deadline=None)
def test_the_earliest_start_on_counts_is_the_first_breakpoint_that_fits(free, releases, reservations, need, duration):
    """One scan of the steps gives what trying every breakpoint with fits() gives."""
    profile = AvailabilityProfile(0.0, free, [(float(at), used) for at, used in releases])
    for at, length, used in reservations:
        if profile.fits(float(at), used, float(length)):
            profile.reserve(float(at), float(length), used)
    plain = next((at for at in profile.dates if profile.fits(at, need, float(duration))), float("inf"))
    assert profile.earliest(need, float(duration)) == (plain, None)


def test_a_pass_stops_where_no_later_job_could_start_now():
    from torus_sim.policies.availability import StartsLeft

    # 2 nodes free now, 2 more at t = 5; jobs in priority order: (size, duration)
    profile = AvailabilityProfile(0.0, 2, [(5.0, 2)])
    jobs = [(4, 10.0), (1, 3.0), (2, 8.0), (1, 9.0), (1, 2.0), (3, 1.0)]
    left = StartsLeft(profile, [size for size, _ in jobs], [duration for _, duration in jobs])
    assert left.alive == 4  # size 3 and 4 are not free now: only the three 1s and the 2
    answers = []
    for size, duration in jobs[:5]:
        start_at, _ = profile.earliest(size, duration)
        profile.reserve(start_at, duration, size)
        answers.append((start_at, left.passed(size, duration, start_at <= 0.0)))
    # the 4 waits for t = 5; a 1 starts (1 node left: the 2 is out); the 2 waits; the 1 of 9 s waits
    # (the 4 takes every node at t = 5), leaving only 1s shorter than 9 s in; the 1 of 2 s starts and
    # fills the first step: no later job could start now, the pass stops
    assert answers == [(5.0, True), (0.0, True), (15.0, True), (15.0, True), (0.0, False)]
    assert left.alive == 0
    assert profile.earliest(3, 1.0)[0] > 0.0  # the job the stop skips would not have started now


def _pass_with_stops(profile, jobs, now=0.0):
    """Reserve ``jobs`` ((size, duration), priority order) in turn; after StartsLeft says stop, whether any later one started."""
    from torus_sim.policies.availability import StartsLeft

    left = StartsLeft(profile, [size for size, _ in jobs], [duration for _, duration in jobs])
    stopped = left.alive == 0
    for size, duration in jobs:
        start_at, where = profile.earliest(size, duration)
        profile.reserve(start_at, duration, size, where)
        if stopped and start_at <= now:
            return True
        stopped = stopped or not left.passed(size, duration, start_at <= now, start_at)
    return False


@given(
    st.integers(0, 8),
    st.lists(st.tuples(st.sampled_from([0.5, 1.0, 2.0, 3.0, 5.0, 8.0]), st.integers(1, 3)), max_size=6),
    st.lists(st.tuples(st.integers(1, 6), st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.0, 4.0, 7.0, 20.0])), min_size=1, max_size=25),
)
@settings(max_examples=300, deadline=None)
def test_no_job_after_a_pass_stops_would_have_started_now_on_counts(free, releases, jobs):
    """StartsLeft's rules (a job that waits, a job longer than its size's free span from now) never skip a start."""
    assert not _pass_with_stops(AvailabilityProfile(0.0, free, releases), jobs)


def test_no_job_after_a_pass_stops_would_have_started_now_on_the_torus(bgl_table):
    from torus_sim.policies.availability import PartitionProfile

    rng = np.random.default_rng(40)
    sizes = sorted({int(size) for size in bgl_table.sizes})[:8]
    for _ in range(60):
        busy = rng.random(bgl_table.torus.size) < rng.uniform(0.2, 0.9)
        releases = [(float(rng.choice([1.0, 2.0, 4.0, 9.0])), 1 << int(node)) for node in np.flatnonzero(busy)]
        jobs = [(int(rng.choice(sizes)), float(rng.choice([0.0, 0.5, 1.0, 3.0, 6.0, 30.0]))) for _ in range(30)]
        assert not _pass_with_stops(PartitionProfile(0.0, bgl_table, busy, releases), jobs)


def test_rigid_input_errors_are_clear():
    with pytest.raises(ConfigurationError, match="needs 5 processors"):
        run_rigid(RigidJobSet(np.array([1.0]), np.array([5])), 4, [0])
    with pytest.raises(ConfigurationError, match="positive"):
        RigidJobSet(np.array([0.0]), np.array([1]))
    with pytest.raises(ConfigurationError, match="one count per job"):
        run_rigid(EASY_JOBS, 3, [0, 0])
    with pytest.raises(ConfigurationError, match=">= 0"):
        run_rigid(EASY_JOBS, 3, [-1, 0, 0])
    with pytest.raises(ConfigurationError, match="unknown rigid heuristic"):
        run_rigid(EASY_JOBS, 3, [0, 0, 0], "R-LIST-2")


def test_local_allocations_follow_their_definitions():
    times = RooflineModel([100.0, 60.0], [4, 2]).times(8)
    assert mintime_allocation(times).tolist() == [4, 2]  # the smallest p reaching w / p̄
    assert minarea_allocation(times).tolist() == [1, 1]
    assert lpa_allocation(times).tolist() == [4, 2]  # α = β = 1 (MOLDABLE Theorem 1)
    amdahl = AmdahlModel([1000.0], [0.01]).times(1000)
    chosen = lpa_allocation(amdahl)[0]
    area, time = chosen * amdahl[0, chosen - 1], amdahl[0, chosen - 1]
    assert area <= 2 * amdahl[0, 0] and time <= 2 * amdahl[0].min()  # Theorem 3's α = β = 2 allocation exists


def test_monotonic_tables_are_validated_and_arbitrary_ones_are_not():
    with pytest.raises(ConfigurationError, match=r"job 0 is not monotonic: t\(3\)"):
        MonotonicModel([[10.0, 6.0, 7.0]])
    with pytest.raises(ConfigurationError, match="area"):
        MonotonicModel([[10.0, 4.0]])
    assert ArbitraryModel([[10.0, 4.0, 7.0]]).times(3).tolist() == [[10.0, 4.0, 7.0]]
    with pytest.raises(ConfigurationError, match="p <= 3"):
        ArbitraryModel([[10.0, 4.0, 7.0]]).times(4)


def test_mt_allotment_chains_are_within_one_plus_epsilon_of_the_best_allocation():
    times = ArbitraryModel([[12.0, 7.0, 5.0, 4.5], [9.0, 5.0, 4.0, 2.0]]).times(4)
    areas = times * np.arange(1, 5)
    best = np.inf
    for choice in np.ndindex(4, 4, 4, 4):  # two chains of g = 2 attempts, every allocation
        chains = [times[0, choice[0]] + times[0, choice[1]], times[1, choice[2]] + times[1, choice[3]]]
        area = areas[0, choice[0]] + areas[0, choice[1]] + areas[1, choice[2]] + areas[1, choice[3]]
        best = min(best, max(max(chains), area / 4))
    allocation = mt_allotment(AllotmentTables(times), [0, 1], 2, 4, epsilon=0.3)
    rows = np.arange(2)[:, None]
    found = max(times[rows, allocation - 1].sum(axis=1).max(), areas[rows, allocation - 1].sum() / 4)
    assert best <= found <= 1.3 * best * (1 + 1e-6)


def test_batch_list_runs_batches_of_doubling_attempts():
    times = AmdahlModel([400.0, 300.0, 200.0], [0.1, 0.2, 0.05]).times(4)
    result = run_moldable(times, [3, 0, 1], "BATCH", record_attempts=True)
    table = result.attempt_table
    # job 0 fails 3 times: 1 attempt in batch 1, 2 in batch 2, its 4th (successful) one in batch 3
    assert table.groupby("job_id").size().tolist() == [4, 1, 2]
    batch_ends = sorted(table[table.job_id == 0].started_at)
    assert batch_ends[1] >= table[(table.attempt == 1)].ended_at.max()  # batch 2 waits for batch 1 to end
    assert result.makespan == table.ended_at.max()


def test_doubling_and_attempt_by_attempt_chain_programs_find_the_same_least_area():
    from torus_sim.policies.allotment import _chains_within_doubling, _chains_within_linear

    rng = np.random.default_rng(11)
    model = AmdahlModel(rng.uniform(100, 5000, 12), rng.uniform(0, 0.2, 12))
    tables = AllotmentTables(model.times(64))
    jobs = np.arange(12)
    for attempts in (2, 4, 8, 16):
        for bound in (2000.0, 8000.0, 40000.0):
            area_doubling, chains_doubling = _chains_within_doubling(tables, jobs, attempts, bound, 0.3)
            area_linear, _ = _chains_within_linear(tables, jobs, attempts, bound, 0.3)
            assert area_doubling == pytest.approx(area_linear, rel=1e-12)
            if chains_doubling is not None:
                times = tables.times[jobs[:, None], chains_doubling - 1]
                assert chains_doubling.shape == (12, attempts)
                assert np.all(times.sum(axis=1) <= 1.3 * bound * (1 + 1e-12))  # rounded chains fit in (1 + ε) X


def test_time_tables_are_read_and_bad_lines_named(tmp_path):
    from torus_sim.core.errors import JobSetFormatError
    from torus_sim.inputs.workload.speedup import read_time_table

    path = tmp_path / "times.csv"
    path.write_text("# t(1..4) per job\n10, 6, 4.5, 4\n8 5 4 3.5\n")
    model = read_time_table(path, monotonic=True)
    assert isinstance(model, MonotonicModel) and model.times(4).shape == (2, 4)
    for text, line, reason in [
        ("10, 6, 4.5, 4\n8 5 4\n", 2, "expected 4 times"),
        ("10, x\n", 1, "numbers"),
        ("10, -6\n", 1, "positive"),
        ("10, 6, 4.5, 4\n8, 5, 6, 3\n", 2, "not monotonic"),
    ]:
        path.write_text(text)
        with pytest.raises(JobSetFormatError, match=reason) as caught:
            read_time_table(path, monotonic=True)
        assert str(caught.value).startswith(f"{path}:{line}:")
    path.write_text("10, 6, 7, 4\n")
    assert read_time_table(path).times(4).tolist() == [[10.0, 6.0, 7.0, 4.0]]  # arbitrary: no check


@pytest.mark.parametrize("policy", ["R-LIST-1", "R-LIST-Q", "conservative"])
@pytest.mark.parametrize("platform", [["--platform", "torus"], ["--platform", "cluster", "--nodes", "128"]])
def test_jobs_of_run_time_zero_late_in_a_log_are_not_given_the_same_nodes(tmp_path, policy, platform):
    """SDSC-SP2's jobs 47037 and 47044 (run time 0, one processor) waited together at t = 30,044,138 s, where
    1e-9 s adds nothing to a date: R-LIST-1 gave both the same supernode and the engine refused the second.

    Two jobs of 64 fill the 128 nodes (or supernodes); three of run time 0 (walltime 0:
    conservative predicts 0 s too) wait and start in one pass when the first ends, at 30,005,000 s."""
    from torus_sim.interfaces.cli import main

    start = 30_000_000
    rows = [f"{i + 1} {start + i} -1 5000 64 -1 -1 64 6000 -1 1 1 1 -1 -1 -1 -1 -1" for i in range(2)]
    rows += [f"{i + 1} {start + i} -1 0 1 -1 -1 1 0 -1 1 1 1 -1 -1 -1 -1 -1" for i in range(2, 5)]
    log = tmp_path / "zero.swf"
    log.write_text("; MaxProcs: 128\n" + "\n".join(rows) + "\n")
    out = tmp_path / "out"
    assert main(["run", *platform, "--workload", str(log), "--failures", "none", "--policy", policy, "--out", str(out)]) == 0
    header, *lines = (out / "jobs.csv").read_text().splitlines()
    columns = header.split(",")
    starts = {int(line.split(",")[0]): float(line.split(",")[columns.index("started_at")]) for line in lines}
    assert starts == {1: start, 2: start + 1, 3: start + 5000, 4: start + 5000, 5: start + 5000}


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
def test_the_torus_profile_skips_only_steps_that_hold_no_partition(bgl_table, compiled):
    """The per-size flags (kept across a pass's reservations and splits) answer what asking every step answers.

    Both searches: the compiled one on the step arrays (partition_steps: the search, the MFP heuristic's
    choice and the reservations' splits, all compiled) and the Python one (numba missing), each beside a
    Python twin given the same reservations: the same answers, the same steps.
    """
    from benchmarks.reservations import plain_search
    from torus_sim.policies.availability import PartitionProfile

    rng = np.random.default_rng(45)
    sizes = sorted({int(size) for size in bgl_table.sizes})[:10]
    asked = skipped = 0
    for _ in range(40):
        busy = rng.random(bgl_table.torus.size) < rng.uniform(0.1, 0.8)
        ends = rng.choice([0.5, 1.0, 2.0, 4.0, 9.0, 20.0], size=busy.size)
        releases = [(float(ends[node]), 1 << int(node)) for node in np.flatnonzero(busy)]
        profile = PartitionProfile(0.0, bgl_table, busy, releases)
        twin = PartitionProfile(0.0, bgl_table, busy, releases)
        twin._steps = None
        if not compiled:
            profile._steps = None
        assert compiled == (profile._steps is not None)
        for _ in range(40):
            size, duration = int(rng.choice(sizes)), float(rng.choice([0.0, 0.5, 1.0, 3.0, 6.0, 30.0]))
            floor = float(rng.choice(twin.dates))
            answer = profile._search(size, duration, floor)
            assert answer == plain_search(twin, size, duration, floor)
            assert profile.fits_now(size, duration) == twin.fits_now(size, duration)
            assert profile.open_for(size) == twin.open_for(size)
            asked += 1
            skipped += answer[0] > floor
            profile.reserve(answer[0], duration, size, answer[1])
            twin.reserve(answer[0], duration, size, answer[1])
        assert (profile.dates, profile.occupied) == (twin.dates, twin.occupied)
        if compiled:  # the lists read back from the arrays
            steps = profile._steps
            assert steps.dates[: steps.count].tolist() == profile.dates
    assert skipped > asked // 20  # the searches did pass over steps (not all answered at their floor)


@pytest.mark.parametrize("dims", [(4, 4, 8), (2, 3, 4, 4)])
def test_the_compiled_pass_reserves_and_stops_where_the_python_pass_does(bgl_table, dims):
    """``reserve_in_order`` compiled (StepArrays.plan) and in Python (earliest, reserve, StartsLeft): the same starts,
    partitions and stop, pass after pass on one kept profile (the floors per size carried over), and the same steps."""
    from torus_sim.machine.partition_table import PartitionTable
    from torus_sim.machine.topology import Torus
    from torus_sim.policies.availability import PartitionProfile

    table = bgl_table if dims == (4, 4, 8) else PartitionTable(Torus(dims))
    rng = np.random.default_rng(61)
    sizes = sorted({int(size) for size in table.sizes})
    stopped_early = 0
    for _ in range(30):
        busy = rng.random(table.torus.size) < rng.uniform(0.0, 0.7)
        ends = rng.choice([5.0, 60.0, 600.0, 3600.0], size=busy.size)
        releases = [(float(ends[node]), 1 << int(node)) for node in np.flatnonzero(busy)]
        compiled = PartitionProfile(0.0, table, busy, releases)
        python = PartitionProfile(0.0, table, busy, releases)
        python._steps = None
        assert compiled._steps is not None
        for _ in range(3):  # passes on the same profile: only jobs arrive
            jobs = int(rng.integers(1, 60))
            job_sizes = [int(size) for size in rng.choice(sizes[: max(3, len(sizes) // 2)], size=jobs)]
            durations = [float(duration) for duration in rng.choice([1e-9, 1.0, 30.0, 300.0, 1800.0, 7200.0], size=jobs)]
            answer = compiled.reserve_in_order(job_sizes, durations)
            assert answer == python.reserve_in_order(job_sizes, durations)
            stopped_early += answer[2] < jobs
        assert (compiled.dates, compiled.occupied) == (python.dates, python.occupied)
    assert stopped_early > 5  # StartsLeft did stop passes before their last job


def test_the_compiled_mfp_choice_is_the_partition_tables(bgl_table):
    """The step arrays' MFP choice (compiled) picks the partition the table's ``mfp_choice`` picks, on random occupancies."""
    from torus_sim.policies.partition_steps import StepArrays
    from torus_sim.policies.placement import MFP

    rng = np.random.default_rng(8)
    steps = StepArrays(bgl_table, [0.0], np.zeros((1, bgl_table.words), dtype=np.uint64))
    sizes = sorted({int(size) for size in bgl_table.sizes})
    chosen = 0
    for _ in range(300):
        busy = rng.random(bgl_table.torus.size) < rng.uniform(0.0, 0.9)
        words = bgl_table.pack(busy)
        for size in rng.choice(sizes, size=4).tolist():
            candidates = bgl_table.free_ids_of_size(words, size)
            expected = MFP.choose(bgl_table, None, candidates, words.copy(), 0.0) if len(candidates) else -1
            assert steps.mfp_choice(size, words) == expected
            assert steps.free_ids(size, words).tolist() == candidates.tolist()
            chosen += len(candidates) > 1
    assert chosen > 200  # most questions had a choice to make
    steps._memo = (np.zeros((2, bgl_table.words + 1), dtype=np.uint64), np.zeros(2, dtype=np.int64))  # two slots: evictions
    for _ in range(100):
        words = bgl_table.pack(rng.random(bgl_table.torus.size) < rng.uniform(0.0, 0.9))
        for size in rng.choice(sizes, size=3).tolist() * 2:  # each asked twice: once afresh, once perhaps remembered
            candidates = bgl_table.free_ids_of_size(words, size)
            expected = MFP.choose(bgl_table, None, candidates, words.copy(), 0.0) if len(candidates) else -1
            assert steps.mfp_choice(size, words) == expected


@pytest.mark.parametrize("slots", [2, 1024])
def test_the_compiled_free_partition_memo_answers_as_the_scan(bgl_table, slots):
    """Whether a partition of a size is free under an occupancy, through the compiled memo (two slots: evictions;
    1,024: hits), is what the partition table and the plain scan say, asked three times over."""
    from torus_sim.policies.partition_steps import _any_free, _any_free_remembered

    rng = np.random.default_rng(9)
    masks = np.ascontiguousarray(bgl_table.masks, dtype=np.uint64)
    keys = np.zeros((slots, bgl_table.words + 1), dtype=np.uint64)
    answers = np.zeros(slots, dtype=np.int8)
    sizes = sorted({int(size) for size in bgl_table.sizes})
    occupancies = [bgl_table.pack(rng.random(bgl_table.torus.size) < rng.uniform(0.0, 1.0)) for _ in range(40)]
    seen = {True: 0, False: 0}
    for _ in range(3):
        for words in occupancies:
            for size in sizes:
                ids = bgl_table.ids_of_size(size)
                expected = bool(len(bgl_table.free_ids_of_size(words, size)))
                assert _any_free(masks, ids.start, ids.stop, words) == expected
                assert _any_free_remembered(keys, answers, masks, ids.start, ids.stop, words) == expected
                seen[expected] += 1
    assert seen[True] > 100 and seen[False] > 100


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from([0.0, 0.5, 1.0, 2.5, 4.0, 10.0]),
            st.one_of(st.sampled_from([0.0, 1.0, 3.0, 7.0, 20.0, float("inf")]), st.floats(0, 50)),
        ),
        max_size=40,
    ),
    st.sampled_from([0.0, 0.5, 1.0, 3.0, 10.0, 30.0]),
)
def test_the_start_floors_give_the_latest_start_of_any_shorter_answer(answers, asked):
    """The staircase answers what scanning every (duration, start) the profile gave answers (the scan it replaced)."""
    from torus_sim.policies.availability import StartFloors

    floors = StartFloors()
    for count, (duration, start_at) in enumerate(answers):
        floors.add(duration, start_at)
        for question in (asked, duration):
            eligible = [start for shorter, start in answers[: count + 1] if shorter <= question]
            assert floors.floor(question) == (max(eligible) if eligible else -float("inf"))
    assert floors.durations == sorted(set(floors.durations))
    assert floors.starts == sorted(set(floors.starts))


@given(
    st.integers(3, 9),
    st.lists(
        st.tuples(st.sampled_from([0.5, 1.0, 2.5, 4.0, 10.0]), st.integers(1, 6), st.integers(0, 2)), min_size=1, max_size=14
    ),
    st.sampled_from([0.0, 0.5, 2.0]),
    st.sampled_from(["LPT", "SPT", "LA"]),
)
@settings(max_examples=60, deadline=None)
def test_r_list_q_on_the_compiled_count_profile_is_the_plain_profiles_attempt_for_attempt(processors, rows, verification, rule):
    """R-LIST with m = |Q| reserves on count_reservations' compiled profile: every attempt's start and end are those
    of the plain Python profile (silent errors, verification time, equal run times)."""
    import torus_sim.policies.reservations as reservations

    jobs = RigidJobSet(np.array([t for t, _, _ in rows]), np.array([min(p, processors) for _, p, _ in rows]))
    failures = [f for _, _, f in rows]
    compiled = trace(run_rigid(jobs, processors, failures, "R-LIST-Q", rule, verification, record_attempts=True))
    kept = reservations._COUNT_PROFILE
    reservations._COUNT_PROFILE = None  # the plain profile (as where numba is missing)
    try:
        plain = trace(run_rigid(jobs, processors, failures, "R-LIST-Q", rule, verification, record_attempts=True))
    finally:
        reservations._COUNT_PROFILE = kept
    assert compiled == plain
