"""The field's baselines and learned agents on exactly the same held-back windows, in one table.

Run it (the bundled NASA iPSC/860 log on its 128-node cluster at c = 1.5, as the training example)::

    python -m torus_sim.rl.baselines --windows 20
    python -m torus_sim.rl.baselines --workload SDSC-SP2.swf.gz --load-scale 1.0 --policies FCFS-EASY,EASY-SJBF

Every entry schedules the same windows: the window starts are spread evenly over the held-back part of
the log (``start_range``), each window's model is built by :meth:`SchedulingEnv.window_model` with the
same seed and the same failures (a real log's failures of the window's period, or ``synthetic:N`` drawn
from the scenario's seed over the window's span), on an empty machine. A registry policy (FCFS,
FCFS-EASY, EASY-SJBF, conservative, PV-EASY, krevat, balancing, tiebreak, a plug-in) takes the
policy's seat and runs the window to its end; an agent (a function ``(observation, mask, env) ->
action``: the reference agents of :mod:`torus_sim.rl.agents`, a trained one) plays the window as an
episode of the environment, where its choices are the only starts (no backfilling around it).

Per window: mean bounded slowdown max(1, (wait + run) / max(run, Γ)) (Γ the scenario's ``gamma``, 10 s
by default; what the environment's ``bsld`` reward sums), mean wait (first start - submission), and
utilization (the completed jobs' size x runtime over capacity x the time from the window's first
submission to its last completion). The table: mean, median and worst window of the bounded slowdown,
mean wait, mean utilization, and the windows on which each entry's bounded slowdown is at most the
reference's (FCFS-EASY by default: the comparison the field publishes, not FCFS without backfilling);
with the windows as replicates, the mean bounded slowdown's 95% bootstrap interval, the paired difference
with the reference (its interval) and Wilcoxon's signed-rank p-value.

References:
    Zhang et al., RLScheduler, SC'20 §5 (held-back windows, heuristics with and without backfilling);
    Feitelson, "Metrics for parallel job scheduling" (bounded slowdown); Mu'alem & Feitelson, TPDS 2001 (EASY).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

import numpy as np

__all__ = [
    "DEFAULT_POLICIES",
    "add_cluster_arguments",
    "cluster_scenario",
    "compare_on_windows",
    "guarded",
    "heldout_starts",
    "main",
    "summary_table",
    "window_metrics",
]

DEFAULT_POLICIES = ("FCFS", "FCFS-EASY", "EASY-SJBF", "conservative")
"""The registry policies the command compares by default (beside the FCFS and SJF agents)."""


def heldout_starts(env, count: int) -> list[int]:
    """``count`` window starts spread evenly over the environment's ``start_range`` of the log.

    The first is the job after the range's lower boundary (a training range ending there draws its
    last start before it), the last at the range's upper boundary, as the training example spreads
    its held-back windows.

    Args:
        env: a :class:`~torus_sim.rl.env.SchedulingEnv` (its ``start_range`` is the held-back part).
        count: windows, >= 1.

    Returns:
        Sorted job indices (with repeats only when the range holds fewer than ``count`` starts).
    """
    last = len(env.workload.jobs) - env.window
    low, high = env.start_range
    first = min(int(low * last) + 1, int(high * last))
    return np.linspace(first, int(high * last), count).astype(int).tolist()


def window_metrics(model, capacity: int, gamma: float) -> dict[str, float]:
    """Bounded slowdown, wait and utilization of a finished window, from the model's jobs table.

    Args:
        model: a :class:`~torus_sim.engine.model.SchedulingModel` run to its end with ``record=True``.
        capacity: nodes of the platform.
        gamma: Γ of the bounded slowdown, seconds.

    Returns:
        ``{"bsld": mean, "wait": mean seconds, "utilization": fraction, "jobs": completed}``.
    """
    table = model.recorder.snapshot("jobs")
    column = {
        name: np.asarray(table.column(name), dtype=np.float64)
        for name in ("submitted_at", "first_started_at", "finished_at", "runtime", "size")
    }
    runtime = column["runtime"]
    response = column["finished_at"] - column["submitted_at"]
    bsld = np.maximum(response / np.maximum(runtime, gamma), 1.0)
    span = max(float(column["finished_at"].max() - column["submitted_at"].min()), 1.0) if len(runtime) else 1.0
    return {
        "bsld": float(bsld.mean()) if len(bsld) else float("nan"),
        "wait": float((column["first_started_at"] - column["submitted_at"]).mean()) if len(runtime) else float("nan"),
        "utilization": float(np.dot(column["size"], runtime)) / (capacity * span),
        "jobs": int(len(runtime)),
    }


def _play(env, agent: Callable, start: int, seed: int):
    """Play one window as an episode; the finished model."""
    observation, info = env.reset(seed=seed, options={"start": start})
    done = False
    while not done:
        observation, _, terminated, truncated, info = env.step(agent(observation, info["action_mask"], env))
        done = terminated or truncated
    if truncated:
        raise RuntimeError(
            f"window at job {start} was truncated after {env.max_decisions} decisions: its metrics would be partial"
        )
    return env.model


def compare_on_windows(env, starts: list[int], policies=DEFAULT_POLICIES, agents: dict | None = None, seed: int = 0):
    """Every policy and agent on the same windows: one row per (entry, window).

    Args:
        env: a :class:`~torus_sim.rl.env.SchedulingEnv` (scenario, window length, failures).
        starts: window starts (job indices), e.g. :func:`heldout_starts`.
        policies: registry policy names (or import paths, as ``--policy`` takes), or ``(label, name, params)``
            triples (``("my agent", "learned", {"agent": "weights.json"})``: a saved agent as a policy).
        agents: ``{name: function (observation, mask, env) -> action}``; None: the FCFS and SJF agents.
        seed: the episodes' seed: every entry's window i is built with the same model seed.

    Returns:
        A pandas DataFrame with columns entry, kind (policy | agent), window (0, 1, ...), window_start, bsld,
        wait, utilization, jobs.

    Raises:
        ConfigurationError: an unknown policy, or one the platform or workload refuses (its sentence).
    """
    import pandas as pd

    from torus_sim.experiments.extensions import build_policy
    from torus_sim.rl.agents import fcfs_agent, sjf_agent

    agents = {"FCFS agent": fcfs_agent, "SJF agent": sjf_agent} if agents is None else agents
    scenario = env.scenario
    gamma = scenario.gamma
    capacity = env._capacity
    rows = []
    for window, start in enumerate(starts):
        env.reset(seed=seed, options={"start": start})  # the episode's model seed for this window
        model_seed = env.model_seed
        for entry in policies:
            name, (policy, params) = (entry, (entry, {})) if isinstance(entry, str) else (entry[0], entry[1:])
            model = env.window_model(start, model_seed, build_policy(scenario.replace(policy=policy, policy_params=params)))
            model.run()
            rows.append(
                {
                    "entry": name,
                    "kind": "policy",
                    "window": window,
                    "window_start": start,
                    **window_metrics(model, capacity, gamma),
                }
            )
        for name, agent in agents.items():
            model = _play(env, agent, start, seed)
            rows.append(
                {
                    "entry": name,
                    "kind": "agent",
                    "window": window,
                    "window_start": start,
                    **window_metrics(model, capacity, gamma),
                }
            )
    return pd.DataFrame(rows)


def summary_table(per_window, reference: str = "FCFS-EASY"):
    """One row per entry: mean, median and worst-window bounded slowdown, mean wait and utilization, wins, intervals.

    The windows are the replicates: ``bsld 95% CI`` is the mean bounded slowdown's bootstrap interval over them,
    ``bsld - <reference>`` the mean paired difference with the reference on the same windows with its interval,
    and ``Wilcoxon p`` the two-sided signed-rank test of those differences
    (:mod:`torus_sim.metrics.confidence`).

    Args:
        per_window: :func:`compare_on_windows`'s table.
        reference: the entry the wins and differences are counted against (absent: no such columns).

    Returns:
        A pandas DataFrame indexed by entry, in the order the entries first appear.
    """
    import pandas as pd

    from torus_sim.metrics.confidence import mean_interval, paired_difference

    order = list(dict.fromkeys(per_window["entry"]))
    grouped = per_window.groupby("entry", sort=False)
    table = pd.DataFrame(
        {
            "mean bsld": grouped["bsld"].mean(),
            "median bsld": grouped["bsld"].median(),
            "worst window bsld": grouped["bsld"].max(),
            "mean wait (s)": grouped["wait"].mean(),
            "utilization": grouped["utilization"].mean(),
        }
    ).loc[order]
    table["bsld 95% CI"] = [
        _interval_text(mean_interval(grouped.get_group(name)["bsld"].to_numpy(dtype=float))) for name in order
    ]
    if reference in order:
        ours = per_window.pivot(index="window", columns="entry", values="bsld")
        wins = (ours.le(ours[reference], axis=0)).sum()
        table[f"windows <= {reference}"] = [f"{int(wins[name])}/{len(ours)}" for name in order]
        paired = {
            name: paired_difference(ours[reference].to_numpy(dtype=float), ours[name].to_numpy(dtype=float)) for name in order
        }
        table[f"bsld - {reference}"] = [
            f"{paired[name].difference.mean:+,.2f} {_interval_text(paired[name].difference)}" for name in order
        ]
        table["Wilcoxon p"] = [paired[name].p_value for name in order]
    return table


def _interval_text(interval) -> str:
    """``[low, high]`` with two decimals (``[n/a]`` for one window)."""
    if interval.low != interval.low:
        return "[n/a]"
    return f"[{interval.low:,.2f}, {interval.high:,.2f}]"


def markdown(table) -> str:
    """The summary table as GitHub markdown (bsld 2 decimals, wait whole seconds, utilization %).

    Args:
        table: :func:`summary_table`'s table.

    Returns:
        The markdown text, one row per entry.
    """
    columns = list(table.columns)
    lines = ["| entry | " + " | ".join(columns) + " |", "|---|" + "---:|" * len(columns)]
    for name, row in table.iterrows():
        cells = []
        for column in columns:
            value = row[column]
            if isinstance(value, str):
                cells.append(value)
            elif column.startswith("mean wait"):
                cells.append(f"{value:,.0f}")
            elif column == "utilization":
                cells.append(f"{100 * value:.1f}%")
            elif column == "Wilcoxon p":
                cells.append(f"{value:.3g}")
            else:
                cells.append(f"{value:,.2f}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def add_cluster_arguments(parser: argparse.ArgumentParser) -> None:
    """The options every learning command shares: ``--workload``, ``--nodes``, ``--load-scale``."""
    parser.add_argument("--workload", default="bundled", help="SWF log (default: the bundled NASA iPSC/860 log)")
    parser.add_argument("--nodes", type=int, default=128, help="cluster nodes P")
    parser.add_argument("--load-scale", type=float, default=1.5, help="c: runtimes x c (BGL-FAULT §6.2)")


def cluster_scenario(args: argparse.Namespace) -> dict:
    """The environment's scenario fields from :func:`add_cluster_arguments`' options."""
    return {"platform": "cluster", "nodes": args.nodes, "workload": args.workload, "load_scale": args.load_scale}


def guarded(program: str, body: Callable[[], int]) -> int:
    """Run a learning command's ``body``: a sentence and exit code 2 when gymnasium is missing or an input is bad.

    Args:
        program: the command's name for the sentence (``torus_sim.rl.train``).
        body: the command's work; its return value is the exit code.

    Returns:
        The exit code.
    """
    from torus_sim.core.errors import TorusSimError
    from torus_sim.rl import MISSING, gymnasium

    if gymnasium is None:
        print(f"{program}: error: {MISSING}", file=sys.stderr)
        return 2
    try:
        return body()
    except (TorusSimError, FileNotFoundError) as error:
        print(f"{program}: error: {error}", file=sys.stderr)
        return 2


def main(argv: list[str] | None = None) -> int:
    """Command line: print the table (markdown) for registry policies and the reference agents."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_cluster_arguments(parser)
    parser.add_argument("--window", type=int, default=256, help="jobs per window")
    parser.add_argument("--windows", type=int, default=20, help="held-back windows")
    parser.add_argument("--heldout", type=float, default=0.7, help="the held-back part starts at this fraction of the log")
    parser.add_argument("--policies", default=",".join(DEFAULT_POLICIES), help="registry policies, comma-separated")
    parser.add_argument("--agent", action="append", default=[], help="a saved agent file (weights.json, policy.npz), repeatable")
    parser.add_argument("--reference", default="FCFS-EASY", help="the entry wins are counted against")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--csv", help="also write the per-window table here")
    args = parser.parse_args(argv)

    def body() -> int:
        from torus_sim.rl.env import SchedulingEnv

        policies = [name.strip() for name in args.policies.split(",") if name.strip()]
        policies += [(f"agent {path}", "learned", {"agent": path}) for path in args.agent]
        env = SchedulingEnv(cluster_scenario(args), window=args.window, start_range=(args.heldout, 1.0))
        per_window = compare_on_windows(env, heldout_starts(env, args.windows), policies, seed=args.seed)
        if args.csv:
            per_window.to_csv(args.csv, index=False)
        print(
            f"{args.windows} windows of {args.window} jobs from the last {100 * (1 - args.heldout):.0f}% of {env.workload.source}"
        )
        print(markdown(summary_table(per_window, args.reference)))
        return 0

    return guarded("torus_sim.rl.baselines", body)


if __name__ == "__main__":
    sys.exit(main())
