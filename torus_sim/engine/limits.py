"""Per-user limits: a job over its user's limit waits held, out of the queue the policy sees.

Production schedulers cap what one user may run at once: Slurm's association and QOS limits (``MaxJobs``,
``MaxTRESPerUser=cpu=N``; a job over them pends with the reason ``AssocMaxJobsLimit``), Maui's and Moab's
``MAXJOB`` and ``MAXPROC`` per user (HPC2N ran Maui: its seven heaviest users' running jobs plateau at 60-62).
:class:`UserLimits` keeps, for each user, the running jobs and the nodes they hold, and before every scheduling
pass lets into the wait queue only the user's waiting jobs that could all start together without passing a limit:
in queue order, a job is let in while the user's slots (``max_jobs`` less the running jobs) and room
(``max_nodes`` less the nodes held) cover it, and held otherwise (a later, smaller job may still be let in, as
Slurm's scan skips a job over a limit and goes on). Whatever the policy starts in the pass, no limit is passed;
a held job is waiting (its wait counts) but no policy sees it.

A job larger than ``max_nodes`` counts as ``max_nodes``: it is let in when its user runs nothing else (Slurm
would hold it for ever, and a replay of a log that ran it would never end).

References:
    Slurm's documentation, "Resource Limits" (association and QOS limits: MaxJobs, MaxTRESPerUser); Maui
    Scheduler Administrator's Guide §6.2 (throttling policies: MAXJOB, MAXPROC per user).
"""

from __future__ import annotations

import heapq
import math
from collections import defaultdict

from sortedcontainers import SortedKeyList

from torus_sim.core.errors import ConfigurationError

__all__ = ["UserLimits"]


