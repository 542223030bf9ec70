"""Scale benchmark (issue 17): cost per job as the log and its queue grow.

Replays growing prefixes of the HPC2N log (25k, 50k, 100k jobs and the whole 202,871) on the 4x4x8
torus (Krevat, backfilling and migration, no failures) and online on its 240-processor cluster
(FCFS-EASY), each in its own process, and prints milliseconds per job, peak memory (max RSS) and the
ratio to Mesa's bare DEVS loop running the same number of no-op events, measured in the same run.
Targets: cost per job flat within 1.5x from 25k to 200k jobs; the whole log on the torus under 60 s.
Then RICC-2010-2 (the PWA's largest log, 447,794 jobs on 8,192 processors; :func:`ricc_replays`):
prefixes of 50k, 100k, 200k jobs and the whole log under FCFS-EASY, EASY-SJBF, PV-EASY and conservative
on its 8,192 processors and under Krevat on the 4x4x8 torus, saturated (c = 1) and at offered load 0.9
(issue 32's goals: FCFS-EASY under 60 s and 1 GiB, the other online policies under 2 minutes, the
torus under 5 minutes; cost per job flat within 1.5x from 50k to the whole log). Last, a synthetic 450,000-job log of many small jobs on 8,192 processors (:func:`synthetic_log`) online
under FCFS-EASY: goal under 60 s and 1 GiB.

Run from the repository root: ``python -m benchmarks.run --only scale`` (``--quick``: 25k and 50k only;
``--baseline PATH``: another checkout's code replays each prefix too, in the same run, with the ratio;
RICC's table alone: ``python -m benchmarks.scale --ricc [--baseline PATH] [--only FCFS]``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from benchmarks.child import CHILD_PRELUDE

HPC2N = Path(__file__).resolve().parents[2] / "shared" / "data" / "swf" / "HPC2N-2002-2.2-cln.swf.gz"
RICC = Path(__file__).resolve().parents[2] / "shared" / "data" / "swf" / "RICC-2010-2.swf.gz"
PREFIXES = (25_000, 50_000, 100_000, None)
RICC_PREFIXES = (50_000, 100_000, 200_000, None)
"""RICC-2010-2 (447,794 jobs, 8,192 processors, queues of thousands): the prefixes replayed online (issue 32)."""
LARGE_LOG_JOBS = 450_000
LARGE_LOG_PROCESSORS = 8192

_CHILD = (
    CHILD_PRELUDE
    + """
platform, jobs = sys.argv[2], None if sys.argv[3] == "all" else int(sys.argv[3])
fields = dict(workload=sys.argv[1], max_jobs=jobs, failures="none")
if platform == "cluster":
    fields.update(platform="cluster", policy="FCFS-EASY")
fields.update(json.loads(sys.argv[4]) if len(sys.argv) > 4 else {})
read_began = time.perf_counter()
model = build_model(Scenario(**fields), {}, record=True)
began = time.perf_counter()
model.run()
print(json.dumps({"seconds": time.perf_counter() - began, "read_seconds": began - read_began, "jobs": model.completed,
                  "events": model.counters["events_run"], "max_rss_mib": peak_mib()}))
