"""A scenario's extensions (policy, placement, failure predictor, runtime predictor): built, checked and described.

:func:`build_policy` builds them from their registries with the defaults each entry declares (a
policy's ``default_placement``, a placement's ``default_predictor``, a predictor's ``from_scenario``
fields), a plug-in's placement and predictor behind the guard; no name is special here. Before any
run, :func:`check_scenario_extensions` (called by the scenario's validation) answers whether every
extension and input source the scenario names exists and takes the parameters given, and
:func:`extension_manifest` where each came from (import path, package version, source hash).

References:
    docs/policies/README.md ("write a policy"): the stable surface and the registries.
"""

from __future__ import annotations

import inspect
import warnings
from functools import partial

from torus_sim.core.errors import ConfigurationError
from torus_sim.inputs.plugin_admission import object_path
from torus_sim.inputs.provenance import PluginInfo
from torus_sim.policies.guarded_extensions import guard_placement, guard_predictor

__all__ = [
    "OFFERED",
    "input_registries",
    "build_placement",
    "build_policy",
    "build_predictor",
    "build_risk_predictor",
    "scenario_fields",
    "check_scenario_extensions",
    "extension_manifest",
    "placement_name",
    "predictor_name",
    "registries",
    "runtime_predictor_of",
]

OFFERED = {
    "policy": ("placement", "tables", "allocation", "batch", "risk_predictor"),
    "placement": ("predictor",),
    "predictor": (),
    "runtime_predictor": ("rng",),
}
"""What the engine offers each kind of extension's constructor, by parameter name (see :mod:`torus_sim.inputs.registry`),
besides the scenario fields a factory declares it reads (:func:`scenario_fields`)."""


def scenario_fields(factory, scenario) -> dict:
    """The scenario fields a factory declares it reads, by parameter: its ``from_scenario`` mapping.

    A factory (a class or a function) may declare ``from_scenario = {parameter: scenario field}``: the wiring
    offers it exactly those values (a ``*_params`` table's value for the same parameter wins), and never the
    Scenario itself. The built-ins declare theirs (Krevat's ``backfill``, R-LIST's ``priority``, the balancing
    placement's ``pf_form``, the oracles' ``confidence``, ...).

    Args:
        factory: what the registry resolved.
        scenario: the run's :class:`~torus_sim.experiments.scenario.Scenario`.

    Returns:
        ``{parameter: value}`` ({} when the factory declares nothing).
    """
    fields = getattr(factory, "from_scenario", None) or {}
    return {parameter: getattr(scenario, field) for parameter, field in fields.items()}


def _offered(kind: str, factory, scenario, offered: dict) -> dict:
    """``offered`` plus the factory's declared scenario fields; the whole scenario only to a plug-in that names it (deprecated)."""
    offered = {**scenario_fields(factory, scenario), **offered}
    if _names_parameter(factory, "scenario"):
        warnings.warn(
            f"{kind} {object_path(factory)} takes the whole scenario: declare the fields it reads instead "
            "(from_scenario = {parameter: scenario field}); offering the scenario will go in a later release",
            FutureWarning,
            stacklevel=3,
        )
        offered["scenario"] = scenario
    return offered


def registries() -> dict:
    """The four registries by scenario field: ``policy``, ``placement``, ``predictor``, ``runtime_predictor``."""
    import predictors  # noqa: F401  (registers the built-in failure predictors)
    from predictors.base import PREDICTORS
    from predictors.runtime import RUNTIME_PREDICTORS
    from torus_sim.policies import (
        fault_aware,  # noqa: F401  (registers balancing and tiebreak)
        warm_placement,  # noqa: F401  (registers warm)
    )
    from torus_sim.policies.catalog import POLICIES
    from torus_sim.policies.placement import PLACEMENTS

    return {"policy": POLICIES, "placement": PLACEMENTS, "predictor": PREDICTORS, "runtime_predictor": RUNTIME_PREDICTORS}


def _spec(field: str, value):
    if field == "runtime_predictor" and isinstance(value, str):
        from predictors.runtime import split_runtime_spec

        return split_runtime_spec(value)[0]
    return value


