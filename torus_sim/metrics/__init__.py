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

from torus_sim.core.lazy_imports import lazy_attributes

_HOMES = {
    "BSLD_FORMS": "torus_sim.metrics.summary",
    "DEFAULT_GAMMA": "torus_sim.metrics.summary",
    "bounded_slowdown": "torus_sim.metrics.summary",
    "capacity_fractions": "torus_sim.metrics.summary",
    "job_table": "torus_sim.metrics.summary",
    "summarize": "torus_sim.metrics.summary",
    "summarize_record": "torus_sim.metrics.families",
}
"""Each public name -> its module, imported on first use: ``torus_sim.metrics.readings`` (the
scenario's defaults) does not pull pandas into the command line's start-up."""

__all__ = sorted(_HOMES)
__getattr__ = lazy_attributes(__name__, _HOMES)
