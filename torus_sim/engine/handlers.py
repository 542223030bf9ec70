"""What each event does: arrivals, attempt ends (the silent-error check), failures, repairs, starts.

:class:`EventHandlers` is the component of :class:`~torus_sim.engine.model.SchedulingModel` whose methods
the events call (each bound once at construction, see :mod:`torus_sim.engine.events`), and the state
changes they share with the pass (a start, a preemption, a migration). It owns the arrivals' grouping and
cursor, the pending price-change pass and the running jobs kept in order of predicted end.

References:
    BGL-FAULT §6.1 (arrival, start, finish and failure events; a killed job restarts from the
    beginning); RIGID §3.2 (silent errors found at the end of an attempt); PV-EASY §4.2 (preemption).
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterator, Sequence
from functools import partial

import numpy as np

from torus_sim.core.errors import SimulationError
from torus_sim.core.job import Job, JobState
from torus_sim.core.job_columns import row_of
from torus_sim.engine.events import LEVELS, EventPriority
from torus_sim.engine.running_ends import RunningEnds
from torus_sim.machine.platforms.torus import NO_JOB

__all__ = ["EventHandlers"]

_JOB_END = LEVELS[EventPriority.JOB_END]  # the plain int an attempt's end event carries

LONE_TIMED_PASSES = 1_000
"""Passes a policy may ask for in a row with no other event pending (``passes_at_own_times``) before the run stalls."""


def _arrival_groups(submits, each: bool = False) -> tuple[np.ndarray | None, array]:
    """The jobs grouped by submit time: ``(order, bounds)``.

    Args:
        submits: the run's jobs' submit times in rank order, seconds: float ``(n,)`` or a list.
        each: one job per group (``event_order="each-event"``), in submit then rank order.

    Returns:
        ``order`` is None when the jobs are in submit order already, else the stable argsort of their
        submit times (int ``(n,)``); group g is ranks ``bounds[g]:bounds[g + 1]`` of that order
        (``array('q')``, ``len`` = groups + 1).

    A batch (one submit time, given as a list) is one group without array work: a RIGID run of 100
    jobs spent a sixth of its set-up in the numpy calls.
    """
    if isinstance(submits, list):
        if submits and not each and submits.count(submits[0]) == len(submits):
            return None, array("q", (0, len(submits)))
        submits = np.array(submits, dtype=float)
    in_order = bool(np.all(submits[1:] >= submits[:-1]))
    order = None if in_order else np.argsort(submits, kind="stable")
    ordered = submits if in_order else submits[order]
    if each:
        return order, array("q", range(len(ordered) + 1))
    bounds = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1], True]) if len(ordered) else [0]
    return order, array("q", bounds)  # Python ints when indexed


def _arrivals(run_jobs, each: bool = False) -> Iterator[tuple[float, Sequence[int]]]:
    """The run's arrival groups in time order: ``(submit time, ranks)``, the ranks ascending (a range when consecutive).

    A streamed log whose jobs are in submit order (an SWF log's always are: its rank is its FCFS place) is read a
    chunk of submit times at a time (:meth:`~torus_sim.engine.arrivals.RunJobs.submit_pieces`): nothing per job is
    held for the arrivals (a 10-million-job log held its 80 MB submit column and its group bounds here). Any other
    workload's groups come from :func:`_arrival_groups`. The groups are the same either way.

    Args:
        run_jobs: the run's :class:`~torus_sim.engine.arrivals.RunJobs`.
        each: one job per group (``event_order="each-event"``).
    """
    pieces = run_jobs.submit_pieces() if run_jobs.streamed else None
    if pieces is None or not _in_submit_order(pieces()):
        submits = run_jobs.column("submitted_at") if run_jobs.streamed else run_jobs.values("submitted_at")
        order, bounds = _arrival_groups(submits, each=each)
        for group in range(len(bounds) - 1):
            start, stop = bounds[group], bounds[group + 1]
            ranks = range(start, stop) if order is None else order[start:stop].tolist()
            yield float(submits[ranks[0]]), ranks
        return
    pending_at, pending_from = None, 0  # the last group of a chunk may go on in the next
    for first, times in pieces():
        if not len(times):
            continue
        if each:
            for offset, at in enumerate(times.tolist()):
                yield at, range(first + offset, first + offset + 1)
            continue
        starts = (np.flatnonzero(times[1:] != times[:-1]) + 1).tolist()
        if pending_at is None or float(times[0]) != pending_at:
            starts.insert(0, 0)
        starts = [first + start for start in starts]
        for start in starts:
            if pending_at is not None:
                yield pending_at, range(pending_from, start)
            pending_at, pending_from = float(times[start - first]), start
    if pending_at is not None:
        yield pending_at, range(pending_from, len(run_jobs))


def _in_submit_order(pieces) -> bool:
    """Whether the submit times of ``pieces`` (``(first rank, float array)`` in rank order) never decrease."""
    last = -math.inf
    for _, times in pieces:
        if len(times):
            if times[0] < last or bool(np.any(times[1:] < times[:-1])):
                return False
            last = float(times[-1])
    return True


class EventHandlers:
    """The run's event handlers and the state changes they share with the pass (a component of the model).

    Args (keyword-only: the parts of the engine the handlers change or read, never the model):
        clock: the run's :class:`~torus_sim.engine.events.EngineSimulator`.
        book: the :class:`~torus_sim.engine.job_book.JobBook`; counters: the :class:`~torus_sim.engine.counters.RunCounters`.
        settings, step_log: the run's :class:`~torus_sim.engine.settings.RunSettings` and :class:`~torus_sim.engine.settings.StepLog`.
        platform: the run's platform; node_agents: one agent per node (empty without node identities).
        scheduler: the scheduler agent (its queue, its policy: the only way a job enters the queue).
        progress: the job progress model; resilience: the run's resilience policy.
        calls: the guard of plug-in calls; power, power_states: the run's power inputs and node power states, or None.
        recorder: the run's :class:`~torus_sim.engine.record.RunRecorder`; view: the policy's view (``ended``).
        passes: the :class:`~torus_sim.engine.scheduling_pass.SchedulingPass`; preventive: the
            :class:`~torus_sim.engine.preventive.PreventiveActions`.
        arrival_level: the same-instant level of arrival events.
        predict: the runtime predictor's ``predict`` (job -> seconds; behind the guard for a plug-in's), or None.
        observe_end: the runtime predictor's ``observe_end`` (a completed job), or None.
        dependent: the run's :class:`~torus_sim.engine.dependent_arrivals.DependentArrivals` (jobs submitted a think
            time after a job they wait for ends; every job ranked at its arrival), or None: every job at its submit time.

    Attributes:
        job_end, arrivals, dependent_arrival, failure, repair, price_change: the events' callbacks, made once and
            kept here (Mesa's events hold their callbacks weakly: a callback nothing keeps would never run).
        price_pass_pending: a pass at a price change (or the policy's own time) is scheduled.
    """

    def __init__(
        self,
        *,
        clock,
        book,
        counters,
        settings,
        step_log,
        platform,
        node_agents,
        scheduler,
        progress,
        resilience,
        calls,
        power,
        power_states,
        recorder,
        view,
        passes,
        preventive,
        arrival_level: int,
        predict=None,
        observe_end=None,
        dependent=None,
    ) -> None:
        self.clock, self.platform, self.scheduler, self.queue = clock, platform, scheduler, scheduler.queue
        self.accounts = scheduler.accounts  # the parts that follow each user's running jobs (limits, priority usage)
        self.policy, self.view, self.passes, self.preventive = scheduler.policy, view, passes, preventive
        self.progress, self.resilience, self.node_agents, self.calls = progress, resilience, node_agents, calls
        self.power, self.power_states, self.recorder = power, power_states, recorder
        self._predict, self._observe_end = predict, observe_end
        self.book, self.counters, self.settings, self.step_log = book, counters, settings, step_log
        self.request_pass = self.passes.request  # the pass component's (made before the handlers)
        # arrivals: the jobs grouped by submit time, groups in time order, jobs in rank order within
        # one; held as positions in submit order (not n lists: a 450k-job log's groups were ~60 MB)
        self._arrivals = _arrivals(book.jobs, each=settings.each_event)
        self.dependent = dependent
        if dependent is not None:  # the jobs that wait for another's end arrive when it ends, not in the stream
            self._arrivals = dependent.independent(self._arrivals)
        self._arrival_level = arrival_level
        # one arrival event in the heap at a time, each scheduling the next: a log of 200k submit times
        # pre-scheduled made every heap operation of the run pay for them (the order is the same:
        # arrivals are the only events of their priority and have distinct times)
        self.price_pass_pending = False
        self._lone_timed_passes = 0  # timed passes in a row asked with no other event pending (a hold's bound)
        self.job_end = partial(EventHandlers.on_job_end, self)
        self.arrivals = partial(EventHandlers.on_arrivals, self)
        self.dependent_arrival = partial(EventHandlers.on_dependent_arrival, self)
        self.price_change = partial(EventHandlers.on_price_change, self)
        self.failure = partial(EventHandlers.on_failure, self)
        self.repair = partial(EventHandlers.on_repair, self)

    def schedule_next_arrival(self) -> None:
        """Schedule the next group of submissions (one arrival event in the heap at a time)."""
        group = next(self._arrivals, None)
        if group is not None:
            self.clock.schedule(self.arrivals, group[0], self._arrival_level, [group[1]])

    def schedule_price_pass(self) -> None:
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
        if self.price_pass_pending:
            return
        power, now, policy = self.power, self.clock.time, self.policy
        if not len(self.clock.event_list):
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
            self.price_pass_pending = True
            self.clock.schedule(self.price_change, at, LEVELS[EventPriority.SCHEDULE], [])

    def on_price_change(self) -> None:
        """A price change (or the policy's own pass time): a pass if jobs wait."""
        self.price_pass_pending = False
        if self.queue:
            self.request_pass()

    def on_arrivals(self, ranks) -> None:
        """Jobs submitted at one instant (their ranks) are made and join the queue (their runtime predicted); a pass follows."""
        jobs = self.book.jobs.arrived(ranks)
        self.schedule_next_arrival()
        self._admit(jobs)

    def on_dependent_arrival(self, rank: int) -> None:
        """A job that waited for another's end is submitted now, its think time after that end (Zakay and Feitelson 2014)."""
        jobs = self.book.jobs.arrived((rank,))
        for job in jobs:
            job.submitted_at = self.clock.time
        self._admit(jobs)

    def _admit(self, jobs: list[Job]) -> None:
        """Jobs just submitted join the queue (ranked in arrival order in a feedback replay, their runtime predicted); a pass follows."""
        predict, dependent = self._predict, self.dependent
        for job in jobs:
            job.arrive()
            if dependent is not None:
                job.rank = dependent.next_rank()
            if predict is not None:
                job.prediction = min(predict(job), job.walltime)
        self.scheduler.enqueue_arrivals(jobs)
        if self.settings.each_event and not self.passes.pause:
            self.passes.run()  # one submission, one pass (CQSim's order)
        else:
            self.request_pass()

    def on_job_end(self, job: Job) -> None:
        """An attempt ends: the silent-error check (RIGID §3.2), then the job completes or returns to the queue."""
        now = self.clock.time
        preventive = self.preventive
        if preventive.events:
            preventive.cancel(job)
        if self.power_states is not None:
            self.power_states.release(self.power_states.nodes_freed(self.platform, job.allocation, job.job_id), now)
        self.platform.release(job.allocation, job.job_id)
        self.stop_running(job.job_id)
        failed = job.errors_detected < job.silent_errors
        if self.settings.record:
            self.recorder.attempt_ended(job, now, "silent_error" if failed else "completed")
        if failed:
            job.fail_attempt(now)
            self.counters.silent_errors += 1
            self.scheduler.enqueue(job)
        else:
            job.finish(now)
            self.passes.passed.completed(job)  # a completed job never counts again (a killed one may)
            if self._observe_end is not None:
                self._observe_end(job)
            if self.settings.record:
                self.recorder.job_completed(row_of(job))  # the declared columns (torus_sim.core.job_columns)
            self.book.finished(job, now)  # counted; its row is written: a streamed run lets it go
            if self.dependent is not None:  # the jobs that waited for this one are submitted a think time later
                for rank, think in self.dependent.released(job.job_id):
                    self.clock.schedule(self.dependent_arrival, now + think, self._arrival_level, [rank])
        if self.policy.pass_after_each_end or (self.settings.each_event and not self.passes.pause):
            self.view.ended = (job, failed)
            self.passes.run()
            self.view.ended = None
        else:
            self.request_pass()

    def _downtime_end(self, repair_at: float) -> float:
        if self.settings.downtime == "transient":
            return self.clock.time
        if self.settings.downtime == "log":
            return repair_at if not math.isnan(repair_at) else self.clock.time
        return self.clock.time + float(self.settings.downtime)

    def on_failure(self, node: int, repair_at: float, index: int = -1) -> None:
        """A fail-stop failure of ``node``: the job on it is killed and requeued (BGL-FAULT §6.1), the node is down until its repair."""
        self.counters["failures"] += 1
        now = self.clock.time
        killed = None
        job_id = self.platform.job_on(node)
        if job_id != NO_JOB:
            preventive = None
            if self.resilience.preventive == "checkpoint" and index >= 0 and self.preventive.foreseen(index):
                preventive = self.resilience.checkpoint_cost
                self.counters["preventive_checkpoints"] += 1
            self.kill(job_id, preventive)
            killed = job_id
        self.node_agents[node].record_failure(now, killed)
        if self.step_log.on:
            self.step_log.failed.append(node)
        if self.calls.guarded:
            self.calls.call("policy", "observe_failure", self.policy.observe_failure, now, node)
        else:
            self.policy.observe_failure(now, node)
        until = self._downtime_end(repair_at)
        if until > now:
            agent = self.node_agents[node]
            if math.isnan(agent.down_since):
                agent.down_since = now
            if self.power_states is not None:
                self.power_states.fail(node, now)
            self.platform.take_down(node, until)
            if math.isfinite(until):
                self.clock.schedule(self.repair, until, LEVELS[EventPriority.REPAIR], [node])
        if self.settings.record:
            self.recorder.failure(now, node, killed, until)
        self.request_pass()

    def kill(self, job_id: int, preventive: float | None = None) -> Job:
        """Kill a running job and requeue it (BGL-FAULT §6.1): a fail-stop failure's victim, a job a reservation evicts.

        Its attempt ends, its nodes are freed, its work since its last checkpoint is lost (counted in the work lost)
        unless a preventive checkpoint of ``preventive`` seconds saved it.

        Args:
            job_id: a running job's id.
            preventive: the cost of a preventive checkpoint taken just before the kill, seconds, or None.

        Returns:
            The killed job, back in the queue.
        """
        now = self.clock.time
        job = self.stop_running(job_id)
        if job is None:
            raise SimulationError(f"job {job_id} is not running")
        job.end_event.cancel()
        self.counters["events_cancelled"] += 1
        self.preventive.cancel(job)
        if self.power_states is not None:
            self.power_states.release(self.power_states.nodes_freed(self.platform, job.allocation, job.job_id), now)
        self.platform.release(job.allocation, job_id)
        if self.settings.record:
            self.recorder.attempt_ended(job, now, "killed")
        self.counters["lost_work"] += self.progress.kill(job, now, preventive)
        self.counters["job_kills"] += 1
        self.scheduler.enqueue(job)
        self.passes.returned.append(job)
        return job

    def on_repair(self, node: int) -> None:
        """A node is repaired: its downtime is counted and a pass follows."""
        if self.platform.repair(node, self.clock.time):
            if self.power_states is not None:
                self.power_states.repair(node, self.clock.time)
            agent = self.node_agents[node]
            agent.downtime += self.clock.time - agent.down_since
            agent.down_since = math.nan
            self.request_pass()

    def start(self, job: Job, allocation, size: int | None = None, runtime: float | None = None) -> None:
        """Start a waiting job on ``allocation`` (a moldable job with ``size`` processors and ``runtime`` seconds); its end is scheduled."""
        self.queue.remove(job)
        if size is not None:  # a moldable job's allocation for this attempt
            job.size = size
            job.runtime = runtime
        platform = self.platform
        platform.allocate(allocation, job.job_id)
        simulator = self.clock
        end_at = self.progress.start(job, simulator.time, allocation, platform.size_of(allocation))
        if self.power_states is not None:  # switched-off nodes boot before the work starts (the attempt's overhead)
            nodes = self.power_states.nodes_taken(platform, allocation, job.job_id)
            boot = self.power_states.take(nodes, simulator.time, job.job_id, job.attempts)
            if boot:
                job.attempt_overhead += boot
                end_at = job.end_at()
        if self.settings.verification_time:
            end_at += self.settings.verification_time
        self.book.start(job)
        if self.accounts:
            for part in self.accounts:
                part.started(job, platform.size_of(allocation), simulator.time)
        if self.step_log.on:
            self.step_log.started.append((job.job_id, allocation))
        self.counters.starts += 1
        job.end_event = simulator.schedule(self.job_end, end_at, _JOB_END, [job])
        if self.preventive.migration:
            self.preventive.plan(job)

    def running_ends(self) -> RunningEnds | None:
        """The running jobs in order of predicted end, or None (:meth:`~torus_sim.engine.job_book.JobBook.running_ends`)."""
        return self.book.running_ends()

    def stop_running(self, job_id: int) -> Job | None:
        """Take a job off the running set (:meth:`~torus_sim.engine.job_book.JobBook.stop`); None when it was not running."""
        job = self.book.stop(job_id)
        if job is not None and self.accounts:
            for part in self.accounts:
                part.stopped(job_id, self.clock.time)
        return job

    def preempt(self, job: Job) -> None:
        """Preempt a running job (PV-EASY §4.2): its attempt ends as the progress model says and it returns to the queue."""
        if self.stop_running(job.job_id) is None:
            raise SimulationError(f"job {job.job_id} is not running")
        job.end_event.cancel()
        self.counters["events_cancelled"] += 1
        self.preventive.cancel(job)
        if self.power_states is not None:
            self.power_states.release(self.power_states.nodes_freed(self.platform, job.allocation, job.job_id), self.clock.time)
        self.platform.release(job.allocation, job.job_id)
        if self.settings.record:
            self.recorder.attempt_ended(job, self.clock.time, "preempted")
        self.progress.preempt(job, self.clock.time)
        self.counters["preemptions"] += 1
        self.scheduler.enqueue(job)
        self.passes.returned.append(job)

    def migrate(self, moves: tuple) -> None:
        """Move running jobs to new allocations at once (Krevat's repack, BGL-FAULT §5.1): ``((job, allocation), ...)``."""
        states = self.power_states
        for job, _ in moves:
            if states is not None:
                states.release(states.nodes_freed(self.platform, job.allocation, job.job_id), self.clock.time)
            self.platform.release(job.allocation, job.job_id)
        cost = self.policy.migration_cost
        for job, allocation in moves:
            if job.state is not JobState.RUNNING:
                raise SimulationError(f"cannot migrate {job!r}")
            if self.settings.record:
                self.recorder.migrated(job, job.allocation, allocation, self.clock.time)
            self.platform.allocate(allocation, job.job_id)
            self.book.moving(job)
            boot = 0.0
            if states is not None:
                boot = states.take(
                    states.nodes_taken(self.platform, allocation, job.job_id), self.clock.time, job.job_id, job.attempts
                )
            job.migrate(self.clock.time, allocation, cost + boot)  # switched-off nodes boot before the work resumes
            self.book.moved(job)
            job.end_event.cancel()
            self.counters["events_cancelled"] += 1
            job.end_event = self.clock.schedule(self.job_end, job.end_at(), _JOB_END, [job])
            self.preventive.cancel(job)
            self.preventive.plan(job)
            self.counters["migrations"] += 1
        self.counters["repacks"] += 1
