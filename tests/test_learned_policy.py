"""A saved agent runs as a policy (issue 43 §5): the same choices as in the environment, from a data-only file."""

from __future__ import annotations

import json
import shutil
import subprocess

import numpy as np
import pytest

pytest.importorskip("gymnasium")

from torus_sim.core.errors import ConfigurationError  # noqa: E402
from torus_sim.experiments.extensions import build_risk_predictor  # noqa: E402
from torus_sim.policies.learned import LearnedPolicy, read_agent, write_linear_agent  # noqa: E402
from torus_sim.rl.agents import LinearSoftmaxAgent, train_reinforce  # noqa: E402
from torus_sim.rl.env import SchedulingEnv  # noqa: E402

SCENARIOS = {
    "cluster+synthetic": {"platform": "cluster", "nodes": 128, "load_scale": 1.5, "failures": "synthetic:20"},
    "torus+bgl": {"platform": "torus", "load_scale": 1.5, "failures": "bundled"},
}


def _trained(env, path):
    agent = LinearSoftmaxAgent.for_env(env, seed=1)
    train_reinforce(env, agent, epochs=3, episodes_per_epoch=2, seed=1)
    write_linear_agent(path, agent.weights, env.shape, {"note": "test"})
    return agent


@pytest.mark.parametrize(
    ("name", "backfill", "features"),
    [(name, "none", ()) for name in SCENARIOS]
    + [("cluster+synthetic", "rlscheduler", ()), ("cluster+synthetic", "none", ("user", "predicted_runtime"))],
)
def test_a_saved_agent_as_a_policy_schedules_a_window_as_it_did_in_the_environment(name, backfill, features, tmp_path):
    scenario = {**SCENARIOS[name], "runtime_predictor": "last"} if features else SCENARIOS[name]
    env = SchedulingEnv(scenario, window=150, queue_slots=8, start_range=(0.7, 1.0), backfill=backfill, job_features=features)
    agent = _trained(env, tmp_path / "weights.json")
    observation, info = env.reset(seed=2)
    done = False
    while not done:
        observation, _, terminated, truncated, info = env.step(agent.act(observation, info["action_mask"], env))
        done = terminated or truncated
    assert backfill == "none" or info["backfilled"] > 0  # it picked jobs that did not fit, and others were backfilled
    played = env.model.record().jobs.sort_values("job_id").reset_index(drop=True)
    policy = LearnedPolicy(str(tmp_path / "weights.json"), build_risk_predictor(env.scenario), backfill)
    model = env.window_model(env.window_start, env.model_seed, policy)
    ran = model.run().jobs.sort_values("job_id").reset_index(drop=True)
    assert len(ran) == 150 and ran.equals(played)


