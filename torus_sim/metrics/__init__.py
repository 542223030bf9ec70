"""Metrics computed from a run's event record (never from the engine).

Every family is computed wherever its inputs exist (:func:`summarize_record`):

Key components:
    job_table, capacity_fractions, summarize: BGL-FAULT's wait, response, bounded slowdown and
        ω_util / ω_unused / ω_lost (:mod:`torus_sim.metrics.summary`).
    online: PV-EASY's MBS, MWBS, load and waste, preemptions, strict fairness and reservation
        violations (:mod:`torus_sim.metrics.online`).
    bounds: the makespan lower bounds L(f) and L'(J, f) of RIGID and MOLDABLE
        (:mod:`torus_sim.metrics.bounds`).
    summarize_record: all of them for one simulation.
"""

from torus_sim.metrics.families import summarize_record
from torus_sim.metrics.summary import BSLD_FORMS, DEFAULT_GAMMA, bounded_slowdown, capacity_fractions, job_table, summarize

__all__ = [
    "BSLD_FORMS",
    "DEFAULT_GAMMA",
    "bounded_slowdown",
    "capacity_fractions",
    "job_table",
    "summarize",
    "summarize_record",
]
