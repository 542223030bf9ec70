"""A batch system's accounting as a Standard Workload Format log: one job per line, the rest beside it.

:func:`convert` reads Slurm's ``sacct --parsable2`` output (:mod:`torus_sim.outputs.formats.accounting.sacct`) or a PBS /
Torque accounting log (:mod:`torus_sim.outputs.formats.accounting.pbs`) into :class:`AccountingJob` records, then
:func:`swf_text` writes them as SWF 2.2 and :func:`resources_table` writes what SWF has no field for
(nodes, GPUs, memory, the source's job id) as a table keyed by the SWF job number. A
:class:`ConversionReport` counts every line: what became a job, with which status, and what was dropped
and why, with the line numbers.

SWF fields written (the others are -1): 1 job number (1, 2, ... in submit order), 2 submit time
(seconds since the first submission, whose Unix time is the header's ``UnixStartTime``), 3 wait, 4 run
time, 5 allocated processors, 8 requested processors, 9 requested time, 10 requested memory (KB per
requested processor), 11 status (1 completed, 0 failed or killed at its limit, 5 cancelled), 12 user,
13 group, 14 executable (the job name), 15 queue, 16 partition. Users, groups, job names, queues and
partitions are renumbered 1, 2, ... in order of first submission, consistently over the file; the
report names the queues and partitions (a site's, not a person's), never the users. A job that never
started (cancelled while it waited) is written with wait, run time and allocated processors -1, as the
archive does: a replay skips it and counts it.

References:
    Feitelson, Tsafrir, Krakov, "Experience with using the Parallel Workloads Archive", JPDC 74(10), 2014,
    and https://www.cs.huji.ac.il/labs/parallel/workload/swf.html (the fields, status values and header);
    Slurm's sacct manual (https://slurm.schedmd.com/sacct.html); the PBS Professional Reference Guide,
    "Accounting Log", and Torque's "Accounting Records".
"""

from __future__ import annotations

import io
import re
from collections import Counter
from pathlib import Path

from torus_sim.core.errors import ConfigurationError
from torus_sim.core.files import atomic_write, file_sha256, input_lines, require_file, sidecar_path
from torus_sim.core.version import __version__
from torus_sim.outputs.formats.accounting.records import AccountingJob, Conversion, ConversionReport

__all__ = [
    "FORMATS",
    "AccountingJob",
    "ConversionReport",
    "Conversion",
    "convert",
    "detect_format",
    "read_accounting",
    "report_text",
    "resources_table",
    "swf_text",
]

FORMATS = ("sacct", "pbs")
"""The accounting formats :func:`convert` reads (``--from``)."""

_PBS_LINE = re.compile(r"^\d\d/\d\d/\d{4} \d\d:\d\d:\d\d;[A-Za-z];")
_SHOWN_LINES = 8
"""Line numbers the report lists per reason (the count is always whole)."""


def _lines(items: list[int]) -> str:
    """``line 3`` / ``lines 3, 7, 9`` / ``lines 3, 7, ... (12 in all)``."""
    items = sorted(set(items))
    shown = ", ".join(str(line) for line in items[:_SHOWN_LINES])
    more = f", ... ({len(items)} in all)" if len(items) > _SHOWN_LINES else ""
    return f"line {shown}" if len(items) == 1 else f"lines {shown}{more}"


def detect_format(path: Path) -> str:
    """The accounting format of ``path`` from its first non-blank line.

    Returns:
        ``"pbs"`` for a line ``MM/DD/YYYY HH:MM:SS;X;...``, ``"sacct"`` for a line with ``|``.

    Raises:
        ConfigurationError: neither (the sentence asks for ``--from``).
    """
    for line in input_lines(path, "accounting"):
        if not line.strip():
            continue
        if _PBS_LINE.match(line):
            return "pbs"
        if "|" in line:
            return "sacct"
        break
    raise ConfigurationError(
        f"{path}: cannot tell the accounting format from its first line (neither sacct's '|'-separated fields nor a "
        f"PBS record 'MM/DD/YYYY HH:MM:SS;E;...'): name it with --from {' or --from '.join(FORMATS)}"
    )


