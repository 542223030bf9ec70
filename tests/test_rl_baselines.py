"""Baselines and agents on the same held-back windows (issue 43 §3): one engine, one table."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import pytest
from scipy import stats

pytest.importorskip("gymnasium")

from torus_sim.rl.agents import fcfs_agent  # noqa: E402
from torus_sim.rl.baselines import compare_on_windows, heldout_starts, main, summary_table  # noqa: E402
from torus_sim.rl.env import SchedulingEnv  # noqa: E402
from torus_sim.rl.train import train_and_compare  # noqa: E402

METRICS = ["bsld", "wait", "utilization", "jobs"]


@pytest.mark.parametrize(
    "scenario",
    [
        {"platform": "cluster", "nodes": 128, "load_scale": 1.5, "failures": "synthetic:20"},
        {"platform": "torus", "failures": "bundled", "load_scale": 1.5},  # BG/L RAS failures fitted onto NASA's span
    ],
    ids=["cluster+synthetic", "torus+bgl"],
)
def test_the_fcfs_agent_and_the_fcfs_policy_give_the_same_row_on_every_window(scenario):
    env = SchedulingEnv(scenario, window=150, queue_slots=8, start_range=(0.7, 1.0))
    starts = heldout_starts(env, 2)
    assert len(set(starts)) == 2 and all(start >= env._starts[0] for start in starts)
    table = compare_on_windows(env, starts, ["FCFS", "FCFS-EASY"], {"FCFS agent": fcfs_agent})
    assert len(table) == 6 and set(table["jobs"]) == {150}
    by_entry = {name: rows.set_index("window")[METRICS] for name, rows in table.groupby("entry")}
    pd.testing.assert_frame_equal(by_entry["FCFS agent"], by_entry["FCFS"])
    assert not by_entry["FCFS-EASY"].equals(by_entry["FCFS"])  # backfilling moved something on these busy windows
    again = compare_on_windows(env, starts, ["FCFS-EASY"], {})
    pd.testing.assert_frame_equal(again.set_index("window")[METRICS], by_entry["FCFS-EASY"])


def test_the_summary_counts_means_worst_windows_and_wins_against_the_reference():
    per_window = pd.DataFrame(
        {
            "entry": ["A"] * 3 + ["FCFS-EASY"] * 3,
            "window": [0, 1, 2] * 2,
            "bsld": [2.0, 10.0, 3.0, 4.0, 4.0, 4.0],
            "wait": [100.0, 200.0, 300.0, 0.0, 0.0, 30.0],
            "utilization": [0.5, 0.6, 0.7, 0.5, 0.5, 0.5],
        }
    )
    table = summary_table(per_window)
    assert list(table.index) == ["A", "FCFS-EASY"]
    assert table.loc["A", "mean bsld"] == 5.0 and table.loc["A", "median bsld"] == 3.0
    assert table.loc["A", "worst window bsld"] == 10.0 and table.loc["A", "mean wait (s)"] == 200.0
    assert table.loc["A", "windows <= FCFS-EASY"] == "2/3" and table.loc["FCFS-EASY", "windows <= FCFS-EASY"] == "3/3"
    assert "windows <= X" not in summary_table(per_window, "X").columns
    # the windows are the replicates: A - FCFS-EASY per window is -2, 6, -1 (mean 1), Wilcoxon's p as scipy's
    assert table.loc["A", "bsld - FCFS-EASY"].startswith("+1.00 [")
    assert table.loc["A", "Wilcoxon p"] == pytest.approx(stats.wilcoxon([-2.0, 6.0, -1.0]).pvalue)
    assert table.loc["FCFS-EASY", "bsld 95% CI"] == "[4.00, 4.00]" and table.loc["FCFS-EASY", "Wilcoxon p"] == 1.0
    low, high = (float(value) for value in table.loc["A", "bsld 95% CI"].strip("[]").split(","))
    assert 2.0 <= low < 5.0 < high <= 10.0


def test_the_command_prints_the_table_and_an_unknown_policy_is_a_sentence(tmp_path, capsys):
    assert main(["--windows", "2", "--window", "40", "--policies", "FCFS-EASY,EASY-SJBF", "--csv", str(tmp_path / "w.csv")]) == 0
    out = capsys.readouterr().out
    assert "| FCFS-EASY |" in out and "| SJF agent |" in out and "windows <= FCFS-EASY" in out
    assert len(pd.read_csv(tmp_path / "w.csv")) == 8
    agent = str(Path(__file__).resolve().parents[1] / "docs" / "rl" / "weights.json")  # the training example's agent
    assert main(["--windows", "2", "--window", "40", "--policies", "FCFS-EASY", "--agent", agent]) == 0
    assert f"| agent {agent} |" in capsys.readouterr().out
    assert main(["--windows", "1", "--window", "40", "--policies", "no-such-policy"]) == 2
    error = capsys.readouterr().err
    assert "no-such-policy" in error and "Traceback" not in error


def test_the_training_example_compares_the_learned_agent_with_easy_on_the_same_windows(tmp_path):
    summary = train_and_compare(
        {"platform": "cluster", "nodes": 128, "load_scale": 1.5},
        tmp_path,
        epochs=1,
        episodes_per_epoch=1,
        window=40,
        heldout_windows=2,
        quiet=True,
    )
    assert {"FCFS", "SJF", "learned", "FCFS-EASY", "EASY-SJBF"} <= set(summary)
    heldout = pd.read_csv(tmp_path / "heldout.csv")
    assert list(heldout.columns) == ["window_start", "FCFS", "SJF", "learned", "FCFS-EASY", "EASY-SJBF"]
    table = pd.read_csv(tmp_path / "heldout_summary.csv", index_col="entry")
    assert table.loc["FCFS-EASY", "mean bsld"] == pytest.approx(heldout["FCFS-EASY"].mean())


def test_the_sb3_example_says_what_to_install_and_names_the_algorithms(monkeypatch, capsys):
    from torus_sim.rl import sb3

    assert sb3.main(["--algo", "no-such-algo", "--window", "40"]) == 2
    assert "the algorithms are: maskable-ppo, ppo" in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "sb3_contrib", None)  # as where the [sb3] extra is not installed
    assert sb3.main(["--window", "40", "--timesteps", "64"]) == 2
    error = capsys.readouterr().err
    assert "pip install 'torus-sim[sb3]'" in error and "Traceback" not in error


def test_the_sb3_example_trains_saves_and_compares_on_held_back_windows(tmp_path):
    """Issue 43 §1: python -m torus_sim.rl.sb3 (skipped where the [sb3] extra is not installed, as in CI)."""
    sb3_contrib = pytest.importorskip(
        "sb3_contrib", reason="the [sb3] extra is not installed: pip install '.[sb3]' (CPU torch 2.13.0) to run it"
    )
    from torus_sim.rl.sb3 import train_sb3

    scenario = {"platform": "cluster", "nodes": 128, "load_scale": 1.5}
    summary = train_sb3(scenario, tmp_path, timesteps=256, window=40, heldout_windows=2, quiet=True)
    assert {"FCFS", "SJF", "maskable-ppo", "FCFS-EASY", "EASY-SJBF"} <= set(summary) and summary["timesteps"] >= 256
    for name in ("model.zip", "training.csv", "heldout.csv", "heldout_summary.csv", "rl_training.png"):
        assert (tmp_path / name).stat().st_size > 0, name
    heldout = pd.read_csv(tmp_path / "heldout.csv")
    assert heldout["maskable-ppo"].mean() == pytest.approx(summary["maskable-ppo"])
    model = sb3_contrib.MaskablePPO.load(tmp_path / "model.zip")  # the saved agent plays the same held-back window
    env = SchedulingEnv(scenario, window=40, queue_slots=16, start_range=(0.7, 1.0))
    observation, info = env.reset(seed=0, options={"start": int(heldout["window_start"][0])})
    done, total = False, 0.0
    while not done:
        action, _ = model.predict(observation, action_masks=info["action_mask"].astype(bool), deterministic=True)
        observation, reward, terminated, truncated, info = env.step(int(action))
        total += reward
        done = terminated or truncated
    assert -total == pytest.approx(heldout["maskable-ppo"][0])
