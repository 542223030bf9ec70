"""The schedule an SWF log records: when each job really started on the machine that produced the log.

Every SWF job line gives its submit time (field 2), its wait (field 3) and its run time (field 4): the real
start is submit + wait, the real end start + run time. A line without a wait (``-1``: the NASA iPSC/860 log
gives none, its submit times are start times) or cancelled before it started (status 5 with no run time)
has no place in the real schedule; :class:`LoggedSchedule` keeps every line and says which it can place.

References:
    Feitelson, Tsafrir, Krakov, "Experience with using the Parallel Workloads Archive", JPDC 74(10), 2014
    (the fields; the logs' notes name their schedulers: CTC-SP2 and KTH-SP2 ran EASY backfilling);
    https://www.cs.huji.ac.il/labs/parallel/workload/swf.html (status 5: cancelled).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from torus_sim.core.errors import ConfigurationError
from torus_sim.core.files import recorded_file
from torus_sim.inputs.datasets import fetch, is_reference
from torus_sim.inputs.workload.swf import SwfTrace, read_swf

__all__ = [
    "CANCELLED",
    "NOT_PLACED",
    "INFERRED",
    "SCHEDULE_FIELDS",
    "STARVED_MIN_IDLE",
    "STARVED_MIN_LENGTH",
    "LoggedSchedule",
    "busy_peaks",
    "check_own_load",
    "idle_windows",
    "logged_schedule",
    "own_schedule",
    "replayed_file",
    "starved_spans",
    "workload_log",
]

SCHEDULE_FIELDS = (
    "job_id",
    "submit_time",
    "wait_time",
    "run_time",
    "allocated_processors",
    "requested_processors",
    "status",
)
"""The SWF fields :func:`logged_schedule` reads."""

CANCELLED = 5
"""SWF status of a cancelled job."""

NOT_PLACED = ("wait unknown", "cancelled before start", "run time unknown")
"""Why the log cannot place a job line, in the order the reasons are tried."""


@dataclass(frozen=True)
class LoggedSchedule:
    """The real schedule of an SWF log, one entry per job line (file order).

    Attributes:
        path: the log's file name as the run names it.
        sha256: the file's SHA-256.
        job_id: int ``(n,)``, SWF field 1.
        submitted_at: float ``(n,)``, seconds from the log's start (field 2).
        wait: float ``(n,)``, seconds (field 3; -1 unknown).
        run_time: float ``(n,)``, seconds (field 4; -1 unknown).
        processors: int ``(n,)``, processors allocated (field 5), else requested (field 8); -1 unknown.
        status: int ``(n,)``, field 11 (1 completed, 0 failed, 5 cancelled, -1 unknown).
        machine: processors of the machine (header ``MaxProcs``, else ``MaxNodes``; None when neither).
        unix_start_time: the header's ``UnixStartTime`` (seconds since 1970), None when absent.
        time_zone: the header's ``TimeZoneString`` (``US/Eastern``), None when absent.
        scheduler_notes: the header's ``Note`` lines that name a scheduler (``uses the EASY scheduler``).
    """

    path: str
    sha256: str
    job_id: np.ndarray
    submitted_at: np.ndarray
    wait: np.ndarray
    run_time: np.ndarray
    processors: np.ndarray
    status: np.ndarray
    machine: int | None
    unix_start_time: int | None
    time_zone: str | None
    scheduler_notes: tuple[str, ...]

    def not_placed(self) -> np.ndarray:
        """Why each line cannot be placed.

        Returns:
            int ``(n,)``: an index into :data:`NOT_PLACED` (the first reason that holds), or -1 for a line the log places.
        """
        reason = np.full(len(self.job_id), -1, dtype=np.int64)
        for index, mask in enumerate((self.wait < 0, (self.status == CANCELLED) & (self.run_time <= 0), self.run_time < 0)):
            reason[(reason < 0) & mask] = index
        return reason

    @property
    def started_at(self) -> np.ndarray:
        """Real start, seconds from the log's start: submit + wait (meaningless where :meth:`not_placed` >= 0)."""
        return self.submitted_at + self.wait


