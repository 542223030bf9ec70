"""Writing a run's results: per-job CSV, summary JSON, and the printed summary table.

Every file is written with :func:`torus_sim.files.atomic_write`: it appears whole or not at all,
so an interrupted run never leaves a half-written result.
"""

from __future__ import annotations

import json
from pathlib import Path

from torus_sim.files import atomic_write

__all__ = ["SUMMARY_LABELS", "format_summary", "write_results"]

SUMMARY_LABELS = {
    "jobs": ("jobs completed", "{:,}"),
    "avg_wait_time": ("average wait time (s)", "{:,.1f}"),
    "avg_response_time": ("average response time (s)", "{:,.1f}"),
    "avg_bounded_slowdown": ("average bounded slowdown", "{:,.3f}"),
    "max_bounded_slowdown": ("maximum bounded slowdown", "{:,.1f}"),
    "makespan": ("span T (s)", "{:,.0f}"),
    "omega_util": ("capacity utilized ω_util", "{:.4f}"),
    "omega_unused": ("capacity unused ω_unused", "{:.4f}"),
    "omega_lost": ("capacity lost ω_lost", "{:.4f}"),
    "failures": ("failures", "{:,}"),
    "job_kills": ("job kills", "{:,}"),
    "jobs_killed": ("jobs killed at least once", "{:,}"),
    "lost_work": ("work lost (supernode-s)", "{:,.0f}"),
    "migrations": ("job migrations", "{:,}"),
    "repacks": ("repacks (migration rounds)", "{:,}"),
    "preventive_checkpoints": ("preventive checkpoints", "{:,}"),
    "preventive_migrations": ("preventive migrations", "{:,}"),
    "preventive_migrations_failed": ("preventive migrations impossible", "{:,}"),
    "mbs": ("MBS (PV-EASY Eq. 1)", "{:,.3f}"),
    "mwbs": ("MWBS (PV-EASY Eq. 2)", "{:,.3f}"),
    "wasted_load": ("wasted load", "{:.4f}"),
    "preemptions": ("preemptions", "{:,}"),
    "blocked_jobs": ("blocked jobs (head once)", "{:,}"),
    "delayed_jobs": ("delayed by lower-priority jobs", "{:,}"),
    "violations": ("reservation violations", "{:,}"),
    "silent_errors": ("silent errors detected", "{:,}"),
    "scenarios": ("failure scenarios", "{:,}"),
    "mean_makespan": ("mean makespan (s)", "{:,.1f}"),
    "mean_lower_bound": ("mean lower bound (s)", "{:,.1f}"),
    "mean_ratio": ("mean makespan / lower bound", "{:.4f}"),
    "max_ratio": ("max makespan / lower bound", "{:.4f}"),
}
"""Row labels and number formats of the printed summary."""


def format_summary(summary: dict) -> str:
    """The summary as an aligned two-column text table."""
    rows = [(label, fmt.format(summary[key])) for key, (label, fmt) in SUMMARY_LABELS.items() if key in summary]
    width = max(len(label) for label, _ in rows)
    return "\n".join(f"{label:<{width}}  {value:>18}" for label, value in rows)


def write_results(out_dir: str | Path, result) -> dict[str, Path]:
    """Write ``jobs.csv`` and ``summary.json`` (and ``scenarios.csv`` for a batch) into ``out_dir``.

    Every file is rendered in memory first, so a failure while rendering writes nothing.

    Args:
        out_dir: the folder (created if missing).
        result: a :class:`~torus_sim.runner.RunResult`.

    Returns:
        ``{"jobs": path, "summary": path[, "scenarios": path]}``.
    """
    out_dir = Path(out_dir)
    texts = {
        "jobs.csv": result.jobs.to_csv(index=False, float_format="%.17g"),
        "summary.json": json.dumps(result.manifest(), indent=2, sort_keys=True, default=str) + "\n",
    }
    if not result.scenarios.empty:
        texts["scenarios.csv"] = result.scenarios.to_csv(index=False, float_format="%.17g")
    return {
        name.split(".")[0]: atomic_write(out_dir / name, lambda handle, text=text: handle.write(text))
        for name, text in texts.items()
    }
