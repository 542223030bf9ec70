"""The held-out half judged by whether the fit saw each job's user: the users seen in the first half, and new ones.

    python docs/validation/new_users.py                   # every log: writes new_users.csv, prints the page's table
    python docs/validation/new_users.py --log HPC2N       # one log (its rows replaced in new_users.csv)
    python docs/validation/new_users.py --check           # exit 1 when a number differs (about 6 minutes)
    python docs/validation/new_users.py --heaviest        # each held-out half's user with the most logged waiting

A calibration fits settings on the first half of a log and is judged on the second; it learns nothing of a user who
submitted no job of the first half. For each log under the data mirror with a site file in ``experiments/sites/``
(the calibrated settings of docs/validation/real_machine.md; RICC's is its textbook set-up): the textbook replay
(FCFS-EASY on the log's processors) and the site as written, each replayed whole and judged on the held-out half as
the page's table is (``torus-sim calibrate``'s report splits it alike): all its jobs, those of users who submitted a
job of the first half (an unknown user, SWF field 12 of -1, counts as seen), and those of users new in the second.
"""

from __future__ import annotations

import sys
from pathlib import Path

from real_machine import replay_study  # beside this script (python puts the script's folder first on the path)

HERE = Path(__file__).resolve().parent
SITES = HERE.parents[1] / "experiments" / "sites"
LOGS = ("CTC-SP2", "SDSC-SP2", "HPC2N", "RICC")
USERS = ("all", "seen", "new")
FIELDS = (
    "log",
    "site",
    "users",
    "jobs",
    "job_share",
    "logged_wait_share",
    "ks",
    "mean_wait",
    "logged_mean_wait",
    "mean_error",
    "within_hour",
)


def _sites(log: str) -> dict:
    """The textbook replay and the site as written, by label."""
    from torus_sim import Scenario
    from torus_sim.experiments.experiment import load_experiment

    textbook = Scenario(workload=f"pwa:{log}", platform="cluster", failures="none", policy="FCFS-EASY")
    return {"textbook": textbook, "site as written": load_experiment(SITES / f"{log}.toml").scenario({})}


def study(log: str) -> list[dict]:
    """One log's rows: each replay's held-out half, all its jobs, its seen users' and its new users'."""
    from torus_sim import against_log, run
    from torus_sim.experiments.calibrate import score_part, split_log

    rows = []
    for label, scenario in _sites(log).items():
        split = split_log(scenario, 0.5)
        waits = against_log(run(scenario)).waits
        held_out = waits[waits["job_id"] >= split.first_test_id]
        new = held_out["job_id"].isin(split.new_user_ids).to_numpy()
        for users, chosen in zip(USERS, (slice(None), ~new, new), strict=True):
            part = held_out[chosen]
            score = score_part(part)
            rows.append(
                {
                    "log": log,
                    "site": label,
                    "users": users,
                    "jobs": str(score.jobs),
                    "job_share": f"{score.jobs / len(held_out):.3f}",
                    "logged_wait_share": f"{part['logged_wait'].sum() / held_out['logged_wait'].sum():.3f}",
                    "ks": f"{score.ks:.3f}",
                    "mean_wait": f"{score.mean_wait:.0f}",
                    "logged_mean_wait": f"{score.logged_mean_wait:.0f}",
                    "mean_error": f"{score.mean_error:.3f}",
                    "within_hour": f"{score.within_hour:.3f}",
                }
            )
    return rows


def heaviest(log: str) -> str:
    """The held-out half's user with the most logged waiting: its share of the jobs and the waiting, seen or new."""
    import numpy as np

    from torus_sim.experiments.calibrate import split_log
    from torus_sim.experiments.run_inputs import load_workload
    from torus_sim.inputs.datasets import fetch
    from torus_sim.inputs.workload.logged import logged_schedule
    from torus_sim.inputs.workload.swf import read_swf

    scenario = _sites(log)["site as written"]
    split = split_log(scenario, 0.5)
    jobs = load_workload(scenario).jobs
    ids = np.asarray(jobs.column("job_id"))[split.count :]
    users = np.asarray(jobs.column("user_id"))[split.count :]
    schedule = logged_schedule(read_swf(fetch(scenario.workload)))
    by_id = np.argsort(schedule.job_id, kind="stable")
    waits = np.maximum(schedule.wait[by_id[np.searchsorted(schedule.job_id, ids, sorter=by_id)]], 0.0)
    distinct, index = np.unique(users, return_inverse=True)
    totals = np.bincount(index, weights=waits)
    top = int(np.argmax(totals))
    mine = index == top
    seen = not np.isin(ids[mine], split.new_user_ids).any()
    return (
        f"{log}: user {int(distinct[top])} ({'seen in' if seen else 'absent from'} the first half): "
        f"{mine.mean():.1%} of the held-out jobs, {totals[top] / waits.sum():.1%} of their logged waiting; "
        f"logged mean wait {waits[mine].mean():,.0f} s, the other users' {waits[~mine].mean():,.0f} s"
    )


def table(rows: list[dict]) -> str:
    """The page's table: per log and replay, the held-out half's jobs, of users seen and of new users."""
    lines = [
        "| log | replay | users | held-out jobs | their logged waiting | KS of the waits | mean wait (s), simulated / logged "
        "| error | within 1 h |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        lines.append(
            f"| {row['log']} | {row['site']} | {row['users']} | {float(row['job_share']):.1%} | "
            f"{float(row['logged_wait_share']):.1%} | {row['ks']} | {int(row['mean_wait']):,} / "
            f"{int(row['logged_mean_wait']):,} | {float(row['mean_error']):+.1%} | {float(row['within_hour']):.1%} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    if "--heaviest" in sys.argv:
        for name in LOGS:
            print(heaviest(name))
        sys.exit(0)
    sys.exit(replay_study(sys.argv[1:], "new_users.csv", FIELDS, LOGS, study, table))
