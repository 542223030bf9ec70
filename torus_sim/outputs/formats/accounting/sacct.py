"""Slurm's accounting, ``sacct --parsable2`` (or ``--parsable``), as :class:`~torus_sim.outputs.formats.accounting.records.AccountingJob` records.

The fields are found by the header's names, in any order and any letter case (``JobID``, ``Submit``,
``Start``, ``End`` and ``State`` are needed; ``JobIDRaw``, ``Cluster``, ``Partition``, ``QOS``,
``Group``, ``GID``, ``User``, ``UID``, ``Elapsed`` / ``ElapsedRaw``, ``NNodes`` / ``AllocNodes``,
``NCPUS`` / ``AllocCPUS``, ``ReqCPUS``, ``ReqNodes``, ``ReqMem``, ``ReqTRES``, ``AllocTRES``,
``Timelimit`` / ``TimelimitRaw``, ``MaxRSS`` and ``JobName`` are read when present). A file written
with ``--noheader`` is read with the field order given (sacct's ``--format`` list).

How records become jobs:

- a job's steps (``123.batch``, ``123.extern``, ``123.0``) fold into it: they give its largest MaxRSS;
  a step whose job is not in the file is dropped and counted;
- a job array's tasks (``123_4``) are jobs of their own; a record of several tasks (``123_[1-3,5]``) is
  one job per task when it ran, and a pending array when it did not (dropped); a task seen twice is kept once;
- the components of a heterogeneous job (``123+0``, ``123+1``) fold into one job holding their sum;
- a job recorded twice (requeued, ``sacct --duplicates``) keeps its last record;
- the state's first word gives the SWF status: COMPLETED 1; FAILED, NODE_FAIL, BOOT_FAIL, OUT_OF_MEMORY,
  DEADLINE, TIMEOUT (killed at its time limit) and SPECIAL_EXIT 0; CANCELLED and PREEMPTED 5. A job still
  PENDING, RUNNING, SUSPENDED, REQUEUED, RESIZING or in another unfinished state is dropped, as is a state
  Slurm does not have;
- memory: ``ReqTRES``'s ``mem`` is the job's whole request; else ``ReqMem`` with its suffix (``c`` per
  allocated CPU, ``n`` per node; none, as Slurm 21.08 and later print it, the whole request); GPUs from
  the TRES ``gres/gpu`` (or the sum of its typed forms).

Times without an offset are read in the time zone given (sacct prints the local time of the host it ran on).

References:
    Slurm's sacct manual, https://slurm.schedmd.com/sacct.html (fields, job states, ``--parsable2``,
    job steps and arrays); https://slurm.schedmd.com/job_array.html; https://slurm.schedmd.com/heterogeneous_jobs.html.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, tzinfo
from pathlib import Path

from torus_sim.core.errors import AccountingFormatError, ConfigurationError
from torus_sim.core.files import input_lines
from torus_sim.outputs.formats.accounting.records import AccountingJob, ConversionReport

__all__ = ["ENDED", "NEEDED", "UNFINISHED", "read_sacct"]

ENDED = {
    "COMPLETED": 1,
    "FAILED": 0,
    "NODE_FAIL": 0,
    "BOOT_FAIL": 0,
    "OUT_OF_MEMORY": 0,
    "DEADLINE": 0,
    "TIMEOUT": 0,
    "SPECIAL_EXIT": 0,
    "CANCELLED": 5,
    "PREEMPTED": 5,
}
"""Slurm's final job states and the SWF status each becomes."""

UNFINISHED = frozenset(
    {
        "PENDING",
        "RUNNING",
        "SUSPENDED",
        "REQUEUED",
        "REQUEUE_HOLD",
        "REQUEUE_FED",
        "RESIZING",
        "REVOKED",
        "CONFIGURING",
        "COMPLETING",
        "STOPPED",
        "SIGNALING",
        "STAGE_OUT",
        "RESV_DEL_HOLD",
    }
)
"""Slurm's states of a job not finished when sacct ran (dropped)."""

NEEDED = ("jobid", "submit", "start", "end", "state")
"""Fields a sacct file must have (by lower-case name)."""

