"""``torus-sim summarize RESULTS.csv...``: the expected and maximum ratios over batch experiments' results (MOLDABLE Table 1)."""

from __future__ import annotations

import sys

__all__ = ["NAMES", "add_parser", "main"]

NAMES = ("summarize",)
"""The subcommand's names."""


def add_parser(commands) -> None:
    """Add ``summarize`` (results files, the columns to group on, an optional CSV)."""
    summarize = commands.add_parser(
        "summarize", help="expected and maximum ratios over batch results.csv files (e.g. MOLDABLE Table 1 over every setting)"
    )
    summarize.add_argument("results", nargs="+", help="results.csv files of batch experiments")
    summarize.add_argument("--by", nargs="+", default=["policy", "workload"], help="columns to group on")
    summarize.add_argument("--out", default=None, help="write the summary to this CSV")


def main(args) -> int:
    """``torus-sim summarize RESULTS.csv...``: the expected and maximum ratios of batch experiments, grouped (exit 0 or 2).

    Raises:
        InputFileError: a results file that is binary, not CSV or empty.
    """
    import pandas as pd

    from torus_sim.core.files import atomic_write
    from torus_sim.experiments import combine_results, expected_ratio_table

    table = combine_results([_results_table(path) for path in args.results])
    missing = [column for column in args.by if column not in table]
    if missing:
        print(f"torus-sim: error: no column {missing} in the results", file=sys.stderr)
        return 2
    summary = expected_ratio_table(table, args.by)
    settings = [column for column in ("jobs", "nodes", "error_rate", "mean_failure_probability") if column in table]
    counts = table.drop_duplicates([*args.by, *settings]).groupby(args.by, sort=False).size()
    summary["settings"] = counts.reindex(
        pd.MultiIndex.from_frame(summary[args.by]) if len(args.by) > 1 else summary[args.by[0]]
    ).to_numpy()
    print(summary.to_string(index=False, float_format=lambda value: f"{value:.4f}"))
    if args.out:
        atomic_write(args.out, lambda handle: summary.to_csv(handle, index=False, float_format="%.6g"))
        print(f"wrote {args.out}")
    return 0


def _results_table(path: str):
    """A sweep's results CSV (:func:`torus_sim.experiments.compare.read_results`: InputFileError naming the file)."""
    from torus_sim.experiments.compare import read_results

    return read_results(path)
