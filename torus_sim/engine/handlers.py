"""What each event does: arrivals, attempt ends (the silent-error check), failures, repairs, starts.

:class:`EventHandlers` is the part of :class:`~torus_sim.engine.model.SchedulingModel` whose methods
the events call (each bound once at construction, see :mod:`torus_sim.engine.events`), and the state
changes they share with the pass (a start, a preemption, a migration).

References:
    BGL-FAULT §6.1 (arrival, start, finish and failure events; a killed job restarts from the
    beginning); RIGID §3.2 (silent errors found at the end of an attempt); PV-EASY §4.2 (preemption).
"""

from __future__ import annotations

import math

import numpy as np

from torus_sim.engine.events import LEVELS, EventPriority
from torus_sim.engine.running_ends import RunningEnds
from torus_sim.errors import SimulationError
from torus_sim.job import Job, JobState
from torus_sim.platforms.torus import NO_JOB

__all__ = ["EventHandlers"]

_JOB_END = LEVELS[EventPriority.JOB_END]  # the plain int an attempt's end event carries

LONE_TIMED_PASSES = 1_000
"""Passes a policy may ask for in a row with no other event pending (``passes_at_own_times``) before the run stalls."""


class EventHandlers:
    """The model's event handlers and the state changes they share with the pass (a mixin of the model)."""

    def _schedule_next_arrival(self) -> None:
        group = self._next_arrival
        if group + 1 < len(self._arrival_bounds):
            start, stop = self._arrival_bounds[group], self._arrival_bounds[group + 1]
            if self._arrival_order is None:
                jobs = self.jobs[start:stop]
            else:
                jobs = [self.jobs[position] for position in self._arrival_order[start:stop].tolist()]
            self._next_arrival += 1
            self._scheduled += 1
            self.simulator.schedule(self._handle_arrivals, jobs[0].submitted_at, self._arrival_level, [jobs])

    def _schedule_price_pass(self) -> None:
        """After a pass that left jobs waiting: a pass at the next time the policy asks for.

        That time is the earlier of the tariff's next price change (a policy that
        ``passes_at_price_changes``, with power accounting) and the policy's own
        :meth:`~torus_sim.policies.base.Policy.next_pass_after` (one that ``passes_at_own_times``: a
        power cap's next change). Only while other events are pending (a run that would stall without
        it still stalls, with its sentence) and one such pass at a time; a tariff that never changes its
        price schedules none (looked up over 1, 4, 16, ... days up to about four years). A policy's own
        pass comes even when no other event is pending (it may hold a job on an idle machine until its
        cap ends), :data:`LONE_TIMED_PASSES` times in a row at most: then the run stalls with its sentence.

        References:
            SC'13 and JSSPP'13 (jobs held for cheaper hours start when the price falls).
        """
        if self._price_pass_pending:
            return
        power, now, policy = self.power, self.now, self.policy
        if not len(self.simulator.event_list):
            if not policy.passes_at_own_times or self._lone_timed_passes >= LONE_TIMED_PASSES:
                return
            self._lone_timed_passes += 1
            power = None  # only the policy's own time: a price change alone would not start what it holds
        else:
            self._lone_timed_passes = 0
        at = math.inf
        if policy.passes_at_own_times:
            wanted = policy.next_pass_after(now)
            if wanted is not None and wanted > now:
                at = float(wanted)
        if power is not None and policy.passes_at_price_changes:
            horizon = 86_400.0
            while horizon < 1_500 * 86_400.0:
                changes = power.tariff.breakpoints(now, min(now + horizon, at), power.clock_start_hour)
                if len(changes):
                    at = min(at, float(changes[0]))
                    break
                horizon *= 4
        if math.isfinite(at):
            self._price_pass_pending = True
            self._schedule(self._handle_price_change, at, EventPriority.SCHEDULE)

    def _on_price_change(self) -> None:
        self._run += 1
        self._price_pass_pending = False
        if self.queue:
            self._request_pass()

    def _on_arrivals(self, jobs: list[Job]) -> None:
        self._schedule_next_arrival()
        self._run += 1
        predict = self._predict
        for job in jobs:
            job.arrive()
            if predict is not None:
                job.prediction = min(predict(job), job.walltime)
        self.queue.extend(jobs)
        if self._pass_each_event and not self.passes.pause:
            self.passes.run()  # one submission, one pass (CQSim's order)
        else:
            self._request_pass()

    def _on_job_end(self, job: Job) -> None:
        self._run += 1
        now = self.simulator.time
        preventive = self.preventive
        if preventive.events:
            preventive.cancel(job)
        if self.power_states is not None:
            self.power_states.release(self.power_states.nodes_freed(self.platform, job.allocation, job.job_id), now)
        self.platform.release(job.allocation, job.job_id)
        self._stop_running(job.job_id)
        failed = job.errors_detected < job.silent_errors
        if self.record_enabled:
            self.recorder.attempt_ended(job, now, "silent_error" if failed else "completed")
        if failed:
            job.fail_attempt(now)
            self._silent_errors += 1
            self.queue.add(job)
        else:
            job.finish(now)
            self.passes.passed.completed(job)  # a completed job never counts again (a killed one may)
            self.completed += 1
            self.makespan = now
            if self._observe_end is not None:
                self._observe_end(job)
            if self.record_enabled:
                self.recorder.job_completed(
                    {
                        "job_id": job.job_id,
                        "user_id": job.user_id,
                        "size": job.size,
                        "partition_size": job.partition_size,
                        "submitted_at": job.submitted_at,
                        "first_started_at": job.first_started_at,
                        "started_at": job.started_at,
                        "finished_at": job.finished_at,
                        "runtime": job.runtime,
                        "walltime": job.walltime,
                        "prediction": job.walltime if job.prediction is None else job.prediction,
                        "attempts": job.attempts,
                        "kills": job.kills,
                        "preemptions": job.preemptions,
                        "silent_errors": job.errors_detected,
                        "lost_work": job.lost_work,
                        "migrations": job.migrations,
                        "time_sum": job.time_sum,
                    },
                )
        if self.policy.pass_after_each_end or (self._pass_each_event and not self.passes.pause):
            self.view.ended = (job, failed)
            self.passes.run()
            self.view.ended = None
        else:
            self._request_pass()

    def _downtime_end(self, repair_at: float) -> float:
        if self.downtime == "transient":
            return self.now
        if self.downtime == "log":
            return repair_at if not math.isnan(repair_at) else self.now
        return self.now + float(self.downtime)

    def _on_failure(self, node: int, repair_at: float, index: int = -1) -> None:
        self._run += 1
        self.counters["failures"] += 1
        now = self.now
        killed = None
        job_id = self.platform.job_on(node)
        if job_id != NO_JOB:
            job = self._stop_running(job_id)
            job.end_event.cancel()
            self.counters["events_cancelled"] += 1
            self.preventive.cancel(job)
            if self.power_states is not None:
                self.power_states.release(self.power_states.nodes_freed(self.platform, job.allocation, job.job_id), now)
            self.platform.release(job.allocation, job_id)
            preventive = None
            if self.resilience.preventive == "checkpoint" and index >= 0 and self.preventive.foreseen(index):
                preventive = self.resilience.checkpoint_cost
                self.counters["preventive_checkpoints"] += 1
            if self.record_enabled:
                self.recorder.attempt_ended(job, now, "killed")
            self.counters["lost_work"] += self.progress.kill(job, now, preventive)
            self.counters["job_kills"] += 1
            self.scheduler.enqueue(job)
            self.passes.returned.append(job)
            killed = job_id
        self.node_agents[node].record_failure(now, killed)
        self.failed_this_step.append(node)
        if self.calls.guarded:
            self.calls.call("policy", "observe_failure", self.policy.observe_failure, now, node)
        else:
            self.policy.observe_failure(now, node)
        until = self._downtime_end(repair_at)
        if until > now:
            if math.isnan(self._down_since[node]):
                self._down_since[node] = now
            if self.power_states is not None:
                self.power_states.fail(node, now)
            self.platform.take_down(node, until)
            if math.isfinite(until):
                self._schedule(self._handle_repair, until, EventPriority.REPAIR, node)
        if self.record_enabled:
            self.recorder.failure(now, node, killed, until)
        self._request_pass()

    def _on_repair(self, node: int) -> None:
        self._run += 1
        if self.platform.repair(node, self.now):
            if self.power_states is not None:
                self.power_states.repair(node, self.now)
            self.node_agents[node].downtime += self.now - self._down_since[node]
            self._down_since[node] = np.nan
            self._request_pass()

    def _start(self, job: Job, allocation, size: int | None = None, runtime: float | None = None) -> None:
        self.queue.remove(job)
        if size is not None:  # a moldable job's allocation for this attempt
            job.size = size
            job.runtime = runtime
        platform = self.platform
        platform.allocate(allocation, job.job_id)
        simulator = self.simulator
        end_at = self.progress.start(job, simulator.time, allocation, platform.size_of(allocation))
        if self.power_states is not None:  # switched-off nodes boot before the work starts (the attempt's overhead)
            nodes = self.power_states.nodes_taken(platform, allocation, job.job_id)
            boot = self.power_states.take(nodes, simulator.time, job.job_id, job.attempts)
            if boot:
                job.attempt_overhead += boot
                end_at = job.end_at()
        if self.verification_time:
            end_at += self.verification_time
        self.running_jobs[job.job_id] = job
        if self._running_ranks is not None:
            self._running_ranks.add(job.rank, job.allocated_size)
        if self._running_ends is not None:
            self._running_ends.add(job)
        if self.datacollector is not None:
            self.started_this_step.append((job.job_id, allocation))
        self._starts += 1
        self._scheduled += 1
        job.end_event = simulator.schedule(self._handle_job_end, end_at, _JOB_END, [job])
        if self.preventive.migration:
            self.preventive.plan(job)

    def running_ends(self) -> RunningEnds | None:
        """The running jobs kept in order of predicted end (:class:`~torus_sim.engine.running_ends.RunningEnds`), or None.

        None where a running job's predicted end can change during its attempt (the torus, periodic
        checkpoints, PV-EASY's checkpoint / suspend modes, preventive moves): sort at each pass there.
        Made from the running jobs at the first call, then kept up to date at every start and stop.
        """
        if self._running_ends is None and self._ends_can_be_kept:
            self._running_ends = RunningEnds()
            for job in self.running_jobs.values():
                self._running_ends.add(job)
        return self._running_ends

    def _stop_running(self, job_id: int) -> Job | None:
        """Take a job off the running set (its end, a kill, a preemption); None when it was not running."""
        job = self.running_jobs.pop(job_id, None)
        if job is not None:
            if self.record_fairness:
                self.passes.passed.stopped(job)
            if self._running_ranks is not None:
                self._running_ranks.add(job.rank, -job.allocated_size)
            if self._running_ends is not None:
                self._running_ends.discard(job)
        return job

    def _preempt(self, job: Job) -> None:
        if self._stop_running(job.job_id) is None:
            raise SimulationError(f"job {job.job_id} is not running")
        job.end_event.cancel()
        self.counters["events_cancelled"] += 1
        self.preventive.cancel(job)
        if self.power_states is not None:
            self.power_states.release(self.power_states.nodes_freed(self.platform, job.allocation, job.job_id), self.now)
        self.platform.release(job.allocation, job.job_id)
        if self.record_enabled:
            self.recorder.attempt_ended(job, self.now, "preempted")
        self.progress.preempt(job, self.now)
        self.counters["preemptions"] += 1
        self.scheduler.enqueue(job)
        self.passes.returned.append(job)

    def _migrate(self, moves: tuple) -> None:
        states = self.power_states
        for job, _ in moves:
            if states is not None:
                states.release(states.nodes_freed(self.platform, job.allocation, job.job_id), self.now)
            self.platform.release(job.allocation, job.job_id)
        cost = self.policy.migration_cost
        for job, allocation in moves:
            if job.state is not JobState.RUNNING:
                raise SimulationError(f"cannot migrate {job!r}")
            if self.record_enabled:
                self.recorder.migrated(job, job.allocation, allocation, self.now)
            self.platform.allocate(allocation, job.job_id)
            if self._running_ends is not None:
                self._running_ends.discard(job)
            boot = 0.0
            if states is not None:
                boot = states.take(states.nodes_taken(self.platform, allocation, job.job_id), self.now, job.job_id, job.attempts)
            job.migrate(self.now, allocation, cost + boot)  # switched-off nodes boot before the work resumes
            if self._running_ends is not None:
                self._running_ends.add(job)
            job.end_event.cancel()
            self.counters["events_cancelled"] += 1
            job.end_event = self._schedule(self._handle_job_end, job.end_at(), EventPriority.JOB_END, job)
            self.preventive.cancel(job)
            self.preventive.plan(job)
            self.counters["migrations"] += 1
        self.counters["repacks"] += 1
