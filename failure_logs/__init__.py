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

from torus_sim.core.lazy_imports import lazy_attributes

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
"""Each public name -> its module, imported on first use: a predictor that reads :class:`FailureLog`
(and the command line's start-up) does not pull pandas in through the LANL and Mira readers."""

__all__ = sorted(_HOMES)
__getattr__ = lazy_attributes(__name__, {name: f"failure_logs.{module}" for name, module in _HOMES.items()})
