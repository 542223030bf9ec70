"""A limit on a user's running jobs' node-seconds left (Maui's MAXPS, Slurm's GrpTRESRunMins; issue 77 §1 limits)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from torus_sim.core.errors import ConfigurationError
from torus_sim.core.job import Job
from torus_sim.engine.limits import NodeSecondsLimit
from torus_sim.engine.model import SchedulingModel
from torus_sim.experiments.calibrate import NODE_SECONDS_SPACE, space
from torus_sim.experiments.runner import Scenario, build_model
from torus_sim.experiments.sweep import run_key
from torus_sim.inputs.workload.jobs import Workload
from torus_sim.inputs.workload.sources import BUNDLED_NASA_LOG
from torus_sim.interfaces.commands.calibrate import section_lines
from torus_sim.policies.catalog import ONLINE_POLICIES, POLICIES
from torus_sim.policies.easy import EasyPolicy

CLUSTER_POLICIES = [name for name in ONLINE_POLICIES if name not in ("krevat", "balancing", "tiebreak")]


def _job(job_id: int, at: float, runtime: float, size: int, user: int, walltime: float | None = None) -> Job:
    return Job(job_id, at, runtime=runtime, walltime=runtime if walltime is None else walltime, size=size, user_id=user)


def _run(jobs, nodes: int, limit, policy=None, **engine):
    model = SchedulingModel(
        Workload(jobs=jobs, source="hand-made"), policy or EasyPolicy(), nodes, user_node_seconds=limit, **engine
    )
    return model, model.run().jobs.set_index("job_id")


def _left(table, at: float, user: int, limit: float) -> float:
    """A user's running jobs' node-seconds left at ``at``, each at most ``limit`` (the jobs started by then included)."""
    running = table[(table["started_at"] <= at) & (table["finished_at"] > at) & (table["user_id"] == user)]
    left = (running["size"] * (running["started_at"] + running["walltime"] - at)).clip(lower=0.0)
    return float(left.clip(upper=limit).sum())


def test_a_held_job_starts_at_the_first_pass_its_users_node_seconds_left_make_room():
    # 16 nodes, 1,000 node-seconds per user. User 1 at 0: job 1 (2 nodes x 300 s = 600), job 2 (1 x 500 = 500),
    # job 3 (1 x 200 = 200). 600 + 500 > 1000: job 2 is held, and the walk goes on: job 3 fits (800). The count falls
    # as the jobs run: at 150 s (user 2's job 4 comes: a pass) jobs 1 and 3 have 2 x 150 + 50 = 350 left, and job 2's
    # 500 fits. User 3's job 5 (4 x 400 = 1600) asks more than the limit alone: it starts at once (its user runs
    # nothing), counting the limit until its 4 x (400 - t) falls below; job 6 (1 x 100) waits for the pass at 200 s
    # (job 3's end), where job 5 has 800 left
    jobs = [
        _job(1, 0, 300, 2, 1),
        _job(2, 0, 500, 1, 1),
        _job(3, 0, 200, 1, 1),
        _job(4, 150, 10, 1, 2),
        _job(5, 0, 400, 4, 3),
        _job(6, 0, 100, 1, 3),
    ]
    unlimited = _run([job.fresh_copy() for job in jobs], 16, None)[1]
    assert set(unlimited["started_at"].tolist()) == {0.0, 150.0}  # without the limit all but job 4 start at 0
    model, table = _run(jobs, 16, 1000.0)
    assert table["started_at"].sort_index().to_dict() == {1: 0.0, 2: 150.0, 3: 0.0, 4: 150.0, 5: 0.0, 6: 200.0}
    assert model.scheduler.limits.held == 0 and model.scheduler.limits.held_ever == 2


def test_the_requested_time_left_counts_not_the_runtime():
    # 1,000 node-seconds. Job 1 asks 900 s on one node and runs 500 s; job 2 (1 x 300 s) of the same user comes at 10 s
    # and fits only once job 1 has at most 700 s of its request left: not at the pass of job 3's arrival (100 s: 800
    # left), at job 4's (250 s: 650 left). Counted by the runtime left, it would start at 100 s (400 + 300)
    jobs = [_job(1, 0, 500, 1, 1, walltime=900), _job(2, 10, 300, 1, 1), _job(3, 100, 10, 1, 2), _job(4, 250, 10, 1, 2)]
    table = _run(jobs, 8, 1000.0)[1]
    assert table["started_at"].sort_index().to_dict() == {1: 0.0, 2: 250.0, 3: 100.0, 4: 250.0}


def test_a_job_a_window_holds_counts_nothing_and_the_users_next_job_starts():
    # 4 nodes, 500 node-seconds per user, a drained window at 1000-1100 s. Job 1 (1 x 2000 s) would reach into the
    # window and asks more than the limit: the window holds it, and it takes none of the limit, so job 2 (1 x 100 s)
    # starts at once; job 1 runs alone after the window
    jobs = [_job(1, 0, 2000, 1, 1), _job(2, 1, 100, 1, 1)]
    model = SchedulingModel(
        Workload(jobs=jobs, source="hand-made"), EasyPolicy(), 4, user_node_seconds=500.0, maintenance=[(1000.0, 1100.0)]
    )
    assert model.run().jobs.set_index("job_id")["started_at"].to_dict() == {1: 1100.0, 2: 1.0}


def test_with_a_job_limit_the_node_seconds_apply_after_it():
    # two running jobs per user and 700 node-seconds; jobs 1-3 (1 x 400 s) at 0, job 4 (1 x 100 s) at 100 s. The job
    # limit lets in jobs 1 and 2, the node-seconds only job 1 (800 > 700): job 2 keeps its slot, so job 3 waits for a
    # slot. At 100 s (job 4 comes) job 1 has 300 left: job 2 starts (700); at 400 s (job 1 ends) job 3 takes its slot
    # (job 2: 100 left + 400); at 500 s (job 2 ends) job 4 (job 3: 300 left + 100)
    jobs = [_job(index, 0, 400, 1, 1) for index in (1, 2, 3)] + [_job(4, 100, 100, 1, 1)]
    starts = {}
    for node_seconds in (None, 700.0):
        model = SchedulingModel(
            Workload(jobs=[job.fresh_copy() for job in jobs], source="hand-made"),
            EasyPolicy(),
            8,
            user_limits=(2, None),
            user_node_seconds=node_seconds,
        )
        starts[node_seconds] = model.run().jobs.set_index("job_id")["started_at"].sort_index().to_dict()
    assert starts[None] == {1: 0.0, 2: 0.0, 3: 400.0, 4: 400.0}
    assert starts[700.0] == {1: 0.0, 2: 100.0, 3: 400.0, 4: 500.0}


@settings(max_examples=40, deadline=None)
@given(
    submits=st.lists(st.integers(0, 300), min_size=1, max_size=24),
    sizes=st.lists(st.integers(1, 6), min_size=24, max_size=24),
    runtimes=st.lists(st.integers(1, 120), min_size=24, max_size=24),
    users=st.lists(st.integers(0, 2), min_size=24, max_size=24),
    limit=st.sampled_from([60.0, 150.0, 400.0, 1000.0]),
    interval=st.sampled_from([None, 30.0]),
    policy=st.sampled_from(CLUSTER_POLICIES),
)
def test_no_user_ever_passes_its_node_seconds_under_any_cluster_policy(submits, sizes, runtimes, users, limit, interval, policy):
    jobs = [
        _job(index + 1, float(at), float(runtimes[index]), sizes[index], users[index]) for index, at in enumerate(sorted(submits))
    ]
    model, table = _run(jobs, 8, limit, POLICIES.make(policy), sched_min_interval=interval)
    assert len(table) == len(jobs) and table["finished_at"].notna().all()  # every job ran: nothing held for ever
    for job_id, row in table.iterrows():  # at each start: the user's jobs running then, the new one included
        left = _left(table, row["started_at"], row["user_id"], limit)
        alone = (
            len(
                table[
                    (table["started_at"] <= row["started_at"])
                    & (table["finished_at"] > row["started_at"])
                    & (table["user_id"] == row["user_id"])
                ]
            )
            == 1
        )
        assert left <= limit + 1e-6 or alone, (job_id, left)
    assert model.scheduler.limits.held == 0


def test_the_limit_is_refused_below_zero_and_leaves_earlier_keys_unset_and_holds_jobs_on_a_real_log():
    for limit in (0, -1.0, math.inf, math.nan, True, "1000"):
        with pytest.raises(ConfigurationError, match="max_node_seconds_per_user"):
            NodeSecondsLimit(limit, key=lambda job: job.rank)
    with pytest.raises(ValueError, match="max_node_seconds_per_user"):
        Scenario(workload=str(BUNDLED_NASA_LOG), platform="cluster", policy="FCFS-EASY", max_node_seconds_per_user=0)
    plain = Scenario(workload=str(BUNDLED_NASA_LOG), platform="cluster", policy="FCFS-EASY", max_jobs=2000)
    limited = plain.replace(max_node_seconds_per_user=3.6e5)
    assert plain.max_node_seconds_per_user is None and run_key(plain) != run_key(limited)
    model = build_model(limited, {})
    table = model.run().jobs
    assert model.scheduler.limits.held_ever > 0 and model.scheduler.limits.held == 0
    for _, row in table.iloc[::25].iterrows():
        left = _left(table, row["started_at"], row["user_id"], 3.6e5)
        running = table[
            (table["started_at"] <= row["started_at"])
            & (table["finished_at"] > row["started_at"])
            & (table["user_id"] == row["user_id"])
        ]
        assert left <= 3.6e5 + 1e-6 or len(running) == 1


def test_the_calibration_fits_it_only_where_the_site_gives_it():
    plain = Scenario(workload=str(BUNDLED_NASA_LOG), platform="cluster", policy="FCFS-EASY")
    assert "max_node_seconds_per_user" not in space(plain, 0.5)
    fitted = space(plain.replace(max_node_seconds_per_user=5.4e6), 0.5)
    assert fitted["max_node_seconds_per_user"] == NODE_SECONDS_SPACE["max_node_seconds_per_user"]
    assert "[limits]\nmax_node_seconds_per_user = 5400000.0" in "\n".join(section_lines({"max_node_seconds_per_user": 5.4e6}))


def test_a_job_a_window_let_in_without_counting_counts_once_the_window_ends():
    # 4 nodes, 500 node-seconds per user, a drained window at 1000-1100 s. Job 1 (1 x 2000 s, at 0) would reach into the
    # window: let in without counting, the window holds it. Job 2 (1 x 400 s) comes in the window: held by it too. At
    # the window's end both are let in by the window, but not both by the limit: job 1 (first) counts the limit (its
    # 2,000 s ask more), so job 2 waits until job 1 has at most 100 node-seconds left (3,000 s)
    jobs = [_job(1, 0, 2000, 1, 1), _job(2, 1050, 400, 1, 1), _job(3, 2999, 1, 1, 2), _job(4, 3000, 1, 1, 2)]
    model = SchedulingModel(
        Workload(jobs=jobs, source="hand-made"), EasyPolicy(), 4, user_node_seconds=500.0, maintenance=[(1000.0, 1100.0)]
    )
    table = model.run().jobs.set_index("job_id")
    assert table["started_at"].sort_index().to_dict() == {1: 1100.0, 2: 3000.0, 3: 2999.0, 4: 3000.0}


def test_under_the_multifactor_priority_no_user_passes_the_limit_on_a_real_log():
    # the queue in a priority order that age and size change at every recomputation, a cycle of 30 s: at every start
    # the user's running jobs' node-seconds left stay within the limit (or the job runs alone)
    scenario = Scenario(
        workload=str(BUNDLED_NASA_LOG),
        platform="cluster",
        policy="FCFS-EASY",
        max_jobs=3000,
        priority_weight_age=1.0,
        priority_weight_job_size=3.0,
        priority_max_age=3600.0,
        priority_calc_period=300.0,
        max_node_seconds_per_user=2e5,
        sched_min_interval=30.0,
    )
    model = build_model(scenario, {})
    table = model.run().jobs
    assert model.scheduler.limits.held_ever > 0 and model.scheduler.limits.held == 0
    for _, row in table.iloc[::10].iterrows():
        running = table[
            (table["started_at"] <= row["started_at"])
            & (table["finished_at"] > row["started_at"])
            & (table["user_id"] == row["user_id"])
        ]
        assert _left(table, row["started_at"], row["user_id"], 2e5) <= 2e5 + 1e-6 or len(running) == 1


def test_a_recomputed_priority_lets_in_the_users_job_that_now_comes_first():
    # 4 nodes, all held by user 2's job 1 until 5,000 s; 10,100 node-seconds per user; age (maximum 1,000 s) and size
    # (nodes / 4) weigh 1 each, recomputed every 100 s. User 1's job 2 (1 node x 10,000 s, at 0) and job 3 (2 nodes x
    # 5,000 s, at 500) each fit the limit alone, not together. At 500 s job 2 comes first (0.5 + 0.25 against 0 + 0.5):
    # it is let in, job 3 held, with no job of the user running for thousands of seconds. At 1,300 s (job 4 comes) job
    # 3 comes first (age 0.8 + 0.5 against job 2's capped 1 + 0.25): the reordered walk lets job 3 in instead, which
    # starts when the machine frees at 5,000 s; job 2 waits until job 3's count falls to 100 (its end, 10,000 s)
    from torus_sim.engine.multifactor import PriorityWeights

    jobs = [_job(1, 0, 5000, 4, 2), _job(2, 0, 10000, 1, 1), _job(3, 500, 5000, 2, 1), _job(4, 1300, 10, 1, 3)]
    model = SchedulingModel(
        Workload(jobs=jobs, source="hand-made"),
        EasyPolicy(),
        4,
        user_node_seconds=10100.0,
        priority=PriorityWeights(age=1.0, job_size=1.0, max_age=1000.0, calc_period=100.0),
    )
    table = model.run().jobs.set_index("job_id")
    assert table["started_at"].sort_index().to_dict() == {1: 0.0, 2: 10000.0, 3: 5000.0, 4: 5000.0}
