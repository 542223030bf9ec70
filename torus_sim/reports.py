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
}
"""Row labels and number formats of the printed summary."""


def format_summary(summary: dict) -> str:
    """The summary as an aligned two-column text table."""
    rows = [(label, fmt.format(summary[key])) for key, (label, fmt) in SUMMARY_LABELS.items() if key in summary]
    width = max(len(label) for label, _ in rows)
    return "\n".join(f"{label:<{width}}  {value:>18}" for label, value in rows)


def write_results(out_dir: str | Path, result) -> dict[str, Path]:
    """Write ``jobs.csv`` and ``summary.json`` into ``out_dir``.

    Args:
        out_dir: the folder (created if missing).
        result: a :class:`~torus_sim.runner.RunResult`.

    Returns:
        ``{"jobs": path, "summary": path}``.
    """
    out_dir = Path(out_dir)
    jobs_path = atomic_write(out_dir / "jobs.csv", lambda handle: result.jobs.to_csv(handle, index=False, float_format="%.17g"))
    summary_path = atomic_write(
        out_dir / "summary.json",
        lambda handle: handle.write(json.dumps(result.manifest(), indent=2, sort_keys=True, default=str) + "\n"),
    )
    return {"jobs": jobs_path, "summary": summary_path}
