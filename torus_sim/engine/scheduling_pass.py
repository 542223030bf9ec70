"""One scheduling pass: ask the policy, check each action before applying it, record the pass.

:class:`SchedulingPass` is the component of :class:`~torus_sim.engine.model.SchedulingModel` that runs a
pass: the engine's own (:meth:`SchedulingPass.run`, one per instant, after every event of it) or one a caller
drives (the Gymnasium environment: :meth:`~SchedulingPass.open`, :meth:`~SchedulingPass.apply`,
:meth:`~SchedulingPass.close`, which the model offers as ``open_pass``, ``apply_action`` and ``close_pass``).
It owns whether a pass is asked for, open or running, the jobs returned to the queue since the last pass, the
head and its promise when the pass began and the jobs started past each head (the fairness columns); it asks
the scheduler agent for the policy's actions and calls the model's state changes (start, preempt, migrate). Every action is checked before it changes anything, so a refused action leaves
the state as the last accepted one left it; a pass that starts nothing while nothing runs and the
first waiting job fits is refused (the run would stall). A plug-in's pass runs under the guard
(:mod:`torus_sim.engine.guard`).

References:
    BGL-FAULT §5.1 (FCFS with backfilling and migration); PV-EASY §4.1-4.2 (reservations, the head's
    shadow load, preemption; fairness Tables 1-2).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from functools import partial

import numpy as np

from torus_sim.core.errors import PolicyError, SimulationError
from torus_sim.core.job import Job, JobState
from torus_sim.engine.events import LEVELS, EventPriority
from torus_sim.engine.passed_jobs import PassedJobs
from torus_sim.inputs.untrusted import PassTimeout, extension_name
from torus_sim.policies.base import Preempt, Repack, Reserve, Start

__all__ = ["SchedulingPass"]


class SchedulingPass:
    """The run's scheduling passes and the checks of every action (a component of the model).

    Args (keyword-only: the parts of the engine the pass reads or asks, never the model):
        clock: the run's :class:`~torus_sim.engine.events.EngineSimulator`.
        book: the :class:`~torus_sim.engine.job_book.JobBook`; settings: the :class:`~torus_sim.engine.settings.RunSettings`.
        scheduler: the scheduler agent (its queue and policy; it asks the policy for the actions).
        platform: the run's platform; progress: the job progress model (a passed job's predicted end).
        calls: the guard of plug-in calls; power: the run's power inputs, or None.
        recorder: the run's :class:`~torus_sim.engine.record.RunRecorder` (the pass table).
        overran: makes the PolicyError for a pass the watchdog stopped.
        check_head: a policy that serves the head first must have started it when it fits (checked on clusters).
        held_nodes: the :class:`~torus_sim.engine.node_reservations.HeldNodes` whose reservations (and spans of a
            smaller effective size) hold nodes out of the machine (applied at each pass's start, before the scheduler
            agent's gates), or None.
        tiers: the :class:`~torus_sim.engine.tier_preemption.TierPreemption` whose preemptions and starts come at each
            pass's start, after the gates and before the policy plans, or None.

    The handlers (the state changes a pass applies) and the policy's view are handed over by :meth:`bind`: both are
    made after the pass (the view shows the pass's returned jobs; the handlers ask for passes).

    Attributes:
        pending: a pass is asked for at this instant (its event is in the heap).
        open: a pass is open for a caller to apply actions (``pause`` on).
        pause: a pass opens and waits for a caller (:meth:`apply`, :meth:`close`) instead of asking the policy.
        active: the engine's own pass is running (the watchdog reads it).
        returned: jobs killed or preempted since the last pass (the view's ``returned``).
        passed: the jobs started past each head (:class:`~torus_sim.engine.passed_jobs.PassedJobs`).
    """

    def __init__(
        self,
        *,
        clock,
        book,
        settings,
        scheduler,
        platform,
        progress,
        calls,
        power,
        recorder,
        overran,
        check_head: bool,
        held_nodes=None,
        tiers=None,
    ) -> None:
        self.clock, self.book, self.settings, self.scheduler, self.queue = clock, book, settings, scheduler, scheduler.queue
        self.policy, self.platform, self.progress, self.calls, self.power = scheduler.policy, platform, progress, calls, power
        self.recorder, self.overran = recorder, overran
        self.handlers = self.view = None  # handed over by bind()
        self._last = -math.inf  # when the last pass ran (a cycle's pass waits for last + interval)
        self._ahead = -math.inf  # the latest pass asked ahead (request_at): a run waiting for it does not stall
        self.check_head = check_head
        self.held_nodes = held_nodes
        self.tiers = tiers
        self.pending = False
        self.open = False
        self.pause = False
        self.active = False
        self.returned: list[Job] = []
        self.passed = PassedJobs()
        self._head: Job | None = None  # the head and its promise when the open pass began (fairness)
        self._promise: float | None = None
        self.handle = partial(SchedulingPass.on_event, self)  # kept here: Mesa's events hold callbacks weakly
        self._asked = partial(SchedulingPass.request, self)  # the same, for a pass asked ahead (request_at)
        self._start = None  # the handlers' start, once they are made (:meth:`bind`)

    def bind(self, handlers, view) -> None:
        """Take the handlers' state changes and the policy's view (the model makes both after the pass)."""
        self.handlers, self.view = handlers, view
        self._start = handlers.start

    def request(self) -> None:
        """Ask for a pass at this instant (one per instant, after every event of it).

        In a scheduling cycle (``pass_interval``) the pass comes at the last pass plus the interval when that is
        later (Slurm's ``sched_min_interval``).
        """
        if not self.pending:
            self.pending = True
            at = self.clock.time
            interval = self.settings.pass_interval
            if interval is not None:  # a scheduling cycle: at most one pass per interval (Slurm's sched_min_interval)
                at = max(at, self._last + interval)
            self.clock.schedule(self.handle, at, LEVELS[EventPriority.SCHEDULE], [])

    def request_at(self, at: float) -> None:
        """Ask for a pass at a later time ``at``, seconds (a maintenance window's end: the jobs held before it come back).

        An event at ``at`` at the arrivals' level asks for the pass (:meth:`request`), which then runs after every
        event of that instant.
        """
        self._ahead = max(self._ahead, at)
        self.clock.schedule(self._asked, at, LEVELS[EventPriority.ARRIVAL], [])

    def on_event(self) -> None:
        """The pass event's handler: run the pass, or open it for a caller (``pause``)."""
        self.pending = False
        self._last = self.clock.time
        if self.pause:  # a caller applies this pass's actions itself (torus_sim.rl)
            self.begin()
            self.open = True
            return
        self.run()

    def run(self) -> None:
        """One scheduling pass: ask the scheduler agent, check and apply its actions in order, then record the pass.

        Whatever the policy's code raises (``SystemExit`` and bare ``BaseException`` too) ends the run with
        a PolicyError; ``KeyboardInterrupt`` passes (Ctrl-C); a pass longer than ``plan_timeout`` is
        stopped by the watchdog (:mod:`torus_sim.engine.guard`).
        """
        self.begin()
        self.active = True
        count = 0
        apply = self.apply
        try:
            if self.calls.guarded:
                self._guarded_plan()
            else:
                for action in self.scheduler.plan(self.view):
                    count += 1
                    if (
                        count > 64
                    ):  # waiting + running is the same all pass long (a start or a preemption moves a job between them)
                        self._check_action_count(count)
                    apply(action)
        except (PolicyError, KeyboardInterrupt):
            raise
        except PassTimeout:
            raise self.overran() from None
        except BaseException as error:  # noqa: BLE001 - whatever a policy raises (or exits with) ends the run with a sentence
            raise self.calls.failure("policy", "plan", error) from error
        finally:
            self.active = False
        self.close()

    def _guarded_plan(self) -> None:
        """A plug-in's pass: its code runs with the guard up (jobs, queue and platform refuse writes); the engine's applies between."""
        calls = self.calls
        apply = self.apply
        count = 0
        calls.active = True
        try:
            actions = iter(self.scheduler.plan(self.view))
            for action in actions:
                calls.active = False
                count += 1
                if count > 64:
                    self._check_action_count(count)
                apply(action)
                calls.active = True
        finally:
            calls.active = False

    def _check_action_count(self, count: int) -> None:
        """Raise PolicyError when a pass returned more actions than waiting + running jobs allow (a loop without progress)."""
        limit = 4 * (len(self.queue) + len(self.book.running)) + 64
        if count > limit:
            raise self.policy_error(None, f"returned more than {limit} actions in one pass (a loop without progress?)")

    def begin(self) -> None:
        """Begin a scheduling pass: count it and note the head and its promise (the fairness columns compare them at the end).

        The engine's own pass (:meth:`run`) and a caller that applies actions itself (the Gymnasium
        environment, :mod:`torus_sim.rl`) both begin here and end with :meth:`close`.
        """
        if self.held_nodes is not None:  # reserved nodes held out (jobs killed for them), before any job looks
            self.held_nodes.apply(self.clock.time)
        self.scheduler.begin_pass(
            self.clock.time
        )  # under per-user limits, this lets in and holds jobs: the head is read after it
        if self.tiers is not None:  # a higher tier's job takes lower tiers' nodes before the policy plans
            for action in self.tiers.actions(self.view):
                self.apply(action)
        if self.settings.fairness:
            self._head = head = self.queue.head
            self._promise = head.reservation_at if head is not None else None

    def apply(self, action) -> None:
        """Check one action of the open pass and apply it.

        Args:
            action: :class:`~torus_sim.policies.base.Start`, :class:`~torus_sim.policies.base.Preempt`,
                :class:`~torus_sim.policies.base.Repack` or :class:`~torus_sim.policies.base.Reserve`.

        Raises:
            PolicyError: the action is not one of those, or refers to a job or an allocation that does not
                allow it (:meth:`action_refusal`); nothing was changed.
        """
        kind = type(action)
        if kind is Start:
            job = action.job
            if type(job) is Job and job.queue_key is not None and action.size is None:  # waiting (in the queue)
                reason = self.platform.allocation_refusal(action.allocation, job.partition_size, True)  # the common case
            else:
                reason = self._start_refusal(action)
            if reason is not None:
                raise self.policy_error(getattr(job, "job_id", None), reason)
            if self.settings.node_id_allocations and type(action.allocation) is not np.ndarray:
                action = action._replace(allocation=np.asarray(action.allocation, dtype=np.int64))
            queue = self.queue
            if self.settings.fairness and job is not queue.head:
                head_id = queue.head.job_id
                self._start(*action)
                self.passed.passed(job, head_id, self.progress.predicted_end(job, self.clock.time))
            else:
                self._start(*action)
            return
        if kind is Reserve:
            job = action.job
            at = action.at
            if type(job) is Job and job.queue_key is not None and type(at) is float and at >= self.clock.time - 1e-6:
                job.reservation_at = at  # the common case, checked
                return
        reason = self.action_refusal(action)
        if reason is not None:
            raise self.policy_error(reason[0], reason[1])
        if kind is Repack:
            node_ids = self.settings.node_id_allocations
            self.handlers.migrate(tuple((job, np.asarray(new, dtype=np.int64) if node_ids else new) for job, new in action.moves))
        elif kind is Preempt:
            self.handlers.preempt(action.job)
        else:
            action.job.reservation_at = float(action.at)

    def close(self) -> None:
        """End the open pass: check that it made progress where it must, then record it.

        Raises:
            SimulationError: a policy that serves the head first left it waiting though it fits.
            PolicyError: nothing runs and the first waiting job fits, yet the pass started nothing
                (the run would stall: no event would ever start it), unless the policy holds it for a
                pass it asked for (``passes_at_own_times``: a power cap's end) or a pass is asked ahead
                (:meth:`request_at`: a reservation's or a window's end).
        """
        queue, policy, platform = self.queue, self.policy, self.platform
        self.open = False
        if self.returned:
            self.returned = []
        waiting = len(queue)
        if self.check_head and waiting and self._head_fits(queue.head):
            raise SimulationError(f"the pass left job {queue.head.job_id} waiting with {platform.free_count()} nodes free")
        if waiting and ((self.power is not None and policy.passes_at_price_changes) or policy.passes_at_own_times):
            self.handlers.schedule_price_pass()
        # a pass it asked for comes (a power cap's end), or one asked ahead (a reservation's end gives nodes back)
        holds = (self.handlers.price_pass_pending and policy.passes_at_own_times) or self._ahead > self.clock.time
        if waiting and not self.book.running and not holds and self._stalls(queue.head):
            head = queue.head
            raise self.policy_error(
                head.job_id,
                f"nothing runs and the first waiting job fits ({head.partition_size} nodes, {platform.free_count()} free), "
                "yet the pass started nothing: no event would ever start it",
            )
        if not self.settings.record:
            return
        row = (self.clock.time, platform.free_count(), self.scheduler.queued_demand(), len(self.book.running), waiting)
        if self.settings.fairness:
            row += self._fairness_columns(queue.head, self._head, self._promise)
        self.recorder.pass_ended(row)  # PASS_COLUMNS' order, then FAIRNESS_COLUMNS'

    def _stalls(self, head: Job) -> bool:
        """Whether the first waiting (rigid) job fits now: with nothing running, a pass must start something."""
        if head.times is not None:
            return False  # a moldable job's size is the policy's choice
        if getattr(self.platform, "parts", None):  # disjoint partitions: the head fits in its own or not at all
            return self.platform.fits_job_now(head)
        return self.platform.fits_now(head.partition_size)

    def policy_error(self, job_id, reason: str) -> PolicyError:
        """The PolicyError naming the policy, the time, the job and the reason."""
        return PolicyError(extension_name(self.policy), self.clock.time, job_id, reason)

    def _is_job(self, job) -> bool:
        """Whether ``job`` is one of this run's jobs (not a copy, not another run's, not something else)."""
        return self.book.jobs.owns(job)

    def _start_refusal(self, action: Start) -> str | None:
        """Why a Start cannot be applied, or None (the job waits; the allocation is free, of its size, not down)."""
        job = action.job
        if not self._is_job(job):
            return f"Start names {job!r}, not a job of this run"
        if job.state is not JobState.QUEUED or job not in self.queue:
            return f"Start of job {job.job_id}, which is not waiting (it is {job.state.value})"
        size = action.size
        if size is None:
            size = job.partition_size
        elif job.times is None:
            if size != job.partition_size:
                return f"Start gives rigid job {job.job_id} {size} nodes; it occupies {job.partition_size}"
        elif not (isinstance(size, (int, np.integer)) and 1 <= size <= len(job.times)):
            return f"Start gives moldable job {job.job_id} {size!r} processors; it runs on 1..{len(job.times)}"
        elif action.runtime is None or not (action.runtime > 0 and math.isfinite(action.runtime)):
            return f"Start of moldable job {job.job_id} needs its runtime t_j(p) > 0 for p = {size}, got {action.runtime!r}"
        # spares are not refused: a Krevat repack may start a job where a repacked job held spares
        # (CKPT-MIG with spares); the platform's allocate allows it too
        return self.platform.allocation_refusal(action.allocation, size, spares=True)

    def action_refusal(self, action) -> tuple[int | None, str] | None:
        """Why a Preempt, Repack or Reserve cannot be applied now.

        A preempted job must be running; a repack must move distinct running jobs onto allocations of their
        sizes that are free once all the moved jobs' old allocations are released, and disjoint; a reservation
        is for a waiting job, at a time (seconds) not before now.

        Args:
            action: what a policy returned (anything; a Start is checked by :meth:`apply_action`).

        Returns:
            ``(job id or None, sentence)``, or None when the action can be applied. Nothing is changed.

        References:
            BGL-FAULT §5.1 (migration onto free partitions); PV-EASY §4.2 (preemption).
        """
        kind = type(action)
        if kind is Preempt:
            job = action.job
            if not self._is_job(job) or self.book.running.get(job.job_id) is not job:
                return getattr(job, "job_id", None), f"Preempt of {job!r}, which is not running"
            return None
        if kind is Reserve:
            job = action.job
            if not self._is_job(job) or job.state is not JobState.QUEUED:
                return getattr(job, "job_id", None), f"Reserve for {job!r}, which is not waiting"
            try:
                at = float(action.at)
            except (TypeError, ValueError):
                return job.job_id, f"Reserve at {action.at!r}, not a time in seconds"
            now = self.clock.time
            if math.isnan(at) or at < now - 1e-6:
                return job.job_id, f"Reserve at {at} s, before now ({now} s)"
            return None
        if kind is Repack:
            return self._repack_refusal(action.moves)
        return None, f"returned {action!r}, which is not an action (Start, Preempt, Repack or Reserve)"

    def _repack_refusal(self, moves) -> tuple[int | None, str] | None:
        try:
            moves = [(job, new) for job, new in moves]
        except (TypeError, ValueError):
            return None, f"Repack moves must be (job, allocation) pairs, got {moves!r}"
        seen = set()
        for job, _ in moves:
            if not self._is_job(job) or self.book.running.get(job.job_id) is not job:
                return getattr(job, "job_id", None), f"Repack moves {job!r}, which is not running"
            if job.job_id in seen:
                return job.job_id, "Repack moves the job twice"
            seen.add(job.job_id)
        platform = self.platform
        if platform.table is not None:  # partition ids: the partitions' supernodes as bit sets
            freed = 0
            for job, _ in moves:
                freed |= platform.held_bits(job.allocation)
            taken = 0
            for job, new in moves:
                reason = platform.allocation_refusal(new, job.allocated_size, spares=True, freed=freed)
                if reason is not None:
                    return job.job_id, f"Repack: {reason}"
                bits = platform.held_bits(new)
                if bits & taken:
                    return job.job_id, "Repack puts two jobs on the same supernodes"
                taken |= bits
            return None
        if platform.tracks_nodes:
            freed = (
                np.concatenate([np.asarray(job.allocation, dtype=np.int64) for job, _ in moves])
                if moves
                else np.zeros(0, np.int64)
            )
            taken: set = set()
            for job, new in moves:
                reason = platform.allocation_refusal(new, job.allocated_size, spares=True, freed=freed)
                if reason is not None:
                    return job.job_id, f"Repack: {reason}"
                nodes = set(np.asarray(new).tolist())
                if nodes & taken:
                    return job.job_id, "Repack puts two jobs on the same nodes"
                taken |= nodes
            return None
        for job, new in moves:
            if new != job.allocated_size:
                return job.job_id, f"Repack: allocation of {new!r} nodes, the job occupies {job.allocated_size}"
        return None

    def _fairness_columns(self, head: Job | None, previous_head: Job | None, promised_at: float | None) -> tuple:
        """A pass row's :data:`FAIRNESS_COLUMNS`, in that order (PV-EASY §3.1-3.2, §4.1)."""
        previous = -1 if previous_head is None else previous_head.job_id
        promised = math.nan if promised_at is None else promised_at
        if head is None:
            return (-1, False, previous, promised, 0, False, False)
        running, platform = self.book.running, self.platform
        rank = head.rank
        if self.book.rank_sums is not None:  # the same sum as below, from the tree
            ready = platform.free + self.book.rank_sums.above(rank) >= head.partition_size
        else:
            ready = self._could_start_without(head, (job for job in running.values() if job.rank > rank))
        counting, nodes = self.passed.counting(head, running)  # only the jobs whose state changed are looked at
        if platform.counts_fit:  # its free count kept as an attribute (the Platform protocol)
            backfilled = platform.free + nodes >= head.partition_size
        else:
            backfilled = self._could_start_without(head, [job for job, _ in counting.values()])
        if previous_head is head and promised_at is not None and backfilled:
            last = self.passed.last
            under = (job for job, _ in counting.values() if last[job.job_id][1] <= promised_at)
            underestimated = self._could_start_without(head, under)
        else:
            underestimated = False
        return (head.job_id, ready, previous, promised, len(counting), backfilled, underestimated)

    def _head_fits(self, head: Job) -> bool:
        """Whether the first waiting job fits now (a policy that serves the head first must have started it)."""
        return head.partition_size <= self.platform.free

    def _could_start_without(self, head: Job, blockers: Iterable[Job]) -> bool:
        """Whether the head would fit now if the given running jobs were not running (PV-EASY §3.1).

        ``blockers`` may be a generator: a cluster only sums their sizes (a pass asks this of every
        running job, so no list is built there).
        """
        platform = self.platform
        if platform.counts_fit:
            short = head.partition_size - platform.free  # nodes the blockers must give back
            for job in blockers:
                if short <= 0:
                    break
                short -= job.allocated_size
            return short <= 0
        blockers = list(blockers)
        if not blockers:
            return False
        occupancy = platform.snapshot()
        for job in blockers:
            occupancy.vacate(job)
        return occupancy.fits(head.partition_size)