_JOB_ID = re.compile(r"^(?P<job>\d+)(?:_(?P<task>\d+|\[[^\]]*\]))?(?:\+(?P<het>\d+))?(?:\.(?P<step>.+))?$")
_DURATION = re.compile(r"^(?:(?P<days>\d+)-)?(?:(?P<h>\d+):)?(?P<m>\d+):(?P<s>\d+(?:\.\d+)?)$")
_MEMORY = re.compile(r"^(?P<value>\d+(?:\.\d+)?)(?P<unit>[KMGTP]?)(?P<per>[cn]?)$", re.IGNORECASE)
_UNITS = {"": 1024.0, "K": 1.0, "M": 1024.0, "G": 1024.0**2, "T": 1024.0**3, "P": 1024.0**4}  # -> KiB; bare is MB
_MISSING = {"", "unknown", "none", "n/a", "invalid", "unlimited", "partition_limit"}


def _timestamp(text: str, zone: tzinfo, where: tuple[Path, int], name: str) -> float | None:
    """A sacct time (``2015-06-26T13:57:00``, with or without an offset, or Unix seconds) as Unix time; None if unknown."""
    text = text.strip()
    if text.lower() in _MISSING:
        return None
    if text.isdigit():
        return float(text)
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise AccountingFormatError(*where, f"{name} {text!r} is not a time (sacct prints 2015-06-26T13:57:00)") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=zone)
    return moment.timestamp()


def _duration(text: str, where: tuple[Path, int], name: str) -> float | None:
    """A sacct duration (``3-00:00:00``, ``14:20:00``, ``05:13.2``) in seconds; None for unknown or unlimited."""
    text = text.strip()
    if text.lower() in _MISSING:
        return None
    match = _DURATION.match(text)
    if match is None:
        raise AccountingFormatError(*where, f"{name} {text!r} is not a duration ([days-]hours:minutes:seconds)")
    days, hours = int(match["days"] or 0), int(match["h"] or 0)
    return days * 86400.0 + hours * 3600.0 + int(match["m"]) * 60.0 + float(match["s"])


def _memory(text: str, where: tuple[Path, int], name: str) -> tuple[float | None, str]:
    """A sacct memory (``3000Mc``, ``48000Mn``, ``16G``, ``245304K``) as (KiB, ``"c"``/``"n"``/``""``); None if unknown."""
    text = text.strip()
    if text.lower() in _MISSING:
        return None, ""
    match = _MEMORY.match(text)
    if match is None:
        raise AccountingFormatError(*where, f"{name} {text!r} is not a memory size (such as 3000Mc, 48000Mn or 16G)")
    return float(match["value"]) * _UNITS[match["unit"].upper()], match["per"].lower()


def _count(text: str, where: tuple[Path, int], name: str) -> int | None:
    """A whole count; None when empty or 0 (sacct prints 0 for a job given nothing)."""
    text = text.strip()
    if text.lower() in _MISSING:
        return None
    if not text.isdigit():
        raise AccountingFormatError(*where, f"{name} {text!r} is not a whole number")
    return int(text) or None


def _tres(text: str) -> dict[str, str]:
    """``billing=8,cpu=8,mem=96G,node=1,gres/gpu=1`` as a dict (names lower-cased)."""
    pairs = (item.split("=", 1) for item in text.split(",") if "=" in item)
    return {name.strip().lower(): value.strip() for name, value in pairs}


def _tres_gpus(tres: dict[str, str]) -> int | None:
    """GPUs in a TRES: ``gres/gpu``, else the sum of its typed forms ``gres/gpu:a100``."""
    if "gres/gpu" in tres and tres["gres/gpu"].isdigit():
        return int(tres["gres/gpu"]) or None
    typed = [int(value) for name, value in tres.items() if name.startswith("gres/gpu:") and value.isdigit()]
    return sum(typed) or None


def _tasks(text: str, where: tuple[Path, int]) -> list[str]:
    """An array's bracket ``[1-3,5]`` as its task ids (``%4`` throttles dropped)."""
    inside = text.strip("[]").split("%", 1)[0]
    tasks = []
    for part in inside.split(","):
        first, _, last = part.partition("-")
        if not first.isdigit() or (last and not last.isdigit()):
            raise AccountingFormatError(*where, f"job array tasks {text!r} are not a list of numbers and ranges")
        tasks.extend(str(task) for task in range(int(first), int(last or first) + 1))
    return tasks


