"""``torus-sim figure NAME``: redraw one paper figure of a scenario file from stored sweep results."""

from __future__ import annotations

import sys
from pathlib import Path

from torus_sim.core.errors import TorusSimError

__all__ = ["NAMES", "add_parser", "main"]

NAMES = ("figure",)
"""The subcommand's names."""


def add_parser(commands) -> None:
    """Add ``figure`` (name, where the scenario files and the results are, where the PNG goes)."""
    figure_parser = commands.add_parser("figure", help="redraw one paper figure from stored sweep results")
    figure_parser.add_argument("name", help="figure name as in a scenario file, e.g. fig3_bsld_vs_failures")
    figure_parser.add_argument(
        "--experiments", default="experiments", help="folder searched for the scenario file that defines the figure"
    )
    figure_parser.add_argument(
        "--results", default=None, help="folder holding results.csv (default: torus-sim-results/<file stem>)"
    )
    figure_parser.add_argument(
        "--out", default="torus-sim-results/figures", help="folder for the PNG (default: torus-sim-results/figures)"
    )


def main(args) -> int:
    """``torus-sim figure NAME``: redraw one figure of a scenario file from stored sweep results (exit 0, or 2 with a sentence)."""
    import pandas as pd

    from torus_sim.experiments import load_experiment
    from torus_sim.outputs.figures import draw_figure

    for path in sorted(Path(args.experiments).glob("**/*.toml")):
        try:
            experiment = load_experiment(path)
        except TorusSimError:
            continue  # a broken file defines no figure
        for spec in experiment.figures:
            if spec.name == args.name:
                folder = Path(args.results) if args.results else Path("torus-sim-results") / path.stem
                source = folder / ("results.csv" if spec.table == "results" else f"{spec.table}.csv")
                if not source.exists():
                    print(f"torus-sim: error: no results at {source}; run: torus-sim sweep {path}", file=sys.stderr)
                    return 2
                target = Path(args.out)
                target.mkdir(parents=True, exist_ok=True)
                print(f"wrote {draw_figure(pd.read_csv(source), spec, target / f'{spec.name}.png')}")
                return 0
    print(f"torus-sim: error: no scenario file under {args.experiments} defines a figure named {args.name!r}", file=sys.stderr)
    return 2
