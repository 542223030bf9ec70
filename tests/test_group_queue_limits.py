"""Limits per group and per queue (issue 77 §1): a job over its group's or its queue's running jobs or nodes waits held.

Hand-worked cases on a cluster, the stages in series (a user's, then a group's, then a queue's), a property over random
workloads under every cluster policy, and a real log read by the scenario (its groups, SWF field 13, and its queues,
field 15).
"""

from __future__ import annotations

import gzip
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from torus_sim.core.errors import ConfigurationError
from torus_sim.core.job import Job
from torus_sim.engine import OwnerMap
from torus_sim.engine.model import SchedulingModel
from torus_sim.experiments.runner import Scenario, build_model
from torus_sim.experiments.sweep import run_key
from torus_sim.inputs.workload.jobs import Workload
from torus_sim.policies.catalog import ONLINE_POLICIES, POLICIES
from torus_sim.policies.easy import EasyPolicy

from .conftest import SHARED_DATA
from .test_limits import _Queue

CLUSTER_POLICIES = [name for name in ONLINE_POLICIES if name not in ("krevat", "balancing", "tiebreak")]
SDSC = SHARED_DATA / "swf" / "SDSC-SP2-1998-4.2-cln.swf.gz"


def _job(job_id: int, at: float, runtime: float, size: int, user: int) -> Job:
    return Job(job_id, at, runtime=runtime, walltime=runtime, size=size, user_id=user)


def _run(jobs, nodes: int, limits=(), user_limits=None, policy=None):
    model = SchedulingModel(
        Workload(jobs=jobs, source="hand-made"), policy or EasyPolicy(), nodes, user_limits=user_limits, limits=limits
    )
    return model, model.run().jobs.set_index("job_id")


def test_a_group_at_its_job_limit_holds_its_other_users_while_another_group_starts():
    # users 1 and 2 in group 7, user 3 in group 8; one running job per group: user 2's job waits for user 1's
    jobs = [_job(1, 0, 100, 2, 1), _job(2, 0, 100, 2, 2), _job(3, 0, 100, 2, 3)]
    groups = OwnerMap({1: 7, 2: 7, 3: 8}, "user_id")
    model, table = _run(jobs, 10, (("group", 1, None, groups),))
    assert table["started_at"].to_dict() == {1: 0.0, 2: 100.0, 3: 0.0}
    assert model.scheduler.limits.held == 0 and model.scheduler.limits.held_ever == 1


def test_a_job_a_window_holds_takes_no_slot_of_its_group_after_its_users():
    # users 1 and 2 in group 7; one running job per user and per group; a drained window at 1000-1100 s. User 1's job 1
    # (2000 s) would reach into the window: it takes neither its user's slot nor its group's, so user 2's job 2 (100 s)
    # starts at once and user 1's job 3 (300 s) when job 2 ends; job 1 at the window's end
    jobs = [_job(1, 0, 2000, 1, 1), _job(2, 1, 100, 1, 2), _job(3, 2, 300, 1, 1)]
    groups = OwnerMap({1: 7, 2: 7}, "user_id")
    model = SchedulingModel(
        Workload(jobs=jobs, source="hand-made"),
        EasyPolicy(),
        8,
        user_limits=(1, None),
        limits=(("group", 1, None, groups),),
        maintenance=[(1000.0, 1100.0)],
    )
    table = model.run().jobs.set_index("job_id")
    assert table["started_at"].to_dict() == {1: 1100.0, 2: 1.0, 3: 101.0}


def test_a_queue_node_limit_holds_a_job_over_it_and_lets_another_queue_start():
    # four nodes per queue: queue 1's second 3-node job waits for its first; queue 2's starts at once
    jobs = [_job(1, 0, 100, 3, 1), _job(2, 0, 100, 3, 2), _job(3, 0, 100, 3, 3)]
    queues = OwnerMap({1: 1, 2: 1, 3: 2}, "job_id")
    _, table = _run(jobs, 10, (("queue", None, 4, queues),))
    assert table["started_at"].to_dict() == {1: 0.0, 2: 100.0, 3: 0.0}


def test_a_job_held_by_its_user_reserves_nothing_in_its_group():
    # one job per user, two per group (all of group 7): user 1's second job is held by its user and reserves nothing
    # in the group, so the group's two slots go to user 1's first job and user 2's at 0, and user 3's job (held by the
    # group) takes the slot user 2's frees at 50 s; user 1's second job starts when its first ends (100 s), the group
    # then running user 3's alone
    jobs = [_job(1, 0, 100, 1, 1), _job(2, 0, 100, 1, 1), _job(3, 0, 50, 1, 2), _job(4, 0, 200, 1, 3)]
    groups = OwnerMap({1: 7, 2: 7, 3: 7}, "user_id")
    model, table = _run(jobs, 10, (("group", 2, None, groups),), user_limits=(1, None))
    assert table["started_at"].to_dict() == {1: 0.0, 2: 100.0, 3: 0.0, 4: 50.0}
    assert [stage.held_ever for stage in model.scheduler.limits.stages] == [1, 1]


