"""Dependency-preserving replay: each log's site replayed with its users' dependencies kept, judged on the held-out half.

    python docs/validation/dependencies.py                  # every log: writes dependencies.csv, prints the page's table
    python docs/validation/dependencies.py --log CTC-SP2    # one log (its rows replaced in dependencies.csv)
    python docs/validation/dependencies.py --check          # exit 1 when a number differs (about 45 minutes; 6 with kept studies)

For each log under the data mirror with a site file in ``experiments/sites/`` (the calibrated settings of
docs/validation/real_machine.md; RICC's is its textbook set-up): the site replayed as written, then with
``dependencies`` of 600, 1,200 and 3,600 s (a job submitted within that think time of the logged end of its user's
job that ended last before it is submitted that think time after that job's end in the replay). The site's other
settings were fitted without dependencies: these rows show what the behaviour moves. Then ``torus-sim calibrate``'s
fit made with dependencies of 1,200 s kept (the settings and trials of real_machine.py, on the first half; studies
kept in the temporary folder's ``torus-sim-dependencies``: a second run resumes them). Each
replay is judged on the held-out half as the page's table is, with one more figure: the share of held-out jobs whose
simulated start is within an hour of the logged start. Without dependencies it is the "within 1 h" of the waits; with
them a dependent job's wait counts from its new submission, and the two part.

References:
    Zakay, Feitelson, "Preserving user behavior characteristics in trace-based simulation of parallel job
    scheduling", MASCOTS 2014; Zilber, Amit, Talby, "What is worth learning from parallel workloads? A user and
    session based analysis", ICS 2005 (the 20-minute session break).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from real_machine import replay_study  # beside this script (python puts the script's folder first on the path)

HERE = Path(__file__).resolve().parent
SITES = HERE.parents[1] / "experiments" / "sites"
LOGS = ("CTC-SP2", "SDSC-SP2", "HPC2N", "RICC")
BOUNDS = (600.0, 1200.0, 3600.0)
"""The longest think times kept as dependencies, seconds."""
FIT_WITHIN = 1200.0
"""The dependencies the fit is made with, seconds (the conventional 20-minute session break)."""
FIELDS = (
    "log",
    "site",
    "dependencies",
    "dependent_share",
    "ks",
    "mean_error",
    "within_hour",
    "start_within_hour",
    "daily_utilization_error",
)


def study(log: str) -> list[dict]:
    """One log's rows: the site as written without and with each bound, then a fit made with dependencies kept."""
    from real_machine import GIVEN
    from real_machine import LOGS as TRIALS

    from torus_sim import Scenario
    from torus_sim.experiments.calibrate import calibrate, split_log
    from torus_sim.experiments.experiment import load_experiment
    from torus_sim.inputs.datasets import fetch
    from torus_sim.inputs.workload.logged import logged_schedule
    from torus_sim.inputs.workload.swf import read_swf

    site = load_experiment(SITES / f"{log}.toml").scenario({})
    _, first_test_id, split_day = split_log(site, 0.5)[:3]
    schedule = logged_schedule(read_swf(fetch(site.workload)))
    logged_start = dict(zip(schedule.job_id.tolist(), schedule.started_at.tolist(), strict=True))
    judged = (first_test_id, split_day, logged_start)
    rows = [_judged(log, "as written", site.replace(dependencies=bound), *judged) for bound in (None, *BOUNDS)]
    base = Scenario(
        workload=f"pwa:{log}", platform="cluster", failures="none", policy="FCFS-EASY", dependencies=FIT_WITHIN,
        **GIVEN.get(log, {}),
    )  # fmt: skip
    folder = Path(tempfile.gettempdir()) / "torus-sim-dependencies" / log
    fitted = calibrate(base, folder, train=0.5, trials=TRIALS[log], seed=0).fitted
    rows.append(_judged(log, "fitted with dependencies", base.replace(**fitted), *judged))
    return rows


def _judged(log: str, label: str, scenario, first_test_id: int, split_day: int, logged_start: dict) -> dict:
    """One whole-log replay judged on the held-out half: the page's figures and the starts within an hour."""
    from torus_sim import against_log, run
    from torus_sim.experiments.calibrate import score_part

    result = run(scenario)
    comparison = against_log(result)
    waits = comparison.waits
    held_out = waits[waits["job_id"] >= first_test_id]
    score = score_part(held_out, comparison.by_day, split_day, None)
    starts = result.jobs.set_index("job_id")["first_started_at"].loc[held_out["job_id"]]
    apart = (starts - starts.index.map(logged_start)).abs()
    dependent = result.summary.get("dependent_submissions", 0) / max(len(result.jobs), 1)
    return {
        "log": log,
        "site": label,
        "dependencies": f"{scenario.dependencies or 0:g}",
        "dependent_share": f"{dependent:.3f}",
        "ks": f"{score.ks:.3f}",
        "mean_error": f"{score.mean_error:.3f}",
        "within_hour": f"{score.within_hour:.3f}",
        "start_within_hour": f"{float((apart <= 3600.0).mean()):.3f}",
        "daily_utilization_error": f"{score.daily_utilization_error:.3f}",
    }


def table(rows: list[dict]) -> str:
    """The page's table: per log, the site as written and each bound, then the fit made with dependencies."""
    lines = [
        "| log | site | dependencies (longest think time) | jobs submitted after a job's end | KS of the waits | mean-wait error "
        "| waits within 1 h | starts within 1 h | daily utilization |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        bound = "none" if row["dependencies"] == "0" else f"{float(row['dependencies']):,.0f} s"
        lines.append(
            f"| {row['log']} | {row['site']} | {bound} | {float(row['dependent_share']):.1%} | {row['ks']} | "
            f"{float(row['mean_error']):+.1%} | {float(row['within_hour']):.1%} | {float(row['start_within_hour']):.1%} | "
            f"{row['daily_utilization_error']} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(replay_study(sys.argv[1:], "dependencies.csv", FIELDS, LOGS, study, table))
