"""The Gymnasium environment: the contract (check_env), the engine under it (head-always = FCFS), seeds."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium")

from gymnasium.utils.env_checker import check_env  # noqa: E402

from torus_sim.engine.model import SchedulingModel  # noqa: E402
from torus_sim.experiments.model_builder import build_platform  # noqa: E402
from torus_sim.experiments.run_inputs import load_failures  # noqa: E402
from torus_sim.policies.easy import FcfsPolicy  # noqa: E402
from torus_sim.rl import ENV_ID, SchedulingEnv  # noqa: E402
from torus_sim.rl.agents import LinearSoftmaxAgent, evaluate, fcfs_agent, sjf_agent, train_reinforce  # noqa: E402

from .conftest import SHARED_DATA  # noqa: E402

SDSC = SHARED_DATA / "swf" / "SDSC-SP2-1998-4.2-cln.swf.gz"
LANL = SHARED_DATA / "failures" / "lanl" / "LA-UR-05-7318-failure-data-1996-2005.csv.xz"

PLATFORMS = {
    "cluster": {"platform": "cluster", "nodes": 128},
    "cluster+synthetic": {"platform": "cluster", "nodes": 128, "failures": "synthetic:30"},
    "torus+bgl": {"platform": "torus", "failures": "bundled"},
    "torus-mfp-choices": {"platform": "torus", "failures": "none"},
}


def test_the_environment_passes_gymnasiums_checker_on_both_platforms():
    check_env(SchedulingEnv({"platform": "cluster", "nodes": 128}, window=40, queue_slots=6), skip_render_check=True)
    check_env(SchedulingEnv({"platform": "torus"}, window=40, queue_slots=6, placements=3), skip_render_check=True)


def test_it_is_registered_with_gymnasium():
    env = gymnasium.make(ENV_ID, scenario={"platform": "cluster", "nodes": 128}, window=20, queue_slots=4)
    observation, info = env.reset(seed=1)
    assert env.observation_space.contains(observation)
    assert info["action_mask"][-1] == 1


def _fcfs_record(env: SchedulingEnv):
    """The built-in FCFS policy on the same window, failures and model seed as the environment's episode."""
    model = env.model
    failures = (
        load_failures(env.scenario, env._capacity, model.workload)[0]
        if env._failures_per_window
        else env._failures_in(model.workload.span)
    )
    reference = SchedulingModel(
        model.workload, FcfsPolicy(), build_platform(env.scenario, env._capacity), failures, seed=env.model_seed
    )
    return reference.run()


@pytest.mark.parametrize("name", list(PLATFORMS))
def test_an_agent_that_always_picks_the_head_job_is_the_fcfs_policy(name):
    env = SchedulingEnv(PLATFORMS[name], window=400, queue_slots=8, placements=3 if name == "torus-mfp-choices" else 1)
    options = None
    if name == "torus+bgl":  # a window that meets the BG/L RAS sample's burst of failures (fitted onto NASA's span)
        submits = [env.workload.jobs[i].submitted_at for i in range(len(env.workload.jobs))]
        options = {"start": int(np.searchsorted(submits, 2.70e6)) - 50}
    observation, info = env.reset(seed=4, options=options)
    done = False
    while not done:
        observation, reward, terminated, truncated, info = env.step(0)
        done = terminated or truncated
    assert terminated and info["completed"] == 400
    ours = env.model.record().jobs.sort_values("job_id").reset_index(drop=True)
    theirs = _fcfs_record(env).jobs.sort_values("job_id").reset_index(drop=True)
    assert ours.equals(theirs)
    if "failures" in PLATFORMS[name] and PLATFORMS[name]["failures"] != "none":
        assert env.model.counters["failures"] > 0


def test_seeded_episodes_are_reproducible_and_seeds_differ():
    def episode(seed):
        env = SchedulingEnv({"platform": "cluster", "nodes": 128, "failures": "synthetic:20"}, window=60, queue_slots=6)
        observation, info = env.reset(seed=seed)
        observations, rewards = [observation], []
        rng = np.random.default_rng(seed)
        done = False
        while not done:
            valid = np.flatnonzero(info["action_mask"])
            observation, reward, terminated, truncated, info = env.step(int(rng.choice(valid)))
            observations.append(observation)
            rewards.append(reward)
            done = terminated or truncated
        return info["window_start"], np.array(observations), np.array(rewards)

    first, again, other = episode(7), episode(7), episode(8)
    assert first[0] == again[0] and np.array_equal(first[1], again[1]) and np.array_equal(first[2], again[2])
    assert first[0] != other[0]


