"""The scenario's ``[failures]`` and ``[silent_errors]`` sections: the fail-stop failures a run meets and its silent errors.

Parts of :class:`torus_sim.experiments.scenario.Scenario` (pydantic models of their own, mixed into the scenario with
the other parts' sections): their fields keep their flat names in scenario files, sweep grids and options.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field, field_validator, model_validator

__all__ = ["FailuresSection", "SilentErrorsSection"]


class FailuresSection(BaseModel):
    """The ``[failures]`` section: the failure source, how a real log meets the workload (BGL-FAULT §6.2), downtime.

    Raises:
        ValueError: (pydantic's) a negative failure count, a downtime that is not transient, log or seconds >= 0,
            fit_failures off with a fitted timing, ``mtbf`` without a per-node MTBF.
    """

    SECTION: ClassVar[str] = "failures"

    failures: str | None = Field(
        None,
        description="none, bundled, synthetic:N[:exponential|weibull|bursty], a log path or a registered log by name (cfdr:LANL: torus-sim data list; a whole number N reads as synthetic:N)",
    )
    failures_params: dict[str, Any] = Field(
        default_factory=dict,
        description="a plug-in failure source's constructor parameters ([failures.params], --failures-param)",
    )
    fit_failures: bool = Field(
        strict=True, default=True, description="map a real log's first..last failure onto the workload's submit span"
    )
    failure_timing: Literal["fit", "window", "as-logged"] | None = Field(
        None,
        description=(
            "fit: a real log's first..last failure laid over the whole workload (BGL-FAULT §6.2); window: its failures "
            "from failure_offset on, at their real rate; as-logged: its own times (default: window for the Mira log, else fit)"
        ),
    )
    failure_offset: float = Field(
        0.0, ge=0, description="window: seconds after the log's first failure where the workload starts"
    )
    reduced_failures: Literal["rate", "count"] = Field(
        "rate",
        description=(
            "with max_jobs: rate: the prefix meets the whole run's failures of its span (synthetic:N is N over the "
            "whole log); count: every failure squeezed into the prefix's span (torus-sim 0.1's rule)"
        ),
    )
    mira_io_drawers: bool = Field(
        strict=True, default=True, description="Mira log: an I/O-drawer event takes down the two midplanes of its rack"
    )
    mira_maintenance: bool = Field(
        strict=True, default=True, description="Mira log: maintenance periods are whole-machine downtime"
    )
    lanl_system: int = Field(20, ge=1, description="LANL system number")
    fta_system: str | None = Field(None, description="FTA .tab: keep nodes named <system>.<node> (all when unset)")
    fta_platform: int | None = Field(None, ge=0, description="FTA .tab: keep this platform_id (all when unset)")
    fta_nodes: int | None = Field(
        None, ge=1, le=10**7, description="FTA .tab: the system's node count, at most 10,000,000 (default: largest node + 1)"
    )
    downtime: Literal["transient", "log"] | float = Field("transient", description="transient, log or seconds")
    synthetic_model: Literal["exponential", "weibull", "bursty"] = Field("exponential", description="synthetic:N distribution")
    node_mtbf: float | None = Field(
        None, gt=0, description="μ per node, seconds: failures = mtbf draws exponential failures at this rate"
    )

    @field_validator("failures", mode="before")
    @classmethod
    def _failure_count(cls, value):
        """``failures = 500`` (a sweep's grid of counts, ``--failures 500``) is ``synthetic:500``: the header shows it so."""
        if isinstance(value, int) and not isinstance(value, bool):
            if value < 0:
                raise ValueError(f"a failure count must be >= 0, got {value}")
            return f"synthetic:{value}"
        return value

    @field_validator("fta_system", mode="before")
    @classmethod
    def _fta_system(cls, value):
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value  # --fta-system 20

    @field_validator("downtime")
    @classmethod
    def _downtime(cls, value):
        if isinstance(value, float) and not (value >= 0 and math.isfinite(value)):
            raise ValueError(f"downtime must be transient, log or seconds >= 0, got {value}")
        return value

    @model_validator(mode="after")
    def _timing_and_rate(self):
        if not self.fit_failures and self.failure_timing not in (None, "as-logged"):
            raise ValueError(
                f"fit_failures = false means the log's own times; failure_timing {self.failure_timing!r} says otherwise"
            )
        if self.failures == "mtbf" and self.node_mtbf is None:
            raise ValueError("failures = mtbf needs the per-node MTBF node_mtbf (seconds)")
        return self


class SilentErrorsSection(BaseModel):
    """The ``[silent_errors]`` section: silent errors drawn (RIGID §5.1, MOLDABLE §5.1) or read, and their detector.

    Raises:
        ValueError: (pydantic's) both q̄ and λ given.
    """

    SECTION: ClassVar[str] = "silent_errors"

    silent_errors: str | None = Field(None, description="none, drawn, or a reference-code failure file")
    mean_failure_probability: float | None = Field(None, ge=0, lt=1, description="q̄ of RIGID §5.1")
    error_rate: float | None = Field(None, ge=0, description="λ per second of work (MOLDABLE) or processor-second (RIGID)")
    scenarios: int = Field(1, ge=1, description="silent-error scenarios per run of a batch")
    verification_time: float = Field(0.0, ge=0, description="V, seconds per attempt for the detector")

    @model_validator(mode="after")
    def _one_rate(self):
        if self.mean_failure_probability is not None and self.error_rate is not None:
            raise ValueError("give the mean failure probability q̄ or the error rate λ, not both")
        return self

    @property
    def silent_spec(self) -> str:
        """The silent-error source after defaults: ``none``, ``drawn`` or a file."""
        if self.silent_errors is not None:
            return self.silent_errors
        return "drawn" if self.mean_failure_probability is not None or self.error_rate is not None else "none"
