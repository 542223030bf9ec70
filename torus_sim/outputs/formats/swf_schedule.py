"""The simulated schedule as a Standard Workload Format (SWF 2.2) file.

One line per attempt, sorted by submit time, then job, then attempt: the job's number, submit time,
wait time (attempt start - submit), run time (attempt end - start), allocated processors (the nodes or
supernodes held), requested processors (the job's size), requested time (its walltime), status and
user; the fields the simulation does not know are -1. Status follows the SWF definition: 1 completed,
0 failed (a fail-stop failure killed the attempt, or it ended in a silent error: the job restarts from
the beginning, so the attempt's work is lost), 5 cancelled (preempted by the scheduler). All attempts
of a job share its number, as the SWF's multi-line jobs do. The header names the simulator, the
machine, the run's configuration and the source trace with its SHA-256.

References:
    Feitelson et al., "Experience with using the Parallel Workloads Archive", JPDC 74(10), 2014;
    https://www.cs.huji.ac.il/labs/parallel/workload/swf.html (fields, status values, header comments).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping

import pandas as pd

from torus_sim.core.version import __version__

__all__ = ["SWF_STATUS", "relogged_log", "relogged_swf", "schedule_swf", "swf_header"]

SWF_STATUS = {"completed": 1, "silent_error": 0, "killed": 0, "preempted": 5}
"""SWF status of each way an attempt ends."""


def _field(value: float) -> str:
    """An SWF number: integers without a decimal point, other times as the shortest exact decimal."""
    if value == int(value):
        return str(int(value))
    return repr(value)


def schedule_swf(record, jobs: pd.DataFrame, header: dict[str, str]) -> str:
    """The run's schedule as SWF text.

    Args:
        record: the run's :class:`~torus_sim.engine.record.SimulationRecord` (with its attempts table).
        jobs: the per-job table (job_id, user_id, size, submitted_at, walltime).
        header: ``; Key: value`` lines to write after ``Version`` (``Computer``, ``MaxNodes``,
            ``MaxProcs``, ``UnixStartTime``, ``Note``, ...); a value with newlines gives one line each.

    Returns:
        The file's text: ``Version``, ``MaxJobs`` and ``MaxRecords`` (counted here), the given header,
        then one line per attempt.

    Raises:
        ValueError: the record holds no attempt table (a run made with ``record=False``).
    """
    if record.attempts is None:
        raise ValueError("the run kept no attempt table (record=False): no SWF schedule can be written")
    attempts = record.attempts
    known = jobs.set_index("job_id")
    submitted = attempts["job_id"].map(known["submitted_at"])
    table = pd.DataFrame(
        {
            "job": attempts["job_id"],
            "submit": submitted,
            "wait": attempts["started_at"] - submitted,
            "run": attempts["ended_at"] - attempts["started_at"],
            "allocated": attempts["nodes"],
            "requested": attempts["job_id"].map(known["size"]),
            "walltime": attempts["job_id"].map(known["walltime"]),
            "status": attempts["outcome"].map(SWF_STATUS),
            "user": attempts["job_id"].map(known["user_id"]),
            "attempt": attempts["attempt"],
        }
    ).sort_values(["submit", "job", "attempt"], kind="stable")
    lines = ["; Version: 2.2", f"; MaxJobs: {table['job'].nunique()}", f"; MaxRecords: {len(table)}"]
    for key, value in header.items():
        lines.extend(f"; {key}: {part}" for part in str(value).splitlines())
    for row in table.itertuples(index=False):
        walltime = row.walltime if math.isfinite(row.walltime) else -1
        fields = [row.job, row.submit, row.wait, row.run, row.allocated, -1, -1, row.requested, walltime, -1, row.status]
        fields += [row.user, -1, -1, -1, -1, -1, -1]
        lines.append(" ".join(_field(float(value)) for value in fields))
    return "\n".join(lines) + "\n"


def swf_header(result) -> dict[str, str]:
    """The header of the run's SWF schedule (SWF 2.2 header comments).

    Args:
        result: a :class:`~torus_sim.experiments.runner.RunResult`.

    Returns:
        ``Computer``, ``Installation``, ``Conversion``, ``MaxNodes``, ``MaxProcs``, ``UnixStartTime`` (when the
        source trace has one) and ``Note`` (source trace with SHA-256, failures, configuration), as
        :func:`torus_sim.outputs.formats.swf_schedule.schedule_swf` takes them.
    """
    inputs = result.inputs
    platform, workload, failures = inputs["platform"], inputs["workload"], inputs["failures"]
    header = {
        "Computer": f"torus-sim {__version__} (simulated {platform['kind']} of {platform['nodes']} nodes)",
        "Installation": "simulation, not a real machine",
        "Conversion": "torus-sim run (one line per attempt: status 1 completed, 0 failed by a failure or silent error, 5 preempted)",
        "MaxNodes": str(platform["nodes"]),
        "MaxProcs": str(platform["nodes"]),
    }
    if workload.get("unix_start_time"):
        header["UnixStartTime"] = str(workload["unix_start_time"])
    config = result.config.model_dump(mode="json", exclude_defaults=True)
    header["Note"] = "\n".join(
        [
            f"source trace {workload['path']} (sha256 {workload['sha256']})",
            f"failures {failures['source'] or failures['spec']} ({failures['count']} fail-stop)",
            f"policy {inputs['policy']}; configuration {json.dumps(config, sort_keys=True)}",
        ]
    )
    return header


_FIELD_SPLIT = re.compile(r"(\s+)")


def relogged_swf(lines: Iterable[str], schedule: Mapping[int, tuple[float, float]], notes: Iterable[str] = ()) -> str:
    """An SWF log with each replayed job's wait and run time (fields 3 and 4) replaced by a run's: the log as it ran there.

    Every other field, line and header line stays as logged, byte for byte (the separators included); the ``notes``
    become ``; Note:`` lines at the end of the header, before the first job line. A job line whose job (field 1) has
    no entry in ``schedule`` (a line the run did not replay: a cancelled line skipped, a line the cleaning dropped)
    is kept as logged; a job number on several lines (an SWF multi-line job) has its first line replaced.

    The text is what :func:`~torus_sim.inputs.workload.swf.read_swf` reads, so the run's schedule becomes a log that
    every reader of the archive's files, and a replay held against its log (``--against-log``), can take: a log
    whose "logged" schedule was made by known settings, to check that a calibration finds them
    (docs/validation/recovery.md).

    Args:
        lines: the log's text lines, with or without their ends of line.
        schedule: job number -> ``(wait, run time)`` in seconds, each rounded to a whole second (half up), as the SWF
            fields are integers; a negative value is written as it is (``-1``: unknown).
        notes: the ``Note`` lines to add (one line each).

    Returns:
        The text, each line ending with a newline.

    Raises:
        ValueError: a job line whose first field is not a number (the caller reads logs that
            :func:`~torus_sim.inputs.workload.swf.read_swf` accepted).

    Source: the SWF definition (fields 1-4, header comments; Feitelson et al., JPDC 74(10), 2014).
    """
    out, pending, replaced = [], list(notes), set()
    for line in lines:
        text = line.rstrip("\r\n")
        stripped = text.strip()
        if not stripped or stripped.startswith(";"):
            out.append(text)
            continue
        if pending:  # the header's end: the notes go before the first job line
            out.extend(f"; Note: {note}" for note in pending)
            pending = []
        pieces = _FIELD_SPLIT.split(text)
        first = 2 if pieces[0] == "" else 0  # field k is pieces[first + 2k] (a line starting with blanks: "", blanks, ...)
        job = int(float(pieces[first]))
        entry = schedule.get(job)
        if entry is not None and job not in replaced and len(pieces) > first + 6:
            replaced.add(job)
            for index, value in zip((first + 4, first + 6), entry, strict=True):
                pieces[index] = str(math.floor(value + 0.5)) if value >= 0 else _field(value)
            text = "".join(pieces)
        out.append(text)
    out.extend(f"; Note: {note}" for note in pending)  # a log without job lines
    return "\n".join(out) + "\n"


def relogged_log(result) -> str:
    """A replay's log as it ran under the replay's settings: :func:`relogged_swf` of the log and the run's schedule.

    Each job's wait is its first start minus its submission, its run time its end minus its start (a job killed at its
    requested time: the time it ran); the ``Note`` lines name the simulator, the policy and the configuration.

    Args:
        result: a finished online replay of an SWF log file at load scale 1
            (:class:`~torus_sim.experiments.runner.RunResult`).

    Returns:
        The relogged text (SWF).

    Raises:
        ConfigurationError: a workload that is no log file, a load scale other than 1 (the log's lines are its own
            load's), a log whose bytes changed since the run read it, or a job that ran more than once (killed by a
            failure, preempted, requeued: one line per job cannot hold it; ``--swf`` writes one line per attempt).
    """
    from torus_sim.core.errors import ConfigurationError
    from torus_sim.core.files import file_sha256, input_lines
    from torus_sim.inputs.workload.logged import check_own_load, replayed_file

    workload = result.inputs["workload"]
    path = replayed_file(workload, "a relogged log is the replayed SWF log with the run's schedule")
    scenario = result.config
    check_own_load(scenario.load_scale, scenario.offered_load, "a relogged log keeps the log's submissions, its own load's")
    if file_sha256(path) != workload.get("sha256"):
        raise ConfigurationError(f"{path.name} changed since the run read it (SHA-256 {workload.get('sha256')})")
    jobs = result.jobs
    restarted = int((jobs["attempts"] > 1).sum())
    if restarted:
        raise ConfigurationError(
            f"the run started {restarted:,} jobs more than once (failures, kills, preemptions): one log line per job "
            "cannot hold their attempts (--swf writes one line per attempt)"
        )
    started = jobs["first_started_at"].to_numpy(dtype=float)
    waits = started - jobs["submitted_at"].to_numpy(dtype=float)
    runs = jobs["finished_at"].to_numpy(dtype=float) - started
    schedule = {
        int(job): (float(wait), float(run))
        for job, wait, run in zip(jobs["job_id"].to_numpy(), waits, runs, strict=True)
        if math.isfinite(wait) and math.isfinite(run)
    }
    config = scenario.model_dump(mode="json", exclude_defaults=True)
    notes = (
        f"relogged by torus-sim {__version__}: the waits (field 3) and run times (field 4) of {len(schedule):,} jobs are "
        f"its replay's, policy {result.inputs.get('policy')}; every other field and line as logged",
        f"replay configuration {json.dumps(config, sort_keys=True)}",
    )
    return relogged_swf(input_lines(path, "SWF log"), schedule, notes)