def logged_schedule(trace: SwfTrace, name: str | None = None) -> LoggedSchedule:
    """The schedule an SWF trace records (every job line, placed or not).

    Args:
        trace: the parsed log (:func:`~torus_sim.inputs.workload.swf.read_swf`).
        name: the log's name for the outputs (the file's name when None).

    Returns:
        A :class:`LoggedSchedule`.

    Raises:
        WorkloadFormatError: a malformed ``MaxProcs``, ``MaxNodes`` or ``UnixStartTime`` header.
    """
    allocated = trace.column("allocated_processors")
    requested = trace.column("requested_processors")
    notes = tuple(
        line.strip() for line in trace.header.get("Note", "").splitlines() if "schedul" in line.lower() and line.strip()
    )
    zone = trace.header.get("TimeZoneString", "").strip() or None
    return LoggedSchedule(
        path=name or trace.path.name,
        sha256=trace.sha256,
        job_id=trace.column("job_id").astype(np.int64),
        submitted_at=trace.column("submit_time").copy(),
        wait=trace.column("wait_time").copy(),
        run_time=trace.column("run_time").copy(),
        processors=np.where(allocated > 0, allocated, requested).astype(np.int64),
        status=trace.column("status").astype(np.int64),
        machine=trace.header_int("MaxProcs") or trace.header_int("MaxNodes"),
        unix_start_time=trace.header_int("UnixStartTime"),
        time_zone=zone,
        scheduler_notes=notes,
    )


def idle_windows(schedule: LoggedSchedule, min_length: float = 3600.0) -> np.ndarray:
    """The spans in which the logged machine ran nothing while jobs waited: the windows a log itself records.

    Every log of the archive has hours in which no job ran although jobs were waiting (CTC-SP2 ran nothing for
    its first 90 hours; 1.3-2.5% of CTC-SP2's, SDSC-SP2's and HPC2N's spans): maintenance, a broken machine or a
    stopped scheduler, none of which a replay knows. Only the lines the log places count (:meth:`LoggedSchedule.not_placed`):
    a job runs from its logged start for its logged run time, and waits from its submission to its start.

    Args:
        schedule: the log's schedule (:func:`logged_schedule`).
        min_length: the shortest span kept, seconds (> 0): shorter idle gaps are a scheduler's cycle or chance.

    Returns:
        float64 ``(W, 2)``: each span's ``(start, end)``, seconds from the log's start, in time order.

    Raises:
        ValueError: ``min_length`` not positive.
    """
    if not min_length > 0:
        raise ValueError(f"the shortest idle span must be positive seconds, got {min_length!r}")
    placed = schedule.not_placed() < 0
    submitted = schedule.submitted_at[placed]
    started = schedule.started_at[placed]
    ended = started + schedule.run_time[placed]
    ran = ended > started
    waited = started > submitted
    # +1 / -1 steps of the running and the waiting counts; at one instant, the steps up come first (a job that
    # starts as another ends keeps the machine busy)
    times = np.concatenate([started[ran], ended[ran], submitted[waited], started[waited]])
    running = np.concatenate([np.ones(ran.sum()), -np.ones(ran.sum()), np.zeros(2 * waited.sum())])
    waiting = np.concatenate([np.zeros(2 * ran.sum()), np.ones(waited.sum()), -np.ones(waited.sum())])
    order = np.lexsort((-(running + waiting), times))
    times, running, waiting = times[order], np.cumsum(running[order]), np.cumsum(waiting[order])
    if not len(times):
        return np.empty((0, 2))
    last = np.r_[times[1:] != times[:-1], True]  # the counts after every step of an instant
    times, idle = times[last], (running[last] == 0) & (waiting[last] > 0)
    # a span starts where idle turns on and ends at the next instant where it turns off
    change = np.flatnonzero(np.diff(np.r_[0, idle.astype(np.int8)]))
    starts = times[change[::2]]
    ends = times[change[1::2]] if len(change) > 1 else np.empty(0)
    spans = np.column_stack([starts[: len(ends)], ends]) if len(ends) else np.empty((0, 2))
    return spans[spans[:, 1] - spans[:, 0] >= min_length] if len(spans) else spans


