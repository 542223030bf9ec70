"""What held the held-out half's heaviest user: its running jobs' processor-seconds left, and HPC2N's site with a limit on them.

    python docs/validation/node_seconds.py                # writes node_seconds.csv, prints the page's two tables
    python docs/validation/node_seconds.py --check        # exit 1 when a number differs (about 3 minutes)

For each log under the data mirror, the held-out half's user with the most logged waiting (as new_users.py finds it):
at each start of that user's jobs in the logged schedule, its running jobs' processor-seconds left (each job's
processors times its requested time left, the started job's whole request included: what Maui's ``MAXPS`` counts),
and per fortnight from its first start with ten of its starts or more the largest of them. A site limit on them
shows as maxima that stop at one value fortnight after fortnight: ``plateau`` is the fortnights' maximum with the most
others within 1% of it, ``at_plateau`` the share of the fortnights whose maximum lies within 1% of it. Then HPC2N's site as written (experiments/sites/HPC2N.toml) replayed whole with
``max_node_seconds_per_user`` unset and at 3.6, 5.4 and 7.2 million processor-seconds (1,000, 1,500 and 2,000
processor-hours), scored on its first half and on its held-out half as the calibration splits them, with the first
half's starts at which their user's count (as above) passed the limit, and how many users made them; on the held-out
half, the heaviest user's simulated waiting over its logged, the other users', and the user whose simulated waiting
passes its logged by the most, with its ratio. Read against the
held-out half, this is a diagnosis, not a fit: the site with a limit judged on the half the limit was read from.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from real_machine import FIELDS as SCORE_FIELDS  # beside this script (python puts the script's folder first on the path)
from real_machine import _row, replay_study

HERE = Path(__file__).resolve().parent
SITES = HERE.parents[1] / "experiments" / "sites"
LOGS = ("CTC-SP2", "SDSC-SP2", "HPC2N", "RICC")
LIMITS = (None, 3.6e6, 5.4e6, 7.2e6)
FORTNIGHT = 14 * 86400.0
PLATEAU_BAND = 0.01
"""Fortnights' maxima within 1% of one another stand at one value."""
FIELDS = (
    "log",
    "replay",
    "part",
    "user",
    "fortnights",
    "plateau",
    "at_plateau",
    *SCORE_FIELDS[4:],  # ks ... daily_utilization_error, as real_machine.csv has them
    "starts_past",
    "users_past",
    "heaviest_ratio",
    "others_ratio",
    "most_over",
    "most_over_ratio",
)


def _site(log: str):
    from torus_sim.experiments.experiment import load_experiment

    return load_experiment(SITES / f"{log}.toml").scenario({})


def _log_lines(log: str):
    """The log's placed lines that ran (cancelled ones left out): job id, user, start, end, processors, request."""
    from torus_sim.inputs.datasets import fetch
    from torus_sim.inputs.workload.swf import read_swf

    trace = read_swf(fetch(_site(log).workload))
    wait, run = trace.column("wait_time"), trace.column("run_time")
    allocated, requested = trace.column("allocated_processors"), trace.column("requested_processors")
    processors = np.where(allocated > 0, allocated, requested)
    placed = (wait >= 0) & (run >= 0) & (processors > 0) & (trace.column("status") != 5)  # cancelled: not occupancy
    start = trace.column("submit_time")[placed] + wait[placed]
    asked = trace.column("requested_time")[placed]
    return {
        "job_id": trace.column("job_id").astype(np.int64)[placed],
        "user": trace.column("user_id").astype(np.int64)[placed],
        "wait": wait[placed],
        "start": start,
        "end": start + run[placed],
        "processors": processors[placed],
        "asked": np.where(asked > 0, asked, run[placed]),
    }


def _left_at_starts(lines: dict, chosen: np.ndarray) -> np.ndarray:
    """At each start of the ``chosen`` lines (one user's), that user's running jobs' processor-seconds left."""
    start, end = lines["start"][chosen], lines["end"][chosen]
    size, asked = lines["processors"][chosen], lines["asked"][chosen]
    return np.array(
        [
            np.sum(size[running] * np.maximum(start[running] + asked[running] - at, 0.0))
            for at in start
            for running in [(start <= at) & (end > at)]
        ]
    )


def starts_past(log: str, first_test_id: int, limits) -> dict:
    """The first half's starts (job id below ``first_test_id``) at which their user's count passed each limit, and whose.

    Returns:
        limit -> ``(starts, users)``.
    """
    lines = _log_lines(log)
    first = lines["job_id"] < first_test_id
    counts, owners = [], []
    for user in np.unique(lines["user"][first]):
        mine = lines["user"] == user  # every job of the user counts, its first-half starts are kept
        counts.append(_left_at_starts(lines, mine)[first[mine]])
        owners.append(np.full(int(np.sum(first & mine)), user))
    count, owner = np.concatenate(counts), np.concatenate(owners)
    return {limit: (int(np.sum(count > limit)), len(np.unique(owner[count > limit]))) for limit in limits}


