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

import pandas as pd

from torus_sim.core.version import __version__

__all__ = ["SWF_STATUS", "schedule_swf", "swf_header"]

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
