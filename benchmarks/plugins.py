"""Benchmarks of your own scheduler (issue 29): a plug-in policy's cost and the Gymnasium environment's.

1. The whole CTC-SP2 log (P = 430) under the built-in FCFS-EASY and under the examples package's
   plug-in FCFS-EASY (written against :mod:`torus_sim.api`, selected by its entry point), each in
   its own process, alternated three times; the medians and their ratio (goal: plug-in within 1.2x).
   The two job records are compared too (they must be identical).
2. :class:`~torus_sim.rl.SchedulingEnv` on SDSC-SP2 (cluster, P = 128) with a trivial agent (always
   the first waiting job): decisions per second over consecutive 1,000-job windows, against the
   built-in FCFS replay of the same windows (same jobs, the same passes), measured in the same
   process: the ratio of time per decision to FCFS's time per pass (goal: under 2x).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.child import CHILD_PRELUDE

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "swf"
CTC = SHARED / "CTC-SP2-1996-3.1-cln.swf.gz"
SDSC = SHARED / "SDSC-SP2-1998-4.2-cln.swf.gz"

_CHILD = (
    CHILD_PRELUDE
    + """
import hashlib
scenario = Scenario(platform="cluster", nodes=430, workload=sys.argv[1], policy=sys.argv[2])
inputs = {}
model = build_model(scenario, inputs)
began = time.perf_counter()
record = model.run()
seconds = time.perf_counter() - began
digest = hashlib.sha256(record.jobs.sort_values("job_id").to_csv(index=False).encode()).hexdigest()
print(json.dumps({"seconds": seconds, "passes": model.scheduler.passes, "digest": digest, "max_rss_mib": peak_mib()}))
"""
)


def plugin_vs_builtin(repeats: int = 3) -> None:
    """The built-in FCFS-EASY against the plug-in FCFS-EASY on the whole CTC-SP2 log, alternated, medians."""
    if not CTC.exists():
        print(f"CTC trace not found at {CTC}", file=sys.stderr)
        return
    runs: dict[str, list[dict]] = {"FCFS-EASY": [], "example-fcfs-easy": []}
    for _ in range(repeats):
        for policy in runs:
            output = subprocess.run([sys.executable, "-c", _CHILD, str(CTC), policy], capture_output=True, text=True, check=True)
            runs[policy].append(json.loads(output.stdout.strip().splitlines()[-1]))
    builtin = statistics.median(run["seconds"] for run in runs["FCFS-EASY"])
    plugin = statistics.median(run["seconds"] for run in runs["example-fcfs-easy"])
    same = {run["digest"] for run in runs["FCFS-EASY"] + runs["example-fcfs-easy"]}
    print(f"Whole CTC-SP2 log (P = 430), simulation only, median of {repeats} alternated runs, one process each:")
    print(f"  built-in FCFS-EASY   {builtin:6.2f} s  ({runs['FCFS-EASY'][0]['passes']:,} passes)")
    print(f"  plug-in FCFS-EASY    {plugin:6.2f} s  -> {plugin / builtin:.2f}x the built-in (goal <= 1.2x)")
    print(f"  job records identical: {'yes' if len(same) == 1 else 'NO'}")


def environment_decisions(windows: int = 4, window: int = 1000) -> None:
    """Decisions per second of the Gymnasium environment with a trivial agent, against FCFS's passes."""
    from torus_sim.engine.model import SchedulingModel
    from torus_sim.experiments.model_builder import build_platform
    from torus_sim.policies.easy import FcfsPolicy
    from torus_sim.rl import SchedulingEnv

    if not SDSC.exists():
        print(f"SDSC trace not found at {SDSC}", file=sys.stderr)
        return
    env = SchedulingEnv({"platform": "cluster", "workload": str(SDSC)}, window=window, queue_slots=16)
    env_seconds = fcfs_seconds = 0.0
    decisions = passes = 0
    for index in range(windows):
        start = 5000 + index * window
        began = time.perf_counter()
        observation, info = env.reset(seed=index, options={"start": start})
        done = False
        while not done:
            observation, reward, terminated, truncated, info = env.step(0)
            decisions += 1
            done = terminated or truncated
        env_seconds += time.perf_counter() - began
        workload = env.model.workload
        began = time.perf_counter()
        model = SchedulingModel(workload, FcfsPolicy(), build_platform(env.scenario, env._capacity), None, seed=0)
        model.run()
        fcfs_seconds += time.perf_counter() - began
        passes += model.scheduler.passes
    per_decision = env_seconds / decisions
    per_pass = fcfs_seconds / passes
    print(f"SchedulingEnv on SDSC-SP2 (cluster, P = 128), {windows} windows of {window:,} jobs, head-always agent, K = 16:")
    print(
        f"  environment  {decisions:,} decisions in {env_seconds:.2f} s: {decisions / env_seconds:,.0f} decisions/s ({per_decision * 1e6:.0f} us each)"
    )
    print(f"  FCFS replay  {passes:,} passes in {fcfs_seconds:.2f} s ({per_pass * 1e6:.0f} us each)")
    print(f"  time per decision / time per FCFS pass: {per_decision / per_pass:.2f}x (goal < 2x)")


if __name__ == "__main__":
    plugin_vs_builtin()
    environment_decisions()
