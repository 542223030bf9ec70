"""PV-EASY's metrics: MBS, MWBS, load, waste, preemptions, strict fairness and reservation violations.

They read the run's record only (never the engine): the per-job table and, for fairness and
violations, the per-pass table with the head's columns (:data:`torus_sim.engine.record.FAIRNESS_COLUMNS`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from torus_sim.metrics.pieces import PIECE_ROWS, means_by_pieces, pairwise_sums, pieces_of
from torus_sim.metrics.readings import DEFAULT_FAIRNESS_READING, FAIRNESS_READINGS

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "DEFAULT_FAIRNESS_READING",
    "FAIRNESS_READINGS",
    "SIZE_FRACTIONS",
    "bounded_slowdown",
    "fairness_columns",
    "fairness_of_blocked",
    "fairness_of_jobs",
    "fairness_table",
    "job_columns",
    "job_table",
    "online_summary",
    "series_mean",
    "size_group_table",
]

THRESHOLD = 10.0
"""Bounded-slowdown threshold, seconds (PV-EASY Eq. 1)."""


def bounded_slowdown(wait: np.ndarray, runtime: np.ndarray, threshold: float = THRESHOLD) -> np.ndarray:
    """(wait + max(runtime, Γ)) / max(runtime, Γ), PV-EASY Eq. 1 (arrays of seconds)."""
    floor = np.maximum(runtime, threshold)
    return (wait + floor) / floor


def fairness_table(passes, reading: str = DEFAULT_FAIRNESS_READING) -> pd.DataFrame:
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
    import pandas as pd

    blocked, fair, violated = fairness_columns(passes, reading)
    return pd.DataFrame({"fair_start_at": fair, "violated_at": violated}, index=pd.Index(blocked))


def fairness_columns(passes, reading: str = DEFAULT_FAIRNESS_READING) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`fairness_table` as three numpy columns (no DataFrame).

    Returns:
        The blocked jobs' ids (int64, in order of first appearance as the blocked head), their ``fair_start_at``
        and ``violated_at`` (float64 seconds, NaN: never).

    Raises:
        ValueError: an unknown reading.
    """
    if reading not in FAIRNESS_READINGS:
        raise ValueError(f"unknown fairness reading {reading!r}; expected one of {', '.join(FAIRNESS_READINGS)}")

    # the pass table a piece at a time (its whole columns were ~50 bytes a job: 0.5 GB for a 10-million-job log); each
    # piece's first rows per job, kept in pass order, give the whole table's first rows per job
    rows, read = pieces_of(passes, "time")
    blocked_parts, fair_parts, violated_parts = [], [], []
    for start in range(0, rows, PIECE_ROWS):

        def column(name: str, start: int = start) -> np.ndarray:
            return np.asarray(read(name, start, start + PIECE_ROWS))

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
        ids, first = np.unique(head[blocked_rows], return_index=True)
        blocked_parts.append((ids, np.flatnonzero(blocked_rows)[first] + start))
        fair_parts.append(_first_per_job(head, time, heads & ready))
        promised = column("previous_reservation_at")
        with np.errstate(invalid="ignore"):
            late = heads & violation & (head == column("previous_head")) & ~np.isnan(promised) & (time >= promised)
        violated_parts.append(_first_per_job(head, promised, late))
    ids, first = _earliest(blocked_parts)
    blocked = ids[np.argsort(first)]  # in order of first appearance (pandas.unique's order)
    fair = _lookup(*_earliest(fair_parts), blocked)
    violated = _lookup(*_earliest(violated_parts), blocked)
    return blocked, fair, violated