def test_the_return_is_minus_the_mean_bounded_slowdown_of_the_window():
    env = SchedulingEnv({"platform": "cluster", "nodes": 128}, window=80, queue_slots=8)
    [mean_bsld] = evaluate(env, fcfs_agent, [500])
    jobs = env.model.record().jobs
    bsld = np.maximum((jobs["finished_at"] - jobs["submitted_at"]) / np.maximum(jobs["runtime"], 10.0), 1.0)
    assert mean_bsld == pytest.approx(float(bsld.mean()), rel=1e-12)


@pytest.mark.skipif(not SDSC.exists(), reason=f"needs SDSC-SP2 under {SHARED_DATA}")
def test_sjf_and_a_briefly_trained_learner_run_and_sjf_beats_fcfs_on_a_busy_window():
    env = SchedulingEnv({"platform": "cluster", "workload": str(SDSC)}, window=100, queue_slots=16, start_range=(0.0, 0.5))
    starts = [2000, 5000, 8000]
    fcfs = np.mean(evaluate(env, fcfs_agent, starts))
    sjf = np.mean(evaluate(env, sjf_agent, starts))
    assert sjf < fcfs
    agent = LinearSoftmaxAgent.for_env(env, seed=0)
    before = agent.weights.copy()
    history = train_reinforce(env, agent, epochs=2, episodes_per_epoch=2)
    assert len(history) == 2 and not np.array_equal(before, agent.weights)
    learned = evaluate(env, lambda o, m, e: agent.act(o, m, e), starts)
    assert all(np.isfinite(learned))


def test_bad_arguments_are_sentences():
    from torus_sim.core.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match="reward must be one of"):
        SchedulingEnv({"platform": "cluster", "nodes": 128}, reward="speed")
    with pytest.raises(ConfigurationError, match="not a batch"):
        SchedulingEnv({"platform": "cluster", "workload": "rigid"})
    with pytest.raises(ConfigurationError, match="fewer than a window"):
        SchedulingEnv({"platform": "cluster", "nodes": 128}, window=10**7)
    env = SchedulingEnv({"platform": "cluster", "nodes": 128}, window=10)
    with pytest.raises(ConfigurationError, match="call reset"):
        env.step(0)


@pytest.mark.skipif(not (SDSC.exists() and LANL.exists()), reason=f"needs SDSC-SP2 and LANL under {SHARED_DATA}")
def test_a_real_failure_log_gives_each_window_the_failures_of_its_own_period():
    env = SchedulingEnv({"platform": "cluster", "workload": str(SDSC), "failures": str(LANL)}, window=200, queue_slots=8)
    env.reset(seed=0, options={"start": 30000})
    log = env.model.failure_log
    span = env.model.workload.span
    assert len(log) > 0 and log.failed_at.min() >= span[0]


def test_an_agent_that_always_waits_runs_one_job_at_a_time_started_by_the_environment():
    env = SchedulingEnv({"platform": "cluster", "nodes": 128}, window=60, queue_slots=4)
    observation, info = env.reset(seed=2)
    done = False
    while not done:
        observation, reward, terminated, truncated, info = env.step(env.action_space.n - 1)  # always wait
        done = terminated or truncated
    assert terminated and info["completed"] == 60 and info["forced_starts"] == 60
    jobs = env.model.record().jobs.sort_values("started_at")
    assert (jobs["started_at"].to_numpy()[1:] >= jobs["finished_at"].to_numpy()[:-1]).all()  # never two at once


