"""Batsim's exchange formats: the job record a run leaves (``batsim_jobs.csv``) and JSON workloads.

**Job records.** Batsim writes one row per executed job with the columns of :data:`BATSIM_COLUMNS`;
evalys (Batsim's analysis toolkit) reads it with ``JobSet.from_csv`` and draws Gantt charts from
``allocated_resources``, the interval set of the resource ids the job held (``"0-3 7 9-10"``). Here a
job that ran several times (killed by a failure, a silent error, a preemption) gets one row per
attempt, and an attempt that migrated one row per placement, so the Gantt chart shows where every
second of work ran. The first row of a job keeps its id; later rows are ``<id>#<n>`` (n = 1, 2, ...),
the row's attempt and how it ended are in ``metadata``. Resources are supernodes on the torus and
nodes on a cluster; on a cluster that keeps counts only (no node identities) ids are assigned after the
run, lowest free first, which is one placement consistent with the counts.

**Workloads.** A Batsim JSON workload gives ``nb_res`` and ``jobs`` (``id``, ``subtime``, ``walltime``,
``res``, ``profile``) with ``profiles``; a ``delay`` profile's ``delay`` is the job's run time. It is read
into the SWF records the cleaning rules of :func:`torus_sim.workload.jobs.jobs_from_swf` take, so a
Batsim workload is cleaned exactly as an SWF log is. Other profile types describe work Batsim
simulates itself (parallel tasks, communication matrices) and are refused with a sentence.

References:
    Dutot, Mercier, Poquet, Richard, "Batsim: a realistic language-independent resources and jobs
    management systems simulator", JSSPP 2016; Batsim documentation, "Output files" (the job
    record) and "Workloads"; evalys ``evalys.jobset.JobSet``.
"""

from __future__ import annotations

import heapq
import json
import math
from pathlib import Path

import pandas as pd

from torus_sim.errors import BatsimWorkloadFormatError, InputFileError
from torus_sim.files import file_sha256, input_text
from torus_sim.platforms.base import interval_text
from torus_sim.workload.swf import MAX_SECONDS, SwfRecord, SwfTrace

__all__ = ["BATSIM_COLUMNS", "FINAL_STATES", "batsim_jobs", "read_batsim_workload"]

BATSIM_COLUMNS = [
    "job_id",
    "workload_name",
    "profile",
    "submission_time",
    "requested_number_of_resources",
    "requested_time",
    "success",
    "final_state",
    "starting_time",
    "execution_time",
    "finish_time",
    "waiting_time",
    "turnaround_time",
    "stretch",
    "allocated_resources",
    "consumed_energy",
    "metadata",
]
"""Batsim's job-record columns, in its order (times in seconds)."""

FINAL_STATES = {
    "completed": "COMPLETED_SUCCESSFULLY",
    "silent_error": "COMPLETED_FAILED",
    "killed": "COMPLETED_KILLED",
    "preempted": "COMPLETED_KILLED",
    "migrated": "COMPLETED_KILLED",
}
"""Batsim's ``final_state`` of each way an attempt (or a placement) ends."""

_ENDED = {
    "completed": "completed",
    "silent_error": "ended in a silent error",
    "killed": "killed by a failure",
    "preempted": "preempted",
    "migrated": "migrated",
}


def _segments(attempts: pd.DataFrame, migrations: pd.DataFrame | None) -> pd.DataFrame:
    """Attempts split at their migrations: job_id, attempt, start, end, nodes, outcome, resources."""
    rows = []
    moves: dict[tuple[int, int], list] = {}
    if migrations is not None and len(migrations):
        for move in migrations.sort_values("time", kind="stable").itertuples(index=False):
            moves.setdefault((move.job_id, move.attempt), []).append(move)
    for attempt in attempts.itertuples(index=False):
        start = attempt.started_at
        for move in moves.get((attempt.job_id, attempt.attempt), []):
            rows.append((attempt.job_id, attempt.attempt, start, move.time, attempt.nodes, "migrated", move.from_resources))
            start = move.time
        rows.append((attempt.job_id, attempt.attempt, start, attempt.ended_at, attempt.nodes, attempt.outcome, attempt.resources))
    return pd.DataFrame(rows, columns=["job_id", "attempt", "start", "end", "nodes", "outcome", "resources"])


