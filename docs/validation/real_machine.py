"""The machine as it ran: each log's production settings fitted on its first half, judged on its second half.

    python docs/validation/real_machine.py                 # every log: writes real_machine.csv, prints the page's table
    python docs/validation/real_machine.py --log CTC-SP2   # one log (its rows replaced in real_machine.csv)
    python docs/validation/real_machine.py --check         # exit 1 when a number differs from real_machine.csv
    python docs/validation/real_machine.py --failed        # CTC-SP2's failed lines (status 0), run and skipped

For each log: ``torus-sim calibrate`` (:func:`torus_sim.experiments.calibrate.calibrate`) fits the scheduling
cycle, the per-user job limit, Slurm's multifactor priority (age, fair share by user or by group, size; the queue
factor where the site gives its queues' tiers) and whether the log's idle spans are maintenance windows (none,
outages or drained) on the log's first half
(in submission order; the second half is never read by a trial), with Optuna's TPE sampler seeded at 0 and
the trials :data:`LOGS` gives; the whole log is then replayed with the site as given (FCFS-EASY on the log's own
processors, the textbook loop) and with the fitted settings, and each is judged on the held-out half. The ablation
replays the calibrated site with one behaviour turned off at a time. Studies are kept in the temporary folder
(``torus-sim-real-machine``): a second run resumes them. After a change that moves any schedule, remove that folder
first: the calibration refuses a study whose first trial, replayed again, scores otherwise.
"""

from __future__ import annotations

import csv
import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
LOGS = {"CTC-SP2": 60, "SDSC-SP2": 60, "HPC2N": 40, "RICC": 30}
"""Each log and its trials (HPC2N's trials are as long as CTC-SP2's, RICC's four times: fewer)."""
FIELDS = (
    "log",
    "site",
    "part",
    "jobs",
    "ks",
    "mean_wait",
    "logged_mean_wait",
    "mean_error",
    "within_hour",
    "daily_utilization_error",
)
OFF = {
    "no cycle": {"sched_min_interval": None},
    "no per-user limit": {"max_jobs_per_user": None},
    "no priority (FCFS)": {
        "priority_weight_age": None,
        "priority_weight_fairshare": None,
        "priority_weight_job_size": None,
        "priority_weight_queue": None,
    },
    "no queue factor": {"priority_weight_queue": None},
    "fair share by user": {"priority_fairshare_by": "user"},
    "no maintenance windows": {"maintenance": None, "maintenance_drain": None},
    "whole machine": {"effective_size_share": None},
    "cancelled lines run": {"cancelled": "run"},
}
"""The ablation: the calibrated site with one behaviour off (left out where the fit did not use it)."""

UNSET = {"cancelled": "run"}
"""What a setting the fit did not draw is (a fitted site without ``cancelled`` runs its cancelled lines)."""

GIVEN = {"SDSC-SP2": {"priority_queue_tiers": "0:5,1:5,2:4,3:3,4:2,5:1", "effective_size": "inferred"}}
"""What a site gives besides the textbook set-up: SDSC-SP2's queues in its header's order (interactive and express
first, then high, normal, low, standby; No_Class last), whose queue factor's weight is fitted, and its effective size
inferred from its log (115 of its 128 processors for its first seven 30-day periods, all in the first half: the
held-out half runs on the whole machine)."""


def study(log: str, write_site: bool = False) -> list[dict]:
    """One log: fit, judge, ablate; the rows of real_machine.csv and the fitted settings (row ``site`` = ``fitted``)."""
    from torus_sim import Scenario
    from torus_sim.experiments.calibrate import calibrate, replay_waits, score_part, split_log

    base = Scenario(workload=f"pwa:{log}", platform="cluster", failures="none", policy="FCFS-EASY", **GIVEN.get(log, {}))
    folder = Path(tempfile.gettempdir()) / "torus-sim-real-machine" / log
    calibration = calibrate(base, folder, train=0.5, trials=LOGS[log], seed=0)
    rows = []
    for site, parts in calibration.scores.items():
        for part in ("train", "test"):  # the held-out jobs by users seen and new: new_users.py
            rows.append(_row(log, site, part, parts[part]))
    _, first_test_id, split_day = split_log(base, 0.5)[:3]
    for name, off in OFF.items() if calibration.fitted else ():  # nothing fitted: nothing to turn off
        if all(calibration.fitted.get(setting, UNSET.get(setting)) == value for setting, value in off.items()):
            continue
        waits, by_day = replay_waits(base.replace(**{**calibration.fitted, **off}))
        rows.append(_row(log, name, "test", score_part(waits[waits["job_id"] >= first_test_id], by_day, split_day, None)))
    if write_site:
        (HERE.parents[1] / "experiments" / "sites" / f"{log}.toml").write_text(site_file(log, calibration.fitted, LOGS[log]))
    fitted = settings_text(calibration.fitted)
    rows.append({"log": log, "site": "fitted", "part": fitted, **dict.fromkeys(FIELDS[3:], "")})
    return rows


