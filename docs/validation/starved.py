"""Starved spans as lost capacity: each log's textbook replay, site and fit with the spans its schedule shows.

    python docs/validation/starved.py                  # every log: writes starved.csv, prints the page's table
    python docs/validation/starved.py --log CTC-SP2    # one log (its rows replaced in starved.csv)
    python docs/validation/starved.py --check          # exit 1 when a number differs (about 5 minutes resuming kept studies)

For each log: the spans of its logged schedule in which its oldest waiting job fitted the idle processors yet waited
(an hour or more, at least 5% of the machine idle throughout: ``effective_size_starved = true``) and what they took,
in each half; then, scored on each half as the calibration splits them, the textbook replay (real_machine.py's site as
given) and the site as written (``experiments/sites/``), each without and with the spans; then ``torus-sim calibrate``
from the site as given with the spans, with real_machine.py's trials and sampler seed on the first half, judged on
the held-out half with the spans (which read the held-out half's logged schedule: the answer) and without them
(which read nothing of it). The spans come from the whole log, as the inferred maintenance windows do: a trial's
first-half jobs still waiting after the split see the held-out half's first spans. Studies are kept in the temporary
folder's ``torus-sim-starved`` and resumed.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from real_machine import FIELDS as SCORE_FIELDS
from real_machine import GIVEN, _row, replay_study, settings_text, site_of
from real_machine import LOGS as TRIALS

HERE = Path(__file__).resolve().parent
LOGS = tuple(TRIALS)
STARVED = {"effective_size_starved": True}
FIELDS = ("log", "replay", "spans", *SCORE_FIELDS[2:], "starved_spans", "span_share", "capacity_lost", "settings")


def lost(log: str, cut) -> dict:
    """Each half's starved spans: how many, their share of the half's time, and the processor-time they held out.

    Returns:
        ``{"train" | "test": (spans, share of the half's span, share of the machine's processor-seconds held out)}``; a
        span is counted in the half its start falls in. The halves' times: the first submission to the held-out half's
        first (split at ``cut``), from there to the last submission.
    """
    from torus_sim.inputs.datasets import fetch
    from torus_sim.inputs.workload.logged import SCHEDULE_FIELDS, logged_schedule, starved_spans
    from torus_sim.inputs.workload.swf import read_swf

    schedule = logged_schedule(read_swf(fetch(f"pwa:{log}"), fields=SCHEDULE_FIELDS))
    spans = starved_spans(schedule)
    split = float(schedule.submitted_at[schedule.job_id >= cut.first_test_id].min())
    bounds = {"train": (0.0, split), "test": (split, float(schedule.submitted_at.max()))}
    figures = {}
    for part, (start, end) in bounds.items():
        inside = spans[(spans[:, 0] >= start) & (spans[:, 0] < end)]
        length = inside[:, 1] - inside[:, 0]
        held = (length * (schedule.machine - inside[:, 2])).sum() / (schedule.machine * (end - start))
        figures[part] = (len(inside), length.sum() / (end - start), held)
    return figures


def study(log: str) -> list[dict]:
    """One log's rows: its textbook replay and site without and with the spans, and its fit with them, both halves."""
    from torus_sim import Scenario
    from torus_sim.experiments.calibrate import calibrate, replay_waits, score_parts, split_log

    base = Scenario(workload=f"pwa:{log}", platform="cluster", failures="none", policy="FCFS-EASY", **GIVEN.get(log, {}))
    cut = split_log(base, 0.5)
    spans = lost(log, cut)
    rows = []

    def scored(name: str, starved: str, scores: dict, settings: str = "") -> None:
        for part in ("train", "test"):
            row = _row(log, name, part, scores[part])
            count, share, held = spans[part]
            figures = starved != "none"
            rows.append(
                {
                    "log": log,
                    "replay": name,
                    "spans": starved,
                    **{key: row[key] for key in SCORE_FIELDS[2:]},
                    "starved_spans": str(count) if figures else "",
                    "span_share": f"{share:.3f}" if figures else "",
                    "capacity_lost": f"{held:.3f}" if figures else "",
                    "settings": settings if part == "test" else "",
                }
            )

    def replayed(scenario) -> dict:
        return score_parts(*replay_waits(scenario), cut)

    for name, scenario in (("as given", base), ("site", site_of(log))):
        scored(name, "none", replayed(scenario))
        scored(name, "each half's own", replayed(scenario.replace(**STARVED)))
    folder = Path(tempfile.gettempdir()) / "torus-sim-starved" / log
    calibration = calibrate(base.replace(**STARVED), folder, train=0.5, trials=TRIALS[log], seed=0)
    if not calibration.fitted:  # the site as given (with the spans) stood
        return rows + [
            dict(row, replay="fitted with the spans") for row in rows if row["replay"] == "as given" and row["spans"] != "none"
        ]
    settings = settings_text(calibration.fitted)
    scored("fitted with the spans", "each half's own", calibration.scores["calibrated"], settings)
    fitted = base.replace(**calibration.fitted)
    scored("fitted with the spans", "none", replayed(fitted.replace(effective_size_starved=None)))
    return rows


def table(rows: list[dict]) -> str:
    """The page's table: each replay without and with each half's spans, both halves; the spans' figures."""
    lines = [
        "| log | replay | starved spans | part | KS of the waits | mean wait (s), simulated / logged | error | within 1 h | "
        "mean abs. daily utilization difference | spans (share of the part's time, of its processor-time held out) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        part = "held out" if row["part"] == "test" else "fitted on"
        spans = (
            f"{row['starved_spans']} ({float(row['span_share']):.1%}, {float(row['capacity_lost']):.1%})"
            if row["starved_spans"] != ""
            else ""
        )
        lines.append(
            f"| {row['log']} | {row['replay']} | {row['spans']} | {part} | {row['ks']} | {int(row['mean_wait']):,} / "
            f"{int(row['logged_mean_wait']):,} | {float(row['mean_error']):+.1%} | {float(row['within_hour']):.1%} | "
            f"{row['daily_utilization_error']} | {spans} |"
        )
    fitted = [row for row in rows if row["settings"]]
    return "\n".join(lines + [""] + [f"- {row['log']}: `{row['settings']}`" for row in fitted])


if __name__ == "__main__":
    sys.exit(replay_study(sys.argv[1:], "starved.csv", FIELDS, LOGS, study, table))
