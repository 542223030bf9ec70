"""Across the walls: every policy on every platform where it makes sense, with hand-computed schedules.

Each scenario is small enough to follow by hand; the expected start and end times are worked out in
the comments. They check what no single-platform simulator can: EASY, conservative and PV-EASY
reserve *partitions* on a torus that loses supernodes; Krevat's and the balancing scheduler run on a
cluster with real per-node downtime; R-LIST and R-SHELFFILL place rigid jobs as partitions; silent
errors and fail-stop failures hit the same run.
"""

from __future__ import annotations

from contextlib import contextmanager
from functools import partial

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from failure_logs.events import FailureLog
from predictors import OracleConfidencePredictor
from torus_sim.core.errors import ConfigurationError
from torus_sim.engine import wait_queue
from torus_sim.engine.model import SchedulingModel
from torus_sim.engine.progress import Preemption
from torus_sim.experiments.runner import Scenario, run
from torus_sim.inputs.workload.batch import RigidJobSet, rigid_workload
from torus_sim.machine.partitions import round_up_to_feasible_size
from torus_sim.machine.platforms.cluster import ClusterPlatform
from torus_sim.machine.topology import Torus
from torus_sim.policies.easy import ConservativePolicy, EasyPolicy, easy_pass
from torus_sim.policies.fault_aware import BalancingPlacement
from torus_sim.policies.krevat import KrevatScheduler
from torus_sim.policies.pv_easy import PvEasyPolicy
from torus_sim.policies.rigid import ListPolicy, ShelfPolicy

from .conftest import make_workload

ONLINE_POLICIES = {
    "FCFS-EASY": EasyPolicy,
    "conservative": ConservativePolicy,
    "PV-EASY": PvEasyPolicy,
    "krevat": KrevatScheduler,
}


def failures(*rows):
    """FailureLog from (time, node[, repair_at]) rows."""
    return FailureLog(
        np.array([row[0] for row in rows], dtype=float),
        np.array([row[1] for row in rows]),
        np.array([row[2] if len(row) > 2 else np.nan for row in rows], dtype=float),
    )


def trace(record):
    """(job id, last start, end, kills, preemptions) of every job, by job id."""
    table = record.jobs.sort_values("job_id")
    return [(int(r.job_id), r.started_at, r.finished_at, int(r.kills), int(r.preemptions)) for r in table.itertuples()]


def placements(record) -> dict[int, list[int]]:
    """Each job's nodes (supernodes) in its last attempt, from the attempts table's interval sets."""
    placed = {}
    for row in record.attempts.itertuples():
        nodes = []
        for part in row.resources.split():
            first, _, last = part.partition("-")
            nodes.extend(range(int(first), int(last or first) + 1))
        placed[int(row.job_id)] = nodes
    return placed


# -- online policies on the torus with node failures: the reservation is a partition ---------------

# A ring of 8 supernodes (a 1x1x8 torus: partitions are arcs). Nodes 1 and 5 fail at t = 0 and stay
# down until 50 and 100 (the log's repair times). Free now: {0, 2, 3, 4, 6, 7}, six supernodes but no
# arc of 4. H (4 supernodes, 10 s) arrives at 1: on the torus it must wait for node 1 (arc {0..3} at
# 50); on a cluster of 8 it starts at once. S (2, 30 s, at 2) ends at 32 <= 50: backfilled at once.
# L (2, 100 s, at 3) ends after 50: it may start only where it leaves H an arc of 4 at 50 ({6, 7} does).
RING_ROWS = [(1, 1, 10, 10, 4), (2, 2, 30, 30, 2), (3, 3, 100, 100, 2)]
RING_FAILURES = ((0, 1, 50), (0, 5, 100))


