"""A scheduling cycle held against the logged waits: ``sched_min_interval`` fitted on one half of a log, judged on the other.

    python docs/validation/cycle.py              # writes docs/validation/cycle.csv and prints the page's table
    python docs/validation/cycle.py --check      # exit 1 when a number differs from cycle.csv (about 6 minutes)

Production schedulers dispatch in cycles: no waited job of CTC-SP2 starts at the instant another ends, and the
jobs that found the machine free still waited seconds to minutes. The textbook loop starts them at once.
This replays CTC-SP2 (EASY, the scheduler its header names, on its own 338 processors) with the pass at most once
per ``sched_min_interval`` seconds, compares each run's waits with the logged ones job for job
(:func:`torus_sim.against_log`), and measures the Kolmogorov-Smirnov distance of the wait distributions separately
on the first half of the jobs (by job id, i.e. submission) and on the second. The interval is chosen on the first
half only; the second half, and SDSC-SP2 (another machine, another year) replayed with the same interval, judge it.

References:
    Slurm's ``SchedulerParameters`` (``sched_interval``, ``sched_min_interval``); Feitelson, Tsafrir and Krakov,
    "Experience with using the Parallel Workloads Archive", JPDC 74(10), 2014 (the logs' waits).
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

from scipy.stats import ks_2samp

HERE = Path(__file__).resolve().parent
FIELDS = ("log", "interval", "ks_first", "ks_second", "ks_all", "mean_wait", "logged_mean_wait", "at_once", "logged_at_once")
INTERVALS = (None, 15.0, 30.0, 60.0, 120.0, 240.0, 480.0)
"""The intervals tried on CTC-SP2, seconds (None: the textbook loop, a pass at each instant with an event)."""


def halves(log: str, interval: float | None, policy: str = "FCFS-EASY") -> dict:
    """One whole-log replay with the interval: the KS distance of the waits on each half, the mean waits, jobs started at once."""
    from torus_sim import Scenario, against_log, run

    result = run(Scenario(workload=log, platform="cluster", failures="none", policy=policy, sched_min_interval=interval))
    waits = against_log(result).waits.sort_values("job_id")
    half = len(waits) // 2
    first, second = waits.iloc[:half], waits.iloc[half:]
    return {
        "interval": interval,
        "ks_first": float(ks_2samp(first["simulated_wait"], first["logged_wait"]).statistic),
        "ks_second": float(ks_2samp(second["simulated_wait"], second["logged_wait"]).statistic),
        "ks_all": float(ks_2samp(waits["simulated_wait"], waits["logged_wait"]).statistic),
        "mean_wait": float(waits["simulated_wait"].mean()),
        "logged_mean_wait": float(waits["logged_wait"].mean()),
        "at_once": float((waits["simulated_wait"] == 0).mean()),
        "logged_at_once": float((waits["logged_wait"] == 0).mean()),
    }


def _row(log: str, row: dict) -> str:
    interval = "none" if row["interval"] is None else f"{row['interval']:g} s"
    return (
        f"| {log} | {interval} | {row['ks_first']:.3f} | {row['ks_second']:.3f} | {row['ks_all']:.3f} | "
        f"{row['mean_wait']:,.0f} / {row['logged_mean_wait']:,.0f} | {row['at_once']:.1%} / {row['logged_at_once']:.1%} |"
    )


def _written(log: str, row: dict) -> dict:
    """A row as cycle.csv holds it: KS to 3 decimals, waits to whole seconds, shares to 4 decimals."""
    return {
        "log": log,
        "interval": "none" if row["interval"] is None else f"{row['interval']:g}",
        **{key: f"{row[key]:.3f}" for key in ("ks_first", "ks_second", "ks_all")},
        **{key: f"{row[key]:.0f}" for key in ("mean_wait", "logged_mean_wait")},
        **{key: f"{row[key]:.4f}" for key in ("at_once", "logged_at_once")},
    }


def main(argv: list[str]) -> int:
    rows = [halves("pwa:CTC-SP2", interval) for interval in INTERVALS]
    fitted = min((row for row in rows if row["interval"] is not None), key=lambda row: row["ks_first"])
    judged = [halves("pwa:SDSC-SP2", None), halves("pwa:SDSC-SP2", fitted["interval"])]
    written = [_written("CTC-SP2", row) for row in rows] + [_written("SDSC-SP2", row) for row in judged]
    path = HERE / "cycle.csv"
    if "--check" in argv:
        with path.open(newline="") as handle:
            committed = list(csv.DictReader(handle))
        differing = [f"{path.name}: {new} != {old}" for new, old in zip(written, committed, strict=False) if new != old]
        if differing or len(committed) != len(written):
            print("\n".join(differing) or f"{path.name}: {len(committed)} rows committed, {len(written)} made")
            return 1
        print(f"{path.name}: identical ({len(written)} rows)")
        return 0
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(written)
    print(
        "| log | sched_min_interval | KS, first half | KS, second half | KS, whole log | mean wait (s), simulated / logged | started at once, simulated / logged |"
    )
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        print(_row("CTC-SP2", row))
    for row in judged:
        print(_row("SDSC-SP2", row))
    print()
    print(
        f"fitted on CTC-SP2's first half: {fitted['interval']:g} s (KS {fitted['ks_first']:.3f}); judged on its second half: "
        f"KS {fitted['ks_second']:.3f} (none: {rows[0]['ks_second']:.3f}); SDSC-SP2 whole log: KS {judged[1]['ks_all']:.3f} "
        f"(none: {judged[0]['ks_all']:.3f})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
