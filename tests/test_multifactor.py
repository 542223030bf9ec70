"""Slurm's multifactor job priority (issue 77 §1): the queue ordered by age, fair share and size, recomputed every period."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from torus_sim.core.errors import ConfigurationError
from torus_sim.core.job import Job
from torus_sim.engine.model import SchedulingModel
from torus_sim.engine.multifactor import Multifactor, PriorityWeights, parse_fairshare_windows
from torus_sim.experiments.runner import Scenario, build_model
from torus_sim.experiments.sweep import run_key
from torus_sim.inputs.workload.jobs import Workload
from torus_sim.inputs.workload.sources import BUNDLED_NASA_LOG
from torus_sim.policies.catalog import ONLINE_POLICIES, POLICIES
from torus_sim.policies.easy import EasyPolicy
from torus_sim.policies.rigid import ListPolicy

from .conftest import SHARED_DATA

CLUSTER_POLICIES = [name for name in ONLINE_POLICIES if name not in ("krevat", "balancing", "tiebreak", "PV-EASY")]
"""The cluster policies that keep FCFS's queue order (PV-EASY's preemptions and shadow load go by submission rank)."""


def _job(job_id: int, at: float, runtime: float, size: int, user: int) -> Job:
    return Job(job_id, at, runtime=runtime, walltime=runtime, size=size, user_id=user)


def _starts(jobs, nodes: int, priority=None, limits=None, policy=None) -> dict[int, float]:
    model = SchedulingModel(
        Workload(jobs=jobs, source="hand-made"), policy or EasyPolicy(), nodes, priority=priority, user_limits=limits
    )
    return model.run().jobs.set_index("job_id")["started_at"].to_dict()


def test_the_fair_share_factor_is_two_to_the_minus_usage_over_shares():
    # two users, 3 node-hours against 1: U = 0.75 and 0.25 of the usage, S = 1/2 each: F = 2^-1.5 and 2^-0.5
    priority = Multifactor(PriorityWeights(fairshare=1.0, half_life=1e12), capacity=4)
    heavy, light = _job(1, 0, 3600, 3, 1), _job(2, 0, 3600, 1, 2)
    for job in (heavy, light):
        priority.waiting(job)
        priority.started(job, job.size, 0.0)
    priority.stopped(1, 3600.0)
    priority.stopped(2, 3600.0)
    priority.recompute(3600.0)
    assert priority.key(_job(3, 10, 1, 1, 1))[0] == pytest.approx(-(2**-1.5))
    assert priority.key(_job(4, 10, 1, 1, 2))[0] == pytest.approx(-(2**-0.5))
    assert priority.key(_job(5, 10, 1, 1, 9))[0] == -1.0  # a user who used nothing


def test_maui_fairshare_windows_weigh_the_last_windows_and_forget_older_ones():
    # windows of 100 s, two of them counted, the one before weighted 0.5: user 1 holds 10 nodes in window 0 (1,000
    # node-s), user 2 10 nodes for 50 s of window 1 (500). At 150 (window 1): 0.5 x 1,000 against 500, equal shares:
    # F = 2^-(0.5 x 2) = 0.5 each. At 250 (window 2): window 0 is forgotten, user 2's counts 0.5 x 500: user 1 F = 1,
    # user 2 F = 2^-(1 x 2) = 0.25
    priority = Multifactor(PriorityWeights(fairshare=1.0, fairshare_windows=(100.0, 2, 0.5)), capacity=10)
    first, second = _job(1, 0, 100, 10, 1), _job(2, 0, 50, 10, 2)
    for job in (first, second):
        priority.waiting(job)
    priority.started(first, 10, 0.0)
    priority.stopped(1, 100.0)
    priority.started(second, 10, 100.0)
    priority.stopped(2, 150.0)
    priority.recompute(150.0)
    assert priority.key(_job(3, 10, 1, 1, 1))[0] == pytest.approx(-0.5)
    assert priority.key(_job(4, 10, 1, 1, 2))[0] == pytest.approx(-0.5)
    priority.recompute(250.0)
    assert priority.key(_job(5, 10, 1, 1, 1))[0] == pytest.approx(-1.0)
    assert priority.key(_job(6, 10, 1, 1, 2))[0] == pytest.approx(-0.25)
    assert parse_fairshare_windows("86400:7:0.8") == (86400.0, 7, 0.8)
    for bad in ("86400:7", "0:7:0.8", "86400:1.5:0.8", "86400:7:1.5", "a:b:c"):
        with pytest.raises(ValueError, match="FSINTERVAL"):
            parse_fairshare_windows(bad)
    with pytest.raises(ConfigurationError, match="FSINTERVAL"):
        Scenario.make(priority_weight_fairshare=1.0, priority_fairshare_windows="86400:0:0.8")
    with pytest.raises(ConfigurationError, match="priority_fairshare_windows needs priority_weight_fairshare"):
        build_model(Scenario.make(workload=str(BUNDLED_NASA_LOG), max_jobs=20, priority_fairshare_windows="86400:7:0.8"))
    plain = Scenario.make(workload=str(BUNDLED_NASA_LOG), platform="cluster", max_jobs=400, priority_weight_fairshare=100.0)
    windowed = plain.replace(priority_fairshare_windows="3600:24:0.9")
    assert run_key(plain) != run_key(windowed)
    assert len(build_model(windowed).run().jobs) == 400


def test_fair_share_puts_the_light_user_first_at_the_next_recomputation():
    # one node: user 1's first job runs 0-1000, its second arrives at 10, user 2's at 20; FCFS runs them in order;
    # with fair share the pass at 1000 recomputes (a 300 s period has passed): user 2 used nothing and goes first
    jobs = [_job(1, 0, 1000, 1, 1), _job(2, 10, 100, 1, 1), _job(3, 20, 100, 1, 2)]
    assert _starts([job.fresh_copy() for job in jobs], 1) == {1: 0.0, 2: 1000.0, 3: 1100.0}
    assert _starts(jobs, 1, PriorityWeights(fairshare=1000.0)) == {1: 0.0, 2: 1100.0, 3: 1000.0}


def test_the_size_factor_favours_large_jobs_or_small_ones():
    jobs = [_job(1, 0, 1000, 4, 1), _job(2, 10, 100, 1, 1), _job(3, 20, 100, 4, 1)]
    assert _starts([job.fresh_copy() for job in jobs], 4, PriorityWeights(job_size=1.0)) == {1: 0.0, 3: 1000.0, 2: 1100.0}
    small = PriorityWeights(job_size=1.0, favor_small=True)
    assert _starts(jobs, 4, small) == {1: 0.0, 2: 1000.0, 3: 1000.0 + 100.0}


@settings(max_examples=30, deadline=None)
@given(
    submits=st.lists(st.integers(0, 3000), min_size=1, max_size=24),
    sizes=st.lists(st.integers(1, 6), min_size=24, max_size=24),
    runtimes=st.lists(st.integers(1, 900), min_size=24, max_size=24),
    max_age=st.sampled_from([60.0, 600.0, 1e6]),
    policy=st.sampled_from(CLUSTER_POLICIES),
)
def test_age_alone_or_zero_weights_keep_the_fcfs_schedule(submits, sizes, runtimes, max_age, policy):
    # age grows with waiting and ties (jobs past the maximum age) go to the earlier submission: FCFS's order
    jobs = [_job(i + 1, float(at), float(runtimes[i]), sizes[i], i % 3) for i, at in enumerate(sorted(submits))]
    plain = _starts([job.fresh_copy() for job in jobs], 8, policy=POLICIES.make(policy))
    assert (
        _starts([job.fresh_copy() for job in jobs], 8, PriorityWeights(age=5.0, max_age=max_age), policy=POLICIES.make(policy))
        == plain
    )
    assert _starts(jobs, 8, PriorityWeights(), policy=POLICIES.make(policy)) == plain


@settings(max_examples=30, deadline=None)
@given(
    submits=st.lists(st.integers(0, 3000), min_size=1, max_size=24),
    sizes=st.lists(st.integers(1, 6), min_size=24, max_size=24),
    runtimes=st.lists(st.integers(1, 900), min_size=24, max_size=24),
    users=st.lists(st.integers(0, 3), min_size=24, max_size=24),
    policy=st.sampled_from(CLUSTER_POLICIES),
    shares=st.sampled_from(["equal", "submitted"]),
)
@pytest.mark.parametrize("age_from", ["submit", "eligible"])
def test_fair_share_with_limits_runs_every_job_within_the_limits(submits, sizes, runtimes, users, policy, shares, age_from):
    jobs = [_job(i + 1, float(at), float(runtimes[i]), sizes[i], users[i]) for i, at in enumerate(sorted(submits))]
    weights = PriorityWeights(
        age=1.0, fairshare=10.0, job_size=1.0, half_life=3600.0, calc_period=60.0, age_from=age_from, shares=shares
    )
    model = SchedulingModel(Workload(jobs=jobs, source="drawn"), POLICIES.make(policy), 8, priority=weights, user_limits=(2, 6))
    table = model.run().jobs
    assert len(table) == len(jobs) and table["finished_at"].notna().all()
    for at in table["started_at"].unique():
        running = table[(table["started_at"] <= at) & (table["finished_at"] > at)]
        assert (running.groupby("user_id").size() <= 2).all()
        sizes_by_user = running.groupby("user_id")["size"].agg(["sum", "size"])
        assert ((sizes_by_user["sum"] <= 6) | (sizes_by_user["size"] == 1)).all()


def test_the_priority_is_refused_with_a_batch_policy_a_policy_of_its_own_order_and_bad_settings():
    jobs = [Job(1, 0.0, runtime=10.0, walltime=10.0, size=1)]
    with pytest.raises(ConfigurationError, match="priority: .* plans after each attempt end"):
        SchedulingModel(Workload(jobs=jobs, source="one", kind="batch"), ListPolicy(), 4, priority=PriorityWeights(age=1.0))

    class Shortest(EasyPolicy):
        def queue_key(self, job):
            return (job.walltime, job.job_id)

    with pytest.raises(ConfigurationError, match="orders its own queue"):
        SchedulingModel(Workload(jobs=jobs, source="one"), Shortest(), 4, priority=PriorityWeights(age=1.0))
    with pytest.raises(ConfigurationError, match="PV-EASY preempts and reserves by submission rank"):
        SchedulingModel(Workload(jobs=jobs, source="one"), POLICIES.make("PV-EASY"), 4, priority=PriorityWeights(age=1.0))
    for bad in ({"age": -1.0}, {"fairshare": math.nan}, {"max_age": 0.0}, {"half_life": -5.0}, {"calc_period": True}):
        with pytest.raises(ConfigurationError, match="priority_"):
            PriorityWeights(**bad)
    with pytest.raises(ValueError, match="priority_weight_fairshare"):
        Scenario(workload=str(BUNDLED_NASA_LOG), platform="cluster", policy="FCFS-EASY", priority_weight_fairshare="much")


def test_the_priority_is_a_scenario_section_that_leaves_earlier_keys_and_the_torus_runs_it():
    plain = Scenario(workload=str(BUNDLED_NASA_LOG), platform="cluster", policy="FCFS-EASY", max_jobs=1500)
    assert run_key(plain) != run_key(plain.replace(priority_max_age=3600.0))  # every setting makes another run
    weighted = plain.replace(priority_weight_fairshare=100.0)
    assert run_key(weighted) != run_key(plain) != run_key(weighted.replace(priority_calc_period=60.0))
    model = build_model(weighted, {})
    model.run()
    assert model.scheduler.priority.recomputed > 10
    torus = Scenario(workload=str(BUNDLED_NASA_LOG), platform="torus", policy="krevat", max_jobs=3000)
    waits = {}
    for name, scenario in (("fcfs", torus), ("fair", torus.replace(priority_weight_fairshare=100.0))):
        table = build_model(scenario, {}).run().jobs
        waits[name] = (table["started_at"] - table["submitted_at"]).mean()
    assert waits["fcfs"] != waits["fair"] and all(math.isfinite(wait) for wait in waits.values())


def test_greedy_never_starts_its_committed_job_once_a_limit_holds_it():
    # found by the property above: greedy commits to user 1's job 5 at t = 0 (it does not fit); at t = 1 the
    # larger job 6 of the same user goes first by size and job 5 is held out of the queue: greedy drops it
    sizes, users = [1, 1, 1, 3, 5, 6], [0, 0, 0, 0, 1, 1]
    jobs = [_job(i + 1, float(i == 5), 1.0, sizes[i], users[i]) for i in range(6)]
    weights = PriorityWeights(age=1.0, fairshare=10.0, job_size=1.0, half_life=3600.0, calc_period=60.0)
    model = SchedulingModel(Workload(jobs=jobs, source="drawn"), POLICIES.make("greedy"), 8, priority=weights, user_limits=(2, 6))
    table = model.run().jobs.set_index("job_id")
    assert table["finished_at"].notna().all()
    assert table.loc[6, "started_at"] <= table.loc[5, "started_at"]


def test_a_recomputation_rekeys_a_lone_waiting_job_before_later_jobs_are_keyed():
    # 4 nodes: two 2-node jobs run from 0 (to 400 and 600); job 3 (3 nodes, submitted at 10) waits alone at the
    # recomputation at 400, where it reaches the maximum age (390 s): priority 1 + 3/4; job 4 (4 nodes) comes at 450
    # with 0 + 4/4. At 600 (no recomputation due) job 3 goes first: its key is the one of 400, not of its arrival
    jobs = [_job(1, 0, 400, 2, 1), _job(2, 0, 600, 2, 1), _job(3, 10, 100, 3, 2), _job(4, 450, 100, 4, 3)]
    starts = _starts(jobs, 4, PriorityWeights(age=1.0, job_size=1.0, max_age=390.0), policy=POLICIES.make("FCFS"))
    assert starts == {1: 0.0, 2: 0.0, 3: 600.0, 4: 700.0}


def test_the_queue_factor_is_the_tier_over_the_highest_and_a_higher_queue_goes_first():
    from torus_sim.inputs.workload.queues import parse_queue_tiers, queue_factors

    tiers = parse_queue_tiers("1:4, 2:3,3:2,4:1")
    factors = queue_factors([10, 11, 12, 13], [1, 3, 9, 4], tiers)
    assert factors == {10: 1.0, 11: 0.5, 13: 0.25}  # queue 9 has no tier: no factor
    priority = Multifactor(PriorityWeights(queue=2.0), capacity=4, queue_factors=factors)
    assert priority.key(_job(10, 0, 1, 1, 1))[0] == -2.0 and priority.key(_job(12, 0, 1, 1, 1))[0] == 0.0
    # one node busy to 1000; job 2 (normal queue) waits from 10, job 3 (express) from 20: express goes first
    jobs = [_job(1, 0, 1000, 1, 1), _job(2, 10, 100, 1, 2), _job(3, 20, 100, 1, 3)]
    model = SchedulingModel(
        Workload(jobs=jobs, source="hand-made"),
        EasyPolicy(),
        1,
        priority=PriorityWeights(queue=1.0),
        queue_factors={2: 0.5, 3: 1.0},
    )
    assert model.run().jobs.set_index("job_id")["started_at"].to_dict() == {1: 0.0, 3: 1000.0, 2: 1100.0}
    for bad in ("1:4,1:2", "express:4", "1:-1", "1:0,2:0", "1"):
        with pytest.raises(ValueError, match="priority_queue_tiers"):
            parse_queue_tiers(bad)
    with pytest.raises(ConfigurationError, match="queue factor"):
        Multifactor(PriorityWeights(queue=1.0), capacity=4)


@pytest.mark.skipif(not (SHARED_DATA / "swf").is_dir(), reason=f"needs the logs under {SHARED_DATA}")
def test_the_queue_factor_reads_each_jobs_queue_from_its_log_and_is_refused_half_given():
    scenario = Scenario(workload="pwa:SDSC-SP2", platform="cluster", policy="FCFS-EASY", max_jobs=2000, priority_weight_queue=3.0)
    with pytest.raises(ConfigurationError, match="needs priority_queue_tiers"):
        build_model(scenario, {})
    with pytest.raises(ValueError, match="priority_queue_tiers"):
        scenario.replace(priority_queue_tiers="0:x")
    tiered = scenario.replace(priority_queue_tiers="1:5,2:4,3:3,4:2,5:1")  # express, high, normal, low, standby
    model = build_model(tiered, {})
    factors = model.scheduler.priority._queue_factors
    assert len(factors) == 5244 + 9965 + 30141 + 14009 + 283  # the log's lines in queues 1-5 (0 and 6 have no tier)
    assert sorted(set(factors.as_dict().values())) == [0.2, 0.4, 0.6, 0.8, 1.0]
    assert run_key(tiered) != run_key(scenario.replace(priority_weight_queue=None))
    assert build_model(tiered.replace(priority_weight_queue=None), {}).scheduler.priority is None  # tiers alone: no factor
    build_model(tiered.replace(priority_queue_tiers="0:5,1:5"), {})  # queue 0: in the header, not in the lines
    with pytest.raises(
        ConfigurationError, match=r"names queue 9, which SDSC-SP2.* does not have \(its queues: 0, 1, 2, 3, 4, 5, 6\)"
    ):
        build_model(tiered.replace(priority_queue_tiers="1:5,9:1"), {})
    with pytest.raises(ConfigurationError, match="not a log file"):
        build_model(
            Scenario(
                workload="lublin",
                platform="cluster",
                nodes=64,
                policy="FCFS-EASY",
                max_jobs=100,
                priority_weight_queue=1.0,
                priority_queue_tiers="1:1",
            ),
            {},
        )
    model.run()


def test_a_fair_share_by_group_charges_a_users_usage_to_every_user_of_the_group():
    # one node: user 1 runs 0-1000; users 2 and 3 wait from 10 and 20, neither has used anything: by user, job 2 goes
    # first (the earlier); by group, user 2 shares group 7 with user 1, whose usage puts user 3's group 8 first
    jobs = [_job(1, 0, 1000, 1, 1), _job(2, 10, 100, 1, 2), _job(3, 20, 100, 1, 3)]
    weights = PriorityWeights(fairshare=1000.0)
    assert _starts([job.fresh_copy() for job in jobs], 1, weights) == {1: 0.0, 2: 1000.0, 3: 1100.0}
    model = SchedulingModel(
        Workload(jobs=jobs, source="hand-made"), EasyPolicy(), 1, priority=weights, accounts={1: 7, 2: 7, 3: 8}
    )
    assert model.run().jobs.set_index("job_id")["started_at"].to_dict() == {1: 0.0, 3: 1000.0, 2: 1100.0}


@pytest.mark.skipif(not (SHARED_DATA / "swf").is_dir(), reason=f"needs the logs under {SHARED_DATA}")
def test_the_groups_of_a_fair_share_by_group_are_the_logs():
    scenario = Scenario(
        workload="pwa:SDSC-SP2", platform="cluster", policy="FCFS-EASY", max_jobs=1500, priority_weight_fairshare=10.0
    )
    grouped = scenario.replace(priority_fairshare_by="group")
    assert run_key(grouped) != run_key(scenario) and run_key(scenario) == run_key(scenario.replace(priority_fairshare_by="user"))
    model = build_model(grouped, {})
    accounts = model.scheduler.priority._accounts
    assert len(accounts) == 437 and len(set(accounts.values())) <= 158  # SDSC-SP2's users, in its 158 groups
    assert build_model(scenario, {}).scheduler.priority._accounts is None
    model.run()


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.tuples(st.integers(-50, 10**7), st.integers(-3, 9)), max_size=60),
    st.lists(st.integers(-60, 10**7 + 10), max_size=20),
)
def test_job_values_answer_as_the_dict_of_their_pairs(pairs, asked):
    """JobValues (the log's queue or queue factor of each job, held as arrays: 87 MiB for ten million jobs against
    625 MiB as a dict, tracemalloc) answers every id as a dict built from the same pairs, an id given twice keeping its
    last value, dense ids (an array by id) and scattered ones (bisection) alike."""
    import numpy as np

    from torus_sim.inputs.workload.queues import JobValues

    ids = [job_id for job_id, _ in pairs]
    values = JobValues(np.array(ids, dtype=np.int64), np.array([value for _, value in pairs], dtype=np.int64))
    expected = dict(pairs)
    assert len(values) == len(expected) and values.as_dict() == expected
    for job_id in asked + ids:
        assert values.get(job_id, "none") == expected.get(job_id, "none")
        assert type(values.get(job_id, 0)) is int


def test_the_logs_queue_factors_as_arrays_are_the_plain_ones():
    """SDSC-SP2's queue factors by job (its header's tiers), read as arrays, are :func:`queue_factors`' dict."""
    import numpy as np

    from torus_sim.inputs.workload.queues import QUEUE_FIELDS, job_queue_factors, job_queues, parse_queue_tiers, queue_factors
    from torus_sim.inputs.workload.swf import read_swf

    log = read_swf(SHARED_DATA / "swf" / "SDSC-SP2-1998-4.2-cln.swf.gz", QUEUE_FIELDS)
    tiers = "0:5,1:5,2:4,3:3,4:2,5:1"
    ids, queues = log.column("job_id").astype(int), log.column("queue").astype(int)
    assert job_queue_factors(tiers, log).as_dict() == queue_factors(ids, queues, parse_queue_tiers(tiers))
    assert job_queues(log).as_dict() == dict(zip(ids.tolist(), queues.tolist(), strict=True))
    assert job_queues(log).get(int(np.max(ids)) + 1, -1) == -1


