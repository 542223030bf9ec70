"""The scenario's ``[predictors]`` section: the failure predictor (BGL-FAULT §4) and the runtime predictor.

A part of :class:`torus_sim.experiments.scenario.Scenario` (a pydantic model of its own, mixed into the scenario with
the other parts' sections): its fields keep their flat names in scenario files, sweep grids and options.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field, field_serializer, field_validator

from torus_sim.policies.settings import extension_json, extension_value

__all__ = ["PredictorsSection"]


class PredictorsSection(BaseModel):
    """The ``[predictors]`` section: which failure and runtime predictors the policy asks, and their settings.

    Raises:
        ValueError: (pydantic's) a predictor that is not a name or an import path.
    """

    SECTION: ClassVar[str] = "predictors"

    predictor: Any = Field(
        None,
        description="failure predictor: null, oracle-confidence, oracle-accuracy, history, recency, a plug-in or an import path (default: the placement's)",
    )
    predictor_params: dict[str, Any] = Field(default_factory=dict, description="the failure predictor's constructor parameters")
    confidence: float = Field(0.1, ge=0, le=1, description="a of the oracle-confidence predictor (BGL-FAULT §4.1)")
    accuracy: float = Field(0.1, ge=0, le=1, description="a of the oracle-accuracy predictor (BGL-FAULT §4.2)")
    false_positive_rate: float = Field(0.0, ge=0, le=1, description="p_f+ of the oracle-accuracy predictor")
    pf_form: Literal["product", "max"] = Field("product", description="balancing: P_f = 1 - prod(1 - p_n) or max p_n")
    tie_candidates: Literal["best-mfp", "all"] = Field(
        "best-mfp", description="tie-break: the partitions the alarm decides among (best-mfp: MFP first; all: alarm first)"
    )
    tie_all_alarmed: Literal["random", "mfp"] = Field(
        "random", description="tie-break when every candidate rings: a random one, or the MFP choice"
    )
    runtime_predictor: Any = Field(
        None, description="estimate, last, exact, virtual:x, a plug-in or an import path (default: the walltime)"
    )
    runtime_predictor_params: dict[str, Any] = Field(
        default_factory=dict, description="the runtime predictor's constructor parameters"
    )

    @field_validator("predictor", "runtime_predictor")
    @classmethod
    def _predictor_extension(cls, value, info):
        return extension_value(value, info.field_name)

    @field_serializer("predictor", "runtime_predictor", when_used="json")
    def _predictor_extension_json(self, value):
        return extension_json(value)
