"""Every SWF log in ../shared/data replayed under four production policies and held against the schedule it records.

For each log: FCFS-EASY, EASY-SJBF, conservative backfilling and plain FCFS on a cluster of the log's own
machine size (its MaxProcs header), no failures, load scale 1, then ``--against-log``
(:func:`torus_sim.against_log`): the logged mean wait beside each policy's, the per-job differences, the
Kolmogorov-Smirnov distance of the waits, and which policy comes closest. Writes ``against_log.csv`` (one row
per log and policy), the table of ``against_log.md`` (between its ``<!-- table -->`` markers) and
``against_log_ctc.png`` (CTC-SP2 under FCFS-EASY: the waits' CDFs and the utilization per day). Run from the
repository root (about 4 minutes on 2 cores):

    python docs/validation/against_log.py           # re-make the files
    python docs/validation/against_log.py --check   # compare with the committed CSV and table (exit 1 on a difference)
"""

from __future__ import annotations

import argparse
import io
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
SHARED = HERE.parents[2] / "shared"
LOGS = {
    "CTC-SP2": "CTC-SP2-1996-3.1-cln",
    "HPC2N": "HPC2N-2002-2.2-cln",
    "NASA-iPSC": "NASA-iPSC-1993-3.1-cln",
    "RICC": "RICC-2010-2",
    "SDSC-SP2": "SDSC-SP2-1998-4.2-cln",
}
POLICIES = ("FCFS-EASY", "EASY-SJBF", "conservative", "FCFS")
FIGURE = ("CTC-SP2", "FCFS-EASY")
COLUMNS = [
    "log",
    "machine",
    "scheduler_note",
    "policy",
    "compared",
    "not_placed",
    "logged_mean_wait",
    "simulated_mean_wait",
    "wait_difference_mean",
    "wait_difference_median",
    "wait_difference_mean_absolute",
    "within_1_min",
    "within_1_h",
    "ks_distance",
    "logged_mean_bsld",
    "simulated_mean_bsld",
    "logged_utilization",
    "simulated_utilization",
]


def replay(log: str, policy: str) -> tuple[dict, bytes | None]:
    """One log under one policy, held against the log: the table's row (and the figure's bytes for FIGURE)."""
    import time

    from torus_sim import against_log
    from torus_sim.experiments.runner import Scenario, run
    from torus_sim.outputs.figures import against_log_png

    began = time.perf_counter()
    scenario = Scenario(
        platform="cluster", workload=str(SHARED / "data" / "swf" / f"{LOGS[log]}.swf.gz"), failures="none", policy=policy
    )
    comparison = against_log(run(scenario))
    summary = comparison.summary
    wait = summary["wait"]
    usage = summary.get("utilization") or {}
    row = {
        "log": log,
        "machine": summary["log"]["machine_processors"],
        "scheduler_note": "; ".join(summary["log"]["scheduler_notes"]),
        "policy": policy,
        "compared": summary["jobs"]["compared"],
        "not_placed": sum(summary["jobs"]["not_placed"].values()),
        "logged_mean_wait": wait["logged_mean"],
        "simulated_mean_wait": wait["simulated_mean"],
        "wait_difference_mean": wait["difference_mean"],
        "wait_difference_median": wait["difference_median"],
        "wait_difference_mean_absolute": wait["difference_mean_absolute"],
        "within_1_min": wait["within_1_min"],
        "within_1_h": wait["within_1_h"],
        "ks_distance": summary["ks"]["statistic"] if summary["ks"] else None,
        "logged_mean_bsld": summary["bounded_slowdown"]["logged_mean"],
        "simulated_mean_bsld": summary["bounded_slowdown"]["simulated_mean"],
        "logged_utilization": usage.get("logged_mean"),
        "simulated_utilization": usage.get("simulated_mean"),
    }
    print(f"{log:10s} {policy:13s} {time.perf_counter() - began:7.1f} s", file=sys.stderr)
    return row, against_log_png(comparison) if (log, policy) == FIGURE else None