FACTS = {
    "CTC-SP2": (
        "Cornell Theory Center IBM SP2 (1996-97). Header: MaxNodes 338 (the batch partition of 512 nodes), MaxProcs 338;",
        '"uses the EASY scheduler" (Note); queues "are actually LoadLeveler classes" (DSI, astro, piofs, informix).',
    ),
    "SDSC-SP2": (
        "San Diego Supercomputer Center IBM SP2 (1998-2000). Header: MaxNodes / MaxProcs 128; seven queues (interactive,",
        "express, high, normal, low, standby, No_Class). The header names no scheduler (LoadLeveler ran the SP2s).",
        "Given, not fitted: the queues' tiers in the header's order and the effective size inferred from the log (115 of",
        "its 128 processors for its first seven 30-day periods).",
    ),
    "HPC2N": (
        'HPC2N\'s Linux cluster Seth, Umea (2002-06). Header: MaxNodes / MaxProcs 240; "uses MAUI scheduler" (Note); one',
        "queue, partitions DEFAULT and ALL. Its heaviest users' running jobs plateau at 60-62 (a per-user cap).",
    ),
    "RICC": (
        "RIKEN Integrated Cluster of Clusters (May-September 2010). Header: MaxNodes 1024, MaxProcs 8192; two queues,",
        "one partition. The header names no scheduler; 16,245 of its lines are cancelled (status 5).",
    ),
}
"""What each log's header and the archive's notes say of its machine (the site file's comment)."""


def site_file(log: str, fitted: dict, trials: int) -> str:
    """A log's site file: the header's facts as comments, the textbook set-up, the fitted sections."""
    from torus_sim.interfaces.commands.calibrate import section_lines

    lines = [f"# {line}" for line in FACTS[log]]
    if fitted:
        lines.append("# The settings below the [policy] section are fitted, not logged: by docs/validation/real_machine.py")
    else:
        lines.append("# Nothing is fitted: by docs/validation/real_machine.py, no trial did better than this textbook set-up")
    lines += [
        f"# (torus-sim calibrate: the first half of the log, {trials} trials, Optuna's TPE seeded at 0); see",
        "# docs/validation/real_machine.md for how they do on the held-out half.",
        f'title = "{log}: FCFS-EASY on its own processors with its fitted production settings"'
        if fitted
        else f'title = "{log}: FCFS-EASY on its own processors (no fitted setting did better on the first half)"',
        f'reference = "Parallel Workloads Archive, the {log} log\'s header; docs/validation/real_machine.md"',
        "",
        "[workload]",
        f'workload = "pwa:{log}"',
        *([f"cancelled = {json.dumps(fitted['cancelled'])}   # fitted"] if fitted.get("cancelled") is not None else []),
        "",
        "[platform]",
        'platform = "cluster"   # the header\'s MaxProcs',
        "",
        "[failures]",
        'failures = "none"',
        "",
        "[policy]",
        'policy = "FCFS-EASY"',
    ]
    lines += section_lines(fitted, skip=("workload",), written=("policy",))  # the workload's written above
    return "\n".join(lines) + "\n"


def site_of(log: str):
    """``experiments/sites/LOG.toml`` as a :class:`~torus_sim.experiments.scenario.Scenario`: the log's site as written."""
    from torus_sim.experiments.experiment import load_experiment

    return load_experiment(HERE.parents[1] / "experiments" / "sites" / f"{log}.toml").scenario({})


def settings_text(fitted: dict) -> str:
    """Fitted settings as the pages' one-line text, ``name=value;...`` (floats to 4 significant digits, the site file's names)."""
    from torus_sim.interfaces.commands.calibrate import fitted_items

    return ";".join(
        f"{key}={value:.4g}" if isinstance(value, float) else f"{key}={value}" for key, value in fitted_items(fitted).items()
    )


def _row(log: str, site: str, part: str, score) -> dict:
    return {
        "log": log,
        "site": site,
        "part": part,
        "jobs": str(score.jobs),
        "ks": f"{score.ks:.3f}",
        "mean_wait": f"{score.mean_wait:.0f}",
        "logged_mean_wait": f"{score.logged_mean_wait:.0f}",
        "mean_error": f"{score.mean_error:.3f}",
        "within_hour": f"{score.within_hour:.3f}",
        "daily_utilization_error": ""
        if score.daily_utilization_error != score.daily_utilization_error
        else f"{score.daily_utilization_error:.3f}",
    }


