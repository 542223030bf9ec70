"""The inputs: workloads, energy inputs, the registries that find them, the data sets, admission and provenance.

:mod:`~torus_sim.inputs.workload` (SWF traces, batches, generators), :mod:`~torus_sim.inputs.energy`
(job power, tariffs), :mod:`~torus_sim.inputs.registry` and :mod:`~torus_sim.inputs.input_registry`
(every extension kind found by name), :mod:`~torus_sim.inputs.datasets` (the field's logs by name),
:mod:`~torus_sim.inputs.plugin_admission` and :mod:`~torus_sim.inputs.untrusted` (what a plug-in may be
and how its calls are guarded), :mod:`~torus_sim.inputs.provenance` (where each input came from). The
failure logs are the sibling package :mod:`failure_logs`; the bundled NASA log lies in ``data/``.
"""
