"""Benchmarks of the torus core (not part of the test suite).

Run from the repository root::

    python -m benchmarks.run            # full SDSC-SP2 replay + partition-query micro-benchmark
    python -m benchmarks.run --quick    # a 5,000-job slice, for a fast look

1. Replay of the SDSC-SP2 log (59,715 lines; 54,044 usable jobs) with 4,000 synthetic failures,
   backfilling and migration on: wall time, events per second, peak memory (max RSS). Baseline
   measured in the same run: the same number of no-op events through Mesa's DEVSimulator, i.e.
   the engine's floor (the median of three measurements); the ratio says how much the scheduling
   costs on top of it (target, issue 17: under 2x).
   Targets (issue 2): under 20 s on one core, under 1 GiB. The same replay with the balancing
   scheduler (confidence 0.1), which scores E_loss over every candidate partition, is timed next
   to it: target under 2x Krevat's time (issue 3).
2. "Free partitions of size s" on the 4x4x8 torus at 25 % and 50 % random occupancy: the
   partition table against two brute-force baselines, as ratios: the size-restricted cell-by-cell
   check the tests use (:func:`tests.reference.brute_force_free_partitions`, which stops at the first busy cell),
   and the naive exhaustive search BGL-FAULT Appendix 9 compares against (every free partition of
   every size, then the subset of size s). The summed-area finder is shown too.
   Targets: under 50 µs per query, at least 100x faster than brute force.
3. A 16-run sweep (NASA, 4,000 jobs, 4 confidences x 4 seeds, balancing) on a Dask LocalCluster
   with 2 workers against 1 worker, measured in the same run: the speed-up (goal >= 1.8x on the
   2-core machine; issue 7).
4. Flat platforms (:mod:`benchmarks.flat`): RIGID's synthetic experiment and MOLDABLE's LPA,
   BATCH and MINTIME on the mix model, against the published reference code's times.
5. Online replay (:mod:`benchmarks.online`): the full CTC-SP2 trace under FCFS-EASY and PV-EASY,
   wall time and peak memory (goal < 30 s each).
6. Scale (:mod:`benchmarks.scale`, only when asked: ``--only scale``, about 10 minutes): growing
   prefixes of HPC2N on the torus and online, ms per job, peak memory, ratio to Mesa's no-op floor.
7. Plug-ins (:mod:`benchmarks.plugins`): the plug-in FCFS-EASY against the built-in on the whole
   CTC-SP2 log (goal: within 1.2x), and the Gymnasium environment's time per decision against the
   built-in FCFS's time per pass on SDSC-SP2 windows (goal: under 2x).

8. Machines (:mod:`benchmarks.machines`): the README's Mira run (goal under 2 minutes) beside the
   no-op floor, and free-block queries on Mira's 2x3x4x4 torus.

9. The browser view (:mod:`benchmarks.viz`): server time per step (model + charts) for four machine
   sizes beside the model's step alone, ``torus-sim viz``'s start-up, and the browser's time per step.

10. The matrix (:mod:`benchmarks.matrix`, only when asked: ``--only matrix``, whole logs, about
    an hour on 2 processes; ``--matrix-jobs N`` a prefix): every built-in policy on every platform it
    declares with every failure source, each cell completed or refused up front with its sentence,
    wall time and a digest of the job record. ``python -m benchmarks.matrix --markdown FILE`` writes
    the table with the commit (docs/matrix/).

12. The browser view's memory (:mod:`benchmarks.viz_memory`, only when asked: ``--only viz-memory``,
    about 4 minutes): 50 sessions opened, stepped and closed; resident memory after the cull against
    the warm server (goal, issue 44: within 30 MB), models alive and stale task hooks (0).
    ``--only viz-soak`` (:mod:`benchmarks.viz_soak`, about 13 minutes; 3 with ``--quick``): three sessions
    stepping at once for six minutes against ``torus-sim viz`` as a user starts it: page loads (goal <= 3 s),
    console errors, version warnings and failed requests (goal 0), memory after the cull against the server
    after one warm-up session (goal, issue 78: within 20 MB).

11. The command line's start-up (:mod:`benchmarks.startup`): ``torus-sim --help`` and an argument
    error, beside the interpreter alone (goal, issue 44: under 0.5 s).

13. The learning environment (:mod:`benchmarks.rl_env`, ``--only rl``): import and build of
    SchedulingEnv in a fresh process (goal, issue 43: build under 0.5 s), random valid steps per second
    on a cluster and on the torus with BG/L RAS failures against FCFS's time per pass, and
    AsyncVectorEnv's 2 workers against one environment.

14. Power accounting (:mod:`benchmarks.power`, only when asked: ``--only power``, about 10 minutes):
    SDSC-SP2 on the torus with 4,000 failures and RICC online, with and without ``power = true``,
    alternated (goal, issue 45: at most 1.15x).

15. Reservations on backlogs (:mod:`benchmarks.reservations`, only when asked: ``--only
    reservations``, about 5 minutes, twice that with ``--baseline``): R-LIST-Q and conservative
    backfilling on prefixes of the matrix's slowest cells, each run in its own process, against the
    baseline checkout's same cells with the ratio and whether the schedules agree (issues 40, 61 §2).

16. The footprint (:mod:`benchmarks.footprint`, only when asked: ``--only footprint``, about 5
    minutes): whole-process wall time and peak memory of ``torus-sim run`` on the README's main job, a
    1,000-job run, CTC-SP2 and SDSC-SP2 in CQSim's mode and RICC-2010-2; what a run has imported at its
    first job; whether a progress bar starts a second process (issue 61).

17. CQSim side by side (:mod:`benchmarks.cqsim`, on its own: ``python -m benchmarks.cqsim --cqsim PATH``
    with a checkout of SPEAR-UIC/CQSim prepared as ``../shared/peers/cqsim/README.md`` says, about 6
    minutes): CTC-SP2 and SDSC-SP2 under EASY and conservative backfilling, CQSim's wall and torus-sim's in
    CQSim's mode, the ratio (goal, issue 61: at most 0.10x) and whether CQSim's EASY schedules are the
    peers' files.

18. Site replays (:mod:`benchmarks.sites`, only when asked: ``--only sites``, about 2.5 minutes (the median of three runs each), twice that with
    ``--baseline``): ``torus-sim run experiments/sites/LOG.toml`` (a log's fitted production settings) against the
    textbook FCFS-EASY replay of the same log, whole processes, for CTC-SP2, SDSC-SP2 and HPC2N (goal, issue 77: at
    most 2x).

19. Dependency-preserving replays (:mod:`benchmarks.sites`, only when asked: ``--only dependencies``, about 8
    minutes): each log's site replay with ``--dependencies 1200`` against the same site replay without, whole
    processes, wall time and peak memory, for CTC-SP2, SDSC-SP2, HPC2N and RICC.

Sections can be chosen: ``python -m benchmarks.run --only sweep``. ``--baseline PATH`` runs every
chosen section of another checkout (say, the commit before a refactor) beside this one's, in the same
run, and prints the ratios (:mod:`benchmarks.baseline`).
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
import timeit
from pathlib import Path

import numpy as np

from benchmarks.floor import engine_floor
from failure_logs.synthetic import SyntheticFailures
from tests.reference import brute_force_free_partitions
from torus_sim.engine.model import SchedulingModel
from torus_sim.experiments.runner import Scenario, build_policy, load_workload
from torus_sim.machine.partition_table import PartitionTable
from torus_sim.machine.partitions import feasible_sizes, free_partitions_by_box_sums
from torus_sim.machine.platforms.torus import TorusPlatform
from torus_sim.machine.topology import BGL_SUPERNODE_TORUS
from torus_sim.metrics import summarize
from torus_sim.policies.krevat import KrevatScheduler

DEFAULT_SDSC = Path(__file__).resolve().parents[2] / "shared" / "data" / "swf" / "SDSC-SP2-1998-4.2-cln.swf.gz"


def replay(workload_path: Path, failures: int, max_jobs: int | None) -> None:
    config = Scenario(workload=str(workload_path), failures=f"synthetic:{failures}", max_jobs=max_jobs, seed=0)
    workload = load_workload(config)
    table = PartitionTable(BGL_SUPERNODE_TORUS)
    began = time.perf_counter()
    model = SchedulingModel(workload, KrevatScheduler(), TorusPlatform(table=table), SyntheticFailures(failures), seed=0)
    record = model.run()
    wall = time.perf_counter() - began
    balancing_config = Scenario(workload=str(workload_path), policy="balancing", confidence=0.1)
    began = time.perf_counter()
    balancing = SchedulingModel(
        workload, build_policy(balancing_config), TorusPlatform(table=table), SyntheticFailures(failures), seed=0
    )
    balancing_summary = summarize(balancing.run())
    balancing_wall = time.perf_counter() - began
    events = model.counters["events_run"]
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    floors = sorted(engine_floor(events) for _ in range(3))  # one measurement varies by +-20% in a long process
    floor = floors[1]
    summary = summarize(record)
    print(f"replay: {workload_path.name}, {len(workload.jobs):,} jobs, {failures} synthetic failures, backfill + migration")
    print(f"  wall time            {wall:8.2f} s   (target < 20 s: {wall / 20:.2f}x of target)")
    print(f"  events run           {events:8,d}     ({events / wall:,.0f} events/s)")
    print(f"  peak memory (RSS)    {peak_mib:8.0f} MiB (target < 1024 MiB: {peak_mib / 1024:.2f}x of target)")
    print(
        f"  baseline: Mesa DEVS, same number of no-op events: {floor:.2f} s (median of {', '.join(f'{t:.2f}' for t in floors)}) "
        f"-> replay / baseline = {wall / floor:.2f}x (target < 2x)"
    )
    print(
        f"  balancing scheduler (a = 0.1), same replay: {balancing_wall:.2f} s -> balancing / Krevat = {balancing_wall / wall:.2f}x "
        f"(target < 2x); avg bounded slowdown {balancing_summary['avg_bounded_slowdown']:.1f}, ω_util {balancing_summary['omega_util']:.3f}"
    )
    print(
        f"  summary: avg bounded slowdown {summary['avg_bounded_slowdown']:.1f}, ω_util {summary['omega_util']:.3f}, "
        f"ω_unused {summary['omega_unused']:.3f}, ω_lost {summary['omega_lost']:.3f}, kills {summary['job_kills']}, "
        f"migrations {summary['migrations']}"
    )


def exhaustive_free_partitions(torus, blocked, size):
    """BGL-FAULT Appendix 9's naive baseline: all free partitions of any size, then those of ``size``."""
    every = set()
    for other in feasible_sizes(torus.dims):
        every |= brute_force_free_partitions(torus, blocked, other)
    return {partition for partition in every if partition.size == size}


