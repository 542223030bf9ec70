"""``torus-sim online ...``: online replay of SWF traces (EASY variants, PV-EASY).

Subcommands:
    run             replay one trace under one policy and predictor; jobs.csv + summary.json
    experiment FILE run an online experiment file (experiments/pv_easy); CSV + PNG
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from torus_sim.errors import TorusSimError

__all__ = ["add_online_parser", "run_online_command"]

HEADLINE_METRICS = (
    "mbs",
    "mwbs",
    "total_load",
    "wasted_load",
    "preempted_jobs",
    "mkt",
    "mean_rtw",
    "blocked_jobs",
    "delayed_jobs",
    "mean_delay_min",
    "violations",
    "mean_dtr_min",
    "mean_si",
)
"""Summary metrics the online commands print (every one is in ``results.csv`` / ``summary.json``)."""

CTC = Path("..") / "shared" / "data" / "swf" / "CTC-SP2-1996-3.1-cln.swf.gz"  # from the repository root, as the README


def add_online_parser(commands) -> None:
    """Add the ``online`` command and its subcommands."""
    from torus_sim.online.model import PREEMPTION_MODES
    from torus_sim.online.runs import ONLINE_POLICIES

    online = commands.add_parser("online", help="online replay of SWF traces: FCFS, EASY variants, conservative, PV-EASY")
    sub = online.add_subparsers(dest="online_command", required=True)
    run = sub.add_parser("run", help="replay one trace under one policy")
    run.add_argument(
        "--workload",
        default=str(CTC),
        help="SWF file (default: ../shared/data/swf/CTC-SP2-1996-3.1-cln.swf.gz, from the repository root)",
    )
    run.add_argument("--processors", type=int, default=None, help="P (default: the header's MaxProcs; PV-EASY used 430 for CTC)")
    run.add_argument("--policy", choices=ONLINE_POLICIES, default="FCFS-EASY")
    run.add_argument("--predictor", default="estimate", help="estimate | last | exact | virtual:x")
    run.add_argument("--preemption", choices=PREEMPTION_MODES, default="kill", help="PV-EASY's preemption mode")
    run.add_argument("--time-cost", type=float, default=60.0, help="seconds per checkpoint / restart / resume")
    run.add_argument("--checkpoint-interval", type=float, default=3600.0)
    run.add_argument("--slowdown", type=float, default=0.05, help="suspend mode's virtualization slowdown")
    run.add_argument("--max-jobs", type=int, default=None)
    run.add_argument("--seed", type=int, default=0)
    run.add_argument("--out", default="torus-sim-online", help="folder for jobs.csv and summary.json")
    experiment = sub.add_parser("experiment", help="run an online experiment file (experiments/pv_easy)")
    experiment.add_argument("file")
    experiment.add_argument("--workers", type=int, default=1)
    experiment.add_argument("--max-jobs", type=int, default=None, help="replay only the first jobs")
    experiment.add_argument("--out", default=None, help="results folder (default: torus-sim-results/<file stem>)")
    experiment.add_argument("--no-progress", dest="progress", action="store_false")
    experiment.add_argument("--replot", action="store_true", help="redraw from the stored results.csv and size_groups.csv")


def run_online_command(args: argparse.Namespace) -> int:
    """Run an ``online`` subcommand; 0 on success, 2 on bad input (reason on stderr)."""
    try:
        return _run(args) if args.online_command == "run" else _experiment(args)
    except (TorusSimError, FileNotFoundError) as error:
        print(f"torus-sim: error: {error}", file=sys.stderr)
        return 2


def _run(args) -> int:
    from torus_sim.files import atomic_write
    from torus_sim.online import Preemption, load_online_workload, run_online

    began = time.perf_counter()
    workload = load_online_workload(args.workload, args.processors, args.max_jobs)
    preemption = Preemption(args.preemption, args.checkpoint_interval, args.time_cost, args.slowdown)
    result = run_online(workload, args.policy, args.predictor, preemption, args.seed)
    summary = {
        **result.summary,
        "workload": str(args.workload),
        "processors": workload.processors,
        "cleaning": dict(workload.counts),
    }
    out = Path(args.out)
    atomic_write(out / "jobs.csv", lambda handle: result.jobs.to_csv(handle, index=False, float_format="%.17g"))
    atomic_write(out / "summary.json", lambda handle: json.dump(summary, handle, indent=2, default=float))
    print(f"workload  {args.workload} ({len(workload.jobs):,} jobs on {workload.processors} processors; {dict(workload.counts)})")
    for key in HEADLINE_METRICS:
        print(f"{key:<16} {summary[key]:>14.4f}")
    print(f"wrote {out / 'jobs.csv'} and {out / 'summary.json'} ({time.perf_counter() - began:.1f} s)")
    return 0


def _experiment(args) -> int:
    from torus_sim.files import atomic_write
    from torus_sim.online.experiments import compare_with_paper, draw_bars, load_online_experiment, run_online_experiment

    experiment = load_online_experiment(args.file)
    out = Path(args.out or experiment.output or Path("torus-sim-results") / experiment.path.stem)
    if args.replot:
        import pandas as pd

        results, groups = pd.read_csv(out / "results.csv"), pd.read_csv(out / "size_groups.csv")
    else:
        runs = f"{len(experiment.runs)} runs x {len(experiment.seeds)} seeds"
        print(f"{experiment.title} ({experiment.reference}): {runs}", file=sys.stderr)
        results, groups = run_online_experiment(experiment, out, args.workers, args.max_jobs, args.progress)
        atomic_write(out / "results.csv", lambda handle: results.to_csv(handle, index=False, float_format="%.10g"))
        atomic_write(out / "size_groups.csv", lambda handle: groups.to_csv(handle, index=False, float_format="%.10g"))
    comparison = compare_with_paper(results)
    atomic_write(out / "comparison.csv", lambda handle: comparison.to_csv(handle, index=False, float_format="%.6g"))
    columns = ["name", *(key for key in HEADLINE_METRICS if key in results)]
    print(results.groupby("name", sort=False)[columns[1:]].mean().to_string(float_format=lambda value: f"{value:.4f}"))
    if len(comparison):
        print()
        print(comparison.to_string(index=False, float_format=lambda value: f"{value:.4f}"))
    for spec in experiment.figures:
        table = groups if spec.table == "size_groups" else results
        print(f"wrote {draw_bars(table, spec, out / f'{spec.name}.png')}")
    print(f"results: {out / 'results.csv'}, {out / 'size_groups.csv'}, {out / 'comparison.csv'}")
    return 0
