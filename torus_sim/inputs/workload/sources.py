"""Workload sources by name: where a run's jobs come from, chosen from the scenario's ``workload`` text.

A scenario names its workload in one of these forms, each parsed by the registry entry that owns it
(:meth:`torus_sim.inputs.input_registry.InputRegistry.select`); the plug-in API is :mod:`torus_sim.inputs.workload.source_api`,
the built-ins :mod:`torus_sim.inputs.workload.trace_sources` and :mod:`torus_sim.inputs.workload.batch_sources`:

* a file: an SWF log (``.swf``, ``.swf.gz``, ...; any file no other reader claims) or a Batsim JSON
  workload (``.json``, ``.json.gz``, ...; or any file that starts with ``{``): :class:`SwfFile`,
  :class:`BatsimFile`;
* ``bundled``: the bundled NASA iPSC/860 log (:class:`BundledLog`); ``lublin``: Lublin and Feitelson's model of
  rigid jobs, generated from the seed (:class:`LublinModel`);
* ``rigid``: RIGID §5.1's synthetic set (:class:`RigidSet`); ``moldable:<model>``: MOLDABLE §5.1's set
  under a speedup model (:class:`MoldableSet`); ``table:<path>``: a user's t_j(p) table
  (:class:`TimeTable`); ``refcode:<path>``: the RIGID reference code's job file (:class:`RefcodeFile`);
  ``steady-state``: CKPT-MIG's job sizes (:class:`SteadyState`);
* an installed package's entry point (group ``torus_sim.workloads``), or an import path
  ``package.module:Class`` to a subclass of :class:`WorkloadSource` (its constructor's parameters from
  ``[workload.params]`` / ``--workload-param key=value``).

A source is online (jobs submitted over time: :meth:`WorkloadSource.jobs` returns a
:class:`~torus_sim.inputs.workload.jobs.Workload`) or a batch (released at time 0: it returns
:class:`BatchJobs`). An online source that produces SWF records subclasses :class:`TraceSource` and
gets the cleaning rules, the load scale c, the offered load and the prefix (``max_jobs``) for free.

References:
    BGL-FAULT §6.2 (SWF logs, load scale c); PV-EASY §5.1; RIGID §5.1; MOLDABLE §5.1; CKPT-MIG;
    Feitelson, "Workload Modeling for Computer Systems Performance Evaluation" (2015): the SWF.
"""

from __future__ import annotations

from torus_sim.core.errors import TorusSimError
from torus_sim.inputs.input_registry import InputRegistry
from torus_sim.inputs.workload.batch_sources import MoldableSet, RefcodeFile, RigidSet, SteadyState, TimeTable
from torus_sim.inputs.workload.source_api import BatchJobs, WorkloadContext, WorkloadSource, stable_hash
from torus_sim.inputs.workload.trace_sources import BUNDLED_NASA_LOG, BatsimFile, BundledLog, LublinModel, SwfFile, TraceSource

__all__ = [
    "select_workload",
    "source_forms",
    "BUNDLED_NASA_LOG",
    "WORKLOADS",
    "WORKLOAD_ENTRY_POINTS",
    "BatchJobs",
    "BatsimFile",
    "BundledLog",
    "LublinModel",
    "MoldableSet",
    "RefcodeFile",
    "RigidSet",
    "SteadyState",
    "SwfFile",
    "TimeTable",
    "TraceSource",
    "WorkloadContext",
    "WorkloadSource",
    "declared_by_workload",
    "stable_hash",
    "workload_source",
]

WORKLOAD_ENTRY_POINTS = "torus_sim.workloads"
"""The entry-point group installed packages add their workload sources to."""

WORKLOADS: InputRegistry[WorkloadSource] = InputRegistry("workload", WORKLOAD_ENTRY_POINTS, WorkloadSource)
"""Workload sources by name: the built-ins below, installed plug-ins, import paths; files by suffix or content."""

for _source in (SwfFile, BatsimFile, BundledLog, LublinModel, RigidSet, MoldableSet, TimeTable, RefcodeFile, SteadyState):
    WORKLOADS.register(_source.name, _source)


def source_forms(kind: str | None = None) -> str:
    """The workload forms the registry knows (``rigid, moldable:<model>, ...``), of one kind (``online``, ``batch``) or all.

    For messages and help texts: a newcomer reads what can be given without a list kept by hand.
    """
    forms = []
    for name in WORKLOADS.builtin_names():
        factory = WORKLOADS.resolve(name)[0]
        if kind is not None and factory.kind != kind:
            continue
        if factory.takes_argument:
            forms.append(f"{name}:{factory.argument_form}")
        elif factory.reads_file:
            forms.append(f"a {name.upper() if len(name) <= 4 else name} file ({', '.join(factory.suffixes)})")
        else:
            forms.append(name)
    return ", ".join(forms)


def workload_source(spec, params: dict | None = None) -> WorkloadSource:
    """The source a scenario's ``workload`` names, built with its ``workload_params`` (one per process and spec).

    Args:
        spec: ``bundled``, a path, ``rigid``, ``moldable:mix``, an entry-point name, an import path,
            or (from Python) a source class or instance.
        params: the source's constructor parameters (checked against its signature).

    Returns:
        The source (``info`` says where it came from).

    Raises:
        ConfigurationError: an unknown name, a name that needs an argument, a class of the wrong kind,
            a parameter its constructor does not take.
    """
    return WORKLOADS.build_selected(spec, params)


def declared_by_workload(spec) -> dict:
    """The scenario fields a built-in workload's input names (:meth:`WorkloadSource.declared_fields`), or {}.

    Args:
        spec: the scenario's ``workload``.

    Returns:
        ``{field: value}``: a reference-code job file's header gives ``policy``, ``priority`` and
        ``verification_time``; every other built-in, a plug-in (never run while a scenario is
        checked) and a specification that selects nothing give {}.
    """
    if not isinstance(spec, str):
        return {}
    try:
        factory, info, argument = WORKLOADS.selected(spec)
    except (OSError, TorusSimError):
        return {}
    if info.plugin or not (isinstance(factory, type) and issubclass(factory, WorkloadSource)):
        return {}
    return factory.declared_fields(argument)


def select_workload(spec):
    """``(factory, where it came from, argument)`` a specification selects (:meth:`~torus_sim.inputs.input_registry.InputRegistry.select`; cached per text)."""
    return WORKLOADS.selected(spec)