@settings(max_examples=100, deadline=None)
@given(
    weights=st.tuples(*(st.sampled_from([0.0, 0.5, 1.0, 16.6]) for _ in range(4)), st.booleans()),
    max_age=st.sampled_from([600.0, 3615.0, 86400.0]),
    jobs=st.lists(
        st.tuples(st.integers(0, 20000), st.integers(1, 128), st.integers(0, 3), st.integers(0, 4)), min_size=1, max_size=30
    ),
    at=st.integers(0, 25000),
)
def test_a_jobs_key_is_slurms_sum_of_weighted_factors_one_by_one_or_all_at_once(weights, max_age, jobs, at):
    # Slurm's multifactor priority: w_age x min(age, max age) / max age + w_fairshare x 2^(-U/S) + w_size x share of
    # the machine (1 - share favouring small jobs) + w_queue x tier / highest tier, a job's age 0 before it was
    # submitted; the key is (-priority, submit time, id). A weight of 0 leaves its factor out
    w_age, w_fairshare, w_size, w_queue, small = weights
    factors = {i + 1: tier / 4 for i, (*_rest, tier) in enumerate(jobs)}
    weighed = PriorityWeights(
        age=w_age, fairshare=w_fairshare, job_size=w_size, queue=w_queue, max_age=max_age, favor_small=small
    )
    priority = Multifactor(weighed, 128, factors)
    waiting = [_job(i + 1, float(submit), 100.0, size, user) for i, (submit, size, user, _tier) in enumerate(jobs)]
    for job in waiting:
        priority.waiting(job)
    for job in waiting[::3]:  # some usage: the users' fair shares differ
        priority.started(job, job.size, float(job.submitted_at))
        priority.stopped(job.job_id, float(job.submitted_at) + 500.0 * job.size)
    priority.recompute(float(at))
    for job in waiting:
        priority.waiting(job)
    keys = priority.keys(waiting)
    assert keys == [priority.key(job) for job in waiting]
    for job, (minus, submitted, job_id) in zip(waiting, keys, strict=True):
        share = min(job.size / 128, 1.0)
        expected = (
            w_age * min(max(at - job.submitted_at, 0.0), max_age) / max_age
            + w_fairshare * priority._fair_share(job.user_id)
            + w_size * (1.0 - share if small else share)
            + w_queue * factors[job.job_id]
        )
        assert -minus == pytest.approx(expected, rel=1e-12, abs=1e-12)
        assert (submitted, job_id) == (job.submitted_at, job.job_id)


