"""Train a Stable-Baselines3 agent on SchedulingEnv, save it, and compare it on held-back windows.

Run it (install the ``sb3`` extra: ``pip install 'torus-sim[sb3]'``)::

    python -m torus_sim.rl.sb3 --algo maskable-ppo --minutes 10 --out sb3-results
    python -m torus_sim.rl.sb3 --workload SDSC-SP2-1998-4.2-cln.swf.gz --load-scale 1.0 --timesteps 200000

It trains on windows drawn from the first 70% of the log (``--timesteps`` steps, or until
``--minutes`` of training have passed, whichever comes first), saves the model (``model.zip``, loaded
back with the algorithm's ``load``) and its actor as data (``policy.npz``, which ``torus-sim run --policy
learned --policy-param agent=policy.npz`` runs), then plays the deterministic agent on ``--windows`` windows spread
over the last 30% (never drawn in training) beside the FCFS and SJF agents and the registry's
FCFS-EASY and EASY-SJBF on the same windows (:func:`torus_sim.rl.baselines.compare_on_windows`). It
writes the files :mod:`torus_sim.rl.train` writes: ``training.csv`` (every finished training episode:
timesteps, mean bounded slowdown), ``heldout.csv``, ``heldout_summary.csv`` and ``rl_training.png``.

Algorithms (:data:`ALGORITHMS`): ``maskable-ppo`` (sb3-contrib's MaskablePPO, which reads
``env.action_masks()``: no wrapper) and ``ppo`` (Stable-Baselines3's PPO without masks: an invalid
choice is a wait, the environment's default). The agent's choices are the only starts (no backfilling
around it).

References:
    Schulman et al., "Proximal policy optimization algorithms", 2017; Huang & Ontañón, "A closer look
    at invalid action masking in policy gradient algorithms", FLAIRS 2022 (MaskablePPO); Zhang et al.,
    RLScheduler, SC'20 (train on sampled windows, test on held-back ones).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

__all__ = ["ALGORITHMS", "MISSING_SB3", "export_policy", "main", "train_sb3"]

ALGORITHMS = {"maskable-ppo": ("sb3_contrib", "MaskablePPO", True), "ppo": ("stable_baselines3", "PPO", False)}
"""``--algo`` name -> (module, class, reads the action masks)."""

MISSING_SB3 = "torus_sim.rl.sb3 needs the sb3 extra: pip install 'torus-sim[sb3]' (Stable-Baselines3, sb3-contrib, CPU torch)"
"""The sentence said when Stable-Baselines3 or sb3-contrib is not installed."""


def _algorithm(name: str):
    """The algorithm's class.

    Raises:
        ConfigurationError: an unknown name (the names listed), or the extra not installed (:data:`MISSING_SB3`).
    """
    import importlib

    from torus_sim.core.errors import ConfigurationError

    if name not in ALGORITHMS:
        raise ConfigurationError(f"unknown algorithm {name!r}; the algorithms are: {', '.join(ALGORITHMS)}")
    module, cls, _ = ALGORITHMS[name]
    try:
        return getattr(importlib.import_module(module), cls)
    except ImportError:
        raise ConfigurationError(MISSING_SB3) from None


def export_policy(model, shape, path: Path, backfill: str = "none") -> Path:
    """Write the trained actor as data (``policy.npz``) that ``--policy learned`` runs without torch or pickle.

    The actor of SB3's ``MlpPolicy``: the hidden layers of ``mlp_extractor.policy_net`` (Linear layers with
    Tanh or ReLU) and ``action_net``; the features extractor must be the identity (``FlattenExtractor`` of
    a 1-D observation), and the agent must have one placement per job (``Discrete(K + 1)``).

    Args:
        model: a trained MaskablePPO or PPO.
        shape: the environment's :class:`~torus_sim.policies.agent_observation.ObservationShape`.
        path: the ``.npz`` to write.
        backfill: the backfilling around the agent it was trained with (the policy's default).

    Returns:
        ``path``.

    Raises:
        ConfigurationError: another network shape (a layer kind or activation not listed above).
    """
    import numpy as np

    from torus_sim.core.errors import ConfigurationError

    arrays: dict = {
        "kind": np.array("mlp"),
        "backfill": np.array(backfill),
        "queue_slots": np.array(shape.queue_slots),
        "max_walltime": np.array(shape.max_walltime),
        "observation_length": np.array(shape.length),
        "job_features": np.array(shape.extra_features, dtype=str),
        "max_user": np.array(shape.max_user),
    }
    activations, index = set(), 0
    for module in model.policy.mlp_extractor.policy_net:
        kind = type(module).__name__
        if kind == "Linear":
            arrays[f"layer_{index}_weight"] = module.weight.detach().cpu().numpy()
            arrays[f"layer_{index}_bias"] = module.bias.detach().cpu().numpy()
            index += 1
        elif kind in ("Tanh", "ReLU"):
            activations.add(kind.lower())
        else:
            raise ConfigurationError(f"export_policy: a {kind} layer in the policy network is not exported (Linear, Tanh, ReLU)")
    if len(activations) > 1:
        raise ConfigurationError(f"export_policy: one activation expected, found {sorted(activations)}")
    arrays["activation"] = np.array(activations.pop() if activations else "tanh")
    arrays["action_weight"] = model.policy.action_net.weight.detach().cpu().numpy()
    arrays["action_bias"] = model.policy.action_net.bias.detach().cpu().numpy()
    with path.open("wb") as stream:
        np.savez(stream, **arrays)
    return path


def train_sb3(
    scenario: dict,
    out: Path,
    algo: str = "maskable-ppo",
    timesteps: int = 100_000,
    minutes: float | None = None,
    window: int = 256,
    heldout_windows: int = 20,
    seed: int = 0,
    quiet: bool = False,
    backfill: str = "none",
) -> dict:
    """Train, save, evaluate on held-back windows, write the tables and the figure.

    Args:
        scenario: the environment's scenario fields (platform, SWF workload, load scale, failures).
        out: folder for the outputs (created).
        algo: a name of :data:`ALGORITHMS`.
        timesteps: training steps (decisions), at most.
        minutes: stop training after this much wall time (None: no limit).
        window: jobs per window.
        heldout_windows: evaluation windows, spread over the last 30% of the log.
        seed: seeds the algorithm and the training windows.
        quiet: no progress lines.
        backfill: the environment's backfilling around the agent (``SchedulingEnv(backfill=...)``).

    Returns:
        ``{entry: mean bounded slowdown over the held-back windows, ..., "seconds": training time,
        "timesteps": steps trained}``.

    Raises:
        ConfigurationError: an unknown algorithm, the extra not installed, or a bad scenario (its sentence).
    """
    import numpy as np
    import pandas as pd

    from torus_sim.rl.agents import fcfs_agent, sjf_agent
    from torus_sim.rl.baselines import heldout_starts
    from torus_sim.rl.env import SchedulingEnv
    from torus_sim.rl.train import heldout_comparison, training_figure

    algorithm = _algorithm(algo)
    masked = ALGORITHMS[algo][2]
    from stable_baselines3.common.callbacks import BaseCallback

    out.mkdir(parents=True, exist_ok=True)
    train_env = SchedulingEnv(scenario, window=window, queue_slots=16, start_range=(0.0, 0.7), backfill=backfill)
    test_env = SchedulingEnv(scenario, window=window, queue_slots=16, start_range=(0.7, 1.0), backfill=backfill)
    episodes: list[tuple[int, float]] = []
    deadline = None if minutes is None else time.perf_counter() + 60.0 * minutes

    class _Progress(BaseCallback):
        """Keeps each finished episode's mean bounded slowdown (SB3's Monitor info); stops at the deadline."""

        def _on_step(self) -> bool:
            for info in self.locals.get("infos", ()):
                if "episode" in info:
                    episodes.append((self.num_timesteps, -float(info["episode"]["r"])))
                    if not quiet and len(episodes) % 20 == 0:
                        recent = np.mean([value for _, value in episodes[-20:]])
                        print(
                            f"{self.num_timesteps:8d} steps: last 20 episodes' mean bounded slowdown {recent:8.2f}",
                            file=sys.stderr,
                        )
            return deadline is None or time.perf_counter() < deadline

    model = algorithm("MlpPolicy", train_env, seed=seed, verbose=0)
    began = time.perf_counter()
    model.learn(total_timesteps=timesteps, callback=_Progress())
    seconds = time.perf_counter() - began
    model.save(out / "model.zip")
    export_policy(model, train_env.shape, out / "policy.npz", backfill)  # the actor as data: --policy learned

    def learned(observation, mask, env) -> int:
        keywords = {"action_masks": mask.astype(bool)} if masked else {}
        return int(model.predict(observation, deterministic=True, **keywords)[0])

    starts = heldout_starts(test_env, heldout_windows)
    agents = {"FCFS": fcfs_agent, "SJF": sjf_agent, algo: learned}
    results = heldout_comparison(test_env, starts, agents, out)
    pd.DataFrame(episodes, columns=["timesteps", "mean_bounded_slowdown"]).to_csv(out / "training.csv", index=False)
    if episodes:
        smooth = pd.Series([value for _, value in episodes]).rolling(20, min_periods=1).mean()
        curve = list(zip([step for step, _ in episodes], smooth.tolist(), strict=True))
        labels = (
            "training steps",
            "mean bounded slowdown, training windows (rolling 20)",
            f"{algo}, {model.num_timesteps:,} steps",
            algo,
        )
        references = {
            "FCFS-EASY (held-back)": float(np.mean(results["FCFS-EASY"])),
            "SJF (held-back)": float(np.mean(results["SJF"])),
        }
        training_figure(curve, references, results, out / "rl_training.png", scenario, window, labels)
    summary = {name: float(np.mean(values)) for name, values in results.items()}
    summary.update(seconds=seconds, timesteps=int(model.num_timesteps))
    return summary


def main(argv: list[str] | None = None) -> int:
    """Command line: train, save, compare, print the held-back means; a sentence and exit code 2 on bad input."""
    from torus_sim.rl.baselines import add_cluster_arguments

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--algo", default="maskable-ppo", help=f"one of: {', '.join(ALGORITHMS)}")
    add_cluster_arguments(parser)
    parser.add_argument("--timesteps", type=int, default=100_000, help="training steps, at most")
    parser.add_argument("--minutes", type=float, default=None, help="stop training after this many minutes")
    parser.add_argument("--window", type=int, default=256)
    parser.add_argument("--windows", type=int, default=20, help="held-back windows")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--backfill", default="none", help="backfilling around the agent: none, easy or rlscheduler")
    parser.add_argument("--out", type=Path, default=Path("sb3-results"))
    args = parser.parse_args(argv)
    from torus_sim.rl.baselines import cluster_scenario, guarded

    def body() -> int:
        _algorithm(args.algo)  # the sentence before anything is built
        summary = train_sb3(
            cluster_scenario(args),
            args.out,
            args.algo,
            args.timesteps,
            args.minutes,
            args.window,
            args.windows,
            args.seed,
            False,
            args.backfill,
        )
        print(f"trained {summary['timesteps']:,} steps in {summary['seconds']:.0f} s")
        names = [name for name in summary if name not in ("seconds", "timesteps")]
        print("mean bounded slowdown on held-back windows: " + ", ".join(f"{name} {summary[name]:.2f}" for name in names))
        print(f"wrote {args.out / 'model.zip'}, policy.npz, training.csv, heldout.csv, heldout_summary.csv, rl_training.png")
        return 0

    return guarded("torus_sim.rl.sb3", body)


if __name__ == "__main__":
    sys.exit(main())
