"""The fair share's shares as the users asked: each site, and each log fitted again, with S = the share of what it asked.

    python docs/validation/shares.py                  # every log: writes shares.csv, prints the page's table
    python docs/validation/shares.py --log SDSC-SP2   # one log (its rows replaced in shares.csv)
    python docs/validation/shares.py --check          # exit 1 when a number differs (about 4 minutes resuming kept studies)

For CTC-SP2, SDSC-SP2 and HPC2N: the site (``experiments/sites/LOG.toml``, the fit with equal shares) replayed whole as
written and with ``priority_fairshare_shares = "submitted"`` (each owner's S in 2^(-U/S) its share of the node-seconds
its jobs asked so far), scored on each half as the calibration splits them; then ``torus-sim calibrate`` from
real_machine.py's site as given with the shares as asked, its trials and sampler seed, on the first half, judged on the
held-out half as the page's table is; held out, the simulated waiting over the logged of the held-out half's heaviest
user (by logged waiting) and of the other users together. The sampler draws the same first trials as the page's fit (the same space and
seed): from there the two fits differ by the shares alone. RICC is left out: its textbook replay stood under every fit
(its trials take four times as long). Studies are kept in the temporary folder's ``torus-sim-shares`` and resumed.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from node_seconds import processor_seconds_left, waiting_by_user  # beside this script (python puts its folder first)
from real_machine import FIELDS as SCORE_FIELDS
from real_machine import _row, replay_study, settings_text, site_of

HERE = Path(__file__).resolve().parent
LOGS = ("CTC-SP2", "SDSC-SP2", "HPC2N")
SUBMITTED = {"priority_fairshare_shares": "submitted"}
FIELDS = ("log", "replay", *SCORE_FIELDS[2:], "heaviest_ratio", "others_ratio", "settings")


def study(log: str) -> list[dict]:
    """One log's rows: its site with equal and with asked shares, and its fit with asked shares, both halves."""
    from real_machine import GIVEN
    from real_machine import LOGS as TRIALS

    from torus_sim import Scenario
    from torus_sim.experiments.calibrate import calibrate, replay_waits, score_parts, split_log

    base = Scenario(workload=f"pwa:{log}", platform="cluster", failures="none", policy="FCFS-EASY", **GIVEN.get(log, {}))
    cut = split_log(base, 0.5)
    site = site_of(log)
    heaviest = int(processor_seconds_left(log)["user"])
    rows = []

    def scored(name: str, scores: dict, held_out, settings: str = "") -> None:
        ratios = waiting_by_user(log, held_out, heaviest)
        for part in ("train", "test"):
            row = _row(log, name, part, scores[part])
            test = part == "test"
            rows.append(
                {
                    "log": log,
                    "replay": name,
                    **{key: row[key] for key in SCORE_FIELDS[2:]},
                    "heaviest_ratio": ratios["heaviest_ratio"] if test else "",
                    "others_ratio": ratios["others_ratio"] if test else "",
                    "settings": settings if test else "",
                }
            )

    for name, scenario in (("site", site), ("site, shares as asked", site.replace(**SUBMITTED))):
        waits, by_day = replay_waits(scenario)
        scored(name, score_parts(waits, by_day, cut), waits[waits["job_id"] >= cut.first_test_id])
    folder = Path(tempfile.gettempdir()) / "torus-sim-shares" / log
    calibration = calibrate(base.replace(**SUBMITTED), folder, train=0.5, trials=TRIALS[log], seed=0)
    settings = settings_text(calibration.fitted)
    scored("fitted with shares as asked", calibration.scores["calibrated"], calibration.held_out["calibrated"], settings)
    return rows


def table(rows: list[dict]) -> str:
    """The page's table: each log's site with equal and with asked shares, and its fit with asked shares, both halves."""
    lines = [
        "| log | replay | part | KS of the waits | mean wait (s), simulated / logged | error | within 1 h | mean abs. daily "
        "utilization difference | heaviest held-out user's waiting, simulated / logged | the other users' |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        part = "held out" if row["part"] == "test" else "fitted on"
        lines.append(
            f"| {row['log']} | {row['replay']} | {part} | {row['ks']} | {int(row['mean_wait']):,} / "
            f"{int(row['logged_mean_wait']):,} | {float(row['mean_error']):+.1%} | {float(row['within_hour']):.1%} | "
            f"{row['daily_utilization_error']} | {row['heaviest_ratio']} | {row['others_ratio']} |"
        )
    fitted = [row for row in rows if row["settings"]]
    return "\n".join(lines + [""] + [f"- {row['log']}: `{row['settings']}`" for row in fitted])


if __name__ == "__main__":
    sys.exit(replay_study(sys.argv[1:], "shares.csv", FIELDS, LOGS, study, table))