def test_a_job_a_limit_held_ages_from_when_it_is_let_in_with_ages_from_eligibility():
    # 2 nodes, one running job per user, the age alone (a maximum age of 10,000 s, recomputed every second): user 1's
    # jobs 1 and 2 come at 0 (job 2 held behind job 1 until 100), user 2's job 3 holds the other node to 1,000, user
    # 3's job 4 comes at 50. At 100 job 2 is let in: aged from its submission it is 100 s old against job 4's 50 and
    # goes first; aged from its entry (Maui's system queue time) it is 0 s old and job 4 goes first
    jobs = [_job(1, 0, 100, 1, 1), _job(2, 0, 100, 1, 1), _job(3, 0, 1000, 1, 2), _job(4, 50, 100, 1, 3)]
    starts = {}
    for age_from in ("submit", "eligible"):
        weights = PriorityWeights(age=1.0, max_age=10_000.0, calc_period=1.0, age_from=age_from)
        starts[age_from] = _starts([job.fresh_copy() for job in jobs], 2, weights, (1, None), POLICIES.make("FCFS"))
    assert starts["submit"] == {1: 0.0, 2: 100.0, 3: 0.0, 4: 200.0}
    assert starts["eligible"] == {1: 0.0, 2: 200.0, 3: 0.0, 4: 100.0}


