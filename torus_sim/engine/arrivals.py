"""The run's jobs: made when the clock reaches their submission, held while they wait or run, dropped when they complete.

:class:`RunJobs` is the component of :class:`~torus_sim.engine.model.SchedulingModel` that owns the jobs.
An online workload's jobs are made at their arrival event from the workload's template (an SWF log's
columns, :class:`~torus_sim.inputs.workload.jobs.JobColumns`, or a list of jobs) and leave the engine when they
complete: their row is in the record by then. What the engine holds follows the queue and the running
set, not the log (issue 61 §1; a 450k-job log made 450k ``Job`` objects, ~220 MB, before its first event).
A batch (every job released at time 0) is made whole at construction: all of it arrives at once.

The set-up's checks (duplicate ids, sizes the platform cannot form, the resilience policy's) read the
template's columns (:meth:`RunJobs.column`), never made jobs.

References:
    BGL-FAULT §6.1 (arrival and finish events); Batsim and CQSim (jobs enter the simulation as the
    clock reaches their submission; CQSim reads the log 8,000 jobs at a time).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import numpy as np

from torus_sim.core.job import Job
from torus_sim.inputs.workload.jobs import JobColumns

__all__ = ["RunJobs"]


class RunJobs(Sequence):
    """The jobs of one run, in rank order (the workload's priority order), made as they arrive.

    As a sequence (the policy context's job table) it is the jobs in rank order: a batch's are the
    engine's own jobs (a batch policy starts the jobs of its table); a streamed run's ``jobs[rank]`` is
    a new PENDING job made from the template, for reading (the engine's are those in :attr:`live`).

    Args:
        workload: the run's :class:`~torus_sim.inputs.workload.jobs.Workload` (its ``jobs``: columns or a list, rank order).
        silent_errors: f_j per job in rank order (RIGID §3.2), or None (the templates' own counts).
        streamed: make each job at its arrival and drop it at its completion (online workloads);
            False: every job made now and kept (a batch).

    Attributes:
        live: job id -> the engine's job, for every job made and not yet completed (a batch: every job).
        job_class: the class of the jobs made (:func:`~torus_sim.engine.guard.guarded_job_class`'s
            when the run has a plug-in); set before the first :meth:`make`.
        prepare: called with each job as it is made (the resilience policy's checkpoint interval), or None.
    """

    def __init__(self, workload, silent_errors: list[int] | None, streamed: bool) -> None:
        self._templates = workload.jobs
        self._counts = silent_errors
        self.streamed = bool(streamed)
        self.live: dict[int, Job] = {}
        self.job_class: type = Job
        self.prepare: Callable[[Job], None] | None = None
        self._columns = isinstance(self._templates, JobColumns)
        self._batch: list[Job] | None = None
        if not self.streamed:  # all at once, in one pass (a RIGID experiment builds 3,000 models of 100 jobs)
            templates, counts = self._templates, self._counts
            if self._columns:
                batch = templates.build()
                for job, count in zip(batch, counts, strict=True) if counts is not None else ():
                    job.silent_errors = count
            elif counts is None:
                batch = [job.fresh_copy(rank) for rank, job in enumerate(templates)]
            else:
                batch = [job.fresh_copy(rank, count) for rank, (job, count) in enumerate(zip(templates, counts, strict=True))]
            self._batch = batch
            self.live = {job.job_id: job for job in batch}

    def __len__(self) -> int:
        return len(self._templates)

    def __getitem__(self, index):
        """The job of rank ``index`` (a slice gives a list): a batch's own, a streamed run's made from its template."""
        if self._batch is not None:
            return self._batch[index]
        if isinstance(index, slice):
            return [self[position] for position in range(*index.indices(len(self)))]
        rank = range(len(self))[index]
        return self._template(rank)

    def __iter__(self) -> Iterator[Job]:
        if self._batch is not None:
            return iter(self._batch)
        return (self._template(rank) for rank in range(len(self)))

    def _template(self, rank: int) -> Job:
        templates = self._templates
        if self._columns:
            job = templates[rank]
            if self._counts is not None:
                job.silent_errors = self._counts[rank]
            return job
        return templates[rank].fresh_copy(rank, None if self._counts is None else self._counts[rank])

    def column(self, name: str) -> np.ndarray:
        """One field of every job in rank order, read-only: shape ``(n,)``.

        Float seconds for ``submitted_at``, ``runtime`` and ``walltime``; int64 for ``job_id``, ``size``,
        ``partition_size`` and ``user_id``. Read from an SWF log's columns without making a job; a list's jobs are read once.

        Raises:
            ValueError, AttributeError: not a field of a job (an SWF log's columns, a list's jobs).
        """
        if self._columns:
            return self._templates.column(name)
        kind = float if name in ("submitted_at", "runtime", "walltime") else np.int64
        return np.fromiter((getattr(job, name) for job in self._templates), dtype=kind, count=len(self._templates))

    def submit_pieces(self) -> Callable[[], Iterator[tuple[int, np.ndarray]]] | None:
        """A reader of the submit times in rank order a chunk at a time (``(first rank, float (m,))`` per chunk), or None.

        None unless the jobs are an SWF log's columns (:class:`~torus_sim.inputs.workload.jobs.JobColumns`): a list's jobs
        are read whole. Each call of the reader starts from rank 0.
        """
        if not self._columns:
            return None
        return lambda: self._templates.pieces("submitted_at")

    def values(self, name: str) -> list:
        """One field of every job in rank order as a Python list (a small batch's checks without numpy)."""
        if self._columns:
            return self._templates.column(name).tolist()
        return [getattr(job, name) for job in self._templates]

    def first_duplicate_id(self) -> int | None:
        """A job id two jobs share, or None: a list's first repeated in rank order, an SWF log's smallest (its reader refuses them first)."""
        if self._columns:
            if self._templates.unique_ids:  # the SWF reader refused a repeated id: no 80 MB sort of a 10M-job log
                return None
            ordered = np.sort(self._templates.column("job_id"), kind="stable")
            repeated = np.flatnonzero(ordered[1:] == ordered[:-1])
            return int(ordered[repeated[0]]) if len(repeated) else None
        ids = self.values("job_id")
        if len(set(ids)) == len(ids):
            return None
        seen: set[int] = set()
        return next(job_id for job_id in ids if job_id in seen or seen.add(job_id))

    def partition_sizes(self) -> dict[int, int]:
        """Each partition size the jobs ask for -> the id of the first job (in rank order) that asks for it."""
        if self._columns:  # a chunk at a time (a 10-million-job log's whole columns and sort were ~300 MB)
            found = {}
            pieces = zip(self._templates.pieces("partition_size"), self._templates.pieces("job_id"), strict=True)
            for (_, sizes), (_, job_ids) in pieces:
                distinct, first = np.unique(sizes, return_index=True)
                for size, index in zip(distinct.tolist(), first.tolist(), strict=True):
                    found.setdefault(size, int(job_ids[index]))
            return dict(sorted(found.items()))
        found = {}
        for job in self._templates:
            found.setdefault(job.partition_size, job.job_id)
        return found

    def configure(self, job_class: type | None = None, prepare: Callable[[Job], None] | None = None) -> None:
        """Set :attr:`job_class` and :attr:`prepare` (None: unchanged), applied to the jobs already made too."""
        if job_class is not None:
            self.job_class = job_class
            for job in self.live.values():
                job.__class__ = job_class
        if prepare is not None:
            self.prepare = prepare
            for job in self.live.values():
                prepare(job)

    def make(self, rank: int) -> Job:
        """The engine's job of rank ``rank``, made now (at its arrival when streamed) and held in :attr:`live`."""
        job = self._template(rank)
        if self.job_class is not Job:
            job.__class__ = self.job_class
        if self.prepare is not None:
            self.prepare(job)
        self.live[job.job_id] = job
        return job

    def arrived(self, ranks: Sequence[int]) -> list[Job]:
        """The jobs of ``ranks`` as they arrive: made now when streamed, the batch's own jobs otherwise."""
        if self.streamed:
            return [self.make(rank) for rank in ranks]
        batch = self._batch
        return [batch[rank] for rank in ranks]

    def completed(self, job: Job) -> None:
        """``job`` completed (its row is in the record): a streamed run lets it go."""
        if self.streamed:
            del self.live[job.job_id]

    def owns(self, job) -> bool:
        """``job`` is one of this run's live jobs (not a copy a policy made, not another run's)."""
        return isinstance(job, Job) and self.live.get(job.job_id) is job