def _running(table, at: float, owner) -> dict:
    running = table[(table["started_at"] <= at) & (table["finished_at"] > at)]
    counts: dict = {}
    for job_id, size in running["size"].items():
        key = owner(job_id)
        jobs, nodes, largest = counts.get(key, (0, 0, 0))
        counts[key] = (jobs + 1, nodes + size, max(largest, size))
    return counts


@settings(max_examples=30, deadline=None)
@given(
    submits=st.lists(st.integers(0, 300), min_size=1, max_size=20),
    sizes=st.lists(st.integers(1, 6), min_size=20, max_size=20),
    runtimes=st.lists(st.integers(1, 120), min_size=20, max_size=20),
    users=st.lists(st.integers(0, 3), min_size=20, max_size=20),
    queue_of=st.lists(st.integers(0, 1), min_size=20, max_size=20),
    user_jobs=st.one_of(st.none(), st.integers(1, 3)),
    group_jobs=st.one_of(st.none(), st.integers(1, 3)),
    queue_nodes=st.integers(3, 8),
    policy=st.sampled_from(CLUSTER_POLICIES),
)
def test_no_user_group_or_queue_ever_passes_its_limit_under_any_cluster_policy(
    submits, sizes, runtimes, users, queue_of, user_jobs, group_jobs, queue_nodes, policy
):
    jobs = [
        _job(index + 1, float(at), float(runtimes[index]), sizes[index], users[index]) for index, at in enumerate(sorted(submits))
    ]
    group = {0: 0, 1: 0, 2: 1, 3: 1}  # users 0 and 1 in group 0, users 2 and 3 in group 1
    queue = {job.job_id: queue_of[index] for index, job in enumerate(jobs)}
    limits = [("queue", None, queue_nodes, OwnerMap(queue, "job_id"))]
    if group_jobs is not None:
        limits.insert(0, ("group", group_jobs, None, OwnerMap(group, "user_id")))
    _, table = _run(jobs, 8, tuple(limits), None if user_jobs is None else (user_jobs, None), POLICIES.make(policy))
    assert len(table) == len(jobs) and table["finished_at"].notna().all()  # every job ran: nothing held for ever
    user_of = table["user_id"].to_dict()
    for at in table["started_at"].unique():
        for count, _, _ in _running(table, at, lambda job_id: user_of[job_id]).values():
            assert user_jobs is None or count <= user_jobs
        for count, _, _ in _running(table, at, lambda job_id: group[user_of[job_id]]).values():
            assert group_jobs is None or count <= group_jobs
        for count, nodes, _ in _running(table, at, lambda job_id: queue[job_id]).values():
            assert nodes <= queue_nodes or count == 1  # a job larger than the limit runs alone


def test_one_stage_in_a_chain_is_the_users_limits_alone_job_for_job():
    # the users' limits given as the first stage of a chain (with a queue's that holds nothing) are the plain ones
    jobs = [_job(index + 1, float(index * 7 % 60), 40.0 + index % 5 * 30, 1 + index % 4, index % 3) for index in range(30)]
    _, plain = _run([job.fresh_copy() for job in jobs], 8, user_limits=(2, 5))
    everything = OwnerMap({}, "job_id")  # every job in one queue of no limit that binds
    _, chained = _run(jobs, 8, (("queue", 10**6, None, everything),), user_limits=(2, 5))
    assert chained["started_at"].equals(plain["started_at"])


def _log_groups_and_queues():
    rows = []
    with gzip.open(SDSC, "rt") as lines:
        for line in lines:
            if line.startswith(";") or not line.strip():
                continue
            fields = line.split()
            rows.append((int(fields[0]), int(fields[11]), int(fields[12]), int(fields[14])))
    table = np.array(rows)
    groups: dict[int, int] = {}
    for user, group in zip(table[:, 1].tolist(), table[:, 2].tolist(), strict=True):
        groups.setdefault(user, group)
    return dict(zip(table[:, 0].tolist(), table[:, 3].tolist(), strict=True)), groups


