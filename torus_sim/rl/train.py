"""Train a small policy-gradient scheduler and compare it with FCFS, SJF and EASY on held-back windows.

Run it (a few minutes on 2 cores)::

    python -m torus_sim.rl.train --out rl-results

It trains :class:`~torus_sim.rl.agents.LinearSoftmaxAgent` with REINFORCE on windows drawn from the
first 70% of the log and evaluates the greedy agent, FCFS and SJF, and the registry's FCFS-EASY and EASY-SJBF on the same windows
from the last 30% (never seen in training; :mod:`torus_sim.rl.baselines`); it writes ``training.csv`` (mean bounded slowdown per epoch),
``learning_curve.csv`` (the greedy agent on 8 fixed training windows as it learns), ``heldout.csv`` (bounded slowdown per window and entry), ``heldout_summary.csv`` (mean, median,
worst window, wait, utilization, windows at most FCFS-EASY's), ``weights.json`` and ``rl_training.png``. The default
workload is the bundled NASA iPSC/860 log on its 128-node cluster at load scale c = 1.5 (BGL-FAULT
§6.2's c: runtimes x 1.5, so that the queue builds up and the order matters).

References:
    Zhang et al., RLScheduler, SC'20 (train on sampled windows, test on held-back ones); Williams 1992.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

__all__ = ["BASELINES", "heldout_comparison", "main", "train_and_compare", "training_figure"]

BASELINES = ("FCFS-EASY", "EASY-SJBF")
"""The registry policies the learned agent is compared with on the held-back windows, beside the FCFS and
SJF agents (FCFS without backfilling is no baseline the field publishes against: issue 43 §3)."""


def train_and_compare(
    scenario: dict,
    out: Path,
    epochs: int = 300,
    episodes_per_epoch: int = 8,
    window: int = 256,
    heldout_windows: int = 20,
    seed: int = 0,
    quiet: bool = False,
) -> dict:
    """Train on the first 70% of the log, evaluate on the last 30%, write tables and the figure.

    Args:
        scenario: the environment's scenario fields (a cluster and an SWF workload).
        out: folder for the outputs (created).
        epochs: REINFORCE steps.
        episodes_per_epoch: episodes per step.
        window: jobs per episode.
        heldout_windows: evaluation windows, evenly spread over the held-back part.
        seed: seeds the training episodes and the agent.
        quiet: no progress lines.

    Returns:
        ``{"FCFS": mean bsld, "SJF": ..., "learned": ..., "FCFS-EASY": ..., "EASY-SJBF": ..., "seconds": training
        time}`` over the held-back windows.
    """
    import pandas as pd

    from torus_sim.policies.learned import write_linear_agent
    from torus_sim.rl.agents import LinearSoftmaxAgent, evaluate, fcfs_agent, sjf_agent, train_reinforce
    from torus_sim.rl.baselines import heldout_starts
    from torus_sim.rl.env import SchedulingEnv

    out.mkdir(parents=True, exist_ok=True)
    train_env = SchedulingEnv(scenario, window=window, queue_slots=16, start_range=(0.0, 0.7))
    test_env = SchedulingEnv(scenario, window=window, queue_slots=16, start_range=(0.7, 1.0))
    last = len(test_env.workload.jobs) - window
    starts = heldout_starts(test_env, heldout_windows)
    agent = LinearSoftmaxAgent.for_env(train_env, seed=seed)
    # a fixed set of training-range windows on which the greedy agent is scored as it learns
    probe = np.linspace(0, int(0.7 * last), 8).astype(int).tolist()
    curve = [(0, float(np.mean(evaluate(train_env, lambda o, m, e: agent.act(o, m, e), probe))))]
    every = max(epochs // 15, 1)

    def report(epoch: int, value: float) -> None:
        if (epoch + 1) % every == 0 or epoch == epochs - 1:
            curve.append((epoch + 1, float(np.mean(evaluate(train_env, lambda o, m, e: agent.act(o, m, e), probe)))))
            if not quiet:
                print(f"epoch {epoch + 1:4d}: greedy agent on 8 training windows {curve[-1][1]:8.2f}", file=sys.stderr)

    began = time.perf_counter()
    history = train_reinforce(train_env, agent, epochs, episodes_per_epoch, seed=seed, on_epoch=report)
    seconds = time.perf_counter() - began
    probe_fcfs = float(np.mean(evaluate(train_env, fcfs_agent, probe)))
    probe_sjf = float(np.mean(evaluate(train_env, sjf_agent, probe)))
    agents = {"FCFS": fcfs_agent, "SJF": sjf_agent, "learned": lambda o, m, e: agent.act(o, m, e)}
    results = heldout_comparison(test_env, starts, agents, out)
    pd.DataFrame({"epoch": range(len(history)), "mean_bounded_slowdown": history}).to_csv(out / "training.csv", index=False)
    pd.DataFrame(curve, columns=["epoch", "greedy_mean_bounded_slowdown"]).to_csv(out / "learning_curve.csv", index=False)
    write_linear_agent(out / "weights.json", agent.weights, train_env.shape, scenario)  # runs as --policy learned
    labels = (
        "epoch (8 sampled training windows each)",
        "mean bounded slowdown, 8 fixed training windows",
        "REINFORCE, linear softmax over job slots",
        "learned (greedy)",
    )
    training_figure(curve, {"FCFS": probe_fcfs, "SJF": probe_sjf}, results, out / "rl_training.png", scenario, window, labels)
    summary = {name: float(np.mean(values)) for name, values in results.items()}
    summary["seconds"] = seconds
    return summary


def heldout_comparison(env, starts: list[int], agents: dict, out: Path) -> dict[str, list[float]]:
    """The agents and :data:`BASELINES` on the same held-back windows; ``heldout.csv`` and ``heldout_summary.csv`` written.

    Args:
        env: the held-back :class:`~torus_sim.rl.env.SchedulingEnv`.
        starts: the windows' first jobs.
        agents: ``{name: function (observation, mask, env) -> action}``.
        out: the folder for the two tables.

    Returns:
        ``{entry: [bounded slowdown of each window]}``, the agents first, then :data:`BASELINES`.
    """
    import pandas as pd

    from torus_sim.rl.baselines import compare_on_windows, summary_table

    per_window = compare_on_windows(env, starts, BASELINES, agents)
    bsld = per_window.pivot(index="window", columns="entry", values="bsld")
    results = {name: bsld[name].tolist() for name in (*agents, *BASELINES)}
    pd.DataFrame({"window_start": starts, **results}).to_csv(out / "heldout.csv", index=False)
    summary_table(per_window, "FCFS-EASY").to_csv(out / "heldout_summary.csv", index_label="entry")
    return results


def training_figure(
    curve: list, references: dict, results: dict, path: Path, scenario: dict, window: int, labels: tuple[str, str, str, str]
) -> None:
    """Draw the learning curve (left) and the held-back means (right) into ``path`` (PNG).

    Args:
        curve: ``[(x, mean bounded slowdown), ...]`` as the agent learned.
        references: ``{label: value}`` drawn as dashed lines on the curve (FCFS, SJF on the same windows).
        results: ``{entry: [bounded slowdown per held-back window]}``, drawn as bars in that order.
        path: the PNG to write.
        scenario: the environment's scenario fields (workload, nodes, load scale) for the title.
        window: jobs per window.
        labels: the curve's x label, y label, title and legend label.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    xs, values = zip(*curve, strict=True)
    left.plot(xs, values, marker="o" if len(xs) <= 40 else None, color="tab:blue", label=labels[3])
    for (label, value), color in zip(references.items(), ("tab:gray", "tab:orange"), strict=False):
        left.axhline(value, color=color, linestyle="--", label=label)
    left.set_xlabel(labels[0])
    left.set_ylabel(labels[1])
    left.set_yscale("log")
    left.legend()
    left.set_title(labels[2])
    names = list(results)
    means = [float(np.mean(results[name])) for name in names]
    colors = ["tab:gray", "tab:orange", "tab:blue", "tab:green", "tab:olive", "tab:purple"]
    bars = right.bar(names, means, color=(colors * 2)[: len(names)])
    right.bar_label(bars, fmt="%.1f")
    right.set_ylabel("mean bounded slowdown (held-back windows)")
    right.set_title(f"{len(next(iter(results.values())))} held-back windows of {window} jobs")
    workload = scenario.get("workload", "bundled")
    workload = "NASA iPSC/860 (bundled)" if workload == "bundled" else Path(workload).name
    figure.suptitle(f"{workload}, {scenario.get('nodes', '')}-node cluster, c = {scenario.get('load_scale', 1.0)}", fontsize=10)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def main(argv: list[str] | None = None) -> int:
    """Command line: train, compare, print the held-back means."""
    from torus_sim.rl.baselines import add_cluster_arguments

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_cluster_arguments(parser)
    parser.add_argument("--epochs", type=int, default=300)
    parser.add_argument("--window", type=int, default=256)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("rl-results"))
    args = parser.parse_args(argv)
    from torus_sim.rl.baselines import cluster_scenario, guarded

    def body() -> int:
        summary = train_and_compare(cluster_scenario(args), args.out, args.epochs, window=args.window, seed=args.seed)
        print(f"trained {args.epochs} epochs in {summary['seconds']:.0f} s")
        print(
            "mean bounded slowdown on held-back windows: "
            + ", ".join(f"{name} {summary[name]:.2f}" for name in ("FCFS", "SJF", "learned", *BASELINES))
        )
        print(f"wrote {args.out / 'rl_training.png'}, training.csv, heldout.csv, heldout_summary.csv, weights.json")
        return 0

    return guarded("torus_sim.rl.train", body)


if __name__ == "__main__":
    sys.exit(main())