def test_action_masks_is_the_info_mask_and_an_invalid_action_waits_raises_or_costs():
    """Issue 43 section 1: MaskablePPO reads env.action_masks(); invalid_action wait (default) | raise | penalty."""
    from torus_sim.core.errors import ConfigurationError

    scenario = {"platform": "cluster", "nodes": 128}
    env = SchedulingEnv(scenario, window=40, queue_slots=6)
    with pytest.raises(ConfigurationError, match="reset"):
        env.action_masks()
    _, info = env.reset(seed=3)
    rng = np.random.default_rng(0)
    checked = invalid_seen = 0
    done = False
    while not done and checked < 200:
        mask = env.action_masks()
        assert mask.dtype == bool and mask.shape == (env.action_space.n,) and mask[-1]
        assert np.array_equal(mask, info["action_mask"].astype(bool))
        action = int(rng.integers(env.action_space.n))
        _, _, terminated, truncated, info = env.step(action)
        invalid_seen += info["invalid_action"]
        assert info["invalid_action"] == (not mask[action])
        checked += 1
        done = terminated or truncated
    assert invalid_seen > 0  # random actions on 6 slots meet forbidden ones

    strict = SchedulingEnv(scenario, window=40, queue_slots=6, invalid_action="raise")
    strict.reset(seed=3)
    forbidden = int(np.flatnonzero(~strict.action_masks())[0])
    with pytest.raises(ConfigurationError, match=f"action {forbidden} is not valid now"):
        strict.step(forbidden)

    costly = SchedulingEnv(scenario, window=40, queue_slots=6, invalid_action="penalty", invalid_penalty=0.5)
    plain = SchedulingEnv(scenario, window=40, queue_slots=6)
    costly.reset(seed=3)
    plain.reset(seed=3)
    forbidden = int(np.flatnonzero(~costly.action_masks())[0])
    paid = costly.step(forbidden)
    free = plain.step(forbidden)
    assert paid[1] == pytest.approx(free[1] - 0.5) and paid[4]["invalid_action"]
    with pytest.raises(ConfigurationError, match="invalid_action must be one of"):
        SchedulingEnv(scenario, window=40, invalid_action="ignore")


def test_maskable_ppo_trains_on_the_environment_with_no_wrapper():
    """Issue 43: sb3-contrib's MaskablePPO reads env.action_masks() itself (the [sb3] extra)."""
    sb3_contrib = pytest.importorskip(
        "sb3_contrib", reason="the [sb3] extra is not installed: pip install '.[sb3]' (CPU torch 2.13.0) to run it"
    )
    env = SchedulingEnv({"platform": "cluster", "nodes": 128}, window=64, queue_slots=8)
    model = sb3_contrib.MaskablePPO("MlpPolicy", env, n_steps=128, batch_size=64, seed=0, verbose=0)
    model.learn(total_timesteps=256)
    observation, _ = env.reset(seed=5)
    done, chosen_invalid = False, 0
    while not done:
        action, _ = model.predict(observation, action_masks=env.action_masks(), deterministic=True)
        observation, _, terminated, truncated, info = env.step(action)
        chosen_invalid += info["invalid_action"]
        done = terminated or truncated
    assert chosen_invalid == 0 and info["completed"] >= 64  # masked: never a forbidden action


class _Maker:
    """A picklable factory: each vectorized worker builds its own environment."""

    def __call__(self):
        return SchedulingEnv({"platform": "cluster", "nodes": 128, "failures": "synthetic:10"}, window=60, queue_slots=6)


def _vector_run(vector, steps: int = 150):
    """Observations, rewards and masks of ``steps`` vector steps choosing each environment's first valid action."""
    observation, info = vector.reset(seed=[3, 4])
    seen = [observation]
    for _ in range(steps):
        actions = np.array([int(np.flatnonzero(mask)[0]) for mask in info["action_mask"]])
        observation, reward, terminated, truncated, info = vector.step(actions)
        seen += [observation, reward, terminated, info["action_mask"]]
    vector.close()
    return seen


def test_vectorized_workers_build_their_own_environment_and_step_as_one_process_does():
    """Issue 43 §1: gymnasium's AsyncVectorEnv (2 worker processes) = SyncVectorEnv, episodes ending and restarting."""
    asynchronous = _vector_run(gymnasium.vector.AsyncVectorEnv([_Maker(), _Maker()]))
    synchronous = _vector_run(gymnasium.vector.SyncVectorEnv([_Maker(), _Maker()]))
    assert len(asynchronous) == len(synchronous)
    for ours, theirs in zip(asynchronous, synchronous, strict=True):
        np.testing.assert_array_equal(ours, theirs)
    assert np.concatenate(synchronous[3::4]).any()  # at least one episode ended (and restarted) on the way