def processor_seconds_left(log: str) -> dict:
    """The held-out half's heaviest user (by logged waiting) and its running jobs' processor-seconds left at its starts.

    Returns:
        ``user``; ``fortnights``: the fortnights with ten of its starts or more; ``plateau``: of their largest
        processor-seconds left (at a start, the user's running jobs', the started one included), the one with the most
        others within 1% of it; ``at_plateau``: the share of those fortnights whose largest lies within 1% of it.
    """
    from torus_sim.experiments.calibrate import split_log

    lines = _log_lines(log)
    held_out = (lines["job_id"] >= split_log(_site(log), 0.5).first_test_id) & (lines["user"] >= 0)
    distinct, index = np.unique(lines["user"][held_out], return_inverse=True)
    user = int(distinct[np.argmax(np.bincount(index, weights=lines["wait"][held_out]))])
    mine = lines["user"] == user
    start, left = lines["start"][mine], _left_at_starts(lines, mine)
    fortnight = ((start - start.min()) // FORTNIGHT).astype(np.int64)
    counts = np.bincount(fortnight)
    maxima = np.array([left[fortnight == k].max() for k in np.flatnonzero(counts >= 10)])
    near = np.abs(maxima[None, :] / maxima[:, None] - 1.0) <= PLATEAU_BAND
    plateau = float(maxima[np.argmax(near.sum(axis=1))])  # the maximum most others lie near (the smallest of a tie)
    return {
        "user": str(user),
        "fortnights": str(len(maxima)),
        "plateau": f"{plateau:.4g}",
        "at_plateau": f"{np.mean(np.abs(maxima / plateau - 1.0) <= PLATEAU_BAND):.3f}",
    }


def waiting_by_user(log: str, waits, user: int) -> dict:
    """Held-out waits by user: ``user``'s simulated waiting over its logged, and the other users'.

    Also the user whose simulated waiting passes its logged by the most (its id and its ratio).
    """
    import pandas as pd

    from torus_sim.inputs.datasets import fetch
    from torus_sim.inputs.workload.swf import read_swf

    trace = read_swf(fetch(_site(log).workload))
    owner = pd.Series(trace.column("user_id").astype(np.int64), index=trace.column("job_id").astype(np.int64))
    by_user = waits.assign(user=owner.reindex(waits["job_id"].to_numpy()).to_numpy()).groupby("user")
    simulated, logged = by_user["simulated_wait"].sum(), by_user["logged_wait"].sum()
    others = simulated.index != user
    most = int((simulated - logged).idxmax())
    return {
        "heaviest_ratio": f"{simulated[user] / logged[user]:.2f}",
        "others_ratio": f"{simulated[others].sum() / logged[others].sum():.2f}",
        "most_over": str(most),
        "most_over_ratio": f"{simulated[most] / logged[most]:.1f}",
    }


def study(log: str) -> list[dict]:
    """One log's rows: its heaviest held-out user's plateau; for HPC2N also its site under each limit, both halves."""
    from torus_sim.experiments.calibrate import replay_waits, score_part, split_log

    blank = dict.fromkeys(FIELDS, "")
    heaviest = processor_seconds_left(log)
    rows = [{**blank, "log": log, "replay": "logged schedule", **heaviest}]
    if log != "HPC2N":
        return rows
    site = _site(log)
    _, first_test_id, split_day = split_log(site, 0.5)[:3]
    past = starts_past(log, first_test_id, [limit for limit in LIMITS if limit is not None])
    for limit in LIMITS:
        waits, by_day = replay_waits(site.replace(max_node_seconds_per_user=limit))
        for part, chosen, days in (
            ("train", waits["job_id"] < first_test_id, (0, split_day - 1)),
            ("test", waits["job_id"] >= first_test_id, (split_day, None)),
        ):
            score = score_part(waits[chosen], by_day, *days)
            label = "site as written" if limit is None else f"site, {limit / 1e6:.1f} million processor-seconds"
            scores = {name: value for name, value in _row(log, label, part, score).items() if name in FIELDS}
            rows.append(
                {
                    **blank,
                    **scores,
                    "replay": label,
                    "starts_past": str(past[limit][0]) if limit is not None and part == "train" else "",
                    "users_past": str(past[limit][1]) if limit is not None and part == "train" else "",
                    **(waiting_by_user(log, waits[chosen], int(heaviest["user"])) if part == "test" else {}),
                }
            )
    return rows


def table(rows: list[dict]) -> str:
    """The page's two tables: each log's heaviest held-out user's plateau; HPC2N's site under each limit."""
    lines = [
        "| log | heaviest user of the held-out half | fortnights | the fortnights' largest processor-seconds left: the "
        "most common (within 1%) | fortnights at it |",
        "|---|---|---|---|---|",
    ]
    for row in rows:
        if row["replay"] == "logged schedule":
            lines.append(
                f"| {row['log']} | {row['user']} | {row['fortnights']} | {float(row['plateau']):,.0f} | "
                f"{float(row['at_plateau']):.0%} |"
            )
    lines += [
        "",
        "| replay | part | KS of the waits | mean wait (s), simulated / logged | error | within 1 h | mean abs. daily "
        "utilization difference | the first half's starts past the limit (users) | held out, simulated / logged "
        "waiting: the heaviest user's, the others', the user held longest past its own |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        if row["replay"] != "logged schedule":
            part = "held out" if row["part"] == "test" else "first half"
            lines.append(
                f"| {row['replay']} | {part} | {row['ks']} | {int(row['mean_wait']):,} / {int(row['logged_mean_wait']):,} "
                f"| {float(row['mean_error']):+.1%} | {float(row['within_hour']):.1%} | {row['daily_utilization_error']} | "
                + (f"{int(row['starts_past']):,} ({row['users_past']}) |" if row["starts_past"] else " |")
                + (
                    f" {row['heaviest_ratio']}, {row['others_ratio']}, user {row['most_over']} {row['most_over_ratio']} |"
                    if row["heaviest_ratio"]
                    else " |"
                )
            )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(replay_study(sys.argv[1:], "node_seconds.csv", FIELDS, LOGS, study, table))
