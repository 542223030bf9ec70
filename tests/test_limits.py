"""Per-user limits (issue 77 §1): a job over its user's running jobs or nodes waits held, out of the policy's queue."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from torus_sim.core.errors import ConfigurationError
from torus_sim.core.job import Job
from torus_sim.engine.limits import UserLimits
from torus_sim.engine.model import SchedulingModel
from torus_sim.experiments.runner import Scenario, build_model
from torus_sim.experiments.sweep import run_key
from torus_sim.inputs.workload.jobs import Workload
from torus_sim.inputs.workload.sources import BUNDLED_NASA_LOG
from torus_sim.policies.catalog import ONLINE_POLICIES
from torus_sim.policies.easy import EasyPolicy
from torus_sim.policies.rigid import ListPolicy

CLUSTER_POLICIES = [name for name in ONLINE_POLICIES if name not in ("krevat", "balancing", "tiebreak")]


def _job(job_id: int, at: float, runtime: float, size: int, user: int) -> Job:
    return Job(job_id, at, runtime=runtime, walltime=runtime, size=size, user_id=user)


def _run(jobs, nodes: int, limits, policy=None):
    model = SchedulingModel(Workload(jobs=jobs, source="hand-made"), policy or EasyPolicy(), nodes, user_limits=limits)
    return model, model.run().jobs.set_index("job_id")


def test_a_user_at_its_job_limit_waits_while_another_user_starts():
    # user 1 asks three one-node jobs at 0, user 2 one: with two jobs per user, user 1's third waits for its first
    jobs = [_job(1, 0, 100, 1, 1), _job(2, 0, 50, 1, 1), _job(3, 0, 100, 1, 1), _job(4, 0, 100, 1, 2)]
    assert _run([job.fresh_copy() for job in jobs], 8, None)[1]["started_at"].to_dict() == {1: 0, 2: 0, 3: 0, 4: 0}
    model, table = _run(jobs, 8, (2, None))
    assert table["started_at"].to_dict() == {1: 0.0, 2: 0.0, 3: 50.0, 4: 0.0}
    assert model.scheduler.limits.held == 0 and model.scheduler.limits.held_ever == 1


def test_a_node_limit_skips_a_job_over_it_and_lets_a_later_smaller_one_in():
    # three nodes per user: job 1 (2 nodes) runs, job 2 (2) is held, job 3 (1) fits the room left and starts at 0;
    # job 2 starts when job 1 ends (the room is 2 again); a job larger than the limit runs alone (job 4 at 250)
    jobs = [_job(1, 0, 100, 2, 7), _job(2, 0, 100, 2, 7), _job(3, 0, 150, 1, 7), _job(4, 10, 10, 5, 7)]
    _, table = _run(jobs, 8, (None, 3), EasyPolicy())
    assert table["started_at"].to_dict() == {1: 0.0, 2: 100.0, 3: 0.0, 4: 200.0}


def _overlaps(table, at: float, user: int):
    running = table[(table["started_at"] <= at) & (table["finished_at"] > at) & (table["user_id"] == user)]
    return len(running), int(running["size"].sum())


@settings(max_examples=40, deadline=None)
@given(
    submits=st.lists(st.integers(0, 300), min_size=1, max_size=24),
    sizes=st.lists(st.integers(1, 6), min_size=24, max_size=24),
    runtimes=st.lists(st.integers(1, 120), min_size=24, max_size=24),
    users=st.lists(st.integers(0, 2), min_size=24, max_size=24),
    max_jobs=st.one_of(st.none(), st.integers(1, 3)),
    max_nodes=st.integers(2, 8),
    policy=st.sampled_from(CLUSTER_POLICIES),
)
def test_no_user_ever_passes_a_limit_under_any_cluster_policy(submits, sizes, runtimes, users, max_jobs, max_nodes, policy):
    from torus_sim.policies.catalog import POLICIES

    jobs = [
        _job(index + 1, float(at), float(runtimes[index]), sizes[index], users[index]) for index, at in enumerate(sorted(submits))
    ]
    _, table = _run(jobs, 8, (max_jobs, max_nodes), POLICIES.make(policy))
    assert len(table) == len(jobs) and table["finished_at"].notna().all()  # every job ran: nothing held for ever
    for at in table["started_at"].unique():
        for user in table["user_id"].unique():
            count, nodes = _overlaps(table, at, user)
            assert max_jobs is None or count <= max_jobs
            assert nodes <= max_nodes or count == 1  # a job larger than the limit runs alone


def test_a_job_a_window_holds_takes_no_slot_of_its_user():
    # 4 nodes, a drained maintenance window 1000-1100 s, one running job per user. Job 1 (2000 s) would reach into the
    # window: it waits for its end. Job 2 (100 s) of the same user ends before it: it starts at once, as under Slurm's
    # MaxJobs (the limit counts running jobs; the scan skips a job a reservation blocks). Were job 1 holding the
    # user's slot while the window holds it, job 2 would wait for job 1's end (3100 s)
    jobs = [_job(1, 0, 2000, 1, 1), _job(2, 1, 100, 1, 1)]
    model = SchedulingModel(
        Workload(jobs=jobs, source="hand-made"), EasyPolicy(), 4, user_limits=(1, None), maintenance=[(1000.0, 1100.0)]
    )
    assert model.run().jobs.set_index("job_id")["started_at"].to_dict() == {1: 1100.0, 2: 1.0}


def test_a_job_prime_time_holds_takes_no_slot_of_its_user():
    # prime time weekdays 08:00-18:00 UTC, at most an hour; two running jobs per user. Job 1 (2 h, 09:00) waits for
    # 18:00; jobs 2, 3, 4 (30 min, 09:10, 09:20, 09:21) of the same user: 2 and 3 run together, 4 waits for 2's end
    # (09:40). Were job 1 holding a slot through prime time, job 3 would wait for 2's end and job 4 for 3's
    import datetime

    from torus_sim.engine.prime_time import LogClock, PrimeTimeRule, parse_prime_time

    monday, hour = datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC).timestamp(), 3600.0
    rule = PrimeTimeRule(parse_prime_time("MON-FRI 08:00-18:00"), LogClock(monday), hour, None)
    submits = [9 * hour, 9 * hour + 600, 9 * hour + 1200, 9 * hour + 1260]
    jobs = [_job(index + 1, at, 2 * hour if index == 0 else hour / 2, 1, 1) for index, at in enumerate(submits)]
    for limit, starts in (
        ((2, None), [18 * hour, submits[1], submits[2], submits[1] + hour / 2]),
        ((1, None), [18 * hour, submits[1], submits[1] + hour / 2, submits[1] + hour]),
    ):
        model = SchedulingModel(
            Workload(jobs=[job.fresh_copy() for job in jobs], source="hand-made"),
            EasyPolicy(),
            8,
            user_limits=limit,
            prime_time=rule,
        )
        table = model.run().jobs.set_index("job_id")
        assert table["started_at"].sort_index().tolist() == starts, limit


def test_a_job_prime_time_holds_is_held_by_the_limits_when_a_larger_job_outranks_it():
    # prime time from 08:00, at most 60 s; one running job per user; larger jobs first. Job 1 (120 s) is let in
    # without a slot and held by prime time; job 2 (30 s) takes the slot and starts at 08:00. Job 3 (6 nodes,
    # 08:00:10) outranks job 1 and waits over the limit: job 1, after it, is now the limits' to hold (it was out of
    # the queue, held by prime time: a run used to stop here, "not in the wait queue"). Job 3 starts when job 2 ends
    # (08:00:30), job 1 at 18:00
    import datetime

    from torus_sim.engine.multifactor import PriorityWeights
    from torus_sim.engine.prime_time import LogClock, PrimeTimeRule, parse_prime_time

    monday, eight = datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC).timestamp(), 8 * 3600.0
    rule = PrimeTimeRule(parse_prime_time("MON-FRI 08:00-18:00"), LogClock(monday), 60.0, None)
    jobs = [_job(1, eight, 120, 1, 0), _job(2, eight, 30, 1, 0), _job(3, eight + 10, 30, 6, 0)]
    model = SchedulingModel(
        Workload(jobs=jobs, source="hand-made"),
        EasyPolicy(),
        8,
        user_limits=(1, None),
        prime_time=rule,
        priority=PriorityWeights(job_size=5.0),
    )
    starts = model.run().jobs.set_index("job_id")["started_at"] - eight
    assert starts.to_dict() == {1: 36_000.0, 2: 0.0, 3: 30.0}


def test_a_job_a_window_holds_is_held_by_the_limits_when_a_larger_job_outranks_it():
    # a drained window at 1000-1100 s; one running job per user; larger jobs first. Job 1 (2000 s) is let in without
    # a slot and held by the window (out of the queue until its end); job 2 (100 s) takes the slot and starts at once.
    # Job 3 (6 nodes, at 10 s) outranks job 1 and waits over the limit: the window forgets job 1, the limits hold it.
    # Job 3 starts when job 2 ends (100 s); the limits then let job 1 in again and the window holds it; it starts at
    # the window's end
    from torus_sim.engine.multifactor import PriorityWeights

    jobs = [_job(1, 0, 2000, 1, 0), _job(2, 0, 100, 1, 0), _job(3, 10, 50, 6, 0)]
    model = SchedulingModel(
        Workload(jobs=jobs, source="hand-made"),
        EasyPolicy(),
        8,
        user_limits=(1, None),
        maintenance=[(1000.0, 1100.0)],
        priority=PriorityWeights(job_size=5.0),
    )
    table = model.run().jobs.set_index("job_id")
    assert table["started_at"].to_dict() == {1: 1100.0, 2: 0.0, 3: 100.0}
    assert model.scheduler.maintenance.held == 0 and model.scheduler.maintenance.held_ever == 1


@settings(max_examples=60, deadline=None)
@given(
    submits=st.lists(st.integers(0, 300), min_size=1, max_size=24),
    sizes=st.lists(st.integers(1, 6), min_size=24, max_size=24),
    runtimes=st.lists(st.integers(1, 120), min_size=24, max_size=24),
    users=st.lists(st.integers(0, 2), min_size=24, max_size=24),
    max_jobs=st.integers(1, 3),
    windows=st.lists(st.tuples(st.integers(0, 400), st.integers(1, 80)), max_size=3),
    drain=st.booleans(),
    prime=st.booleans(),
    sized=st.booleans(),
    policy=st.sampled_from(CLUSTER_POLICIES),
)
def test_limits_windows_and_prime_time_together_pass_none_under_any_cluster_policy(
    submits, sizes, runtimes, users, max_jobs, windows, drain, prime, sized, policy
):
    # limits, windows and prime time in series: nothing starts in a window (nor, drained, into one), no job asking more
    # than prime time's maximum starts in it, no user runs more than the limit, whatever the policy, with the FCFS
    # order or a priority that puts later, larger jobs first; every job runs (nothing held for ever, no job let in by
    # the limits while a gate after them holds it out of the queue is lost)
    import datetime

    from torus_sim.engine.multifactor import PriorityWeights
    from torus_sim.engine.prime_time import LogClock, PrimeTimeRule, parse_prime_time
    from torus_sim.policies.catalog import POLICIES

    if policy == "PV-EASY" and sized:
        sized = False  # PV-EASY reserves by submission rank: refused with a priority
    eight = 8 * 3600.0  # prime time from 08:00: the jobs come from 200 s before it
    jobs = [
        _job(index + 1, eight - 200.0 + at, float(runtimes[index]), sizes[index], users[index])
        for index, at in enumerate(sorted(submits))
    ]
    spans = [(eight - 200.0 + start, eight - 200.0 + start + length) for start, length in windows]
    monday = datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC).timestamp()
    rule = PrimeTimeRule(parse_prime_time("MON-FRI 08:00-18:00"), LogClock(monday), 60.0, None) if prime else None
    model = SchedulingModel(
        Workload(jobs=jobs, source="hand-made"),
        POLICIES.make(policy),
        8,
        user_limits=(max_jobs, None),
        maintenance=spans or None,
        maintenance_drain=drain,
        prime_time=rule,
        priority=PriorityWeights(job_size=5.0) if sized else None,
    )
    table = model.run().jobs.set_index("job_id")
    assert len(table) == len(jobs) and table["finished_at"].notna().all()
    for at in table["started_at"].unique():
        for user in table["user_id"].unique():
            assert _overlaps(table, at, user)[0] <= max_jobs
    merged = model.scheduler.maintenance.windows if spans else ()
    for start_at, walltime in zip(table["started_at"], table["walltime"], strict=True):
        for start, end in merged:
            assert not start <= start_at < end, (start_at, start, end)
            assert not drain or not (start_at < start < start_at + walltime), (start_at, walltime, start)
        assert not prime or walltime <= 60.0 or not eight <= start_at < 18 * 3600.0, (start_at, walltime)


def test_limits_no_job_reaches_leave_the_schedule_as_it_was():
    jobs = [_job(index + 1, float(index * 7 % 50), 30.0 + index % 5 * 20, 1 + index % 4, index % 3) for index in range(40)]
    _, plain = _run([job.fresh_copy() for job in jobs], 8, None)
    _, limited = _run(jobs, 8, (40, 1000))
    assert plain["started_at"].equals(limited["started_at"])


def test_limits_are_refused_with_a_batch_policy_and_below_one():
    jobs = [Job(1, 0.0, runtime=10.0, walltime=10.0, size=1)]
    with pytest.raises(ConfigurationError, match="per-user limits: .* plans after each attempt end"):
        SchedulingModel(Workload(jobs=jobs, source="one", kind="batch"), ListPolicy(), 4, user_limits=(2, None))
    for limits in ((0, None), (None, 0), (None, None), (1.5, None)):
        with pytest.raises(ConfigurationError, match="max_jobs_per_user|max_nodes_per_user"):
            UserLimits(*limits, key=lambda job: job.rank)
    with pytest.raises(ValueError, match="max_jobs_per_user"):
        Scenario(workload=str(BUNDLED_NASA_LOG), platform="cluster", policy="FCFS-EASY", max_jobs_per_user=0)


def test_limits_are_scenario_fields_that_leave_earlier_keys_unset_and_hold_jobs_on_a_real_log():
    plain = Scenario(workload=str(BUNDLED_NASA_LOG), platform="cluster", policy="FCFS-EASY", max_jobs=2000)
    limited = plain.replace(max_jobs_per_user=2)
    assert plain.max_jobs_per_user is None and plain.max_nodes_per_user is None
    assert run_key(plain) != run_key(limited) != run_key(plain.replace(max_nodes_per_user=64))
    model = build_model(limited, {})
    table = model.run().jobs
    assert model.scheduler.limits.held_ever > 0 and model.scheduler.limits.held == 0
    for at in table["started_at"].unique()[::20]:
        for user in table["user_id"].unique():
            assert _overlaps(table, at, user)[0] <= 2


@settings(max_examples=60, deadline=None)
@given(
    jobs=st.lists(st.tuples(st.integers(0, 6000), st.integers(1, 64), st.integers(0, 1), st.booleans()), min_size=1, max_size=40),
    period=st.sampled_from([60, 300, 900]),
    weights=st.tuples(st.floats(0.0, 5.0), st.floats(0.0, 5.0), st.sampled_from([600.0, 1800.0, 3600.0]), st.booleans()),
    queue=st.sampled_from([0.0, 0.7, 3.0]),
)
def test_a_users_jobs_in_their_phases_read_in_the_priority_order_at_every_recomputation(jobs, period, weights, queue):
    # the limits keep one user's waiting jobs in three fixed orders (submitted since the last recomputation, ageing,
    # at the maximum age) and merge them: at every recomputation that reads as the user's jobs sorted by priority
    from torus_sim.engine.multifactor import Multifactor, PriorityWeights

    age, size, max_age, small = weights
    factors = {i + 1: (i * 7 % 5) / 4 for i in range(len(jobs))}  # a queue factor of 0, 1/4, ... 1 by job
    weighed = PriorityWeights(age=age, fairshare=1.0, job_size=size, max_age=max_age, favor_small=small, queue=queue)
    priority = Multifactor(weighed, 64, factors)
    limits = UserLimits(1, None, key=priority.key, phases=priority)
    waiting = {}
    events = sorted(
        [(at, "arrive", i) for i, (at, *_rest) in enumerate(jobs)] + [(at, "recompute", -1) for at in range(0, 8000, period)]
    )
    for at, what, i in events:
        if what == "recompute":
            priority.recompute(float(at))
            limits.reorder()
        else:
            _, nodes, user, starts = jobs[i]
            job = _job(i + 1, float(at), 10.0, nodes, user)
            priority.waiting(job)
            limits.waiting(job)
            waiting[job.job_id] = job
            if starts and len(waiting) > 1:  # an earlier job of anyone starts: it leaves its user's order
                first = waiting.pop(min(waiting))
                priority.started(first, first.size, float(at))
                limits.started(first, first.size, float(at))
        for user in {job.user_id for job in waiting.values()}:
            merged = [job.job_id for job in limits._ordered(limits._ordered_lists(user))]  # made at the first read, then kept
            mine = sorted(job.job_id for job in waiting.values() if job.user_id == user)
            assert sorted(merged) == mine
            keys = [priority.key(waiting[job_id]) for job_id in merged]
            assert all(a[0] <= b[0] + 1e-9 for a, b in zip(keys, keys[1:], strict=False)), keys


class _Queue:
    """The wait queue as the limits see it: a set that refuses a job added twice or removed while absent."""

    def __init__(self) -> None:
        self.jobs: dict[int, Job] = {}

    def add(self, job) -> None:
        assert job.job_id not in self.jobs
        self.jobs[job.job_id] = job

    def remove(self, job) -> None:
        del self.jobs[job.job_id]


@settings(max_examples=150, deadline=None)
@given(
    steps=st.lists(
        st.tuples(
            st.sampled_from(["arrive", "start", "stop", "bound"]),
            st.integers(0, 2),
            st.sampled_from([10.0, 50.0, 100.0, float("nan")]),
            st.integers(1, 4),
            st.sampled_from([float("inf"), float("-inf"), 30.0, 60.0, 120.0]),
        ),
        max_size=60,
    ),
    max_jobs=st.integers(1, 3),
    max_nodes=st.sampled_from([None, 4, 6]),
)
@pytest.mark.parametrize("order", ["fcfs", "largest first"])
def test_gated_limits_let_in_what_a_walk_from_scratch_lets_in_as_the_bound_moves(steps, max_jobs, max_nodes, order):
    # the gates hold every job asking more than a bound; such a job takes no slot. After every refresh the queue holds,
    # for each user in order, the jobs over the bound and the first jobs under it that its slots and room cover: what
    # a walk of every user from scratch lets in, though only the users a moved bound crossed are walked again, and a
    # walk goes on from where it stopped after stops and arrivals behind it (largest first: an arrival may come
    # before the stop)
    key = (lambda job: job.job_id) if order == "fcfs" else (lambda job: (-job.size, job.job_id))
    limits = UserLimits(max_jobs, max_nodes, key=key, gated=True)
    queue, waiting, running, bound = _Queue(), {}, {}, float("inf")
    for index, (what, user, walltime, size, new_bound) in enumerate(steps):
        if what == "arrive":
            job = Job(index + 1, float(index), runtime=10.0, walltime=walltime, size=size, user_id=user)
            waiting[job.job_id] = job
            queue.add(job)
            limits.waiting(job)
        elif what == "start":
            startable = [job for job in queue.jobs.values() if job.walltime <= bound]
            if startable:
                job = startable[user % len(startable)]
                queue.remove(job)
                del waiting[job.job_id]
                running[job.job_id] = job
                limits.started(job, job.size)
        elif what == "stop" and running:
            job_id = sorted(running)[user % len(running)]
            limits.stopped(job_id)
            del running[job_id]
        elif what == "bound":
            bound = new_bound
        limits.refresh(queue, bound)
        expected = set()
        for owner in {job.user_id for job in waiting.values()}:
            slots = max_jobs - sum(job.user_id == owner for job in running.values())
            room = (max_nodes or 10**9) - sum(
                min(job.size, max_nodes or 10**9) for job in running.values() if job.user_id == owner
            )
            for job in sorted((job for job in waiting.values() if job.user_id == owner), key=key):
                if bound < float("inf") and not job.walltime <= bound:
                    expected.add(job.job_id)
                    continue
                if slots <= 0 or room <= 0:
                    break
                need = min(job.size, max_nodes or 10**9)
                if need <= room:
                    expected.add(job.job_id)
                    slots, room = slots - 1, room - need
        assert set(queue.jobs) == expected, (index, what)
    with pytest.raises(ValueError, match="gated"):
        UserLimits(1, None, key=lambda job: job.job_id).refresh(_Queue(), 60.0)


def test_a_start_walks_again_where_a_job_a_gate_holds_stood_past_the_walks_new_stop():
    # a start of a job the walk let in is not walked again (the same jobs less it are let in), except where a gate
    # holds a waiting job: its stop can move before a job a gate holds. Slots 2, room 6, bound 50: the walk lets in
    # 1 (2 nodes), skips 2 (5 nodes > 4 left), lets in 3 (over the bound: no slot), 4 (3 nodes), 5 (over the bound)
    # and stops at 6. Job 4 starts: from scratch, 1 takes the last slot and the walk stops at 2, so 3 and 5 are held
    limits = UserLimits(2, 6, key=lambda job: job.job_id, gated=True)
    queue = _Queue()
    shape = [(2, 10.0), (5, 10.0), (1, 100.0), (3, 10.0), (1, 100.0), (1, 10.0)]
    jobs = [
        Job(i + 1, float(i), runtime=10.0, walltime=walltime, size=size, user_id=0) for i, (size, walltime) in enumerate(shape)
    ]
    for job in jobs:
        queue.add(job)
        limits.waiting(job)
    limits.refresh(queue, 50.0)
    assert set(queue.jobs) == {1, 3, 4, 5}
    queue.remove(jobs[3])
    limits.started(jobs[3], 3)
    limits.refresh(queue, 50.0)
    assert set(queue.jobs) == {1}
    assert limits.held == 4


def test_a_job_that_comes_before_the_walks_stop_takes_the_slot_and_one_after_it_is_held():
    # largest first, one slot: jobs 1 and 2 (1 node) come, 1 is let in and the walk stops at 2. Job 3 (4 nodes)
    # comes before the stop: it takes the slot from job 1. Job 4 (1 node) comes after the stop: it is held with no
    # walk, and when job 3 stops running after it started, the walk goes on from its stop: job 1 is let in
    limits = UserLimits(1, None, key=lambda job: (-job.size, job.job_id))
    queue = _Queue()
    jobs = {
        i: Job(i, float(i), runtime=10.0, walltime=10.0, size=size, user_id=0) for i, size in ((1, 1), (2, 1), (3, 4), (4, 1))
    }
    let_in = []
    for job_id in (1, 2, 3, 4):
        queue.add(jobs[job_id])
        limits.waiting(jobs[job_id])
        limits.refresh(queue)
        let_in.append(sorted(queue.jobs))
    assert let_in == [[1], [1], [3], [3]]
    queue.remove(jobs[3])
    limits.started(jobs[3], 4)
    limits.refresh(queue)
    assert sorted(queue.jobs) == []
    limits.stopped(3)
    limits.refresh(queue)
    assert sorted(queue.jobs) == [1]
    assert limits.held == 2 and limits.held_ever == 3
