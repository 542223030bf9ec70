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

__all__ = [
    "BSLD_FORMS",
    "DEFAULT_GAMMA",
    "bounded_slowdown",
    "capacity_fractions",
    "job_table",
    "summarize",
    "summarize_record",
]


def __getattr__(name: str):
    """Import the metrics on first use.

    ``torus_sim.metrics.readings`` (the scenario's defaults) then does not pull pandas into the
    command line's start-up.
    """
    if name == "summarize_record":
        from torus_sim.metrics.families import summarize_record

        return summarize_record
    if name in __all__:
        from torus_sim.metrics import summary

        return getattr(summary, name)
    raise AttributeError(f"module 'torus_sim.metrics' has no attribute {name!r}")
