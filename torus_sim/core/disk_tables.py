"""Tables that grow with the log (the record's, a long log's job columns), held in memory up to a chunk of rows and then on disk.

A run's record (:mod:`torus_sim.engine.record`) adds a row per completed job, per attempt and per
scheduling pass: on RICC-2010-2 (447,794 jobs) ~125 MB of typed columns by the run's end, on a
10-million-job log ~3 GB. :class:`GrowingTable` keeps a table's last rows in typed arrays (Python's
``array``: float64 ``d``, int64 ``q``, bool ``b``) or, for text, lists; every :data:`SPILL_ROWS` rows it
appends each column to its own file in a temporary folder (raw native-endian values; text as UTF-8
lines) and empties the arrays, so the record held in memory stays under a chunk whatever the log's
length. :class:`TableSnapshot` reads a table as it was when taken (its first ``rows`` rows), one column at
a time (:meth:`TableSnapshot.column`): the metrics read the columns they need, not the whole table. The
folder is removed when no table or snapshot refers to it any longer (or at the interpreter's exit).

The values are those appended, bit for bit: a column read back is the same array whether it went to
disk or not (tests/test_disk_tables.py).

References:
    CQSim (its record written to files as the run goes); issue 61 §1 (memory flat in the log's length).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from array import array
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "FOLDER_PREFIX",
    "PENDING_ROWS",
    "SPILL_ROWS",
    "GrowingTable",
    "SpillFolder",
    "TableSnapshot",
    "remove_stale_folders",
    "remove_stale_once",
]

SPILL_ROWS = 1 << 16
"""Rows of a table kept in memory before they go to disk (65,536: ~10 MB for the 18 job columns)."""


PENDING_ROWS = 512
"""Rows :meth:`GrowingTable.add_row` holds as tuples before they go into the columns together."""

FOLDER_PREFIX = "torus-sim-record-"
"""The record folders' name: ``torus-sim-record-<process id>-<random>`` under the temporary folder."""


class SpillFolder:
    """The temporary folder a run's tables write to, made at the first write (a short run writes nothing).

    Under :func:`tempfile.gettempdir` (``TMPDIR``), named ``torus-sim-record-<process id>-*``; removed when
    the last table or snapshot that holds this object is gone, or at exit (:class:`tempfile.TemporaryDirectory`).
    A process that ends without its exit handlers (killed, or a worker ended by ``os._exit``) leaves its
    folder behind: the first folder a later process makes removes those of processes no longer running
    (:func:`remove_stale_folders`).
    """

    def __init__(self) -> None:
        self._folder: tempfile.TemporaryDirectory | None = None

    def path(self, table: str, column: str) -> Path:
        """The file of ``table``'s ``column`` (the folder made on first use)."""
        if self._folder is None:
            remove_stale_once()
            self._folder = tempfile.TemporaryDirectory(prefix=f"{FOLDER_PREFIX}{os.getpid()}-")
        return Path(self._folder.name) / f"{table}.{column}"


_STALE_CHECKED = False


def remove_stale_once() -> None:
    """:func:`remove_stale_folders` in the temporary directory, the first time a process asks (a glob: well under 1 ms).

    Every run asks at its start (:func:`torus_sim.experiments.runner.run`), so a run too short to write a table of its own still
    clears what a killed run left.
    """
    global _STALE_CHECKED
    if not _STALE_CHECKED:
        _STALE_CHECKED = True
        remove_stale_folders()


def remove_stale_folders(parent: str | Path | None = None) -> list[Path]:
    """Remove the record folders whose process is no longer running (POSIX; elsewhere nothing is removed).

    Args:
        parent: the folder to look in (None: :func:`tempfile.gettempdir`).

    Returns:
        The folders removed.
    """
    if os.name != "posix":
        return []  # no safe "is it running" test without a signal (os.kill(pid, 0) is a Ctrl-C on Windows)
    removed = []
    for folder in Path(parent or tempfile.gettempdir()).glob(f"{FOLDER_PREFIX}*-*"):
        owner = folder.name[len(FOLDER_PREFIX) :].split("-", 1)[0]
        if not owner.isdigit() or not folder.is_dir():
            continue
        try:
            written_at = folder.stat().st_mtime
        except OSError:
            continue  # removed meanwhile
        if not _running(int(owner), written_at):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def _running(pid: int, written_at: float | None = None) -> bool:
    """Whether process ``pid`` exists and may own a folder last written at ``written_at`` (seconds since the epoch).

    POSIX: signal 0 tests without sending anything. Where the process's start time can be read (Linux's ``/proc``), a
    process that started after the folder's last write is another process that was given a recycled id: not its owner.
    """
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True  # someone else's process (or an id too large for a pid): left alone
    started_at = _started_at(pid)
    return started_at is None or written_at is None or started_at <= written_at + 1.0


