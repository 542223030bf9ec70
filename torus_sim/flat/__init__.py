"""Deprecated (one release): the flat-platform package became part of the one engine.

Batch experiments live in :mod:`torus_sim.experiments.batch`, job sets in
:mod:`torus_sim.workload.batch`, speedup models in :mod:`torus_sim.workload.speedup`, silent errors
in :mod:`failure_logs.silent`, lower bounds in :mod:`torus_sim.metrics.bounds`; every run goes
through :func:`torus_sim.runner.run` on :class:`torus_sim.model.SchedulingModel`.
"""
