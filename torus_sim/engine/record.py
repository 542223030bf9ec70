"""The run's record: the tables the metrics read, their columns and types, and how the engine fills them.

:class:`RunRecorder` is the component of :class:`~torus_sim.engine.model.SchedulingModel` that owns and writes
the record (columns of typed arrays where a table grows with the log, lists for text) and reads it back as
DataFrames (:meth:`RunRecorder.table`, :meth:`RunRecorder.record`); the per-step series of the browser
view and ``mesa.batch_run`` are Mesa's ``DataCollector``, built only when a model steps.

References:
    BGL-FAULT §6.1 (the per-job and per-pass quantities); PV-EASY §4.1, §3.2 (the fairness columns);
    Batsim's ``allocated_resources`` (interval sets of node ids).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from torus_sim.core.disk_tables import GrowingTable, SpillFolder, TableSnapshot
from torus_sim.core.errors import SimulationError
from torus_sim.core.job import Job
from torus_sim.core.job_columns import RECORDED, column_types, names

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "ATTEMPT_COLUMNS",
    "COLUMN_TYPES",
    "FAILURE_COLUMNS",
    "FAIRNESS_COLUMNS",
    "JOB_COLUMNS",
    "MIGRATION_COLUMNS",
    "PASS_COLUMNS",
    "OnDemandField",
    "RunRecorder",
    "SimulationRecord",
]

JOB_COLUMNS = names(RECORDED)
"""One row per completed job (times in seconds; ``started_at`` the last start, BGL-FAULT's t_s): the names of
:data:`torus_sim.core.job_columns.RECORDED`, which declares each (type, unit, meaning, the job attribute it reads)."""

ATTEMPT_COLUMNS = ["job_id", "attempt", "started_at", "ended_at", "nodes", "outcome", "resources"]
"""One row per attempt; ``outcome`` is completed, silent_error, killed or preempted; ``nodes`` its size;
``resources`` the node (supernode) ids it held at its end as an interval set (``"0-3 7"``), empty
where the platform keeps counts only."""

MIGRATION_COLUMNS = ["job_id", "attempt", "time", "from_resources", "to_resources"]
"""One row per migration of a running job (Krevat's repacking, CKPT-MIG's preventive migration)."""

PASS_COLUMNS = ["time", "free", "queued_demand", "running_jobs", "queued_jobs"]
"""One row per scheduling pass, after it (BGL-FAULT §6.1's f(t) and q(t))."""

FAIRNESS_COLUMNS = [
    "head_job",
    "head_ready",
    "previous_head",
    "previous_reservation_at",
    "head_passed",
    "head_ready_backfilled",
    "head_ready_underestimated",
]
"""With fairness recording, after each pass: the first waiting job (``head_job``, -1 if none);
``head_ready``: it would fit if no lower-priority job were running (the shadow load, PV-EASY §4.1);
the head before the pass and its reservation (``previous_head``, ``previous_reservation_at``);
``head_passed``: running jobs backfilled past it while it was the head; ``head_ready_backfilled``:
it would fit without those; ``head_ready_underestimated``: it would fit without those of them
predicted, at their start, to end by ``previous_reservation_at`` (PV-EASY §3.2, Fig. 1c)."""

COLUMN_TYPES = {
    "capacity": {
        "time": "d",
        "free": "q",
        "queued_demand": "q",
        "running_jobs": "q",
        "queued_jobs": "q",
        "head_job": "q",
        "head_ready": "?",
        "previous_head": "q",
        "previous_reservation_at": "d",
        "head_passed": "q",
        "head_ready_backfilled": "?",
        "head_ready_underestimated": "?",
    },
    "jobs": column_types(RECORDED),  # declared with the columns (torus_sim.core.job_columns)
    "attempts": {"job_id": "q", "attempt": "q", "started_at": "d", "ended_at": "d", "nodes": "q"},
}
"""Columns the record holds in typed arrays (``d`` float64, ``q`` int64, ``?`` bool), by table; the
others (strings, and the small failure and migration tables) are Python lists. A 450k-job log makes
~900k passes and 450k job rows: as Python objects they were ~0.5 GB, and the same again while pandas
converted them at the end of the run."""

TEXT_COLUMNS = {"attempts": ("outcome", "resources")}
"""Columns of text (no line breaks) that go to disk with their table (UTF-8 lines)."""

FAILURE_COLUMNS = ["time", "node", "killed_job", "down_until"]
"""One row per fail-stop failure."""


class OnDemandField:
    """A dataclass field whose value is made when first read: the field's default stores None (or what was given).

    Subclasses say what a stored value becomes on reading (:meth:`made`); the result replaces it. The value is
    kept as ``_<name>`` in the instance's ``__dict__`` (``dataclasses.replace`` and pickling see the read value).
    """

    def __set_name__(self, owner, name: str) -> None:
        self.key = f"_{name}"

    def __get__(self, instance, owner=None):
        if instance is None:
            return None  # the field's default
        stored = instance.__dict__[self.key]
        value = self.made(instance, stored)
        if value is not stored:
            instance.__dict__[self.key] = value
        return value

    def __set__(self, instance, value) -> None:
        instance.__dict__[self.key] = None if isinstance(value, OnDemandField) else value  # the default: None

    def made(self, instance, stored):
        """What the stored value reads as (the default: itself)."""
        return stored


class _Table(OnDemandField):
    """A table field of :class:`SimulationRecord`: a DataFrame (or None), or a snapshot read into one on first access."""

    def made(self, record, stored):  # noqa: D102
        return stored.frame() if isinstance(stored, TableSnapshot) else stored


@dataclass(eq=False)
class SimulationRecord:
    """What a run leaves for the metrics: the event record, not the engine.

    A run's tables are read from its record (memory and the chunks on disk,
    :mod:`~torus_sim.core.disk_tables`) when first asked for as DataFrames; :meth:`column` and
    :meth:`columns` read only the columns asked for (what the metrics do), without building the table.

    Attributes:
        jobs: one row per completed job (:data:`JOB_COLUMNS`).
        attempts: one row per attempt (:data:`ATTEMPT_COLUMNS`).
        capacity: one row per scheduling pass (:data:`PASS_COLUMNS`, plus :data:`FAIRNESS_COLUMNS`
            when recorded).
        failures: one row per failure (:data:`FAILURE_COLUMNS`).
        capacity_total: N, nodes of the platform.
        counters: event and action counts (``events_scheduled``, ``migrations``, ...).
        makespan: end of the last completed job, seconds.
        platform_kind: ``torus`` or ``cluster``.
        migrations: one row per migration (:data:`MIGRATION_COLUMNS`).
        power_states: with idle nodes switched off, one row per off or boot interval of a node
            (:data:`~torus_sim.engine.power_states.POWER_STATE_COLUMNS`); None otherwise.
    """

    jobs: pd.DataFrame | None = field(default=_Table(), repr=False)
    attempts: pd.DataFrame | None = field(default=_Table(), repr=False)
    capacity: pd.DataFrame | None = field(default=_Table(), repr=False)
    failures: pd.DataFrame | None = field(default=_Table(), repr=False)
    capacity_total: int = 0
    counters: dict[str, int] = field(default_factory=dict)
    makespan: float = 0.0
    platform_kind: str = "torus"
    migrations: pd.DataFrame | None = field(default=_Table(), repr=False)
    power_states: pd.DataFrame | None = field(default=None, repr=False)

    def _source(self, table: str):
        if table not in _TABLES:
            raise KeyError(f"no table {table!r}; the record's tables are {', '.join(_TABLES)}")
        return self.__dict__[f"_{table}"]

    def count(self, table: str) -> int:
        """Rows of ``table`` (0 when the record has none), without reading it.

        Raises:
            KeyError: not a table of the record.
        """
        source = self._source(table)
        return 0 if source is None else len(source)

    def has_column(self, table: str, column: str) -> bool:
        """Whether ``table`` has ``column`` (the pass table's fairness columns are recorded on demand)."""
        source = self._source(table)
        return source is not None and column in source.columns

    def column(self, table: str, column: str) -> np.ndarray:
        """One column of one table, shape ``(rows,)``: float64, int64 or bool as recorded (text: object).

        Raises:
            KeyError: no such table or column.
            SimulationError: the record has no tables (``record=False``).
        """
        source = self.reader(table)
        return source[column] if isinstance(source, TableSnapshot) else source[column].to_numpy()

    def reader(self, table: str):
        """``table`` as a mapping of column names to arrays, each read when asked (``reader[name]``, ``name in reader``).

        A run's snapshot (:class:`~torus_sim.core.disk_tables.TableSnapshot`) or the DataFrame given.

        Raises:
            KeyError: no such table.
            SimulationError: the record has no tables (``record=False``).
        """
        source = self._source(table)
        if source is None:
            raise SimulationError(f"the record has no {table} table (the model was built with record=False)")
        return source

    def take(self, table: str, column: str, rows: np.ndarray) -> np.ndarray:
        """One typed column's values at the row positions ``rows`` (int64, shape ``(k,)``), in that order.

        Raises:
            KeyError: no such table or column.
            SimulationError: the record has no tables (``record=False``).
        """
        source = self.reader(table)
        if isinstance(source, TableSnapshot):
            return source.take(column, rows)
        return source[column].to_numpy()[np.asarray(rows, dtype=np.int64)]

    def columns(self, table: str, columns: list[str]) -> pd.DataFrame:
        """Some columns of one table as a DataFrame, in the order given (the others are not read).

        Raises:
            KeyError: no such table or column.
            SimulationError: the record has no tables (``record=False``).
        """
        source = self.reader(table)
        return source.frame(columns) if isinstance(source, TableSnapshot) else source[columns]


_TABLES = ("jobs", "attempts", "capacity", "failures", "migrations")


class RunRecorder:
    """The run's record: its tables when ``record`` is on, and the rows the engine's events and passes add.

    A component of :class:`~torus_sim.engine.model.SchedulingModel`: it owns the tables (``tables``:
    name -> :class:`~torus_sim.core.disk_tables.GrowingTable`, a chunk in memory and the rest on disk), the per-step model reporters (``reporters``, collected by Mesa's
    ``DataCollector`` from :meth:`series`) and the text of each partition; the
    handlers, the pass and the preventive actions call :meth:`job_completed`, :meth:`attempt_ended`,
    :meth:`migrated`, :meth:`failure` and :meth:`pass_ended`; :meth:`record` gives the
    :class:`SimulationRecord` the metrics read. With ``record`` off there is no table: ``enabled`` is
    False, ``tables`` empty, :meth:`series` None, and the callers add nothing.

    Args:
        platform: the run's platform (its kind, node ids and capacity).
        enabled: keep the tables.
        fairness: add the pass table's :data:`FAIRNESS_COLUMNS`.
        power: the run accounts for power (the ``power_kw`` series of the browser's panel).
    """

    def __init__(self, platform, enabled: bool, fairness: bool, power: bool) -> None:
        self.platform = platform
        # an allocation's node ids as an interval set (Batsim's allocated_resources); "" for counts; the platform's text
        self._resources = platform.allocation_text
        self.enabled = bool(enabled)
        self.tables: dict[str, GrowingTable] = {}
        if self.enabled:
            columns = {
                "jobs": JOB_COLUMNS,
                "attempts": ATTEMPT_COLUMNS,
                "capacity": PASS_COLUMNS + (FAIRNESS_COLUMNS if fairness else []),
                "failures": FAILURE_COLUMNS,
                "migrations": MIGRATION_COLUMNS,
            }
            folder = SpillFolder()  # the tables that grow with the log go to disk a chunk at a time
            for name, names in columns.items():  # typed columns where a table grows with the log
                self.tables[name] = GrowingTable(name, names, COLUMN_TYPES.get(name, {}), TEXT_COLUMNS.get(name, ()), folder)
        self._pass_table = self.tables.get("capacity")
        self.reporters = {
            "time": "now",
            "queued_jobs": lambda model: len(model.scheduler.queue),
            "running_jobs": lambda model: len(model.book.running),
            "completed_jobs": "completed",
            "busy_nodes": lambda model: model.platform.capacity - model.platform.free_count() - model.down_count(),
            "utilization": lambda model: 1.0 - (model.platform.free_count() + model.down_count()) / model.platform.capacity,
            "down_nodes": lambda model: model.down_count(),
            "job_kills": lambda model: model.counters["job_kills"],
            # not "failures": mesa.batch_run rows keep the scenario's failures parameter under that name
            "failures_so_far": lambda model: model.counters["failures"],
            "preemptions": lambda model: model.counters["preemptions"],
            "silent_errors": lambda model: model.counters.silent_errors,
            **({"power_kw": _power_kw} if power else {}),  # with power accounting only
        }
        """Mesa's model reporters: one value each per :meth:`SchedulingModel.step` (the browser's series, ``mesa.batch_run``'s rows)."""
        self._first_values: dict | None = None
        self._series = None
        self.closed = False  # the run is over (close()): the tables are read, never added to

    def start(self, model) -> None:
        """Keep the model reporters' values before any event (row 0 of the per-step series, Mesa's convention)."""
        if self.enabled:
            self._first_values = {name: _report(model, reporter) for name, reporter in self.reporters.items()}

    def series(self, model):
        """Mesa's ``DataCollector`` of the per-step series (row 0: the state before any event), built on first use; None with ``record`` off.

        A plain run never steps and never builds it: Mesa's data collector imports pandas.
        """
        if self._series is None and self._first_values is not None:
            import mesa  # the whole package (pandas): only for the per-step series

            series = mesa.DataCollector(model_reporters=self.reporters)
            for name, value in self._first_values.items():
                series.model_vars[name].append(value)
            self._series = series
        return self._series

    def record(self, counters: dict, makespan: float, power_states=None) -> SimulationRecord:
        """The event record so far (see :class:`SimulationRecord`; tables are None with ``record`` off).

        Args:
            counters: the run's event and action counts.
            makespan: end of the last completed job, seconds.
            power_states: the nodes' switch-off states (:class:`~torus_sim.engine.power_states.NodePowerStates`), or None.
        """
        tables = dict.fromkeys(_TABLES) if not self.enabled else {name: self.snapshot(name) for name in _TABLES}
        return SimulationRecord(
            **tables,
            capacity_total=self.platform.capacity,
            counters=dict(counters),
            makespan=makespan,
            platform_kind=self.platform.kind,
            power_states=power_states.table() if power_states is not None and self.enabled else None,
        )

    def snapshot(self, name: str) -> TableSnapshot:
        """One table as it is now, read column by column when asked (:class:`~torus_sim.core.disk_tables.TableSnapshot`).

        Raises:
            SimulationError: the model was built with ``record=False``.
            KeyError: no table of that name.
        """
        if not self.enabled:
            raise SimulationError("no record: the model was built with record=False")
        table = self.tables[name]
        return TableSnapshot(table, len(table), shared=self.closed)

    def table(self, name: str) -> pd.DataFrame:
        """One table of the event record so far as a DataFrame (``jobs``, ``attempts``, ``capacity``, ``failures``, ``migrations``).

        Once the run is closed, the columns still in memory are shared with the DataFrame rather than
        copied (RICC's ~260 MB were held twice).

        Raises:
            SimulationError: the model was built with ``record=False``.
            KeyError: no table of that name.
        """
        return self.snapshot(name).frame()

    def close(self) -> None:
        """The run is over: no row is added from now on, and :meth:`table` shares the columns' memory instead of copying it.

        Raises (later, from the methods that add rows):
            SimulationError: a row added after the close.
        """
        self.closed = True

    def job_completed(self, row: tuple) -> None:
        """Add a completed job's row: its values in :data:`JOB_COLUMNS` order."""
        self._add("jobs", row)

    def attempt_ended(self, job: Job, ended_at: float, outcome: str) -> None:
        """Add an attempt's row (:data:`ATTEMPT_COLUMNS`): ``outcome`` completed, silent_error, killed or preempted."""
        self._add(
            "attempts",
            (job.job_id, job.attempts, job.started_at, ended_at, job.allocated_size, outcome, self._resources(job.allocation)),
        )

    def migrated(self, job: Job, old, new, at: float) -> None:
        """Add a migration's row (:data:`MIGRATION_COLUMNS`): the job moved from allocation ``old`` to ``new`` at ``at``."""
        self._add("migrations", (job.job_id, job.attempts, at, self._resources(old), self._resources(new)))

    def failure(self, at: float, node: int, killed: int | None, until: float) -> None:
        """Add a failure's row (:data:`FAILURE_COLUMNS`): the node, the job it killed (-1: none) and its repair time."""
        self._add("failures", (at, node, -1 if killed is None else killed, until))

    def _add(self, table: str, row: tuple) -> None:
        """One row of ``table``: its values in the table's column order."""
        if self.closed:
            raise SimulationError(f"a {table} row after the run's end: its record is closed")
        self.tables[table].add_row(row)

    def pass_ended(self, values: tuple) -> None:
        """Add a pass's row: its values in :data:`PASS_COLUMNS` order, then :data:`FAIRNESS_COLUMNS`' when kept.

        The hot path (a row per pass: 154,398 of them in CTC-SP2 in CQSim's mode) hands the tuple to the table
        (:meth:`~torus_sim.core.disk_tables.GrowingTable.add_row`).
        """
        if self.closed:
            raise SimulationError("a pass after the run's end: its record is closed")
        self._pass_table.add_row(values)


def _report(model, reporter):
    """One model reporter's value now: an attribute name or a function of the model (Mesa's two forms)."""
    return getattr(model, reporter) if isinstance(reporter, str) else reporter(model)


def _power_kw(model) -> float:
    """The machine's draw now, kW (:func:`~torus_sim.inputs.energy.node_power.draw_now`): the browser's power panel."""
    from torus_sim.inputs.energy.node_power import draw_now

    return draw_now(model.power, model.platform.capacity, model.down_count(), model.book.running.values(), model) / 1000.0
