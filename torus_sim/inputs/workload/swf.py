"""Reader for the Standard Workload Format (SWF) of the Parallel Workloads Archive.

An SWF file is a header of ``;``-comment lines (``; MaxNodes: 128``, ``; UnixStartTime: ...``)
followed by one line per job with 18 whitespace-separated numeric fields; ``-1`` means unknown.
Compressed files (gzip, xz, bzip2) are read transparently; a truncated or corrupt one is refused whole.

A line that cannot be parsed (wrong field count, a field that is not a number) stops the read
with a :class:`~torus_sim.core.errors.WorkloadFormatError` naming the file and line. Lines that parse
but describe an unusable job (unknown size or runtime) are not errors: the conversion to jobs
(:func:`torus_sim.inputs.workload.jobs.jobs_from_swf`) skips and counts them.

References:
    Feitelson, Tsafrir, Krakov, "Experience with using the Parallel Workloads Archive",
    JPDC 74(10), 2014; https://www.cs.huji.ac.il/labs/parallel/workload/swf.html
"""

from __future__ import annotations

import os
import warnings
from collections import OrderedDict
from pathlib import Path
from typing import NamedTuple

import numpy as np

from torus_sim.core.disk_tables import GrowingTable, SpillFolder
from torus_sim.core.errors import WorkloadFormatError
from torus_sim.core.files import check_text_input, file_sha256, input_lines

__all__ = ["MAX_COUNT", "MAX_SECONDS", "SWF_FIELDS", "SwfRecord", "SwfTrace", "read_swf", "trace_table"]

SWF_FIELDS = (
    "job_id",
    "submit_time",
    "wait_time",
    "run_time",
    "allocated_processors",
    "average_cpu_time",
    "used_memory",
    "requested_processors",
    "requested_time",
    "requested_memory",
    "status",
    "user_id",
    "group_id",
    "executable",
    "queue",
    "partition",
    "preceding_job",
    "think_time",
)
"""The 18 SWF fields, in file order (times in seconds, memory in KB per processor)."""

_FLOAT_FIELDS = {
    "submit_time",
    "wait_time",
    "run_time",
    "average_cpu_time",
    "used_memory",
    "requested_time",
    "requested_memory",
    "think_time",
}
_FIELD_INDEX = {name: index for index, name in enumerate(SWF_FIELDS)}
_FLOAT_INDEX = [index for index, name in enumerate(SWF_FIELDS) if name in _FLOAT_FIELDS]
_COUNT_INDEX = [index for index, name in enumerate(SWF_FIELDS) if name not in _FLOAT_FIELDS]


CHUNK_LINES = 50_000
"""Job lines parsed at a time by :func:`read_swf` (their text is all it holds at once)."""

MAX_SECONDS = 1e10
"""The largest magnitude a time field may have, seconds (about 317 years): a larger value is no job's."""

MAX_COUNT = 2**53
"""The largest magnitude an integer field may have (above it a float no longer holds every integer)."""


class SwfRecord(NamedTuple):
    """One SWF job line, every field as in the file (``-1`` = unknown).

    Times (``submit_time``, ``wait_time``, ``run_time``, ``requested_time``, ``think_time``) are
    seconds; ``submit_time`` counts from the header's ``UnixStartTime``.
    """

    job_id: int
    submit_time: float
    wait_time: float
    run_time: float
    allocated_processors: int
    average_cpu_time: float
    used_memory: float
    requested_processors: int
    requested_time: float
    requested_memory: float
    status: int
    user_id: int
    group_id: int
    executable: int
    queue: int
    partition: int
    preceding_job: int
    think_time: float


