"""Metrics computed from a run's event record (never from the engine).

Key components:
    job_table: per-job wait, response and bounded slowdown (BGL-FAULT §3.4).
    capacity_fractions: ω_util, ω_unused, ω_lost (BGL-FAULT §6.1).
    summarize: the run's summary.
"""

from torus_sim.metrics.summary import BSLD_FORMS, DEFAULT_GAMMA, bounded_slowdown, capacity_fractions, job_table, summarize

__all__ = ["BSLD_FORMS", "DEFAULT_GAMMA", "bounded_slowdown", "capacity_fractions", "job_table", "summarize"]