@pytest.mark.parametrize("name", sorted(ONLINE_POLICIES))
def test_the_heads_reservation_on_the_torus_is_a_free_arc_not_a_count_of_free_supernodes(name):
    ring = SchedulingModel(
        make_workload(RING_ROWS, dims=(1, 1, 8)),
        ONLINE_POLICIES[name](),
        Torus((1, 1, 8)),
        failures(*RING_FAILURES),
        downtime="log",
    )
    ring_record = ring.run()
    assert trace(ring_record) == [(1, 50.0, 60.0, 0, 0), (2, 2.0, 32.0, 0, 0), (3, 3.0, 103.0, 0, 0)]
    placed = placements(ring_record)
    assert 5 not in placed[3] and sorted(placed[1]) in ([0, 1, 2, 3], [1, 2, 3, 4], [7, 0, 1, 2])
    cluster = SchedulingModel(
        make_workload(RING_ROWS, dims=(1, 1, 8)), ONLINE_POLICIES[name](), 8, failures(*RING_FAILURES), downtime="log"
    )
    # six free nodes are enough on a cluster: H at 1; S at 2; L waits for H (2 free until 11)
    assert trace(cluster.run()) == [(1, 1.0, 11.0, 0, 0), (2, 2.0, 32.0, 0, 0), (3, 11.0, 111.0, 0, 0)]


# BG/L's 4x4x8 torus. J1 (64, 100 s) starts at 0. J2 (128, the whole machine, 10 s) arrives at 1:
# shadow 100. Supernode 127 fails at 20, repaired at 150 (downtime = log): J2's reservation moves to 150.
# J3 (32, 100 s, at 25) ends at 125 <= 150: backfilled. J4 (16, 200 s, at 26) would end at 226 > 150 and
# J2 needs every supernode: EASY, conservative and Krevat keep it waiting until J2 ends (160 -> 360).
# PV-EASY ventures it at 26 (step 4: idle supernodes take waiting jobs), then at 150 J4 is the shadow
# load keeping J2 out: it is preempted (killed and restarted at 160, as the kill mode says).
BGL_ROWS = [(1, 0, 100, 100, 64), (2, 1, 10, 10, 128), (3, 25, 100, 100, 32), (4, 26, 200, 200, 16)]


@pytest.mark.parametrize("name", sorted(ONLINE_POLICIES))
def test_online_policies_on_the_bgl_torus_wait_for_a_repair_and_pv_easy_preempts_for_the_head(name):
    model = SchedulingModel(make_workload(BGL_ROWS), ONLINE_POLICIES[name](), None, failures((20, 127, 150)), downtime="log")
    record = model.run()
    preempted = 1 if name == "PV-EASY" else 0
    assert trace(record) == [
        (1, 0.0, 100.0, 0, 0),
        (2, 150.0, 160.0, 0, 0),
        (3, 25.0, 125.0, 0, 0),
        (4, 160.0, 360.0, 0, preempted),
    ]
    assert record.failures[["time", "node", "killed_job", "down_until"]].values.tolist() == [[20.0, 127, -1, 150.0]]
    assert model.node_agents[127].downtime == 130.0


def test_a_failure_kills_the_backfilled_job_and_easy_backfills_it_again_from_its_fcfs_position():
    # J1 (64, 100 s) at 0; J2 (128, 10 s) at 1: shadow 100; J3 (32, 50 s) at 25 ends at 75: backfilled.
    # A supernode of J3's partition fails at 40 (transient): J3 is killed and queued again behind J2. It
    # still ends by J2's reservation (40 + 50 = 90 <= 100), so it is backfilled again at once; J2 at 100.
    rows = [(1, 0, 100, 100, 64), (2, 1, 10, 10, 128), (3, 25, 50, 50, 32)]
    clean = SchedulingModel(make_workload(rows), EasyPolicy(), None, None)
    clean_record = clean.run()
    assert trace(clean_record) == [(1, 0.0, 100.0, 0, 0), (2, 100.0, 110.0, 0, 0), (3, 25.0, 75.0, 0, 0)]
    victim = placements(clean_record)[3][0]
    model = SchedulingModel(make_workload(rows), EasyPolicy(), None, failures((40, victim)))
    record = model.run()
    assert trace(record) == [(1, 0.0, 100.0, 0, 0), (2, 100.0, 110.0, 0, 0), (3, 40.0, 90.0, 1, 0)]
    assert record.jobs.set_index("job_id").loc[3, "lost_work"] == 15 * 32  # 15 s of work on 32 supernodes


