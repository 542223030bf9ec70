"""torus-sim's FCFS-EASY against CQSim's own schedules, job for job, one difference at a time.

CQSim's per-job outputs for FCFS + EASY backfilling on CTC-SP2 (338 processors) and SDSC-SP2 (128) are
in ../shared/peers/cqsim/ (how they were made: its README). This script runs our FCFS-EASY on the same
logs under every combination that isolates one of the three differences between our defaults and
CQSim (cleaning rules, when the scheduler runs, EASY's extra nodes), compares each with CQSim's
schedule (:func:`torus_sim.metrics.peers.agreement`) and writes ``cqsim.csv`` and the Markdown table
of docs/validation/README.md. Run from the repository root (about 2 minutes on 2 cores):

    python docs/validation/cqsim.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from torus_sim.core.files import atomic_write
from torus_sim.experiments.runner import Scenario, run
from torus_sim.metrics.peers import agreement, read_cqsim_schedule

HERE = Path(__file__).resolve().parent
SHARED = HERE.parents[2] / "shared"
LOGS = {
    "CTC-SP2": "CTC-SP2-1996-3.1-cln",
    "SDSC-SP2": "SDSC-SP2-1998-4.2-cln",
}
MODES = (
    # (label, swf_rules, event_order, easy_extra)
    ("torus-sim 0.1's defaults (PV-EASY's extra nodes)", "pv-easy", "instant", "pv-easy"),
    ("defaults (textbook extra nodes)", "pv-easy", "instant", "textbook"),
    ("defaults + CQSim's cleaning", "cqsim", "instant", "textbook"),
    ("defaults + a pass after each event", "pv-easy", "each-event", "textbook"),
    ("CQSim mode but PV-EASY's extra nodes", "cqsim", "each-event", "pv-easy"),
    ("CQSim mode (cqsim rules, each-event)", "cqsim", "each-event", "textbook"),
)


def compare() -> pd.DataFrame:
    """Every mode on every log: the agreement with CQSim's schedule (one row each)."""
    rows = []
    for log, stem in LOGS.items():
        peer = read_cqsim_schedule(SHARED / "peers" / "cqsim" / f"{stem}.easy.rst.gz")
        for label, rules, order, extra in MODES:
            scenario = Scenario(
                platform="cluster",
                workload=str(SHARED / "data" / "swf" / f"{stem}.swf.gz"),
                policy="FCFS-EASY",
                swf_rules=rules,
                event_order=order,
                easy_extra=extra,
                fairness=False,
            )
            result = run(scenario)
            found = agreement(result.jobs, peer)
            rows.append({"log": log, "mode": label, "swf_rules": rules, "event_order": order, "easy_extra": extra, **found})
            print(f"{log:9s} {label:55s} {found['same_wait']:>6,} / {found['shared']:,} same wait", file=sys.stderr)
    return pd.DataFrame(rows)


def markdown(table: pd.DataFrame) -> str:
    """The README's table: agreement and the means, ours next to CQSim's."""
    lines = [
        "| log | mode | rules, order, extra nodes | jobs (ours / CQSim) | same wait | mean wait (s), ours / CQSim | mean bounded slowdown, ours / CQSim |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in table.itertuples():
        lines.append(
            f"| {row.log} | {row.mode} | {row.swf_rules}, {row.event_order}, {row.easy_extra} | {row.ours:,} / {row.peer:,} "
            f"| {row.same_wait:,} ({row.same_share:.1%}) | {row.mean_wait:,.0f} / {row.peer_mean_wait:,.0f} "
            f"| {row.mean_bsld:.2f} / {row.peer_mean_bsld:.2f} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    """Compare, then write cqsim.csv and cqsim_table.md beside this script."""
    table = compare()
    atomic_write(HERE / "cqsim.csv", lambda handle: table.to_csv(handle, index=False))
    text = markdown(table)
    atomic_write(HERE / "cqsim_table.md", lambda handle: handle.write(text))
    print(text)


if __name__ == "__main__":
    main()
