"""A run's maintenance windows: from a file, or inferred from the schedule the replayed log records.

``maintenance = "FILE"`` reads one window per line, ``start,end`` in seconds of the workload's clock (an SWF
log's submit times: seconds from its start), ``#`` comments and blank lines skipped, an optional ``start,end``
header. ``maintenance = "inferred"`` takes the spans in which the logged machine ran nothing while jobs waited,
at least ``maintenance_min_length`` long (:func:`~torus_sim.inputs.workload.logged.idle_windows`): the machine's
own downtime, which its log keeps and a replay does not know. The engine drains before each window
(:class:`~torus_sim.engine.maintenance.MaintenanceWindows`).

References:
    Slurm's documentation, "Advanced Resource Reservation Guide" (maintenance reservations); Feitelson, Tsafrir,
    Krakov, "Experience with using the Parallel Workloads Archive", JPDC 74(10), 2014 (logs hold downtime and
    flurries that are not the scheduler's).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from torus_sim.core.errors import ConfigurationError, MaintenanceFormatError
from torus_sim.core.files import input_lines
from torus_sim.inputs.workload.logged import INFERRED, idle_windows, own_schedule

__all__ = ["INFERRED", "MIN_LENGTH", "maintenance_windows", "read_windows"]


MIN_LENGTH = 3600.0
"""The shortest idle span of a log taken as a window, seconds, unless ``maintenance_min_length`` says otherwise."""


def read_windows(path: str | Path) -> np.ndarray:
    """Read a maintenance-window file: one ``start,end`` per line, seconds of the workload's clock.

    Args:
        path: the file (plain or compressed).

    Returns:
        float64 ``(W, 2)``, in file order.

    Raises:
        FileNotFoundError: no such file.
        MaintenanceFormatError: a line that is not two finite numbers >= 0 with start < end (file and line named).
    """
    windows = []
    for number, line in enumerate(input_lines(path, "maintenance"), start=1):
        text = line.split("#", 1)[0].strip()
        if not text or (not windows and text.replace(" ", "").lower() == "start,end"):
            continue
        fields = [field.strip() for field in text.split(",")]
        if len(fields) != 2:
            raise MaintenanceFormatError(path, number, f"expected start,end (two numbers), got {text!r}")
        try:
            start, end = float(fields[0]), float(fields[1])
        except ValueError:
            raise MaintenanceFormatError(path, number, f"expected start,end in seconds, got {text!r}") from None
        if not (math.isfinite(start) and math.isfinite(end) and 0 <= start < end):
            raise MaintenanceFormatError(path, number, f"a window needs 0 <= start < end in finite seconds, got {text!r}")
        windows.append((start, end))
    return np.array(windows, dtype=np.float64).reshape(-1, 2)


def maintenance_windows(spec: str, log=None, load_scale: float = 1.0, min_length: float | None = None) -> np.ndarray:
    """The windows a scenario's ``maintenance`` names.

    Args:
        spec: ``"inferred"`` or a file's path.
        log: for ``inferred``, the replayed SWF log's trace with
            :data:`~torus_sim.inputs.workload.logged.SCHEDULE_FIELDS`
            (:func:`~torus_sim.inputs.workload.logged.workload_log`); unused for a file.
        load_scale: the run's load scale c (``inferred`` needs 1: the logged schedule is the log's own load's).
        min_length: the shortest inferred window, seconds (:data:`MIN_LENGTH` when None); only with ``inferred``.

    Returns:
        float64 ``(W, 2)``: each window's ``(start, end)``, seconds of the workload's clock.

    Raises:
        ConfigurationError: ``inferred`` at a load scale other than 1 or without the log, or ``min_length`` with a file.
        FileNotFoundError, MaintenanceFormatError: the file.
    """
    if spec != INFERRED:
        if min_length is not None:
            raise ConfigurationError('maintenance_min_length applies to maintenance = "inferred" only, not to a file')
        return read_windows(spec)
    return idle_windows(own_schedule("maintenance", log, load_scale), MIN_LENGTH if min_length is None else min_length)
