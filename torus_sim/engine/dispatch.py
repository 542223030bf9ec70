"""A dispatch latency: a submitted job reaches the wait queue a fixed time after its submission.

On a production machine a job is not seen by the scheduler the instant it is submitted: the submission is processed,
handed to the scheduler's daemon and considered at its next cycle (LoadLeveler's schedd hands jobs to the
negotiator, which runs every ``NEGOTIATOR_INTERVAL``; a Slurm job is eligible from its ``EligibleTime``, its
``--begin`` if given). The logs show it: jobs that found the machine free and the queue empty still waited minutes
(docs/validation/real_machine.md). :class:`DispatchDelay` keeps each instant's arrivals aside for ``latency``
seconds and asks for a pass when they are due; their waits count from their submission. A job that returns to the
queue (after a kill, a silent error or a preemption) returns at once.

References:
    IBM LoadLeveler, "Using and Administering" (the negotiator cycle, NEGOTIATOR_INTERVAL); Slurm's ``sbatch
    --begin`` and a job's EligibleTime; issue 77 §1 (a dispatch latency).
"""

from __future__ import annotations

import math
from collections import deque

from torus_sim.core.errors import ConfigurationError

__all__ = ["DispatchDelay"]


class DispatchDelay:
    """The arrivals not yet due in the queue: each instant's jobs, released ``latency`` seconds after it.

    Args:
        latency: seconds from a job's submission to its entry into the wait queue (> 0).
        request_pass_at: ``at -> None``: asks the engine for a scheduling pass at a later time (when jobs are due).

    Attributes:
        pending: jobs submitted and not yet in the queue.

    Raises:
        ConfigurationError: a latency that is not a positive finite number.
    """

    def __init__(self, latency: float, request_pass_at) -> None:
        if isinstance(latency, bool) or not isinstance(latency, (int, float)) or not 0 < latency < math.inf:
            raise ConfigurationError(f"dispatch_latency must be positive seconds (or unset: none), got {latency!r}")
        self.latency = float(latency)
        self._request_pass_at = request_pass_at
        self._batches: deque[tuple[float, list]] = deque()  # (due time, jobs), in due order (one latency for all)
        self.pending = 0

    def arrived(self, jobs, submitted_at: float) -> None:
        """Jobs submitted at ``submitted_at`` (seconds) wait ``latency`` seconds before they enter the queue."""
        jobs = list(jobs)
        if not jobs:
            return
        due = submitted_at + self.latency
        self._batches.append((due, jobs))
        self.pending += len(jobs)
        self._request_pass_at(due)

    def due(self, now: float) -> list:
        """The jobs due in the queue by ``now`` (seconds), in submission order; they are no longer pending."""
        batches = self._batches
        released = []
        while batches and batches[0][0] <= now:
            released.extend(batches.popleft()[1])
        self.pending -= len(released)
        return released