# -- Krevat's and the balancing scheduler on a cluster with real per-node downtime ----------------------


def test_krevat_and_balancing_on_a_cluster_where_a_node_fails_and_is_repaired_at_the_logs_time():
    # 4 nodes; J1 (2 nodes, 100 s) at 0; node 0 fails at 50 and is repaired at 80 (downtime = log).
    # Krevat places J1 on the lowest free nodes {0, 1}: killed at 50, restarted at once on {2, 3}: ends 150.
    # Balancing with the oracle (a = 1) sees node 0's failure within J1's walltime and takes {2, 3}: 0 -> 100.
    rows = [(1, 0, 100, 100, 2)]
    krevat = SchedulingModel(
        make_workload(rows, dims=(1, 1, 4)), KrevatScheduler(), ClusterPlatform(4), failures((50, 0, 80)), downtime="log"
    )
    record = krevat.run()
    assert trace(record) == [(1, 50.0, 150.0, 1, 0)]
    assert record.failures.values.tolist() == [[50.0, 0, 1, 80.0]] and krevat.node_agents[0].downtime == 30.0
    balancing = KrevatScheduler(BalancingPlacement(OracleConfidencePredictor(1.0)))
    model = SchedulingModel(
        make_workload(rows, dims=(1, 1, 4)), balancing, ClusterPlatform(4), failures((50, 0, 80)), downtime="log"
    )
    record = model.run()
    assert trace(record) == [(1, 0.0, 100.0, 0, 0)]
    assert record.failures.values.tolist() == [[50.0, 0, -1, 80.0]]


def lanl_csv(path, rows):
    """A LANL failure CSV of (system, nodes, node, started, fixed) rows, as the real file's columns."""
    header = "System,nodes,nodenumz,Prob Started,Prob Fixed,Down Time\n"
    path.write_text(header + "".join(f"{s},{n},{node},{start},{fixed},0\n" for s, n, node, start, fixed in rows))
    return path


def swf(tmp_path, rows, header="; MaxProcs: 4\n"):
    """An SWF file from (job_id, submit, runtime, processors, requested_time) rows."""
    lines = [f"{j} {s} 0 {r} {p} -1 -1 {p} {q} -1 1 1 1 -1 1 -1 -1 -1" for j, s, r, p, q in rows]
    path = tmp_path / "trace.swf"
    path.write_text(header + "\n".join(lines) + "\n")
    return path


def test_a_lanl_log_replays_on_a_cluster_with_its_node_mapping_and_real_repair_times(tmp_path):
    # system 20 has 8 nodes here; on a 4-node cluster node k is node k * 4 // 8: LANL node 1 -> cluster
    # node 0. It fails at 60 s and is fixed 2 minutes later (times in m/d/yyyy h:mm, taken as UTC).
    # J1 (4 nodes, 300 s) at 0 on every node: killed at 60, restarted at 180 when node 0 is back: ends 480.
    lanl = lanl_csv(
        tmp_path / "lanl.csv", [(20, 8, 1, "1/1/1970 0:01", "1/1/1970 0:03"), (19, 8, 3, "1/1/1970 0:01", "1/1/1970 0:02")]
    )
    trace_file = swf(tmp_path, [(1, 0, 300, 4, 400)])
    base = dict(platform="cluster", workload=str(trace_file), failures=str(lanl), lanl_system=20, fit_failures=False)
    result = run(Scenario(**base, downtime="log"))
    row = result.jobs.iloc[0]
    assert (row.started_at, row.finished_at, row.kills) == (180.0, 480.0, 1)
    assert result.record.failures[["time", "node", "killed_job", "down_until"]].values.tolist() == [[60.0, 0, 1, 180.0]]
    transient = run(Scenario(**base)).jobs.iloc[0]
    assert (transient.started_at, transient.finished_at) == (60.0, 360.0)  # back at once: restarted at 60


