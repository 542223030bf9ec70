"""The scheduler agent: owns the wait queue and asks its policy what to do."""

from __future__ import annotations

import math

import numpy as np

from torus_sim.core.job import Job, fcfs_key
from torus_sim.engine.dispatch import DispatchDelay
from torus_sim.engine.limits import LimitChain, NodeSecondsLimit, UserLimits
from torus_sim.engine.maintenance import MaintenanceWindows
from torus_sim.engine.mesa_core import Agent, Model
from torus_sim.engine.multifactor import Multifactor
from torus_sim.engine.platform_parts import DividedQueue
from torus_sim.engine.prime_time import PrimeTime
from torus_sim.engine.wait_queue import WaitQueue
from torus_sim.machine.platforms.partitioned import PartAllocation
from torus_sim.policies.base import Policy, Start

__all__ = ["SchedulerAgent"]


class SchedulerAgent(Agent):
    """Holds the wait queue in the policy's order and plans each scheduling pass with the policy.

    A killed, preempted or silently failed job re-enters the queue at its priority (its FCFS position
    for FCFS policies), as BGL-FAULT §6.1 restarts failed jobs and PV-EASY §4.2 resumes preempted ones.

    Args:
        model: the model.
        policy: the scheduling policy.
        key: the wait queue's order (``job -> key``); the policy's ``queue_key`` when None (the engine
            gives a plug-in's key wrapped in its checks: :func:`torus_sim.engine.guard.checked_queue_key`).
        limits: ``(who, max_jobs, max_nodes, owner)`` stages in the order they apply (``who`` ``user``, ``group`` or
            ``queue``; either maximum None; ``owner``: ``job -> int``, None for the users; ``who`` ``user node-seconds``:
            ``max_jobs`` is the users' node-seconds left, :class:`~torus_sim.engine.limits.NodeSecondsLimit`), or None:
            no limits. With limits, a job over its owner's limit waits held out of the queue
            (:class:`~torus_sim.engine.limits.UserLimits`, several in series: :class:`~torus_sim.engine.limits.LimitChain`).
        priority: a :class:`~torus_sim.engine.multifactor.Multifactor`: the queue in Slurm's multifactor order
            instead of ``key``, recomputed every calc period; or None.
        maintenance: a :class:`~torus_sim.engine.maintenance.MaintenanceWindows`: jobs whose requested time reaches
            into the next window wait held out of the queue; or None.
        dispatch: a :class:`~torus_sim.engine.dispatch.DispatchDelay`: each instant's arrivals enter the queue a fixed
            latency after their submission; or None: at once.
        prime_time: a :class:`~torus_sim.engine.prime_time.PrimeTime`: in prime time, long jobs wait held out of the
            queue; or None.

    Attributes:
        queue: the wait queue, ordered by ``policy.queue_key``, indexed by partition size on the torus
            when the policy reads the per-size lists.
        limits: the :class:`~torus_sim.engine.limits.UserLimits` (or :class:`~torus_sim.engine.limits.LimitChain`), or
            None.
        priority: the :class:`~torus_sim.engine.multifactor.Multifactor`, or None.
        maintenance: the :class:`~torus_sim.engine.maintenance.MaintenanceWindows`, or None.
        prime_time: the :class:`~torus_sim.engine.prime_time.PrimeTime`, or None.
        accounts: the parts that follow each user's running jobs (the limits, the priority's usage): each has
            ``started(job, nodes, now)`` and ``stopped(job_id, now)``; empty without them.
        passes: number of scheduling passes run.

    References:
        BGL-FAULT §5.1, §6.1; PV-EASY §4.
    """

    def __init__(
        self,
        model: Model,
        policy: Policy,
        key=None,
        limits: tuple | None = None,
        priority: Multifactor | None = None,
        maintenance: MaintenanceWindows | None = None,
        dispatch: DispatchDelay | None = None,
        prime_time: PrimeTime | None = None,
    ) -> None:
        super().__init__(model)
        self.dispatch = dispatch
        self.policy = policy
        by_size = policy.queue_by_size and model.platform.table is not None
        key = priority.key if priority is not None else policy.queue_key if key is None else key
        divided = getattr(model.platform, "parts", None)  # disjoint partitions: each keeps its waiting jobs too
        keys = None if priority is None else priority.keys  # a reorder keys every waiting job: all at once
        self.queue = (
            DividedQueue(key, model.platform.part_of, len(divided), keys)
            if divided
            else WaitQueue(key, by_size=by_size, keys=keys)
        )
        # a user's jobs in the queue's order: under the priority without a size factor that is FCFS's (one user's
        # jobs share the fair-share factor and age never reorders them); with one (or a queue factor), the phases of age
        self._limits_follow = priority is not None and priority.reorders_a_users_jobs
        # ages counted from eligibility: a held job has no age to rank it by, so a user's jobs are let in in the order
        # of their priorities without the age (size and queue factors, then submission), a fixed order
        self._ages_held = priority is not None and priority.ages_from_eligibility
        gated = maintenance is not None or prime_time is not None  # gates that hold jobs by requested time
        if limits is None:
            self.limits = None
        elif len(limits) == 1 and limits[0][0] == "user":  # the users' limits alone: no chain around them
            self.limits = self._user_limits(limits[0][1:3], key, priority, gated)
        else:
            self.limits = LimitChain(
                self._user_limits((max_jobs, max_nodes), key, priority, gated)
                if who == "user"
                else NodeSecondsLimit(max_jobs, key)
                if who == "user node-seconds"
                else UserLimits(max_jobs, max_nodes, key, owner=owner, who=who, rekey=priority is not None, gated=gated)
                for who, max_jobs, max_nodes, owner in limits
            )
        self.priority = priority
        self.maintenance = maintenance
        self.prime_time = prime_time
        self.accounts = tuple(part for part in (self.limits, priority) if part is not None)
        self.passes = 0
        self._route = None  # a partitioned platform's router (job -> its partition), once divided
        self._planners: tuple = ()  # (policy, view) per partition, once divided

    def _user_limits(self, limits, key, priority, gated: bool) -> UserLimits:
        """The per-user limits: a user's jobs in the queue's order, kept in the priority's phases where age reorders them."""
        if self._ages_held:
            return UserLimits(*limits, key=priority.ageless_key, gated=gated)
        if self._limits_follow:
            return UserLimits(*limits, key=_kept_or(key), phases=priority, gated=gated)
        return UserLimits(*limits, key=fcfs_key if priority is not None else key, gated=gated)

    def divide(self, route, planners) -> None:
        """Plan a platform of disjoint partitions one partition at a time (the model calls this once, while wiring).

        Args:
            route: ``job -> partition``: routes a job on its first arrival, before it enters the queue
                (:meth:`~torus_sim.machine.platforms.partitioned.PartitionedPlatform.route`).
            planners: ``(policy, view)`` per partition, in the platform's order: each partition's own instance of the
                policy and its view (its cluster, its waiting and running jobs).
        """
        self._route = route
        self._planners = tuple(planners)

    def enqueue(self, job: Job) -> None:
        """Put an arriving or interrupted job at its position (the engine's one way into the wait queue)."""
        if self._route is not None:
            self._route(job)
        self.queue.add(job)
        for part in self.accounts:
            part.waiting(job)

    def enqueue_arrivals(self, jobs) -> None:
        """Put the jobs submitted at one instant at their positions (one extend, not an insertion per job).

        Args:
            jobs: the arrived jobs, in rank order (:meth:`~torus_sim.engine.arrivals.RunJobs.arrived`).
        """
        if self.dispatch is not None:
            jobs = list(jobs)
            if jobs:
                self.dispatch.arrived(jobs, jobs[0].submitted_at)
            return
        self._admit(jobs)

    def _admit(self, jobs) -> None:
        """Put jobs submitted at one instant (or due together after the dispatch latency) at their positions."""
        if self._route is not None:
            jobs = list(jobs)
            for job in jobs:
                self._route(job)
        if not self.accounts:
            self.queue.extend(jobs)
            return
        jobs = list(jobs)
        self.queue.extend(jobs)
        for part in self.accounts:
            for job in jobs:
                part.waiting(job)

    def queued_demand(self) -> int:
        """Nodes requested by the waiting jobs (BGL-FAULT §6.1's q(t), partition sizes)."""
        return self.queue.demand

    def begin_pass(self, now: float) -> None:
        """Count a scheduling pass (the engine's own, or one a caller drives: the Gymnasium environment).

        With the multifactor priority, the factors are recomputed when a calc period has passed and the queue
        reordered (:meth:`Multifactor.recompute`); under per-user limits, the queue then holds the waiting jobs
        their users may start (:meth:`UserLimits.refresh`), a job the maintenance windows or prime time hold at this
        pass taking no slot (their lower :meth:`~MaintenanceWindows.bound`); the gates then hold theirs out.

        Args:
            now: the pass's time, seconds.
        """
        self.passes += 1
        if self.dispatch is not None and self.dispatch.pending:  # the arrivals due by now enter first
            due = self.dispatch.due(now)
            if due:
                self._admit(due)
        if self.maintenance is not None:  # the jobs held before a window come back first: the other gates see them
            self.maintenance.restore(self.queue, now)
        if self.prime_time is not None:
            self.prime_time.restore(self.queue, now)
        priority = self.priority
        if priority is not None and priority.due(now):
            priority.recompute(now)
            if len(self.queue):  # one job's key too: the jobs that come before the next recomputation are keyed anew
                self.queue.reorder()
            if self.limits is not None and self.limits.reorders:
                self.limits.reorder()
        if self.limits is not None:  # a job a window holds that the limits take back is theirs to hold
            bound = math.inf  # a job asking more than the gates allow now is let in without a slot (they hold it)
            if self.maintenance is not None:
                bound = self.maintenance.bound(now)
            if self.prime_time is not None:
                bound = min(bound, self.prime_time.bound(now))
            intake = self.queue if self.maintenance is None else _Gated(self.queue, self.maintenance)
            if self._ages_held:
                intake = _Aging(intake, priority, now)
            self.limits.refresh(intake, bound, now)
        if self.maintenance is not None:
            self.maintenance.hold(self.queue, now)
        if self.prime_time is not None:
            self.prime_time.hold(self.queue, now)

    def plan(self, view):
        """The policy's actions for this pass: the engine's pass asks the agent, the agent asks its policy.

        Args:
            view: the engine's read-only :class:`~torus_sim.engine.view.SchedulingView`.

        Returns:
            The policy's actions (a list or a generator; the engine applies each in order before the next
            is asked for).
        """
        if self._planners:
            return self._plan_parts()
        return self.policy.plan(view)

    def _plan_parts(self):
        """Each partition's policy plans on its own view, in the platform's order; its starts name their partition.

        Yields:
            The policies' actions, each applied by the engine before the next is asked for; a start's allocation
            becomes a :class:`~torus_sim.machine.platforms.partitioned.PartAllocation` of its partition.
        """
        for part, (policy, view) in enumerate(self._planners):
            if view.queue.head is None:
                continue
            for action in policy.plan(view):
                if type(action) is Start:
                    inner = action.allocation
                    if not isinstance(inner, (int, np.integer)):
                        inner = np.asarray(inner, dtype=np.int64)
                    action = action._replace(allocation=PartAllocation(part, inner))
                yield action


