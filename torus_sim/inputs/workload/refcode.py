"""Text formats of the published reference code of RIGID / MOLDABLE (github.com/vlefevre/job-scheduling).

Reading and writing them lets a job set and its failure scenarios be run here and there, and the
makespans be compared scenario by scenario.

Job file::

    lambda P V priority batch naive shelf
    Task0 rgd 1518.62619684 1147
    Task1 rgd 257.092980124 516

one header line, then one line per rigid job: name, ``rgd``, t_j (seconds), p_j. The priority is
the reference code's word: ``length`` (LPT), ``rlength`` (SPT), ``procs`` (HPA), ``rprocs`` (LPA),
``area`` (LA), ``rarea`` (SA), ``rand`` (RANDOM). The three flags select the heuristic: ``shelf``
builds shelves, ``naive`` stops at the first job that does not fit (b = 0), ``batch`` holds failed
jobs until every job has run once.

Failure file: one line per scenario, n integers (the failures of each job, in job order). The
reference code reads a short or ragged file silently as zeros; here that is an error naming the
file and line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from torus_sim.core.errors import ConfigurationError, JobSetFormatError
from torus_sim.core.files import atomic_write, input_lines, input_text
from torus_sim.inputs.workload.batch import RigidJobSet
from torus_sim.inputs.workload.swf import MAX_SECONDS

__all__ = [
    "PRIORITY_WORDS",
    "RefcodeHeader",
    "read_failure_scenarios",
    "read_header",
    "read_rigid_jobs",
    "write_failure_scenarios",
    "write_rigid_jobs",
]

PRIORITY_WORDS = {
    "length": "LPT",
    "rlength": "SPT",
    "procs": "HPA",
    "rprocs": "LPA",
    "area": "LA",
    "rarea": "SA",
    "rand": "RANDOM",
}
"""The reference code's priority words and the rules they are."""


@dataclass(frozen=True)
class RefcodeHeader:
    """The header line of a reference-code job file.

    Attributes:
        error_rate: λ, per processor-second.
        processors: P.
        verification_time: V, seconds per attempt.
        priority: our rule name (LPT, SPT, HPA, LPA, LA, SA, RANDOM).
        batch, naive, shelf: the reference code's flags (0 or 1).
    """

    error_rate: float
    processors: int
    verification_time: float
    priority: str
    batch: int = 0
    naive: int = 0
    shelf: int = 0

    def heuristic(self) -> str:
        """The RIGID heuristic the flags select (the reference code's list mode is m = 0).

        Raises:
            ConfigurationError: flag combinations that are none of RIGID's heuristics (batch = 1, or
                naive = 1 without shelves).
        """
        if self.batch:
            raise ConfigurationError("batch = 1 (failed jobs wait for every job to run once) is none of RIGID's heuristics")
        if self.shelf:
            return "R-SHELF-NB" if self.naive else "R-SHELF-B"
        if self.naive:
            raise ConfigurationError(
                "naive = 1 without shelves (list scheduling that stops at the first misfit) is not supported"
            )
        return "R-LIST-0"

    def line(self) -> str:
        """The header as the reference code reads it."""
        word = {rule: word for word, rule in PRIORITY_WORDS.items()}[self.priority]
        return f"{self.error_rate!r} {self.processors} {self.verification_time!r} {word} {self.batch} {self.naive} {self.shelf}"


def read_header(path: str | Path) -> RefcodeHeader:
    """The header line of a reference-code job file, read alone (the file's first line).

    Args:
        path: the job file.

    Returns:
        Its header: λ, P, V, the priority rule and the batch / naive / shelf flags.

    Raises:
        FileNotFoundError: no such file.
        InputFileError: a directory, or a truncated or corrupt compressed file.
        JobSetFormatError: an empty file or a malformed header (naming the file and line 1).
    """
    path = Path(path)
    lines = input_lines(path, "job set")
    try:
        first = next(lines, "")
    finally:
        lines.close()
    if not first.strip():
        raise JobSetFormatError(path, 1, "expected the header 'lambda P V priority batch naive shelf'")
    return _header(path, first)


def read_rigid_jobs(path: str | Path) -> tuple[RefcodeHeader, RigidJobSet]:
    """Read a reference-code job file of rigid jobs.

    Args:
        path: the file.

    Returns:
        (header, job set).

    Raises:
        FileNotFoundError: no such file.
        InputFileError: a directory, or a truncated or corrupt compressed file.
        JobSetFormatError: a malformed header or job line, a time <= 0 or above
            :data:`~torus_sim.inputs.workload.swf.MAX_SECONDS`, a processor count < 1 or above P, a moldable
            (``mld``) line, or no job at all; the message names the file and line.
    """
    path = Path(path)
    lines = input_text(path, "job set").splitlines()
    if not lines or not lines[0].strip():
        raise JobSetFormatError(path, 1, "expected the header 'lambda P V priority batch naive shelf'")
    header = _header(path, lines[0])
    names, runtimes, processors = [], [], []
    for line_no, line in enumerate(lines[1:], start=2):
        fields = line.split()
        if not fields:
            continue
        if len(fields) >= 2 and fields[1] == "mld":
            raise JobSetFormatError(
                path, line_no, "moldable 'mld' lines use the reference code's own speedups; give a speedup model instead"
            )
        if len(fields) != 4 or fields[1] != "rgd":
            raise JobSetFormatError(path, line_no, f"expected 'name rgd <t> <p>', got {line.strip()!r}")
        runtime = _number(path, line_no, fields[2], "execution time")
        count = _integer(path, line_no, fields[3], "processor count")
        if not 0 < runtime <= MAX_SECONDS:
            raise JobSetFormatError(path, line_no, f"execution time must be > 0 and at most {MAX_SECONDS:.0e} s, got {fields[2]}")
        if not 1 <= count <= header.processors:
            raise JobSetFormatError(path, line_no, f"processor count must be in 1..P = {header.processors}, got {count}")
        names.append(fields[0])
        runtimes.append(runtime)
        processors.append(count)
    if not names:
        raise JobSetFormatError(path, len(lines), "no job line after the header")
    return header, RigidJobSet(np.array(runtimes), np.array(processors), tuple(names))


