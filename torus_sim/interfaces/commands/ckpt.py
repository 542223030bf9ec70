"""``torus-sim ckpt-tables`` and ``ckpt-compare``: CKPT-MIG's analytic tables, and simulated against analytic yields."""

from __future__ import annotations

__all__ = ["NAMES", "add_parser", "ckpt_compare", "ckpt_tables", "main"]

NAMES = ("ckpt-tables", "ckpt-compare")
"""The subcommands' names."""


def add_parser(commands) -> None:
    """Add ``ckpt-tables`` (which table) and ``ckpt-compare`` (jobs, seed)."""
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


def ckpt_tables(args) -> int:
    """``torus-sim ckpt-tables``: CKPT-MIG's analytic tables (exit 0)."""
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


def ckpt_compare(args) -> int:
    """``torus-sim ckpt-compare``: simulated against analytic yields of the three strategies (exit 0).

    References:
        CKPT-MIG ("Checkpointing", "Migration" and "Platform throughput" slides); :mod:`torus_sim.experiments.ckpt_yields`.
    """
    from torus_sim.experiments.ckpt_yields import compare_yields

    table = compare_yields(n_jobs=args.jobs, seed=args.seed)
    print(table.to_string(index=False, float_format=lambda value: f"{value:.4f}"))
    return 0


def main(args) -> int:
    """Run ``ckpt-tables`` or ``ckpt-compare`` (by ``args.command``)."""
    return ckpt_tables(args) if args.command == "ckpt-tables" else ckpt_compare(args)
