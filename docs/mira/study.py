"""The figures and tables of docs/mira/README.md, from Mira's log and the two sweeps' results.csv.

1. ``failures_per_week.csv`` and the figure drawn from it, ``failures_per_week.png``: Mira's real
   failures in the window SDSC-SP2's two years meet (with and without the I/O-drawer events) and one
   draw of Poisson failures at the same count, per week, and how many midplanes each week's failures hit.
2. ``midplane_map.csv``: where each midplane sits in the 2x3x4x4 torus, derived from the bundled
   reservations (failure_logs.mira.derive_midplane_map), with the votes for and against.
3. The results tables (markdown), from ``real_failures/results.csv`` and ``poisson/results.csv``.

Run from the repository root, after the two sweeps (see experiments/mira/):

    python docs/mira/study.py           # rewrite the two CSVs and the figure, print the tables
    python docs/mira/study.py --check   # compare the CSVs with the committed ones and the tables with
                                        # README.md's rows; exit 1 if anything differs, write nothing
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from failure_logs.mira import BUNDLED_MIRA_RESERVATIONS, derive_midplane_map, read_mira, read_reservations  # noqa: E402
from failure_logs.synthetic import generate_failures  # noqa: E402
from failure_logs.transform import window_onto_span  # noqa: E402
from torus_sim.experiments.runner import load_workload  # noqa: E402
from torus_sim.experiments.scenario import Scenario  # noqa: E402

HERE = Path(__file__).resolve().parent
SDSC = HERE.parents[2] / "shared" / "data" / "swf" / "SDSC-SP2-1998-4.2-cln.swf.gz"
WEEK = 7 * 86400.0


def failure_windows() -> dict[str, np.ndarray]:
    """Failure times and midplanes laid over SDSC-SP2's span: real (I/O drawers on, off) and Poisson."""
    span = load_workload(Scenario(machine="mira", workload=str(SDSC))).span
    logs = {}
    for label, drawers in (("real, I/O drawers", True), ("real, no I/O drawers", False)):
        log = window_onto_span(read_mira(io_drawers=drawers, include_maintenance=False), 0.0, *span)
        logs[label] = log
    count = len(logs["real, I/O drawers"])
    logs[f"Poisson, {count} (seed 0)"] = generate_failures(count, 96, span[0], span[1], np.random.default_rng(0))
    return span, logs


def weekly_table() -> pd.DataFrame:
    """Per week of SDSC-SP2's span and failure series: the failures and the distinct midplanes they hit."""
    span, logs = failure_windows()
    edges = np.arange(span[0], span[1] + WEEK, WEEK)
    rows = []
    for label, log in logs.items():
        weeks = np.digitize(log.failed_at, edges) - 1
        counts = np.bincount(weeks, minlength=len(edges) - 1)
        for week in range(len(edges) - 1):
            hit = len(set(log.supernodes[weeks == week].tolist()))
            rows.append(
                {"series": f"{label} ({len(log)} failures)", "week": week, "failures": int(counts[week]), "midplanes": hit}
            )
    return pd.DataFrame(rows)


def draw_weeks(weekly: pd.DataFrame, path: Path) -> None:
    """The figure of :func:`weekly_table`'s counts."""
    figure, (top, bottom) = plt.subplots(2, 1, figsize=(11, 6.5), sharex=True)
    for label, series in weekly.groupby("series", sort=False):
        top.plot(series["week"], series["failures"], label=label, lw=1)
        bottom.plot(series["week"], series["midplanes"], label=label.rsplit(" (", 1)[0], lw=1)
    top.set_ylabel("failures per week")
    bottom.set_ylabel("distinct midplanes hit per week")
    bottom.set_xlabel("week of SDSC-SP2's two years (Mira's log from 2013-04-02)")
    top.legend(fontsize=8)
    top.grid(alpha=0.3)
    bottom.grid(alpha=0.3)
    figure.suptitle("Mira's real failures vs Poisson failures at the same count, on the 96 midplanes")
    figure.tight_layout()
    figure.savefig(path, dpi=90)
    plt.close(figure)