def test_maskable_ppo_trains_on_sb3s_subprocess_vector_of_environments():
    """Issue 43 §1: SB3's SubprocVecEnv (2 workers, each building its own environment) under MaskablePPO."""
    sb3_contrib = pytest.importorskip(
        "sb3_contrib", reason="the [sb3] extra is not installed: pip install '.[sb3]' (CPU torch 2.13.0) to run it"
    )
    from stable_baselines3.common.vec_env import SubprocVecEnv

    vector = SubprocVecEnv([_Maker(), _Maker()])
    try:
        vector.reset()
        masks = vector.env_method("action_masks")
        assert len(masks) == 2 and all(mask[-1] for mask in masks)
        model = sb3_contrib.MaskablePPO("MlpPolicy", vector, n_steps=64, batch_size=64, seed=0, verbose=0)
        model.learn(total_timesteps=256)
        assert model.num_timesteps >= 256
    finally:
        vector.close()


@pytest.mark.parametrize(
    ("scenario", "placements", "steps", "digest"),
    [
        (
            {"platform": "cluster", "nodes": 128, "failures": "synthetic:20", "load_scale": 1.5},
            1,
            212,
            "e50fab5722f44c0089f89365b9bfa767851073e8810edc403f590e66f37f3683",
        ),
        (
            {"platform": "torus", "failures": "bundled", "load_scale": 1.5},
            3,
            201,
            "28e8697bf9c1e27b7e7ea67f7d03c006fd04234977d4cefccca1d22f73354600",
        ),
    ],
    ids=["cluster+synthetic", "torus+bgl-3-placements"],
)
def test_observations_masks_and_rewards_of_an_episode_are_pinned(scenario, placements, steps, digest):
    """Golden values (taken before the observation moved to torus_sim/policies/agent_observation.py): every byte of an SJF episode."""
    import hashlib

    env = SchedulingEnv(scenario, window=200, queue_slots=8, placements=placements)
    observation, info = env.reset(seed=3)
    seen = hashlib.sha256(observation.tobytes() + info["action_mask"].tobytes())
    done, count = False, 0
    while not done:
        observation, reward, terminated, truncated, info = env.step(sjf_agent(observation, info["action_mask"], env))
        seen.update(observation.tobytes() + info["action_mask"].tobytes() + np.float64(reward).tobytes())
        count += 1
        done = terminated or truncated
    assert (count, seen.hexdigest()) == (steps, digest)


@pytest.mark.parametrize("backfill", ["easy", "rlscheduler"])
def test_backfilling_around_the_fcfs_agent_is_fcfs_easy_or_rlschedulers_loop(backfill):
    """Issue 43 §2: the agent picks any visible job; one that does not fit is reserved for and the environment backfills."""
    from torus_sim.core.errors import ConfigurationError
    from torus_sim.policies.easy import EasyPolicy
    from torus_sim.policies.priority import PriorityPolicy

    env = SchedulingEnv({"platform": "cluster", "nodes": 128, "load_scale": 1.5}, window=300, queue_slots=8, backfill=backfill)
    observation, info = env.reset(seed=6)
    done = False
    while not done:
        assert info["action_mask"][: min(info["waiting"], 8)].all()  # every visible job can be picked
        observation, _, terminated, truncated, info = env.step(0)
        done = terminated or truncated
    assert info["backfilled"] > 0
    played = env.model.record().jobs.sort_values("job_id").reset_index(drop=True)
    policy = EasyPolicy("fcfs") if backfill == "easy" else PriorityPolicy("fcfs", "rlscheduler")
    ran = env.window_model(env.window_start, env.model_seed, policy).run().jobs.sort_values("job_id").reset_index(drop=True)
    assert ran.equals(played)
    with pytest.raises(ConfigurationError, match="backfill must be one of"):
        SchedulingEnv({"platform": "cluster", "nodes": 128}, window=20, backfill="conservative")