def read_accounting(
    path: str | Path, source: str | None = None, fields: list[str] | None = None, timezone: str = "UTC"
) -> Conversion:
    """Read an accounting file into numbered jobs and a report.

    Args:
        path: the file (gzip, xz or bzip2 compressed files are read too).
        source: ``"sacct"``, ``"pbs"``, or None to tell from the first line (:func:`detect_format`).
        fields: sacct only: the field names of a file without a header line, in order (sacct's ``--format``).
        timezone: the IANA time zone the file's wall-clock times are in (sacct's times, PBS's line stamps).

    Returns:
        The :class:`Conversion`: jobs sorted by submission (ties in file order), names renumbered.

    Raises:
        FileNotFoundError, InputFileError: no readable file.
        AccountingFormatError: a malformed line (the message names file and line).
        ConfigurationError: an unknown ``source`` or time zone, or a file of neither format.
    """
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    path = require_file(path, "accounting")
    if source is None:
        source = detect_format(path)
    if source not in FORMATS:
        raise ConfigurationError(f"unknown accounting format {source!r}: known are {', '.join(FORMATS)}")
    try:
        zone = ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError):
        raise ConfigurationError(f"unknown time zone {timezone!r}: give an IANA name such as UTC or Europe/Paris") from None
    if source == "sacct":
        from torus_sim.outputs.formats.accounting import sacct

        jobs, report = sacct.read_sacct(path, fields=fields, zone=zone)
    else:
        if fields:
            raise ConfigurationError("--fields names sacct's columns: a PBS accounting log has none")
        from torus_sim.outputs.formats.accounting import pbs

        jobs, report = pbs.read_pbs(path, zone=zone)
    order = sorted(range(len(jobs)), key=lambda index: (jobs[index].submit, index))
    jobs = [jobs[index] for index in order]
    numbers: dict[str, dict[str, int]] = {name: {} for name in ("user", "group", "executable", "queue", "partition")}
    for job in jobs:
        for name, table in numbers.items():
            value = getattr(job, name)
            if value is not None and value not in table:
                table[value] = len(table) + 1
    return Conversion(jobs=jobs, report=report, numbers=numbers, sha256=file_sha256(path))


def _number(value: float | None) -> str:
    """An SWF field: -1 for unknown, whole numbers without a decimal point."""
    if value is None:
        return "-1"
    rounded = round(value)
    return str(int(rounded)) if abs(value - rounded) < 1e-9 else f"{value:.3f}".rstrip("0")


def _swf_line(number: int, job: AccountingJob, conversion: Conversion, origin: int) -> str:
    """One SWF line for ``job`` (its fields per the module's docstring)."""
    requested = job.requested_processors or job.processors
    started = job.started
    memory = None
    if job.requested_memory_kib is not None and requested:
        memory = job.requested_memory_kib / requested
    named = {name: conversion.numbers[name].get(getattr(job, name)) for name in conversion.numbers}
    fields = [
        number,
        job.submit - origin,
        max(job.start - job.submit, 0.0) if started else None,
        job.end - job.start if started else None,
        job.processors if started else None,
        None,
        None,
        requested,
        job.requested_time,
        memory,
        job.status,
        named["user"],
        named["group"],
        named["executable"],
        named["queue"],
        named["partition"],
        None,
        None,
    ]
    return " ".join(_number(value) for value in fields)


def swf_text(conversion: Conversion, max_procs: int | None = None, max_nodes: int | None = None) -> str:
    """The converted jobs as SWF 2.2 text.

    Args:
        conversion: from :func:`read_accounting`.
        max_procs: the machine's processors, written as ``MaxProcs`` (an accounting log does not say).
        max_nodes: the machine's nodes, written as ``MaxNodes``.

    Returns:
        The header (``Version``, ``Computer``, ``Conversion``, ``UnixStartTime``, ``MaxJobs``, ``MaxRecords``,
        ``MaxProcs`` / ``MaxNodes`` when given, ``Queues`` and ``Partitions`` with their numbers, ``Note`` lines
        with the report's counts) and one line per job.
    """
    report = conversion.report
    origin = conversion.start_time()
    computers = sorted({job.computer for job in conversion.jobs if job.computer})
    header = ["; Version: 2.2"]
    if computers:
        header.append(f"; Computer: {', '.join(computers)}")
    header.append(f"; Conversion: torus-sim {__version__} convert --from {report.source} (SHA-256 {conversion.sha256})")
    header.append(f"; UnixStartTime: {origin}")
    header.append(f"; MaxJobs: {len(conversion.jobs)}")
    header.append(f"; MaxRecords: {len(conversion.jobs)}")
    if max_nodes:
        header.append(f"; MaxNodes: {max_nodes}")
    if max_procs:
        header.append(f"; MaxProcs: {max_procs}")
    for key, name in (("Queues", "queue"), ("Partitions", "partition")):
        if conversion.numbers[name]:
            header.append(f"; {key}: " + ", ".join(f"{number} {value}" for value, number in conversion.numbers[name].items()))
    for line in report_text(conversion).splitlines()[1:]:
        header.append(f"; Note: {line.strip()}")
    body = [_swf_line(index + 1, job, conversion, origin) for index, job in enumerate(conversion.jobs)]
    return "\n".join(header + body) + "\n"


RESOURCE_COLUMNS = (
    ("job_id", "the SWF job number"),
    ("source_id", "the batch system's job id"),
    ("state", "the batch system's word for how it ended"),
    ("nodes", "nodes allocated (requested when it never ran)"),
    ("processors", "processors allocated"),
    ("gpus", "GPUs allocated (requested when it never ran)"),
    ("requested_memory_kib", "the job's whole memory request, KiB"),
    ("used_memory_kib", "its largest resident set, KiB"),
    ("queue", "the queue's name (SWF field 15's number in the header's Queues)"),
    ("partition", "the partition's name (SWF field 16's number in the header's Partitions)"),
)
"""The resources table's columns (name, meaning); empty where the log does not say."""


