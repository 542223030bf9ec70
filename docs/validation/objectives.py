"""The calibration's three objectives: each log fitted for the waits, for the four aims and for the sizes, judged on the held-out half.

    python docs/validation/objectives.py                  # every log: writes objectives.csv, prints the page's table
    python docs/validation/objectives.py --log CTC-SP2    # one log (its rows replaced in objectives.csv)
    python docs/validation/objectives.py --check          # exit 1 when a number differs (about 19 minutes resuming kept studies)
    python docs/validation/objectives.py --backlog        # how full each machine ran while jobs waited: log and site replay

For each log: its site (``experiments/sites/LOG.toml``: real_machine.py's fit for the default objective, the waits:
KS distance + 0.5 x |mean-wait error|) replayed whole and scored on each half (its figures must be real_machine.csv's
calibrated rows); then ``torus-sim calibrate --objective aims``
(:func:`torus_sim.experiments.calibrate.aims_objective`: the shortfall from the four aims, each figure relative to its
aim, the first half's daily utilization and share within an hour included) and ``--objective sizes``
(:func:`torus_sim.experiments.calibrate.sizes_objective`: the KS distance + 0.5 x the share of the logged waiting
misplaced between size classes), each with real_machine.py's site as given, trials and sampler seed, on the first half;
each fit is judged on the held-out half as the page's table is, with its waiting misplaced between size classes
(:func:`torus_sim.experiments.calibrate.misplaced_waiting`). Studies are kept in the temporary folder's
``torus-sim-objectives``: a second run resumes them. The table gives each row's shortfall from the aims.
"""

from __future__ import annotations

import csv
import sys
import tempfile
from pathlib import Path

from real_machine import replay_study, settings_text  # beside this script (python puts the script's folder first on the path)

HERE = Path(__file__).resolve().parent
LOGS = ("CTC-SP2", "SDSC-SP2", "HPC2N", "RICC")
FIELDS = (
    "log",
    "objective",
    "part",
    "ks",
    "mean_error",
    "within_hour",
    "daily_utilization_error",
    "misplaced_waiting",
    "settings",
)
FIGURES = ("ks", "mean_error", "within_hour", "daily_utilization_error")
"""The figures the aims judge (the shortfall's), in FIELDS' order."""
OBJECTIVES = ("aims", "sizes")
"""The objectives fitted here, beside the default one (``waits``, whose fits are the sites and real_machine.csv's)."""


def study(log: str) -> list[dict]:
    """One log's rows: its site (the fit for the waits) replayed, and the fits for the aims and for the sizes.

    Each on the first half and on the held-out half, with the fit's settings. The site's rows must hold
    real_machine.csv's calibrated figures (it is that fit): a difference stops the script.
    """
    from real_machine import GIVEN
    from real_machine import LOGS as TRIALS

    from torus_sim import Scenario
    from torus_sim.experiments.calibrate import calibrate

    base = Scenario(workload=f"pwa:{log}", platform="cluster", failures="none", policy="FCFS-EASY", **GIVEN.get(log, {}))
    rows = _site_rows(log, base)
    folder = Path(tempfile.gettempdir()) / "torus-sim-objectives" / log
    for objective in OBJECTIVES:
        calibration = calibrate(base, folder, train=0.5, trials=TRIALS[log], seed=0, objective_name=objective)
        settings = settings_text(calibration.fitted)
        scores = calibration.scores["calibrated"]
        rows += [_row(log, objective, part, scores[part], settings if part == "test" else "") for part in ("train", "test")]
    return rows