def _header(names: list[str], path: Path, line: int | None) -> list[str]:
    """The lower-cased field names (a ``%width`` suffix dropped), checked for the needed ones (``line`` None: --fields)."""
    lowered = [name.strip().lower().split("%", 1)[0] for name in names]
    missing = [name for name in NEEDED if name not in lowered and not (name == "jobid" and "jobidraw" in lowered)]
    if missing and line is None:
        raise ConfigurationError(
            f"--fields lacks {', '.join(missing)}: give sacct's --format list, JobID,Submit,Start,End,State at least"
        )
    if missing:
        raise AccountingFormatError(
            path,
            line,
            f"sacct's fields lack {', '.join(missing)} (a header line such as JobID|Submit|Start|End|State, or "
            "--fields with sacct's --format list for a file written with --noheader)",
        )
    return lowered


class _Reader:
    """Folds sacct's rows into jobs (see the module's docstring); one per file."""

    def __init__(self, path: Path, zone: tzinfo, report) -> None:
        self.path, self.zone, self.report = path, zone, report
        self.jobs: dict[tuple[str, str | None, str | None], object] = {}  # (job, task, het) -> AccountingJob
        self.steps: list[tuple[tuple[str, str | None], float | None, int]] = []

    def row(self, values: dict[str, str], line: int) -> None:
        """Take one row: a job (or array tasks, or a heterogeneous component) or a step."""
        where = (self.path, line)
        text = values.get("jobid") or values.get("jobidraw", "")
        match = _JOB_ID.match(text.strip())
        if match is None:
            raise AccountingFormatError(*where, f"JobID {text!r} is not a Slurm job id (123, 123_4, 123+1, 123.batch)")
        if match["step"] is not None:
            self.report.records["step record"] += 1
            rss, _ = _memory(values.get("maxrss", ""), where, "MaxRSS")
            self.steps.append(((match["job"], match["task"]), rss, line))
            return
        self.report.records["job record"] += 1
        word = values["state"].strip().split(" ", 1)[0].upper()
        if word in UNFINISHED:
            self.report.drop(f"not finished when sacct ran ({word})", line)
            return
        if word not in ENDED:
            self.report.drop(f"in a state Slurm does not have ({word or 'empty'})", line)
            return
        submit = _timestamp(values["submit"], self.zone, where, "Submit")
        if submit is None:
            self.report.drop("without a submit time", line)
            return
        start = _timestamp(values["start"], self.zone, where, "Start")
        end = _timestamp(values["end"], self.zone, where, "End")
        if start is not None and end is None:
            elapsed = values.get("elapsedraw", "").strip()
            seconds = float(elapsed) if elapsed.isdigit() else _duration(values.get("elapsed", ""), where, "Elapsed")
            end = None if seconds is None else start + seconds
        if start is None or end is None:
            start = end = None
        alloc, req = _tres(values.get("alloctres", "")), _tres(values.get("reqtres", ""))
        processors = _count(values.get("ncpus") or values.get("alloccpus") or alloc.get("cpu", ""), where, "NCPUS")
        nodes = _count(values.get("nnodes") or values.get("allocnodes") or alloc.get("node", ""), where, "NNodes")
        requested = _count(values.get("reqcpus") or req.get("cpu", ""), where, "ReqCPUS") or processors
        if nodes is None:
            nodes = _count(values.get("reqnodes") or req.get("node", ""), where, "ReqNodes")
        limit_raw = values.get("timelimitraw", "").strip()
        limit = float(limit_raw) * 60.0 if limit_raw.isdigit() else _duration(values.get("timelimit", ""), where, "Timelimit")
        memory, _ = _memory(req["mem"], where, "ReqTRES mem") if "mem" in req else (None, "")
        if memory is None:
            memory, per = _memory(values.get("reqmem", ""), where, "ReqMem")
            if memory is not None and per == "c":
                memory *= processors or requested or 0
            elif memory is not None and per == "n":
                memory *= nodes or 0
        job = AccountingJob(
            source_id=text.strip(),
            line=line,
            state=word,
            status=ENDED[word],
            submit=submit,
            start=start,
            end=end,
            processors=processors,
            requested_processors=requested,
            nodes=nodes,
            gpus=_tres_gpus(alloc) or _tres_gpus(req),
            requested_time=limit if limit else None,
            requested_memory_kib=memory or None,
            user=(values.get("user") or values.get("uid") or "").strip() or None,
            group=(values.get("group") or values.get("gid") or "").strip() or None,
            executable=values.get("jobname", "").strip() or None,
            queue=values.get("qos", "").strip() or None,
            partition=values.get("partition", "").strip() or None,
            computer=values.get("cluster", "").strip() or None,
        )
        task = match["task"]
        if task is not None and task.startswith("["):
            if not job.started:
                self.report.drop("pending job array records (tasks that never started)", line)
                return
            tasks = _tasks(task, where)
            self.report.note("job array records of several tasks, each task written as a job", line)
        else:
            tasks = [task]
        for one in tasks:
            key = (match["job"], one, match["het"])
            copy = job if len(tasks) == 1 else _with_id(job, f"{match['job']}_{one}")
            if key in self.jobs:
                earlier = self.jobs[key]
                self.report.drop("earlier records of the same job (requeued, or an array task listed twice)", earlier.line)
            self.jobs[key] = copy

    def result(self) -> list:
        """The jobs: heterogeneous components merged, steps' MaxRSS folded in."""
        merged: dict[tuple[str, str | None], object] = {}
        for (job_id, task, het), job in self.jobs.items():
            key = (job_id, task)
            if key not in merged:
                if het is not None:
                    job.source_id = job_id if task is None else f"{job_id}_{task}"
                merged[key] = job
                continue
            into = merged[key]
            self.report.note("heterogeneous job components folded into their job", job.line)
            for name in ("processors", "requested_processors", "nodes", "gpus", "requested_memory_kib"):
                values = [value for value in (getattr(into, name), getattr(job, name)) if value is not None]
                setattr(into, name, sum(values) if values else None)
        for key, rss, line in self.steps:
            job = merged.get(key)
            if job is None:
                self.report.drop("steps whose job is not in the file", line)
            elif rss is not None:
                job.used_memory_kib = max(job.used_memory_kib or 0.0, rss)
        return list(merged.values())