def _header(path: Path, line: str) -> RefcodeHeader:
    fields = line.split()
    if len(fields) != 7:
        raise JobSetFormatError(path, 1, f"expected 'lambda P V priority batch naive shelf' (7 fields), got {len(fields)}")
    error_rate = _number(path, 1, fields[0], "lambda")
    processors = _integer(path, 1, fields[1], "P")
    verification = _number(path, 1, fields[2], "V")
    if error_rate < 0 or processors < 1 or verification < 0:
        raise JobSetFormatError(path, 1, "lambda and V must be >= 0 and P >= 1")
    if fields[3] not in PRIORITY_WORDS:
        raise JobSetFormatError(path, 1, f"unknown priority {fields[3]!r}; the reference code knows {', '.join(PRIORITY_WORDS)}")
    flags = [_integer(path, 1, value, name) for value, name in zip(fields[4:], ("batch", "naive", "shelf"), strict=True)]
    if any(flag not in (0, 1) for flag in flags):
        raise JobSetFormatError(path, 1, f"batch, naive and shelf are 0 or 1, got {fields[4:]}")
    return RefcodeHeader(error_rate, processors, verification, PRIORITY_WORDS[fields[3]], *flags)


def _number(path: Path, line_no: int, text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise JobSetFormatError(path, line_no, f"{what} is not a number: {text!r}") from None
    if not np.isfinite(value):
        raise JobSetFormatError(path, line_no, f"{what} is not finite: {text!r}")
    return value


def _integer(path: Path, line_no: int, text: str, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise JobSetFormatError(path, line_no, f"{what} is not an integer: {text!r}") from None


MAX_FAILURE_COUNT = 1_000_000
"""The most silent errors one job may have in a scenario file (each costs a re-execution; q = 0.99 gives ~100)."""


def read_failure_scenarios(path: str | Path, jobs: int, scenarios: int | None = None) -> np.ndarray:
    """Read a failure file: one scenario per line, one failure count per job.

    Args:
        path: the file.
        jobs: n, the number of jobs (every line must have exactly n integers).
        scenarios: how many scenarios are needed (the file may hold more; None reads them all).

    Returns:
        int64 ``(S, n)``.

    Raises:
        FileNotFoundError: no such file.
        InputFileError: a directory, or a truncated or corrupt compressed file.
        JobSetFormatError: a line with the wrong number of columns, a negative or non-integer count,
            or fewer lines than ``scenarios`` (the reference code would read zeros there).
    """
    path = Path(path)
    rows = []
    text = input_text(path, "failure-scenario")
    for line_no, line in enumerate(text.splitlines(), start=1):
        if scenarios is not None and len(rows) == scenarios:
            break
        fields = line.split()
        if not fields:
            continue
        if len(fields) != jobs:
            raise JobSetFormatError(path, line_no, f"expected {jobs} failure counts (one per job), got {len(fields)}")
        row = [_integer(path, line_no, value, "failure count") for value in fields]
        if min(row) < 0:
            raise JobSetFormatError(path, line_no, f"failure counts must be >= 0, got {min(row)}")
        if max(row) > MAX_FAILURE_COUNT:
            raise JobSetFormatError(
                path, line_no, f"failure counts must be at most {MAX_FAILURE_COUNT:,} (re-executions of one job), got {max(row)}"
            )
        rows.append(row)
    if not rows or (scenarios is not None and len(rows) < scenarios):
        wanted = scenarios if scenarios is not None else 1
        raise JobSetFormatError(path, len(text.splitlines()) + 1, f"{wanted} scenarios needed, the file has {len(rows)}")
    return np.array(rows, dtype=np.int64)


def write_rigid_jobs(path: str | Path, header: RefcodeHeader, jobs: RigidJobSet) -> Path:
    """Write a job file the reference code reads, atomically (it appears whole or not at all).

    Args:
        path: the destination.
        header: λ, P, V, priority word and flags for the header line.
        jobs: the jobs, one ``name rgd t p`` line each; t in seconds, written with ``repr`` (full precision).

    Returns:
        The path written.

    References:
        The RIGID / MOLDABLE reference code's input format (github.com/vlefevre/job-scheduling).
    """

    def write(handle) -> None:
        handle.write(header.line() + "\n")
        for name, runtime, count in zip(jobs.names, jobs.runtimes, jobs.processors, strict=True):
            handle.write(f"{name} rgd {float(runtime)!r} {int(count)}\n")

    return atomic_write(path, write)


def write_failure_scenarios(path: str | Path, failures: np.ndarray) -> Path:
    """Write failure scenarios atomically, one line per scenario, as the reference code reads them.

    Args:
        path: the destination.
        failures: int ``(S, n)``, failed attempts of job j in scenario i.

    Returns:
        The path written.

    References:
        RIGID §3.2 (failure scenario f); the reference code's failure-file format.
    """
    failures = np.asarray(failures, dtype=np.int64)
    return atomic_write(path, lambda handle: handle.writelines(" ".join(map(str, row)) + "\n" for row in failures.tolist()))
