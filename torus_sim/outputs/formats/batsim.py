"""Batsim's job record of a run (``batsim_jobs.csv``), as evalys reads it.

**Job records.** Batsim writes one row per executed job with the columns of :data:`BATSIM_COLUMNS`;
evalys (Batsim's analysis toolkit) reads it with ``JobSet.from_csv`` and draws Gantt charts from
``allocated_resources``, the interval set of the resource ids the job held (``"0-3 7 9-10"``). Here a
job that ran several times (killed by a failure, a silent error, a preemption) gets one row per
attempt, and an attempt that migrated one row per placement, so the Gantt chart shows where every
second of work ran. The first row of a job keeps its id; later rows are ``<id>#<n>`` (n = 1, 2, ...),
the row's attempt and how it ended are in ``metadata``. Resources are supernodes on the torus and
nodes on a cluster; on a cluster that keeps counts only (no node identities) ids are assigned after the
run, lowest free first, which is one placement consistent with the counts.

Batsim's JSON **workloads** are read with the other inputs (:mod:`torus_sim.inputs.workload.batsim`).

References:
    Dutot, Mercier, Poquet, Richard, "Batsim: a realistic language-independent resources and jobs
    management systems simulator", JSSPP 2016; Batsim documentation, "Output files" (the job
    record) and "Workloads"; evalys ``evalys.jobset.JobSet``.
"""

from __future__ import annotations

import heapq
from pathlib import Path

import numpy as np
import pandas as pd

from torus_sim.machine.platforms.base import interval_text

__all__ = ["BATSIM_COLUMNS", "FINAL_STATES", "batsim_jobs", "run_workload_name"]

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
    """Node ids for segments run on counts: lowest free ids first, in time order (ends before starts).

    A segment of length 0 (a job of run time 0) is given the lowest free ids at its instant and gives them
    back at once: its end cannot come before its own start. Such instants come after the ends and before the
    starts of their time, when the most nodes are free that time ever has: the engine ran it at some moment of
    that instant, so it fits then.
    """
    events = []
    for index, (start, end) in enumerate(zip(segments["start"], segments["end"], strict=True)):
        if end > start:
            events.append((start, 2, index))
            events.append((end, 0, index))
        else:
            events.append((start, 1, index))
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
            resources[index] = interval_text(taken)
            if kind == 2:
                held[index] = taken
            else:  # an instant: the ids are free again for the next segment
                for node in taken:
                    heapq.heappush(free, node)
    return resources


def batsim_jobs(record, jobs: pd.DataFrame, workload_name: str, boot_joules=None) -> pd.DataFrame:
    """The run's Batsim job record: one row per attempt and placement (see the module docstring).

    Args:
        record: the run's :class:`~torus_sim.engine.record.SimulationRecord` (recorded: attempts table present).
        jobs: the per-job table (:func:`torus_sim.metrics.summary.job_table`; job_id, submitted_at,
            walltime, partition_size).
        workload_name: Batsim's ``workload_name`` column (the workload file's stem).
        boot_joules: float ``(A,)``, what each attempt's boot changed in its energy (its booting nodes
            drawing ``node_boot_w`` rather than the job's watts), joules, in the record's attempt-table
            order (:attr:`~torus_sim.metrics.energy.EnergyAccount.boot_change_j`); None: no change.

    Returns:
        :data:`BATSIM_COLUMNS`, rows in start order; times in seconds; ``consumed_energy`` in joules
        (allocated nodes x the segment's length x the job's ``power_w``, plus on an attempt's first
        segment what its boot's own draw changed, ``boot_joules``) with power accounting, else
        -1 (Batsim's "no energy model"), ``stretch`` = turnaround / execution time (NaN for a
        zero-length execution).

    Raises:
        ValueError: the record holds no attempt table (a run made with ``record=False``).
    """
    if record.attempts is None:
        raise ValueError("the run kept no attempt table (record=False): no Batsim job record can be written")
    segments = _segments(record.attempts, record.migrations)
    segments["consumed"] = _attempt_joules(segments, jobs, boot_joules)
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
            "consumed_energy": segments["consumed"],
            "metadata": [f"attempt {a}, {_ENDED[o]}" for a, o in zip(segments["attempt"], segments["outcome"], strict=True)],
        },
        columns=BATSIM_COLUMNS,
    )
    return table


def _attempt_joules(segments: pd.DataFrame, jobs: pd.DataFrame, boot_joules=None):
    """Each segment's energy in joules, or -1 without power accounting.

    A segment draws its allocated nodes x length x the job's watts per node; the first segment of each
    attempt (a boot comes first) also takes ``boot_joules`` of its attempt (in the attempt table's
    order, which :func:`_segments` keeps).
    """
    if "power_w" not in jobs.columns:
        return -1.0
    watts = segments["job_id"].map(jobs.set_index("job_id")["power_w"])
    joules = segments["nodes"] * (segments["end"] - segments["start"]) * watts
    if boot_joules is not None and len(segments):
        keys = segments[["job_id", "attempt"]]
        first = (keys != keys.shift()).any(axis=1).to_numpy()
        joules[first] += np.asarray(boot_joules, dtype=float)
    return joules.fillna(-1.0)


def run_workload_name(result) -> str:
    """The workload's name for exchange formats (Batsim's ``workload_name``).

    Args:
        result: a :class:`~torus_sim.experiments.runner.RunResult`.

    Returns:
        The workload file's name without ``.gz`` / ``.xz`` / ``.bz2`` and ``.swf`` / ``.json``.
    """
    name = Path(str(result.inputs["workload"]["path"])).name
    for suffix in (".gz", ".xz", ".bz2", ".swf", ".json"):
        name = name.removesuffix(suffix)
    return name
