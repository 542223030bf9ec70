"""Every metric family of one simulation, computed from its record wherever the inputs exist.

* BGL-FAULT (§3.4, §6.1): wait, response, bounded slowdown, ω_util / ω_unused / ω_lost, failures,
  kills, lost work, migrations (:func:`torus_sim.metrics.summary.summarize`): always.
* PV-EASY (§5.1, Tables 1-2, 4-11): MBS, MWBS, total / useful / wasted load, preemptions, MKT, RTW
  (:func:`torus_sim.metrics.online.online_summary`): always; strict fairness (blocked and delayed
  jobs) and reservation violations only when the pass record has the head's columns (fairness
  recording, on by default for online workloads).
* RIGID / MOLDABLE: the makespan (``makespan``: the last end, the first submission being 0) and the
  silent errors found; the ratio to the lower bound needs the failure scenario and is computed by
  the runner (:func:`torus_sim.experiments.runner.run`).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from torus_sim.metrics.online import (
    DEFAULT_FAIRNESS_READING,
    bounded_slowdown,
    fairness_of_blocked,
    fairness_of_jobs,
    online_summary,
)
from torus_sim.metrics.summary import DEFAULT_GAMMA, summarize

__all__ = ["ONLINE_COLUMNS", "SubmissionOrderColumns", "online_columns", "summarize_record"]

_SHARED = ("jobs", "makespan")  # the same number in both families when the first job arrives at 0


ONLINE_COLUMNS = ["job_id", "submitted_at", "first_started_at", "finished_at", "runtime", "size", "time_sum", "preemptions"]
"""The job columns PV-EASY's summary reads (:func:`~torus_sim.metrics.online.job_columns` and
:func:`~torus_sim.metrics.online.online_summary`): its per-job columns are made of these only (8 of 18 columns)."""


def summarize_record(
    record,
    workload=None,
    gamma: float = DEFAULT_GAMMA,
    form: str = "standard",
    fairness_reading: str = DEFAULT_FAIRNESS_READING,
    min_delay: float = 0.0,
) -> dict:
    """The summary of one simulation: every metric family whose inputs the record holds.

    Args:
        record: a :class:`~torus_sim.engine.record.SimulationRecord` (with its tables).
        workload: the run's workload (unused today; kept for families that need the inputs).
        gamma: Γ of BGL-FAULT's bounded slowdown, seconds.
        form: BGL-FAULT's bounded-slowdown form (``standard`` or ``printed``).
        fairness_reading: PV-EASY's reading of strict fairness and violations
            (:func:`torus_sim.metrics.online.fairness_table`).
        min_delay: the least delay counted in Tables 1-2, seconds.

    Returns:
        BGL-FAULT's keys (``avg_bounded_slowdown``, ``omega_util``, ...; ``makespan`` is the span T),
        PV-EASY's (``mbs``, ``mwbs``, ``wasted_load``, ``delayed_jobs``, ``violations``, ...),
        ``silent_errors`` and ``preemptions``.

    References:
        BGL-FAULT §3.4, §6.1; PV-EASY §5.1; RIGID §3.3; MOLDABLE §5.1.
    """
    summary = summarize(record, gamma, form)
    if record.count("jobs"):
        table = online_columns(record, fairness_reading)  # numpy columns, no DataFrame
        online = online_summary(table, record.capacity_total, min_delay)
        if not record.has_column("capacity", "head_job"):
            for key in (
                "blocked_jobs",
                "delayed_jobs",
                "mean_delay_min",
                "max_delay_h",
                "violations",
                "mean_dtr_min",
                "max_dtr_h",
                "mean_si",
                "max_si",
                "violation_mean_parallelism",
            ):
                online.pop(key)
        summary.update({key: value for key, value in online.items() if key not in _SHARED})
    summary["silent_errors"] = int(record.counters.get("silent_errors", 0))
    summary["preemptions"] = int(record.counters.get("preemptions", 0))
    return summary


def online_columns(record, fairness_reading: str = DEFAULT_FAIRNESS_READING) -> SubmissionOrderColumns:
    """PV-EASY's per-job columns of a run (:func:`~torus_sim.metrics.online.job_columns`), read from its record.

    The jobs in submission order (then job id), the :data:`ONLINE_COLUMNS` and the fairness columns
    (``blocked``, ``fair_start_at``, ``violated_at``: from the pass table's head columns when recorded), ``wait``
    and ``bounded_slowdown``; the columns :func:`~torus_sim.metrics.online.job_table` has, without a DataFrame.

    Args:
        record: a :class:`~torus_sim.engine.record.SimulationRecord` with at least one job.
        fairness_reading: PV-EASY's reading of strict fairness (:func:`~torus_sim.metrics.online.fairness_table`).

    Returns:
        Column name -> numpy array, shape ``(jobs,)`` each (times in seconds): a mapping that reads each column
        when asked (:class:`SubmissionOrderColumns`).

    Raises:
        ValueError: an unknown fairness reading.

    References:
        PV-EASY §5.1, §3.1-3.2.
    """
    fairness = record.has_column("capacity", "head_job")
    passes = record.reader("capacity") if fairness else None  # its columns read one at a time, when asked
    return SubmissionOrderColumns(record, fairness_of_blocked(passes, fairness_reading))


class SubmissionOrderColumns(Mapping):
    """PV-EASY's per-job columns of a record in submission order (then job id), each read when asked and not kept.

    The order of ``sort_values(["submitted_at", "job_id"], kind="stable")`` on the record's rows (``np.lexsort`` is
    stable too). A column is the record's (:data:`ONLINE_COLUMNS`, taken in that order: from disk for a long
    record) or made from them (``wait``, ``bounded_slowdown``, and ``blocked``, ``fair_start_at``,
    ``violated_at`` from the blocked jobs' fairness): the same values as
    :func:`~torus_sim.metrics.online.job_columns`'s, but only the order (8 bytes a job) is held between reads.

    Args:
        record: a :class:`~torus_sim.engine.record.SimulationRecord`.
        heads: :func:`~torus_sim.metrics.online.fairness_of_blocked`'s result for the record's passes, or None.

    References:
        PV-EASY §5.1 (Eq. 1), §3.1-3.2.
    """

    _MADE = ("blocked", "fair_start_at", "violated_at", "wait", "bounded_slowdown")

    def __init__(self, record, heads) -> None:
        self._record, self._heads = record, heads
        job_id = record.column("jobs", "job_id")
        if len(job_id) and -(2**31) <= job_id.min() and job_id.max() < 2**31:
            job_id = job_id.astype(np.int32)  # the same order from half the key (a 10-million-job record: 40 MB less)
        self._order = np.lexsort((job_id, record.column("jobs", "submitted_at")))
        del job_id
        self.rows = len(self._order)

    def piece(self, name: str, first: int, last: int) -> np.ndarray:
        """Rows ``first`` to ``last - 1`` (in submission order) of one column: only they are read."""
        order = self._order[first:last]
        if name in ONLINE_COLUMNS:
            return self._record.take("jobs", name, order)
        if name in ("blocked", "fair_start_at", "violated_at"):
            job_id = self._record.take("jobs", "job_id", order)
            return fairness_of_jobs(job_id, self._heads)[self._MADE.index(name)]
        if name == "wait":
            finished, submitted = self.piece("finished_at", first, last), self.piece("submitted_at", first, last)
            return finished - submitted - self.piece("runtime", first, last)
        if name == "bounded_slowdown":
            return bounded_slowdown(self.piece("wait", first, last), self.piece("runtime", first, last))
        raise KeyError(name)

    def __len__(self) -> int:
        return len(ONLINE_COLUMNS) + len(self._MADE)

    def __iter__(self):
        return iter([*ONLINE_COLUMNS, *self._MADE])

    def __getitem__(self, name: str) -> np.ndarray:
        """One whole column (:meth:`piece` of every row)."""
        return self.piece(name, 0, self.rows)
