"""Resilience in the engine: periodic checkpoints' interval, preventive checkpoints and migrations, spares.

:class:`PreventiveActions` is the part of :class:`~torus_sim.engine.model.SchedulingModel` that sets
up CKPT-MIG's resilience (:class:`~torus_sim.policies.resilience.ResiliencePolicy`) and moves a job off
a node before a foreseen failure.

References:
    CKPT-MIG (Young / Daly intervals, preventive checkpointing and migration, spares).
"""

from __future__ import annotations

import math

import numpy as np

from torus_sim.engine.events import EventPriority
from torus_sim.errors import ConfigurationError
from torus_sim.job import Job, JobState
from torus_sim.workload.jobs import Workload

__all__ = ["PreventiveActions"]


class PreventiveActions:
    """The model's periodic and preventive resilience (a mixin of the model)."""

    def _setup_resilience(self, workload: Workload) -> None:
        policy = self.resilience
        log = self.failure_log
        start, end = workload.span
        span = max(end, float(log.failed_at.max()) if len(log) else end) - start
        self.node_mtbf = policy.mtbf or (self.platform.capacity * span / len(log) if len(log) and span > 0 else math.inf)
        for job in self.jobs:
            interval = policy.interval_for(job.partition_size, self.node_mtbf)
            if interval is not None and math.isfinite(interval):
                job.checkpoint_interval = interval
                job.checkpoint_cost = policy.checkpoint_cost
        if policy.spares:
            self.platform.reserve_spares(policy.spares)
            largest = self.platform.largest_free(self.platform.spare)
            too_big = [job for job in self.jobs if job.partition_size > largest]
            if too_big:
                unit = "partition larger than {} supernodes" if self.platform.kind == "torus" else "job larger than {} nodes"
                raise ConfigurationError(
                    f"{policy.spares} spares leave no {unit.format(largest)}, but {len(too_big)} jobs "
                    f"need more (largest {max(job.partition_size for job in too_big)}): use fewer spares or drop those jobs"
                )
        if policy.preventive != "none":
            self._foreseen = self.rng.random(len(log)) < policy.prediction_accuracy
        foreseen_at = log.failed_at[self._foreseen]
        foreseen_on = log.supernodes[self._foreseen]
        self._foreseen_by_node = [np.sort(foreseen_at[foreseen_on == n]) for n in range(self.platform.capacity)]

    def _cancel_preventive(self, job: Job) -> None:
        event = self._preventive_events.pop(job.job_id, None)
        if event is not None:
            event.cancel()
            self.counters["events_cancelled"] += 1

    def _members(self, job: Job) -> np.ndarray:
        return self.platform.members(job.allocation)

    def _plan_preventive(self, job: Job) -> None:
        """Schedule a preventive migration M seconds before the first foreseen failure in the job's nodes."""
        if self.resilience.preventive != "migration":
            return
        end = job.end_at()
        first_at, doomed = math.inf, -1
        for node in self._members(job):
            times = self._foreseen_by_node[node]
            k = int(np.searchsorted(times, self.now, side="right"))
            if k < len(times) and times[k] < first_at:
                first_at, doomed = float(times[k]), int(node)
        if first_at <= end:
            at = max(self.now, first_at - self.resilience.migration_cost)
            self._preventive_events[job.job_id] = self._schedule(
                self._handle_preventive, at, EventPriority.PREVENTIVE, job, doomed
            )

    def _foreseen_before(self, until: float) -> np.ndarray:
        """Bool ``(N,)``: nodes with a foreseen failure in (now, until]."""
        flags = np.zeros(self.platform.capacity, dtype=bool)
        for node, times in enumerate(self._foreseen_by_node):
            k = int(np.searchsorted(times, self.now, side="right"))
            flags[node] = k < len(times) and times[k] <= until
        return flags

    def _preventive_target(self, job: Job, blocked: np.ndarray):
        """A free allocation of the job's size avoiding ``blocked`` nodes, or None."""
        platform = self.platform
        if platform.kind == "cluster":
            free = np.flatnonzero(~blocked)
            return free[: job.allocated_size] if len(free) >= job.allocated_size else None
        from torus_sim.policies.placement import MFP

        table = platform.table
        words = table.pack(blocked)
        candidates = table.free_ids_of_size(words, job.partition_size)
        return MFP.choose(table, job, candidates, words, self.now) if len(candidates) else None

    def _on_preventive_migration(self, job: Job, doomed: int) -> None:
        """Move the job off a node that is foreseen to fail (CKPT-MIG, preventive migration).

        The target avoids every node foreseen to fail before the job would end; if no such
        allocation is free, one that avoids the nodes failing during the move. A job moves at most
        once per instant, so two close failures cannot bounce it back and forth.
        """
        self._run += 1
        self._preventive_events.pop(job.job_id, None)
        if job.state is not JobState.RUNNING or self._moved_at.get(job.job_id) == self.now:
            return
        cost = self.resilience.migration_cost
        occupied = self.platform.busy | self.platform.down  # spares are open to migrations
        occupied[self._members(job)] = False
        work_left = job.runtime - job.progress(self.now)
        target = None
        for horizon in (self.now + cost + work_left * 2, self.now + cost):
            blocked = occupied | self._foreseen_before(horizon)
            blocked[doomed] = True
            target = self._preventive_target(job, blocked)
            if target is not None:
                break
        if target is None:
            self.counters["preventive_migrations_failed"] += 1
            return
        if self.record_enabled:
            self.recorder.migrated(job, job.allocation, target, self.now)
        boot = 0.0
        if self.power_states is not None:  # switched-off nodes boot before the work resumes
            states = self.power_states
            states.release(states.nodes_freed(self.platform, job.allocation, job.job_id), self.now)
            boot = states.take(states.nodes_taken(self.platform, target, job.job_id), self.now, job.job_id, job.attempts)
        self.platform.release(job.allocation, job.job_id)
        self.platform.allocate(target, job.job_id)
        job.migrate(self.now, target, cost + boot)
        self._moved_at[job.job_id] = self.now
        job.end_event.cancel()
        self.counters["events_cancelled"] += 1
        job.end_event = self._schedule(self._handle_job_end, job.end_at(), EventPriority.JOB_END, job)
        self.counters["preventive_migrations"] += 1
        self._plan_preventive(job)
        self._request_pass()
