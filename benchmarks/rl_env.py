"""The learning environment's targets (issue 43): build time, random valid steps, vectorized workers.

    python -m benchmarks.run --only rl          # or: python -m benchmarks.rl_env [--quick]

1. Build: a fresh process imports ``torus_sim.rl`` and builds :class:`~torus_sim.rl.SchedulingEnv`
   (a vectorized worker does exactly this), on SDSC-SP2's 128-node cluster and on the 4x4x8 torus with
   the BG/L RAS failures; the median of three processes, against the goal of 0.5 s.
2. Steps: random valid actions (drawn from ``action_masks()``) over SDSC-SP2 windows of 1,000 jobs,
   on the cluster and on the torus with failures: steps per second, and the time per step over the
   time per pass of the built-in FCFS replay of the same windows (same process; goals: cluster no
   slower than ~13,000 steps/s on a quiet machine, torus with failures >= 1,000).
3. Vectorized: ``gymnasium.vector.AsyncVectorEnv`` with 2 worker processes against one environment
   stepped in this process (``SyncVectorEnv`` of 1), the same number of steps each: the speed-up
   (2 cores: at most 2x; the masks travel back through the info dict).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

SDSC = Path(__file__).resolve().parents[2] / "shared" / "data" / "swf" / "SDSC-SP2-1998-4.2-cln.swf.gz"
BUILD_GOAL = 0.5

_BUILD_CHILD = """
import json, sys, time
began = time.perf_counter()
from torus_sim.rl import SchedulingEnv
imported = time.perf_counter()
SchedulingEnv(json.loads(sys.argv[1]), window=1000, queue_slots=16)
print(json.dumps({"import": imported - began, "build": time.perf_counter() - imported}))
"""

PLATFORMS = {
    "cluster": {"platform": "cluster", "nodes": 128},
    "torus 4x4x8 + BG/L RAS": {"platform": "torus", "failures": "bundled"},
}


def _scenario(name: str) -> dict:
    return {**PLATFORMS[name], "workload": str(SDSC)}


def build_times(repeats: int = 3) -> None:
    """Import and build times of a fresh process, per platform (medians of ``repeats`` processes)."""
    import json

    print(f"SchedulingEnv build in a fresh process (SDSC-SP2, windows of 1,000; median of {repeats}; goal < {BUILD_GOAL} s):")
    for name in PLATFORMS:
        runs = [
            json.loads(
                subprocess.run(
                    [sys.executable, "-c", _BUILD_CHILD, json.dumps(_scenario(name))], capture_output=True, text=True, check=True
                ).stdout
            )
            for _ in range(repeats)
        ]
        imported = statistics.median(run["import"] for run in runs)
        built = statistics.median(run["build"] for run in runs)
        print(f"  {name:24s} import {imported:.2f} s, build {built:.2f} s ({built / BUILD_GOAL:.2f}x the goal)")


def _random_valid(env, rng) -> int:
    return int(rng.choice(np.flatnonzero(env.action_masks())))


def random_steps(windows: int = 3, window: int = 1000) -> None:
    """Random valid steps per second on each platform, against the FCFS replay's time per pass."""
    from torus_sim.experiments.extensions import build_policy

    print(f"Random valid actions, SDSC-SP2 windows of {window:,} jobs (K = 16), {windows} windows each:")
    for name in PLATFORMS:
        from torus_sim.rl import SchedulingEnv

        env = SchedulingEnv(_scenario(name), window=window, queue_slots=16)
        rng = np.random.default_rng(0)
        steps = passes = 0
        env_seconds = fcfs_seconds = 0.0
        for index in range(windows):
            start = 5000 + index * window
            began = time.perf_counter()
            env.reset(seed=index, options={"start": start})
            done = False
            while not done:
                _, _, terminated, truncated, _ = env.step(_random_valid(env, rng))
                steps += 1
                done = terminated or truncated
            env_seconds += time.perf_counter() - began
            model = env.window_model(start, env.model_seed, build_policy(env.scenario.replace(policy="FCFS")))
            began = time.perf_counter()
            model.run()
            fcfs_seconds += time.perf_counter() - began
            passes += model.scheduler.passes
        per_step, per_pass = env_seconds / steps, fcfs_seconds / passes
        print(
            f"  {name:24s} {steps:,} steps in {env_seconds:.2f} s: {steps / env_seconds:,.0f} steps/s; "
            f"FCFS replay {per_pass * 1e6:.0f} us per pass; step / pass {per_step / per_pass:.2f}x"
        )


class _Maker:
    """A picklable factory: each vectorized worker builds its own environment."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __call__(self):
        from torus_sim.rl import SchedulingEnv

        return SchedulingEnv(_scenario(self.name), window=1000, queue_slots=16)


def vectorized(steps: int = 4000) -> None:
    """AsyncVectorEnv with 2 workers against one environment, per platform: the same total steps, the speed-up."""
    import gymnasium

    def run(vector, total: int) -> float:
        rng = np.random.default_rng(0)
        _, info = vector.reset(seed=0)
        began = time.perf_counter()
        for _ in range(total // vector.num_envs):
            actions = [int(rng.choice(np.flatnonzero(mask))) for mask in info["action_mask"]]
            _, _, _, _, info = vector.step(np.asarray(actions))
        seconds = time.perf_counter() - began
        vector.close()
        return seconds

    print(f"Vectorized, {steps:,} random valid steps on SDSC-SP2 windows of 1,000 jobs:")
    for name in PLATFORMS:
        single = run(gymnasium.vector.SyncVectorEnv([_Maker(name)]), steps)
        double = run(gymnasium.vector.AsyncVectorEnv([_Maker(name), _Maker(name)]), steps)
        print(
            f"  {name:24s} 1 environment {single:.2f} s, AsyncVectorEnv of 2 workers {double:.2f} s "
            f"-> speed-up {single / double:.2f}x (2 cores)"
        )


def main(argv: list[str] | None = None) -> int:
    """Every part (``--quick``: one window, one build process, fewer steps)."""
    quick = "--quick" in (argv if argv is not None else sys.argv[1:])
    if not SDSC.exists():
        print(f"SDSC trace not found at {SDSC}", file=sys.stderr)
        return 2
    build_times(1 if quick else 3)
    random_steps(1 if quick else 3)
    vectorized(1000 if quick else 4000)
    return 0


if __name__ == "__main__":
    sys.exit(main())