def midplane_map_table() -> pd.DataFrame:
    """Each midplane's coordinate and row-major index, the reservations that voted for it and against it."""
    derived = derive_midplane_map(read_reservations(BUNDLED_MIRA_RESERVATIONS))
    rows = []
    for name in sorted(derived.coordinates):
        coordinate = derived.coordinates[name]
        votes = derived.votes.get(name, {})
        against = sorted(
            ((other, count) for other, count in votes.items() if other != coordinate), key=lambda vote: (-vote[1], vote[0])
        )
        rows.append(
            {
                "midplane": name,
                **dict(zip("abcd", coordinate, strict=True)),
                "index": derived.index(name),
                "votes": votes.get(coordinate, 0),
                "minority_votes": sum(count for _, count in against),
                "minority_coordinates": " ".join(f"{'x'.join(map(str, other))}:{count}" for other, count in against),
            }
        )
    return pd.DataFrame(rows)


def markdown(table: pd.DataFrame) -> str:
    lines = ["| " + " | ".join(table.columns) + " |", "|" + "---|" * len(table.columns)]
    lines += ["| " + " | ".join(str(v) for v in row) + " |" for row in table.itertuples(index=False)]
    return "\n".join(lines)


def tables() -> str:
    real = pd.read_csv(HERE / "real_failures" / "results.csv")
    poisson = pd.read_csv(HERE / "poisson" / "results.csv")
    real["failures"] = np.where(real["mira_io_drawers"], "real, I/O drawers (650)", "real, no I/O drawers (456)")
    poisson["failures"] = "Poisson 650, seed " + poisson["seed"].astype(str)
    poisson["downtime"] = "transient"
    rows = pd.concat([real, poisson], ignore_index=True)
    shown = rows[
        ["name", "failures", "downtime", "avg_wait_time", "avg_bounded_slowdown", "job_kills", "jobs_killed", "omega_lost"]
    ]
    shown = shown.assign(
        avg_wait_time=shown["avg_wait_time"].map(lambda v: f"{v:,.0f}"),
        avg_bounded_slowdown=shown["avg_bounded_slowdown"].map(lambda v: f"{v:,.1f}"),
        omega_lost=shown["omega_lost"].map(lambda v: f"{v:.3f}"),
    )
    shown.columns = ["policy", "failures", "downtime", "avg wait (s)", "avg bounded slowdown", "kills", "jobs killed", "ω_lost"]
    return markdown(shown.sort_values(["downtime", "failures", "policy"], kind="stable"))


def same_csv(made: pd.DataFrame, path: Path) -> bool:
    """Whether ``made`` written as CSV is the committed file, line for line (says the first difference)."""
    fresh = made.to_csv(index=False).splitlines()
    committed = path.read_text().splitlines()
    for number, (new, old) in enumerate(zip(fresh, committed, strict=False), start=1):
        if new != old:
            print(f"{path.name} line {number}: committed {old!r}, made {new!r}")
            return False
    if len(fresh) != len(committed):
        print(f"{path.name}: committed {len(committed)} lines, made {len(fresh)}")
        return False
    return True


def main(argv: list[str] | None = None) -> int:
    """Re-make; with ``--check`` compare with what is committed (exit 1 on a difference), else rewrite."""
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the committed files and README.md, write nothing")
    args = parser.parse_args(argv)
    weekly, mapping, shown = weekly_table(), midplane_map_table(), tables()
    if not args.check:
        weekly.to_csv(HERE / "failures_per_week.csv", index=False)
        mapping.to_csv(HERE / "midplane_map.csv", index=False)
        draw_weeks(weekly, HERE / "failures_per_week.png")
        print(shown)
        return 0
    same = same_csv(weekly, HERE / "failures_per_week.csv") & same_csv(mapping, HERE / "midplane_map.csv")
    readme = (HERE / "README.md").read_text().splitlines()
    missing = [row for row in shown.splitlines()[2:] if row not in readme]
    for row in missing:
        print(f"README.md lacks the table row {row}")
    print("identical" if same and not missing else "differs")
    return 0 if same and not missing else 1


if __name__ == "__main__":
    raise SystemExit(main())