class _Aging:
    """The wait queue as the limits change it when a job's age counts from its entry (``priority_age_from = "eligible"``).

    A job the limits let in ages from this pass; a job they hold gains no age until let in again
    (:meth:`~torus_sim.engine.multifactor.Multifactor.let_in`, :meth:`~torus_sim.engine.multifactor.Multifactor.held`).
    """

    __slots__ = ("_now", "_priority", "_queue")

    def __init__(self, queue, priority: Multifactor, now: float) -> None:
        self._queue = queue
        self._priority = priority
        self._now = now

    def add(self, job) -> None:
        self._priority.let_in(job, self._now)  # before the queue keys it
        self._queue.add(job)

    def remove(self, job) -> None:
        self._priority.held(job)
        self._queue.remove(job)


class _Gated:
    """The wait queue as the per-user limits change it while a maintenance window holds some of its jobs out.

    A job the limits take back may be one the window holds (out of the queue since an earlier pass): the window
    forgets it, and the limits hold it.
    """

    __slots__ = ("_maintenance", "_queue")

    def __init__(self, queue, maintenance: MaintenanceWindows) -> None:
        self._queue = queue
        self._maintenance = maintenance

    def add(self, job) -> None:
        self._queue.add(job)

    def remove(self, job) -> None:
        if self._maintenance.holds(job):
            self._maintenance.release(job)
        else:
            self._queue.remove(job)


def _kept_or(key):
    """``key``, read from the key the queue keeps on a job while it waits there (:attr:`Job.queue_key`) where it has one.

    The queue keys a job as it enters and keys every waiting job again when the priority is recomputed, before the
    limits walk their users (:meth:`Scheduler.begin_pass`), so a kept key is the one ``key`` gives now; the users'
    walks read hundreds of jobs at every recomputation (HPC2N's heaviest users), most of them in the queue.
    """

    def kept_or(job):
        kept = job.queue_key
        return kept if kept is not None else key(job)

    return kept_or
