"""Scale benchmark (issue 17): cost per job as the log and its queue grow.

Replays growing prefixes of the HPC2N log (25k, 50k, 100k jobs and the whole 202,871) on the 4x4x8
torus (Krevat, backfilling and migration, no failures) and online on its 240-processor cluster
(FCFS-EASY), each in its own process, and prints milliseconds per job, peak memory (max RSS) and the
ratio to Mesa's bare DEVS loop running the same number of no-op events, measured in the same run.
Targets: cost per job flat within 1.5x from 25k to 200k jobs; the whole log on the torus under 60 s.

Run from the repository root: ``python -m benchmarks.run --only scale`` (``--quick``: 25k and 50k only;
``--baseline PATH``: another checkout's code replays each prefix too, in the same run, with the ratio).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from benchmarks.child import CHILD_PRELUDE

HPC2N = Path(__file__).resolve().parents[2] / "shared" / "data" / "swf" / "HPC2N-2002-2.2-cln.swf.gz"
PREFIXES = (25_000, 50_000, 100_000, None)

_CHILD = (
    CHILD_PRELUDE
    + """
platform, jobs = sys.argv[2], None if sys.argv[3] == "all" else int(sys.argv[3])
fields = dict(workload=sys.argv[1], max_jobs=jobs, failures="none")
if platform == "cluster":
    fields.update(platform="cluster", policy="FCFS-EASY")
model = build_model(Scenario(**fields), {}, record=True)
began = time.perf_counter()
model.run()
print(json.dumps({"seconds": time.perf_counter() - began, "jobs": len(model.jobs), "events": model.counters["events_run"],
                  "max_rss_mib": peak_mib()}))
"""
)


def _replay(root: Path | None, platform: str, prefix: int | None) -> dict:
    """One prefix in a fresh process, with this checkout's code or ``root``'s."""
    env = dict(os.environ)
    if root is not None:
        env["PYTHONPATH"] = str(root)
    output = subprocess.run(
        [sys.executable, "-c", _CHILD, str(HPC2N), platform, "all" if prefix is None else str(prefix)],
        capture_output=True,
        text=True,
        check=True,
        cwd=root,
        env=env,
    )
    return json.loads(output.stdout.strip().splitlines()[-1])


def scale_replays(quick: bool = False, baseline: Path | None = None) -> None:
    """Print ms per job, peak memory and the ratio to Mesa's no-op floor for each prefix and platform.

    Args:
        quick: the 25k and 50k prefixes only.
        baseline: another checkout (say, before an optimization) whose code replays each prefix too,
            right before this one's, with the ratio of the two times.
    """
    from benchmarks.run import engine_floor

    if not HPC2N.exists():
        print(f"HPC2N trace not found at {HPC2N}", file=sys.stderr)
        return
    prefixes = PREFIXES[:2] if quick else PREFIXES
    for platform, label in (("torus", "4x4x8 torus, Krevat"), ("cluster", "240-processor cluster, FCFS-EASY")):
        print(f"HPC2N prefixes on the {label}, no failures, one process each:")
        first = None
        for prefix in prefixes:
            before = _replay(baseline, platform, prefix) if baseline is not None else None
            found = _replay(None, platform, prefix)
            per_job = found["seconds"] / found["jobs"] * 1e3
            first = first or per_job
            floor = engine_floor(found["events"])
            print(
                f"  {found['jobs']:>8,} jobs  {found['seconds']:7.1f} s  {per_job:6.3f} ms/job ({per_job / first:.2f}x the first)  "
                f"{found['max_rss_mib']:5.0f} MiB  {found['events']:>9,} events, Mesa no-op floor {floor:.1f} s "
                f"({found['seconds'] / floor:.1f}x)"
            )
            if before is not None:
                print(
                    f"  {'':>8}  baseline {before['seconds']:7.1f} s  {before['seconds'] / before['jobs'] * 1e3:6.3f} ms/job  "
                    f"{before['max_rss_mib']:5.0f} MiB -> this / baseline = {found['seconds'] / before['seconds']:.2f}x"
                )
