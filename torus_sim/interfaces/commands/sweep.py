"""``torus-sim sweep`` (alias ``experiment``): a scenario file's runs on any executor, its tables and figures.

``--replot`` redraws from an existing ``results.csv``; ``--check`` runs again into a scratch folder and compares
every value with the results folder's. The runs are announced only once the file, the executor, the workers and
every run's inputs are checked.
"""

from __future__ import annotations

import sys
from pathlib import Path

from torus_sim.interfaces.commands.arguments import positive

__all__ = ["NAMES", "add_parser", "main"]

NAMES = ("sweep", "experiment")
"""The subcommand's names (``experiment`` is the older one)."""


def add_parser(commands) -> None:
    """Add ``sweep`` and its alias ``experiment`` to the subcommands."""
    for name in ("sweep", "experiment"):
        sweep_parser = commands.add_parser(
            name,
            help="run a scenario file (a grid of runs x sets x seeds) and draw its figures"
            + (" (alias of sweep)" if name == "experiment" else ""),
        )
        sweep_parser.add_argument("file", help="scenario TOML file (see experiments/)")
        sweep_parser.add_argument(
            "--out", default=None, help="results folder (default: the file's output, or torus-sim-results/<file stem>)"
        )
        sweep_parser.add_argument(
            "--executor", choices=["serial", "process", "dask"], default="serial", help="where the runs execute (default: serial)"
        )
        sweep_parser.add_argument(
            "--workers", type=int, default=2, help="worker processes (process executor, local Dask cluster; default: 2)"
        )
        sweep_parser.add_argument(
            "--scheduler-address", default=None, help="Dask scheduler tcp://host:port (a real cluster) instead of a local one"
        )
        sweep_parser.add_argument(
            "--max-jobs", type=positive, default=None, help="use only the first N jobs of each workload (reduced runs)"
        )
        sweep_parser.add_argument(
            "--sets", type=positive, default=None, help="run only the first N job sets (reduced batch experiments)"
        )
        sweep_parser.add_argument(
            "--scenarios", type=positive, default=None, help="failure scenarios per batch run (reduced batch experiments)"
        )
        sweep_parser.add_argument(
            "--yes", action="store_true", help="run a sweep larger than its max_runs (default limit 10,000 runs)"
        )
        sweep_parser.add_argument("--replot", action="store_true", help="only redraw the figures from an existing results.csv")
        sweep_parser.add_argument(
            "--check",
            action="store_true",
            help="re-run into a scratch folder and compare every result with the results folder's (exit 1 if any differs)",
        )
        sweep_parser.add_argument(
            "--rtol", type=float, default=0.0, help="--check: relative tolerance on numbers (default 0: identical as written)"
        )
        sweep_parser.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bar")
        sweep_parser.add_argument(
            "--parquet", action="store_true", help="also results.parquet (and each table) with the file's title in its metadata"
        )


def main(args) -> int:
    """``torus-sim sweep FILE``: a scenario file's grid on an executor, then its tables and figures (``--replot``, ``--check``)."""
    import pandas as pd

    from torus_sim.core.files import check_output_folder
    from torus_sim.experiments import load_experiment, run_experiment, write_experiment
    from torus_sim.experiments.execute import experiment_tables, interval_tables
    from torus_sim.experiments.experiment import file_fields_absolute

    experiment = load_experiment(args.file)
    out = Path(args.out or experiment.output or Path("torus-sim-results") / experiment.path.stem)
    check_output_folder(out, ("results.csv",))
    if args.replot:  # the tables name input files relative to the scenario file; its figures' filters, absolute
        folder = experiment.path.parent
        table = file_fields_absolute(pd.read_csv(out / "results.csv"), folder)
        tables = {
            name: file_fields_absolute(pd.read_csv(out / f"{name}.csv"), folder)
            for name in ("size_groups", "summary", "comparison")
            if (out / f"{name}.csv").exists()
        }
        tables.update(interval_tables(experiment, table))  # the intervals: a function of results.csv alone
        for path in write_experiment(experiment, table, out, tables)[1:]:
            print(f"wrote {path}")
        return 0
    if args.sets is not None:
        experiment.sets = min(args.sets, experiment.sets) if experiment.sets else args.sets
    experiment.check_size(args.yes)
    overrides = {key: getattr(args, key) for key in ("max_jobs", "scenarios") if getattr(args, key)}
    if args.check:
        return _check_sweep(experiment, out, args, overrides)
    reference = f" ({experiment.reference})" if experiment.reference else ""
    table = run_experiment(
        experiment,
        args.executor,
        args.workers,
        out,
        args.scheduler_address,
        progress=args.progress,
        on_checked=lambda: print(
            f"{experiment.title}{reference}: {experiment.run_count():,} runs on {args.executor}", file=sys.stderr
        ),
        **overrides,
    )
    tables = experiment_tables(experiment, table)
    for path in write_experiment(experiment, table, out, tables, parquet=args.parquet):
        print(f"wrote {path}")
    if "intervals" in tables:
        from torus_sim.outputs.reports import format_intervals

        metrics = list(dict.fromkeys(name for spec in experiment.figures if spec.table == "results" for name in spec.y))
        metrics = metrics or [name for name in ("avg_bounded_slowdown", "mean_ratio") if name in table.columns][:1]
        text = format_intervals(tables["intervals"], tables.get("paired"), metrics)
        if text:
            print()
            print(text)
    return 0


def _check_sweep(experiment, out: Path, args, overrides: dict) -> int:
    """``sweep --check``: the runs again, in a scratch folder, compared with ``out``'s tables."""
    import tempfile

    from torus_sim.experiments import run_experiment, write_experiment
    from torus_sim.experiments.check import compare_tables

    if not (out / "results.csv").exists():
        print(f"torus-sim: error: --check compares with {out / 'results.csv'}, which does not exist", file=sys.stderr)
        return 2
    announce = f"{experiment.title}: {experiment.run_count():,} runs on {args.executor}, compared with {out}"
    with tempfile.TemporaryDirectory(prefix="torus-sim-check-") as scratch:
        fresh = Path(scratch)
        table = run_experiment(
            experiment,
            args.executor,
            args.workers,
            fresh / "runs",
            args.scheduler_address,
            progress=args.progress,
            on_checked=lambda: print(announce, file=sys.stderr),
            **overrides,
        )
        write_experiment(experiment, table, fresh)
        report = compare_tables(out, fresh, args.rtol)
    cells = sum(report.compared.values())
    for problem in report.problems:
        print(f"{out}: {problem}")
    for table_name, row, column, old, new in report.differences[:20]:
        print(f"{out}: {table_name}.csv {row} {column}: committed {old!r}, now {new!r}")
    if len(report.differences) > 20:
        print(f"{out}: ... {len(report.differences) - 20} more differences")
    if report.identical:
        print(f"{out}: identical ({cells:,} values in {', '.join(f'{name}.csv' for name in report.compared)})")
        return 0
    print(f"{out}: {len(report.differences):,} of {cells:,} values differ")
    return 1
