"""The figures and tables of docs/mira/README.md, from Mira's log and the two sweeps' results.csv.

1. ``failures_per_week.png``: Mira's real failures in the window SDSC-SP2's two years meet (with and
   without the I/O-drawer events) and one draw of Poisson failures at the same count, per week, and
   how many midplanes each week's failures hit.
2. The results tables (markdown), from ``real_failures/results.csv`` and ``poisson/results.csv``.

Run from the repository root, after the two sweeps (see experiments/mira/):

    python docs/mira/study.py
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from failure_logs.mira import read_mira  # noqa: E402
from failure_logs.synthetic import generate_failures  # noqa: E402
from failure_logs.transform import window_onto_span  # noqa: E402
from torus_sim.runner import load_workload  # noqa: E402
from torus_sim.scenario import Scenario  # noqa: E402

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


def draw_weeks(path: Path) -> None:
    span, logs = failure_windows()
    edges = np.arange(span[0], span[1] + WEEK, WEEK)
    figure, (top, bottom) = plt.subplots(2, 1, figsize=(11, 6.5), sharex=True)
    for label, log in logs.items():
        weeks = np.digitize(log.failed_at, edges) - 1
        counts = np.bincount(weeks, minlength=len(edges) - 1)
        spread = [len(set(log.supernodes[weeks == w].tolist())) for w in range(len(edges) - 1)]
        top.plot(np.arange(len(counts)), counts, label=f"{label} ({len(log)} failures)", lw=1)
        bottom.plot(np.arange(len(spread)), spread, label=label, lw=1)
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


if __name__ == "__main__":
    draw_weeks(HERE / "failures_per_week.png")
    print(tables())