@pytest.mark.skipif(not SDSC.exists(), reason=f"needs the SDSC-SP2 log at {SDSC}")
def test_a_real_log_keeps_every_group_and_queue_under_its_limits_with_the_priority():
    """SDSC-SP2's first 3,000 jobs, FCFS-EASY under the multifactor priority (age, fair share, size): two running
    jobs per group and 64 processors per queue; every instant obeys both, the jobs are held and the waits grow."""
    fields = dict(workload=str(SDSC), max_jobs=3000, platform="cluster", failures="none", policy="FCFS-EASY")
    priority = dict(priority_weight_age=1.0, priority_weight_fairshare=2.0, priority_weight_job_size=1.0)
    plain = Scenario.make(**fields, **priority)
    limited = plain.replace(max_jobs_per_group=2, max_nodes_per_queue=64)
    assert run_key(plain) != run_key(limited) != run_key(plain.replace(max_jobs_per_queue=2))
    free = build_model(plain).run().jobs.set_index("job_id")
    model = build_model(limited)
    table = model.run().jobs.set_index("job_id")
    queues, groups = _log_groups_and_queues()
    user_of = table["user_id"].to_dict()
    assert len(table) == len(free) and table["finished_at"].notna().all()
    for at in table["started_at"].unique():
        assert all(count <= 2 for count, _, _ in _running(table, at, lambda job_id: groups[user_of[job_id]]).values())
        assert all(nodes <= 64 or count == 1 for count, nodes, _ in _running(table, at, lambda job_id: queues[job_id]).values())
    assert model.counters["jobs_held"] > 100
    waits = (table["started_at"] - table["submitted_at"]).mean(), (free["started_at"] - free["submitted_at"]).mean()
    assert waits[0] > waits[1]


def test_bad_group_and_queue_limits_are_one_sentence():
    with pytest.raises(ConfigurationError, match=r"max_jobs_per_group"):
        Scenario.make(max_jobs_per_group=0)
    with pytest.raises(ConfigurationError, match=r"max_jobs_per_queue must be an integer >= 1"):
        _run([_job(1, 0, 10, 1, 1)], 4, (("queue", 0, None, OwnerMap({}, "job_id")),))
    with pytest.raises(ConfigurationError, match=r"per-group limits need max_jobs_per_group or max_nodes_per_group"):
        _run([_job(1, 0, 10, 1, 1)], 4, (("group", None, None, OwnerMap({}, "user_id")),))


def _walk(jobs, key, slots, room=math.inf):
    """The jobs a walk lets in: in ``key`` order, each while the slots last and its nodes fit the room left."""
    let_in = []
    for job in sorted(jobs, key=key):
        if slots <= 0 or room <= 0:
            break
        if job.size <= room:
            let_in.append(job)
            slots, room = slots - 1, room - job.size
    return let_in


@settings(max_examples=120, deadline=None)
@given(
    steps=st.lists(
        st.tuples(st.sampled_from(["arrive", "arrive", "start", "stop"]), st.integers(0, 3), st.integers(1, 4)),
        max_size=70,
    ),
    user_jobs=st.integers(1, 3),
    user_nodes=st.sampled_from([None, 5]),
    group_jobs=st.integers(1, 4),
    order=st.sampled_from(["fcfs", "largest first"]),
)
def test_a_users_then_groups_chain_lets_in_what_walks_from_scratch_let_in(steps, user_jobs, user_nodes, group_jobs, order):
    # users 0-3 in groups 0 (users 0, 1) and 1 (users 2, 3): after every refresh the queue holds, group by group, the
    # first of the jobs each user's walk lets in that the group's slots cover, however the stages came to it (walks
    # not redone after a start, walks that go on from their stop after stops and arrivals behind it)
    from torus_sim.engine.limits import LimitChain, UserLimits

    key = (lambda job: job.job_id) if order == "fcfs" else (lambda job: (-job.size, job.job_id))
    groups = {0: 0, 1: 0, 2: 1, 3: 1}
    chain = LimitChain(
        [
            UserLimits(user_jobs, user_nodes, key=key),
            UserLimits(group_jobs, None, key=key, owner=OwnerMap(groups, "user_id"), who="group"),
        ]
    )
    queue, waiting, running = _Queue(), {}, {}
    for index, (what, user, size) in enumerate(steps):
        if what == "arrive":
            job = Job(index + 1, float(index), runtime=10.0, walltime=10.0, size=size, user_id=user)
            waiting[job.job_id] = job
            queue.add(job)
            chain.waiting(job)
        elif what == "start" and queue.jobs:
            job = queue.jobs[sorted(queue.jobs)[user % len(queue.jobs)]]
            queue.remove(job)
            running[job.job_id] = waiting.pop(job.job_id)
            chain.started(job, job.size)
        elif what == "stop" and running:
            job_id = sorted(running)[user % len(running)]
            chain.stopped(job_id)
            del running[job_id]
        chain.refresh(queue)
        first = []
        for owner in range(4):
            mine = [job for job in running.values() if job.user_id == owner]
            slots = user_jobs - len(mine)
            room = (user_nodes or math.inf) - sum(min(job.size, user_nodes or math.inf) for job in mine)
            first += _walk([job for job in waiting.values() if job.user_id == owner], key, slots, room)
        expected = set()
        for group in (0, 1):
            slots = group_jobs - sum(groups[job.user_id] == group for job in running.values())
            expected |= {job.job_id for job in _walk([job for job in first if groups[job.user_id] == group], key, slots)}
        assert set(queue.jobs) == expected, (index, what)
