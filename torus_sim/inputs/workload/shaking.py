"""Input shaking: every job's submit time moved by a small random amount, to see what of a result is chance.

A replay of a log is sensitive to its exact input: a job submitted a few seconds later can find the machine in
another state, and the schedule after it can part from the first one (Tsafrir and Feitelson's instability). Tsafrir,
Ouaknine and Feitelson's *shaking* replays the log several times under small random perturbations of its input and
reads the spread: an effect that survives the shaking is the scheduler's, one that does not is the input's chance.
``shake = SECONDS`` in a scenario's ``[workload]`` moves each job's submission by an independent uniform draw in
``[-SECONDS, +SECONDS]`` (never before 0), drawn from the run's ``seed``; the jobs are then in their new submission
order. Nothing else of a job moves (its run time, its request, its size), and its logged schedule, read by job id,
stays as logged: a replay held against its log compares the waits from the shaken submissions.

References:
    Tsafrir, Ouaknine, Feitelson, "Reducing performance evaluation sensitivity and variability by input shaking",
    MASCOTS 2007; Tsafrir, Feitelson, "Instability in parallel job scheduling simulation: the role of workload
    flurries", IPDPS 2006.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from torus_sim.core.disk_tables import SpillFolder, TableSnapshot
from torus_sim.core.errors import ConfigurationError
from torus_sim.inputs.workload.jobs import JobColumns, Workload

__all__ = ["BATCH_REFUSED", "PIECE_ROWS", "SHAKE_STREAM", "shaken"]

SHAKE_STREAM = 0x5348414B
"""The second word of the shaking's random stream (``numpy.random.default_rng([seed, SHAKE_STREAM])``): the run's seed
draws it, apart from every other draw of that seed."""

BATCH_REFUSED = "shake moves submit times: a batch workload is released at once (use an online workload)"
"""The sentence a shaken batch workload is refused with."""

PIECE_ROWS = 1 << 16
"""Jobs shaken at a time (65,536): the jobs held at once are a piece and those within twice the shake of its end."""


def shaken(workload: Workload, seconds: float, seed: int) -> Workload:
    """The workload with each job's submit time moved by a uniform draw in ``[-seconds, +seconds]``, clipped at 0.

    The jobs are read and written :data:`PIECE_ROWS` at a time: a job moves by at most ``seconds``, so once a piece is
    read, every job moved to before its last submit time less ``seconds`` is in its final place and is written out
    (to the temporary folder past :data:`~torus_sim.core.disk_tables.SPILL_ROWS` rows, as a log's cleaned jobs are):
    a shaken log takes memory flat in its length.

    Args:
        workload: an online workload (its jobs in submission order: submit time, then job id).
        seconds: the largest move, seconds (> 0, finite).
        seed: the run's seed: the draws are ``numpy.random.default_rng([seed, SHAKE_STREAM]).uniform`` in job order, so
            one seed always shakes a log alike.

    Returns:
        A new :class:`~torus_sim.inputs.workload.jobs.Workload` (the other fields as they were) whose jobs are
        :class:`~torus_sim.inputs.workload.jobs.JobColumns` in the new submission order (submit time, then job id),
        each job's rank its new row.

    Raises:
        ConfigurationError: a batch workload (released at once: nothing to shake), ``seconds`` not a positive finite
            number.

    References:
        Tsafrir, Ouaknine, Feitelson, MASCOTS 2007 (input shaking).
    """
    if workload.kind != "online":
        raise ConfigurationError(BATCH_REFUSED)
    if not (isinstance(seconds, (int, float)) and math.isfinite(seconds) and seconds > 0):
        raise ConfigurationError(f"shake must be positive seconds, got {seconds!r}")
    draws = np.random.default_rng([int(seed), SHAKE_STREAM])
    table = JobColumns.empty_table(SpillFolder(), "shaken")
    held = None  # the jobs read and moved, not yet written: sorted by (moved submit time, job id)
    for piece in _pieces(workload.jobs):
        moved = np.maximum(piece["submitted_at"] + draws.uniform(-seconds, seconds, len(piece["job_id"])), 0.0)
        last = float(piece["submitted_at"][-1])  # every later job's submission, moved, is at least last - seconds
        piece["submitted_at"] = moved
        held = piece if held is None else {name: np.concatenate((held[name], piece[name])) for name in piece}
        order = np.lexsort((held["job_id"], held["submitted_at"]))
        held = {name: column[order] for name, column in held.items()}
        done = int(np.searchsorted(held["submitted_at"], last - seconds, side="left"))
        table.extend({name: column[:done] for name, column in held.items()})
        held = {name: column[done:] for name, column in held.items()}
    if held is not None:
        table.extend(held)
    snapshot = table.snapshot()
    unique = isinstance(workload.jobs, JobColumns) and workload.jobs.unique_ids
    return replace(workload, jobs=JobColumns.stored(TableSnapshot(snapshot.table, len(snapshot), shared=True), unique))


def _pieces(jobs):
    """The jobs' columns (:attr:`JobColumns.COLUMNS`), :data:`PIECE_ROWS` jobs at a time, in their order."""
    if not isinstance(jobs, JobColumns):  # a list of jobs, in memory already: as columns
        jobs = JobColumns(*([getattr(job, name) for job in jobs] for name in JobColumns.COLUMNS))
    readers = [jobs.pieces(name, PIECE_ROWS) for name in JobColumns.COLUMNS]
    for columns in zip(*readers, strict=True):
        yield {name: np.asarray(column) for name, (_, column) in zip(JobColumns.COLUMNS, columns, strict=True)}