def _assign_ids(segments: pd.DataFrame, capacity: int) -> list[str]:
    """Node ids for segments run on counts: lowest free ids first, in time order (ends before starts)."""
    events = []
    for index, (start, end) in enumerate(zip(segments["start"], segments["end"], strict=True)):
        events.append((start, 1, index))
        events.append((end, 0, index))
    events.sort()
    free = list(range(capacity))
    held: dict[int, list[int]] = {}
    resources = [""] * len(segments)
    nodes = segments["nodes"].tolist()
    for _, kind, index in events:
        if kind == 0:
            for node in held.pop(index):
                heapq.heappush(free, node)
        else:
            taken = [heapq.heappop(free) for _ in range(int(nodes[index]))]
            held[index] = taken
            resources[index] = interval_text(taken)
    return resources


def batsim_jobs(record, jobs: pd.DataFrame, workload_name: str) -> pd.DataFrame:
    """The run's Batsim job record: one row per attempt and placement (see the module docstring).

    Args:
        record: the run's :class:`~torus_sim.engine.record.SimulationRecord` (recorded: attempts table present).
        jobs: the per-job table (:func:`torus_sim.metrics.summary.job_table`; job_id, submitted_at,
            walltime, partition_size).
        workload_name: Batsim's ``workload_name`` column (the workload file's stem).

    Returns:
        :data:`BATSIM_COLUMNS`, rows in start order; times in seconds; ``consumed_energy`` -1 (no
        energy model), ``stretch`` = turnaround / execution time (NaN for a zero-length execution).

    Raises:
        ValueError: the record holds no attempt table (a run made with ``record=False``).
    """
    if record.attempts is None:
        raise ValueError("the run kept no attempt table (record=False): no Batsim job record can be written")
    segments = _segments(record.attempts, record.migrations)
    segments = segments.sort_values(["start", "job_id", "attempt"], kind="stable").reset_index(drop=True)
    if len(segments) and (segments["resources"] == "").all():
        segments["resources"] = _assign_ids(segments, record.capacity_total)
    known = jobs.set_index("job_id")
    submitted = segments["job_id"].map(known["submitted_at"])
    rank = segments.groupby("job_id", sort=False).cumcount()
    execution = segments["end"] - segments["start"]
    turnaround = segments["end"] - submitted
    table = pd.DataFrame(
        {
            "job_id": [str(job) if n == 0 else f"{job}#{n}" for job, n in zip(segments["job_id"], rank, strict=True)],
            "workload_name": workload_name,
            "profile": "delay",
            "submission_time": submitted,
            "requested_number_of_resources": segments["job_id"].map(known["partition_size"]),
            "requested_time": segments["job_id"].map(known["walltime"]),
            "success": (segments["outcome"] == "completed").astype(int),
            "final_state": segments["outcome"].map(FINAL_STATES),
            "starting_time": segments["start"],
            "execution_time": execution,
            "finish_time": segments["end"],
            "waiting_time": segments["start"] - submitted,
            "turnaround_time": turnaround,
            "stretch": turnaround / execution.where(execution > 0),
            "allocated_resources": segments["resources"],
            "consumed_energy": -1.0,
            "metadata": [f"attempt {a}, {_ENDED[o]}" for a, o in zip(segments["attempt"], segments["outcome"], strict=True)],
        },
        columns=BATSIM_COLUMNS,
    )
    return table