# -- rigid batch heuristics on the torus, and silent errors with fail-stop failures -------------------

# A ring of 8; LPT order: J1 (4 supernodes, 20 s), J0 (4, 10 s), J2 (2, 5 s); J0's first attempt ends in
# a silent error. R-LIST-0: J1 and J0 start at 0 on the two halves; at 10 J0's error is found, it runs
# again on its half (10 -> 20); at 20 J1 ends first (started first), J2 takes 2 of its 4: 20 -> 25.
# R-SHELFFILL-B: shelf 1 = {J1, J0}, T_1 = 20; J0's second attempt ends by 20: refilled at 10.
RING_SET = RigidJobSet(np.array([10.0, 20.0, 5.0]), np.array([4, 4, 2]))
SILENT = [1, 0, 0]
EXPECTED = [
    [0, 1, 0.0, 10.0, 4, "silent_error"],
    [1, 1, 0.0, 20.0, 4, "completed"],
    [0, 2, 10.0, 20.0, 4, "completed"],
    [2, 1, 20.0, 25.0, 2, "completed"],
]


def attempts(record):
    return record.attempts[["job_id", "attempt", "started_at", "ended_at", "nodes", "outcome"]].values.tolist()


@pytest.mark.parametrize(
    "policy", [partial(ListPolicy, 0), partial(ListPolicy, 1), partial(ListPolicy, -1), partial(ShelfPolicy, True, True)]
)
def test_rigid_heuristics_place_jobs_as_partitions_on_the_torus(policy):
    workload = rigid_workload(RING_SET, round_size=partial(round_up_to_feasible_size, (1, 1, 8)))
    model = SchedulingModel(workload, policy(priority="LPT"), Torus((1, 1, 8)), silent_errors=SILENT)
    record = model.run()
    assert attempts(record) == EXPECTED and record.makespan == 25.0
    sizes = set(record.attempts["nodes"])  # whole partitions of the ring: arcs of 1, 2, 4 or 8 supernodes
    assert model.platform.kind == "torus" and sizes <= {1, 2, 4, 8}
    assert all(len(nodes) in sizes for nodes in placements(record).values())


def test_silent_errors_and_fail_stop_failures_in_the_same_run():
    # as above, and supernode 7 fails at 15 (transient), in J0's half: its second attempt (10 -> 20) is
    # killed at 15 and starts again at once (its half is free): 15 -> 25, a success (its one silent error
    # was the first attempt's). R-SHELFFILL-B does not refill it (15 + 10 > T_1 = 20): it waits for shelf 2.
    workload = rigid_workload(RING_SET, round_size=partial(round_up_to_feasible_size, (1, 1, 8)))
    rlist = SchedulingModel(workload, ListPolicy(0, "LPT"), Torus((1, 1, 8)), failures((15, 7)), silent_errors=SILENT)
    record = rlist.run()
    assert attempts(record) == [
        [0, 1, 0.0, 10.0, 4, "silent_error"],
        [0, 2, 10.0, 15.0, 4, "killed"],
        [1, 1, 0.0, 20.0, 4, "completed"],
        [0, 3, 15.0, 25.0, 4, "completed"],
        [2, 1, 20.0, 25.0, 2, "completed"],
    ]
    assert record.counters["silent_errors"] == 1 and record.counters["job_kills"] == 1 and record.makespan == 25.0
    shelf = SchedulingModel(workload, ShelfPolicy(True, True, "LPT"), Torus((1, 1, 8)), failures((15, 7)), silent_errors=SILENT)
    assert shelf.run().makespan == 30.0