def partition_query() -> None:
    torus = BGL_SUPERNODE_TORUS
    table = PartitionTable(torus)
    rng = np.random.default_rng(0)
    worst = 0.0
    lowest = {"restricted": float("inf"), "exhaustive": float("inf")}
    for occupancy in (0.25, 0.5):
        print(f"free partitions of size s, 4x4x8 torus, {occupancy:.0%} random occupancy (mean over 10 occupancies):")
        print(
            f"  {'s':>3} {'table µs':>9} {'box-sum µs':>11} {'brute µs':>9} {'exhaustive µs':>14} {'brute/table':>12} {'exhaustive/table':>17}"
        )
        for size in (1, 2, 4, 8, 16, 32):
            t_table = t_box = t_brute = t_naive = 0.0
            for _ in range(10):
                blocked = rng.random(torus.size) < occupancy
                found = {table.partitions[i] for i in table.free_ids_of_size(table.pack(blocked), size)}
                assert (
                    found == brute_force_free_partitions(torus, blocked, size) == exhaustive_free_partitions(torus, blocked, size)
                )
                t_table += timeit.timeit(lambda b=blocked, s=size: table.free_ids_of_size(table.pack(b), s), number=200) / 200
                t_box += timeit.timeit(lambda b=blocked, s=size: free_partitions_by_box_sums(torus, b, s), number=5) / 5
                t_brute += timeit.timeit(lambda b=blocked, s=size: brute_force_free_partitions(torus, b, s), number=2) / 2
                t_naive += timeit.timeit(lambda b=blocked, s=size: exhaustive_free_partitions(torus, b, s), number=1)
            t_table, t_box, t_brute, t_naive = (t / 10 * 1e6 for t in (t_table, t_box, t_brute, t_naive))
            worst = max(worst, t_table)
            lowest["restricted"] = min(lowest["restricted"], t_brute / t_table)
            lowest["exhaustive"] = min(lowest["exhaustive"], t_naive / t_table)
            print(
                f"  {size:>3} {t_table:9.1f} {t_box:11.1f} {t_brute:9.0f} {t_naive:14.0f} {t_brute / t_table:11.0f}x {t_naive / t_table:16.0f}x"
            )
    print(
        f"  slowest table query {worst:.1f} µs (target < 50 µs); lowest speed-up over the size-restricted brute force "
        f"{lowest['restricted']:.0f}x, over the exhaustive search {lowest['exhaustive']:.0f}x (target >= 100x)"
    )


