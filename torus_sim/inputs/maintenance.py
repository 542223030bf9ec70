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

from torus_sim.core.errors import ConfigurationError, InputFormatError
from torus_sim.core.files import input_lines

__all__ = ["INFERRED", "MIN_LENGTH", "maintenance_windows", "read_windows"]

INFERRED = "inferred"
"""The ``maintenance`` value that infers the windows from the replayed log."""

MIN_LENGTH = 3600.0
"""The shortest idle span of a log taken as a window, seconds, unless ``maintenance_min_length`` says otherwise."""


class MaintenanceFormatError(InputFormatError):
    """A malformed line of a maintenance-window file (file and line named)."""


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
    for number, line in enumerate(input_lines(path, "maintenance file"), start=1):
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


def maintenance_windows(spec: str, workload, min_length: float | None = None) -> tuple[np.ndarray, str]:
    """The windows a scenario's ``maintenance`` names, and a few words on where they come from.

    Args:
        spec: ``"inferred"`` or a file's path.
        workload: the run's :class:`~torus_sim.inputs.workload.jobs.Workload` (for ``inferred``: its SWF file and
            load scale).
        min_length: the shortest inferred window, seconds (:data:`MIN_LENGTH` when None); only with ``inferred``.

    Returns:
        ``(windows, description)``: float64 ``(W, 2)``, and e.g. ``"28 windows inferred from CTC-SP2-...swf.gz
        (206 h)"``.

    Raises:
        ConfigurationError: ``inferred`` for a workload that is not an online SWF log replayed at load scale 1, or
            ``min_length`` with a file.
        FileNotFoundError, MaintenanceFormatError: the file.
    """
    if spec != INFERRED:
        if min_length is not None:
            raise ConfigurationError('maintenance_min_length applies to maintenance = "inferred" only, not to a file')
        windows = read_windows(spec)
        hours = float(np.sum(windows[:, 1] - windows[:, 0])) / 3600.0
        return windows, f"{len(windows):,} windows from {Path(spec).name} ({hours:,.0f} h)"
    from torus_sim.inputs.workload.logged import idle_windows, logged_schedule
    from torus_sim.inputs.workload.swf import read_swf

    path = Path(str(workload.source))
    if workload.kind != "online" or not workload.sha256 or not path.is_file():
        raise ConfigurationError(
            f'maintenance = "inferred" reads the schedule an SWF log records; this workload ({workload.source}) is not a log file'
        )
    if workload.load_scale != 1.0:
        raise ConfigurationError(
            f'maintenance = "inferred" takes the windows from the log\'s own schedule, at its own load: run it at c = 1 '
            f"(the scenario has c = {workload.load_scale:g})"
        )
    trace = read_swf(
        path, fields=("job_id", "submit_time", "wait_time", "run_time", "allocated_processors", "requested_processors", "status")
    )
    if trace.sha256 != workload.sha256:
        raise ConfigurationError(f"{path} changed since the run read it (SHA-256 {workload.sha256}, now {trace.sha256})")
    windows = idle_windows(logged_schedule(trace, name=path.name), MIN_LENGTH if min_length is None else min_length)
    hours = float(np.sum(windows[:, 1] - windows[:, 0])) / 3600.0
    return windows, f"{len(windows):,} windows inferred from {path.name} ({hours:,.0f} h)"
