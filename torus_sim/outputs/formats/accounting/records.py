"""The records a conversion makes: one job as its accounting says, what was read and dropped, the converted whole.

Shared by the readers (:mod:`~torus_sim.outputs.formats.accounting.sacct`, :mod:`~torus_sim.outputs.formats.accounting.pbs`)
and the writer (:mod:`torus_sim.outputs.formats.accounting`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

__all__ = ["AccountingJob", "Conversion", "ConversionReport"]


@dataclass
class AccountingJob:
    """One job as an accounting log records it, in the units SWF uses.

    Attributes:
        source_id: the batch system's job id (``123``, ``123_4`` for an array task, ``6464684.host``).
        line: the 1-based line of the record it came from (its last record when several).
        state: the batch system's word for how it ended (``COMPLETED``, ``TIMEOUT``, ``Exit_status=1``, ...).
        status: the SWF status (1 completed, 0 failed or killed at its limit, 5 cancelled).
        submit: Unix time of submission, seconds.
        start: Unix time it started, seconds, or None when it never ran.
        end: Unix time it ended, seconds, or None when it never ran.
        processors: processors (cores) allocated, or None when unknown.
        requested_processors: processors requested, or None (then ``processors``).
        nodes: nodes allocated (or requested when it never ran), or None.
        gpus: GPUs allocated (or requested), or None.
        requested_time: the time limit, seconds, or None when unlimited or unknown.
        requested_memory_kib: the job's whole memory request, KiB, or None.
        used_memory_kib: its largest resident set (Slurm's MaxRSS over its steps; PBS's resources_used.mem), KiB, or None.
        user, group, executable, queue, partition: names as logged, or None.
        computer: the cluster's name where the log gives one (Slurm's Cluster field), or None.
    """

    source_id: str
    line: int
    state: str
    status: int
    submit: float
    start: float | None = None
    end: float | None = None
    processors: int | None = None
    requested_processors: int | None = None
    nodes: int | None = None
    gpus: int | None = None
    requested_time: float | None = None
    requested_memory_kib: float | None = None
    used_memory_kib: float | None = None
    user: str | None = None
    group: str | None = None
    executable: str | None = None
    queue: str | None = None
    partition: str | None = None
    computer: str | None = None

    @property
    def started(self) -> bool:
        """Whether it ran: a start and an end time are known."""
        return self.start is not None and self.end is not None


@dataclass
class ConversionReport:
    """What a conversion read, wrote and dropped, line by line.

    Attributes:
        path: the accounting file as given.
        source: its format (``sacct`` or ``pbs``).
        lines: lines read (blank ones included).
        records: records read by kind (``job``, ``step``, ``header``, a PBS record type ...).
        dropped: for each reason, the lines whose record did not become a job.
        notes: what was done to a kept job that the reader should know (a start before the submission).
    """

    path: str
    source: str
    lines: int = 0
    records: Counter = field(default_factory=Counter)
    dropped: dict[str, list[int]] = field(default_factory=dict)
    notes: dict[str, list[int]] = field(default_factory=dict)

    def drop(self, reason: str, line: int) -> None:
        """Count ``line`` as dropped for ``reason``."""
        self.dropped.setdefault(reason, []).append(line)

    def note(self, what: str, line: int) -> None:
        """Count ``line`` under a note (the job is kept)."""
        self.notes.setdefault(what, []).append(line)

    def as_dict(self) -> dict:
        """The report as plain data: ``{"path", "source", "lines", "records", "dropped", "notes"}`` (lists of lines)."""
        return {
            "path": self.path,
            "source": self.source,
            "lines": self.lines,
            "records": dict(self.records),
            "dropped": {reason: list(lines) for reason, lines in self.dropped.items()},
            "notes": {what: list(lines) for what, lines in self.notes.items()},
        }


@dataclass
class Conversion:
    """A converted accounting file: its jobs in submit order, numbered, and the report.

    Attributes:
        jobs: the jobs written, in SWF order (job number ``i + 1`` for ``jobs[i]``).
        report: what was read and dropped.
        numbers: for ``user``, ``group``, ``executable``, ``queue`` and ``partition``, the name -> number map.
        sha256: the accounting file's SHA-256.
    """

    jobs: list[AccountingJob]
    report: ConversionReport
    numbers: dict[str, dict[str, int]]
    sha256: str

    def start_time(self) -> int:
        """The Unix time of the first submission (SWF's ``UnixStartTime``), whole seconds; 0 with no job."""
        return int(min((job.submit for job in self.jobs), default=0))
