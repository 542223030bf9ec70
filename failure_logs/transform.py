"""Fitting a real failure log onto a workload trace's time span.

A failure log rarely covers the same period as a job log (the BG/L RAS sample is 2005-2006,
the NASA log 1993). BGL-FAULT §6.2 lays failures over each job log by their timing; here the
log's span is mapped affinely onto the trace's span, keeping the order and relative spacing of
failures. Downtimes are kept in seconds, not stretched, unless asked.
"""

from __future__ import annotations

from failure_logs.events import FailureLog
from torus_sim.core.errors import ConfigurationError

__all__ = ["cut_to_span", "fit_to_span", "shift", "window_onto_span"]


def shift(log: FailureLog, offset: float) -> FailureLog:
    """The same failures ``offset`` seconds later (earlier if negative), repairs included."""
    return FailureLog(
        log.failed_at + offset,
        log.supernodes,
        log.repair_at + offset,
        log.source + f"|shift={offset}",
        log.sha256,
        log.counts.copy(),
    )


def fit_to_span(log: FailureLog, start: float, end: float, scale_downtime: bool = False) -> FailureLog:
    """Map the log's first..last failure affinely onto ``[start, end]``.

    Args:
        log: the failures.
        start: target span start, seconds.
        end: target span end, seconds (>= start).
        scale_downtime: stretch downtimes by the same factor (default: keep them in seconds).

    Returns:
        A new log; a single failure (or failures all at one instant) lands at ``start``.

    Raises:
        ConfigurationError: ``end < start``.

    References:
        BGL-FAULT §6.2 (failure timing from real traces laid over each job log).
    """
    if end < start:
        raise ConfigurationError(f"target span must have end >= start, got [{start}, {end}]")
    if not len(log):
        return log
    first, last = log.span
    factor = (end - start) / (last - first) if last > first else 0.0
    failed_at = start + (log.failed_at - first) * factor
    downtime = log.downtime * (factor if scale_downtime else 1.0)
    repair_at = failed_at + downtime  # NaN stays NaN
    return FailureLog(failed_at, log.supernodes, repair_at, log.source + f"|fit=[{start},{end}]", log.sha256, log.counts.copy())


def cut_to_span(log: FailureLog, start: float, end: float) -> FailureLog:
    """The failures at ``start <= t <= end`` (repairs kept as they are).

    Args:
        log: the failures.
        start: first instant kept, seconds.
        end: last instant kept, seconds.

    Returns:
        A new log (the same object when nothing is cut).

    References:
        BGL-FAULT §6.2 (failures over the workload's span); a prefix of a workload keeps the whole
        run's failures of its own span (reduced runs keep the failure rate).
    """
    keep = (log.failed_at >= start) & (log.failed_at <= end)
    if keep.all():
        return log
    return FailureLog(
        log.failed_at[keep],
        log.supernodes[keep],
        log.repair_at[keep],
        log.source + f"|cut=[{start},{end}]",
        log.sha256,
        log.counts.copy(),
    )


def window_onto_span(log: FailureLog, offset: float, start: float, end: float) -> FailureLog:
    """The log's failures from ``offset`` seconds after its first one, moved so that instant is ``start``, cut at ``end``.

    Unlike :func:`fit_to_span`, nothing is stretched: the failures keep their real rate and spacing,
    and the workload meets a window of the log as long as its own span (Mira's 5.5-year log against
    a PWA log of a few months).

    Args:
        log: the failures.
        offset: seconds after the log's first failure where the window opens (>= 0).
        start: where the window lands, seconds (the workload's first submission).
        end: the last instant kept, seconds (the workload's last submission).

    Returns:
        A new log of the failures in ``[start, end]`` after the shift, repairs shifted alike.

    Raises:
        ConfigurationError: ``end < start`` or a negative offset.
    """
    if end < start or offset < 0:
        raise ConfigurationError(f"a failure window needs end >= start and offset >= 0, got [{start}, {end}], offset {offset}")
    if not len(log):
        return log
    moved = shift(log, start - (log.span[0] + offset))
    cut = cut_to_span(moved, start, end)
    cut.source = log.source + f"|window=+{offset:g}s onto [{start},{end}]"
    return cut
