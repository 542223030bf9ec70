"""Resilience in the engine: periodic checkpoints' interval, preventive checkpoints and migrations, spares.

:class:`PreventiveActions` is the component of :class:`~torus_sim.engine.model.SchedulingModel` that sets up
CKPT-MIG's resilience (:class:`~torus_sim.policies.resilience.ResiliencePolicy`): it owns which failures are
foreseen, the preventive migrations planned for running jobs and when each job last moved, and it moves a
job off a node before a foreseen failure. The handlers call :meth:`~PreventiveActions.plan` at a start,
:meth:`~PreventiveActions.cancel` when a job stops, and read :meth:`~PreventiveActions.foreseen` at a failure.

References:
    CKPT-MIG (Young / Daly intervals, preventive checkpointing and migration, spares).
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np

from torus_sim.core.errors import ConfigurationError
from torus_sim.core.job import Job, JobState
from torus_sim.engine.events import LEVELS, EventPriority
from torus_sim.inputs.workload.jobs import Workload

__all__ = ["PreventiveActions"]


class PreventiveActions:
    """The run's periodic and preventive resilience (a component of the model).

    Args:
        clock: the run's :class:`~torus_sim.engine.events.EngineSimulator` (now; the migrations' events).
        book: the run's :class:`~torus_sim.engine.job_book.JobBook` (each job's checkpoint interval as it is made).
        counters: the run's :class:`~torus_sim.engine.counters.RunCounters`.
        platform: the run's platform (spares, the job's nodes, the moves).
        failure_log: the run's fail-stop failures (which of them are foreseen).
        rng: the run's generator (the draw of the foreseen failures).
        resilience: the run's :class:`~torus_sim.policies.resilience.ResiliencePolicy`.
        workload: the run's workload (its span gives the node MTBF when the policy names none).
        recorder: the run's :class:`~torus_sim.engine.record.RunRecorder` when it records, else None.
        power_states: the switched-off nodes' states, or None.
        request_pass: asks for a scheduling pass (the pass component's ``request``).

    Attributes:
        migration: preventive migration is on (a start plans one).
        node_mtbf: μ, seconds: the policy's, else the log's (nodes x span / failures), inf without failures.
        events: job id -> its planned preventive migration event.

    Raises:
        ConfigurationError: spares that leave no partition (or node set) for the largest job.
    """

    def __init__(
        self,
        clock,
        book,
        counters,
        platform,
        failure_log,
        rng,
        resilience,
        workload: Workload,
        recorder,
        power_states,
        request_pass,
    ) -> None:
        self.clock, self.book, self.counters, self.platform = clock, book, counters, platform
        self.failure_log, self.rng, self.recorder, self.power_states = failure_log, rng, recorder, power_states
        self.request_pass = request_pass
        self.job_end = None  # the handlers' attempt-end callback, once they are made (:meth:`bind`)
        self.resilience = resilience
        self.migration = resilience.preventive == "migration"
        self.events: dict[int, object] = {}
        self._moved_at: dict[int, float] = {}  # job id -> time of its last preventive migration
        self._foreseen = np.zeros(len(failure_log), dtype=bool)
        self._foreseen_by_node: list[np.ndarray] = []
        self.node_mtbf = math.inf
        self.handle = partial(PreventiveActions.on_migration, self)  # kept here: Mesa's events hold callbacks weakly
        if resilience.active:
            self._setup(workload)

    def bind(self, job_end) -> None:
        """Take the handlers' attempt-end callback (a moved job's end is scheduled again; the handlers are made after this)."""
        self.job_end = job_end

    def _prepare(self, job) -> None:
        """A job as it is made: the checkpoint interval its partition size gets under the node MTBF (Young/Daly)."""
        policy = self.resilience
        interval = policy.interval_for(job.partition_size, self.node_mtbf)
        if interval is not None and math.isfinite(interval):
            job.checkpoint_interval = interval
            job.checkpoint_cost = policy.checkpoint_cost

    def _setup(self, workload: Workload) -> None:
        policy = self.resilience
        platform, log = self.platform, self.failure_log
        start, end = workload.span
        span = max(end, float(log.failed_at.max()) if len(log) else end) - start
        self.node_mtbf = policy.mtbf or (platform.capacity * span / len(log) if len(log) and span > 0 else math.inf)
        self.book.jobs.configure(prepare=self._prepare)  # each job's checkpoint interval as it is made
        if policy.spares:
            platform.reserve_spares(policy.spares)
            largest = platform.largest_free(platform.spare)
            sizes = self.book.jobs.column("partition_size")
            too_big = sizes[sizes > largest]
            if len(too_big):
                what = "job" if platform.counts_fit else "partition"
                raise ConfigurationError(
                    f"{policy.spares} spares leave no {what} larger than {largest} {platform.node_word}s, but {len(too_big)} jobs "
                    f"need more (largest {int(too_big.max())}): use fewer spares or drop those jobs"
                )
        if policy.preventive != "none":
            self._foreseen = self.rng.random(len(log)) < policy.prediction_accuracy
        foreseen_at = log.failed_at[self._foreseen]
        foreseen_on = log.supernodes[self._foreseen]
        self._foreseen_by_node = [np.sort(foreseen_at[foreseen_on == n]) for n in range(platform.capacity)]

    def foreseen(self, index: int) -> bool:
        """Whether the failure at row ``index`` of the log was foreseen (drawn once, with the prediction accuracy)."""
        return bool(self._foreseen[index])

    def cancel(self, job: Job) -> None:
        """Cancel the job's planned preventive migration, if any (it ended, was killed, preempted or moved)."""
        event = self.events.pop(job.job_id, None)
        if event is not None:
            event.cancel()
            self.counters["events_cancelled"] += 1

    def plan(self, job: Job) -> None:
        """Schedule a preventive migration M seconds before the first foreseen failure in the job's nodes."""
        if not self.migration:
            return
        now = self.clock.time
        end = job.end_at()
        first_at, doomed = math.inf, -1
        for node in self.platform.members(job.allocation):
            times = self._foreseen_by_node[node]
            k = int(np.searchsorted(times, now, side="right"))
            if k < len(times) and times[k] < first_at:
                first_at, doomed = float(times[k]), int(node)
        if first_at <= end:
            at = max(now, first_at - self.resilience.migration_cost)
            self.events[job.job_id] = self.clock.schedule(self.handle, at, LEVELS[EventPriority.PREVENTIVE], [job, doomed])

    def _foreseen_before(self, until: float) -> np.ndarray:
        """Bool ``(N,)``: nodes with a foreseen failure in (now, until]."""
        now = self.clock.time
        flags = np.zeros(self.platform.capacity, dtype=bool)
        for node, times in enumerate(self._foreseen_by_node):
            k = int(np.searchsorted(times, now, side="right"))
            flags[node] = k < len(times) and times[k] <= until
        return flags

    def _target(self, job: Job, blocked: np.ndarray):
        """A free allocation of the job's size avoiding ``blocked`` nodes, or None."""
        platform = self.platform
        if platform.counts_fit:  # any free nodes will do
            free = np.flatnonzero(~blocked)
            return free[: job.allocated_size] if len(free) >= job.allocated_size else None
        from torus_sim.policies.placement import MFP

        table = platform.table
        words = table.pack(blocked)
        candidates = table.free_ids_of_size(words, job.partition_size)
        return MFP.choose(table, job, candidates, words, self.clock.time) if len(candidates) else None

    def on_migration(self, job: Job, doomed: int) -> None:
        """Move the job off a node that is foreseen to fail (CKPT-MIG, preventive migration): the event's handler.

        The target avoids every node foreseen to fail before the job would end; if no such
        allocation is free, one that avoids the nodes failing during the move. A job moves at most
        once per instant, so two close failures cannot bounce it back and forth.
        """
        self.events.pop(job.job_id, None)
        now = self.clock.time
        if job.state is not JobState.RUNNING or self._moved_at.get(job.job_id) == now:
            return
        platform, counters = self.platform, self.counters
        cost = self.resilience.migration_cost
        occupied = platform.busy | platform.down  # spares are open to migrations
        occupied[platform.members(job.allocation)] = False
        work_left = job.runtime - job.progress(now)
        target = None
        for horizon in (now + cost + work_left * 2, now + cost):
            blocked = occupied | self._foreseen_before(horizon)
            blocked[doomed] = True
            target = self._target(job, blocked)
            if target is not None:
                break
        if target is None:
            counters["preventive_migrations_failed"] += 1
            return
        if self.recorder is not None:
            self.recorder.migrated(job, job.allocation, target, now)
        boot = 0.0
        states = self.power_states
        if states is not None:  # switched-off nodes boot before the work resumes
            states.release(states.nodes_freed(platform, job.allocation, job.job_id), now)
            boot = states.take(states.nodes_taken(platform, target, job.job_id), now, job.job_id, job.attempts)
        platform.release(job.allocation, job.job_id)
        platform.allocate(target, job.job_id)
        job.migrate(now, target, cost + boot)
        self._moved_at[job.job_id] = now
        job.end_event.cancel()
        counters["events_cancelled"] += 1
        job.end_event = self.clock.schedule(self.job_end, job.end_at(), LEVELS[EventPriority.JOB_END], [job])
        counters["preventive_migrations"] += 1
        self.plan(job)
        self.request_pass()
