"""A run's effective machine size over time: from a file, or inferred from the schedule the replayed log records.

``effective_size = "FILE"`` reads one span per line, ``start,end,nodes``: seconds of the workload's clock (an SWF
log's submit times: seconds from its start) and the nodes usable from start to end (processors of a cluster,
supernodes of a torus); ``#`` comments and blank lines skipped, an optional ``start,end,nodes`` header.
``effective_size = "inferred"`` cuts the log into periods of ``effective_size_period`` seconds (30 days unless set)
and, where a period's peak of busy processors in the logged schedule
(:func:`~torus_sim.inputs.workload.logged.busy_peaks`) stays below the machine's size, takes that peak as the
period's effective size (as a share of the machine when the run's nodes are not the log's processors): SDSC-SP2's
first seven months give 115 of 128. Like inferred maintenance windows, an inferred size reads the log's answer:
a report says which figures used it. ``effective_size_starved = true`` adds the spans in which the log's oldest waiting
job fitted the idle processors yet waited (:func:`~torus_sim.inputs.workload.logged.starved_spans`), each at its
busiest (:func:`starved_size_spans`), beside any other effective size (:func:`lowest_spans`: the smaller of the two
where both say). The engine holds the other nodes out (:func:`~torus_sim.engine.effective_size.size_reservations`).

References:
    Feitelson, Tsafrir, Krakov, "Experience with using the Parallel Workloads Archive", JPDC 74(10), 2014 (a log's
    MaxProcs is not always what was usable); the SWF definition's ``MaxProcs`` header.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from torus_sim.core.errors import ConfigurationError, EffectiveSizeFormatError
from torus_sim.core.files import input_lines
from torus_sim.inputs.workload.logged import (
    INFERRED,
    STARVED_MIN_IDLE,
    STARVED_MIN_LENGTH,
    busy_peaks,
    own_schedule,
    starved_spans,
)

__all__ = [
    "INFERRED",
    "PERIOD",
    "STARVED_MIN_IDLE",
    "STARVED_MIN_LENGTH",
    "effective_size_spans",
    "inferred_spans",
    "lowest_spans",
    "read_spans",
    "starved_size_spans",
]


PERIOD = 30 * 86_400.0
"""The length of the periods an inferred effective size is read over, seconds, unless ``effective_size_period`` says."""


def read_spans(path: str | Path) -> np.ndarray:
    """Read an effective-size file: one ``start,end,nodes`` per line (seconds of the workload's clock, a node count).

    Args:
        path: the file (plain or compressed).

    Returns:
        float64 ``(S, 3)``, in file order (the engine checks the counts against the machine and the overlaps).

    Raises:
        FileNotFoundError: no such file.
        EffectiveSizeFormatError: a line that is not three numbers with 0 <= start < end finite and a whole node
            count >= 1 (file and line named).
    """
    spans = []
    for number, line in enumerate(input_lines(path, "effective-size"), start=1):
        text = line.split("#", 1)[0].strip()
        if not text or (not spans and text.replace(" ", "").lower() == "start,end,nodes"):
            continue
        fields = [field.strip() for field in text.split(",")]
        if len(fields) != 3:
            raise EffectiveSizeFormatError(path, number, f"expected start,end,nodes (three numbers), got {text!r}")
        try:
            start, end, nodes = float(fields[0]), float(fields[1]), float(fields[2])
        except ValueError:
            raise EffectiveSizeFormatError(
                path, number, f"expected start,end in seconds and a node count, got {text!r}"
            ) from None
        if not (math.isfinite(start) and math.isfinite(end) and 0 <= start < end):
            raise EffectiveSizeFormatError(path, number, f"a span needs 0 <= start < end in finite seconds, got {text!r}")
        if not (nodes >= 1 and nodes == round(nodes)):
            raise EffectiveSizeFormatError(path, number, f"the nodes must be a whole number >= 1, got {fields[2]!r}")
        spans.append((start, end, nodes))
    return np.array(spans, dtype=np.float64).reshape(-1, 3)


def inferred_spans(schedule, capacity: int, period: float = PERIOD) -> np.ndarray:
    """The spans in which the logged schedule never used the whole machine: each period's peak, where below it.

    Args:
        schedule: the log's :class:`~torus_sim.inputs.workload.logged.LoggedSchedule`.
        capacity: the run's nodes (its processors on a cluster of the log's size).
        period: the periods' length, seconds (> 0).

    Returns:
        float64 ``(S, 3)``: ``(start, end, nodes)``, adjacent periods of one size merged; a period's nodes are
        ``floor(capacity * peak / machine)`` (the log's ``MaxProcs``, or the run's nodes without one), at least 1;
        periods at the machine's size (or over it: a log's lines may overlap) and periods in which nothing ran are
        left out.

    Raises:
        ValueError: ``period`` not positive.
    """
    peaks = busy_peaks(schedule, period)
    machine = schedule.machine or capacity
    spans: list[list[float]] = []
    for index, peak in enumerate(peaks.tolist()):
        if peak <= 0 or peak >= machine:
            continue
        nodes = max(1, math.floor(capacity * peak / machine))
        if nodes >= capacity:
            continue
        start = index * period
        if spans and spans[-1][1] == start and spans[-1][2] == nodes:
            spans[-1][1] = start + period
        else:
            spans.append([start, start + period, float(nodes)])
    return np.array(spans, dtype=np.float64).reshape(-1, 3)


def effective_size_spans(
    spec: str, log=None, load_scale: float = 1.0, capacity: int = 0, period: float | None = None
) -> np.ndarray:
    """The spans a scenario's ``effective_size`` names.

    Args:
        spec: ``"inferred"`` or a file's path.
        log: for ``inferred``, the replayed SWF log's trace with
            :data:`~torus_sim.inputs.workload.logged.SCHEDULE_FIELDS`; unused for a file.
        load_scale: the run's load scale c (``inferred`` needs 1: the logged schedule is the log's own load's).
        capacity: the run's nodes (``inferred``).
        period: the periods' length, seconds (:data:`PERIOD` when None); only with ``inferred``.

    Returns:
        float64 ``(S, 3)``: ``(start, end, nodes)`` spans.

    Raises:
        ConfigurationError: ``inferred`` at a load scale other than 1 or without the log, or ``period`` with a file.
        FileNotFoundError, EffectiveSizeFormatError: the file.
    """
    if spec != INFERRED:
        if period is not None:
            raise ConfigurationError('effective_size_period applies to effective_size = "inferred" only, not to a file')
        return read_spans(spec)
    return inferred_spans(own_schedule("effective_size", log, load_scale), capacity, PERIOD if period is None else period)


def starved_size_spans(
    schedule, capacity: int, min_length: float = STARVED_MIN_LENGTH, min_idle: float = STARVED_MIN_IDLE
) -> np.ndarray:
    """The starved spans of a logged schedule as effective-size spans of the run's machine: each at its busiest.

    Args:
        schedule: the log's :class:`~torus_sim.inputs.workload.logged.LoggedSchedule`.
        capacity: the run's nodes (its processors on a cluster of the log's size).
        min_length: the shortest span, seconds (:func:`~torus_sim.inputs.workload.logged.starved_spans`).
        min_idle: the least idle share of the machine through a span, in (0, 1).

    Returns:
        float64 ``(S, 3)``: ``(start, end, nodes)``; a span's nodes are ``floor(capacity * busiest / machine)``, at least
        1 (the log's ``MaxProcs``, or ``MaxNodes``, or the run's nodes without either); spans at the run's whole
        machine left out.

    Raises:
        ValueError: the settings (:func:`~torus_sim.inputs.workload.logged.starved_spans`).
    """
    machine = schedule.machine or capacity
    spans = starved_spans(schedule, min_length, min_idle, machine)
    spans[:, 2] = np.maximum(1, np.floor(capacity * spans[:, 2] / machine))
    return spans[spans[:, 2] < capacity]


def lowest_spans(capacity: int, *readings) -> np.ndarray:
    """Several effective sizes over time as one: at every instant the fewest nodes any of them leaves.

    A machine whose usable size two readings bound (a period's peak and a starved span, a share and a file) has at most
    the smaller of the two; the engine takes one set of spans that do not overlap
    (:func:`~torus_sim.engine.effective_size.checked_spans`).

    Args:
        capacity: the machine's nodes (an instant no reading covers has them all).
        readings: float ``(S, 3)`` arrays (or lists) of ``(start, end, nodes)`` spans: seconds of the run's clock (an
            end may be +inf: to the run's end) and the nodes usable from start to end; each reading's spans without
            overlaps of their own.

    Returns:
        float64 ``(S, 3)`` ``(start, end, nodes)`` spans by start, none overlapping, adjacent pieces of one size merged,
        none at the whole machine.
    """
    spans = [np.asarray(each, dtype=np.float64).reshape(-1, 3) for each in readings]
    spans = [each for each in spans if len(each)]
    if len(spans) <= 1:
        return spans[0][spans[0][:, 2] < capacity] if spans else np.empty((0, 3))
    every = np.concatenate(spans)
    cuts = np.unique(every[:, :2])
    left, right = cuts[:-1], cuts[1:]
    nodes = np.full(len(left), float(capacity))
    for start, end, count in every.tolist():  # the pieces between two cuts that a span covers
        first, stop = np.searchsorted(cuts, start), np.searchsorted(cuts, end)
        nodes[first:stop] = np.minimum(nodes[first:stop], count)
    merged: list[list[float]] = []
    for start, end, count in zip(left.tolist(), right.tolist(), nodes.tolist(), strict=True):
        if count >= capacity:
            continue
        if merged and merged[-1][1] == start and merged[-1][2] == count:
            merged[-1][1] = end
        else:
            merged.append([start, end, count])
    return np.array(merged, dtype=np.float64).reshape(-1, 3)