def busy_peaks(schedule: LoggedSchedule, period: float) -> np.ndarray:
    """The most processors the logged schedule held busy at once in each period: what the machine could really use.

    A cancelled line (status 5) is left out: its logged run time was mostly never spent on the machine (RICC's and
    SDSC-SP2's cancelled lines, replayed as logged, fill the machine past its size). Only the lines the log places
    count (:meth:`LoggedSchedule.not_placed`); a job holds its processors from its logged start for its logged run
    time; a job that starts as another ends does not add to it.

    Args:
        schedule: the log's schedule (:func:`logged_schedule`).
        period: the length of each period, seconds (> 0), from the log's start (time 0).

    Returns:
        int64 ``(K,)``: period k's peak (``[k * period, (k + 1) * period)``), 0 where nothing ran; K covers the last end.

    Raises:
        ValueError: ``period`` not positive.
    """
    if not period > 0:
        raise ValueError(f"the period must be positive seconds, got {period!r}")
    kept = (schedule.not_placed() < 0) & (schedule.status != CANCELLED)
    started = schedule.started_at[kept]
    ended = started + schedule.run_time[kept]
    ran = ended > started
    if not ran.any():
        return np.zeros(0, dtype=np.int64)
    times = np.concatenate([started[ran], ended[ran]])
    steps = np.concatenate([schedule.processors[kept][ran], -schedule.processors[kept][ran]])
    order = np.lexsort((steps, times))  # at one instant the ends come first
    times, busy = times[order], np.cumsum(steps[order])
    which = np.floor(times / period).astype(np.int64)
    peaks = np.zeros(int(which.max()) + 1, dtype=np.int64)
    np.maximum.at(peaks, which, busy)
    # a period in which nothing starts or ends keeps the busy count it began with
    begun = np.searchsorted(times, np.arange(len(peaks)) * period, side="left") - 1
    carried = np.where(begun >= 0, busy[np.maximum(begun, 0)], 0)
    return np.maximum(peaks, carried)


STARVED_MIN_LENGTH = 3600.0
"""The shortest starved span kept, seconds, unless ``effective_size_starved_min_length`` says."""

STARVED_MIN_IDLE = 0.05
"""The least share of the machine idle through a starved span, unless ``effective_size_starved_min_idle`` says."""