def check_scenario_extensions(scenario) -> None:
    """Raise ConfigurationError when an extension the scenario names does not exist or refuses its parameters.

    Args:
        scenario: a :class:`~torus_sim.experiments.scenario.Scenario` (its fields already type-checked).

    Raises:
        ConfigurationError: an unknown name, an import path that does not import, a class of the wrong
            base, or a parameter its constructor does not take (or of the wrong type, or missing).
    """
    found = registries()
    for field, registry in found.items():
        value = getattr(scenario, field)
        params = getattr(scenario, f"{field}_params")
        if value is None:
            if params and field == "runtime_predictor":
                raise ConfigurationError("runtime_predictor_params given without a runtime_predictor")
            continue
        if field == "runtime_predictor" and isinstance(value, str) and not params:
            from predictors.runtime import make_runtime_predictor

            make_runtime_predictor(value, None)  # checks virtual:x's argument too
            continue
        spec = _spec(field, value)
        declared = tuple(getattr(registry.resolve(spec)[0], "from_scenario", None) or ())
        registry.check(spec, params, (*OFFERED[field], *declared, "scenario"))
    for field, (registry, select) in input_registries().items():
        value = getattr(scenario, field)
        if value is None:
            continue
        factory, info, argument = select(value)
        params = getattr(scenario, f"{field}_params")
        if isinstance(factory, registry.base):
            if params:
                raise ConfigurationError(f"{registry.kind} {info.name!r} was given as an instance: it takes no parameters")
            continue
        from torus_sim.inputs.parameters import bind_parameters

        offered = {"argument": argument} if argument is not None else {}
        bind_parameters(factory, params, offered, f"{registry.kind} {info.name!r}")


def input_registries() -> dict:
    """The registries of the scenario's inputs by field (``workload``, ``failures``), each with its cached selection."""
    from failure_logs.sources import FAILURE_SOURCES, select_failure_source
    from torus_sim.inputs.workload.sources import WORKLOADS, select_workload

    return {"workload": (WORKLOADS, select_workload), "failures": (FAILURE_SOURCES, select_failure_source)}


def extension_manifest(scenario, placement: str | object, predictor: str | object | None) -> dict:
    """Where the run's policy, placement and predictors came from, for the manifest.

    Args:
        scenario: the run.
        placement: the placement after defaults (:func:`torus_sim.experiments.runner.placement_name`).
        predictor: the failure predictor after defaults, or None when the placement uses none.

    Returns:
        ``{"policy": PluginInfo fields, "placement": ..., "predictor": ..., "runtime_predictor": ...}``;
        a built-in's entry has its name and ``origin: built-in``; absent extensions are None.
    """
    found = registries()
    chosen = {
        "policy": scenario.policy,
        "placement": placement,
        "predictor": predictor,
        "runtime_predictor": scenario.runtime_predictor,
    }
    manifest: dict = {}
    for field, value in chosen.items():
        if value is None:
            manifest[field] = None
            continue
        info: PluginInfo = found[field].info(_spec(field, value))
        manifest[field] = info.to_dict()
    return manifest


# -- building --------------------------------------------------------------------------------------


def placement_name(scenario):
    """The placement after defaults: the scenario's, else the one its policy's entry declares, else MFP.

    Returns:
        A name, an import path, or (from Python) an object.
    """
    if scenario.placement is not None:
        return scenario.placement
    from torus_sim.policies.placement import DEFAULT_PLACEMENT_NAME

    return _declared(registries()["policy"], scenario.policy, "default_placement") or DEFAULT_PLACEMENT_NAME


def predictor_name(scenario):
    """The failure predictor after defaults: the scenario's, else the one its placement's entry declares (``null`` if none)."""
    if scenario.predictor is not None:
        return scenario.predictor
    from predictors.base import NullPredictor

    return _declared(registries()["placement"], placement_name(scenario), "default_predictor") or NullPredictor.name


def _declared(registry, spec, attribute: str):
    """What the registry entry ``spec`` declares as ``attribute`` (a default), or None."""
    try:
        factory, _ = registry.resolve(spec)
    except ConfigurationError:
        return None
    value = getattr(factory, attribute, None)
    return value if isinstance(value, str) else None


def build_predictor(scenario):
    """The failure predictor of the scenario's placement, from :data:`predictors.PREDICTORS`.

    A predictor's entry may declare ``from_scenario`` (its parameter -> the scenario field that gives
    it: the oracles' ``confidence``, ``accuracy``); ``predictor_params`` go to its constructor on top
    (checked against its signature).

    Returns:
        A fresh :class:`~predictors.base.FailurePredictor` (attached to the run by the engine); a
        plug-in's behind the guard (:class:`~torus_sim.policies.guarded_extensions.GuardedPredictor`).

    Raises:
        ConfigurationError: an unknown predictor or a parameter its constructor does not take.

    References:
        BGL-FAULT §4.1, §4.2.
    """
    return _predictor(scenario, predictor_name(scenario))


