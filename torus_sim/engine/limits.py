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

Limits per group and per queue (Slurm's ``GrpJobs`` / ``GrpTRES`` of an account and a QOS's or partition's limits,
Maui's ``MAXJOB`` / ``MAXPROC`` per ``GROUP`` and per ``CLASS``) are the same rule with another owner: a
:class:`UserLimits` made with an ``owner`` (a job's group or queue); :class:`LimitChain` puts several in series, each
letting in only among the jobs the one before it let in, so whatever the policy starts passes none of them.

A job a maintenance window or prime time keeps from starting takes no slot: Slurm's scan skips a job a reservation
blocks and starts the user's next one (Maui's ``MAXJOB`` counts running jobs). Both gates block by requested time
alone (every job asking more than a bound: the time left before a drained window, -inf in a window, prime time's
maximum), so the scheduler hands the limits the bound of this pass (:meth:`UserLimits.refresh`): a job over it is let
in without a slot (the gate then holds it out of the queue). A user's walk is redone only when the bound crosses the
requested time of one of the user's waiting jobs (``gated``: the waiting jobs are kept sorted by requested time), not
at every pass near a window: a user of RICC holds thousands of waiting jobs.

Most users never pass their limits: their waiting jobs are all let in, and their order is kept only from their first
walk on. A heavy user's walk is not redone for what cannot change it: a start of a job it let in (the same jobs less
that one), or, where the job limit alone stopped it, running jobs that stop and jobs that come after its stop (the
walk goes on from its stop with the slots freed). HPC2N's site (202,871 jobs, 170 per user) walks its users 2,680
times instead of 18,775.

References:
    Slurm's documentation, "Resource Limits" (association and QOS limits: MaxJobs, MaxTRESPerUser); Maui
    Scheduler Administrator's Guide §6.2 (throttling policies: MAXJOB, MAXPROC per user).