def test_a_drawn_batch_with_synthetic_node_failures_runs_from_one_scenario():
    scenario = Scenario(
        platform="torus",
        workload="rigid",
        jobs=30,
        mean_failure_probability=0.3,
        scenarios=2,
        failures="synthetic:20",
        policy="R-LIST-0",
    )
    result = run(scenario)
    assert result.summary["scenarios"] == 2 and result.summary["mean_ratio"] >= 1.0
    assert result.record.counters["failures"] > 0 and result.record.counters["silent_errors"] > 0


# -- what each policy supports ------------------------------------------------------------------------


def test_unsupported_combinations_are_refused_with_a_sentence():
    with pytest.raises(ConfigurationError, match="moldable jobs run on a cluster"):
        run(Scenario(platform="torus", workload="moldable:mix", jobs=5, error_rate=1e-7, policy="LPA"))
    with pytest.raises(ConfigurationError, match="schedules rigid jobs; this workload has moldable jobs"):
        run(Scenario(platform="cluster", nodes=64, workload="moldable:mix", jobs=5, error_rate=1e-7, policy="R-LIST-0"))
    with pytest.raises(ConfigurationError, match="chooses allocations for moldable jobs; this workload has rigid jobs"):
        run(Scenario(platform="cluster", workload="rigid", jobs=5, policy="BATCH"))
    with pytest.raises(ConfigurationError, match="drawn silent errors need a batch workload"):
        run(Scenario(platform="cluster", workload="bundled", mean_failure_probability=0.2, max_jobs=10))


# -- one schedule, two implementations ----------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 40), st.integers(1, 60), st.integers(0, 20), st.integers(1, 8)), min_size=2, max_size=14),
    st.lists(st.tuples(st.integers(0, 60), st.integers(0, 7)), max_size=3),
)
def test_a_cluster_without_identities_schedules_exactly_as_one_with_identities(rows, fails):
    jobs = [(index + 1, submit, runtime, runtime + extra, size) for index, (submit, runtime, extra, size) in enumerate(rows)]
    for policy in (EasyPolicy, PvEasyPolicy, ConservativePolicy):
        counted = SchedulingModel(make_workload(jobs, dims=(1, 1, 8)), policy(), ClusterPlatform(8, identities=False)).run()
        named = SchedulingModel(make_workload(jobs, dims=(1, 1, 8)), policy(), ClusterPlatform(8, identities=True)).run()
        assert trace(counted) == trace(named)


@contextmanager
def columns_bounds(kept_from: int, dropped_below: int):
    """The wait queue keeps its columns from ``kept_from`` waiting jobs on, drops them below ``dropped_below`` (restored after)."""
    kept = wait_queue.COLUMNS_KEPT_FROM, wait_queue.COLUMNS_DROPPED_BELOW
    wait_queue.COLUMNS_KEPT_FROM, wait_queue.COLUMNS_DROPPED_BELOW = kept_from, dropped_below
    try:
        yield
    finally:
        wait_queue.COLUMNS_KEPT_FROM, wait_queue.COLUMNS_DROPPED_BELOW = kept


class InlineEasy(EasyPolicy):
    """EASY without the queue's columns: easy_pass's job-by-job inline scan on a count cluster."""

    queue_columns = None


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 30), st.integers(1, 90), st.integers(0, 40), st.integers(1, 16)), min_size=5, max_size=40),
    st.sampled_from(["fcfs", "sjf"]),
    st.sampled_from([(0, 0), (6, 3)]),
)
def test_the_count_clusters_backfill_scans_start_what_the_plain_scan_starts(rows, order, bounds):
    """Issue 32: easy_pass over the queue's columns and its inline scan on a count cluster (long queues, bursts)
    against the plain scan with node ids."""
    jobs = [(index + 1, submit, runtime, runtime + extra, size) for index, (submit, runtime, extra, size) in enumerate(rows)]

    def replay(policy, identities):
        return SchedulingModel(
            make_workload(jobs, dims=(1, 1, 16)), policy(order), ClusterPlatform(16, identities=identities)
        ).run()

    named = trace(replay(EasyPolicy, True))
    assert trace(replay(InlineEasy, False)) == named
    with columns_bounds(*bounds):  # the columns from the first waiting job on, or made at 6 and dropped below 3
        assert trace(replay(EasyPolicy, False)) == named