def dask_sweep_speedup() -> None:
    from torus_sim.experiments import sweep

    base = {"max_jobs": 4000, "failures": "synthetic:100", "policy": "balancing"}
    grid = {"confidence": [0.0, 0.1, 0.5, 0.9]}
    seeds = (0, 1, 2, 3)
    times = {}
    for workers in (1, 2):
        began = time.perf_counter()
        table = sweep(base, grid, seeds, executor="dask", workers=workers, progress=False)
        times[workers] = time.perf_counter() - began
        assert len(table) == 16
    print("16-run sweep (NASA, 4,000 jobs, balancing, 4 confidences x 4 seeds) on a Dask LocalCluster:")
    print(f"  1 worker {times[1]:.1f} s, 2 workers {times[2]:.1f} s -> speed-up {times[1] / times[2]:.2f}x (goal >= 1.8x)")


SECTIONS = [
    "replay",
    "partitions",
    "sweep",
    "rigid",
    "moldable",
    "online",
    "scale",
    "plugins",
    "machines",
    "viz",
    "viz-memory",
    "viz-soak",
    "matrix",
    "startup",
    "rl",
    "power",
    "reservations",
    "footprint",
    "sites",
    "dependencies",
]
"""Every section ``--only`` takes."""

DEFAULT_SECTIONS = [
    section
    for section in SECTIONS
    if section not in ("scale", "viz-memory", "viz-soak", "matrix", "power", "reservations", "footprint", "sites", "dependencies")
]
"""The sections run when none is chosen (scale, the browser's memory and soak, the matrix, power, reservations, the footprint,
the site replays and the dependency-preserving replays only when asked)."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workload", type=Path, default=DEFAULT_SDSC)
    parser.add_argument("--failures", type=int, default=4000)
    parser.add_argument("--quick", action="store_true", help="replay only the first 5,000 jobs")
    parser.add_argument(
        "--only",
        choices=SECTIONS,
        action="append",
        help="run only these sections",
    )
    parser.add_argument("--baseline", type=Path, default=None, help="another checkout to run beside this one, with ratios")
    parser.add_argument(
        "--matrix-jobs", type=int, default=None, help="matrix: a prefix of N jobs of each log (default: whole logs)"
    )
    parser.add_argument("--workers", type=int, default=2, help="matrix: processes (default 2)")
    args = parser.parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)  # each row reaches a log file or a pipe when printed (issue 44 §6)
    if args.only and "matrix" in args.only:
        from benchmarks.matrix import main as matrix_main

        code = matrix_main((["--jobs", str(args.matrix_jobs)] if args.matrix_jobs else []) + ["--workers", str(args.workers)])
        args.only = [section for section in args.only if section != "matrix"]
        if not args.only:
            return code
    sections = args.only or list(DEFAULT_SECTIONS)
    if args.baseline is not None and "scale" in sections:
        from benchmarks.scale import scale_replays

        scale_replays(args.quick, args.baseline.resolve())  # the other checkout has no scale section: its code runs here
        sections = [section for section in sections if section != "scale"]
        if not sections:
            return 0
    if "footprint" in sections:  # the other checkout's code runs under this section's measurement
        from benchmarks.footprint import footprint

        footprint(args.baseline.resolve() if args.baseline is not None else None, 1 if args.quick else 3)
        sections = [section for section in sections if section != "footprint"]
        if not sections:
            return 0
    if "dependencies" in sections:
        from benchmarks.sites import dependency_replays

        dependency_replays(1 if args.quick else 3)
        sections = [section for section in sections if section != "dependencies"]
        if not sections:
            return 0
    if "sites" in sections:  # the other checkout's code runs under this section's measurement
        from benchmarks.sites import site_replays

        site_replays(args.baseline.resolve() if args.baseline is not None else None, 1 if args.quick else 3)
        sections = [section for section in sections if section != "sites"]
        if not sections:
            return 0
    if args.baseline is not None and "reservations" in sections:  # each cell in its own process of either checkout
        from benchmarks.reservations import main as reservations_main

        reservations_main(
            (["--jobs", "1000", "--repeats", "1"] if args.quick else []) + ["--baseline", str(args.baseline.resolve())]
        )
        sections = [section for section in sections if section != "reservations"]
        if not sections:
            return 0
    if args.baseline is not None and "plugins" in sections:
        from benchmarks.plugins import environment_decisions, plugin_vs_builtin

        plugin_vs_builtin(1 if args.quick else 3)  # its baselines (the built-in, FCFS) run beside it already
        environment_decisions(1 if args.quick else 4)
        sections = [section for section in sections if section != "plugins"]
        if not sections:
            return 0
    if args.baseline is not None:
        from benchmarks.baseline import compare

        extra = ["--workload", str(args.workload.resolve()), "--failures", str(args.failures)] + (
            ["--quick"] if args.quick else []
        )
        compare(args.baseline.resolve(), sections, extra)
        return 0
    if "replay" in sections:
        if not args.workload.exists():
            print(f"workload not found: {args.workload}", file=sys.stderr)
            return 2
        replay(args.workload, args.failures, 5000 if args.quick else None)
    if "partitions" in sections:
        partition_query()
    if "sweep" in sections:
        dask_sweep_speedup()
    if "rigid" in sections:
        from benchmarks.flat import rigid_experiment

        rigid_experiment(3 if args.quick else 30)
    if "moldable" in sections:
        from benchmarks.flat import moldable_experiment

        for algorithm, sets in (("LPA", 30), ("BATCH", 10), ("MINTIME", 10)):
            moldable_experiment(algorithm, 1 if args.quick else sets)
    if "online" in sections:
        from benchmarks.online import ctc_replays

        ctc_replays()
    if "scale" in sections:
        from benchmarks.scale import scale_replays

        scale_replays(args.quick)
    if "plugins" in sections:
        from benchmarks.plugins import environment_decisions, plugin_vs_builtin

        plugin_vs_builtin(1 if args.quick else 3)
        environment_decisions(1 if args.quick else 4)
    if "machines" in sections:
        from benchmarks.machines import mira_queries, mira_run

        mira_run()
        mira_queries()
    if "viz" in sections:
        from benchmarks.viz import browser_steps, server_steps, startup

        server_steps()
        startup()
        browser_steps()
    if "viz-memory" in sections:
        from benchmarks.viz_memory import main as viz_memory_main

        viz_memory_main(["--sessions", "10" if args.quick else "50"])
    if "viz-soak" in sections:
        from benchmarks.viz_soak import main as viz_soak_main

        viz_soak_main(["--minutes", "1" if args.quick else "6"])
    if "rl" in sections:
        from benchmarks.rl_env import main as rl_main

        rl_main(["--quick"] if args.quick else [])
    if "power" in sections:
        from benchmarks.power import main as power_main

        power_main(["--quick"] if args.quick else [])
    if "reservations" in sections:
        from benchmarks.reservations import main as reservations_main

        reservations_main(["--jobs", "1000", "--repeats", "1"] if args.quick else [])
    if "startup" in sections:
        from benchmarks.startup import command_line_startup

        command_line_startup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
