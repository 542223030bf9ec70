"""Jobs submitted when a job they wait for ends in the run: a feedback replay's arrivals.

A component of the event handlers (:class:`~torus_sim.engine.handlers.EventHandlers`). The jobs the workload's
dependencies hold (:class:`~torus_sim.inputs.workload.dependencies.JobDependencies`) are left out of the arrival
stream; when a job completes, each job that waited for it is submitted its think time later, whenever the replayed
schedule ends it (Zakay and Feitelson, MASCOTS 2014). Its submit time is then that instant (its wait counts from it).

Every job takes its FCFS rank at its arrival (the count of jobs that arrived before it): the submission order is the
run's, no longer the log's, and the parts that read a rank as "submitted after" (the fairness columns, PV-EASY's
shadow load) read the run's order.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from torus_sim.core.errors import ConfigurationError

__all__ = ["DependentArrivals"]


class DependentArrivals:
    """The dependent jobs not yet submitted, by the job whose end submits them, and the run's arrival ranks.

    Args:
        dependencies: the workload's :class:`~torus_sim.inputs.workload.dependencies.JobDependencies` (its ``held``,
            ``predecessor``, ``rank`` and ``think`` arrays).
        jobs: the run's job count (the workload's ranks are 0 .. jobs-1).

    Attributes:
        submitted: dependent jobs submitted so far.

    Raises:
        ConfigurationError: the dependencies are another workload's (``held`` of another length, ranks out of range).
    """

    def __init__(self, dependencies, jobs: int) -> None:
        held = np.asarray(dependencies.held, dtype=bool)
        ranks = np.asarray(dependencies.rank, dtype=np.int64)
        if held.shape != (jobs,) or (len(ranks) and (ranks.min() < 0 or ranks.max() >= jobs)) or int(held.sum()) != len(ranks):
            raise ConfigurationError(f"dependencies: made for another workload (held {held.shape}, {jobs} jobs)")
        self._held = held
        self._predecessor = np.asarray(dependencies.predecessor, dtype=np.int64)
        self._rank = ranks
        self._think = np.asarray(dependencies.think, dtype=float)
        self.submitted = 0
        self._next_rank = 0

    def __len__(self) -> int:
        """The dependent jobs of the run."""
        return len(self._rank)

    def independent(self, arrivals: Iterator[tuple[float, Sequence[int]]]) -> Iterator[tuple[float, Sequence[int]]]:
        """The arrival groups (``(submit time, ranks)``) without the held jobs; a group left empty is dropped."""
        held = self._held
        for at, ranks in arrivals:
            kept = [rank for rank in ranks if not held[rank]]
            if kept:
                yield at, kept

    def released(self, job_id: int) -> list[tuple[int, float]]:
        """The jobs that wait for job ``job_id``'s end: ``(rank, think time in seconds)`` each, in rank order (once)."""
        first, stop = np.searchsorted(self._predecessor, [job_id, job_id + 1]).tolist()
        if first == stop:
            return []
        self.submitted += stop - first
        return list(zip(self._rank[first:stop].tolist(), self._think[first:stop].tolist(), strict=True))

    def next_rank(self) -> int:
        """The next arrival's FCFS rank (0, 1, ... in the run's submission order)."""
        rank = self._next_rank
        self._next_rank += 1
        return rank