class SwfTrace:
    """A parsed SWF file: its header and its job lines as columns, a chunk in memory and the rest on disk.

    The job lines are kept in a :class:`~torus_sim.core.disk_tables.GrowingTable` (one float64 column per field
    of :attr:`fields`, and each line's file line number): a log longer than
    :data:`~torus_sim.core.disk_tables.SPILL_ROWS` lines goes to a temporary folder as it is read, so a
    10-million-line log is not held in memory (issue 61 §1). :meth:`column` reads one field whole;
    :meth:`pieces` reads the lines a piece at a time (the cleaning rules run piece by piece).

    Args:
        path: the file read (or a converter's name for its source).
        sha256: hex digest of the file's bytes as stored (compressed if gzip); "" for a generated trace.
        header: ``; Key: value`` header lines, keys as written (``MaxNodes``, ``Acknowledge``, ...);
            a key that appears on several lines keeps all values joined by newlines.
        table: float ``(n, k)``, the job lines in file order, one column per field of ``fields`` (a
            converter's trace); None when ``stored`` holds them (or no job line).
        header_lines: the file line of each header key (its first line), for messages.
        line_numbers: int ``(n,)``, the file line of each job line (None: a converter's trace, row + 1).
        fields: the fields kept, in column order: every one of :data:`SWF_FIELDS` unless the reader was
            asked for fewer (:func:`read_swf`'s ``fields``: the workload's cleaning reads 7).
        stored: the job lines already in a table with a float64 column per field and an int64 ``line``
            column (:func:`read_swf`'s).
    """

    def __init__(
        self,
        path: Path,
        sha256: str,
        header: dict[str, str] | None = None,
        table: np.ndarray | None = None,
        header_lines: dict[str, int] | None = None,
        line_numbers: np.ndarray | None = None,
        fields: tuple[str, ...] = tuple(SWF_FIELDS),
        stored: GrowingTable | None = None,
    ) -> None:
        self.path = path
        self.sha256 = sha256
        self.header = {} if header is None else header
        self.header_lines = {} if header_lines is None else header_lines
        self.fields = tuple(fields)
        if stored is None:
            stored = trace_table(self.fields)
            table = np.empty((0, len(self.fields))) if table is None else np.asarray(table, dtype=float)
            rows = table.shape[0]
            lines = np.arange(1, rows + 1) if line_numbers is None else np.asarray(line_numbers)
            stored.extend({**{name: table[:, index] for index, name in enumerate(self.fields)}, "line": lines})
        self._stored = stored

    def __repr__(self) -> str:
        return f"SwfTrace({str(self.path)!r}, {len(self):,} job lines, fields {', '.join(self.fields)})"

    @property
    def table(self) -> np.ndarray:
        """Float ``(n, k)``: every job line in file order, one column per field of :attr:`fields` (read whole)."""
        snapshot = self._stored.snapshot()
        return np.column_stack([snapshot.column(name) for name in self.fields]).reshape(len(self), len(self.fields))

    @property
    def line_numbers(self) -> np.ndarray:
        """Int64 ``(n,)``: the file line of each job line (a converter's trace: its 1-based position)."""
        return self._stored.snapshot().column("line")

    def line_of(self, row: int) -> int:
        """The file line of job line ``row``."""
        return int(self._stored.snapshot().take("line", np.array([row]))[0])

    @classmethod
    def from_records(cls, path: Path, sha256: str, header: dict[str, str], records: list[SwfRecord]) -> SwfTrace:
        """A trace of the given records (a converter's, e.g. a Batsim workload's), in their order."""
        table = np.array(records, dtype=float).reshape(len(records), len(SWF_FIELDS))
        return cls(path=path, sha256=sha256, header=header, table=table)

    def __len__(self) -> int:
        """Job lines."""
        return len(self._stored)

    def pieces(self, rows: int):
        """The job lines ``rows`` at a time, in file order: ``(first row, {field: float (m,)})`` per piece.

        Args:
            rows: lines per piece (> 0); the last piece may be shorter. A trace of no line gives one empty piece.
        """
        snapshot = self._stored.snapshot()
        total = len(snapshot)
        for first in range(0, max(total, 1), rows):
            last = min(first + rows, total)
            yield first, {name: snapshot.column(name, first, last) for name in self.fields}

    @property
    def records(self) -> list[SwfRecord]:
        """The job lines as :class:`SwfRecord` tuples (built on each call from :attr:`table`).

        Raises:
            ValueError: the trace holds only some of the fields (:attr:`fields`).
        """
        if self.fields != tuple(SWF_FIELDS):
            raise ValueError(f"{self.path}: read with {len(self.fields)} of the 18 SWF fields; records need every one")
        columns = [self.table[:, index].tolist() for index in range(len(SWF_FIELDS))]
        for index, name in enumerate(SWF_FIELDS):
            if name not in _FLOAT_FIELDS:
                columns[index] = [int(value) for value in columns[index]]
        return [SwfRecord(*values) for values in zip(*columns, strict=True)]

    def column(self, name: str) -> np.ndarray:
        """One field of every job line, float ``(n,)`` (read whole: from disk for a long log).

        Raises:
            KeyError: ``name`` is not one of :data:`SWF_FIELDS`, or not one the trace was read with (:attr:`fields`).
        """
        if name not in _FIELD_INDEX:
            raise KeyError(f"{name!r} is not an SWF field; choose from {', '.join(SWF_FIELDS)}")
        if name not in self.fields:
            raise KeyError(f"{name!r}: the trace of {self.path} was read with the fields {', '.join(self.fields)} only")
        return self._stored.snapshot().column(name)

    def header_int(self, key: str) -> int | None:
        """An integer header field (``MaxNodes``, ``MaxProcs``, ``UnixStartTime``), or None.

        Raises:
            WorkloadFormatError: the field is present but not an integer.
        """
        if key not in self.header:
            return None
        try:
            return int(self.header[key].split()[0])
        except (ValueError, IndexError):
            line = self.header_lines.get(key, 0)
            raise WorkloadFormatError(self.path, line, f"header {key!r} is not an integer: {self.header[key]!r}") from None


