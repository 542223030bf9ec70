"""A second sampler path: each log fitted again as the page's table fits it, with another seed of the sampler.

    python docs/validation/seeds.py                  # every log: writes seeds.csv, prints the page's table
    python docs/validation/seeds.py --log HPC2N      # one log (its rows replaced in seeds.csv)
    python docs/validation/seeds.py --check          # exit 1 when a number differs (about 3 minutes resuming kept studies)

For CTC-SP2, SDSC-SP2 and HPC2N: ``torus-sim calibrate`` from real_machine.py's site as given, with its trials, on the
first half, with the sampler seeded at 1 instead of 0 (the page's fits), judged on the held-out half as the page's
table is. The table sets each beside the page's fit (real_machine.csv's calibrated rows, read, not made again). Then
the calibration with three sampler paths (``starts = 3``: seeded at 0, 1 and 2, each with the page's trials), whose
best first half is its fit, and each path's best first-half objective. RICC is left out: its textbook replay stood
(its trials take four times as long). Studies are kept in the temporary folder's ``torus-sim-seeds`` and resumed.
"""

from __future__ import annotations

import csv
import sys
import tempfile
from pathlib import Path

from real_machine import FIELDS as SCORE_FIELDS  # beside this script (python puts the script's folder first on the path)
from real_machine import _row, replay_study, settings_text

HERE = Path(__file__).resolve().parent
LOGS = ("CTC-SP2", "SDSC-SP2", "HPC2N")
SEED = 1
"""The sampler's seed of the second path (the page's fits: 0)."""
STARTS = 3
"""The sampler paths of the several-path calibration (seeded at 0, 1, 2)."""
FIELDS = ("log", "seed", *SCORE_FIELDS[2:], "objective", "settings", "paths")


def study(log: str) -> list[dict]:
    """One log's rows: its fit with the sampler seeded at :data:`SEED`, both halves, with the first part's objective."""
    from real_machine import GIVEN
    from real_machine import LOGS as TRIALS

    from torus_sim import Scenario
    from torus_sim.experiments.calibrate import calibrate

    base = Scenario(workload=f"pwa:{log}", platform="cluster", failures="none", policy="FCFS-EASY", **GIVEN.get(log, {}))
    folder = Path(tempfile.gettempdir()) / "torus-sim-seeds"
    rows = []
    for seed, calibration in (
        (str(SEED), calibrate(base, folder / log, train=0.5, trials=TRIALS[log], seed=SEED)),
        ("best of 0, 1, 2", calibrate(base, folder / f"{log}-paths", train=0.5, trials=TRIALS[log], seed=0, starts=STARTS)),
    ):
        settings = settings_text(calibration.fitted)
        paths = ";".join(f"{each['seed']}:{each['best']:.4f}" for each in calibration.starts)
        for part in ("train", "test"):
            row = _row(log, "calibrated", part, calibration.scores["calibrated"][part])
            rows.append(
                {
                    "log": log,
                    "seed": seed,
                    **{key: row[key] for key in SCORE_FIELDS[2:]},
                    "objective": f"{calibration.train_objective:.4f}" if part == "train" else "",
                    "settings": settings if part == "test" else "",
                    "paths": paths if part == "train" else "",
                }
            )
    return rows


def table(rows: list[dict]) -> str:
    """The page's table: each log's fit with seed 0 (real_machine.csv's calibrated rows) and with :data:`SEED`."""
    with open(HERE / "real_machine.csv", newline="") as handle:
        page = [row for row in csv.DictReader(handle) if row["site"] == "calibrated" and row["log"] in LOGS]
    lines = [
        "| log | sampler seed | part | KS of the waits | mean wait (s), simulated / logged | error | within 1 h | mean abs. daily "
        "utilization difference |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for log in LOGS:
        for seed, chosen in (
            ("0 (the table above)", [row for row in page if row["log"] == log]),
            (str(SEED), [row for row in rows if row["log"] == log and row["seed"] == str(SEED)]),
            ("0, 1, 2: the best first half", [row for row in rows if row["log"] == log and row["seed"] != str(SEED)]),
        ):
            for row in chosen:
                part = "held out" if row["part"] == "test" else "fitted on"
                lines.append(
                    f"| {log} | {seed} | {part} | {row['ks']} | {int(row['mean_wait']):,} / {int(row['logged_mean_wait']):,} | "
                    f"{float(row['mean_error']):+.1%} | {float(row['within_hour']):.1%} | {row['daily_utilization_error']} |"
                )
    fitted = [row for row in rows if row["settings"]]
    paths = [
        f"- {row['log']}, each path's best first-half objective (seed: objective): {row['paths']}"
        for row in rows
        if row.get("paths")
    ]
    settings = [
        f"- {row['log']}, {'seed ' + row['seed'] if row['seed'] == str(SEED) else 'the best of seeds 0, 1, 2'}: `{row['settings']}`"
        for row in fitted
    ]
    return "\n".join(lines + [""] + settings + [""] + paths)


if __name__ == "__main__":
    sys.exit(replay_study(sys.argv[1:], "seeds.csv", FIELDS, LOGS, study, table))