def _site_rows(log: str, base) -> list[dict]:
    """The fit for the waits: the log's site file replayed whole and scored on each half as a calibration judges it."""
    from torus_sim.experiments.calibrate import replay_waits, score_part, split_log
    from torus_sim.experiments.experiment import load_experiment

    site = load_experiment(HERE.parents[1] / "experiments" / "sites" / f"{log}.toml").scenario({})
    cut = split_log(base, 0.5)
    waits, by_day = replay_waits(site)
    first, rest = waits[waits["job_id"] < cut.first_test_id], waits[waits["job_id"] >= cut.first_test_id]
    scores = {"train": score_part(first, by_day, 0, cut.split_day - 1), "test": score_part(rest, by_day, cut.split_day, None)}
    rows = [_row(log, "waits", part, scores[part]) for part in ("train", "test")]
    with open(HERE / "real_machine.csv", newline="") as handle:
        committed = [row for row in csv.DictReader(handle) if row["log"] == log and row["site"] == "calibrated"]
    for row, was in zip(rows, committed, strict=True):
        if any(row[name] != was[name] for name in FIGURES):
            raise SystemExit(f"{log}'s site replayed gives {row}, real_machine.csv's calibrated rows {was}")
    return rows


def _row(log: str, objective: str, part: str, score, settings: str = "") -> dict:
    return {
        "log": log,
        "objective": objective,
        "part": part,
        "ks": f"{score.ks:.3f}",
        "mean_error": f"{score.mean_error:.3f}",
        "within_hour": f"{score.within_hour:.3f}",
        "daily_utilization_error": f"{score.daily_utilization_error:.3f}",
        "misplaced_waiting": f"{score.misplaced_waiting:.3f}",
        "settings": settings,
    }


def _shortfall(row: dict) -> float:
    """A row's shortfall from the aims (:func:`~torus_sim.experiments.calibrate.aims_objective`), from its rounded figures."""
    from torus_sim.experiments.calibrate import PartScore, aims_objective

    ks, error, within, daily = (float(row[name]) for name in FIGURES)
    return aims_objective(PartScore(0, ks, 0.0, 0.0, error, 0.0, 0.0, within, daily))