"""
)

RICC_RUNS = (
    ("FCFS-EASY", "cluster", {"policy": "FCFS-EASY"}, 60.0),
    ("EASY-SJBF", "cluster", {"policy": "SJF-EASY"}, 120.0),  # the alias: a baseline before the rename knows it
    ("PV-EASY", "cluster", {"policy": "PV-EASY"}, 120.0),
    ("conservative", "cluster", {"policy": "conservative"}, 120.0),
    ("Krevat, saturated (c = 1)", "torus", {"policy": "krevat"}, 300.0),
    ("Krevat, offered load 0.9", "torus", {"policy": "krevat", "offered_load": 0.9}, 300.0),
)
"""Issue 32's RICC-2010-2 replays: (label, platform, scenario fields, goal for the whole log in seconds).
The cluster is RICC's own 8,192 processors; the torus is the 4x4x8 of supernodes with BGL-FAULT's scaling."""

WARM_JOBS = 1000
"""Jobs of the untimed replay before a table: numba compiles conservative's pass at its first use and caches it
beside the module; the timed replays load it (what every later run does)."""

BASELINE_LIMIT = 600.0
"""Seconds a replay (this checkout's or the baseline's) may run before it is stopped and reported as longer
(2.5 times the run's goal when that is less)."""


def _replay(
    root: Path | None,
    platform: str,
    prefix: int | None,
    log: Path = HPC2N,
    fields: dict | None = None,
    limit: float | None = None,
) -> dict | None:
    """One prefix of ``log`` in a fresh process, with this checkout's code or ``root``'s; None past ``limit`` seconds."""
    env = dict(os.environ)
    if root is not None:
        env["PYTHONPATH"] = str(root)
    command = [sys.executable, "-c", _CHILD, str(log), platform, "all" if prefix is None else str(prefix)]
    if fields:
        command.append(json.dumps(fields))
    try:
        output = subprocess.run(command, capture_output=True, text=True, check=True, cwd=root, env=env, timeout=limit)
    except subprocess.TimeoutExpired:
        return None
    return json.loads(output.stdout.strip().splitlines()[-1])


def synthetic_log(path: Path, jobs: int = LARGE_LOG_JOBS, processors: int = LARGE_LOG_PROCESSORS, load: float = 0.85) -> Path:
    """Write an SWF log of many small jobs on a large cluster, the shape of the PWA's largest logs.

    Sizes: 60% of the jobs take 1-8 processors, 35% 16-512, 5% 1024-``processors`` (log-uniform
    within each class); runtimes log-uniform over 10 s - 10 h; requested times 1-5x the runtime;
    Poisson arrivals at the rate that offers ``load`` of the machine. Seed 0: the same file every time.

    Args:
        path: the file to write (plain SWF text).
        jobs: number of jobs.
        processors: MaxProcs of the log.
        load: offered load (work per second / processors).

    Returns:
        ``path``.
    """
    import numpy as np

    rng = np.random.default_rng(0)
    top = np.log2(processors)
    size_class = rng.choice(3, size=jobs, p=[0.60, 0.35, 0.05])
    exponent = np.choose(size_class, [rng.uniform(0, 3, jobs), rng.uniform(4, 9, jobs), rng.uniform(10, top, jobs)])
    sizes = np.minimum(np.round(2**exponent), processors).astype(np.int64)
    runtimes = np.round(np.exp(rng.uniform(np.log(10), np.log(36_000), jobs)))
    requested = np.ceil(runtimes * rng.uniform(1, 5, jobs))
    mean_gap = float(np.mean(sizes * runtimes)) / (load * processors)
    submits = np.floor(np.cumsum(rng.exponential(mean_gap, jobs)))
    ids = np.arange(1, jobs + 1)
    minus = np.full(jobs, -1)
    columns = [ids, submits, minus, runtimes, sizes, minus, minus, sizes, requested, minus, np.ones(jobs, dtype=np.int64)]
    columns += [np.ones(jobs, dtype=np.int64)] * 5 + [minus, minus]
    table = np.column_stack(columns).astype(np.int64)
    header = f"; Version: 2.2\n; Computer: synthetic (torus-sim benchmarks.scale)\n; MaxJobs: {jobs}\n; MaxRecords: {jobs}\n"
    header += f"; MaxNodes: {processors}\n; MaxProcs: {processors}\n"
    with open(path, "w") as handle:
        handle.write(header)
        np.savetxt(handle, table, fmt="%d")
    return path


def large_log_replay(baseline: Path | None = None) -> None:
    """Replay the synthetic 450k-job log online (FCFS-EASY on 8,192 processors): time, memory, floor ratio.

    Args:
        baseline: another checkout whose code replays the same log first, in the same run.
    """
    import tempfile

    from benchmarks.floor import engine_floor

    with tempfile.TemporaryDirectory() as folder:
        log = synthetic_log(Path(folder) / "synthetic-450k.swf")
        before = _replay(baseline, "cluster", None, log) if baseline is not None else None
        found = _replay(None, "cluster", None, log)
    floor = engine_floor(found["events"])
    print(
        f"Synthetic {found['jobs']:,}-job log on {LARGE_LOG_PROCESSORS:,} processors, FCFS-EASY: run {found['seconds']:.1f} s "
        f"(+ reading {found['read_seconds']:.1f} s), {found['seconds'] / found['jobs'] * 1e3:.3f} ms/job, "
        f"{found['max_rss_mib']:.0f} MiB peak; {found['events']:,} events, Mesa no-op floor {floor:.1f} s "
        f"({found['seconds'] / floor:.1f}x); goal < 60 s and < 1 GiB"
    )
    if before is not None:
        print(
            f"  baseline: run {before['seconds']:.1f} s (+ reading {before['read_seconds']:.1f} s), {before['max_rss_mib']:.0f} MiB "
            f"peak -> run this / baseline = {found['seconds'] / before['seconds']:.2f}x, "
            f"read + run {(found['seconds'] + found['read_seconds']) / (before['seconds'] + before['read_seconds']):.2f}x"
        )


def _prefix_table(
    log: Path,
    name: str,
    platform: str,
    label: str,
    prefixes,
    baseline: Path | None,
    fields: dict | None = None,
    goal: float | None = None,
    baseline_prefixes=None,
) -> None:
    """Print one line per prefix of ``log``: time, ms per job against the first prefix, memory, the floor ratio.

    An untimed replay of :data:`WARM_JOBS` jobs with each checkout's code comes first (numba's cache).

    Args:
        log: the SWF log.
        name: the log's name for the heading.
        label: the platform and policy for the heading.
        platform: ``torus`` or ``cluster``.
        prefixes: job counts (None: the whole log).
        baseline: another checkout whose code replays the prefixes in ``baseline_prefixes`` (all when
            None) too, right before this one's, stopped after :data:`BASELINE_LIMIT` seconds.
        fields: scenario fields for the child (policy, offered load).
        goal: seconds the whole log should take (printed with the whole log's line); a replay is
            stopped after 2.5 times that (at most :data:`BASELINE_LIMIT`).
        baseline_prefixes: the prefixes the baseline replays.
    """
    from benchmarks.floor import engine_floor

    limit = BASELINE_LIMIT if goal is None else min(BASELINE_LIMIT, 2.5 * goal)
    print(f"{name} prefixes on the {label}, no failures, one process each:", flush=True)
    for root in {None, baseline}:  # compiled code (numba) is compiled and cached once, untimed
        _replay(root, platform, WARM_JOBS, log, fields, limit)
    first = None
    for prefix in prefixes:
        compare = baseline is not None and (baseline_prefixes is None or prefix in baseline_prefixes)
        before = _replay(baseline, platform, prefix, log, fields, limit) if compare else None
        found = _replay(None, platform, prefix, log, fields, limit)
        if found is None:
            print(
                f"  {prefix or 'whole':>8} jobs  > {limit:.0f} s (stopped; the longer prefixes are not tried)",
                flush=True,
            )
            return
        per_job = found["seconds"] / found["jobs"] * 1e3
        first = first or per_job
        floor = engine_floor(found["events"])
        target = f"; goal < {goal:.0f} s: {'met' if found['seconds'] < goal else 'NOT met'}" if goal and prefix is None else ""
        print(
            f"  {found['jobs']:>8,} jobs  {found['seconds']:7.1f} s  {per_job:6.3f} ms/job ({per_job / first:.2f}x the first)  "
            f"{found['max_rss_mib']:5.0f} MiB  {found['events']:>9,} events, Mesa no-op floor {floor:.1f} s "
            f"({found['seconds'] / floor:.1f}x){target}",
            flush=True,
        )
        if compare and before is None:
            print(
                f"  {'':>8}  baseline > {limit:.0f} s (stopped) -> this / baseline < {found['seconds'] / limit:.2f}x", flush=True
            )
        elif before is not None:
            print(
                f"  {'':>8}  baseline {before['seconds']:7.1f} s  {before['seconds'] / before['jobs'] * 1e3:6.3f} ms/job  "
                f"{before['max_rss_mib']:5.0f} MiB -> this / baseline = {found['seconds'] / before['seconds']:.2f}x",
                flush=True,
            )


def ricc_replays(baseline: Path | None = None, quick: bool = False, only: str | None = None) -> None:
    """Issue 32's table: RICC-2010-2 under each online policy on its 8,192 processors and Krevat on the torus.

    Prefixes of 50k, 100k, 200k jobs and the whole log (447,794 jobs) for this checkout; the baseline
    (another checkout, say today's main) replays the whole log only, in the same run, and is stopped
    after :data:`BASELINE_LIMIT` seconds.

    Args:
        baseline: the other checkout.
        quick: the 50k prefix only.
        only: one label of :data:`RICC_RUNS` (its first word is enough).
    """
    if not RICC.exists():
        print(f"RICC-2010-2 not found at {RICC}", file=sys.stderr)
        return
    prefixes = RICC_PREFIXES[:1] if quick else RICC_PREFIXES
    for label, platform, fields, goal in RICC_RUNS:
        if only is not None and not label.startswith(only):
            continue
        where = "8,192-processor cluster" if platform == "cluster" else "4x4x8 torus (BGL-FAULT's scaling)"
        _prefix_table(RICC, "RICC-2010-2", platform, f"{where}, {label}", prefixes, baseline, fields, goal, (None,))


def scale_replays(quick: bool = False, baseline: Path | None = None) -> None:
    """Print ms per job, peak memory and the ratio to Mesa's no-op floor for each prefix and platform.

    Args:
        quick: the 25k and 50k prefixes only.
        baseline: another checkout (say, before an optimization) whose code replays each prefix too,
            right before this one's, with the ratio of the two times.
    """
    if not HPC2N.exists():
        print(f"HPC2N trace not found at {HPC2N}", file=sys.stderr)
        return
    prefixes = PREFIXES[:2] if quick else PREFIXES
    for platform, label in (("torus", "4x4x8 torus, Krevat"), ("cluster", "240-processor cluster, FCFS-EASY")):
        _prefix_table(HPC2N, "HPC2N", platform, label, prefixes, baseline)
    ricc_replays(baseline, quick)  # the PWA's largest log: 76% one-processor jobs, bursts of thousands, queues of thousands
    if not quick:
        large_log_replay(baseline)


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="RICC-2010-2 scale table (issue 32)")
    parser.add_argument("--ricc", action="store_true", help="only RICC's table (else the whole scale section)")
    parser.add_argument("--baseline", type=Path, help="another checkout whose code replays the whole log too")
    parser.add_argument(
        "--only", help="one run of the RICC table, by the start of its label (FCFS, EASY-SJBF, PV, conservative, Krevat)"
    )
    parser.add_argument("--quick", action="store_true", help="the first prefix only")
    arguments = parser.parse_args()
    root = arguments.baseline.resolve() if arguments.baseline else None
    if arguments.ricc:
        ricc_replays(root, arguments.quick, arguments.only)
    else:
        scale_replays(arguments.quick, root)