def _parse_line(path: Path, line_no: int, text: str) -> SwfRecord:
    parts = text.split()
    if len(parts) != len(SWF_FIELDS):
        raise WorkloadFormatError(path, line_no, f"expected {len(SWF_FIELDS)} fields, found {len(parts)}")
    values = []
    for name, raw in zip(SWF_FIELDS, parts, strict=True):
        try:
            number = float(raw)
        except ValueError:
            raise WorkloadFormatError(path, line_no, f"field {name!r} is not a number: {raw!r}") from None
        if number != number or number in (float("inf"), float("-inf")):
            raise WorkloadFormatError(path, line_no, f"field {name!r} is not finite: {raw!r}")
        if name in _FLOAT_FIELDS:
            if abs(number) > MAX_SECONDS:
                raise WorkloadFormatError(
                    path, line_no, f"field {name!r} = {raw} s is beyond any job's (|value| <= {MAX_SECONDS:.0e} s, 317 years)"
                )
            values.append(number)
        else:
            if abs(number) > MAX_COUNT:
                raise WorkloadFormatError(path, line_no, f"field {name!r} = {raw} is beyond any log's (|value| <= 2**53)")
            if not number.is_integer():
                raise WorkloadFormatError(path, line_no, f"field {name!r} must be an integer: {raw!r}")
            values.append(int(number))
    return SwfRecord(*values)


def read_swf(path: str | Path, fields: tuple[str, ...] | None = None) -> SwfTrace:
    """Read an SWF file (plain or gzip).

    The job lines are parsed :data:`CHUNK_LINES` at a time by numpy (``loadtxt``, the same correctly
    rounded conversion as Python's ``float``) and checked as columns; a chunk that fails that check is
    read again line by line, which stops at the first bad line and names it (so the error is the same
    either way: the chunks before it passed). Only one chunk's text is held at a time: a 450k-job log
    peaked at ~300 MB of line strings before its 65 MB table. The parsed lines go to the trace's table
    (:func:`trace_table`): past :data:`~torus_sim.core.disk_tables.SPILL_ROWS` lines, to disk as they are read.

    A file read a second time in one process (a sweep's worker, a notebook, the tests) keeps its parsed columns
    when it has at most :data:`KEPT_LINES` job lines, and later reads of the same bytes (by SHA-256) and fields
    build their trace from them instead of parsing the text again (SDSC-SP2: 0.6 s a read, 5 ms to hash; each
    run of its first 1,000 jobs read the whole log). A single run keeps nothing; at most
    :data:`KEPT_LOGS` files are kept, the least recently read leaving first; every trace returned is its own
    (its header, its table).

    Args:
        path: the file.
        fields: the fields to keep (each of :data:`SWF_FIELDS`, in any order; None: all 18). Every line is
            still checked whole; only these columns are held (the workload's cleaning reads 7: 56 bytes a
            job instead of 144, 25 MB of RICC-2010-2's 65).

    Returns:
        The header and every job line.

    Raises:
        FileNotFoundError: no such file.
        InputFileError: a directory, or a truncated or corrupt gzip (or xz, bzip2) file.
        WorkloadFormatError: a job line without 18 numeric fields, a field that is not finite, or a
            value no job can have (a time beyond :data:`MAX_SECONDS`), naming file and line.
    """
    path = Path(path)
    kept = tuple(SWF_FIELDS) if fields is None else tuple(dict.fromkeys(fields))
    unknown = [name for name in kept if name not in _FIELD_INDEX]
    if unknown:
        raise KeyError(f"{', '.join(map(repr, unknown))}: not SWF fields; choose from {', '.join(SWF_FIELDS)}")
    if os.path.isfile(path):  # a binary or sparse file refused from its first bytes, before its bytes are hashed
        check_text_input(path, "workload")
    this_read = _read_key(path, kept)
    if this_read is not None and this_read in _PARSED:
        _PARSED.move_to_end(this_read)
        return _PARSED[this_read].trace(path)
    keep = this_read is not None and this_read in _READ_ONCE  # the second read of this file here: keep its columns
    if this_read is not None:
        _READ_ONCE[this_read] = None
    chunks: list[dict[str, np.ndarray]] = []
    stored = trace_table(kept)
    header: dict[str, str] = {}
    header_lines: dict[str, int] = {}
    texts: list[str] = []
    numbers: list[int] = []  # the file lines of texts

    def parse_chunk() -> None:
        nonlocal keep
        table = _parse_table(texts)
        if table is None:  # some line is bad: find and name the first one
            table = np.array(
                [_parse_line(path, line_no, text) for line_no, text in zip(numbers, texts, strict=True)], dtype=float
            )
        table = table.reshape(len(texts), len(SWF_FIELDS))
        columns = {**{name: table[:, _FIELD_INDEX[name]] for name in kept}, "line": np.array(numbers, dtype=np.int64)}
        stored.extend(columns)
        if keep:
            chunks.append({name: np.ascontiguousarray(values) for name, values in columns.items()})
            keep = sum(len(chunk["line"]) for chunk in chunks) <= KEPT_LINES
            if not keep:  # too long to keep: its columns go now, not at the end of the read
                chunks.clear()
        texts.clear()
        numbers.clear()

    for line_no, line in enumerate(input_lines(path, "workload"), start=1):
        text = line.strip()
        if not text:
            continue
        if text.startswith(";"):
            key, sep, value = text[1:].partition(":")
            if sep:
                key, value = key.strip(), value.strip()
                header[key] = f"{header[key]}\n{value}" if key in header else value
                header_lines.setdefault(key, line_no)
            continue
        texts.append(text)
        numbers.append(line_no)
        if len(texts) == CHUNK_LINES:
            parse_chunk()
    if texts:
        parse_chunk()
    sha256 = this_read[0] if this_read is not None else file_sha256(path)
    if keep:
        _PARSED[this_read] = _ParsedLog(sha256, dict(header), dict(header_lines), kept, chunks)
        while len(_PARSED) > KEPT_LOGS:
            _PARSED.popitem(last=False)
    return SwfTrace(path, sha256, header, header_lines=header_lines, fields=kept, stored=stored)