def table(rows: list[dict]) -> str:
    """The page's table: per log and part, the fits for the waits (the sites), for the aims and for the sizes."""
    lines = [
        "| log | objective | part | KS of the waits | mean-wait error | within 1 h | daily utilization | waiting misplaced "
        "between size classes | shortfall from the aims |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for log in dict.fromkeys(row["log"] for row in rows):
        for part in ("train", "test"):
            for row in rows:
                if row["log"] == log and row["part"] == part:
                    lines.append(
                        f"| {log} | {row['objective']} | {'held out' if part == 'test' else 'fitted on'} | {row['ks']} | "
                        f"{float(row['mean_error']):+.1%} | {float(row['within_hour']):.1%} | "
                        f"{row['daily_utilization_error']} | {row.get('misplaced_waiting') or ''} | {_shortfall(row):.3f} |"
                    )
    return "\n".join(lines)


STEP = 600.0
"""The backlog figures' time step, seconds."""
BACKLOG = 5
"""Jobs waiting, in both the log and the replay, for a step to count as one with a backlog."""


def backlog_busy(log: str) -> dict:
    """How full the machine ran while jobs waited: the log against its site's replay (``--backlog``).

    The site (``experiments/sites/LOG.toml``) replays the whole log; the logged schedule of the same jobs (their logged
    start and run time) is set beside the replay's. Every :data:`STEP` seconds from the fifth day on: the processors
    busy and the jobs waiting in each. Returns the mean busy share over the steps with at least :data:`BACKLOG` jobs
    waiting in both, and the same by weekday hour (the log's time zone), log and replay; and over the held-out half's
    jobs, the share the log started at once (a logged wait under a minute), the share the replay did, the share both
    did and the share both would if the two were independent (the product).
    """
    import numpy as np
    import pandas as pd

    from torus_sim import run
    from torus_sim.experiments.calibrate import split_log
    from torus_sim.experiments.experiment import load_experiment
    from torus_sim.inputs.datasets import fetch
    from torus_sim.inputs.workload.logged import logged_schedule
    from torus_sim.inputs.workload.swf import read_swf

    site = load_experiment(HERE.parents[1] / "experiments" / "sites" / f"{log}.toml").scenario({})
    result = run(site)
    jobs = result.jobs.set_index("job_id")
    schedule = logged_schedule(read_swf(fetch(site.workload)))
    logged = pd.DataFrame(
        {"start": schedule.started_at, "end": schedule.started_at + schedule.run_time}, index=schedule.job_id
    ).reindex(jobs.index)
    placed = logged["start"].notna().to_numpy()
    jobs, logged = jobs[placed], logged[placed]
    end = max(float(logged["end"].max()), float(jobs["finished_at"].max()))
    grid = np.arange(5 * 86400.0, end, STEP)

    size = jobs["size"].to_numpy(float)
    capacity = float(schedule.machine)  # the header's MaxProcs: the site's cluster
    submitted = jobs["submitted_at"].to_numpy(float)
    ones = np.ones(len(jobs))
    busy_log = _sweep(grid, logged["start"], logged["end"], size) / capacity
    busy_replay = _sweep(grid, jobs["started_at"], jobs["finished_at"], size) / capacity
    waiting = np.minimum(_sweep(grid, submitted, logged["start"], ones), _sweep(grid, submitted, jobs["started_at"], ones))
    backlog = waiting >= BACKLOG
    clock = pd.to_datetime(schedule.unix_start_time + grid, unit="s", utc=True).tz_convert(schedule.time_zone)
    frame = pd.DataFrame({"hour": clock.hour, "weekday": clock.dayofweek < 5, "log": busy_log, "replay": busy_replay})
    frame = frame[backlog]
    held_out = jobs.index >= split_log(site, 0.5).first_test_id
    at_once_log = (logged["start"] - jobs["submitted_at"])[held_out] < 60.0
    at_once_replay = (jobs["started_at"] - jobs["submitted_at"])[held_out] < 60.0
    return {
        "at_once": {
            "log": float(at_once_log.mean()),
            "replay": float(at_once_replay.mean()),
            "both": float((at_once_log & at_once_replay).mean()),
            "independent": float(at_once_log.mean() * at_once_replay.mean()),
        },
        "log": float(frame["log"].mean()),
        "replay": float(frame["replay"].mean()),
        "steps": int(backlog.sum()),
        "weekday_hours": frame[frame["weekday"]].groupby("hour")[["log", "replay"]].mean(),
    }


def _sweep(grid, starts, ends, weights):
    """The sum of ``weights`` of the intervals [start, end) holding each time of ``grid`` (a sorted array)."""
    import numpy as np

    change = np.zeros(len(grid) + 1)
    np.add.at(change, np.searchsorted(grid, starts, side="left"), weights)
    np.add.at(change, np.searchsorted(grid, ends, side="left"), -weights)
    return np.cumsum(change)[:-1]


def print_backlogs(logs) -> None:
    """``--backlog``: each log's :func:`backlog_busy`, and CTC-SP2's weekday hours."""
    for log in logs:
        busy = backlog_busy(log)
        print(f"{log}: {busy['steps']:,} steps with a backlog: busy {busy['log']:.3f} logged, {busy['replay']:.3f} replayed")
        print(busy["weekday_hours"].round(3).T.to_string())
        at_once = busy["at_once"]
        print(
            f"  held out, started at once (under a minute): logged {at_once['log']:.3f}, replayed {at_once['replay']:.3f}, "
            f"both {at_once['both']:.3f} (independent: {at_once['independent']:.3f})"
        )


if __name__ == "__main__":
    if "--backlog" in sys.argv:
        print_backlogs([sys.argv[sys.argv.index("--log") + 1]] if "--log" in sys.argv else LOGS)
        sys.exit(0)
    sys.exit(replay_study(sys.argv[1:], "objectives.csv", FIELDS, LOGS, study, table))
