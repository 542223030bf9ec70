"""``torus-sim compare RESULTS A B``: two cases of a finished sweep, run by run, with intervals and a paired test."""

from __future__ import annotations

__all__ = ["NAMES", "add_parser", "main"]

NAMES = ("compare",)
"""The subcommand's names."""


def add_parser(commands) -> None:
    """Add ``compare`` (a results folder, two cases, the metrics, optional ``--where``)."""
    compare = commands.add_parser(
        "compare",
        help="two cases of a finished sweep, paired run by run: means with 95%% intervals, B - A and Wilcoxon's test",
    )
    compare.add_argument("results", help="a sweep's results folder (or its results.csv)")
    compare.add_argument("a", help="case A: a case name (EASY) or field=value[,field=value] (policy=FCFS-EASY)")
    compare.add_argument("b", help="case B, likewise")
    compare.add_argument(
        "--metric",
        action="append",
        default=None,
        help="a metric column of results.csv (repeat for several; default avg_bounded_slowdown)",
    )
    compare.add_argument(
        "--where", action="append", default=[], metavar="FIELD=VALUE", help="narrow both cases to runs with this value (repeat)"
    )


def main(args) -> int:
    """``torus-sim compare RESULTS A B``: print each metric's means, paired difference and test (exit 0; errors reach the caller).

    Raises:
        ConfigurationError: a case that selects no run, an unknown column or metric, runs that cannot be paired.
        InputFileError, FileNotFoundError: no readable results table.
    """
    from torus_sim.core.errors import ConfigurationError
    from torus_sim.experiments.compare import compare_cases, read_results

    where = {}
    for item in args.where:
        key, equals, value = item.partition("=")
        if not equals or not key:
            raise ConfigurationError(f"--where {item!r}: expected FIELD=VALUE")
        where[key] = value
    results = read_results(args.results)
    metrics = args.metric or ["avg_bounded_slowdown"]
    for index, found in enumerate(compare_cases(results, args.a, args.b, metrics, where)):
        if index:
            print()
        print(_text(found, args.a, args.b))
    return 0


def _interval(found) -> str:
    from torus_sim.outputs.reports import short_number

    if found.low != found.low:
        return "no interval (one run)" if found.n == 1 else "no interval"
    return f"95% CI [{short_number(found.low)}, {short_number(found.high)}]"


def _text(found, a: str, b: str) -> str:
    """One metric's comparison as the lines ``compare`` prints."""
    from torus_sim.outputs.reports import short_number

    paired = found.paired
    on = ", ".join(found.paired_on) or "nothing varies: one run each"
    lines = [f"{found.metric}: B ({b}) against A ({a}), {paired.n} pair{'s' if paired.n != 1 else ''} of runs (paired on {on})"]
    if found.unpaired_a or found.unpaired_b:
        lines.append(f"  left out: {found.unpaired_a} run(s) of A and {found.unpaired_b} of B without a partner")
    lines.append(f"  A  mean {short_number(found.a.mean):>12}  {_interval(found.a)}")
    lines.append(f"  B  mean {short_number(found.b.mean):>12}  {_interval(found.b)}")
    method = f" ({found.paired.difference.method} bootstrap)" if found.paired.difference.method in ("BCa", "percentile") else ""
    lines.append(f"  B - A   {short_number(paired.difference.mean):>12}  {_interval(paired.difference)}{method}")
    if paired.n:
        zeros = f", {paired.zeros} without difference" if paired.zeros else ""
        lines.append(f"  Wilcoxon signed-rank: W = {short_number(paired.statistic)}, p = {paired.p_value:.4g} (two-sided{zeros})")
    return "\n".join(lines)
