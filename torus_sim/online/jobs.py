"""Online jobs read from an SWF trace for the flat platform: submit time, runtime, requested time, size, user.

Rules (counted in :attr:`OnlineWorkload.counts`):
- a job with an unknown runtime (``run_time < 0``) or size (no allocated nor requested
  processors) is skipped;
- a job larger than the machine is skipped (the archive's cleaned logs expect it);
- a missing requested time (``requested_time <= 0``) falls back to the job's runtime (a perfect
  estimate) and is counted;
- the requested time is the kill time: a job that ran longer is cut at its requested time;
- submit times that go backwards are sorted (by submit time, then job id) and counted.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from torus_sim.errors import ConfigurationError
from torus_sim.workload.swf import read_swf

__all__ = ["OnlineJob", "OnlineWorkload", "load_online_workload"]


class OnlineJob:
    """A rigid job submitted over time, and what happened to it.

    Attributes:
        job_id: SWF job number.
        rank: priority rank, 0 = first submitted (FCFS priority: lower rank = higher priority).
        submitted_at: seconds from the trace start.
        runtime: work in seconds (the SWF runtime, cut at the requested time).
        requested_time: the user estimate, seconds (kill time).
        processors: processors the job needs.
        user: SWF user id.
        prediction: predicted runtime (seconds), set at submission by the runtime predictor.
        first_start_at, start_at, end_at: first start, start of the current segment, end (None before).
        saved: work kept from earlier segments (checkpoint / suspend), seconds.
        preemptions: how many times the job was preempted.
        time_sum: wall time spent running over all segments (Time_sum of PV-EASY Eq. 3).
        reservation_at: the reservation EASY gave it as the blocked head (last one).
        violated_at: a reservation that passed while backfilled lower-priority jobs held its processors.
        fair_start_at: first instant it was the blocked head and could have started had no
            lower-priority job been running (strict-fairness checker).
        blocked: it was once the blocked head of the queue.
    """

    __slots__ = (
        "blocked",
        "end_at",
        "end_event",
        "fair_start_at",
        "first_start_at",
        "job_id",
        "prediction",
        "preemptions",
        "processors",
        "rank",
        "requested_time",
        "reservation_at",
        "runtime",
        "saved",
        "segment_cost",
        "start_at",
        "submitted_at",
        "time_sum",
        "user",
        "violated_at",
    )

    def __init__(self, job_id: int, submitted_at: float, runtime: float, requested_time: float, processors: int, user: int):
        self.job_id = job_id
        self.rank = 0
        self.submitted_at = submitted_at
        self.runtime = runtime
        self.requested_time = requested_time
        self.processors = processors
        self.user = user
        self.prediction = requested_time
        self.first_start_at = None
        self.start_at = None
        self.end_at = None
        self.end_event = None
        self.saved = 0.0
        self.segment_cost = 0.0
        self.preemptions = 0
        self.time_sum = 0.0
        self.reservation_at = None
        self.violated_at = None
        self.fair_start_at = None
        self.blocked = False

    def fresh_copy(self) -> OnlineJob:
        """The same job, not yet run."""
        job = OnlineJob(self.job_id, self.submitted_at, self.runtime, self.requested_time, self.processors, self.user)
        job.rank = self.rank
        return job

    def __repr__(self) -> str:
        return f"OnlineJob({self.job_id}, submit={self.submitted_at}, run={self.runtime}, req={self.requested_time}, p={self.processors})"


@dataclass
class OnlineWorkload:
    """Jobs in priority (submission) order, the machine size and the cleaning counts."""

    jobs: list[OnlineJob]
    processors: int
    source: str = ""
    counts: Counter = field(default_factory=Counter)


def load_online_workload(path: str | Path, processors: int | None = None, max_jobs: int | None = None) -> OnlineWorkload:
    """Read an SWF trace for online replay on P processors.

    Args:
        path: the SWF file (gzip or plain).
        processors: P (default: the header's MaxProcs, else MaxNodes).
        max_jobs: keep only the first jobs (after the cleaning rules), for slices.

    Returns:
        The workload (see the module docstring for the rules).

    Raises:
        WorkloadFormatError: a malformed line (file and line named).
        ConfigurationError: no machine size in the header and none given.

    References:
        PV-EASY §5.1 (CTC, SDSC-BLUE, SDSC-DS from the Parallel Workloads Archive); SWF definition.
    """
    trace = read_swf(path)
    total = processors or trace.header_int("MaxProcs") or trace.header_int("MaxNodes")
    if not total:
        raise ConfigurationError(f"{path}: no MaxProcs / MaxNodes in the header; give the number of processors")
    counts: Counter = Counter()
    jobs = []
    for record in trace.records:
        size = record.allocated_processors if record.allocated_processors > 0 else record.requested_processors
        if record.run_time < 0:
            counts["skipped_unknown_runtime"] += 1
            continue
        if size <= 0:
            counts["skipped_unknown_size"] += 1
            continue
        if size > total:
            counts["skipped_larger_than_machine"] += 1
            continue
        requested = record.requested_time
        if requested <= 0:
            requested = max(record.run_time, 1.0)
            counts["requested_time_from_runtime"] += 1
        runtime = record.run_time
        if runtime > requested:
            runtime = requested
            counts["cut_at_requested_time"] += 1
        jobs.append(
            OnlineJob(record.job_id, float(record.submit_time), float(runtime), float(requested), int(size), record.user_id)
        )
    ordered = sorted(jobs, key=lambda job: (job.submitted_at, job.job_id))
    if any(a is not b for a, b in zip(ordered, jobs, strict=True)):
        counts["resorted_submit_times"] += 1
    if max_jobs:
        ordered = ordered[:max_jobs]
    for rank, job in enumerate(ordered):
        job.rank = rank
    counts["jobs"] = len(ordered)
    return OnlineWorkload(ordered, int(total), str(path), counts)
