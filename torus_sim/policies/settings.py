"""The scenario's ``[policy]`` and ``[resilience]`` sections: the scheduling policy with its settings, and how jobs survive failures.

Parts of :class:`torus_sim.experiments.scenario.Scenario` (pydantic models of their own, mixed into the scenario with
the other parts' sections): their fields keep their flat names in scenario files, sweep grids and options.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import AliasChoices, BaseModel, Field, field_serializer, field_validator

from torus_sim.policies.easy import DEFAULT_EASY_EXTRA

__all__ = ["PolicySection", "ResilienceSection", "extension_json", "extension_value"]


def extension_value(value, field: str):
    """A scenario's extension field (a policy, placement or predictor) checked as pydantic validates it.

    Args:
        value: a name, an import path ``package.module:Class``, or from Python a class, a factory or an instance.
        field: the field's name, for the sentence.

    Returns:
        The value as given.

    Raises:
        ValueError: no policy, an empty name, or a number, list or table where a name was expected.
    """
    if value is None:
        if field == "policy":
            raise ValueError("a policy is needed")
        return value
    if isinstance(value, str):
        if not value:
            raise ValueError(f"{field} is empty")
        return value
    if isinstance(value, (int, float, bool, list, tuple, dict)):
        raise ValueError(f"{field} must be a name or an import path package.module:Class, got {value!r}")
    return value  # from Python: a class, a factory or an instance (checked with its parameters by the scenario)


def extension_json(value):
    """An extension field as JSON: a name as it is, an object from Python as its import path."""
    if value is None or isinstance(value, str):
        return value
    from torus_sim.inputs.plugin_admission import object_path

    return object_path(value)


class PolicySection(BaseModel):
    """The ``[policy]`` section: the policy (a built-in's or a plug-in's name, an import path) and the papers' settings.

    Raises:
        ValueError: (pydantic's) no policy, or a policy or placement that is not a name or an import path.
    """

    SECTION: ClassVar[str] = "policy"

    policy: Any = Field(
        "krevat",
        validation_alias=AliasChoices("policy", "scheduler"),
        description="scheduling policy: a built-in or installed plug-in's name, or an import path package.module:Class",
    )
    policy_params: dict[str, Any] = Field(
        default_factory=dict, description="the policy's constructor parameters ([policy.params], --policy-param key=value)"
    )
    placement: Any = Field(
        None,
        description="placement: mfp, balancing, tiebreak, warm (on nodes first, with idle_off_after), a plug-in's name or an import path (default: the policy's own)",
    )
    placement_params: dict[str, Any] = Field(default_factory=dict, description="the placement's constructor parameters")
    backfill: bool = Field(strict=True, default=True, description="Krevat's backfilling")
    migration: bool = Field(strict=True, default=True, description="Krevat's migration")
    migration_cost: float = Field(0.0, ge=0, description="seconds per migrated job")
    priority: Literal["LPT", "SPT", "HPA", "LPA", "LA", "SA", "RANDOM"] = Field(
        "LPT", description="RIGID / MOLDABLE priority rule"
    )
    epsilon: float = Field(0.3, gt=0, description="ε of MT-ALLOTMENT (BATCH)")
    allotment: Literal["steps", "exact"] = Field(
        "steps", description="BATCH's MT-ALLOTMENT: steps (the simulator behind MOLDABLE Table 1) or exact (tight bisection)"
    )
    area_slack: float = Field(
        1.1, gt=0, description="BATCH: factor on the area in MT-ALLOTMENT's test (1.1 behind Table 1; 1 = tight)"
    )
    easy_extra: Literal["textbook", "pv-easy"] = Field(
        DEFAULT_EASY_EXTRA,
        description="EASY's extra nodes (FCFS-EASY, EASY-SJBF): textbook counts every job predicted to end by the shadow "
        "time; pv-easy stops at the job that makes the head fit (PV-EASY's count-based code)",
    )
    preemption: Literal["kill", "checkpoint", "suspend"] = Field("kill", description="what a preempted job keeps (PV-EASY)")
    time_cost: float = Field(60.0, ge=0, description="PV-EASY TimeCost: seconds per checkpoint / restart / resume")
    preemption_interval: float = Field(3600.0, gt=0, description="PV-EASY checkpoint interval, seconds of work")
    slowdown: float = Field(0.05, ge=0, description="PV-EASY virtualization slowdown (suspend mode)")

    @field_validator("policy", "placement")
    @classmethod
    def _policy_extension(cls, value, info):
        return extension_value(value, info.field_name)

    @field_serializer("policy", "placement", when_used="json")
    def _policy_extension_json(self, value):
        return extension_json(value)


class ResilienceSection(BaseModel):
    """The ``[resilience]`` section: periodic checkpoints (CKPT-MIG), preventive actions before foreseen failures, spares.

    Raises:
        ValueError: (pydantic's) a checkpoint interval that is not young, daly or positive seconds.
    """

    SECTION: ClassVar[str] = "resilience"

    checkpoint_interval: Literal["young", "daly"] | float | None = Field(None, description="periodic checkpoints (CKPT-MIG)")
    checkpoint_cost: float = Field(0.0, ge=0, description="C, seconds per checkpoint")
    recovery_time: float = Field(0.0, ge=0, description="R, seconds to restart from a checkpoint")
    preventive: Literal["none", "checkpoint", "migration"] = Field("none", description="action before a foreseen failure")
    preventive_migration_cost: float = Field(0.0, ge=0, description="M, seconds per preventive migration")
    spares: int = Field(0, ge=0, description="nodes held back as migration targets")
    prediction_accuracy: float = Field(1.0, ge=0, le=1, description="probability that a failure is foreseen")

    @field_validator("checkpoint_interval")
    @classmethod
    def _interval(cls, value):
        if isinstance(value, float) and not value > 0:
            raise ValueError(f"checkpoint interval must be positive seconds, young or daly, got {value}")
        return value