class PlainPvEasy(PvEasyPolicy):
    """PV-EASY without the queue's columns or the engine's sums by rank: its job-by-job steps and sorted loads."""

    queue_columns = None
    shadow_load = False


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 30), st.integers(1, 90), st.integers(0, 40), st.integers(1, 16)), min_size=5, max_size=40),
    st.sampled_from([Preemption("kill"), Preemption("checkpoint", 20.0, 3.0), Preemption("suspend", time_cost=2.0)]),
    st.sampled_from([(0, 0), (6, 3)]),
)
def test_pv_easy_over_the_columns_and_sums_by_rank_starts_and_preempts_what_the_plain_pass_does(rows, preemption, bounds):
    """Issue 32: PV-EASY's steps 3-4 over the queue's columns and its shadow load from the sums by rank, against
    the plain pass (sorted loads, job-by-job steps, no fairness columns), preempted jobs back in the middle of the queue."""
    jobs = [(index + 1, submit, runtime, runtime + extra, size) for index, (submit, runtime, extra, size) in enumerate(rows)]

    def replay(policy, record_fairness):
        platform = ClusterPlatform(16, identities=False)
        model = SchedulingModel(
            make_workload(jobs, dims=(1, 1, 16)), policy(), platform, preemption=preemption, record_fairness=record_fairness
        )
        return model.run()

    plain = trace(replay(PlainPvEasy, False))
    assert trace(replay(PvEasyPolicy, True)) == plain
    with columns_bounds(*bounds):  # the columns from the first waiting job on, or made at 6 and dropped below 3
        assert trace(replay(PvEasyPolicy, False)) == plain
        assert trace(replay(PvEasyPolicy, True)) == plain


class GenericEasy(EasyPolicy):
    """EASY through the platform-generic pass on the torus too (the plain reference of the torus planner)."""

    def plan(self, view):
        return easy_pass(self, view, "fcfs", self.placement, together=True)


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 40), st.integers(1, 60), st.integers(0, 20), st.sampled_from([1, 2, 4, 8, 16, 32])),
        min_size=2,
        max_size=12,
    )
)
def test_easy_on_the_torus_planner_agrees_with_the_generic_pass_on_start_times(rows):
    jobs = [(index + 1, submit, runtime, runtime + extra, size) for index, (submit, runtime, extra, size) in enumerate(rows)]
    fast = SchedulingModel(make_workload(jobs, dims=(2, 2, 8)), EasyPolicy(), Torus((2, 2, 8))).run()
    plain = SchedulingModel(make_workload(jobs, dims=(2, 2, 8)), GenericEasy(), Torus((2, 2, 8))).run()
    assert [row[:3] for row in trace(fast)] == [row[:3] for row in trace(plain)]


def test_pv_easy_when_its_steps_leave_the_queue_short_mid_pass_starts_what_the_plain_pass_does():
    """Issue 32: step 3's starts can take the queue below the bound where its columns are dropped; step 4 then
    fills job by job. 200 seeded workloads (columns made at 5 waiting jobs, dropped below 4) against the plain pass."""
    import random

    generator = random.Random(3)
    with columns_bounds(5, 4):
        for _ in range(200):
            rows = [
                (generator.randint(0, 30), generator.randint(1, 90), generator.randint(0, 40), generator.randint(1, 16))
                for _ in range(30)
            ]
            jobs = [
                (index + 1, submit, runtime, runtime + extra, size) for index, (submit, runtime, extra, size) in enumerate(rows)
            ]
            replays = [
                trace(
                    SchedulingModel(make_workload(jobs, dims=(1, 1, 16)), policy(), ClusterPlatform(16, identities=False)).run()
                )
                for policy in (PvEasyPolicy, PlainPvEasy)
            ]
            assert replays[0] == replays[1]