def table_markdown(table: pd.DataFrame) -> str:
    """The page's table: per log, the logged mean wait beside each policy's, and the closest policy."""
    lines = [
        "| log (machine) | jobs compared | logged mean wait (s) | "
        + " | ".join(f"{policy} mean wait (s), KS" for policy in POLICIES)
        + " | closest mean wait | smallest KS distance |",
        "|---" * (5 + len(POLICIES)) + "|",
    ]
    for log, rows in table.groupby("log", sort=False):
        rows = rows.set_index("policy")
        first = rows.iloc[0]
        if not first["compared"]:
            lines.append(
                f"| {log} ({first['machine']:,}) | 0 (the log records no wait: {first['not_placed']:,} lines) | n/a | "
                + " | ".join("n/a" for _ in POLICIES)
                + " | n/a | n/a |"
            )
            continue
        cells = [f"{rows.loc[policy, 'simulated_mean_wait']:,.0f}, {rows.loc[policy, 'ks_distance']:.3f}" for policy in POLICIES]
        closest = (rows["simulated_mean_wait"] - rows["logged_mean_wait"]).abs().idxmin()
        nearest = rows["ks_distance"].idxmin()
        lines.append(
            f"| {log} ({first['machine']:,}) | {first['compared']:,} | {first['logged_mean_wait']:,.0f} | "
            + " | ".join(cells)
            + f" | {closest} | {nearest} |"
        )
    return "\n".join(lines) + "\n"


def make() -> tuple[pd.DataFrame, bytes]:
    """Every log under every policy (two processes), in LOGS x POLICIES order."""
    pairs = [(log, policy) for log in LOGS for policy in POLICIES]
    with ProcessPoolExecutor(2) as pool:
        done = list(pool.map(replay, *zip(*pairs, strict=True)))
    figure = next(png for _, png in done if png is not None)
    return pd.DataFrame([row for row, _ in done], columns=COLUMNS), figure


def _page(table_text: str) -> str:
    page = (HERE / "against_log.md").read_text(encoding="utf-8")
    head, _, rest = page.partition("<!-- table -->\n")
    _, _, tail = rest.partition("<!-- /table -->\n")
    return f"{head}<!-- table -->\n{table_text}<!-- /table -->\n{tail}"


def main(argv: list[str] | None = None) -> int:
    """Re-make the CSV, the page's table and the figure; with ``--check`` compare instead (exit 1 on a difference)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the committed CSV and table, write nothing")
    args = parser.parse_args(argv)
    table, figure = make()
    text = table.to_csv(index=False, float_format="%.10g")
    page = _page(table_markdown(table))
    if args.check:
        committed = (HERE / "against_log.csv").read_text(encoding="utf-8")
        differences = [
            f"docs/validation/against_log.csv line {number}: committed {old!r}, now {new!r}"
            for number, (old, new) in enumerate(zip(committed.splitlines(), text.splitlines(), strict=False), start=1)
            if old != new
        ]
        if len(committed.splitlines()) != len(text.splitlines()):
            differences.append("docs/validation/against_log.csv: another number of lines")
        if page != (HERE / "against_log.md").read_text(encoding="utf-8"):
            differences.append("docs/validation/against_log.md: the table differs")
        for line in differences:
            print(line)
        if not differences:
            print(f"docs/validation/against_log: identical ({len(table)} rows, the table)")
        return 1 if differences else 0
    from torus_sim.core.files import atomic_write

    atomic_write(HERE / "against_log.csv", lambda handle: handle.write(text))
    atomic_write(HERE / "against_log.md", lambda handle: handle.write(page))
    atomic_write(HERE / "against_log_ctc.png", lambda handle: handle.write(figure), binary=True)
    print(io.StringIO(table_markdown(table)).getvalue(), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