def test_the_command_line_runs_a_saved_agent_and_refuses_a_mismatched_or_bad_file(tmp_path):
    if shutil.which("torus-sim") is None:
        pytest.skip("the torus-sim command is not on PATH (install the package)")
    env = SchedulingEnv({"platform": "cluster", "nodes": 128, "load_scale": 1.5}, window=100, queue_slots=8)
    _trained(env, tmp_path / "weights.json")
    run = ["torus-sim", "run", "--max-jobs", "300", "--load-scale", "1.5", "--policy", "learned"]
    done = subprocess.run(
        [*run, "--platform", "cluster", "--nodes", "128", "--policy-param", "agent=weights.json", "--out", "out"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert "learned" in done.stdout and (tmp_path / "out" / "summary.json").exists()
    on_torus = subprocess.run([*run, "--policy-param", "agent=weights.json"], cwd=tmp_path, capture_output=True, text=True)
    assert on_torus.returncode == 2 and "was trained on observations of 53 values" in on_torus.stderr
    assert "Traceback" not in on_torus.stderr


def test_agent_files_are_data_and_a_bad_one_is_a_sentence(tmp_path):
    with pytest.raises(ConfigurationError, match="not found"):
        read_agent(tmp_path / "none.json")
    (tmp_path / "old.json").write_text(json.dumps({"weights": [0.0] * 12}))
    with pytest.raises(ConfigurationError, match="kind must be 'linear-softmax'"):
        read_agent(tmp_path / "old.json")
    (tmp_path / "short.json").write_text(
        json.dumps(
            {"kind": "linear-softmax", "queue_slots": 8, "max_walltime": 100.0, "observation_length": 53, "weights": [1.0]}
        )
    )
    with pytest.raises(ConfigurationError, match="weights must be 12 finite numbers"):
        read_agent(tmp_path / "short.json")
    np.savez(tmp_path / "pickled.npz", kind=np.array("mlp"), payload=np.array([{"a": 1}], dtype=object))
    with pytest.raises(ConfigurationError, match="not a NumPy .npz of arrays"):  # object arrays need pickle: never loaded
        read_agent(tmp_path / "pickled.npz")
    with pytest.raises(ConfigurationError, match="agent must be a file path"):
        LearnedPolicy(3)


def test_an_exported_sb3_actor_runs_as_the_policy_it_was_in_the_environment(tmp_path):
    """Issue 43 §5 with Stable-Baselines3 (skipped where the [sb3] extra is not installed, as in CI)."""
    sb3_contrib = pytest.importorskip(
        "sb3_contrib", reason="the [sb3] extra is not installed: pip install '.[sb3]' (CPU torch 2.13.0) to run it"
    )
    from torus_sim.rl.sb3 import export_policy

    env = SchedulingEnv(SCENARIOS["cluster+synthetic"], window=120, queue_slots=8)
    model = sb3_contrib.MaskablePPO("MlpPolicy", env, n_steps=128, batch_size=64, seed=0, verbose=0).learn(256)
    export_policy(model, env.shape, tmp_path / "policy.npz")
    observation, info = env.reset(seed=4)
    done = False
    while not done:
        action, _ = model.predict(observation, action_masks=info["action_mask"].astype(bool), deterministic=True)
        observation, _, terminated, truncated, info = env.step(int(action))
        done = terminated or truncated
    played = env.model.record().jobs.sort_values("job_id").reset_index(drop=True)
    policy = LearnedPolicy(str(tmp_path / "policy.npz"), build_risk_predictor(env.scenario))
    ran = env.window_model(env.window_start, env.model_seed, policy).run().jobs.sort_values("job_id").reset_index(drop=True)
    assert ran.equals(played)


def test_extra_job_features_are_appended_to_each_slot_and_named_in_the_agent_file(tmp_path):
    from gymnasium.utils.env_checker import check_env

    from torus_sim.policies.agent_observation import JOB_FEATURE_HOOKS, register_job_feature

    register_job_feature("test-small-job", lambda job, now, shape: 1.0 if job.size <= 8 else 0.0)
    try:
        env = SchedulingEnv(
            {"platform": "cluster", "nodes": 128, "runtime_predictor": "last"},
            window=60,
            queue_slots=4,
            job_features=("user", "test-small-job"),
        )
        check_env(env, skip_render_check=True)
        observation, _ = env.reset(seed=1)
        assert observation.shape == (4 * 8 + 5,) and env.shape.per_slot == 8
        assert env.model.queue  # a decision point: a job waits
        head = env.model.queue[0]
        assert observation[6] == pytest.approx(head.user_id / env.shape.max_user)
        assert observation[7] == (1.0 if head.size <= 8 else 0.0)
        write_linear_agent(tmp_path / "a.json", np.zeros(8 + 5 + 1), env.shape, {})
        assert read_agent(tmp_path / "a.json").features == ("user", "test-small-job")
        with pytest.raises(ConfigurationError, match="is taken"):
            register_job_feature("user", lambda job, now, shape: 0.0)
    finally:
        JOB_FEATURE_HOOKS.pop("test-small-job")
    with pytest.raises(ConfigurationError, match="unknown job feature 'test-small-job'"):
        read_agent(tmp_path / "a.json")  # the file names a feature this installation no longer offers
    with pytest.raises(ConfigurationError, match="unknown job feature 'group'"):
        SchedulingEnv({"platform": "cluster", "nodes": 128}, window=20, job_features=("group",))
