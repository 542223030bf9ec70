"""A run's effective machine size over time: from a file, or inferred from the schedule the replayed log records.

``effective_size = "FILE"`` reads one span per line, ``start,end,nodes``: seconds of the workload's clock (an SWF
log's submit times: seconds from its start) and the nodes usable from start to end (processors of a cluster,
supernodes of a torus); ``#`` comments and blank lines skipped, an optional ``start,end,nodes`` header.
``effective_size = "inferred"`` cuts the log into periods of ``effective_size_period`` seconds (30 days unless set)
and, where a period's peak of busy processors in the logged schedule
(:func:`~torus_sim.inputs.workload.logged.busy_peaks`) stays below the machine's size, takes that peak as the
period's effective size (as a share of the machine when the run's nodes are not the log's processors): SDSC-SP2's
first seven months give 115 of 128. Like inferred maintenance windows, an inferred size reads the log's answer:
a report says which figures used it. The engine holds the other nodes out
(:class:`~torus_sim.engine.effective_size.EffectiveSize`).

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
from torus_sim.inputs.workload.logged import INFERRED, busy_peaks, own_schedule

__all__ = ["INFERRED", "PERIOD", "effective_size_spans", "inferred_spans", "read_spans"]


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
