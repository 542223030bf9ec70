"""Failure logs: readers of real logs, a synthetic generator, and time fitting.

Key components:
    FailureLog: failures as (time, supernode, repair time) arrays.
    read_bgl_ras, MidplaneMapping: the BlueGene/L RAS log (Loghub format).
    read_lanl: the LANL failure data with real repair times.
    read_mira: Mira's FATAL RAS events (LogAider), maintenance and repair reservations, on its 2x3x4x4 torus.
    generate_failures, SyntheticFailures: exponential or Weibull failures with an exact count;
        GeneratedFailures: the base of any failure model the run draws with its own generator.
    fit_to_span, window_onto_span, cut_to_span, shift: laying a real log over a workload's span.
    FAILURE_SOURCES, FailureSource, failure_source: the failure sources by name (logs, models,
        installed plug-ins); load_failure_source: one outside a run.
"""

__all__ = [
    "BUNDLED_BGL_RAS",
    "FAILURE_SOURCES",
    "FailureLog",
    "FailureSource",
    "GeneratedFailures",
    "MidplaneMapping",
    "SyntheticFailures",
    "cut_to_span",
    "failure_source",
    "fit_to_span",
    "generate_failures",
    "load_failure_source",
    "read_bgl_ras",
    "read_lanl",
    "read_mira",
    "scale_failure_count",
    "shift",
    "window_onto_span",
]

_HOMES = {
    "BUNDLED_BGL_RAS": "sources",
    "FAILURE_SOURCES": "sources",
    "FailureLog": "events",
    "FailureSource": "sources",
    "GeneratedFailures": "synthetic",
    "MidplaneMapping": "bgl_ras",
    "SyntheticFailures": "synthetic",
    "cut_to_span": "transform",
    "failure_source": "sources",
    "fit_to_span": "transform",
    "generate_failures": "synthetic",
    "load_failure_source": "sources",
    "read_bgl_ras": "bgl_ras",
    "read_lanl": "lanl",
    "read_mira": "mira",
    "scale_failure_count": "synthetic",
    "shift": "transform",
    "window_onto_span": "transform",
}


def __getattr__(name: str):
    """Import each reader on first use.

    A predictor that reads :class:`FailureLog` (and the command line's start-up) then does not pull
    pandas in through the LANL and Mira readers.
    """
    if name in _HOMES:
        import importlib

        return getattr(importlib.import_module(f"failure_logs.{_HOMES[name]}"), name)
    raise AttributeError(f"module 'failure_logs' has no attribute {name!r}")
