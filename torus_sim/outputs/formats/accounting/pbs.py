"""PBS Professional / OpenPBS / Torque accounting logs as :class:`~torus_sim.outputs.formats.accounting.records.AccountingJob` records.

Each line is ``MM/DD/YYYY HH:MM:SS;TYPE;JOB_ID;key=value key=value ...``. An ``E`` record (the job
ended) becomes a job: submitted at ``qtime`` (else ``ctime``), started at ``start``, ended at ``end``
(Unix seconds); its processors from ``resources_used.ncpus``, else ``Resource_List.ncpus``, else the
``select`` chunks (``2:ncpus=8+1:ncpus=4``), else Torque's ``nodes`` (``4:ppn=8``), else the
``exec_host`` slots (``n1/0-3+n2/0*4``); its nodes from ``Resource_List.nodect``; GPUs from ``ngpus``,
the chunks' ``ngpus`` or Torque's ``gpus=``; memory from ``Resource_List.mem`` (else the chunks',
else ``pmem`` per processor); its limit from ``Resource_List.walltime``. ``Exit_status`` 0 is SWF
status 1; any other is 0 (Torque's 256 + N is a job killed by signal N: its limit or ``qdel``).

A job deleted or aborted (``D``, ``A``) with no ``E`` record is written as cancelled before it ran
(status 5) when its ``Q`` record gives the submission (the line's time, in the time zone given), and
dropped otherwise. Other record types (``S``, ``R``, ``B``, ...) are counted. A job with two ``E``
records (rerun) keeps the last.

References:
    PBS Professional Reference Guide, "Accounting Log" (record types, attributes);
    Torque Administrator Guide, "Accounting Records" (``Exit_status`` above 256).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, tzinfo
from pathlib import Path

from torus_sim.core.errors import AccountingFormatError
from torus_sim.core.files import input_lines
from torus_sim.outputs.formats.accounting.records import AccountingJob, ConversionReport

__all__ = ["read_pbs"]

_LINE = re.compile(r"^(?P<stamp>\d\d/\d\d/\d{4} \d\d:\d\d:\d\d);(?P<type>[A-Za-z]);(?P<id>[^;]*);(?P<message>.*)$")
_PAIR = re.compile(r'(?P<key>[^\s=]+)=(?P<value>"[^"]*"|\S*)')
_MEMORY = re.compile(r"^(?P<value>\d+(?:\.\d+)?)(?P<unit>[kmgtp]?)(?:b|w)?$", re.IGNORECASE)
_UNITS = {"": 1 / 1024, "k": 1.0, "m": 1024.0, "g": 1024.0**2, "t": 1024.0**3, "p": 1024.0**4}  # -> KiB; bare is bytes


def _seconds(text: str | None, where, name: str) -> float | None:
    """``HH:MM:SS`` (or ``MM:SS``, or seconds) as seconds; None when absent."""
    if text is None or text == "":
        return None
    parts = text.split(":")
    try:
        values = [float(part) for part in parts]
    except ValueError:
        raise AccountingFormatError(*where, f"{name} {text!r} is not a duration (HH:MM:SS)") from None
    total = 0.0
    for value in values:
        total = total * 60.0 + value
    return total


def _epoch(text: str | None, where, name: str) -> float | None:
    """Unix seconds; None when absent or 0 (never happened)."""
    if text is None or text == "":
        return None
    try:
        value = float(text)
    except ValueError:
        raise AccountingFormatError(*where, f"{name} {text!r} is not Unix seconds") from None
    return value if value > 0 else None


def _memory(text: str | None) -> float | None:
    """``1993mb``, ``10GB``, ``167864kb``, ``12.27M`` as KiB; None when absent or not a size."""
    if not text:
        return None
    match = _MEMORY.match(text.strip())
    if match is None:
        return None
    return float(match["value"]) * _UNITS[match["unit"].lower()]


def _leading_int(text: str | None) -> int | None:
    """The whole number a value starts with (``nodect=1:ppn=24`` -> 1); None when it has none or is 0."""
    match = re.match(r"^\d+", text or "")
    if match is None:
        return None
    return int(match.group()) or None


def _chunks(spec: str) -> list[tuple[int, dict[str, str]]]:
    """``2:ncpus=8:mem=4gb+1:ncpus=4`` (PBS's select) or ``4:ppn=8:gpus=1`` (Torque's nodes) as (count, settings)."""
    chunks = []
    for chunk in spec.split("+"):
        parts = chunk.split(":")
        count = int(parts[0]) if parts[0].isdigit() else 1  # a host name instead of a count is one node
        settings = dict(part.split("=", 1) for part in parts[1:] if "=" in part)
        chunks.append((count, {key.lower(): value for key, value in settings.items()}))
    return chunks


def _chunk_sum(chunks, *keys: str, memory: bool = False) -> float | None:
    """The sum over chunks of count x the first of ``keys`` set (a memory size with ``memory``); None if none."""
    total, seen = 0.0, False
    for count, settings in chunks:
        for key in keys:
            if key in settings:
                value = _memory(settings[key]) if memory else _leading_int(settings[key])
                if value is not None:
                    total += count * value
                    seen = True
                break
    return total if seen else None


def _exec_slots(exec_host: str | None) -> tuple[int | None, int | None]:
    """(processors, nodes) from ``n1/0-3+n2/5*4`` (a slot, a range of slots, or ``*K`` slots each)."""
    if not exec_host:
        return None, None
    processors, hosts = 0, set()
    for entry in exec_host.split("+"):
        host, _, slot = entry.partition("/")
        hosts.add(host)
        if "*" in slot:
            processors += int(slot.split("*", 1)[1] or 1)
        else:
            for part in slot.split(","):
                first, _, last = part.partition("-")
                processors += int(last) - int(first) + 1 if last.isdigit() and first.isdigit() else 1
    return processors or None, len(hosts) or None


def _job(record: dict[str, str], source_id: str, line: int, path: Path):
    """The job an ``E`` record describes (None and a reason when it cannot be one)."""
    where = (path, line)
    submit = _epoch(record.get("qtime"), where, "qtime") or _epoch(record.get("ctime"), where, "ctime")
    start, end = _epoch(record.get("start"), where, "start"), _epoch(record.get("end"), where, "end")
    if submit is None:
        return None, "E records without qtime or ctime (no submit time)"
    if start is None or end is None:
        start = end = None
    select = _chunks(record["resource_list.select"]) if "resource_list.select" in record else []
    nodes_spec = _chunks(record["resource_list.nodes"]) if "resource_list.nodes" in record else []
    slots, hosts = _exec_slots(record.get("exec_host"))
    requested = (
        _leading_int(record.get("resource_list.ncpus"))
        or _chunk_sum(select, "ncpus")
        or _chunk_sum(nodes_spec, "ppn")
        or (sum(count for count, _ in nodes_spec) or None)
    )
    processors = _leading_int(record.get("resources_used.ncpus")) or requested or slots
    nodes = _leading_int(record.get("resource_list.nodect")) or hosts or (sum(count for count, _ in nodes_spec) or None)
    gpus = (
        _leading_int(record.get("resource_list.ngpus"))
        or _chunk_sum(select, "ngpus")
        or _chunk_sum(nodes_spec, "gpus", "gpu")
        or _leading_int(record.get("resource_list.gpus") or record.get("resource_list.gpu"))
    )
    memory = _memory(record.get("resource_list.mem")) or _chunk_sum(select, "mem", memory=True)
    if memory is None and record.get("resource_list.pmem") and (requested or processors):
        memory = _memory(record["resource_list.pmem"]) * (requested or processors)
    status_text = record.get("exit_status", "")
    try:
        exit_status = int(status_text)
    except ValueError:
        return None, "E records without an Exit_status"
    job = AccountingJob(
        source_id=source_id,
        line=line,
        state=f"Exit_status={exit_status}",
        status=1 if exit_status == 0 else 0,
        submit=submit,
        start=start,
        end=end,
        processors=int(processors) if processors else None,
        requested_processors=int(requested) if requested else None,
        nodes=int(nodes) if nodes else None,
        gpus=int(gpus) if gpus else None,
        requested_time=_seconds(record.get("resource_list.walltime"), where, "Resource_List.walltime") or None,
        requested_memory_kib=memory,
        used_memory_kib=_memory(record.get("resources_used.mem")),
        user=record.get("user"),
        group=record.get("group"),
        executable=record.get("jobname"),
        queue=record.get("queue"),
    )
    return job, None


def read_pbs(path: Path, zone: tzinfo | None = None):
    """Read a PBS Professional / OpenPBS / Torque accounting log (one file or several concatenated).

    Args:
        path: the file.
        zone: the time zone of each line's ``MM/DD/YYYY HH:MM:SS`` (used for a ``Q`` record's submission).

    Returns:
        ``(jobs, report)``: :class:`~torus_sim.outputs.formats.accounting.records.AccountingJob` list in file order and the
        :class:`~torus_sim.outputs.formats.accounting.records.ConversionReport`.

    Raises:
        AccountingFormatError: a line that is not ``MM/DD/YYYY HH:MM:SS;TYPE;ID;...``, or a time that does not
            parse; the message names file and line.
    """
    zone = zone or UTC
    report = ConversionReport(path=str(path), source="pbs")
    ended: dict[str, object] = {}
    queued: dict[str, tuple[float, str | None, int]] = {}
    deleted: dict[str, int] = {}
    for line_no, line in enumerate(input_lines(path, "accounting"), start=1):
        report.lines = line_no
        text = line.rstrip("\r\n")
        if not text.strip():
            continue
        match = _LINE.match(text)
        if match is None:
            raise AccountingFormatError(path, line_no, "not a PBS accounting record (MM/DD/YYYY HH:MM:SS;TYPE;JOB_ID;...)")
        kind, source_id = match["type"].upper(), match["id"].strip()
        report.records[f"{kind} record"] += 1
        record = {pair["key"].lower(): pair["value"].strip('"') for pair in _PAIR.finditer(match["message"])}
        if kind == "E":
            job, reason = _job(record, source_id, line_no, path)
            if job is None:
                report.drop(reason, line_no)
                continue
            if source_id in ended:
                report.drop("earlier E records of the same job (rerun)", ended[source_id].line)
            exit_status = int(job.state.split("=", 1)[1])
            if exit_status > 256:
                report.note("killed by a signal (Torque's Exit_status 256 + N: its time limit or qdel)", line_no)
            elif exit_status < 0:
                report.note("never ran properly (PBS's negative Exit_status: the job could not start)", line_no)
            ended[source_id] = job
        elif kind == "Q":
            try:
                stamp = datetime.strptime(match["stamp"], "%m/%d/%Y %H:%M:%S").replace(tzinfo=zone).timestamp()
            except ValueError:
                raise AccountingFormatError(path, line_no, f"{match['stamp']!r} is not a date and time") from None
            queued[source_id] = (stamp, record.get("queue"), line_no)
        elif kind in ("D", "A"):
            deleted[source_id] = line_no
    jobs = list(ended.values())
    for source_id, line_no in deleted.items():
        if source_id in ended:
            continue
        if source_id not in queued:
            report.drop("deleted or aborted jobs without a Q record (no submit time)", line_no)
            continue
        stamp, queue, _ = queued[source_id]
        jobs.append(AccountingJob(source_id=source_id, line=line_no, state="deleted", status=5, submit=stamp, queue=queue))
    return jobs, report