def test_reward_objectives_and_the_episode_only_timing_give_the_windows_metrics():
    """Issue 43 §2: wait, turnaround (and bsld) returns are minus the window's means; 'episode' holds it to the end."""

    def episode(reward, timing="step"):
        env = SchedulingEnv(
            {"platform": "cluster", "nodes": 128, "load_scale": 1.5},
            window=120,
            queue_slots=8,
            reward=reward,
            reward_timing=timing,
        )
        observation, info = env.reset(seed=5)
        rewards, done = [], False
        while not done:
            observation, reward_value, terminated, truncated, info = env.step(sjf_agent(observation, info["action_mask"], env))
            rewards.append(reward_value)
            done = terminated or truncated
        return rewards, env.model.record().jobs

    rewards, jobs = episode("wait")
    assert sum(rewards) == pytest.approx(-(jobs["first_started_at"] - jobs["submitted_at"]).mean())
    rewards, jobs = episode("turnaround")
    assert sum(rewards) == pytest.approx(-(jobs["finished_at"] - jobs["submitted_at"]).mean())
    stepwise, _ = episode("bsld")
    held, _ = episode("bsld", "episode")
    assert all(value == 0.0 for value in held[:-1]) and held[-1] == pytest.approx(sum(stepwise)) and sum(stepwise) < -1.0


@pytest.mark.parametrize(
    "switch_off",
    [
        {},
        {"idle_off_after": 600.0, "boot_time": 300.0, "node_boot_w": 450.0},
        {"idle_off_after": 600.0, "boot_time": 300.0, "node_boot_w": 450.0, "shutdown_time": 900.0},
    ],
    ids=["always-on", "boot", "boot-and-switch-off-time"],
)
def test_the_energy_cost_reward_is_minus_the_windows_attempts_bill_and_needs_power_accounting(switch_off):
    """Issue 45 §6: an episode's return under ``energy_cost`` is minus the bill of its attempts' energy (idle nodes
    not counted) over the window's job count, here checked against the bill power accounting integrates from the
    record (with idle, off and down nodes at 0 W: only the attempts draw); failures kill attempts, which cost too;
    with idle nodes switched off, a boot draws ``node_boot_w``; with a switch-off time, a job waiting for its nodes to
    finish switching off (at the idle draw, here 0 W) pays that draw, not its own."""
    from torus_sim.core.errors import ConfigurationError
    from torus_sim.inputs.energy.node_power import NodePower
    from torus_sim.metrics.energy import account_energy

    scenario = {"platform": "cluster", "nodes": 128, "load_scale": 1.5, "failures": "synthetic:40", "power": True}
    scenario |= {"job_power": "uniform:100:300", "price": "tou:0.05:3:8-20", "node_idle_w": 0.0} | switch_off
    env = SchedulingEnv(scenario, window=120, queue_slots=8, reward="energy_cost")
    observation, info = env.reset(seed=3)
    total, done = 0.0, False
    while not done:
        observation, reward, terminated, truncated, info = env.step(sjf_agent(observation, info["action_mask"], env))
        total += reward
        done = terminated or truncated
    record = env.model.record()
    attempts = record.attempts
    assert (attempts["outcome"] != "completed").any()  # killed attempts are in the bill
    watts = attempts["job_id"].map(env.power.job_watts).to_numpy(float)
    rule = env.power.switch_off
    assert bool(record.power_states is not None and (record.power_states["state"] == "boot").any()) is bool(switch_off)
    if "shutdown_time" in switch_off:
        states = record.power_states
        assert ((states["state"] == "shutdown") & (states["job_id"] >= 0)).sum() > 10  # jobs waited for switch-offs
    if switch_off:  # a boot an attempt's end left to finish is an idle node's (not an attempt's): not in the reward
        states = record.power_states
        unheld = (states["state"] == "boot") & (states["job_id"] < 0)
        assert unheld.any() or "shutdown_time" not in switch_off  # there, killed attempts left boots to finish
        record = dataclasses.replace(record, power_states=states[~unheld])
    bill = account_energy(record, watts, NodePower(0.0, 200.0, 0.0), env.power.tariff, 0.0, switch_off=rule).summary["bill"]
    assert total == pytest.approx(-bill / 120, rel=1e-9) and total < 0
    with pytest.raises(ConfigurationError, match="needs power accounting"):
        SchedulingEnv({"platform": "cluster", "nodes": 128}, window=20, reward="energy_cost")
