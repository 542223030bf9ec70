"""A peer simulator's schedule read from its own output, and job-for-job agreement with ours.

CQSim (SPEAR-UIC/CQSim) writes one line per job to its ``.rst`` file:
``job id;processors;processors;requested time;run time;wait;submit;start;end`` (seconds; its clock is
shifted from the log's by a constant, so waits are compared, not start times).

References:
    ../shared/peers/cqsim/README.md (how the files were made); docs/validation (the agreement and the
    account of every difference).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from torus_sim.core.errors import InputFileError
from torus_sim.core.files import input_lines

__all__ = ["CQSIM_COLUMNS", "agreement", "read_cqsim_schedule"]

CQSIM_COLUMNS = (
    "job_id",
    "processors",
    "processors_used",
    "requested_time",
    "runtime",
    "wait",
    "submitted_at",
    "started_at",
    "finished_at",
)
"""The fields of a CQSim ``.rst`` line, in order."""


def read_cqsim_schedule(path: str | Path) -> pd.DataFrame:
    """CQSim's per-job output (``.rst``, plain or compressed) as a table.

    Args:
        path: the file.

    Returns:
        One row per job, the columns of :data:`CQSIM_COLUMNS` (job ids int, the rest float seconds or counts).

    Raises:
        FileNotFoundError: no such file.
        InputFileError: a line without 9 numeric fields separated by ``;`` (naming the file and line), or no line.
    """
    rows = []
    for number, line in enumerate(input_lines(path, "CQSim schedule"), start=1):
        text = line.strip()
        if not text:
            continue
        fields = text.split(";")
        try:
            if len(fields) != len(CQSIM_COLUMNS):
                raise ValueError(f"{len(fields)} fields")
            rows.append([int(fields[0]), *(float(value) for value in fields[1:])])
        except ValueError as error:
            raise InputFileError(path, f"line {number}: expected 9 numbers separated by ';' ({error}): {text[:80]!r}") from None
    if not rows:
        raise InputFileError(path, "no job line")
    return pd.DataFrame(rows, columns=list(CQSIM_COLUMNS))


def agreement(jobs: pd.DataFrame, peer: pd.DataFrame, gamma: float = 10.0) -> dict:
    """How far our schedule agrees with a peer's, job for job.

    Args:
        jobs: our per-job table (``jobs.csv``: ``job_id``, ``submitted_at``, ``first_started_at``, and
            ``runtime`` for our bounded slowdown: the peer's runtimes when absent).
        peer: the peer's table (:func:`read_cqsim_schedule`: ``job_id``, ``wait``, ``runtime``).
        gamma: Γ of the bounded slowdown, seconds (both sides computed alike: max(1, (wait + run) / max(run, Γ))).

    Returns:
        ``{"ours": n, "peer": n, "shared": n, "same_wait": n, "same_share": fraction of the shared jobs,
        "first_different": job id or None (the earliest submitted), "mean_wait": ours, "peer_mean_wait",
        "mean_bsld": ours, "peer_mean_bsld"}``, waits and slowdowns over the shared jobs.
    """
    theirs = peer[["job_id", "wait", "runtime"]].rename(columns={"wait": "peer_wait", "runtime": "peer_runtime"})
    merged = jobs.merge(theirs, on="job_id")
    ours_wait = (merged["first_started_at"] - merged["submitted_at"]).to_numpy()
    peer_wait = merged["peer_wait"].to_numpy()
    same = np.isclose(ours_wait, peer_wait, rtol=0.0, atol=1e-6)
    different = merged.loc[~same].sort_values(["submitted_at", "job_id"])

    def bsld(wait: np.ndarray, runtime: np.ndarray) -> float:
        return float(np.mean(np.maximum(1.0, (wait + runtime) / np.maximum(runtime, gamma)))) if len(wait) else float("nan")

    return {
        "ours": len(jobs),
        "peer": len(peer),
        "shared": len(merged),
        "same_wait": int(same.sum()),
        "same_share": float(same.mean()) if len(merged) else float("nan"),
        "first_different": int(different["job_id"].iloc[0]) if len(different) else None,
        "mean_wait": float(ours_wait.mean()) if len(merged) else float("nan"),
        "peer_mean_wait": float(peer_wait.mean()) if len(merged) else float("nan"),
        "mean_bsld": bsld(ours_wait, merged["runtime"].to_numpy() if "runtime" in merged else merged["peer_runtime"].to_numpy()),
        "peer_mean_bsld": bsld(peer_wait, merged["peer_runtime"].to_numpy()),
    }
