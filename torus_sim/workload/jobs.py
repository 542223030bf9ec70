"""From SWF records to the jobs a simulation runs, with documented cleaning rules.

Cleaning rules (each skipped or altered job is counted in :attr:`Workload.cleaning` under the
key given in brackets):

1. Unknown submit time (``submit_time < 0``): skipped [``skipped_unknown_submit``].
2. Size = allocated processors; if unknown, requested processors [``size_from_request``];
   if both unknown: skipped [``skipped_unknown_size``].
3. Runtime = ``run_time``; unknown (``< 0``): skipped [``skipped_unknown_runtime``].
4. Walltime (the scheduler's estimate t_e) = ``requested_time``; if unknown or not positive,
   the runtime [``walltime_from_runtime``].
5. Processors to supernodes: a log from a machine no larger than the platform maps one log
   node to one supernode (BGL-FAULT §6: the 128-node logs on the 128-supernode torus); a larger
   log scales sizes by ``capacity / MaxNodes``, rounding up [``size_scaled``].
6. Jobs larger than the platform: skipped [``skipped_too_large``].
7. A size with no rectangular shape (torus only) is rounded up to the next size that has one;
   the job still does only ``size`` supernodes of work, so the extra ones are lost capacity
   [``size_rounded_up``].
8. Load scale ``c`` multiplies runtime and walltime alike (BGL-FAULT §6.2).
9. Jobs are ordered by submit time, then job id; a file out of order is sorted
   [``reordered``, the number of lines that were out of order].
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from torus_sim.errors import ConfigurationError
from torus_sim.job import Job
from torus_sim.workload.swf import SwfTrace

__all__ = ["Workload", "jobs_from_swf"]


@dataclass
class Workload:
    """The jobs of one run and where they came from.

    Attributes:
        jobs: jobs in FCFS order (submit time, then job id).
        source: path of the trace, or a description.
        sha256: hash of the source file ("" for generated workloads).
        load_scale: the c applied to runtimes and walltimes.
        cleaning: counts of skipped or altered jobs by rule (see module docstring).
        header: the SWF header (attribution lines included).
    """

    jobs: list[Job]
    source: str
    sha256: str = ""
    load_scale: float = 1.0
    cleaning: Counter = field(default_factory=Counter)
    header: dict[str, str] = field(default_factory=dict)

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
) -> Workload:
    """Turn SWF records into jobs for a platform of ``capacity`` supernodes (or processors).

    Args:
        trace: the parsed SWF file.
        capacity: supernodes (torus) or processors (flat platform) of the simulated machine.
        round_size: maps a size to the partition size it occupies (the torus's
            :func:`~torus_sim.partitions.round_up_to_feasible_size`); identity when None.
        load_scale: c > 0, multiplies every runtime and walltime (BGL-FAULT §6.2).
        max_jobs: keep only the first this many usable jobs (in FCFS order); all when None.

    Returns:
        The workload with its cleaning counts.

    Raises:
        ConfigurationError: ``load_scale`` or ``capacity`` not positive.
        WorkloadFormatError: a malformed ``MaxNodes`` header.

    References:
        BGL-FAULT §6.2 (logs, load scale c); ../shared/data/SOURCES.md (size rounding).
    """
    if not load_scale > 0 or math.isinf(load_scale):
        raise ConfigurationError(f"load scale c must be a positive number, got {load_scale}")
    if capacity < 1:
        raise ConfigurationError(f"capacity must be positive, got {capacity}")
    max_nodes = trace.header_int("MaxNodes") or trace.header_int("MaxProcs")
    scale = capacity / max_nodes if max_nodes and max_nodes > capacity else 1.0
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
            walltime = record.run_time
            cleaning["walltime_from_runtime"] += 1
        if record.submit_time < last_submit:
            cleaning["reordered"] += 1
        last_submit = max(last_submit, record.submit_time)
        jobs.append(
            Job(
                job_id=record.job_id,
                submitted_at=record.submit_time,
                runtime=record.run_time * load_scale,
                walltime=walltime * load_scale,
                size=size,
                partition_size=partition_size,
                user_id=record.user_id,
            )
        )
    jobs.sort(key=lambda job: (job.submitted_at, job.job_id))
    if max_jobs is not None:
        jobs = jobs[:max_jobs]
    return Workload(
        jobs=jobs,
        source=str(trace.path),
        sha256=trace.sha256,
        load_scale=load_scale,
        cleaning=cleaning,
        header=dict(trace.header),
    )
