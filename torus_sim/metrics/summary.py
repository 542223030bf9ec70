"""Job and capacity metrics from a run's event record.

Per job (BGL-FAULT §3.4): wait ``t_w = t_s - t_a``, response ``t_r = t_f - t_a`` (t_s the last
start, t_f the finish), bounded slowdown with Γ = 10 s. Capacity (BGL-FAULT §6.1), over the span
``T = max t_f - min t_a`` on N supernodes:

* ``omega_util = sum_j s_j t_e_j / (T N)``: work done (size x runtime of the completed attempt);
* ``omega_unused = (1 / T N) * integral of max(0, f(t) - q(t)) dt``: free supernodes no waiting
  job asks for (f = free supernodes, q = supernodes requested by the queue), integrated exactly
  over the piecewise-constant record;
* ``omega_lost = 1 - omega_util - omega_unused``: work lost to failures, fragmentation, the
  supernodes added by rounding sizes up, and waiting.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from torus_sim.core.errors import ConfigurationError
from torus_sim.core.job_columns import DERIVED, names
from torus_sim.engine.record import COLUMN_TYPES, JOB_COLUMNS
from torus_sim.metrics.pieces import PIECE_ROWS, means_by_pieces, pairwise_sum, pieces_of

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "BSLD_FORMS",
    "DEFAULT_GAMMA",
    "JobTableRows",
    "bounded_slowdown",
    "capacity_fractions",
    "job_table",
    "record_job_table",
    "summarize",
]

DEFAULT_GAMMA = 10.0
"""Γ of bounded slowdown, seconds (BGL-FAULT §3.4)."""

BSLD_FORMS = ("standard", "printed")
"""``standard``: max(t_r, Γ) / max(t_e, Γ) (Feitelson; Krevat et al.); ``printed``: the
max(t_r, Γ) / min(t_e, Γ) that BGL-FAULT §3.4 prints (see ../shared/seeds/README.md)."""


def bounded_slowdown(
    response: np.ndarray, runtime: np.ndarray, gamma: float = DEFAULT_GAMMA, form: str = "standard"
) -> np.ndarray:
    """Bounded slowdown of each job.

    Args:
        response: response times t_r, seconds, shape ``(n,)``.
        runtime: execution times t_e of the completed attempt, seconds, shape ``(n,)``.
        gamma: Γ > 0, seconds.
        form: ``"standard"`` or ``"printed"`` (see :data:`BSLD_FORMS`).

    Returns:
        float64 ``(n,)``; >= 1 in the standard form. In the printed form a zero runtime is taken
        as 1 s (SWF runtimes are whole seconds), since min(0, Γ) = 0 would divide by zero.

    Raises:
        ConfigurationError: unknown form or Γ <= 0.

    References:
        BGL-FAULT §3.4; Feitelson et al., "Theory and practice in parallel job scheduling", 1997.
    """
    if form not in BSLD_FORMS:
        raise ConfigurationError(f"unknown bounded-slowdown form {form!r}; choose from {BSLD_FORMS}")
    if not gamma > 0:
        raise ConfigurationError(f"Γ must be positive, got {gamma}")
    response = np.asarray(response, dtype=np.float64)
    runtime = np.asarray(runtime, dtype=np.float64)
    denominator = np.maximum(runtime, gamma) if form == "standard" else np.minimum(np.maximum(runtime, 1.0), gamma)
    return np.maximum(response, gamma) / denominator


def job_table(jobs: pd.DataFrame, gamma: float = DEFAULT_GAMMA, form: str = "standard") -> pd.DataFrame:
    """Per-job results: the record's columns plus wait, response and bounded slowdown.

    Args:
        jobs: the record's job rows (``submitted_at``, ``started_at``, ``finished_at``, ``runtime``, ...).
        gamma: Γ, seconds.
        form: bounded-slowdown form.

    Returns:
        A new DataFrame ordered by job id, with ``wait_time``, ``response_time`` and
        ``bounded_slowdown`` (seconds, seconds, ratio).
    """
    table = jobs.sort_values("job_id", kind="stable", ignore_index=True)  # a new frame: one copy of the record's rows
    for name, values in _times(table, gamma, form).items():
        table[name] = values
    return table


def _times(jobs, gamma: float, form: str) -> dict[str, np.ndarray]:
    """``wait_time``, ``response_time`` (seconds) and ``bounded_slowdown`` of job rows (a DataFrame or column -> array)."""
    submitted = np.asarray(jobs["submitted_at"])
    response = np.asarray(jobs["finished_at"]) - submitted
    return {
        "wait_time": np.asarray(jobs["started_at"]) - submitted,
        "response_time": response,
        "bounded_slowdown": bounded_slowdown(response, np.asarray(jobs["runtime"]), gamma, form),
    }


def record_job_table(record, gamma: float = DEFAULT_GAMMA, form: str = "standard") -> pd.DataFrame:
    """:func:`job_table` of a record's job rows, read one column at a time in job-id order.

    The same DataFrame as ``job_table(record.jobs, gamma, form)`` without the record's table built first
    and then sorted (a 450k-job run held both: 2 x 64 MB).

    Args:
        record: a :class:`~torus_sim.engine.record.SimulationRecord` with its tables.
        gamma: Γ, seconds.
        form: bounded-slowdown form.

    Returns:
        The per-job table (see :func:`job_table`).

    References:
        BGL-FAULT §3.4 (wait, response, bounded slowdown).
    """
    rows = JobTableRows(record, gamma, form)
    return rows.chunk(0, len(rows))


class JobTableRows:
    """:func:`record_job_table`'s rows a piece at a time, read from the record without the table held whole.

    What ``jobs.csv`` is written from (:func:`torus_sim.outputs.output_columns.csv_writer`): the pieces are the
    table's rows in order, with its columns and types; RICC-2010-2's table is 75 MB, a piece of 50,000 rows 8 MB.

    Args:
        record: a :class:`~torus_sim.engine.record.SimulationRecord` with its job table.
        gamma: Γ, seconds.
        form: bounded-slowdown form.
        whole: returns the whole table (:meth:`frame`) when a reader needs it; None: :func:`record_job_table`.
    """

    def __init__(self, record, gamma: float = DEFAULT_GAMMA, form: str = "standard", whole=None) -> None:
        self.record, self.gamma, self.form = record, gamma, form
        self._whole = whole
        self._recorded = [name for name in JOB_COLUMNS if record.has_column("jobs", name)]
        self.columns = [*self._recorded, *names(DERIVED)]
        types = COLUMN_TYPES["jobs"]
        self.dtypes = {name: np.dtype(types.get(name, "d")) for name in self.columns}
        self._order = np.argsort(record.column("jobs", "job_id"), kind="stable")

    def __len__(self) -> int:
        return len(self._order)

    def arrays(self, start: int, stop: int) -> dict[str, np.ndarray]:
        """Rows ``start`` to ``stop - 1`` of the table (job-id order), column name -> numpy array (:attr:`columns`' order)."""
        rows = self._order[start:stop]
        part = {name: self.record.take("jobs", name, rows) for name in self._recorded}
        part.update(_times(part, self.gamma, self.form))
        return part

    def chunk(self, start: int, stop: int) -> pd.DataFrame:
        """Rows ``start`` to ``stop - 1`` of the table (job-id order) as a DataFrame, as :func:`job_table` makes them."""
        import pandas as pd  # a DataFrame asked for

        return pd.DataFrame(self.arrays(start, stop), copy=False)

    def frame(self) -> pd.DataFrame:
        """The whole table."""
        return self._whole() if self._whole is not None else record_job_table(self.record, self.gamma, self.form)


def capacity_fractions(jobs, capacity, n_supernodes: int) -> dict[str, float]:
    """ω_util, ω_unused and ω_lost of a run.

    Args:
        jobs: the record's job rows (``submitted_at``, ``finished_at``, ``size``, ``runtime``): a DataFrame or
            any mapping of those names to arrays.
        capacity: the record's capacity rows (``time``, ``free``, ``queued_demand``), in time order: a DataFrame
            or a mapping of those names to arrays.
        n_supernodes: N.

    Returns:
        ``span`` (T, seconds) and the three fractions; the fractions are NaN (undefined) when
        T = 0 (no job, or only zero-length jobs submitted at one instant).

    References:
        BGL-FAULT §6.1 (ω_util, ω_unused, ω_lost).
    """
    return _fractions(pieces_of(jobs, "submitted_at"), pieces_of(capacity, "time"), n_supernodes)


def _fractions(job_table: tuple, pass_table: tuple, n_supernodes: int) -> dict[str, float]:
    """:func:`capacity_fractions` from the job and pass tables as :func:`~torus_sim.metrics.pieces.pieces_of` gives them."""
    (jobs, job_piece), (passes, pass_piece) = job_table, pass_table
    undefined = {"span": 0.0, "omega_util": float("nan"), "omega_unused": float("nan"), "omega_lost": float("nan")}
    if not jobs:
        return undefined
    steps = range(0, jobs, PIECE_ROWS)
    begin = float(min(job_piece("submitted_at", first, first + PIECE_ROWS).min() for first in steps))
    end = float(max(job_piece("finished_at", first, first + PIECE_ROWS).max() for first in steps))
    span = end - begin
    if span <= 0:
        return undefined
    area = span * n_supernodes
    # the same products and the same pairwise sum as pandas' (size x runtime).sum() over the int64 and float64 columns
    util = pairwise_sum(jobs, lambda first, last: job_piece("size", first, last) * job_piece("runtime", first, last)) / area

    def idle_areas():  # max(0, free - queued) x the step's width, a piece of passes at a time
        for first in range(0, passes, PIECE_ROWS):
            last = min(first + PIECE_ROWS, passes)
            times = np.clip(np.asarray(pass_piece("time", first, last + 1), dtype=np.float64), begin, end)
            widths = np.diff(times[: last - first], append=times[last - first] if last < passes else end)
            free = np.asarray(pass_piece("free", first, last), dtype=np.float64)
            idle = np.maximum(0.0, free - np.asarray(pass_piece("queued_demand", first, last), dtype=np.float64))
            yield from (idle * widths).tolist()

    unused = math.fsum(idle_areas()) / area  # correctly rounded: the same bits whatever the order and the pieces
    return {"span": span, "omega_util": util, "omega_unused": unused, "omega_lost": 1.0 - util - unused}


def summarize(record, gamma: float = DEFAULT_GAMMA, form: str = "standard") -> dict[str, float | int]:
    """The run's summary metrics.

    Args:
        record: a :class:`~torus_sim.engine.record.SimulationRecord`.
        gamma: Γ of bounded slowdown, seconds.
        form: bounded-slowdown form.

    Returns:
        ``jobs``, ``avg_wait_time``, ``avg_response_time``, ``avg_bounded_slowdown`` (seconds,
        seconds, ratio), ``max_bounded_slowdown``, ``makespan`` (= T, seconds), ``omega_util``,
        ``omega_unused``, ``omega_lost``, ``failures``, ``job_kills``, ``jobs_killed``,
        ``lost_work`` (supernode-seconds), ``migrations``, ``repacks``, ``preventive_checkpoints``,
        ``preventive_migrations``, ``preventive_migrations_failed``; with the tie-break placement also its
        counts (:data:`~torus_sim.policies.fault_aware.TIE_DIAGNOSTICS`). ω_util is the yield of
        CKPT-MIG: useful work over capacity.

    References:
        BGL-FAULT §3.4, §6.1.
    """
    # The means in the job table's order (by job id), computed a piece at a time (the columns taken from the record
    # in that order): the same values in the same order and the same pairwise sums as over whole arrays, with only
    # the order (8 bytes a job) held whole (a 10-million-job record's whole arrays peaked at ~2.4 GB here).
    job_table = pieces_of(record.reader("jobs"), "job_id")
    order = np.argsort(record.column("jobs", "job_id"), kind="stable")
    count = len(order)
    figures = {"avg_wait_time": 0.0, "avg_response_time": 0.0, "avg_bounded_slowdown": 0.0, "max_bounded_slowdown": 0.0}
    if count:
        highest = []

        def times(first: int, last: int) -> list[np.ndarray]:  # the three series from one read of the job's times
            rows = order[first:last]
            part = {name: record.take("jobs", name, rows) for name in ("submitted_at", "started_at", "finished_at", "runtime")}
            made = _times(part, gamma, form)
            highest.append(made["bounded_slowdown"].max())
            return [made["wait_time"], made["response_time"], made["bounded_slowdown"]]

        means = means_by_pieces(count, times)
        figures["avg_wait_time"], figures["avg_response_time"], figures["avg_bounded_slowdown"] = means
        figures["max_bounded_slowdown"] = float(np.max(highest))  # NaN if any is, as the whole array's max
    order = None  # let go before the capacity columns are read
    fractions = _fractions(job_table, pieces_of(record.reader("capacity"), "time"), record.capacity_total)
    read = job_table[1]
    killed = sum(int((read("kills", first, first + PIECE_ROWS) > 0).sum()) for first in range(0, count, PIECE_ROWS))
    counters = record.counters
    return {
        "jobs": int(count),
        **figures,
        "makespan": fractions["span"],
        "omega_util": fractions["omega_util"],
        "omega_unused": fractions["omega_unused"],
        "omega_lost": fractions["omega_lost"],
        "failures": int(counters.get("failures", 0)),
        "job_kills": int(counters.get("job_kills", 0)),
        "jobs_killed": killed,
        "lost_work": float(counters.get("lost_work", 0.0)),
        "migrations": int(counters.get("migrations", 0)),
        "repacks": int(counters.get("repacks", 0)),
        "preventive_checkpoints": int(counters.get("preventive_checkpoints", 0)),
        "preventive_migrations": int(counters.get("preventive_migrations", 0)),
        "preventive_migrations_failed": int(counters.get("preventive_migrations_failed", 0)),
        **{key: int(value) for key, value in sorted(counters.items()) if key.startswith("tie_")},
        **({"jobs_held": int(counters["jobs_held"])} if "jobs_held" in counters else {}),  # under per-user limits only
        **(
            {"jobs_held_for_maintenance": int(counters["jobs_held_for_maintenance"])}
            if "jobs_held_for_maintenance" in counters
            else {}
        ),  # with maintenance windows only
        **(
            {"jobs_held_for_prime_time": int(counters["jobs_held_for_prime_time"])}
            if "jobs_held_for_prime_time" in counters
            else {}
        ),  # with a prime time only
        **(
            {"dependent_submissions": int(counters["dependent_submissions"])} if "dependent_submissions" in counters else {}
        ),  # with dependencies only
        **(
            {"node_hours_held_out": float(counters["node_hours_held_out"])} if "node_hours_held_out" in counters else {}
        ),  # with an effective size or reservations only
        **(
            {"reservation_kills": int(counters["reservation_kills"])} if "reservation_kills" in counters else {}
        ),  # with reservations that kill only
        **(
            {"jobs_started_by_preemption": int(counters["jobs_started_by_preemption"])}
            if "jobs_started_by_preemption" in counters
            else {}
        ),  # with preemption by tier only
    }
