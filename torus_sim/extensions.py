"""A scenario's extensions (policy, placement, failure predictor, runtime predictor): checked and described.

The runner builds them (:func:`torus_sim.runner.build_policy`); this module answers, before any run,
whether every one the scenario names exists and takes the parameters given
(:func:`check_scenario_extensions`, called by the scenario's validation), and where each came from
(:func:`extension_manifest`, for the run's manifest and header: import path, package version, source hash).

References:
    docs/policies/README.md ("write a policy"): the stable surface and the registries.
"""

from __future__ import annotations

from torus_sim.errors import ConfigurationError
from torus_sim.registry import PluginInfo

__all__ = ["OFFERED", "check_scenario_extensions", "extension_manifest", "registries"]

OFFERED = {
    "policy": ("scenario", "placement", "tables", "allocation"),
    "placement": ("scenario", "predictor"),
    "predictor": ("scenario",),
    "runtime_predictor": ("rng",),
}
"""What the engine offers each kind of extension's constructor, by parameter name (see :mod:`torus_sim.registry`)."""


def registries() -> dict:
    """The four registries by scenario field: ``policy``, ``placement``, ``predictor``, ``runtime_predictor``."""
    import predictors  # noqa: F401  (registers the built-in failure predictors)
    from predictors.base import PREDICTORS
    from predictors.runtime import RUNTIME_PREDICTORS
    from torus_sim.policies import fault_aware  # noqa: F401  (registers balancing and tiebreak)
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
        scenario: a :class:`~torus_sim.scenario.Scenario` (its fields already type-checked).

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
        if field == "placement" and value == "mfp" and not params:
            continue
        registry.check(_spec(field, value), params, OFFERED[field])


def extension_manifest(scenario, placement: str | object, predictor: str | object | None) -> dict:
    """Where the run's policy, placement and predictors came from, for the manifest.

    Args:
        scenario: the run.
        placement: the placement after defaults (:func:`torus_sim.runner.placement_name`).
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
