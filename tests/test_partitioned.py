"""A platform of disjoint partitions (issue 76 §6, issue 77 §1): each job runs on its partition's nodes only, each
partition is planned by its own instance of the policy, and one partition is the plain cluster, job for job."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from torus_sim.core.errors import ConfigurationError
from torus_sim.core.job import Job
from torus_sim.engine.model import SchedulingModel
from torus_sim.engine.multifactor import PriorityWeights
from torus_sim.inputs.workload.jobs import Workload
from torus_sim.machine.platforms.cluster import ClusterPlatform
from torus_sim.machine.platforms.partitioned import PartAllocation, PartitionedPlatform
from torus_sim.policies.catalog import ONLINE_POLICIES, POLICIES
from torus_sim.policies.resilience import ResiliencePolicy

CLUSTER_POLICIES = [name for name in ONLINE_POLICIES if name not in ("krevat", "balancing", "tiebreak")]


def _jobs(seed: int, count: int = 200, largest: int = 8) -> list[Job]:
    rng = np.random.default_rng(seed)
    jobs, at = [], 0.0
    for index in range(count):
        at += float(rng.integers(0, 300))
        runtime = float(rng.integers(10, 3000))
        size = int(rng.integers(1, largest + 1))
        jobs.append(Job(index + 1, at, runtime=runtime, walltime=2 * runtime, size=size, user_id=index % 5))
    return jobs


def _run(jobs, policy: str, platform, **keywords):
    model = SchedulingModel(Workload(jobs=jobs, source="drawn"), POLICIES.make(policy), platform, **keywords)
    return model, model.run()


def _ranges(text: str) -> list[int]:
    nodes = []
    for piece in text.split():
        first, _, last = piece.partition("-")
        nodes += range(int(first), int(last or first) + 1)
    return nodes


@pytest.mark.parametrize("policy", CLUSTER_POLICIES)
def test_one_partition_is_the_plain_cluster_job_for_job(policy):
    plain = _run(_jobs(1), policy, ClusterPlatform(16, identities=True))[1].jobs
    one = PartitionedPlatform(["all"], [ClusterPlatform(16)], lambda job: (0, job.size))
    divided = _run(_jobs(1), policy, one)[1].jobs
    for column in ("started_at", "finished_at"):
        assert divided[column].tolist() == plain[column].tolist()


def test_a_job_waiting_in_one_partition_holds_back_no_job_of_another():
    # partitions a and b of 4 nodes; job 2 waits in a behind job 1; job 3 (b) starts at once even under FCFS, which on
    # one cluster of 8 would have kept it behind job 2
    jobs = [
        Job(1, 0.0, runtime=1000.0, walltime=1000.0, size=4),
        Job(2, 10.0, runtime=100.0, walltime=100.0, size=4),
        Job(3, 20.0, runtime=100.0, walltime=100.0, size=1),
    ]
    route = {1: (0, 4), 2: (0, 4), 3: (1, 1)}
    platform = PartitionedPlatform(["a", "b"], [ClusterPlatform(4), ClusterPlatform(4)], lambda job: route[job.job_id])
    model, record = _run(jobs, "FCFS", platform)
    started = record.jobs.set_index("job_id")["started_at"].to_dict()
    assert started == {1: 0.0, 2: 1000.0, 3: 20.0}
    resources = record.attempts.set_index("job_id")["resources"].to_dict()
    assert resources == {1: "0-3", 2: "0-3", 3: "4"}
    assert model.platform.free_count() == 8 and [part.free for part in platform.parts] == [4, 4]


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    capacities=st.lists(st.integers(1, 8), min_size=2, max_size=3),
    policy=st.sampled_from(CLUSTER_POLICIES),
)
def test_every_job_runs_on_its_partitions_nodes_and_no_node_twice(seed, capacities, policy):
    rng = np.random.default_rng(seed)
    jobs = _jobs(seed, count=60, largest=8)
    routes = {}
    for job in jobs:
        part = int(rng.integers(len(capacities)))
        routes[job.job_id] = (part, min(job.size, capacities[part]))
    platform = PartitionedPlatform(
        [f"p{index}" for index in range(len(capacities))],
        [ClusterPlatform(capacity) for capacity in capacities],
        lambda job: routes[job.job_id],
    )
    _, record = _run(jobs, policy, platform)
    table = record.jobs.set_index("job_id")
    assert len(table) == len(jobs) and table["finished_at"].notna().all()
    offsets = np.concatenate(([0], np.cumsum(capacities)))
    spans = []
    for row in record.attempts.itertuples():
        part, nodes = routes[row.job_id]
        held = _ranges(row.resources)
        assert len(held) == nodes == row.nodes
        assert all(offsets[part] <= node < offsets[part + 1] for node in held)
        spans += [(node, row.started_at, row.ended_at) for node in held]
    spans.sort()
    for (node, _, end), (other, start, _) in zip(spans, spans[1:], strict=False):
        assert node != other or start >= end  # a node runs one job at a time


def test_what_is_not_modelled_across_partitions_is_refused_with_a_sentence():
    platform = PartitionedPlatform(["a", "b"], [ClusterPlatform(4), ClusterPlatform(4)], lambda job: (0, job.size))
    with pytest.raises(ConfigurationError, match="preventive actions"):
        _run(_jobs(2, count=5, largest=4), "FCFS-EASY", platform, resilience=ResiliencePolicy(spares=1))


def test_a_job_no_partition_can_hold_is_named():
    platform = PartitionedPlatform(["a"], [ClusterPlatform(4)], lambda job: (0, 9))
    with pytest.raises(ConfigurationError, match="job 1 needs 9 nodes of partition 'a', which has 4"):
        _run(_jobs(3, count=3), "FCFS", platform)


def test_the_platform_refuses_an_allocation_of_no_partition_and_speaks_global_node_ids():
    platform = PartitionedPlatform(["a", "b"], [ClusterPlatform(4), ClusterPlatform(3)], lambda job: (1, 2))
    assert platform.capacity == 7 and platform.label == "partitioned cluster of 7 nodes (a 4, b 3)"
    assert "names no partition" in platform.allocation_refusal(np.arange(2), 2)
    allocation = PartAllocation(1, np.array([0, 2]))
    assert platform.allocation_refusal(allocation, 2) is None
    platform.allocate(allocation, 7)
    assert platform.allocation_text(allocation) == "4 6" and platform.job_on(6) == 7 and platform.job_on(5) == -1
    assert platform.free_count() == 5 and platform.mfp() == 4
    platform.release(allocation, 7)
    platform.take_down(5, 100.0)
    assert platform.repairs_ahead() == [(100.0, 5)] and platform.coordinate(5) == (1, 1)


@pytest.mark.parametrize("policy", ["FCFS-EASY", "conservative", "greedy"])
def test_one_partition_is_the_plain_cluster_under_the_multifactor_priority_and_per_user_limits(policy):
    # the partition's queue follows the whole queue through the priority's reorders and the limits' holds and returns
    weights = PriorityWeights(age=1000.0, fairshare=5000.0, job_size=200.0, calc_period=600.0, max_age=20_000.0)
    keywords = {"priority": weights, "user_limits": (2, 10)}
    plain = _run(_jobs(5, count=250), policy, ClusterPlatform(16, identities=True), **keywords)[1].jobs
    one = PartitionedPlatform(["all"], [ClusterPlatform(16)], lambda job: (0, job.size))
    model, record = _run(_jobs(5, count=250), policy, one, **keywords)
    assert record.jobs["started_at"].tolist() == plain["started_at"].tolist()
    assert model.counters["jobs_held"] > 0  # the limits held jobs out of the queue and let them back


def test_two_partitions_under_the_priority_and_limits_run_every_job_on_its_own_nodes():
    weights = PriorityWeights(age=1000.0, fairshare=5000.0, job_size=200.0, calc_period=600.0)
    platform = PartitionedPlatform(["a", "b"], [ClusterPlatform(8), ClusterPlatform(8)], lambda job: (job.user_id % 2, job.size))
    model, record = _run(_jobs(6, count=200), "FCFS-EASY", platform, priority=weights, user_limits=(2, None))
    table = record.attempts
    assert len(record.jobs) == 200 and record.jobs["finished_at"].notna().all()
    for row in table.itertuples():
        part = model.platform.part_of(row.job_id)
        assert all(8 * part <= node < 8 * (part + 1) for node in _ranges(row.resources))
    assert len(model.queue) == 0 and all(len(queue) == 0 for queue in model.queue.parts)
