"""The ``torus-sim`` command line.

``torus-sim run`` with no arguments replays the bundled NASA iPSC/860 log with the bundled BG/L
RAS failures on the 4x4x8 torus under Krevat's scheduler, prints the summary, and writes
``jobs.csv`` and ``summary.json`` into ``--out``.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import fields
from pathlib import Path

from torus_sim.errors import TorusSimError
from torus_sim.metrics import BSLD_FORMS, DEFAULT_GAMMA
from torus_sim.policies.fault_aware import PF_FORMS
from torus_sim.reports import format_summary, write_results
from torus_sim.runner import BUNDLED_NASA_LOG, SCHEDULERS, RunConfig, run

__all__ = ["build_parser", "main"]


def _downtime(text: str) -> str | float:
    if text in ("transient", "log"):
        return text
    try:
        seconds = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected transient, log or seconds, got {text!r}") from None
    if seconds < 0:
        raise argparse.ArgumentTypeError(f"downtime must be >= 0 seconds, got {seconds}")
    return seconds


def _interval(text: str) -> str | float:
    if text in ("young", "daly"):
        return text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, young or daly, got {text!r}") from None


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``torus-sim``."""
    parser = argparse.ArgumentParser(prog="torus-sim", description="Job scheduling on failure-prone BlueGene/L-style tori.")
    commands = parser.add_subparsers(dest="command", required=True)
    run_parser = commands.add_parser(
        "run", help="replay a workload with failures on the torus", formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    run_parser.add_argument("--workload", default=str(BUNDLED_NASA_LOG), help="SWF file (plain or .gz)")
    run_parser.add_argument(
        "--failures", default="bundled", help="bundled | none | synthetic:N[:weibull] | path to a BG/L RAS .log or LANL .csv[.xz]"
    )
    run_parser.add_argument(
        "--no-fit-failures",
        dest="fit_failures",
        action="store_false",
        help="keep a real failure log's own times instead of fitting them onto the workload's span",
    )
    run_parser.add_argument("--lanl-system", type=int, default=20, help="LANL system number for the LANL CSV")
    run_parser.add_argument("--downtime", type=_downtime, default="transient", help="transient | log | seconds")
    run_parser.add_argument("--load-scale", type=float, default=1.0, help="c: multiplies runtimes and walltimes (BGL-FAULT §6.2)")
    run_parser.add_argument("--no-backfill", dest="backfill", action="store_false", help="turn backfilling off")
    run_parser.add_argument("--no-migration", dest="migration", action="store_false", help="turn migration off")
    run_parser.add_argument("--migration-cost", type=float, default=0.0, help="seconds each migrated job loses")
    run_parser.add_argument("--seed", type=int, default=0, help="seed of the run's random generator")
    run_parser.add_argument("--max-jobs", type=int, default=None, help="use only the first N jobs")
    run_parser.add_argument("--gamma", type=float, default=DEFAULT_GAMMA, help="Γ of bounded slowdown, seconds")
    run_parser.add_argument(
        "--bsld-form",
        choices=BSLD_FORMS,
        default="standard",
        help="bounded slowdown: standard max/max, or BGL-FAULT's printed max/min",
    )
    run_parser.add_argument(
        "--scheduler",
        choices=SCHEDULERS,
        default="krevat",
        help="krevat (BGL-FAULT §5.1), balancing (§5.2.1) or tiebreak (§5.2.2)",
    )
    run_parser.add_argument(
        "--predictor",
        choices=["null", "oracle-confidence", "oracle-accuracy", "history"],
        default=None,
        help="failure predictor (default: oracle-confidence for balancing, oracle-accuracy for tiebreak)",
    )
    run_parser.add_argument("--confidence", type=float, default=0.1, help="a of the oracle-confidence predictor (BGL-FAULT §4.1)")
    run_parser.add_argument("--accuracy", type=float, default=0.1, help="a of the oracle-accuracy predictor (BGL-FAULT §4.2)")
    run_parser.add_argument(
        "--false-positive-rate", type=float, default=0.0, help="p_f+ of the oracle-accuracy predictor (0 in the paper)"
    )
    run_parser.add_argument(
        "--pf-form", choices=PF_FORMS, default="product", help="balancing: P_f = 1 - prod(1 - p_n) or max p_n"
    )
    run_parser.add_argument(
        "--synthetic-model",
        choices=["exponential", "weibull", "bursty"],
        default="exponential",
        help="distribution of synthetic:N failures: independent exponential or Weibull per supernode, or bursty (clustered)",
    )
    run_parser.add_argument(
        "--checkpoint-interval",
        type=_interval,
        default=None,
        help="periodic checkpoints: seconds of work between them, young or daly (CKPT-MIG); none by default",
    )
    run_parser.add_argument("--checkpoint-cost", type=float, default=0.0, help="C: seconds per checkpoint")
    run_parser.add_argument("--recovery-time", type=float, default=0.0, help="R: seconds to restart from a checkpoint")
    run_parser.add_argument(
        "--preventive", choices=["none", "checkpoint", "migration"], default="none", help="action before a foreseen failure"
    )
    run_parser.add_argument("--preventive-migration-cost", type=float, default=0.0, help="M: seconds per preventive migration")
    run_parser.add_argument("--spares", type=int, default=0, help="supernodes held back as migration targets")
    run_parser.add_argument(
        "--prediction-accuracy", type=float, default=1.0, help="probability that a failure is foreseen (1: perfect)"
    )
    run_parser.add_argument("--out", default="torus-sim-results", help="folder for jobs.csv and summary.json")

    for name in ("sweep", "experiment"):
        sweep_parser = commands.add_parser(
            name,
            help="run a scenario file (a grid of runs x seeds) and draw its figures"
            + (" (alias of sweep)" if name == "experiment" else ""),
            formatter_class=argparse.ArgumentDefaultsHelpFormatter,
        )
        sweep_parser.add_argument("file", help="scenario TOML file (see experiments/)")
        sweep_parser.add_argument(
            "--out", default=None, help="folder for runs/, results.csv and the PNGs (default: torus-sim-results/<file stem>)"
        )
        sweep_parser.add_argument(
            "--executor", choices=["serial", "process", "dask"], default="serial", help="where the runs execute"
        )
        sweep_parser.add_argument(
            "--workers", type=int, default=2, help="worker processes (process executor, local Dask cluster)"
        )
        sweep_parser.add_argument(
            "--scheduler-address", default=None, help="Dask scheduler tcp://host:port (a real cluster) instead of a local one"
        )
        sweep_parser.add_argument(
            "--max-jobs", type=int, default=None, help="use only the first N jobs of each workload (reduced runs)"
        )
        sweep_parser.add_argument("--replot", action="store_true", help="only redraw the figures from an existing results.csv")
        sweep_parser.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bar")

    viz_parser = commands.add_parser(
        "viz", help="open the browser visualization (Mesa SolaraViz)", formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    viz_parser.add_argument("--host", default="127.0.0.1", help="address to serve on")
    viz_parser.add_argument("--port", type=int, default=8765, help="port to serve on")

    tables_parser = commands.add_parser(
        "ckpt-tables", help="print the CKPT-MIG slides' tables, recomputed (checkpointing vs migration)"
    )
    tables_parser.add_argument(
        "--table", choices=["today", "2011", "2015", "yield", "capped", "all"], default="all", help="which table"
    )

    compare_parser = commands.add_parser(
        "ckpt-compare", help="simulated vs analytic yields of periodic / preventive checkpointing and preventive migration"
    )
    compare_parser.add_argument("--jobs", type=int, default=2000, help="jobs of the steady-state synthetic workload")
    compare_parser.add_argument("--seed", type=int, default=1, help="seed")

    from torus_sim.flat_cli import add_flat_parser

    add_flat_parser(commands)
    from torus_sim.online_cli import add_online_parser

    add_online_parser(commands)
    figure_parser = commands.add_parser(
        "figure", help="redraw one paper figure from stored sweep results", formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    figure_parser.add_argument("name", help="figure name as in a scenario file, e.g. fig3_bsld_vs_failures")
    figure_parser.add_argument(
        "--experiments", default="experiments", help="folder searched for the scenario file that defines the figure"
    )
    figure_parser.add_argument(
        "--results", default=None, help="folder holding results.csv (default: torus-sim-results/<file stem>)"
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line.

    Returns:
        0 on success, 2 on bad input or configuration (with the reason on stderr).
    """
    args = build_parser().parse_args(argv)
    if args.command == "flat":
        from torus_sim.flat_cli import run_flat_command

        return run_flat_command(args)
    if args.command == "online":
        from torus_sim.online_cli import run_online_command

        return run_online_command(args)
    if args.command in ("sweep", "experiment"):
        return _sweep(args)
    if args.command == "figure":
        return _figure(args)
    if args.command == "viz":
        return _viz(args)
    if args.command == "ckpt-tables":
        return _ckpt_tables(args)
    if args.command == "ckpt-compare":
        from torus_sim.experiments.ckpt_yields import compare_yields

        table = compare_yields(n_jobs=args.jobs, seed=args.seed)
        print(table.to_string(index=False, float_format=lambda value: f"{value:.4f}"))
        return 0
    if args.command == "run":
        config = RunConfig(**{field.name: getattr(args, field.name) for field in fields(RunConfig) if hasattr(args, field.name)})
        began = time.perf_counter()
        try:
            result = run(config)
        except (TorusSimError, FileNotFoundError) as error:
            print(f"torus-sim: error: {error}", file=sys.stderr)
            return 2
        paths = write_results(args.out, result)
        workload = result.inputs["workload"]
        failures = result.inputs["failures"]
        print(f"workload  {workload['path']}  ({workload['jobs']:,} jobs; cleaning {workload['cleaning'] or 'none'})")
        print(f"failures  {failures['source'] or failures['spec']}  ({failures['count']:,} failures)")
        print(
            f"scheduler {config.scheduler} (predictor {result.inputs['predictor']}), backfill {'on' if config.backfill else 'off'}, "
            f"migration {'on' if config.migration else 'off'}; c = {config.load_scale}; seed {config.seed}"
        )
        print()
        print(format_summary(result.summary))
        print()
        print(f"wrote {paths['jobs']} and {paths['summary']} ({time.perf_counter() - began:.1f} s)")
    return 0


def _sweep(args) -> int:
    import pandas as pd

    from torus_sim.experiments import load_experiment, run_experiment
    from torus_sim.figures import draw_figure
    from torus_sim.files import atomic_write

    try:
        experiment = load_experiment(args.file)
    except (TorusSimError, FileNotFoundError) as error:
        print(f"torus-sim: error: {error}", file=sys.stderr)
        return 2
    out = Path(args.out or experiment.output or Path("torus-sim-results") / experiment.path.stem)
    results = out / "results.csv"
    if args.replot:
        table = pd.read_csv(results)
    else:
        overrides = {"max_jobs": args.max_jobs} if args.max_jobs else {}
        print(f"{experiment.title} ({experiment.reference}): {len(experiment.points())} runs on {args.executor}", file=sys.stderr)
        try:
            table = run_experiment(
                experiment, args.executor, args.workers, out, args.scheduler_address, progress=args.progress, **overrides
            )
        except (TorusSimError, FileNotFoundError) as error:
            print(f"torus-sim: error: {error}", file=sys.stderr)
            return 2
        atomic_write(results, lambda handle: table.to_csv(handle, index=False, float_format="%.10g"))
    for spec in experiment.figures:
        print(f"wrote {draw_figure(table, spec, out / f'{spec.name}.png')}")
    print(f"results: {results}")
    return 0


def _ckpt_tables(args) -> int:
    from torus_sim.analytic.tables import capped_table, scenario_table, yield_table

    chosen = ["today", "2011", "2015", "yield", "capped"] if args.table == "all" else [args.table]
    blocks = []
    for name in chosen:
        if name == "yield":
            blocks += ["Numerical results: yield rho/N for scenario 2015", yield_table("month"), yield_table("year")]
        elif name == "capped":
            blocks += ["Yield rho/N for scenario 2015 and capped job sizes", capped_table("month"), capped_table("year")]
        else:
            blocks.append(scenario_table(name))
    print("\n\n".join(blocks))
    return 0


def _viz(args) -> int:
    import subprocess

    from torus_sim import app as _  # noqa: F401  (fail here, with a clear traceback, if the app cannot load)

    app_path = Path(__file__).with_name("app.py")
    print(f"torus-sim viz: serving http://{args.host}:{args.port} (Ctrl-C to stop)")
    command = [sys.executable, "-m", "solara", "run", str(app_path), "--host", args.host, "--port", str(args.port), "--no-open"]
    try:
        return subprocess.call(command)
    except KeyboardInterrupt:
        return 0


def _figure(args) -> int:
    import pandas as pd

    from torus_sim.experiments import load_experiment
    from torus_sim.figures import draw_figure

    for path in sorted(Path(args.experiments).glob("**/*.toml")):
        try:
            experiment = load_experiment(path)
        except TorusSimError:
            continue  # flat-platform files (torus-sim flat experiment) and broken files define no sweep figure
        for spec in experiment.figures:
            if spec.name == args.name:
                folder = Path(args.results) if args.results else Path("torus-sim-results") / path.stem
                if not (folder / "results.csv").exists():
                    print(
                        f"torus-sim: error: no results at {folder / 'results.csv'}; run: torus-sim sweep {path}", file=sys.stderr
                    )
                    return 2
                print(f"wrote {draw_figure(pd.read_csv(folder / 'results.csv'), spec, folder / f'{spec.name}.png')}")
                return 0
    print(f"torus-sim: error: no scenario file under {args.experiments} defines a figure named {args.name!r}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