def _started_at(pid: int) -> float | None:
    """When process ``pid`` started, seconds since the epoch, from Linux's ``/proc`` (None where it cannot be read)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        ticks = int(stat.rsplit(")", 1)[1].split()[19])  # field 22, starttime: clock ticks after boot
        boot = next(int(line.split()[1]) for line in Path("/proc/stat").read_text().splitlines() if line.startswith("btime "))
        return boot + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return None


class GrowingTable:
    """One table of the record: typed columns (and text columns) that rows are appended to.

    Args:
        name: the table's name (its files' prefix).
        columns: the column names, in order.
        types: column -> array type code (``d``, ``q``, ``?`` for bool) for the typed columns.
        text: the text columns (strings without a line break); every other untyped column is a list of
            Python values, and a table with one never goes to disk.
        folder: where chunks go (shared by a run's tables); None: never to disk.
        spill_rows: rows kept in memory before a chunk goes to disk (> 0; None: :data:`SPILL_ROWS` as it is now).

    Attributes:
        memory: column -> the values not yet on disk (an ``array`` or a list): a hot path appends to them
            and then calls :meth:`added`, or hands whole rows to :meth:`add_row`.
        on_disk: rows written to disk so far.
    """

    def __init__(
        self,
        name: str,
        columns: list[str],
        types: dict[str, str],
        text: tuple[str, ...] = (),
        folder: SpillFolder | None = None,
        spill_rows: int | None = None,
    ) -> None:
        self.name = name
        self.types = {column: types[column] for column in columns if column in types}
        self.text = tuple(column for column in columns if column in text)
        self.memory: dict[str, array | list] = {
            column: array("b" if self.types[column] == "?" else self.types[column]) if column in self.types else []
            for column in columns
        }
        spillable = all(column in self.types or column in self.text for column in columns)
        self.folder = folder if spillable else None
        spill_rows = SPILL_ROWS if spill_rows is None else spill_rows
        self.limit = int(spill_rows) if self.folder is not None else -1
        if self.folder is not None and self.limit <= 0:
            raise ValueError(f"spill_rows must be positive, got {spill_rows}")
        self.on_disk = 0
        self._first = self.memory[columns[0]]
        self._pending: list[tuple] = []  # rows from add_row not yet in the columns (see _settle)

    @property
    def columns(self) -> list[str]:
        """The column names, in order."""
        return list(self.memory)

    def __len__(self) -> int:
        if self._pending:
            self._settle()
        return self.on_disk + len(self._first)

    @property
    def count(self) -> int:
        """Rows added so far, the rows of :meth:`add_row` not yet settled included (``len`` settles them first)."""
        return self.on_disk + len(self._first) + len(self._pending)

    def __getstate__(self) -> dict:
        """Pickled with every row in memory and no folder: a copy read elsewhere (another process, later) needs no file."""
        snapshot = TableSnapshot(self, len(self))  # len: the rows of add_row are in the columns
        memory: dict[str, array | list] = {}
        for column in self.memory:
            values = snapshot.column(column)
            if column in self.types:
                code = self.types[column]
                memory[column] = array("b" if code == "?" else code, np.asarray(values).astype(code.replace("?", "b")).tobytes())
            else:
                memory[column] = list(values)
        state = dict(self.__dict__)
        state.update(memory=memory, folder=None, limit=-1, on_disk=0, _first=memory[next(iter(memory))])
        return state

    def add(self, row: dict) -> None:
        """Append one row (column -> value)."""
        if self._pending:
            self._settle()
        for column, values in self.memory.items():
            values.append(row[column])
        if len(self._first) == self.limit:
            self.spill()

    def added(self) -> None:
        """After the caller appended one value to every column of :attr:`memory`: a full chunk goes to disk.

        Rows given to :meth:`add_row` must be in the columns before: a caller that mixes the two settles them
        with ``len(table)`` before appending.
        """
        if len(self._first) == self.limit:
            self.spill()

    def add_row(self, values: tuple) -> None:
        """Append one row given as a tuple of values in column order (the hot path of a row per scheduling pass).

        The rows are held as tuples and moved into the columns :data:`PENDING_ROWS` at a time (one
        ``extend`` per column instead of one ``append`` per value, ~1.5 µs a row less); every reader of the
        table (``len``, :meth:`snapshot`, :meth:`rows`, :meth:`spill`, pickling) and :meth:`add` and
        :meth:`extend` move them first, so what is read is the same in the same order.

        Args:
            values: one value per column, in :attr:`columns` order.
        """
        pending = self._pending
        pending.append(values)
        if len(pending) == PENDING_ROWS:
            self._settle()

    def _settle(self) -> None:
        """Move the rows of :meth:`add_row` into the columns, spilling each full chunk as :meth:`add` does."""
        pending = self._pending
        self._pending = []
        start, count = 0, len(pending)
        while start < count:
            room = self.limit - len(self._first) if self.limit > 0 else count - start
            piece = pending[start : start + room]
            for values, column in zip(self.memory.values(), zip(*piece, strict=True), strict=True):
                values.extend(column)
            start += len(piece)
            if len(self._first) == self.limit:
                self.spill()

    def extend(self, columns: dict[str, np.ndarray]) -> None:
        """Append rows given as one array per typed column (every column, the same length); full chunks go to disk.

        Raises:
            KeyError: a column missing; ValueError: lengths differ, or a column is not typed.
        """
        if self._pending:
            self._settle()
        lengths = {len(columns[column]) for column in self.memory}
        if len(lengths) > 1:
            raise ValueError(f"{self.name}: columns of different lengths {sorted(lengths)}")
        for column, values in self.memory.items():
            code = self.types.get(column)
            if code is None:
                raise ValueError(f"{column!r} of the {self.name} table is not a typed column")
            values.frombytes(np.ascontiguousarray(columns[column], dtype=code.replace("?", "b")).tobytes())
        if self.limit > 0 and len(self._first) >= self.limit:
            self.spill()

    def spill(self) -> None:
        """Append the rows held in memory to the columns' files and empty the arrays (nothing when none)."""
        if self._pending:
            self._settle()  # which spills full chunks itself
        if self.folder is None or not len(self._first):
            return
        rows = len(self._first)
        for column, values in self.memory.items():
            with open(self.folder.path(self.name, column), "ab") as handle:
                if column in self.types:
                    values.tofile(handle)
                else:
                    handle.write("".join(f"{value}\n" for value in values).encode("utf-8"))
            del values[:]
        self.on_disk += rows

    def snapshot(self) -> TableSnapshot:
        """The table as it is now, read column by column later (rows added after are not in it)."""
        return TableSnapshot(self, len(self))

    def rows(self, first: int, last: int, columns: tuple[str, ...] | None = None) -> dict[str, np.ndarray | list]:
        """Rows ``first`` to ``last - 1`` of every column, or of ``columns`` only (typed: numpy arrays; text and other: lists).

        Raises:
            KeyError: a column of ``columns`` the table does not have.
        """
        settled = self.on_disk + len(self._first)
        if first >= settled and self._pending:  # rows of add_row not settled yet (a step's few): read from the rows
            return self._pending_rows(first - settled, last - settled, columns)
        if self._pending:
            self._settle()
        snapshot = TableSnapshot(self, last)
        return {column: snapshot.column(column, first) for column in (self.memory if columns is None else columns)}

    def _pending_rows(self, first: int, last: int, columns: tuple[str, ...] | None) -> dict[str, np.ndarray | list]:
        """:meth:`rows` of rows ``first`` to ``last - 1`` of the pending ones (as typed as the columns would give them)."""
        positions = {column: index for index, column in enumerate(self.memory)}
        piece = self._pending[first:last]
        found = {}
        for column in positions if columns is None else columns:
            index = positions[column]  # KeyError: no column of that name, as rows() says
            values = [row[index] for row in piece]
            code = self.types.get(column)
            if code is None:
                found[column] = values
            else:
                typed = np.array(values, dtype=np.dtype(code.replace("?", "b")))
                found[column] = typed.astype(bool, copy=False) if code == "?" else typed
        return found


class TableSnapshot:
    """A table's first ``rows`` rows, read one column at a time (from disk and memory).

    Args:
        table: the :class:`GrowingTable`.
        rows: how many rows (at most its length when taken).
        shared: the table takes no more rows (the run is over): a column held only in memory is read as a
            view of its array rather than a copy.
    """

    def __init__(self, table: GrowingTable, rows: int, shared: bool = False) -> None:
        self.table = table
        self.rows = int(rows)
        self.shared = shared

    def __len__(self) -> int:
        return self.rows

    @property
    def columns(self) -> list[str]:
        """The column names, in order."""
        return self.table.columns

    def __contains__(self, column: str) -> bool:
        return column in self.table.memory

    def __getitem__(self, column: str) -> np.ndarray:
        """One column as a numpy array (text as an object array)."""
        values = self.column(column)
        return values if isinstance(values, np.ndarray) else np.array(values, dtype=object)

    def column(self, column: str, first: int = 0, last: int | None = None) -> np.ndarray | list:
        """Rows ``first`` to ``last - 1`` of one column (``last`` None: to the snapshot's end).

        Typed columns as a numpy array (float64, int64, bool), text and other columns as a list.

        Raises:
            KeyError: no column of that name.
        """
        table = self.table
        values = table.memory[column]
        code = table.types.get(column)
        on_disk = table.on_disk  # the table may have gone on since the snapshot: its rows on disk stay where they are
        end = self.rows if last is None else min(max(last, 0), self.rows)
        first = min(max(first, 0), end)
        from_disk = max(min(end, on_disk) - first, 0)
        start, stop = max(first - on_disk, 0), max(end - on_disk, 0)
        if code is not None:
            dtype = np.dtype(code.replace("?", "b"))
            if from_disk:  # read into the result: the rows on disk and then those in memory, no second copy
                memory = np.empty(from_disk + (stop - start), dtype=dtype)
                with open(table.folder.path(table.name, column), "rb") as handle:
                    handle.seek(first * dtype.itemsize)
                    read = handle.readinto(memoryview(memory[:from_disk]).cast("B"))
                if read != from_disk * dtype.itemsize:
                    raise OSError(f"{table.name}.{column}: {read} bytes read of {from_disk * dtype.itemsize}")
                memory[from_disk:] = np.frombuffer(values, dtype=dtype)[start:stop]
            elif self.shared and start == 0 and stop == len(values):
                memory = np.frombuffer(values, dtype=dtype)  # the run is over: a view of the array, not a copy
            else:
                memory = np.frombuffer(values[start:stop], dtype=dtype)  # a slice of an array is a new array
            return memory.astype(bool, copy=False) if code == "?" else memory
        tail = list(values[start:stop])
        if not from_disk:
            return tail
        lines = table.folder.path(table.name, column).read_text(encoding="utf-8").split("\n")[first : first + from_disk]
        shared: dict[str, str] = {}  # one object per distinct text (an outcome, a partition's supernodes)
        return [shared.setdefault(line, line) for line in lines] + tail

    def take(self, column: str, rows: np.ndarray) -> np.ndarray:
        """A typed column's values at the row positions ``rows`` (int64, each in ``[0, rows)``), in that order.

        The rows are taken :data:`SPILL_ROWS` at a time, those on disk through a memory map made for that piece
        and closed after it: only the pages they lie on are read, and none stays mapped (a whole column in job-id
        order from a 10-million-row record holds the result and one piece, not the column twice).

        Raises:
            KeyError: no column of that name; ValueError: a text column.
        """
        table = self.table
        code = table.types.get(column)
        if code is None:
            raise ValueError(f"{column!r} of the {table.name} table is not a typed column")
        rows = np.asarray(rows, dtype=np.int64)
        dtype = np.dtype(code.replace("?", "b"))
        on_disk = min(table.on_disk, self.rows)
        out = np.empty(len(rows), dtype=dtype)
        memory = np.frombuffer(table.memory[column], dtype=dtype)
        for start in range(0, len(rows), SPILL_ROWS):  # a piece at a time: no whole-length temporaries
            piece = rows[start : start + SPILL_ROWS]
            part = out[start : start + len(piece)]
            below = piece < on_disk
            if below.any():  # mapped for this piece only: its pages leave the process with it
                mapped = np.memmap(table.folder.path(table.name, column), dtype=dtype, mode="r", shape=(on_disk,))
                part[below] = mapped[piece[below]]
                del mapped
            if not below.all():
                part[~below] = memory[piece[~below] - table.on_disk]
        del memory
        return out.astype(bool, copy=False) if code == "?" else out

    def frame(self, columns: list[str] | None = None) -> pd.DataFrame:
        """The snapshot (or some of its columns) as a DataFrame."""
        import pandas as pd  # only where a table is built

        names = self.columns if columns is None else columns
        return pd.DataFrame({column: self.column(column) for column in names}, copy=False)