def starved_spans(
    schedule: LoggedSchedule,
    min_length: float = STARVED_MIN_LENGTH,
    min_idle: float = STARVED_MIN_IDLE,
    machine: int | None = None,
) -> np.ndarray:
    """The spans in which the logged machine left idle processors that its oldest waiting job fitted: lost capacity.

    No scheduler that starts its jobs in submission order with backfilling (FCFS, EASY, conservative) leaves its oldest
    waiting job waiting while the idle processors would hold it, unless part of the machine was not there to use:
    nodes down or drained, held for interactive work or a reservation, which the log does not record. (A priority
    other than submission order, a per-user limit or node constraints leave such spans too: on HPC2N, which ran Maui
    with fair share and a per-user cap, they fill 90% of the span; on CTC-SP2, which ran EASY, 17%.) A span is kept where
    at every instant of it the oldest waiting job asks at most the idle processors and at least ``min_idle`` of the
    machine stands idle, for at least ``min_length`` seconds; its busiest instant is what the machine held, so the
    span's size. A cancelled line (status 5) is left out, as in :func:`busy_peaks`, from both the busy and the waiting
    (its logged run time was mostly never spent); only the lines the log places count
    (:meth:`LoggedSchedule.not_placed`), and of those the ones whose processors it gives.

    Args:
        schedule: the log's schedule (:func:`logged_schedule`), with its machine's processors (``MaxProcs``).
        min_length: the shortest span kept, seconds (> 0): shorter ones are a dispatch cycle or chance.
        min_idle: the least share of the machine idle throughout, in (0, 1): a few idle processors are fragments.
        machine: the machine's processors where the log gives none (its ``MaxProcs``, else ``MaxNodes``, comes first).

    Returns:
        float64 ``(S, 3)``: each span's ``(start, end, busiest)``, seconds from the log's start and the most
        processors busy at once in it, in time order.

    Raises:
        ValueError: ``min_length`` not positive, ``min_idle`` not in (0, 1), or no machine size (the log's or ``machine``).

    References:
        Feitelson, Tsafrir, Krakov, "Experience with using the Parallel Workloads Archive", JPDC 74(10), 2014 (a log's
        MaxProcs is not always what was usable); Lifka, "The ANL/IBM SP scheduling system", JSSPP 1995 (EASY starts
        the oldest job that fits).
    """
    if not min_length > 0:
        raise ValueError(f"the shortest starved span must be positive seconds, got {min_length!r}")
    if not 0 < min_idle < 1:
        raise ValueError(f"the idle share of a starved span must be in (0, 1), got {min_idle!r}")
    machine = schedule.machine or machine
    if not machine:
        raise ValueError(f"{schedule.path} gives no machine size (MaxProcs or MaxNodes): idle processors are not known")
    kept = (schedule.not_placed() < 0) & (schedule.status != CANCELLED) & (schedule.processors >= 1)
    submitted = schedule.submitted_at[kept]
    started = schedule.started_at[kept]
    ended = started + schedule.run_time[kept]
    processors = schedule.processors[kept]
    ran = ended > started
    times = np.concatenate([started[ran], ended[ran], submitted])
    steps = np.concatenate([processors[ran], -processors[ran], np.zeros(len(submitted), dtype=processors.dtype)])
    order = np.lexsort((steps, times))  # at one instant the ends come first
    times, busy = times[order], np.cumsum(steps[order])
    if not len(times):
        return np.empty((0, 3))
    last = np.r_[times[1:] != times[:-1], True]  # the state after every step of an instant
    times, busy = times[last], busy[last]
    # the oldest job waiting at t: the first in submission order whose start is after t (the running maximum of the
    # starts, in submission order, passes t there), if it was submitted by t
    by_submission = np.lexsort((np.arange(len(submitted)), submitted))
    latest_start = np.maximum.accumulate(started[by_submission])
    oldest = np.searchsorted(latest_start, times, side="right")
    waiting = oldest < len(submitted)
    head = by_submission[np.minimum(oldest, len(submitted) - 1)]
    idle = machine - busy
    starved = waiting & (submitted[head] <= times) & (processors[head] <= idle) & (idle >= min_idle * machine)
    # a span starts where starved turns on and ends at the next instant where it turns off; its busiest is the most
    # busy over the instants it holds
    change = np.flatnonzero(np.diff(np.r_[0, starved.astype(np.int8), 0]))
    first, stop = change[::2], change[1::2]
    ends_at = times[np.minimum(stop, len(times) - 1)]
    kept_spans = (stop < len(times)) & (ends_at - times[first] >= min_length)
    if not kept_spans.any():
        return np.empty((0, 3))
    first, stop = first[kept_spans], stop[kept_spans]
    busiest = np.maximum.reduceat(busy, np.column_stack([first, stop]).ravel())[::2]  # over [first, stop)
    return np.column_stack([times[first], times[stop], busiest]).astype(np.float64)


INFERRED = "inferred"
"""The value of a setting read from the replayed log's own schedule (``maintenance``, ``effective_size``)."""