def read_batsim_workload(path: str | Path) -> SwfTrace:
    """Read a Batsim JSON workload as SWF records (for the SWF cleaning rules).

    Args:
        path: the JSON file (plain or compressed).

    Returns:
        A trace whose header holds ``MaxNodes`` = ``MaxProcs`` = ``nb_res`` and whose records give
        each job's id (the JSON id when it is an integer, else its position from 1), ``subtime``,
        ``walltime`` (requested time; -1 when absent), ``res`` (requested and allocated processors)
        and its delay profile's ``delay`` (run time). ``header["Note"]`` records renamed ids.

    Raises:
        FileNotFoundError: no such file.
        InputFileError: a directory, a truncated or corrupt compressed file.
        WorkloadFormatError: not JSON (naming the line of the error).
        InputFileError: no ``nb_res`` or ``jobs``, a job without a needed field or with a value that
            is not a number in range, an unknown profile, or a profile that is not of type ``delay``
            (naming the job and the profile type).
    """
    path = Path(path)
    try:
        data = json.loads(input_text(path, "workload"))
    except json.JSONDecodeError as error:
        raise BatsimWorkloadFormatError(path, error.lineno, f"not a Batsim JSON workload: {error.msg}") from None
    except RecursionError:
        raise InputFileError(path, "not a Batsim JSON workload: nested too deeply") from None
    except ValueError as error:  # e.g. an integer beyond Python's digit limit
        raise InputFileError(path, f"not a Batsim JSON workload: {error}") from None
    if not isinstance(data, dict) or "jobs" not in data or "nb_res" not in data:
        raise InputFileError(path, "a Batsim workload is a JSON object with 'nb_res', 'jobs' and 'profiles'")
    nb_res = _number(path, data["nb_res"], "nb_res", "the workload")
    profiles = data.get("profiles", {})
    if not isinstance(data["jobs"], list) or not isinstance(profiles, dict):
        raise InputFileError(path, "'jobs' must be a list and 'profiles' an object")
    header = {"MaxNodes": str(int(nb_res)), "MaxProcs": str(int(nb_res))}
    records: list[SwfRecord] = []
    renamed = 0
    for position, job in enumerate(data["jobs"], start=1):
        where = f"job {position}"
        if not isinstance(job, dict):
            raise InputFileError(path, f"{where} is not a JSON object")
        missing = [key for key in ("id", "subtime", "res", "profile") if key not in job]
        if missing:
            raise InputFileError(path, f"{where} has no {', '.join(missing)}")
        where = f"job {job['id']!r}"
        profile = profiles.get(job["profile"]) if isinstance(job["profile"], str) else None
        if not isinstance(profile, dict):
            raise InputFileError(path, f"{where} names profile {job['profile']!r}, which 'profiles' does not define")
        if profile.get("type") != "delay":
            raise InputFileError(
                path,
                f"{where}: profile {job['profile']!r} is of type {profile.get('type')!r}; only 'delay' profiles (a run time) "
                "can be replayed here, the others describe work Batsim itself simulates",
            )
        runtime = _number(path, profile.get("delay"), "the delay", where)
        if isinstance(job["id"], int) and not isinstance(job["id"], bool) and 0 <= job["id"] < 2**53:
            job_id = job["id"]
        elif isinstance(job["id"], str) and job["id"].isdigit() and len(job["id"]) < 16:
            job_id = int(job["id"])
        else:
            job_id, renamed = position, renamed + 1
        submit = _number(path, job["subtime"], "subtime", where)
        walltime = _number(path, job["walltime"], "walltime", where) if job.get("walltime", -1) not in (-1, None) else -1.0
        processors = _number(path, job["res"], "res", where)
        if not float(processors).is_integer():
            raise InputFileError(path, f"{where}: res must be an integer, got {job['res']!r}")
        processors = int(processors)
        records.append(
            SwfRecord(
                job_id, submit, -1.0, runtime, processors, -1.0, -1.0, processors, walltime, -1.0, 1, -1, -1, -1, -1, -1, -1, -1.0
            )
        )
    if renamed:
        header["Note"] = f"{renamed} Batsim job ids that are not integers were numbered by position"
    if len({record.job_id for record in records}) != len(records):
        raise InputFileError(path, "job ids repeat (after numbering non-integer ids by position)")
    return SwfTrace.from_records(path, file_sha256(path), header, records)


def _number(path: Path, value, name: str, where: str) -> float:
    """A JSON number in [0, MAX_SECONDS] (times and counts alike), or an InputFileError naming the job."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= MAX_SECONDS or not math.isfinite(value):
        raise InputFileError(path, f"{where}: {name} must be a number in 0..{MAX_SECONDS:.0e}, got {value!r}")
    return float(value)