def _with_id(job, source_id: str):
    """A copy of ``job`` under another source id (one task of an array record)."""
    from dataclasses import replace

    return replace(job, source_id=source_id)


def read_sacct(path: Path, fields: list[str] | None = None, zone: tzinfo | None = None):
    """Read ``sacct --parsable2`` (or ``--parsable``) output.

    Args:
        path: the file.
        fields: the field names in order when the file has no header line (sacct's ``--format``), else None.
        zone: the time zone of times printed without an offset (default UTC).

    Returns:
        ``(jobs, report)``: the :class:`~torus_sim.outputs.formats.accounting.records.AccountingJob` list in file order and the
        :class:`~torus_sim.outputs.formats.accounting.records.ConversionReport`.

    Raises:
        AccountingFormatError: a header without the needed fields, a row with another number of fields than the
            header (a job name holding ``|``: use sacct's ``--delimiter``), a time, duration, count or memory that
            does not parse; the message names file and line.
    """
    zone = zone or UTC
    report = ConversionReport(path=str(path), source="sacct")
    reader = _Reader(path, zone, report)
    names = _header(fields, path, None) if fields else None
    trailing = False
    for line_no, line in enumerate(input_lines(path, "accounting"), start=1):
        report.lines = line_no
        text = line.rstrip("\r\n")
        if not text.strip():
            continue
        values = text.split("|")
        if names is None:
            trailing = len(values) > 1 and values[-1] == ""  # --parsable ends every line with '|'
            names = _header(values[:-1] if trailing else values, path, line_no)
            report.records["header line"] += 1
            continue
        if trailing and values and values[-1] == "" and len(values) == len(names) + 1:
            values = values[:-1]
        if len(values) != len(names):
            raise AccountingFormatError(
                path,
                line_no,
                f"{len(values)} fields where the header names {len(names)} (a job name holding '|'? "
                "sacct --delimiter picks another separator)",
            )
        reader.row(dict(zip(names, values, strict=True)), line_no)
    return reader.result(), report
