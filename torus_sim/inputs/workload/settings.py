"""The scenario's ``[workload]`` section: which jobs a run replays or generates, and how a log is read.

A part of :class:`torus_sim.experiments.scenario.Scenario` (a pydantic model of its own, mixed into the scenario with
the other parts' sections): its fields keep their flat names in scenario files, sweep grids and options.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field, model_validator

from torus_sim.core.errors import ConfigurationError
from torus_sim.inputs.workload.sources import declared_by_workload, workload_source

__all__ = ["MAX_BATCH_JOBS", "WorkloadSection"]

MAX_BATCH_JOBS = 10**6
"""The most jobs of a generated batch (its per-job arrays and time tables stay within memory)."""


class WorkloadSection(BaseModel):
    """The ``[workload]`` section: the workload source, its load scale c (BGL-FAULT §6.2), its cleaning rules.

    Raises:
        ValueError: (pydantic's) bounds out of order, c and an offered load both given, a reference-code header
            that names nothing that can run.
    """

    SECTION: ClassVar[str] = "workload"

    workload: str = Field(
        "bundled",
        description="SWF path, a registered log by name (pwa:SDSC-SP2: torus-sim data list), bundled, rigid, moldable:<model>, table:<path>, refcode:<path>, steady-state",
    )
    load_scale: float = Field(
        1.0, ge=1e-6, le=1e6, description="c: multiplies runtimes and walltimes (BGL-FAULT §6.2), 1e-6 to 1e6"
    )
    offered_load: float | None = Field(
        None,
        ge=1e-6,
        le=1e6,
        description="choose c so that the cleaned workload's offered load is this (instead of load_scale), 1e-6 to 1e6",
    )
    max_jobs: int | None = Field(None, ge=1, description="use only the first N jobs")
    swf_rules: Literal["bgl-fault", "pv-easy", "cqsim", "rlscheduler"] | None = Field(
        None, description="SWF cleaning rules (default: bgl-fault on the torus, pv-easy on a cluster; cqsim: CQSim's filter)"
    )
    cancelled: Literal["run", "skip"] = Field(
        "run",
        description="a cancelled SWF line (status 5): run for its logged run time, or skipped (logs keep cancelled jobs' "
        "run times the machine never spent: RICC's overfill it)",
    )
    failed: Literal["run", "skip"] = Field(
        "run",
        description="a failed SWF line (status 0): run for its logged run time, or skipped (a site whose failed jobs "
        "never started; CTC-SP2's failed lines ran: 42% to their requested time)",
    )
    kill_at_walltime: bool | None = Field(
        None,
        strict=True,
        description="an SWF job that ran longer than it requested: killed at its requested time (true: runtimes cut "
        "there) or run for its logged run time (false); unset: the rules' reading (pv-easy and cqsim kill, bgl-fault "
        "and rlscheduler do not)",
    )
    shake: float | None = Field(
        None,
        gt=0,
        le=1e7,
        description="seconds: each job's submit time moved by a uniform draw in [-shake, +shake] (never before 0) from "
        "the run's seed, the jobs then in their new order (Tsafrir, Ouaknine and Feitelson's input shaking: replays "
        "under several seeds show what of a result is the input's chance); unset: as logged",
    )
    dependencies: float | None = Field(
        None,
        gt=0,
        le=1e7,
        description="seconds: the longest think time kept as a dependency: a job submitted within it of the logged end "
        "of its user's job that ended last before it is submitted that think time after that job's end in the run, "
        "not at its logged time (Zakay and Feitelson's dependency-preserving replay; an SWF log at c = 1; 1200 is the "
        "conventional 20-minute session break); unset: every job at its submit time",
    )
    jobs: int | None = Field(
        None,
        ge=1,
        le=MAX_BATCH_JOBS,
        description="n of a generated batch (RIGID 100, MOLDABLE 500, steady state 2000), at most 1,000,000",
    )
    job_set: int = Field(0, ge=0, description="which generated job set (batch experiments run several)")
    processor_range: tuple[int, int] | None = Field(None, description="p_j bounds of RIGID sets (default: 0.5% and 20% of P)")
    runtime_range: tuple[float, float] = Field((100.0, 20_000.0), description="t_j bounds of RIGID sets, seconds")
    monotonic: bool = Field(strict=True, default=False, description="check a table: workload against the monotonic model")
    workload_params: dict[str, Any] = Field(
        default_factory=dict,
        description="a plug-in workload source's constructor parameters ([workload.params], --workload-param)",
    )

    @model_validator(mode="before")
    @classmethod
    def _declared_by_the_workload(cls, data):
        """What the workload's input names (a reference-code header: heuristic, priority, V) where the scenario does not (RIGID §5)."""
        if not isinstance(data, dict):
            return data
        given = set(data) | ({"policy"} if "scheduler" in data else set())
        declared = declared_by_workload(data.get("workload", cls.model_fields["workload"].default))
        missing = {name: value for name, value in declared.items() if name not in given}
        refused = [f"{name}: {value}" for name, value in missing.items() if isinstance(value, ConfigurationError)]
        if refused:  # the input names nothing that can run and the scenario names nothing either
            raise ValueError("; ".join(refused))
        return {**data, **missing}

    @model_validator(mode="after")
    def _workload_ranges(self):
        """The generated sets' bounds are ordered; the load is given once (as c or as an offered load)."""
        if self.processor_range is not None and not 1 <= self.processor_range[0] <= self.processor_range[1]:
            raise ValueError(f"processor_range must be 1 <= low <= high, got {self.processor_range}")
        if not 0 < self.runtime_range[0] <= self.runtime_range[1]:
            raise ValueError(f"runtime_range must be 0 < low <= high, got {self.runtime_range}")
        if self.offered_load is not None and self.load_scale != 1.0:
            raise ValueError("give the load scale c or the offered load, not both (the offered load picks c)")
        return self

    @property
    def workload_path(self) -> str:
        """The file the workload comes from (the bundled log's path for ``bundled``), else the workload as given."""
        return workload_source(self.workload, self.workload_params).path or str(self.workload)
