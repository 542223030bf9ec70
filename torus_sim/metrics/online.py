"""PV-EASY's metrics: MBS, MWBS, load, waste, preemptions, strict fairness and reservation violations.

They read the run's record only (never the engine): the per-job table and, for fairness and
violations, the per-pass table with the head's columns (:data:`torus_sim.engine.record.FAIRNESS_COLUMNS`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from torus_sim.metrics.readings import DEFAULT_FAIRNESS_READING, FAIRNESS_READINGS

__all__ = [
    "DEFAULT_FAIRNESS_READING",
    "FAIRNESS_READINGS",
    "SIZE_FRACTIONS",
    "bounded_slowdown",
    "fairness_table",
    "job_table",
    "online_summary",
    "size_group_table",
]

THRESHOLD = 10.0
"""Bounded-slowdown threshold, seconds (PV-EASY Eq. 1)."""


def bounded_slowdown(wait: np.ndarray, runtime: np.ndarray, threshold: float = THRESHOLD) -> np.ndarray:
    """(wait + max(runtime, Γ)) / max(runtime, Γ), PV-EASY Eq. 1 (arrays of seconds)."""
    floor = np.maximum(runtime, threshold)
    return (wait + floor) / floor


def fairness_table(passes: pd.DataFrame, reading: str = DEFAULT_FAIRNESS_READING) -> pd.DataFrame:
    """Per blocked job: its fair start and the reservation a backfill violated, under one reading.

    PV-EASY does not print how Tables 1-2 count; the two readings that fit its text:

    * ``backfilled``: the jobs that delay a blocked job are those EASY backfilled past it
      while it was the first waiting job, i.e. against its reservation (§3.1, "a job can be backfilled
      if it would not delay the [...] reservation of the first blocked job"; Fig. 1c). A job is
      blocked when it was the first waiting job with another job waiting behind it or backfilled past
      it (a reservation that constrained a backfill). Its reservation is violated when, at a pass at
      or after it, the job is still waiting and would fit without the jobs backfilled past it that
      were predicted, at their start, to end by it: the underestimated backfilled jobs of §3.2 (the
      "benign" case of higher-priority jobs running past their predictions is not counted).
    * ``shadow``: every running job of lower priority than the blocked job counts (the shadow load of
      §4.1, which SLP preempts); a job is blocked when it was ever the first waiting job; its
      reservation is violated when the lower-priority jobs hold the nodes it needs at or after it.

    Args:
        passes: the record's pass table with :data:`torus_sim.engine.record.FAIRNESS_COLUMNS`, in time order: a
            DataFrame, or any mapping of column names to arrays (a record's snapshot reads each when asked).
        reading: ``backfilled`` or ``shadow``.

    Returns:
        Indexed by the id of every blocked job: ``fair_start_at`` (the first pass after which it was
        the head and would have fit without those jobs; NaN if never) and ``violated_at`` (the
        reservation it held as head before the first pass that found it violated; NaN if never).

    Raises:
        ValueError: an unknown reading.

    References:
        PV-EASY §3.1 (strict fairness, Table 1), §3.2 (reservation violation, Fig. 1, Table 2), §4.1.
    """
    if reading not in FAIRNESS_READINGS:
        raise ValueError(f"unknown fairness reading {reading!r}; expected one of {', '.join(FAIRNESS_READINGS)}")

    # column by column over the whole pass table (a copy of its head rows cost 54 MiB on RICC-2010-2's 448k jobs)
    def column(name: str) -> np.ndarray:
        return np.asarray(passes[name])

    head = column("head_job")
    time = column("time")
    heads = head >= 0
    if reading == "shadow":
        ready = column("head_ready").astype(bool)
        blocked_rows, violation = heads, ready
    else:
        blocked_rows = heads & ((column("queued_jobs") > 1) | (column("head_passed") > 0))
        ready = column("head_ready_backfilled").astype(bool)
        violation = column("head_ready_underestimated").astype(bool)
    blocked = pd.Index(pd.unique(head[blocked_rows]))  # in order of first appearance
    del blocked_rows
    fair = _first_per_job(head, time, heads & ready)
    promised = column("previous_reservation_at")
    with np.errstate(invalid="ignore"):
        late = heads & violation & (head == column("previous_head")) & ~np.isnan(promised) & (time >= promised)
    violated = _first_per_job(head, promised, late)
    return pd.DataFrame({"fair_start_at": fair.reindex(blocked), "violated_at": violated.reindex(blocked)})


def _first_per_job(head: np.ndarray, values: np.ndarray, rows: np.ndarray) -> pd.Series:
    """Per head job (ascending ids), ``values`` at the first of ``rows`` (bool, in pass order) where it is the head."""
    where = np.flatnonzero(rows)
    ids, first = np.unique(head[where], return_index=True)
    return pd.Series(values[where[first]], index=ids)


def job_table(jobs: pd.DataFrame, passes=None, reading: str = DEFAULT_FAIRNESS_READING, presorted: bool = False) -> pd.DataFrame:
    """One row per job of a replay, in submission order, with PV-EASY's columns.

    Args:
        jobs: the record's job table.
        passes: the record's pass table with the head's columns (fairness columns are NaN / False
            without it): a DataFrame or a mapping of column names to arrays (see :func:`fairness_table`).
        reading: the fairness reading (:func:`fairness_table`).
        presorted: ``jobs`` is in submission order already (by ``submitted_at``, then ``job_id``) with a
            RangeIndex, and is a frame of its own (the columns are added to it, no copy is made).

    Returns:
        The job columns plus ``blocked`` (once the blocked head), ``fair_start_at``, ``violated_at``,
        ``wait`` (finish - submit - runtime, seconds) and ``bounded_slowdown`` (Eq. 1, Γ = 10 s).
    """
    frame = jobs.sort_values(["submitted_at", "job_id"], kind="stable", ignore_index=True) if not presorted else jobs
    if passes is not None and "head_job" in passes:
        fairness = fairness_table(passes, reading)
        frame["blocked"] = frame["job_id"].isin(fairness.index)
        frame["fair_start_at"] = frame["job_id"].map(fairness["fair_start_at"]).astype(float)
        frame["violated_at"] = frame["job_id"].map(fairness["violated_at"]).astype(float)
    else:
        frame["blocked"] = False
        frame["fair_start_at"] = np.nan
        frame["violated_at"] = np.nan
    frame["wait"] = frame.finished_at - frame.submitted_at - frame.runtime
    frame["bounded_slowdown"] = bounded_slowdown(frame.wait.to_numpy(), frame.runtime.to_numpy())
    return frame


def online_summary(table: pd.DataFrame, processors: int, min_delay: float = 0.0) -> dict:
    """The summary metrics of a replay.

    Args:
        table: the replay's :func:`job_table`.
        processors: P.
        min_delay: a delay (Table 1) or delay from the reservation (Table 2) counts only above this,
            seconds (0: every positive delay and every violation found).

    Returns:
        dict with ``mbs``, ``mwbs`` (Eq. 1-2, Γ = 10 s); ``mean_wait`` (s); ``total_load`` and
        ``wasted_load`` (fractions of P x (last end - first submission), Table 4's definition;
        waste is running time beyond each job's runtime: lost work and overheads); ``useful_load``;
        ``preempted_jobs``, ``preempted_rate``, ``mkt`` (mean preemptions of a preempted job),
        ``mean_rtw`` (Eq. 3 over preempted jobs); ``blocked_jobs``, ``delayed_jobs`` (blocked jobs
        that could have started earlier but for lower-priority jobs, under the table's fairness
        reading: strict-fairness violations), ``mean_delay_min``, ``max_delay_h``; ``violations``
        (jobs whose reservation was violated by backfilled lower-priority jobs), ``mean_dtr_min``, ``max_dtr_h``, ``mean_si``, ``max_si``,
        ``violation_mean_parallelism``.

    References:
        PV-EASY §5.1 (Eq. 1-2), Tables 1, 2, 4, 5 and Eq. 3.
    """
    weights = table["size"].to_numpy(dtype=float)
    span = table.finished_at.max() - table.submitted_at.min()
    capacity = processors * span if span > 0 else np.nan
    used = float((table["size"] * table.time_sum).sum())
    useful = float((table["size"] * table.runtime).sum())
    preempted = table[table.preemptions > 0]
    rtw = (preempted.time_sum - preempted.runtime) / preempted.runtime.where(preempted.runtime > 0)
    blocked = table[table.blocked]
    delay = (blocked.first_started_at - blocked.fair_start_at).where(blocked.fair_start_at.notna())
    delayed = delay[delay > min_delay]
    violated = table[table.violated_at.notna()]
    if min_delay > 0:
        violated = violated[violated.first_started_at - violated.violated_at > min_delay]
    dtr = violated.first_started_at - violated.violated_at
    promised = bounded_slowdown((violated.violated_at - violated.submitted_at).to_numpy() + 0.0, violated.runtime.to_numpy())
    actual = bounded_slowdown((violated.first_started_at - violated.submitted_at).to_numpy() + 0.0, violated.runtime.to_numpy())
    si = actual - promised
    return {
        "jobs": len(table),
        "mbs": float(table.bounded_slowdown.mean()),
        "mwbs": float(np.average(table.bounded_slowdown, weights=weights)),
        "mean_wait": float(table.wait.mean()),
        "makespan": float(table.finished_at.max()),
        "total_load": float(used / capacity),
        "useful_load": float(useful / capacity),
        "wasted_load": float((used - useful) / capacity),
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
        "violation_mean_parallelism": float(violated["size"].mean()) if len(violated) else 0.0,
    }


SIZE_FRACTIONS = (1 / 32, 1 / 16, 1 / 8, 1 / 4, 1 / 2, 1)
"""Upper bounds of the job-size groups as fractions of P (Figs. 2-3; above P/4 is PV-EASY's "big" job)."""


def size_group_table(table: pd.DataFrame, processors: int, fractions=SIZE_FRACTIONS, blocked_only: bool = True) -> pd.DataFrame:
    """MBS and MWBS per job-size group (PV-EASY Figs. 2-3: blocked jobs grouped by parallelism).

    Args:
        table: a replay's :func:`job_table`.
        processors: P.
        fractions: group upper bounds as fractions of P (a job of p processors is in the first
            group with p <= fraction x P).
        blocked_only: keep only jobs that were once the blocked head (as the paper's figures).

    Returns:
        Columns size_group (label), jobs, mbs, mwbs.
    """
    if blocked_only:
        table = table[table.blocked]
    rows = []
    low = 0.0
    labels = {1 / 32: "P/32", 1 / 16: "P/16", 1 / 8: "P/8", 1 / 4: "P/4", 1 / 2: "P/2", 1: "P"}
    previous = "0"
    for fraction in fractions:
        high = fraction * processors
        part = table[(table["size"] > low) & (table["size"] <= high)]
        label = labels.get(fraction, f"{fraction:g}P")
        rows.append(
            {
                "size_group": f"({previous}, {label}]",
                "jobs": len(part),
                "mbs": float(part.bounded_slowdown.mean()) if len(part) else np.nan,
                "mwbs": float(np.average(part.bounded_slowdown, weights=part["size"])) if len(part) else np.nan,
            }
        )
        low, previous = high, label
    return pd.DataFrame(rows)