def _earliest(parts: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """Per id (ascending), the value of the earliest part that has it: ``parts`` are ``(ids, values)`` in pass order."""
    if not parts:
        return np.empty(0, dtype=np.int64), np.empty(0)
    ids = np.concatenate([part[0] for part in parts])
    values = np.concatenate([part[1] for part in parts])
    unique, first = np.unique(ids, return_index=True)  # the first occurrence: the earliest part's
    return unique, values[first]


def _first_per_job(head: np.ndarray, values: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per head job (ascending ids), ``values`` at the first of ``rows`` (bool, in pass order) where it is the head."""
    where = np.flatnonzero(rows)
    ids, first = np.unique(head[where], return_index=True)
    return ids, values[where[first]]


def _lookup(ids: np.ndarray, values: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """``values`` (float64) of ``ids`` (ascending, unique) at each of ``keys``; NaN for a key not among them."""
    found = np.full(len(keys), np.nan)
    if len(ids) and len(keys):
        position = np.minimum(np.searchsorted(ids, keys), len(ids) - 1)
        hit = ids[position] == keys
        found[hit] = values[position[hit]]
    return found


def job_table(jobs: pd.DataFrame, passes=None, reading: str = DEFAULT_FAIRNESS_READING) -> pd.DataFrame:
    """One row per job of a replay, in submission order, with PV-EASY's columns.

    Args:
        jobs: the record's job table.
        passes: the record's pass table with the head's columns (fairness columns are NaN / False
            without it): a DataFrame or a mapping of column names to arrays (see :func:`fairness_table`).
        reading: the fairness reading (:func:`fairness_table`).

    Returns:
        The job columns plus ``blocked`` (once the blocked head), ``fair_start_at``, ``violated_at``,
        ``wait`` (finish - submit - runtime, seconds) and ``bounded_slowdown`` (Eq. 1, Γ = 10 s).
    """
    frame = jobs.sort_values(["submitted_at", "job_id"], kind="stable", ignore_index=True)
    for name, values in job_columns({name: frame[name].to_numpy() for name in _READ}, passes, reading).items():
        if name not in _READ:
            frame[name] = values
    return frame


_READ = ("job_id", "submitted_at", "finished_at", "runtime")
"""The job columns :func:`job_columns` reads."""


def job_columns(jobs: dict, passes=None, reading: str = DEFAULT_FAIRNESS_READING) -> dict[str, np.ndarray]:
    """:func:`job_table`'s columns as numpy arrays, for jobs already in submission order (then job id).

    Args:
        jobs: column name -> array in submission order (``job_id``, ``submitted_at``, ``finished_at``, ``runtime``
            at least; what :func:`online_summary` reads besides: ``first_started_at``, ``size``, ``time_sum``,
            ``preemptions``).
        passes: as :func:`job_table`'s.
        reading: the fairness reading.

    Returns:
        ``jobs`` with ``blocked`` (bool), ``fair_start_at``, ``violated_at``, ``wait`` (seconds) and
        ``bounded_slowdown`` (float64, shape ``(n,)``) added: a new dict, the same arrays.

    Raises:
        ValueError: an unknown fairness reading.

    References:
        PV-EASY §5.1 (Eq. 1), §3.1-3.2 (strict fairness, reservation violations).
    """
    job_id = np.asarray(jobs["job_id"])
    columns = dict(jobs)
    heads = fairness_of_blocked(passes, reading)
    columns["blocked"], columns["fair_start_at"], columns["violated_at"] = fairness_of_jobs(job_id, heads)
    runtime = np.asarray(jobs["runtime"])
    columns["wait"] = np.asarray(jobs["finished_at"]) - np.asarray(jobs["submitted_at"]) - runtime
    columns["bounded_slowdown"] = bounded_slowdown(columns["wait"], runtime)
    return columns


def fairness_of_blocked(passes, reading: str = DEFAULT_FAIRNESS_READING) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The blocked jobs' ids (ascending) with their fair start and violation times (:func:`fairness_columns`).

    Args:
        passes: the pass record (a mapping of its columns), or None.
        reading: the fairness reading.

    Returns:
        ``(ids, fair_start_at, violated_at)``, shape ``(b,)`` each, sorted by id; None when ``passes`` is None or
        has no ``head_job`` column (fairness not recorded).

    References:
        PV-EASY §3.1-3.2.
    """
    if passes is None or "head_job" not in passes:
        return None
    blocked, fair, violated = fairness_columns(passes, reading)
    order = np.argsort(blocked, kind="stable")
    return blocked[order], fair[order], violated[order]


def fairness_of_jobs(job_id: np.ndarray, heads) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per job of ``job_id`` (shape ``(n,)``): blocked (bool), fair start and violation time (float, NaN: none).

    Args:
        job_id: the jobs' ids, int ``(n,)``.
        heads: :func:`fairness_of_blocked`'s result, or None (no job blocked: every time NaN).
    """
    if heads is None:
        return np.zeros(len(job_id), dtype=bool), np.full(len(job_id), np.nan), np.full(len(job_id), np.nan)
    ids, fair, violated = heads
    return np.isin(job_id, ids), _lookup(ids, fair, job_id), _lookup(ids, violated, job_id)


def online_summary(table, processors: int, min_delay: float = 0.0) -> dict:
    """The summary metrics of a replay.

    Args:
        table: the replay's :func:`job_table`, or its columns (:func:`job_columns`: a mapping of names to arrays).
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

    Means are pandas' (``Series.mean``: NaN left out, the others summed pairwise by numpy), computed on numpy
    arrays: a summary needs no DataFrame. Every figure is computed :data:`~torus_sim.metrics.pieces.PIECE_ROWS`
    jobs at a time with the bits of the whole arrays' sums (:func:`~torus_sim.metrics.pieces.pairwise_sum`): a
    table read by pieces (:class:`~torus_sim.metrics.families.SubmissionOrderColumns`) is never held whole.

    References:
        PV-EASY §5.1 (Eq. 1-2), Tables 1, 2, 4, 5 and Eq. 3.
    """
    rows, piece = pieces_of(table, "size")
    steps = range(0, rows, PIECE_ROWS)

    def gather(name: str, masks: list[np.ndarray]) -> np.ndarray:
        """The values of ``name`` where each piece's mask holds, in order (as the whole column indexed by the mask)."""
        parts = [piece(name, first, first + PIECE_ROWS)[mask] for first, mask in zip(steps, masks, strict=True)]
        return np.concatenate(parts) if parts else np.asarray(piece(name, 0, 0))

    # every figure a piece of PIECE_ROWS jobs at a time: sums where numpy's pairwise sum splits (the same bits as
    # over whole arrays), the few jobs a figure keeps (preempted, blocked, violated) gathered in order
    count = rows
    mbs, mean_wait = means_by_pieces(
        count, lambda first, last: (piece("bounded_slowdown", first, last), piece("wait", first, last))
    )

    def weights(first: int, last: int) -> tuple[np.ndarray, np.ndarray]:  # np.average's: the sizes as floats, slowdown x size
        sizes = piece("size", first, last).astype(float)
        return sizes, piece("bounded_slowdown", first, last) * sizes

    def loads(first: int, last: int) -> tuple[np.ndarray, np.ndarray]:  # size x time run, size x runtime
        sizes = piece("size", first, last)
        return sizes * piece("time_sum", first, last), sizes * piece("runtime", first, last)

    weight, weighted = pairwise_sums(count, weights)
    if weight == 0.0:
        raise ZeroDivisionError("Weights sum to zero, can't be normalized")  # np.average's refusal
    mwbs = float(np.float64(weighted) / np.float64(weight))
    submitted_min = min(piece("submitted_at", first, first + PIECE_ROWS).min() for first in steps)
    finished_max = max(piece("finished_at", first, first + PIECE_ROWS).max() for first in steps)
    span = finished_max - submitted_min
    capacity = processors * span if span > 0 else np.nan
    used, useful = pairwise_sums(count, loads)
    preempted = [piece("preemptions", first, first + PIECE_ROWS) > 0 for first in steps]
    preempted_jobs = int(sum(int(mask.sum()) for mask in preempted))
    mkt = mean_rtw = 0.0
    if preempted_jobs:
        mkt = series_mean(gather("preemptions", preempted))
        runtime = gather("runtime", preempted)
        with np.errstate(invalid="ignore", divide="ignore"):
            rtw = (gather("time_sum", preempted) - runtime) / np.where(runtime > 0, runtime, np.nan)
        mean_rtw = series_mean(rtw)
    blocked = [piece("blocked", first, first + PIECE_ROWS).astype(bool) for first in steps]
    blocked_jobs = int(sum(int(mask.sum()) for mask in blocked))
    fair = gather("fair_start_at", blocked)
    delay = np.where(~np.isnan(fair), gather("first_started_at", blocked) - fair, np.nan)
    with np.errstate(invalid="ignore"):
        delayed = delay[delay > min_delay]
    violated = []
    for first in steps:
        promised_at = piece("violated_at", first, first + PIECE_ROWS)
        found = ~np.isnan(promised_at)
        if min_delay > 0:
            with np.errstate(invalid="ignore"):
                found &= piece("first_started_at", first, first + PIECE_ROWS) - promised_at > min_delay
        violated.append(found)
    started, promised_at = gather("first_started_at", violated), gather("violated_at", violated)
    dtr = started - promised_at
    submitted, runtime = gather("submitted_at", violated), gather("runtime", violated)
    promised = bounded_slowdown((promised_at - submitted) + 0.0, runtime)
    actual = bounded_slowdown((started - submitted) + 0.0, runtime)
    si = actual - promised
    violations = len(started)
    return {
        "jobs": count,
        "mbs": mbs,
        "mwbs": mwbs,
        "mean_wait": mean_wait,
        "makespan": float(finished_max),
        "total_load": float(used / capacity),
        "useful_load": float(useful / capacity),
        "wasted_load": float((used - useful) / capacity),
        "preempted_jobs": preempted_jobs,
        "preempted_rate": preempted_jobs / count,
        "mkt": mkt,
        "mean_rtw": mean_rtw,
        "blocked_jobs": blocked_jobs,
        "delayed_jobs": len(delayed),
        "mean_delay_min": float(series_mean(delayed) / 60) if len(delayed) else 0.0,
        "max_delay_h": float(delayed.max() / 3600) if len(delayed) else 0.0,
        "violations": violations,
        "mean_dtr_min": float(series_mean(dtr) / 60) if violations else 0.0,
        "max_dtr_h": float(dtr.max() / 3600) if violations else 0.0,
        "mean_si": float(si.mean()) if violations else 0.0,
        "max_si": float(si.max()) if violations else 0.0,
        "violation_mean_parallelism": series_mean(gather("size", violated)) if violations else 0.0,
    }


def series_mean(values: np.ndarray) -> float:
    """Pandas' ``Series.mean`` on a numpy array: NaN left out (counted as 0 in the pairwise sum, not in the count).

    pandas (``nanops.nanmean``) sums in float64 (integers too) with NaN put to 0 and divides by the count of the
    others; bottleneck is never used for a mean. NaN when every value is NaN or there is none.

    Args:
        values: shape ``(n,)``, any numeric or boolean dtype.

    Returns:
        The mean, in the values' unit.

    References:
        pandas ``core/nanops.py`` (``nanmean``), the same numbers the summaries printed with pandas.
    """
    values = np.asarray(values)
    if values.dtype.kind in "biu":
        total, count = values.sum(dtype=np.float64), np.float64(len(values))
    else:
        missing = np.isnan(values)
        if missing.any():
            values = np.where(missing, 0.0, values)
        total, count = values.sum(dtype=np.float64), np.float64(len(values) - int(missing.sum()))
    with np.errstate(invalid="ignore", divide="ignore"):
        return float(total / count)


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
    import pandas as pd

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