def own_schedule(setting: str, log, load_scale: float, value: str = f'"{INFERRED}"') -> LoggedSchedule:
    """The replayed log's own schedule, for a setting inferred from it (``setting = "inferred"``).

    Args:
        setting: the scenario field, for the sentences (``maintenance``, ``effective_size``).
        log: the replayed SWF log's trace with :data:`SCHEDULE_FIELDS` (:func:`workload_log`), or None.
        load_scale: the run's load scale c: the logged schedule is the log's own load's, so it must be 1.
        value: the setting's value as the sentences write it (``"inferred"``, ``true``).

    Returns:
        The :class:`LoggedSchedule` (:func:`logged_schedule`).

    Raises:
        ConfigurationError: a load scale other than 1, or no log.
    """
    if load_scale != 1.0:
        raise ConfigurationError(
            f"{setting} = {value} reads the log's own schedule, at its own load: run it at c = 1 (the scenario has "
            f"c = {load_scale:g})"
        )
    if log is None:
        raise ConfigurationError(f"{setting} = {value} needs the replayed SWF log")
    return logged_schedule(log)


def replayed_file(workload: dict, why: str) -> Path:
    """The file a finished run's workload was read from, on this machine: the log its replay can be held against.

    Args:
        workload: the run's inputs' ``workload`` entry (``RunResult.inputs["workload"]``: ``kind``, ``path``).
        why: what needs the log, the refusal's first words (``"--against-log compares with the waits an SWF log
            records"``).

    Returns:
        The file (a registered log by name: its local copy, :func:`~torus_sim.inputs.datasets.fetch`; a bundled one: its
        path inside the package).

    Raises:
        ConfigurationError: the workload is no online log file (a batch, a generated workload, a file no longer there).
    """
    path = workload.get("path")
    if is_reference(path):  # a registered log by name: its local copy
        path = str(fetch(path))
    elif path:
        path = str(recorded_file(path))  # a bundled log is recorded by its path inside the package
    if workload.get("kind") != "online" or not path or not Path(path).is_file():
        raise ConfigurationError(f"{why}; this run's workload ({workload.get('path') or workload.get('kind')}) is not a log file")
    return Path(path)


def check_own_load(load_scale: float, offered_load: float | None, why: str) -> None:
    """Refuse a run that does not replay its log at the log's own load (load scale c = 1, no offered load).

    Args:
        load_scale: the run's load scale c.
        offered_load: the run's offered load (None: not asked).
        why: what needs the log's own load, the refusal's first words.

    Raises:
        ConfigurationError: a load scale other than 1, or an offered load.
    """
    if load_scale != 1.0 or offered_load is not None:
        raise ConfigurationError(
            f"{why}: run it at c = 1 (the scenario has {'offered_load' if offered_load is not None else f'c = {load_scale:g}'})"
        )


def workload_log(workload, fields: tuple[str, ...], what: str) -> SwfTrace:
    """The SWF log a run's workload came from, for what the jobs do not carry (queues, groups, the schedule).

    The trace read with the jobs where it holds ``fields`` (a source given them as ``log_fields``: taken, so the log is
    read once); else the log read again.

    Args:
        workload: the run's :class:`~torus_sim.inputs.workload.jobs.Workload`.
        fields: the SWF fields wanted (:data:`~torus_sim.inputs.workload.swf.SWF_FIELDS` names).
        what: what reads it, for the messages (``"the queue factor"``).

    Returns:
        The trace of those fields (:func:`~torus_sim.inputs.workload.swf.read_swf`).

    Raises:
        ConfigurationError: a workload that is not an online SWF log file, or a file whose bytes changed since the run
            read it (its SHA-256).
    """
    path = Path(str(workload.source))
    if workload.kind != "online" or not workload.sha256 or not path.is_file():
        raise ConfigurationError(f"{what} reads the SWF log; this workload ({workload.source}) is not a log file")
    kept = workload.log
    if kept is not None and set(fields) <= set(kept.fields):  # read with the jobs: taken, not read again
        workload.log = None
        return kept
    trace = read_swf(path, fields=fields)
    if trace.sha256 != workload.sha256:
        raise ConfigurationError(f"{path} changed since the run read it (SHA-256 {workload.sha256}, now {trace.sha256})")
    return trace