"""

from __future__ import annotations

import heapq
import math
from bisect import bisect_left
from collections import defaultdict

from sortedcontainers import SortedKeyList, SortedList

from torus_sim.core.errors import ConfigurationError

__all__ = ["LimitChain", "NodeSecondsLimit", "OwnerMap", "UserLimits"]


class UserLimits:
    """Each user's running jobs and held nodes, and which of the user's waiting jobs the queue holds.

    Args:
        max_jobs: running jobs one user may have at once (>= 1), or None: no such limit.
        max_nodes: nodes (processors of a cluster, supernodes of a torus: the jobs' ``partition_size``) one
            user's running jobs may hold at once (>= 1), or None.
        key: the order of one user's waiting jobs (``job -> key``, smaller first), in which they are let in: the
            queue's, or any key that orders one user's jobs as the queue does (FCFS's under a priority without a
            size factor). Read for a job when its user's order is first needed (a walk) and kept while it waits,
            unless ``phases`` is given; read again to place a job that comes against where a walk stopped.
        phases: the :class:`~torus_sim.engine.multifactor.Multifactor` whose order ``key`` is, when that order
            changes as the jobs age: its :meth:`~torus_sim.engine.multifactor.Multifactor.user_phase` puts each
            waiting job in one of three fixed orders, merged by ``key`` as they are read; :meth:`reorder` moves the
            jobs that aged out of their phase. None: ``key`` is fixed (unless ``rekey``).
        owner: ``job -> int``: whose limit a job counts against (its group, its queue); None: its user.
        who: the owner's word, for the sentences (``user``, ``group``, ``queue``).
        rekey: ``key`` changes at every reorder and no ``phases`` follow it (a group's or a queue's jobs under the
            multifactor priority belong to users of different fair shares): :meth:`reorder` places every waiting
            job anew.
        gated: gates that block by requested time (maintenance windows, prime time) hand :meth:`refresh` their
            bound: the waiting jobs are kept sorted by requested time so a moved bound finds the users it changes.

    Attributes:
        held: jobs waiting out of the queue now (a count, for the record and the tests).
        held_ever: job entries ever held (a job held at several passes counts once per time it was put aside).

    Raises:
        ConfigurationError: a limit that is not an integer >= 1, or neither limit given.
    """

    def __init__(
        self,
        max_jobs: int | None,
        max_nodes: int | None,
        key,
        phases=None,
        owner=None,
        who: str = "user",
        rekey: bool = False,
        gated: bool = False,
    ) -> None:
        for name, value in ((f"max_jobs_per_{who}", max_jobs), (f"max_nodes_per_{who}", max_nodes)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ConfigurationError(f"{name} must be an integer >= 1 (or unset: no limit), got {value!r}")
        if max_jobs is None and max_nodes is None:
            raise ConfigurationError(f"per-{who} limits need max_jobs_per_{who} or max_nodes_per_{who}")
        self._owner = owner if owner is not None else _user_of
        self._rekey = rekey and phases is None
        self.max_jobs = math.inf if max_jobs is None else max_jobs
        self.max_nodes = math.inf if max_nodes is None else max_nodes
        self._key = key
        self._phases = phases
        self._keys: dict[int, object] = {}  # job id -> its key within its phase, while it waits
        self._phase: dict[int, int] = {}  # job id -> its phase (0 when the key is fixed)
        self._job: dict[int, object] = {}  # job id -> the waiting job
        self._waiting: dict[int, list[SortedKeyList]] = {}  # user -> its waiting jobs in order, per phase (see _ordered_lists)
        self._mine: dict[int, dict[int, object]] = {}  # user -> its waiting jobs (queued or held) by id, in no order
        self._young: set[int] = set()  # ids of the jobs in phase 0 (with phases): they move at the next reorder
        self._aging: list[tuple[float, int]] = []  # (submit, id) of the jobs in phase 1, a heap: the oldest leave first
        self._queued: dict[int, set[int]] = defaultdict(set)  # user -> ids of the user's jobs in the queue now
        self._jobs: dict[int, int] = defaultdict(int)  # user -> running jobs
        self._nodes: dict[int, int] = defaultdict(int)  # user -> nodes held by the running jobs
        self._held_nodes: dict[int, tuple[int, int]] = {}  # running job id -> (user, nodes counted)
        self._dirty: set[int] = set()  # users whose jobs came, started or stopped since the last pass
        self._count: dict[int, int] = defaultdict(int)  # user -> its waiting jobs (queued or held)
        self._need: dict[int, int] = defaultdict(int)  # user -> the nodes they count, all together
        self._holding: set[int] = set()  # users with jobs held after their last refresh
        self._gate_let_in: set[int] = set()  # users whose last walk let in a job a gate holds (it took no slot)
        self._stop: dict[int, object] = {}  # user -> the job its last walk stopped at for want of a slot (see _resume_user)
        self._resume: set[int] = set()  # users with a stop whose jobs stopped since: their walks go on from it
        self._arrived: dict[int, list] = defaultdict(list)  # user -> jobs come since its walk, after its stop
        self._bound = math.inf  # the gates' bound at the last refresh: a job asking more takes no slot
        self._by_time = SortedList() if gated else None  # (requested time, id) of the waiting jobs (NaN as inf)
        self.held = 0
        self.held_ever = 0

    def _counted(self, job) -> int:
        return min(job.partition_size, self.max_nodes)

    @staticmethod
    def _timed(job) -> tuple[float, int]:
        """A waiting job's row in ``_by_time``: its requested time (NaN, which every finite bound blocks, as inf)."""
        walltime = job.walltime
        return (walltime if walltime == walltime else math.inf), job.job_id

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
        owner = self._owner(job)
        lists = self._waiting.get(owner)
        if lists is None:
            keys = self._keys
            lists = self._waiting[owner] = [
                SortedKeyList(key=lambda waiting: keys[waiting.job_id]) for _ in range(1 if self._phases is None else 3)
            ]
        lists[phase].add(job)

    def _unplace(self, job) -> None:
        """Take a waiting job out of its user's list (before its key is forgotten)."""
        owner = self._owner(job)
        lists = self._waiting[owner]
        phase = self._phase.pop(job.job_id)
        lists[phase].remove(job)
        del self._keys[job.job_id]
        if phase == 0 and self._phases is not None:
            self._young.discard(job.job_id)
        if not any(lists):
            del self._waiting[owner]  # a reorder walks only the users with waiting jobs

    def _ordered_lists(self, user: int) -> list:
        """The user's waiting jobs in their fixed orders, one sorted list per phase: made at the user's first walk.

        A user whose waiting jobs all fit its limits lets them all in, in any order, so their order is kept only once a
        walk needs it and from then on while the user has waiting jobs (most users of a log never pass a limit of
        a hundred jobs and never pay for it). A job's phase and key depend only on the last recomputation, so lists
        made late are those kept from each job's arrival.
        """
        lists = self._waiting.get(user)
        if lists is None:
            for job in self._mine[user].values():
                self._place(job)
            lists = self._waiting[user]
        return lists

    def _forget(self, user: int, job) -> None:
        """Take a waiting job out of the user's records (it started or was withdrawn)."""
        mine = self._mine[user]
        del mine[job.job_id]
        if not mine:
            del self._mine[user]
        if job.job_id in self._phase:
            self._unplace(job)
        if user in self._arrived:  # a job that came after the walk's stop, not yet held: walk again
            self._dirty.add(user)

    def waiting(self, job) -> None:
        """A job entered the wait queue (an arrival, or back after a kill, a silent error or a preemption)."""
        user = self._owner(job)
        self._job[job.job_id] = job
        self._count[user] += 1
        self._need[user] += self._counted(job)
        mine = self._mine.get(user)
        if mine is None:
            mine = self._mine[user] = {}
        mine[job.job_id] = job
        if user in self._waiting:
            self._place(job)
        self._queued[user].add(job.job_id)
        stop = self._stop.get(user)
        if stop is not None and user not in self._dirty and self._key(stop) < self._key(job):  # after the walk's stop
            self._resume.add(user)
            self._arrived[user].append(job)
        else:
            self._dirty.add(user)
        if self._by_time is not None:
            self._by_time.add(self._timed(job))

    def started(self, job, nodes: int, now: float = 0.0) -> None:
        """A waiting job started holding ``nodes`` nodes (at ``now``): it counts against its user until it stops.

        A job the last walk let in took its slot and room there, so the user's walk, redone, would let in the same
        jobs less this one; it is not redone (most starts of a heavy user's jobs) unless the walk let in a job a gate
        holds (such a job takes no slot, and the walk's stop, with one slot less from the start, can move before it)
        or the job holds other nodes than the walk counted.
        """
        user = self._owner(job)
        needed = self._counted(job)
        counted = min(nodes, self.max_nodes)
        if counted != needed or user in self._gate_let_in:
            self._dirty.add(user)
        by_time = self._by_time
        self._forget(user, job)
        del self._job[job.job_id]
        self._count[user] -= 1
        self._need[user] -= needed
        self._queued[user].discard(job.job_id)
        if by_time is not None:
            by_time.remove(self._timed(job))
        self._held_nodes[job.job_id] = (user, counted)
        self._jobs[user] += 1
        self._nodes[user] += counted

    def stopped(self, job_id: int, now: float = 0.0) -> None:
        """A running job stopped (it ended, was killed or preempted; at ``now``): its user may run more."""
        user, counted = self._held_nodes.pop(job_id)
        self._jobs[user] -= 1
        self._nodes[user] -= counted
        if user in self._stop:  # its walk goes on from where it stopped (unless something else moved it)
            self._resume.add(user)
        else:
            self._dirty.add(user)

    @property
    def reorders(self) -> bool:
        """Whether :meth:`reorder` follows a recomputed priority (``phases`` or ``rekey``); else the order is fixed."""
        return self._phases is not None or self._rekey

    def queues(self, job) -> bool:
        """Whether ``job`` is let in now (in the queue after these limits), not held by them."""
        return job.job_id in self._queued.get(self._owner(job), ())

    def withdrawn(self, job) -> None:
        """A job the limits before these in a :class:`LimitChain` let in is held there again: it is forgotten here.

        The caller takes it out of the queue after these limits first when :meth:`queues` says it is there.
        """
        owner = self._owner(job)
        self._forget(owner, job)
        del self._job[job.job_id]
        self._count[owner] -= 1
        self._need[owner] -= self._counted(job)
        if self._by_time is not None:
            self._by_time.remove(self._timed(job))
        if job.job_id in self._queued[owner]:
            self._queued[owner].discard(job.job_id)
        else:
            self.held -= 1
        self._dirty.add(owner)

    def reorder(self) -> None:
        """The priorities were recomputed: the jobs that aged out of their phase move; a user whose order may have changed is let in anew.

        A user's order changes only where jobs moved or where two phases interleave (their jobs' priorities
        grow at different rates), and it decides what is let in only where some of the user's jobs are held (a user
        whose waiting jobs all fit its limits has them all in the queue in any order): only those users are walked
        again.

        Made with ``rekey``: every waiting job is placed anew and every owner with waiting jobs let in anew.

        Raises:
            ValueError: the limits were made without ``phases`` or ``rekey`` (their key is fixed).
        """
        if self._rekey:
            job_of = self._job
            for job_id in list(self._phase):
                job = job_of[job_id]
                self._unplace(job)
                self._place(job)
            self._dirty.update(self._mine)
            return
        if self._phases is None:
            raise ValueError("per-user limits with a fixed key never reorder")
        moved = set()
        job_of, phase_of = self._job, self._phase
        for job_id in list(self._young):
            job = job_of[job_id]
            if self._phases.user_phase(job)[0] != 0:
                self._unplace(job)
                self._place(job)
                moved.add(self._owner(job))
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
            moved.add(self._owner(job))
        waiting = self._waiting
        for user in self._holding:
            lists = waiting.get(user)
            if lists is not None and (user in moved or (lists[0] and (lists[1] or lists[2])) or (lists[1] and lists[2])):
                self._dirty.add(user)

    def _ordered(self, lists):
        """A user's waiting jobs in the queue's order: its phases' fixed orders merged by the key."""
        filled = [jobs for jobs in lists if jobs]
        if len(filled) == 1:
            return filled[0]
        return heapq.merge(*filled, key=self._key)

    def refresh(self, queue, bound: float = math.inf, now: float = 0.0) -> None:
        """Before a pass: let into ``queue`` the waiting jobs each changed user may start, hold the others.

        Args:
            queue: the :class:`~torus_sim.engine.wait_queue.WaitQueue` (jobs are added to it and removed from it).
            bound: seconds: the gates hold every job asking more (``walltime``) out of the queue at this pass
                (:meth:`~torus_sim.engine.maintenance.MaintenanceWindows.bound`,
                :meth:`~torus_sim.engine.prime_time.PrimeTime.bound`); such a job is let in without a slot. inf: no
                gate holds any job (the only value for limits made without ``gated``).
            now: the pass's time, seconds (unread: these limits count jobs and nodes, which time does not change).

        Raises:
            ValueError: a finite bound for limits made without ``gated``.
        """
        if bound != self._bound:
            if self._by_time is None:
                raise ValueError("limits made without gated take no bound")
            low, high = sorted((self._bound, bound))
            by_time = self._by_time
            first, last = by_time.bisect_right((low, math.inf)), by_time.bisect_right((high, math.inf))
            job_of, owner = self._job, self._owner
            for _, job_id in by_time.islice(first, last):  # the jobs the bound crossed: their users' walks change
                self._dirty.add(owner(job_of[job_id]))
            self._bound = bound
        for user in self._dirty:
            self._refresh_user(user, queue)
        for user in self._resume:
            if user not in self._dirty:
                self._resume_user(user, queue)
        self._dirty.clear()
        self._resume.clear()

    def _refresh_user(self, user: int, queue) -> None:
        self._stop.pop(user, None)
        self._arrived.pop(user, None)
        mine = self._mine.get(user)
        if not mine:
            self._holding.discard(user)
            self._gate_let_in.discard(user)
            return
        queued = self._queued[user]
        slots = self.max_jobs - self._jobs[user]
        room = self.max_nodes - self._nodes[user]
        bound = self._bound
        if bound == -math.inf or (self._count[user] <= slots and self._need[user] <= room):  # all in, in any order:
            # every waiting job fits, or a window holds every job (none takes a slot)
            self._holding.discard(user)
            if self._count[user] <= slots and self._need[user] <= room:  # all in as long as they all fit
                self._gate_let_in.discard(user)
            else:
                self._gate_let_in.add(user)
            if len(queued) < self._count[user]:
                for job_id, job in mine.items():
                    if job_id not in queued:
                        queue.add(job)
                        queued.add(job_id)
                        self.held -= 1
            return
        let_in = []
        append, gated, max_nodes, over = let_in.append, bound < math.inf, self.max_nodes, False
        for job in self._ordered(self._ordered_lists(user)):
            if gated and not job.walltime <= bound:  # a gate holds it at this pass: it takes no slot
                append(job)
                over = True
                continue
            if slots <= 0 or room <= 0:
                if not over and room == math.inf:  # the jobs' limit alone stopped it: a stop goes on from here
                    self._stop[user] = job
                break
            need = job.partition_size
            if need > max_nodes:
                need = max_nodes
            if need <= room:
                append(job)
                slots -= 1
                room -= need
        wanted = {job.job_id for job in let_in}
        # out: the slots or room of a pass ago at most, and jobs a gate no longer holds
        self._settle(user, queue, let_in, queued - wanted)
        if over:
            self._gate_let_in.add(user)
            self._stop.pop(user, None)
        else:
            self._gate_let_in.discard(user)

    def _settle(self, user: int, queue, let_in: list, out) -> None:
        """Leave the user's jobs in ``queue`` as a walk found them: ``out`` (ids of jobs in it) held, ``let_in`` in it."""
        queued = self._queued[user]
        for job_id in out:
            queue.remove(self._job[job_id])
            queued.discard(job_id)
            self.held += 1
            self.held_ever += 1
        for job in let_in:
            if job.job_id not in queued:
                queue.add(job)
                queued.add(job.job_id)
                self.held -= 1
        if len(queued) < self._count[user]:
            self._holding.add(user)
        else:
            self._holding.discard(user)

    def _resume_user(self, user: int, queue) -> None:
        """Go on with the user's last walk from the job it stopped at: only running jobs stopped or jobs came after it.

        Under a limit of jobs alone (no node limit), with no job a gate holds let in, the walk lets in the user's
        first jobs in order up to its slots and every job a gate holds before it stops. Jobs that stopped running
        add slots, starts of the jobs it let in take as many as they free, and jobs that came after its stop in the
        order leave what comes before it alone: the walk done again lets in the same jobs and goes on past its stop
        with the slots the stops freed; the jobs that came and are not let in are held (they entered the queue
        with their arrival). Anything else (a job came before the stop or left, the order or the bound moved) walks
        the user again from its first job.
        """
        stop = self._stop.pop(user)
        arrived = self._arrived.pop(user, ())
        queued = self._queued[user]
        slots = self.max_jobs - self._jobs[user] - len(queued) + len(arrived)
        bound = self._bound
        gated, over, let_in = bound < math.inf, False, []
        for job in self._ordered_from(self._waiting[user], stop):
            if gated and not job.walltime <= bound:
                let_in.append(job)
                over = True
                continue
            if slots <= 0:
                if not over:
                    self._stop[user] = job
                break
            let_in.append(job)
            slots -= 1
        wanted = {job.job_id for job in let_in} if arrived else ()
        self._settle(user, queue, let_in, [job.job_id for job in arrived if job.job_id not in wanted])
        if over:
            self._gate_let_in.add(user)

    def _ordered_from(self, lists, first):
        """A user's waiting jobs in the queue's order from ``first`` on (``first`` included), merged.

        Each phase's list is read from its first job whose key is not below ``first``'s (a binary search by the key).
        """
        key = self._key
        target = key(first)
        parts = []
        for jobs in lists:
            low = bisect_left(jobs, target, key=key)
            if low < len(jobs):
                parts.append(jobs.islice(low))
        if len(parts) == 1:
            return parts[0]
        return heapq.merge(*parts, key=key)


class NodeSecondsLimit:
    """Each user's running jobs' node-seconds still to run, and which of the user's waiting jobs the queue holds.

    A user's running jobs count their nodes times the requested time they have left (``nodes x (start + walltime -
    now)``, never below 0: a job past its requested time that is not killed counts nothing); a waiting job counts its
    nodes times its requested time. Before every pass the user's waiting jobs are walked in the queue's order and one
    is let in while the running jobs' count at the pass's time and the jobs let in before it leave room for its own;
    a job that does not fit is held and the walk goes on (a later, shorter or smaller job may still be let in, as
    Slurm's scan skips a job over a limit), so whatever the policy starts in the pass passes no limit. A job asking
    more than the limit alone (or no requested time: ``walltime`` NaN or inf) counts as the limit: it is let in when
    nothing else of its user counts (no running job within its requested time, no job let in before it). A job a gate
    holds at this pass (asking more than ``bound``: a maintenance window, prime time) is let in without counting, as
    :class:`UserLimits` lets it in without a slot.

    The count falls as time passes with no event, so a user with held jobs is walked again at the first pass (at the
    events and the cycle's passes, as Maui re-evaluates its throttling policies at each iteration) at which it could
    have fallen enough to let one in; a user whose waiting jobs were all let in is walked again only when a job of
    theirs comes or stops, or where a job a gate let in may count once the gate's bound moves.

    On a cluster the nodes are processors: Maui's ``MAXPS`` (processor-seconds of a user's active jobs, their
    dedicated processors times their wall-clock limit remaining) and Slurm's limit on the TRES-minutes of a user's
    running jobs (``GrpTRESRunMins=cpu=`` of a user's association, a QOS's ``MaxTRESRunMinsPerUser``, there in
    minutes: ``cpu x time limit left``). HPC2N (Maui) ran its heaviest user of the log's second half, whose jobs ask
    one processor for 81 hours, up to 5.4 million processor-seconds left and no further in 14 of its 35 fortnights
    (docs/validation/node_seconds.py).

    Args:
        limit: node-seconds (processor-seconds of a cluster) one user's running jobs may have left at once (> 0, finite).
        key: the order of one user's waiting jobs (``job -> key``, smaller first), the queue's: read at every walk
            (the multifactor priority's key changes as it is recomputed).

    Attributes:
        held: jobs waiting out of the queue now (a count).
        held_ever: job entries ever held (a job held at several passes counts once per time it was put aside).

    Raises:
        ConfigurationError: a limit that is not a positive finite number.

    References:
        Maui Scheduler Administrator's Guide §6.2 (throttling policies: ``MAXPS``); Slurm's documentation, "Resource
        Limits" (``GrpTRESRunMins``) and ``sacctmgr`` (a QOS's ``MaxTRESRunMinsPerUser``).
    """

    reorders = True
    """The key is read at every walk; a recomputed priority may reorder a user's held jobs: :meth:`reorder`."""

    def __init__(self, limit: float, key) -> None:
        if isinstance(limit, bool) or not isinstance(limit, (int, float)) or not 0 < limit < math.inf:
            raise ConfigurationError(
                f"max_node_seconds_per_user must be a positive number of node-seconds (or unset: no limit), got {limit!r}"
            )
        self.limit = float(limit)
        self._key = key
        self._owner = _user_of
        self._mine: dict[int, dict[int, object]] = {}  # owner -> its waiting jobs (queued or held) by id
        self._queued: set[int] = set()  # ids of the waiting jobs in the queue after this stage
        self._running: dict[int, tuple[int, float, float]] = {}  # running job id -> (owner, nodes, requested end)
        self._users_running: dict[int, set[int]] = defaultdict(set)  # owner -> ids of its running jobs
        self._holding: dict[int, float] = {}  # owners with held jobs after their last walk -> when to walk again
        # owners whose last walk let in a job a gate holds (it counted nothing) or held a job -> the gates' bounds under
        # which that walk's jobs count as they did: (the longest request it counted, the shortest a gate held)
        self._gated: dict[int, tuple[float, float]] = {}
        self._dirty: set[int] = set()  # owners whose jobs came, stopped or were withdrawn since the last pass
        self._bound = math.inf  # the gates' bound at the last pass
        self.held = 0
        self.held_ever = 0

    def _need(self, job) -> float:
        """A waiting job's node-seconds: its nodes times its requested time, at most the limit (NaN asks the limit)."""
        need = job.partition_size * job.walltime
        return need if need < self.limit else self.limit

    def _left(self, owner: int, now: float) -> float:
        """The owner's running jobs' node-seconds left at ``now`` (each at most the limit)."""
        running, limit, total = self._running, self.limit, 0.0
        for job_id in self._users_running.get(owner, ()):
            _, nodes, end = running[job_id]
            left = nodes * (end - now)
            if left > 0.0:
                total += left if left < limit else limit
        return total

    def waiting(self, job) -> None:
        """A job entered the wait queue (an arrival, or back after a kill, a silent error or a preemption)."""
        owner = self._owner(job)
        mine = self._mine.get(owner)
        if mine is None:
            mine = self._mine[owner] = {}
        mine[job.job_id] = job
        self._queued.add(job.job_id)
        self._dirty.add(owner)

    def _forget(self, owner: int, job_id: int) -> None:
        mine = self._mine[owner]
        del mine[job_id]
        if not mine:
            del self._mine[owner]
            self._holding.pop(owner, None)
            self._gated.pop(owner, None)

    def started(self, job, nodes: int, now: float = 0.0) -> None:
        """A waiting job started holding ``nodes`` nodes at ``now``: it counts its nodes times its requested time left."""
        owner = self._owner(job)
        self._forget(owner, job.job_id)
        self._queued.discard(job.job_id)
        walltime = job.walltime
        self._running[job.job_id] = (owner, nodes, now + walltime if walltime == walltime else math.inf)
        self._users_running[owner].add(job.job_id)

    def stopped(self, job_id: int, now: float = 0.0) -> None:
        """A running job stopped (it ended, was killed or preempted): its node-seconds left no longer count."""
        owner, _, _ = self._running.pop(job_id)
        running = self._users_running[owner]
        running.discard(job_id)
        if not running:
            del self._users_running[owner]
        if owner in self._mine:
            self._dirty.add(owner)

    def queues(self, job) -> bool:
        """Whether ``job`` is let in now (in the queue after this stage), not held by it."""
        return job.job_id in self._queued

    def withdrawn(self, job) -> None:
        """A job the stages before this one let in is held there again: it is forgotten here."""
        owner = self._owner(job)
        self._forget(owner, job.job_id)
        if job.job_id in self._queued:
            self._queued.discard(job.job_id)
        else:
            self.held -= 1
        if owner in self._mine:
            self._dirty.add(owner)

    def reorder(self) -> None:
        """The priorities were recomputed: the users with held jobs are walked at the next pass (their order may differ)."""
        holding = self._holding
        for owner in holding:
            holding[owner] = -math.inf

    def refresh(self, queue, bound: float = math.inf, now: float = 0.0) -> None:
        """Before a pass at ``now``: let into ``queue`` the waiting jobs each user may start, hold the others.

        Args:
            queue: the queue after this stage (jobs are added to it and removed from it).
            bound: seconds: a job asking more is held by a gate at this pass and let in here without counting
                (:meth:`UserLimits.refresh`).
            now: the pass's time, seconds: the running jobs' requested time left is counted from it.
        """
        walk = self._dirty
        self._dirty = set()
        if bound != self._bound:  # a job a gate held may count now, one it holds now counts nothing: walked again
            walk.update(owner for owner, (low, high) in self._gated.items() if not low <= bound < high)
            self._bound = bound
        walk.update(owner for owner, due in self._holding.items() if due <= now)
        for owner in walk:
            if owner in self._mine:
                self._walk(owner, queue, bound, now)

    def _walk(self, owner: int, queue, bound: float, now: float) -> None:
        """Let in the owner's waiting jobs that fit, in the queue's order, and hold the others.

        With jobs held, the owner is walked again at the first pass at which the count could have fallen enough to let
        one in: the smallest shortfall of a held job over the rate at which the count can fall at most (the nodes of
        its running jobs and of the jobs let in, which start in this pass or hold their room: a job capped at the limit
        falls more slowly, one not started not at all), unless a job comes or stops before. Where every waiting job
        fits together, the order does not matter: they are all let in without reading it.
        """
        mine, queued = self._mine[owner], self._queued
        room = self.limit - self._left(owner, now)
        short, starting = math.inf, 0  # starting: the nodes of the counted jobs let in
        longest, shortest = -math.inf, math.inf  # the longest request counted, the shortest a gate holds
        needs = [(job, self._need(job) if job.walltime <= bound else 0.0) for job in mine.values()]  # gated: 0
        if sum(need for _, need in needs) > room:  # not all fit together: the queue's order decides
            key = self._key
            needs.sort(key=lambda pair: key(pair[0]))
        for job, need in needs:
            job_id = job.job_id
            walltime = job.walltime
            if not walltime <= bound:  # a gate holds it at this pass: it counts nothing
                fits = True
                shortest = min(shortest, walltime if walltime == walltime else math.inf)
            else:
                fits = need <= room
                longest = max(longest, walltime)
            if fits:
                room -= need
                if need > 0.0:
                    starting += job.partition_size
                if job_id not in queued:
                    queue.add(job)
                    queued.add(job_id)
                    self.held -= 1
            else:
                short = min(short, need - room)
                if job_id in queued:
                    queue.remove(job)
                    queued.discard(job_id)
                    self.held += 1
                    self.held_ever += 1
        if shortest < math.inf or short < math.inf:  # a gate's bound that moves past a request changes this walk
            self._gated[owner] = (longest, shortest)
        else:
            self._gated.pop(owner, None)
        if short < math.inf:
            running = self._running
            rate = starting + sum(running[job_id][1] for job_id in self._users_running.get(owner, ()) if running[job_id][2] > now)
            self._holding[owner] = now + short / rate if rate > 0 else math.inf
        else:
            self._holding.pop(owner, None)


def _user_of(job) -> int:
    return job.user_id


class OwnerMap:
    """Whose limit a job counts against, read from a table: ``job -> table[job.<attribute>]`` (``missing`` if absent).

    Args:
        table: user id -> group (a group's limits), or job id -> queue (a queue's).
        attribute: the job's attribute looked up: ``user_id`` or ``job_id``.
        missing: the owner of a job the table does not name (those jobs share one owner).
    """

    __slots__ = ("_attribute", "_missing", "_table")

    def __init__(self, table: dict, attribute: str, missing: int = -1) -> None:
        self._table = table
        self._attribute = attribute
        self._missing = missing

    def __call__(self, job) -> int:
        """The owner of ``job``: its table entry, or ``missing``."""
        return self._table.get(getattr(job, self._attribute), self._missing)


class _Intake:
    """The queue one stage of a :class:`LimitChain` lets jobs into: the next stage, then the queue after it."""

    __slots__ = ("_after", "_stage")

    def __init__(self, stage, after) -> None:
        self._stage = stage
        self._after = after

    def add(self, job) -> None:
        self._after.add(job)
        self._stage.waiting(job)

    def remove(self, job) -> None:
        if self._stage.queues(job):
            self._after.remove(job)
        self._stage.withdrawn(job)


class LimitChain:
    """Limits of several owners in series (a user's, a group's, a queue's): a job waits held while any holds it.

    Each stage lets in only among the jobs the stages before it let in, in the queue's order, so the jobs in the queue
    can all start together without passing any limit (whatever the policy starts). A job held by an earlier stage
    reserves nothing in a later one. One stage is that stage alone, job for job.

    Args:
        stages: the :class:`UserLimits` (and :class:`NodeSecondsLimit`) in the order they apply (the users', the users'
            node-seconds, then the groups', then the queues').

    Attributes:
        held: jobs waiting out of the queue now, over every stage.
        held_ever: times a job was put aside by any stage.
    """

    def __init__(self, stages) -> None:
        self.stages = tuple(stages)
        if not self.stages:
            raise ConfigurationError("a chain of limits needs at least one")

    @property
    def held(self) -> int:
        """Jobs waiting out of the queue now, over every stage."""
        return sum(stage.held for stage in self.stages)

    @property
    def held_ever(self) -> int:
        """Times a job was put aside by any stage."""
        return sum(stage.held_ever for stage in self.stages)

    def waiting(self, job) -> None:
        """A job entered the wait queue: every stage sees it in its queue until it holds it."""
        for stage in self.stages:
            stage.waiting(job)

    def started(self, job, nodes: int, now: float = 0.0) -> None:
        """A job started holding ``nodes`` nodes: it counts against its owner in every stage until it stops."""
        for stage in self.stages:
            stage.started(job, nodes, now)

    def stopped(self, job_id: int, now: float = 0.0) -> None:
        """A running job stopped: its owners may run more."""
        for stage in self.stages:
            stage.stopped(job_id, now)

    @property
    def reorders(self) -> bool:
        """Whether a stage follows a recomputed priority."""
        return any(stage.reorders for stage in self.stages)

    def reorder(self) -> None:
        """The priorities were recomputed: each stage that follows them does (:meth:`UserLimits.reorder`)."""
        for stage in self.stages:
            if stage.reorders:
                stage.reorder()

    def refresh(self, queue, bound: float = math.inf, now: float = 0.0) -> None:
        """Before a pass: each stage in turn lets in what it may among what the stages before it let in.

        ``bound``: the gates' bound of this pass (:meth:`UserLimits.refresh`), the same for every stage; ``now``: the
        pass's time, seconds (:class:`NodeSecondsLimit` reads it).
        """
        stages = self.stages
        after = queue
        intakes = [queue]
        for stage in reversed(stages[1:]):
            after = _Intake(stage, after)
            intakes.append(after)
        intakes.reverse()  # stage i lets into intakes[i]: the next stage's intake, the queue for the last
        for stage, intake in zip(stages, intakes, strict=True):
            stage.refresh(intake, bound, now)
