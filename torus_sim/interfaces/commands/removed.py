"""``torus-sim flat`` and ``online``, removed in 0.2: each prints the command that replaces it and exits with 2."""

from __future__ import annotations

import argparse
import sys

__all__ = ["NAMES", "NEW_FORMS", "add_parser", "main"]

NAMES = ("flat", "online")
"""The removed subcommands' names."""


def add_parser(commands) -> None:
    """Add the removed commands, each taking whatever follows (even ``--help``)."""
    for old in ("flat", "online"):
        alias = commands.add_parser(old, help=f"removed in 0.2: prints the equivalent {'run / sweep'} command", add_help=False)
        alias.add_argument("rest", nargs=argparse.REMAINDER)


NEW_FORMS = {
    "flat rigid": "torus-sim run --platform cluster --workload refcode:JOBS --silent-errors FAILURES --policy R-LIST-0 --priority LPT",
    "flat moldable": "torus-sim run --platform cluster --nodes 7500 --workload moldable:mix --error-rate 1e-7 --scenarios 10 --policy LPA",
    "flat generate-rigid": "torus-sim generate-rigid OUT --scenarios 1000",
    "flat experiment": "torus-sim sweep FILE --executor process --workers 2",
    "flat summarize": "torus-sim summarize RESULTS.csv... --by policy workload",
    "online run": "torus-sim run --platform cluster --nodes 128 --policy PV-EASY --runtime-predictor last (the bundled NASA iPSC/860 log; --workload FILE.swf for yours)",
    "online experiment": "torus-sim sweep FILE --executor process --workers 2",
}


def main(args) -> int:
    """A command removed in 0.2 (``flat``, ``online``): the command that replaces it, and exit code 2."""
    sub = args.rest[0] if args.rest and not args.rest[0].startswith("-") else ""
    new = NEW_FORMS.get(f"{args.command} {sub}", "torus-sim run --help / torus-sim sweep --help")
    print(
        f"torus-sim {' '.join([args.command, sub]).strip()} was replaced by the one engine's commands; use: {new}",
        file=sys.stderr,
    )
    return 2