KEPT_LINES = 250_000
"""Job lines of the largest SWF file whose parsed columns a process keeps for its next reads (16 MB for the 7
cleaning fields and the line numbers; RICC-2010-2's 447,794 lines are parsed each time)."""

KEPT_LOGS = 4
"""SWF files whose parsed columns a process keeps at once (the least recently read leaves first)."""

_READ_ONCE: dict[tuple, None] = {}  # (SHA-256, fields) of the files read in this process
_PARSED: OrderedDict[tuple, _ParsedLog] = OrderedDict()


class _ParsedLog(NamedTuple):
    """An SWF file's parsed header and columns, kept by :func:`read_swf` for the process's next reads of it."""

    sha256: str
    header: dict[str, str]
    header_lines: dict[str, int]
    fields: tuple[str, ...]
    chunks: list[dict[str, np.ndarray]]

    def trace(self, path: Path) -> SwfTrace:
        """A new trace of the kept columns (its own table and header: a reader may change either)."""
        stored = trace_table(self.fields)
        for chunk in self.chunks:
            stored.extend(chunk)
        return SwfTrace(
            path, self.sha256, dict(self.header), header_lines=dict(self.header_lines), fields=self.fields, stored=stored
        )


def _read_key(path: Path, fields: tuple[str, ...]) -> tuple | None:
    """What tells one read of an SWF file from another: the SHA-256 of its bytes and the fields kept.

    By content, not by modification time (two writes of a file within the clock's tick keep the same time). None for
    what is not a regular file: a missing path (the reader's own error follows), a pipe (read once).
    """
    if not os.path.isfile(path):
        return None
    try:
        return (file_sha256(path), fields)
    except OSError:
        return None


def trace_table(fields: tuple[str, ...]) -> GrowingTable:
    """An empty table for job lines: a float64 column per field of ``fields`` and an int64 ``line`` (the file line).

    Rows past :data:`~torus_sim.core.disk_tables.SPILL_ROWS` go to a temporary folder of their own (removed with the table).
    """
    types = {name: "d" for name in fields} | {"line": "q"}
    return GrowingTable("swf", [*fields, "line"], types, folder=SpillFolder())


def _parse_table(lines: list[str]) -> np.ndarray | None:
    """The job lines as a float ``(n, 18)`` table, or None when any line breaks a rule of :func:`_parse_line`."""
    if not lines:
        return np.empty((0, len(SWF_FIELDS)))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # numpy warns (not raises) on some malformed input
            table = np.loadtxt(lines, dtype=float, comments=None, ndmin=2)
    except (ValueError, UserWarning):
        return None
    if table.shape != (len(lines), len(SWF_FIELDS)) or not np.isfinite(table).all():
        return None
    times = table[:, _FLOAT_INDEX]
    counts = table[:, _COUNT_INDEX]
    if (np.abs(times) > MAX_SECONDS).any() or (np.abs(counts) > MAX_COUNT).any() or (counts != np.round(counts)).any():
        return None
    return table
