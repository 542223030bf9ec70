"""Metrics of an online replay: MBS, MWBS, load, waste, preemptions, fairness and reservation violations.

They read the job records only (never the engine).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["SIZE_FRACTIONS", "bounded_slowdown", "job_table", "online_summary", "size_group_table"]

THRESHOLD = 10.0
"""Bounded-slowdown threshold, seconds (PV-EASY Eq. 1)."""


def bounded_slowdown(wait: np.ndarray, runtime: np.ndarray, threshold: float = THRESHOLD) -> np.ndarray:
    """(wait + max(runtime, Γ)) / max(runtime, Γ), PV-EASY Eq. 1 (arrays of seconds)."""
    floor = np.maximum(runtime, threshold)
    return (wait + floor) / floor


def job_table(jobs) -> pd.DataFrame:
    """One row per job of a replay.

    Columns: submit, first start, end, runtime, requested time, prediction, processors, preemptions,
    time_sum, blocked, fair_start_at, violated_at, wait, bounded slowdown (seconds; NaN when not
    applicable).
    """
    frame = pd.DataFrame(
        {
            "job_id": [job.job_id for job in jobs],
            "submitted_at": [job.submitted_at for job in jobs],
            "first_start_at": [job.first_start_at for job in jobs],
            "end_at": [job.end_at for job in jobs],
            "runtime": [job.runtime for job in jobs],
            "requested_time": [job.requested_time for job in jobs],
            "prediction": [job.prediction for job in jobs],
            "processors": [job.processors for job in jobs],
            "preemptions": [job.preemptions for job in jobs],
            "time_sum": [job.time_sum for job in jobs],
            "blocked": [job.blocked for job in jobs],
            "fair_start_at": [np.nan if job.fair_start_at is None else job.fair_start_at for job in jobs],
            "violated_at": [np.nan if job.violated_at is None else job.violated_at for job in jobs],
        }
    )
    frame["wait"] = frame.end_at - frame.submitted_at - frame.runtime
    frame["bounded_slowdown"] = bounded_slowdown(frame.wait.to_numpy(), frame.runtime.to_numpy())
    return frame


def online_summary(jobs, processors: int) -> dict:
    """The summary metrics of a replay.

    Args:
        jobs: the finished jobs.
        processors: P.

    Returns:
        dict with ``mbs``, ``mwbs`` (Eq. 1-2, Γ = 10 s); ``mean_wait`` (s); ``total_load`` and
        ``wasted_load`` (fractions of P x (last end - first submission), Table 4's definition;
        waste is running time beyond each job's runtime: lost work and overheads); ``useful_load``;
        ``preempted_jobs``, ``preempted_rate``, ``mkt`` (mean preemptions of a preempted job),
        ``mean_rtw`` (Eq. 3 over preempted jobs); ``blocked_jobs``, ``delayed_jobs`` (blocked jobs
        that could have started earlier but for lower-priority jobs: strict-fairness violations),
        ``mean_delay_min``, ``max_delay_h``; ``violations`` (jobs whose reservation was violated by
        backfilled lower-priority jobs), ``mean_dtr_min``, ``max_dtr_h``, ``mean_si``, ``max_si``,
        ``violation_mean_parallelism``.

    References:
        PV-EASY §5.1 (Eq. 1-2), Tables 1, 2, 4, 5 and Eq. 3.
    """
    table = job_table(jobs)
    weights = table.processors.to_numpy(dtype=float)
    span = table.end_at.max() - table.submitted_at.min()
    capacity = processors * span if span > 0 else np.nan
    used = float((table.processors * table.time_sum).sum())
    useful = float((table.processors * table.runtime).sum())
    preempted = table[table.preemptions > 0]
    rtw = (preempted.time_sum - preempted.runtime) / preempted.runtime.where(preempted.runtime > 0)
    blocked = table[table.blocked]
    delay = (blocked.first_start_at - blocked.fair_start_at).where(blocked.fair_start_at.notna())
    delayed = delay[delay > 0]
    violated = table[table.violated_at.notna()]
    dtr = violated.first_start_at - violated.violated_at
    promised = bounded_slowdown((violated.violated_at - violated.submitted_at).to_numpy() + 0.0, violated.runtime.to_numpy())
    actual = bounded_slowdown((violated.first_start_at - violated.submitted_at).to_numpy() + 0.0, violated.runtime.to_numpy())
    si = actual - promised
    return {
        "jobs": len(table),
        "mbs": float(table.bounded_slowdown.mean()),
        "mwbs": float(np.average(table.bounded_slowdown, weights=weights)),
        "mean_wait": float(table.wait.mean()),
        "makespan": float(table.end_at.max()),
        "total_load": used / capacity,
        "useful_load": useful / capacity,
        "wasted_load": (used - useful) / capacity,
        "preempted_jobs": len(preempted),
        "preempted_rate": len(preempted) / len(table),
        "mkt": float(preempted.preemptions.mean()) if len(preempted) else 0.0,
        "mean_rtw": float(rtw.mean()) if len(preempted) else 0.0,
        "blocked_jobs": len(blocked),
        "delayed_jobs": len(delayed),
        "mean_delay_min": float(delayed.mean() / 60) if len(delayed) else 0.0,
        "max_delay_h": float(delayed.max() / 3600) if len(delayed) else 0.0,
        "violations": len(violated),
        "mean_dtr_min": float(dtr.mean() / 60) if len(violated) else 0.0,
        "max_dtr_h": float(dtr.max() / 3600) if len(violated) else 0.0,
        "mean_si": float(si.mean()) if len(violated) else 0.0,
        "max_si": float(si.max()) if len(violated) else 0.0,
        "violation_mean_parallelism": float(violated.processors.mean()) if len(violated) else 0.0,
    }


SIZE_FRACTIONS = (1 / 32, 1 / 16, 1 / 8, 1 / 4, 1 / 2, 1)
"""Upper bounds of the job-size groups as fractions of P (Figs. 2-3; above P/4 is PV-EASY's "big" job)."""


def size_group_table(jobs, processors: int, fractions=SIZE_FRACTIONS, blocked_only: bool = True) -> pd.DataFrame:
    """MBS and MWBS per job-size group (PV-EASY Figs. 2-3: blocked jobs grouped by parallelism).

    Args:
        jobs: finished jobs, or their :func:`job_table`.
        processors: P.
        fractions: group upper bounds as fractions of P (a job of p processors is in the first
            group with p <= fraction x P).
        blocked_only: keep only jobs that were once the blocked head (as the paper's figures).

    Returns:
        Columns size_group (label), jobs, mbs, mwbs.
    """
    table = jobs if isinstance(jobs, pd.DataFrame) else job_table(jobs)
    if blocked_only:
        table = table[table.blocked]
    rows = []
    low = 0.0
    labels = {1 / 32: "P/32", 1 / 16: "P/16", 1 / 8: "P/8", 1 / 4: "P/4", 1 / 2: "P/2", 1: "P"}
    previous = "0"
    for fraction in fractions:
        high = fraction * processors
        part = table[(table.processors > low) & (table.processors <= high)]
        label = labels.get(fraction, f"{fraction:g}P")
        rows.append(
            {
                "size_group": f"({previous}, {label}]",
                "jobs": len(part),
                "mbs": float(part.bounded_slowdown.mean()) if len(part) else np.nan,
                "mwbs": float(np.average(part.bounded_slowdown, weights=part.processors)) if len(part) else np.nan,
            }
        )
        low, previous = high, label
    return pd.DataFrame(rows)