def test_ages_from_eligibility_are_a_priority_setting_that_needs_a_limit_and_leaves_earlier_keys():
    plain = Scenario(workload=str(BUNDLED_NASA_LOG), platform="cluster", policy="FCFS-EASY", max_jobs=1500)
    weighted = plain.replace(priority_weight_age=1.0, max_jobs_per_user=2)
    assert run_key(weighted.replace(priority_age_from="submit")) == run_key(weighted)  # the default: the key as before
    assert run_key(weighted.replace(priority_age_from="eligible")) != run_key(weighted)
    with pytest.raises(ConfigurationError, match="needs a limit that holds jobs"):
        build_model(plain.replace(priority_weight_age=1.0, priority_age_from="eligible"), {})
    with pytest.raises(ConfigurationError, match="needs priority_weight_age"):
        build_model(plain.replace(max_jobs_per_user=2, priority_age_from="eligible"), {})
    with pytest.raises(ValueError, match="priority_age_from"):
        Scenario(workload=str(BUNDLED_NASA_LOG), platform="cluster", policy="FCFS-EASY", priority_age_from="queued")
    with pytest.raises(ConfigurationError, match="priority_age_from must be one of submit, eligible"):
        PriorityWeights(age=1.0, age_from="queued")
    model = build_model(weighted.replace(priority_age_from="eligible"), {})
    table = model.run().jobs
    assert table["finished_at"].notna().all() and model.scheduler.limits.held_ever > 0


