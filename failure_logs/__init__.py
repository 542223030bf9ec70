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

from failure_logs.bgl_ras import MidplaneMapping, read_bgl_ras
from failure_logs.events import FailureLog
from failure_logs.lanl import read_lanl
from failure_logs.mira import read_mira
from failure_logs.sources import BUNDLED_BGL_RAS, FAILURE_SOURCES, FailureSource, failure_source, load_failure_source
from failure_logs.synthetic import GeneratedFailures, SyntheticFailures, generate_failures, scale_failure_count
from failure_logs.transform import cut_to_span, fit_to_span, shift, window_onto_span

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
