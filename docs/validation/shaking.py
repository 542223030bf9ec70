"""How close a replay can come to its log: each log's site replayed under input shaking, judged on the held-out half.

    python docs/validation/shaking.py                  # every log: writes shaking.csv, prints the page's table
    python docs/validation/shaking.py --log CTC-SP2    # one log (its rows replaced in shaking.csv)
    python docs/validation/shaking.py --check          # exit 1 when a number differs from shaking.csv (about 8 minutes)

For each log under the data mirror with a site file in ``experiments/sites/`` (the calibrated settings of
docs/validation/real_machine.md; RICC's is its textbook set-up): the site replayed as written, then again with every
job's submit time moved by a uniform draw in [-1, +1] s and in [-60, +60] s (``shake``; seeds 1, 2, 3). Each replay
is judged on the held-out half (the jobs from the first of the second half, as the calibration splits the log)
against the log, as the page's table is, and against the unshaken replay: the share of the held-out jobs whose start
moved by at most an hour, and the mean absolute difference of the daily utilization. A second's move is the logs'
own resolution (SWF times are whole seconds), a minute's the scale of the dispatch cycles the calibration fits
(43-123 s): neither is known of the real machine, so a replay that moves that much under them cannot be held
closer to the real machine than it is to itself.

References:
    Tsafrir, Ouaknine, Feitelson, "Reducing performance evaluation sensitivity and variability by input shaking",
    MASCOTS 2007; Tsafrir, Feitelson, "Instability in parallel job scheduling simulation: the role of workload
    flurries", IPDPS 2006.
"""

from __future__ import annotations

import sys
from pathlib import Path

from real_machine import replay_study  # beside this script (python puts the script's folder first on the path)

HERE = Path(__file__).resolve().parent
SITES = HERE.parents[1] / "experiments" / "sites"
LOGS = ("CTC-SP2", "SDSC-SP2", "HPC2N", "RICC")
SHAKES = (1.0, 60.0)
"""The largest moves of a submit time, seconds."""
SEEDS = (1, 2, 3)
FIELDS = (
    "log",
    "shake",
    "seed",
    "ks",
    "mean_error",
    "within_hour",
    "daily_utilization_error",
    "same_start_within_hour",
    "daily_utilization_moved",
)


def _replay(scenario, first_test_id: int, split_day: int):
    """One whole-log replay: its held-out score against the log, its held-out jobs' starts, its held-out daily utilization."""
    from torus_sim import against_log, run
    from torus_sim.experiments.calibrate import score_part

    result = run(scenario)
    comparison = against_log(result)
    waits = comparison.waits
    score = score_part(waits[waits["job_id"] >= first_test_id], comparison.by_day, split_day, None)
    jobs = result.jobs
    starts = jobs.loc[jobs["job_id"] >= first_test_id].set_index("job_id")["first_started_at"]
    days = comparison.by_day
    daily = days.loc[days["day"] >= split_day].set_index("day")["simulated_utilization"]
    return score, starts, daily


def study(log: str) -> list[dict]:
    """One log's rows: the site as written (shake 0), then each shake and seed."""
    from torus_sim.experiments.calibrate import split_log
    from torus_sim.experiments.experiment import load_experiment

    site = load_experiment(SITES / f"{log}.toml").scenario({})
    _, first_test_id, split_day = split_log(site, 0.5)[:3]
    score, starts, daily = _replay(site, first_test_id, split_day)
    rows = [_row(log, 0.0, "", score, 1.0, 0.0)]
    for shake in SHAKES:
        for seed in SEEDS:
            moved, moved_starts, moved_daily = _replay(site.replace(shake=shake, seed=seed), first_test_id, split_day)
            same = float((moved_starts.reindex(starts.index) - starts).abs().le(3600.0).mean())
            apart = float((moved_daily.reindex(daily.index) - daily).abs().mean())
            rows.append(_row(log, shake, str(seed), moved, same, apart))
    return rows


def _row(log: str, shake: float, seed: str, score, same: float, apart: float) -> dict:
    return {
        "log": log,
        "shake": f"{shake:g}",
        "seed": seed,
        "ks": f"{score.ks:.3f}",
        "mean_error": f"{score.mean_error:.3f}",
        "within_hour": f"{score.within_hour:.3f}",
        "daily_utilization_error": f"{score.daily_utilization_error:.3f}",
        "same_start_within_hour": f"{same:.3f}",
        "daily_utilization_moved": f"{apart:.3f}",
    }


def table(rows: list[dict]) -> str:
    """The page's table: per log, the site as written and each shake's range over its seeds."""
    lines = [
        "| log | shake | KS of the waits | mean-wait error | within 1 h of the log | daily utilization vs the log "
        "| within 1 h of the unshaken replay | daily utilization vs the unshaken replay |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for log in dict.fromkeys(row["log"] for row in rows):
        for shake in dict.fromkeys(row["shake"] for row in rows if row["log"] == log):
            group = [row for row in rows if row["log"] == log and row["shake"] == shake]

            def span(field: str, form: str, group=group) -> str:
                values = sorted(float(row[field]) for row in group)
                low, high = format(values[0], form), format(values[-1], form)
                return low if low == high else f"{low} to {high}"

            label = "none (as written)" if shake == "0" else f"±{shake} s, {len(group)} seeds"
            lines.append(
                f"| {log} | {label} | {span('ks', '.3f')} | {span('mean_error', '+.1%')} | {span('within_hour', '.1%')} | "
                f"{span('daily_utilization_error', '.3f')} | {span('same_start_within_hour', '.1%')} | "
                f"{span('daily_utilization_moved', '.3f')} |"
            )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(replay_study(sys.argv[1:], "shaking.csv", FIELDS, LOGS, study, table))
