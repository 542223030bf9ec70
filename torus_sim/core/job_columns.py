"""The job table's columns, each declared once: its name, type, unit, meaning and where its value comes from.

A run's job table (``jobs.csv``, ``jobs.parquet``, the record's ``jobs`` table) has three groups of columns:

* :data:`RECORDED`: what the engine records when a job completes, read from the job's attributes
  (:func:`row_of` reads them all in one C call);
* :data:`DERIVED`: what :func:`torus_sim.metrics.summary.job_table` computes from those (waits, slowdowns);
* :data:`POWER`: what power accounting adds (:mod:`torus_sim.metrics.energy`);
* :data:`PLATFORM`: what a platform adds (the partition of a platform of partitions).

From these declarations come the record's column order and its typed arrays
(:data:`torus_sim.engine.record.JOB_COLUMNS`, ``COLUMN_TYPES["jobs"]``), the engine's row for a completed job
(:func:`row_of`), the description of ``jobs.csv`` (:data:`torus_sim.outputs.output_columns.JOB_COLUMNS`, from which
``docs/outputs.md`` is made) and which of its columns are times rounded to the millisecond (unit ``s``). A new
column is one more :class:`Column` here (and, for a recorded one, the job attribute it reads).

Units: seconds for times; sizes in nodes on a cluster and in supernodes (midplanes) on a torus.

References:
    BGL-FAULT §3.4 (wait, response, bounded slowdown), §6.1 (t_s, t_f, t_e); Feitelson's SWF fields
    (job number, user, submit time, run time, requested time).
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import attrgetter

__all__ = ["DERIVED", "JOB_TABLE", "PLATFORM", "POWER", "RECORDED", "Column", "column_types", "described", "names", "row_of"]


@dataclass(frozen=True)
class Column:
    """One column of the job table.

    Args:
        name: the column's name in every output.
        dtype: its type in the record's arrays: ``"d"`` (float64) or ``"q"`` (int64).
        unit: ``"s"`` (seconds: rounded to the millisecond in CSV), ``"kWh"``, ... or ``""`` (a count or a ratio).
        meaning: one line for docs/outputs.md, with its source (SWF field, paper and section).
        attribute: the :class:`~torus_sim.core.job.Job` attribute the engine records at completion; None for a column
            computed after the run (:data:`DERIVED`, :data:`POWER`).
    """

    name: str
    dtype: str
    unit: str
    meaning: str
    attribute: str | None = None


_SIZE = "nodes / supernodes"

RECORDED: tuple[Column, ...] = (
    Column("job_id", "q", "", "the job's number in the workload (SWF field 1)", "job_id"),
    Column("user_id", "q", "", "its user (SWF field 12; -1 where the workload has none)", "user_id"),
    Column("size", "q", _SIZE, "nodes it runs on (the SWF log's processors after cleaning and scaling to the platform)", "size"),
    Column(
        "partition_size",
        "q",
        _SIZE,
        "the partition it held: size rounded up to a free box on a torus, size on a cluster",
        "partition_size",
    ),
    Column(
        "submitted_at",
        "d",
        "s",
        "submission time (SWF field 2); the load scale c multiplies run and requested times, not this (BGL-FAULT §6.2)",
        "submitted_at",
    ),
    Column("first_started_at", "d", "s", "start of its first attempt", "first_started_at"),
    Column("started_at", "d", "s", "start of its last (completed) attempt, BGL-FAULT's t_s", "started_at"),
    Column("finished_at", "d", "s", "end of its last attempt, BGL-FAULT's t_f", "finished_at"),
    Column("runtime", "d", "s", "the work it needs (SWF field 4), BGL-FAULT's t_e", "runtime"),
    Column("walltime", "d", "s", "requested time (SWF field 9; the runtime where the log has none)", "walltime"),
    Column(
        "prediction",
        "d",
        "s",
        "the runtime the scheduler believed (the runtime predictor's, else the walltime)",
        "believed_runtime",
    ),
    Column("attempts", "q", "", "attempts run (1 when nothing interrupted it)", "attempts"),
    Column("kills", "q", "", "attempts ended by a failure (fail-stop)", "kills"),
    Column("preemptions", "q", "", "attempts ended by the policy (PV-EASY's shadow-load preemption)", "preemptions"),
    Column("silent_errors", "q", "", "attempts whose result a silent error spoiled (RIGID, MOLDABLE)", "errors_detected"),
    Column(
        "lost_work",
        "d",
        "size x s",
        "work thrown away by kills and errors: size x the time since the last checkpoint",
        "lost_work",
    ),
    Column(
        "migrations",
        "q",
        "",
        "times it was moved while running (Krevat's repacking, CKPT-MIG's preventive migration)",
        "migrations",
    ),
    Column(
        "time_sum", "d", "s", "running time summed over its attempts (the job's share of the machine's used time)", "time_sum"
    ),
)
"""What the engine records of a completed job, in the record's column order."""

DERIVED: tuple[Column, ...] = (
    Column("wait_time", "d", "s", "started_at - submitted_at (BGL-FAULT §3.4)"),
    Column("response_time", "d", "s", "finished_at - submitted_at"),
    Column("bounded_slowdown", "d", "", "max(response, Γ) / max(runtime, Γ), Γ = 10 s (BGL-FAULT §3.4, the field's form)"),
)
"""What :func:`torus_sim.metrics.summary.job_table` adds, in its order."""

POWER: tuple[Column, ...] = (
    Column("power_w", "d", "W per node", "power accounting only: the job's draw per allocated node (the scenario's job_power)"),
    Column("energy_kwh", "d", "kWh", "power accounting only: energy of all its attempts (killed ones included)"),
)
"""What power accounting adds to the job table."""

PLATFORM: tuple[Column, ...] = (
    Column(
        "partition",
        "q",
        "",
        "a platform of partitions only (the heterogeneous cluster's node types, a plug-in's partitions): the partition "
        "the job ran in, its index in the platform's order (the run's manifest names them)",
    ),
)
"""What a platform adds to the job table: each platform names the ones it gives in its ``job_columns`` and answers
``job_column(name, job_ids)`` (:class:`~torus_sim.machine.platforms.partitioned.PartitionedPlatform`)."""

JOB_TABLE: tuple[Column, ...] = RECORDED + DERIVED + POWER + PLATFORM
"""Every column ``jobs.csv`` may have, in its order."""


def names(columns: tuple[Column, ...]) -> list[str]:
    """The columns' names, in order.

    Args:
        columns: declared columns (:data:`RECORDED`, :data:`JOB_TABLE`, ...).
    """
    return [column.name for column in columns]


def column_types(columns: tuple[Column, ...]) -> dict[str, str]:
    """``{name: dtype}`` (``"d"`` float64, ``"q"`` int64) for the record's typed arrays.

    Args:
        columns: declared columns.
    """
    return {column.name: column.dtype for column in columns}


def described(columns: tuple[Column, ...]) -> dict[str, tuple[str, str]]:
    """``{name: (unit, meaning)}``: the schema :mod:`torus_sim.outputs.output_columns` documents and rounds by.

    Args:
        columns: declared columns.
    """
    return {column.name: (column.unit, column.meaning) for column in columns}


row_of = attrgetter(*(column.attribute for column in RECORDED))
"""``row_of(job)``: a completed job's :data:`RECORDED` values as one tuple, in their order (read in C)."""