def resources_table(conversion: Conversion):
    """What SWF has no field for, one row per written job: a pandas DataFrame with :data:`RESOURCE_COLUMNS`.

    Returns:
        DataFrame: ``job_id`` 1.., nullable integers for counts, floats for memory, strings for names.
    """
    import pandas as pd

    rows = {
        "job_id": range(1, len(conversion.jobs) + 1),
        "source_id": [job.source_id for job in conversion.jobs],
        "state": [job.state for job in conversion.jobs],
        "nodes": pd.array([job.nodes for job in conversion.jobs], dtype="Int64"),
        "processors": pd.array([job.processors for job in conversion.jobs], dtype="Int64"),
        "gpus": pd.array([job.gpus for job in conversion.jobs], dtype="Int64"),
        "requested_memory_kib": pd.array([job.requested_memory_kib for job in conversion.jobs], dtype="Float64"),
        "used_memory_kib": pd.array([job.used_memory_kib for job in conversion.jobs], dtype="Float64"),
        "queue": [job.queue for job in conversion.jobs],
        "partition": [job.partition for job in conversion.jobs],
    }
    return pd.DataFrame(rows, columns=[name for name, _ in RESOURCE_COLUMNS])


def report_text(conversion: Conversion) -> str:
    """The report as lines a person reads: the file, what was read, written (by status) and dropped (by reason).

    Returns:
        Text; its first line names the file, the others start with two spaces.
    """
    report = conversion.report
    jobs = conversion.jobs
    read = f"{report.lines:,} line{'' if report.lines == 1 else 's'}"
    lines = [f"{Path(report.path).name} ({report.source}, {read}, SHA-256 {conversion.sha256[:16]}...)"]
    records = ", ".join(f"{count:,} {kind}{'' if count == 1 else 's'}" for kind, count in sorted(report.records.items()))
    lines.append(f"  read: {records or 'no record'}")
    states = Counter((job.state, job.status) for job in jobs)
    by_state = ", ".join(f"{state} {count:,} (status {status})" for (state, status), count in sorted(states.items()))
    lines.append(f"  written: {len(jobs):,} job{'' if len(jobs) == 1 else 's'}" + (f": {by_state}" if jobs else ""))
    unstarted = sum(1 for job in jobs if not job.started)
    if unstarted:
        lines.append(f"  of which {unstarted:,} never started (wait, run time and processors -1: a replay skips them)")
    for reason, where in report.dropped.items():
        lines.append(f"  dropped: {len(where):,} {reason} ({_lines(where)})")
    for what, where in report.notes.items():
        lines.append(f"  note: {len(where):,} {what} ({_lines(where)})")
    return "\n".join(lines) + "\n"


def convert(
    path: str | Path,
    out: str | Path,
    source: str | None = None,
    fields: list[str] | None = None,
    timezone: str = "UTC",
    max_procs: int | None = None,
    max_nodes: int | None = None,
) -> tuple[Conversion, dict[str, Path]]:
    """Convert an accounting file into an SWF log, a resources table and a report beside it.

    Args:
        path: the accounting file (``sacct --parsable2`` output or a PBS / Torque accounting log).
        out: the SWF file to write (``mine.swf``); ``mine.resources.csv`` (:func:`resources_table`) and
            ``mine.report.txt`` (:func:`report_text`) go beside it.
        source: ``"sacct"``, ``"pbs"``, or None to tell from the first line.
        fields: sacct's field names in order for a file without a header line (sacct's ``--format``), else None.
        timezone: the IANA time zone of the file's wall-clock times (default UTC).
        max_procs: the machine's processors, written as ``MaxProcs``, or None.
        max_nodes: the machine's nodes, written as ``MaxNodes``, or None.

    Returns:
        The conversion and ``{"swf", "resources", "report"}`` -> the paths written.

    Raises:
        FileNotFoundError: no accounting file at ``path``.
        AccountingFormatError: a malformed line (the message names file and line); nothing is written.
        ConfigurationError: an unknown format or time zone, a size below 1, or no job left to write (nothing is
            written then).
        OSError: an output that cannot be written (each file appears whole or not at all).
    """
    for name, value in (("--max-procs", max_procs), ("--max-nodes", max_nodes)):
        if value is not None and value < 1:
            raise ConfigurationError(f"{name} must be a positive number of processors or nodes, not {value}")
    conversion = read_accounting(path, source=source, fields=fields, timezone=timezone)
    if not conversion.jobs:
        raise ConfigurationError(f"{path}: no job to write (every record was dropped):\n{report_text(conversion).rstrip()}")
    out = Path(out)
    swf = swf_text(conversion, max_procs=max_procs, max_nodes=max_nodes)
    table = io.StringIO()
    resources_table(conversion).to_csv(table, index=False)
    texts = {"swf": (out, swf), "resources": (sidecar_path(out, ".resources.csv"), table.getvalue())}
    texts["report"] = (sidecar_path(out, ".report.txt"), report_text(conversion))
    written = {}
    for key, (target, text) in texts.items():
        written[key] = atomic_write(target, lambda handle, text=text: handle.write(text))
    return conversion, written
