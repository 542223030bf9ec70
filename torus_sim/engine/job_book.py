"""The job book: the run's jobs, the running set, the completions and the makespan, with one owner.

:class:`JobBook` is where every component of the engine reads and changes which jobs run: a start enters
the running set (and the rank sums and the kept order of predicted ends, where the run keeps them), a stop
(an end, a kill, a preemption) leaves it, a completion counts and moves the makespan. Before it, these were
five attributes of the model that the handlers, the pass and the view each changed or read.

References:
    BGL-FAULT §6.1 (jobs run, are killed and restart; the makespan is the last completion); PV-EASY §3.1 (the
    running jobs' sizes by rank for the head's fairness question).
"""

from __future__ import annotations

from collections.abc import Callable

from torus_sim.core.job import Job
from torus_sim.engine.arrivals import RunJobs
from torus_sim.engine.rank_sums import RankSums
from torus_sim.engine.running_ends import RunningEnds

__all__ = ["JobBook"]


class JobBook:
    """The run's jobs (:class:`~torus_sim.engine.arrivals.RunJobs`), which of them run, how many completed, the makespan.

    Args:
        jobs: the run's jobs (made at arrival for a streamed log).
        rank_sums: keep the running jobs' sizes by rank (:class:`~torus_sim.engine.rank_sums.RankSums`): the
            fairness columns and a shadow-load policy ask at every pass on a count cluster.
        ends_can_be_kept: the running jobs' predicted ends are fixed for an attempt (a cluster's counts without
            periodic checkpoints, preemption arithmetic or preventive moves): :meth:`running_ends` keeps them in
            order from its first call on.
        workload: the :class:`~torus_sim.inputs.workload.jobs.Workload` the jobs came from (its facts and span), or None.

    Attributes:
        jobs: the run's :class:`~torus_sim.engine.arrivals.RunJobs`.
        count: the run's job count.
        running: job id -> the running :class:`~torus_sim.core.job.Job` (start order).
        rank_sums: the running jobs' sizes by rank, or None.
        completed: jobs completed so far.
        makespan: the last completion's time, seconds (0 before any).
        on_stop: called with a job that leaves the running set (the pass's fairness bookkeeping), or None.
        workload: the workload the jobs came from, or None.
        parts: each partition's :class:`~torus_sim.engine.platform_parts.PartBook` on a platform of partitions, or None.
    """

    __slots__ = (
        "_ends",
        "_ends_can_be_kept",
        "completed",
        "count",
        "jobs",
        "makespan",
        "on_stop",
        "parts",
        "rank_sums",
        "running",
        "workload",
        "_part_of",
    )

    def __init__(self, jobs: RunJobs, rank_sums: bool, ends_can_be_kept: bool, workload=None) -> None:
        self.jobs = jobs
        self.count = len(jobs)  # the run's job count, asked after every event (a streamed run's jobs are made later)
        self.workload = workload
        self.parts = None  # each partition's book, on a platform of partitions (divide)
        self._part_of = None
        self.running: dict[int, Job] = {}
        self.rank_sums = RankSums(len(jobs)) if rank_sums else None
        self.completed = 0
        self.makespan = 0.0
        self.on_stop: Callable[[Job], None] | None = None
        self._ends_can_be_kept = ends_can_be_kept
        self._ends: RunningEnds | None = None

    def __len__(self) -> int:
        """The run's job count (fixed when the book is made)."""
        return self.count

    @property
    def unfinished(self) -> int:
        """Jobs not yet completed."""
        return len(self.jobs) - self.completed

    def divide(self, part_of, books) -> None:
        """Hand each start and stop on to the book of the job's partition (a platform of partitions; before any start).

        Args:
            part_of: ``job id -> partition``.
            books: the partitions' :class:`~torus_sim.engine.platform_parts.PartBook`, in the platform's order.
        """
        self._part_of, self.parts = part_of, list(books)

    def start(self, job: Job) -> None:
        """``job`` starts an attempt: it enters the running set (its allocated size and predicted end set before)."""
        self.running[job.job_id] = job
        if self.parts is not None:
            self.parts[self._part_of(job.job_id)].start(job)
        if self.rank_sums is not None:
            self.rank_sums.add(job.rank, job.allocated_size)
        if self._ends is not None:
            self._ends.add(job)

    def stop(self, job_id: int) -> Job | None:
        """Take a job off the running set (its end, a kill, a preemption); None when it was not running."""
        job = self.running.pop(job_id, None)
        if job is not None:
            if self.parts is not None:
                self.parts[self._part_of(job_id)].stop(job)
            if self.on_stop is not None:
                self.on_stop(job)
            if self.rank_sums is not None:
                self.rank_sums.add(job.rank, -job.allocated_size)
            if self._ends is not None:
                self._ends.discard(job)
        return job

    def moving(self, job: Job) -> None:
        """A running job is about to move (a migration): its kept predicted end is dropped until :meth:`moved`."""
        if self._ends is not None:
            self._ends.discard(job)

    def moved(self, job: Job) -> None:
        """A running job moved: its new predicted end is kept."""
        if self._ends is not None:
            self._ends.add(job)

    def finished(self, job: Job, now: float) -> None:
        """``job`` completed at ``now`` (seconds): counted, the makespan moves, a streamed run lets it go (its row is written)."""
        self.completed += 1
        self.makespan = now
        self.jobs.completed(job)

    def running_ends(self) -> RunningEnds | None:
        """The running jobs kept in order of predicted end (:class:`~torus_sim.engine.running_ends.RunningEnds`), or None.

        None where a running job's predicted end can change during its attempt (the torus, periodic
        checkpoints, PV-EASY's checkpoint / suspend modes, preventive moves): sort at each pass there.
        Made from the running jobs at the first call, then kept up to date at every start and stop.
        """
        if self._ends is None and self._ends_can_be_kept:
            self._ends = RunningEnds()
            for job in self.running.values():
                self._ends.add(job)
        return self._ends