def test_shares_as_submitted_rank_a_user_by_its_usage_against_what_it_asked():
    # 2 nodes, the fair share alone: users 1 and 2 each run a one-node job from 0 to 100 (equal usage, 0.5 each);
    # user 2's job 3 (submitted at 10) and user 1's job 4 (at 20) each need both nodes. Equal shares tie the users
    # (2^-1 each) and job 3, submitted first, goes first; shares as asked (node-seconds requested so far: user 1's
    # job 4 asks 2 x 5,000) give user 1 S = 10,100 / 10,300 and user 2 S = 200 / 10,300: job 4 goes first
    def jobs():
        return [
            Job(1, 0.0, runtime=100.0, walltime=100.0, size=1, user_id=1),
            Job(2, 0.0, runtime=100.0, walltime=100.0, size=1, user_id=2),
            Job(3, 10.0, runtime=50.0, walltime=50.0, size=2, user_id=2),
            Job(4, 20.0, runtime=50.0, walltime=5000.0, size=2, user_id=1),
        ]

    starts = {
        shares: _starts(
            jobs(), 2, PriorityWeights(fairshare=1.0, calc_period=1.0, half_life=1e6, shares=shares), None, POLICIES.make("FCFS")
        )
        for shares in ("equal", "submitted")
    }
    assert starts["equal"] == {1: 0.0, 2: 0.0, 3: 100.0, 4: 150.0}
    assert starts["submitted"] == {1: 0.0, 2: 0.0, 3: 150.0, 4: 100.0}
    with pytest.raises(ConfigurationError, match="priority_fairshare_shares must be one of equal, submitted"):
        PriorityWeights(fairshare=1.0, shares="allocated")
    plain = Scenario(
        workload=str(BUNDLED_NASA_LOG), platform="cluster", policy="FCFS-EASY", max_jobs=1500, priority_weight_fairshare=5.0
    )
    assert run_key(plain.replace(priority_fairshare_shares="equal")) == run_key(plain)  # the default: the key as before
    assert run_key(plain.replace(priority_fairshare_shares="submitted")) != run_key(plain)
    with pytest.raises(ValueError, match="priority_fairshare_shares"):
        plain.replace(priority_fairshare_shares="allocated")