def _predictor(scenario, name):
    """The predictor ``name`` with its ``from_scenario`` fields and the scenario's ``predictor_params``, behind the guard."""
    registry = registries()["predictor"]
    factory, _ = registry.resolve(name)
    parameters = scenario_fields(factory, scenario)  # given as parameters: their types are checked
    offered = _offered("failure predictor", factory, scenario, {})
    for parameter in parameters:
        offered.pop(parameter, None)
    return guard_predictor(registry.build(name, {**parameters, **scenario.predictor_params}, offered))


def build_risk_predictor(scenario):
    """The failure predictor of a learned policy's failure-risk feature: the scenario's, else :data:`RISK_PREDICTOR`.

    The default learns from past failures only, so nothing leaks the future; on a run without failures
    every risk is 0 whichever predictor is built. Offered to a policy factory that names ``risk_predictor``
    (the learned policy's), and called by the Gymnasium environment, so that no policy builds one itself.

    Args:
        scenario: the run's :class:`~torus_sim.experiments.scenario.Scenario` (its ``predictor`` and ``predictor_params``).

    Returns:
        A fresh predictor, not yet attached.

    Raises:
        ConfigurationError: an unknown predictor name (the registry's sentence).
    """
    from torus_sim.policies.agent_observation import RISK_PREDICTOR

    return _predictor(scenario, scenario.predictor if scenario.predictor is not None else RISK_PREDICTOR)


def build_placement(scenario):
    """The placement policy with its failure predictor, from :data:`~torus_sim.policies.placement.PLACEMENTS`.

    A placement's constructor gets ``placement_params`` and, where its signature names them,
    ``predictor`` (the scenario's failure predictor), and the scenario fields it declares (:func:`scenario_fields`). A plug-in's placement comes
    behind the guard (:class:`~torus_sim.policies.guarded_extensions.GuardedPlacement`).

    References:
        BGL-FAULT §4, §5.2.
    """
    registry = registries()["placement"]
    name = placement_name(scenario)
    factory, _ = registry.resolve(name)
    offered = {}
    if _names_parameter(factory, "predictor"):
        offered["predictor"] = build_predictor(scenario)
    return guard_placement(registry.build(name, scenario.placement_params, _offered("placement", factory, scenario, offered)))


def _names_parameter(factory, parameter: str) -> bool:
    try:
        return parameter in inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return False


def build_policy(scenario, tables=None, allocation=None, batch=None):
    """The scenario's policy object, from the policy registry (:data:`~torus_sim.policies.catalog.POLICIES`).

    Args:
        scenario: the run (its ``policy`` a built-in name, an installed plug-in's entry-point name, an
            import path ``package.module:Class``, or from Python a class, a factory or an instance).
        tables: BATCH-LIST's allotment tables shared by the scenarios of a job set.
        allocation: LPA / MINTIME / MINAREA's allocation shared likewise.
        batch: the batch job set of the run (:class:`~torus_sim.experiments.run_inputs.BatchSet`), offered to a factory
            that names ``batch`` (what the runs of one job set share: BATCH's tables, an allocation).

    Returns:
        A fresh policy (policies keep per-run state); an instance given from Python as it is.

    Raises:
        ConfigurationError: an unknown policy, an import that fails, a class that is not a
            :class:`~torus_sim.policies.base.Policy`, or a parameter its constructor does not take or of the wrong type.

    References:
        BGL-FAULT §5; PV-EASY §4; RIGID §4; MOLDABLE §4.
    """
    from torus_sim.policies.base import Policy

    registry = registries()["policy"]
    explicit = scenario.placement is not None or _declared(registry, scenario.policy, "default_placement") is not None
    offered = {
        "placement": build_placement(scenario) if explicit else None,
        "tables": tables,
        "allocation": allocation,
        "batch": batch,
    }
    factory, _ = registry.resolve(scenario.policy)
    if _names_parameter(factory, "risk_predictor"):
        offered["risk_predictor"] = build_risk_predictor(scenario)
    policy = registry.build(scenario.policy, scenario.policy_params, _offered("policy", factory, scenario, offered))
    if not registry.is_builtin(scenario.policy):
        info = registry.info(scenario.policy)
        if type(policy).name == Policy.name and "name" not in vars(policy):
            policy.name = info.import_path.rpartition(":")[2] if info.origin != "entry point" else info.name
    return policy


def runtime_predictor_of(scenario):
    """A factory of the scenario's runtime predictor (taking the model's generator), or None."""
    if scenario.runtime_predictor is None:
        return None
    from predictors.runtime import make_runtime_predictor

    return partial(make_runtime_predictor, scenario.runtime_predictor, params=scenario.runtime_predictor_params)
