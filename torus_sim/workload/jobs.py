"""A workload (the jobs of a run), and SWF records turned into jobs with documented cleaning rules.

Two rule sets, one per paper family (:data:`SWF_RULES`): ``bgl-fault`` (BGL-FAULT §6.2, the
default on the torus) and ``pv-easy`` (PV-EASY §5.1, the default on a cluster). They differ in
rules 5, 4 and 10 below. Cleaning rules (each skipped or altered job is counted in
:attr:`Workload.cleaning` under the key given in brackets):

1. Unknown submit time (``submit_time < 0``): skipped [``skipped_unknown_submit``].
2. Size = allocated processors; if unknown, requested processors [``size_from_request``];
   if both unknown: skipped [``skipped_unknown_size``].
3. Runtime = ``run_time``; unknown (``< 0``): skipped [``skipped_unknown_runtime``].
4. Walltime (the scheduler's estimate t_e) = ``requested_time``; if unknown or not positive,
   the runtime [``walltime_from_runtime``] (at least 1 s with ``pv-easy``).
5. Processors to supernodes: a log from a machine no larger than the platform maps one log
   node to one supernode (BGL-FAULT §6: the 128-node logs on the 128-supernode torus); a larger
   log scales sizes by ``capacity / MaxNodes``, rounding up [``size_scaled``] (``bgl-fault``; with
   ``pv-easy`` sizes are processors and are never scaled).
6. Jobs larger than the platform: skipped [``skipped_too_large``].
7. A size with no rectangular shape (torus only) is rounded up to the next size that has one;
   the job still does only ``size`` supernodes of work, so the extra ones are lost capacity
   [``size_rounded_up``].
8. Load scale ``c`` multiplies runtime and walltime alike (BGL-FAULT §6.2).
9. Jobs are ordered by submit time, then job id; a file out of order is sorted
   [``reordered``, the number of lines that were out of order]; a job's rank is its position.
10. ``pv-easy`` only: the requested time is the kill time; a job that ran longer is cut there
    [``cut_at_walltime``].
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from torus_sim.errors import ConfigurationError, InputFileError
from torus_sim.job import Job
from torus_sim.workload.swf import SwfTrace

__all__ = ["SWF_RULES", "SwfRules", "WORKLOAD_KINDS", "Workload", "jobs_from_swf"]

WORKLOAD_KINDS = ("online", "batch")
"""``online``: jobs submitted over time (SWF traces); ``batch``: every job released at time 0."""


@dataclass(frozen=True)
class SwfRules:
    """How SWF records become jobs (see the module docstring).

    Attributes:
        scale_to_platform: a log from a larger machine scales sizes to the platform (else such jobs are skipped).
        kill_at_walltime: the walltime is the kill time (runtimes are cut there).
        walltime_floor: a missing requested time becomes max(runtime, this), seconds.
    """

    scale_to_platform: bool = True
    kill_at_walltime: bool = False
    walltime_floor: float = 0.0


SWF_RULES = {
    "bgl-fault": SwfRules(scale_to_platform=True, kill_at_walltime=False, walltime_floor=0.0),
    "pv-easy": SwfRules(scale_to_platform=False, kill_at_walltime=True, walltime_floor=1.0),
}
"""The rule sets: BGL-FAULT §6.2's (the torus default) and PV-EASY §5.1's (the cluster default)."""


@dataclass
class Workload:
    """The jobs of one run and where they came from.

    Attributes:
        jobs: jobs in priority order (online: submit time, then job id; batch: job index).
        source: path of the trace, or a description.
        sha256: hash of the source file ("" for generated workloads).
        load_scale: the c applied to runtimes and walltimes.
        cleaning: counts of skipped or altered jobs by rule (see module docstring).
        header: the SWF header (attribution lines included).
        kind: ``online`` or ``batch`` (:data:`WORKLOAD_KINDS`).
        processors: the machine size the source names (SWF MaxProcs / MaxNodes, a job file's P), or None.
        times: moldable batches: float ``(n, P)``, t_j(p) for p = 1..P (row i is job i's ``times``).
    """

    jobs: list[Job]
    source: str
    sha256: str = ""
    load_scale: float = 1.0
    cleaning: Counter = field(default_factory=Counter)
    header: dict[str, str] = field(default_factory=dict)
    kind: str = "online"
    processors: int | None = None
    times: object = None

    @property
    def span(self) -> tuple[float, float]:
        """``(first submit, last submit)`` in seconds; ``(0, 0)`` when empty."""
        if not self.jobs:
            return (0.0, 0.0)
        return (self.jobs[0].submitted_at, self.jobs[-1].submitted_at)


def jobs_from_swf(
    trace: SwfTrace,
    capacity: int,
    round_size: Callable[[int], int] | None = None,
    load_scale: float = 1.0,
    max_jobs: int | None = None,
    rules: SwfRules = SWF_RULES["bgl-fault"],
) -> Workload:
    """Turn SWF records into jobs for a platform of ``capacity`` supernodes (or processors).

    Args:
        trace: the parsed SWF file.
        capacity: supernodes (torus) or processors (flat platform) of the simulated machine.
        round_size: maps a size to the partition size it occupies (the torus's
            :func:`~torus_sim.partitions.round_up_to_feasible_size`); identity when None.
        load_scale: c > 0, multiplies every runtime and walltime (BGL-FAULT §6.2).
        max_jobs: keep only the first this many usable jobs (in FCFS order); all when None.
        rules: the cleaning rule set (:data:`SWF_RULES`).

    Returns:
        The workload with its cleaning counts.

    Raises:
        ConfigurationError: ``load_scale`` or ``capacity`` not positive.
        WorkloadFormatError: a malformed ``MaxNodes`` header.
        InputFileError: no job is left after cleaning (the message gives the cleaning counts).

    References:
        BGL-FAULT §6.2 (logs, load scale c); PV-EASY §5.1 (requested time = kill time);
        ../shared/data/SOURCES.md (size rounding).
    """
    if not load_scale > 0 or math.isinf(load_scale):
        raise ConfigurationError(f"load scale c must be a positive number, got {load_scale}")
    if capacity < 1:
        raise ConfigurationError(f"capacity must be positive, got {capacity}")
    max_nodes = trace.header_int("MaxNodes") or trace.header_int("MaxProcs")
    scale = capacity / max_nodes if rules.scale_to_platform and max_nodes and max_nodes > capacity else 1.0
    cleaning: Counter = Counter()
    jobs: list[Job] = []
    last_submit = -math.inf
    for record in trace.records:
        if record.submit_time < 0:
            cleaning["skipped_unknown_submit"] += 1
            continue
        processors = record.allocated_processors
        if processors <= 0:
            processors = record.requested_processors
            if processors <= 0:
                cleaning["skipped_unknown_size"] += 1
                continue
            cleaning["size_from_request"] += 1
        if record.run_time < 0:
            cleaning["skipped_unknown_runtime"] += 1
            continue
        size = processors
        if scale != 1.0:
            size = max(1, math.ceil(processors * scale - 1e-9))
            cleaning["size_scaled"] += 1
        if size > capacity:
            cleaning["skipped_too_large"] += 1
            continue
        partition_size = round_size(size) if round_size else size
        if partition_size != size:
            cleaning["size_rounded_up"] += 1
        walltime = record.requested_time
        if walltime <= 0:
            walltime = max(record.run_time, rules.walltime_floor) if rules.walltime_floor else record.run_time
            cleaning["walltime_from_runtime"] += 1
        runtime = record.run_time
        if rules.kill_at_walltime and runtime > walltime:
            runtime = walltime
            cleaning["cut_at_walltime"] += 1
        if record.submit_time < last_submit:
            cleaning["reordered"] += 1
        last_submit = max(last_submit, record.submit_time)
        jobs.append(
            Job(
                job_id=record.job_id,
                submitted_at=record.submit_time,
                runtime=runtime * load_scale,
                walltime=walltime * load_scale,
                size=size,
                partition_size=partition_size,
                user_id=record.user_id,
            )
        )
    if not jobs:
        counts = ", ".join(f"{key} {value}" for key, value in sorted(cleaning.items())) or "none"
        raise InputFileError(
            trace.path, f"no job left after cleaning ({len(trace.records)} job lines; cleaning: {counts}; capacity {capacity})"
        )
    jobs.sort(key=lambda job: (job.submitted_at, job.job_id))
    if max_jobs is not None:
        jobs = jobs[:max_jobs]
    for rank, job in enumerate(jobs):
        job.rank = rank
    return Workload(
        jobs=jobs,
        source=str(trace.path),
        sha256=trace.sha256,
        load_scale=load_scale,
        cleaning=cleaning,
        header=dict(trace.header),
        kind="online",
        processors=trace.header_int("MaxProcs") or trace.header_int("MaxNodes"),
    )
