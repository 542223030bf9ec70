"""Age counted from eligibility: each site with a per-user limit, a job's age counted from its submission or its entry.

    python docs/validation/eligible_age.py                # writes eligible_age.csv, prints the page's table
    python docs/validation/eligible_age.py --check        # exit 1 when a number differs (about 3 minutes)

For each log whose site (experiments/sites/) holds jobs over a per-user limit (CTC-SP2, SDSC-SP2, HPC2N; RICC's
textbook set-up has none): the site replayed whole as written (``priority_age_from = "submit"``: the validation
page's calibrated rows) and with ``priority_age_from = "eligible"`` (a job a limit holds gains no age while held:
Maui's system queue time), scored on its first half and on its held-out half as the calibration splits them. Then
HPC2N's site with the running-job cap its logged schedule shows (60 per user) and Slurm's default maximum age (7
days), under both readings: where a limit binds and the age counts, what the reading moves. Each held-out row also
gives the held-out half's heaviest user's (by logged waiting) simulated waiting over its logged, and the other users'.
Read against the held-out half, the capped rows are a diagnosis, not a fit.
"""

from __future__ import annotations

import sys
from pathlib import Path

from node_seconds import processor_seconds_left, waiting_by_user  # beside this script (python puts its folder first)
from real_machine import FIELDS as SCORE_FIELDS
from real_machine import _row, replay_study, site_of

HERE = Path(__file__).resolve().parent
LOGS = ("CTC-SP2", "SDSC-SP2", "HPC2N")
CAPPED = {"max_jobs_per_user": 60, "priority_max_age": 7 * 86400.0}
"""HPC2N's logged cap of running jobs per user (its seven heaviest users plateau at 60-62) and Slurm's default
``PriorityMaxAge``, in place of its site's fitted 170 jobs and one hour."""
FIELDS = ("log", "replay", "age_from", *SCORE_FIELDS[2:], "heaviest_ratio", "others_ratio")


def study(log: str) -> list[dict]:
    """One log's rows: its site (and, for HPC2N, its site at the logged cap) under each reading, both halves."""
    from torus_sim.experiments.calibrate import replay_waits, score_parts, split_log

    site = site_of(log)
    cut = split_log(site, 0.5)
    heaviest = int(processor_seconds_left(log)["user"])
    replays = [("site", site)]
    if log == "HPC2N":
        replays.append(("site, 60 jobs per user, 7-day maximum age", site.replace(**CAPPED)))
    rows = []
    for name, scenario in replays:
        for age_from in ("submit", "eligible"):
            waits, by_day = replay_waits(scenario.replace(priority_age_from=age_from))
            held_out = waits[waits["job_id"] >= cut.first_test_id]
            for part, score in score_parts(waits, by_day, cut).items():
                row = _row(log, name, part, score)
                row = {"log": log, "replay": name, "age_from": age_from, **{key: row[key] for key in SCORE_FIELDS[2:]}}
                ratios = waiting_by_user(log, held_out, heaviest) if part == "test" else {}
                rows.append(
                    {**row, "heaviest_ratio": ratios.get("heaviest_ratio", ""), "others_ratio": ratios.get("others_ratio", "")}
                )
    return rows


def table(rows: list[dict]) -> str:
    """The page's table: each replay under each reading, both halves; the held-out half's heaviest user's waiting."""
    lines = [
        "| log | replay | age counted from | part | KS of the waits | mean wait (s), simulated / logged | error | within 1 h "
        "| heaviest held-out user's waiting, simulated / logged | the other users' |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        part = "held out" if row["part"] == "test" else "fitted on"
        lines.append(
            f"| {row['log']} | {row['replay']} | {row['age_from']} | {part} | {row['ks']} | "
            f"{int(row['mean_wait']):,} / {int(row['logged_mean_wait']):,} | {float(row['mean_error']):+.1%} | "
            f"{float(row['within_hour']):.1%} | {row['heaviest_ratio']} | {row['others_ratio']} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(replay_study(sys.argv[1:], "eligible_age.csv", FIELDS, LOGS, study, table))
