"""Can the calibration find settings it made itself? Each log relogged by its site, then calibrated as a real log is.

    python docs/validation/recovery.py                  # every log: writes recovery.csv, prints the page's table
    python docs/validation/recovery.py --log CTC-SP2    # one log (its rows replaced in recovery.csv)
    python docs/validation/recovery.py --check          # exit 1 when a number differs from recovery.csv

A real log's held-out figures mix two shortfalls: what the model cannot do (a behaviour the machine had and torus-sim
does not) and what the procedure cannot do (a fit of the first half that misses settings the model has, or that the
second half cannot tell apart). This separates them. For each log with a fitted site in ``experiments/sites/``
(CTC-SP2, SDSC-SP2, HPC2N): the site's settings are the truth, less those read from the log's own schedule (its
inferred maintenance windows and effective size: a relogged log's idle spans and peaks are the truth replay's, not
the machine's); the whole log is replayed with them, and the log is rewritten with each job's wait and run time as
that replay gave them (``--format relogged``: :func:`torus_sim.outputs.formats.swf_schedule.relogged_log`; every
other field as logged). The relogged log is then calibrated exactly as docs/validation/real_machine.py calibrates the
real one (FCFS-EASY on the log's processors as given, the first half fitted with the same trials and seed, SDSC-SP2
with its queues' tiers given) and judged on its held-out half: the model is right by construction, so what the fit
misses is the procedure's. Two more rows bound it: the truth replayed on the relogged log (the same schedule, to the
second) and the truth with every submit time moved by up to a second (input shaking,
docs/validation/shaking.py: how far the same settings part from themselves). Studies and relogged logs are kept in
the temporary folder (``torus-sim-recovery``): a second run resumes them.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

# beside this script (python puts the script's folder first on the path)
from real_machine import FIELDS, GIVEN, LOGS, _row, replay_study

HERE = Path(__file__).resolve().parent
SITES = HERE.parents[1] / "experiments" / "sites"
RECOVERED = ("CTC-SP2", "SDSC-SP2", "HPC2N")
"""The logs whose site has fitted settings (RICC's is its textbook set-up: nothing to recover)."""
OWN_SCHEDULE = {"maintenance": None, "maintenance_drain": None, "effective_size": None}
"""The site's settings read from the log's own schedule, left out of the truth."""
SHAKE_SEED = 1


def _relogged(truth, path: Path) -> None:
    """Replay ``truth`` over its whole log and write the log relogged by it to ``path`` (once: kept)."""
    from torus_sim import run
    from torus_sim.core.files import atomic_write
    from torus_sim.outputs.formats.swf_schedule import relogged_log

    if not path.exists():
        text = relogged_log(run(truth))
        atomic_write(path, lambda handle: handle.write(text))


def study(log: str) -> list[dict]:
    """One log's rows: the truth on its relogged log, shaken, and the textbook and calibrated replays; the settings."""
    from torus_sim import Scenario
    from torus_sim.experiments.calibrate import SHAKE_SECONDS, calibrate, replay_waits, score_part, split_log
    from torus_sim.experiments.experiment import load_experiment
    from torus_sim.interfaces.commands.calibrate import fitted_items

    site = load_experiment(SITES / f"{log}.toml").scenario({})
    truth = site.replace(**OWN_SCHEDULE)
    folder = Path(tempfile.gettempdir()) / "torus-sim-recovery" / log
    folder.mkdir(parents=True, exist_ok=True)
    relogged = folder / f"{log}-relogged.swf"
    _relogged(truth, relogged)
    given = {name: value for name, value in GIVEN.get(log, {}).items() if name not in OWN_SCHEDULE}
    base = Scenario(workload=str(relogged), platform="cluster", failures="none", policy="FCFS-EASY", **given)
    calibration = calibrate(base, folder, train=0.5, trials=LOGS[log], seed=0)
    split = split_log(base, 0.5)
    rows = []
    for label, scenario in (("truth", truth), ("truth, shaken by a second", truth.replace(shake=SHAKE_SECONDS, seed=SHAKE_SEED))):
        waits, by_day = replay_waits(scenario.replace(workload=str(relogged)))
        first, rest = waits[waits["job_id"] < split.first_test_id], waits[waits["job_id"] >= split.first_test_id]
        rows.append(_row(log, label, "train", score_part(first, by_day, 0, split.split_day - 1)))
        rows.append(_row(log, label, "test", score_part(rest, by_day, split.split_day, None)))
    for label, parts in calibration.scores.items():
        for part in ("train", "test"):
            rows.append(_row(log, label, part, parts[part]))
    for label, settings in (("truth settings", _fitted_of(truth, calibration.fitted)), ("fitted", calibration.fitted)):
        text = ";".join(
            f"{key}={value:.4g}" if isinstance(value, float) else f"{key}={value}"
            for key, value in sorted(fitted_items(settings).items())
            if value is not None  # a fitted choice of no windows: maintenance unset
        )
        rows.append({"log": log, "site": label, "part": text, **dict.fromkeys(FIELDS[3:], "")})
    return rows


def _fitted_of(truth, fitted: dict) -> dict:
    """The truth's values of the settings a calibration fits (the fitted ones' names, and the windows and reading)."""
    from torus_sim.experiments.calibrate import SPACE

    names = {*SPACE, *fitted, "priority_fairshare_by", "priority_weight_queue", "cancelled", "effective_size_share"}
    return {name: getattr(truth, name) for name in sorted(names) if hasattr(truth, name) and getattr(truth, name) is not None}


def table(rows: list[dict]) -> str:
    """The page's table: per log, each replay of the relogged log on the first and the held-out half."""
    lines = [
        "| log | replay of the relogged log | part | KS of the waits | mean wait (s), simulated / logged | error "
        "| within 1 h | mean abs. daily utilization difference |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        if not row["jobs"]:
            continue
        part = "fitted on" if row["part"] == "train" else "held out"
        lines.append(
            f"| {row['log']} | {row['site']} | {part} | {row['ks']} | {int(row['mean_wait']):,} / "
            f"{int(row['logged_mean_wait']):,} | {float(row['mean_error']):+.1%} | {float(row['within_hour']):.1%} | "
            f"{row['daily_utilization_error']} |"
        )
    settings = [f"- {row['log']}, {row['site']}: `{row['part']}`" for row in rows if not row["jobs"]]
    return "\n".join(lines) + "\n\n" + "\n".join(settings)


if __name__ == "__main__":
    sys.exit(replay_study(sys.argv[1:], "recovery.csv", FIELDS, RECOVERED, study, table))