def table(rows: list[dict]) -> str:
    """The page's table: the held-out half of each log, as given, calibrated and ablated; the first half for reference."""
    lines = [
        "| log | site | part | KS of the waits | mean wait (s), simulated / logged | error | within 1 h | mean abs. daily utilization difference |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        if row["site"] == "fitted":
            continue
        part = "held out" if row["part"] == "test" else "fitted on"
        error = float(row["mean_error"])
        lines.append(
            f"| {row['log']} | {row['site']} | {part} | {row['ks']} | {int(row['mean_wait']):,} / {int(row['logged_mean_wait']):,} | "
            f"{error:+.1%} | {float(row['within_hour']):.1%} | {row['daily_utilization_error']} |"
        )
    return "\n".join(lines)


def kept_rows(path: Path, fields: tuple[str, ...], logs: list[str], order: list[str], made: list[dict], check: bool):
    """The rows just made against the committed CSV (``check``), or merged into it and written.

    Returns:
        With ``check``: ``(1, [])`` where they differ (the differences printed), ``(0, [])`` where identical.
        Without: ``(0, every row)``, the made logs' rows replacing theirs in the file, written. The file is read after
        the rows are made: two logs run side by side each replace only their own rows.
    """
    committed = []
    if path.exists():
        with path.open(newline="") as handle:
            committed = list(csv.DictReader(handle))
    if check:
        old = [row for row in committed if row["log"] in logs]
        differing = [f"{path.name}: {new} != {was}" for new, was in zip(made, old, strict=False) if new != was]
        if differing or len(old) != len(made):
            print("\n".join(differing) or f"{path.name}: {len(old)} rows committed, {len(made)} made")
            return 1, []
        print(f"{path.name}: identical ({len(made)} rows)")
        return 0, []
    rows = [row for row in committed if row["log"] not in logs] + made
    rows.sort(key=lambda row: order.index(row["log"]))
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    return 0, rows


def replay_study(argv: list[str], name: str, fields: tuple[str, ...], logs: tuple[str, ...], study, table) -> int:
    """A page script's command line (``--log LOG``, ``--check``): its logs' rows made, kept or compared, the table printed.

    Each log's rows come from ``study(log)``; they replace that log's rows in ``name`` (beside this script; the other
    logs' rows as committed), or with ``--check`` are compared with them (the exit status: 1 when one differs). The
    page's ``table(rows)`` is printed after a write.
    """
    chosen = [argv[argv.index("--log") + 1]] if "--log" in argv else list(logs)
    made = [row for log in chosen for row in study(log)]
    code, rows = kept_rows(HERE / name, fields, chosen, list(logs), made, "--check" in argv)
    if "--check" in argv:
        return code
    print(table(rows))
    return 0


def failed_lines(log: str = "CTC-SP2") -> None:
    """``--failed``: a log's failed lines (SWF status 0) and its textbook replay and site with them run and skipped.

    Prints the failed lines' count and share of the lines, the share that ran at least their requested time and the
    median of how far past it, their share of the logged processor-seconds; then each replay's figures on each half
    (the halves of the log with its failed lines run: the same held-out jobs, less the skipped ones) and its objective.
    """
    import numpy as np

    from torus_sim import Scenario
    from torus_sim.experiments.calibrate import objective, replay_waits, score_parts, split_log
    from torus_sim.inputs.datasets import fetch
    from torus_sim.inputs.workload.swf import read_swf

    trace = read_swf(fetch(f"pwa:{log}"))
    status, run_time = np.asarray(trace.column("status")), np.asarray(trace.column("run_time"), dtype=float)
    requested = np.asarray(trace.column("requested_time"), dtype=float)
    processors = np.asarray(trace.column("allocated_processors"), dtype=float)
    failed = status == 0
    over = failed & (requested > 0) & (run_time >= requested)
    work = np.maximum(run_time, 0) * np.maximum(processors, 0)
    print(
        f"{log}: {int(failed.sum()):,} failed lines ({failed.mean():.1%}); {over.sum() / failed.sum():.1%} ran at least "
        f"their requested time (a median of {np.median((run_time - requested)[over]):.0f} s past it); "
        f"{work[failed].sum() / work.sum():.1%} of the logged processor-seconds"
    )
    base = Scenario(workload=f"pwa:{log}", platform="cluster", failures="none", policy="FCFS-EASY", **GIVEN.get(log, {}))
    cut = split_log(base, 0.5)
    site = site_of(log)
    for name, scenario in (("textbook", base), ("site", site)):
        for reading in ("run", "skip"):
            scores = score_parts(*replay_waits(scenario.replace(failed=reading)), cut)
            for part, score in (("first half", scores["train"]), ("held out", scores["test"])):
                print(
                    f"  {name}, failed lines {reading}: {part}: {score.jobs:,} jobs, KS {score.ks:.3f}, mean wait "
                    f"{score.mean_wait:,.0f} / {score.logged_mean_wait:,.0f} s ({score.mean_error:+.1%}), within 1 h "
                    f"{score.within_hour:.1%}, daily {score.daily_utilization_error:.3f}, objective {objective(score):.3f}"
                )


def main(argv: list[str]) -> int:
    if "--failed" in argv:
        failed_lines()
        return 0
    logs = [argv[argv.index("--log") + 1]] if "--log" in argv else list(LOGS)
    made = [row for log in logs for row in study(log, write_site="--check" not in argv)]
    code, rows = kept_rows(HERE / "real_machine.csv", FIELDS, logs, list(LOGS), made, "--check" in argv)
    if "--check" in argv:
        return code
    print(table(rows))
    for row in rows:
        if row["site"] == "fitted":
            print(f"{row['log']}: {row['part']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