class UserLimits:
    """Each user's running jobs and held nodes, and which of the user's waiting jobs the queue holds.

    Args:
        max_jobs: running jobs one user may have at once (>= 1), or None: no such limit.
        max_nodes: nodes (processors of a cluster, supernodes of a torus: the jobs' ``partition_size``) one
            user's running jobs may hold at once (>= 1), or None.
        key: the order of one user's waiting jobs (``job -> key``, smaller first), in which they are let in: the
            queue's, or any key that orders one user's jobs as the queue does (FCFS's under a priority without a
            size factor). Read once per job, when it starts waiting, unless ``phases`` is given.
        phases: the :class:`~torus_sim.engine.multifactor.Multifactor` whose order ``key`` is, when that order
            changes as the jobs age: its :meth:`~torus_sim.engine.multifactor.Multifactor.user_phase` puts each
            waiting job in one of three fixed orders, merged by ``key`` as they are read; :meth:`reorder` moves the
            jobs that aged out of their phase. None: ``key`` is fixed.

    Attributes:
        held: jobs waiting out of the queue now (a count, for the record and the tests).
        held_ever: job entries ever held (a job held at several passes counts once per time it was put aside).

    Raises:
        ConfigurationError: a limit that is not an integer >= 1, or neither limit given.
    """

    def __init__(self, max_jobs: int | None, max_nodes: int | None, key, phases=None) -> None:
        for name, value in (("max_jobs_per_user", max_jobs), ("max_nodes_per_user", max_nodes)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ConfigurationError(f"{name} must be an integer >= 1 (or unset: no limit), got {value!r}")
        if max_jobs is None and max_nodes is None:
            raise ConfigurationError("per-user limits need max_jobs_per_user or max_nodes_per_user")
        self.max_jobs = math.inf if max_jobs is None else max_jobs
        self.max_nodes = math.inf if max_nodes is None else max_nodes
        self._key = key
        self._phases = phases
        self._keys: dict[int, object] = {}  # job id -> its key within its phase, while it waits
        self._phase: dict[int, int] = {}  # job id -> its phase (0 when the key is fixed)
        self._job: dict[int, object] = {}  # job id -> the waiting job
        self._waiting: dict[int, list[SortedKeyList]] = {}  # user -> the user's waiting jobs (queued or held), per phase
        self._young: set[int] = set()  # ids of the jobs in phase 0 (with phases): they move at the next reorder
        self._aging: list[tuple[float, int]] = []  # (submit, id) of the jobs in phase 1, a heap: the oldest leave first
        self._queued: dict[int, set[int]] = defaultdict(set)  # user -> ids of the user's jobs in the queue now
        self._jobs: dict[int, int] = defaultdict(int)  # user -> running jobs
        self._nodes: dict[int, int] = defaultdict(int)  # user -> nodes held by the running jobs
        self._held_nodes: dict[int, tuple[int, int]] = {}  # running job id -> (user, nodes counted)
        self._dirty: set[int] = set()  # users whose jobs came, started or stopped since the last pass
        self.held = 0
        self.held_ever = 0

    def _counted(self, job) -> int:
        return min(job.partition_size, self.max_nodes)

    def _place(self, job) -> None:
        """Put a waiting job in its user's list of its phase."""
        job_id = job.job_id
        if self._phases is None:
            phase, self._keys[job_id] = 0, self._key(job)
        else:
            phase, self._keys[job_id] = self._phases.user_phase(job)
            if phase == 0:
                self._young.add(job_id)
            elif phase == 1:
                heapq.heappush(self._aging, (job.submitted_at, job_id))
        self._phase[job_id] = phase
        lists = self._waiting.get(job.user_id)
        if lists is None:
            keys = self._keys
            lists = self._waiting[job.user_id] = [
                SortedKeyList(key=lambda waiting: keys[waiting.job_id]) for _ in range(1 if self._phases is None else 3)
            ]
        lists[phase].add(job)

    def _unplace(self, job) -> None:
        """Take a waiting job out of its user's list (before its key is forgotten)."""
        lists = self._waiting[job.user_id]
        phase = self._phase.pop(job.job_id)
        lists[phase].remove(job)
        del self._keys[job.job_id]
        if phase == 0 and self._phases is not None:
            self._young.discard(job.job_id)
        if not any(lists):
            del self._waiting[job.user_id]  # a reorder walks only the users with waiting jobs

    def waiting(self, job) -> None:
        """A job entered the wait queue (an arrival, or back after a kill, a silent error or a preemption)."""
        user = job.user_id
        self._job[job.job_id] = job
        self._place(job)
        self._queued[user].add(job.job_id)
        self._dirty.add(user)

    def started(self, job, nodes: int, now: float = 0.0) -> None:
        """A waiting job started holding ``nodes`` nodes (at ``now``): it counts against its user until it stops."""
        user = job.user_id
        self._unplace(job)
        del self._job[job.job_id]
        self._queued[user].discard(job.job_id)
        counted = min(nodes, self.max_nodes)
        self._held_nodes[job.job_id] = (user, counted)
        self._jobs[user] += 1
        self._nodes[user] += counted
        self._dirty.add(user)

    def stopped(self, job_id: int, now: float = 0.0) -> None:
        """A running job stopped (it ended, was killed or preempted; at ``now``): its user may run more."""
        user, counted = self._held_nodes.pop(job_id)
        self._jobs[user] -= 1
        self._nodes[user] -= counted
        self._dirty.add(user)

    def reorder(self) -> None:
        """The priorities were recomputed: the jobs that aged out of their phase move; a user whose order may have changed is let in anew.

        A user's order changes only where jobs moved or where two phases interleave (their jobs' priorities
        grow at different rates); the others keep theirs and are not walked again.

        Raises:
            ValueError: the limits were made without ``phases`` (their key is fixed).
        """
        if self._phases is None:
            raise ValueError("per-user limits with a fixed key never reorder")
        moved = set()
        job_of, phase_of = self._job, self._phase
        for job_id in list(self._young):
            job = job_of[job_id]
            if self._phases.user_phase(job)[0] != 0:
                self._unplace(job)
                self._place(job)
                moved.add(job.user_id)
        aging = self._aging
        while aging:
            job_id = aging[0][1]
            if phase_of.get(job_id) != 1:  # started (or moved) since it was pushed
                heapq.heappop(aging)
                continue
            job = job_of[job_id]
            if self._phases.user_phase(job)[0] != 2:
                break
            heapq.heappop(aging)
            self._unplace(job)
            self._place(job)
            moved.add(job.user_id)
        for user, lists in self._waiting.items():
            if user in moved or sum(1 for jobs in lists if jobs) > 1:
                self._dirty.add(user)

    def _ordered(self, lists):
        """A user's waiting jobs in the queue's order: its phases' fixed orders merged by the key."""
        filled = [jobs for jobs in lists if jobs]
        if len(filled) == 1:
            return filled[0]
        return heapq.merge(*filled, key=self._key)

    def refresh(self, queue) -> None:
        """Before a pass: let into ``queue`` the waiting jobs each changed user may start, hold the others.

        Args:
            queue: the :class:`~torus_sim.engine.wait_queue.WaitQueue` (jobs are added to it and removed from it).
        """
        for user in self._dirty:
            self._refresh_user(user, queue)
        self._dirty.clear()

    def _refresh_user(self, user: int, queue) -> None:
        lists = self._waiting.get(user)
        if not lists:
            return
        queued = self._queued[user]
        slots = self.max_jobs - self._jobs[user]
        room = self.max_nodes - self._nodes[user]
        let_in = []
        for job in self._ordered(lists):
            if slots <= 0 or room <= 0:
                break
            need = self._counted(job)
            if need <= room:
                let_in.append(job)
                slots -= 1
                room -= need
        wanted = {job.job_id for job in let_in}
        for job_id in [job_id for job_id in queued if job_id not in wanted]:  # at most the slots or room of a pass ago
            queue.remove(self._job[job_id])
            queued.discard(job_id)
            self.held += 1
            self.held_ever += 1
        for job in let_in:
            if job.job_id not in queued:
                queue.add(job)
                queued.add(job.job_id)
                self.held -= 1
