"""The scenario's ``[metrics]`` section: how a run's schedule is measured (bounded slowdown's Γ, the fairness reading).

A part of :class:`torus_sim.experiments.scenario.Scenario` (a pydantic model of its own, mixed into the scenario with
the other parts' sections): its fields keep their flat names in scenario files, sweep grids and options.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, Field

from torus_sim.metrics.readings import DEFAULT_FAIRNESS_READING

__all__ = ["MetricsSection"]


class MetricsSection(BaseModel):
    """The ``[metrics]`` section: Γ and the form of bounded slowdown, the fairness record and its reading (PV-EASY)."""

    SECTION: ClassVar[str] = "metrics"

    gamma: float = Field(10.0, gt=0, description="Γ of bounded slowdown, seconds")
    bsld_form: Literal["standard", "printed"] = Field("standard", description="bounded slowdown max/max or BGL-FAULT's max/min")
    fairness: bool | None = Field(
        strict=True,
        default=None,
        description="record the head's fairness each pass (default: online workloads on a cluster; costs ~15% on the torus)",
    )
    fairness_reading: Literal["backfilled", "shadow"] = Field(
        DEFAULT_FAIRNESS_READING,
        description="who delays a blocked job (PV-EASY Tables 1-2): the jobs backfilled past it, or every lower-priority job",
    )
    min_delay: float = Field(0.0, ge=0, description="count a delay or a delay from reservation only above this, seconds")
    bound_verification: bool = Field(
        strict=True,
        default=False,
        description="L(f) counts V in every attempt (default: RIGID Eq. 5-6's L(f) on t_j alone, as the reference code)",
    )
