"""Batsim's JSON workloads read as SWF records, so that the SWF cleaning rules apply to them.

Batsim (Dutot et al., "Batsim: a realistic language-independent resources and jobs management
systems simulator", JSSPP 2016) describes a workload as ``nb_res`` and ``jobs`` (``id``, ``subtime``,
``walltime``, ``res``, ``profile``) with ``profiles``; a ``delay`` profile's ``delay`` is the job's run
time. It is read into the SWF records the cleaning rules of :func:`torus_sim.inputs.workload.jobs.jobs_from_swf`
take, so a Batsim workload is cleaned exactly as an SWF log is. Other profile types describe work
Batsim simulates itself (parallel tasks, communication matrices) and are refused with a sentence.
The writer of Batsim's job record is :mod:`torus_sim.outputs.formats.batsim`.

References:
    Batsim documentation, "Workloads" (JSON format, profile types).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from torus_sim.core.errors import BatsimWorkloadFormatError, InputFileError
from torus_sim.core.files import file_sha256, input_text
from torus_sim.inputs.workload.swf import MAX_SECONDS, SwfRecord, SwfTrace

__all__ = ["read_batsim_workload"]


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
