"""Batch workload sources: jobs released at time 0, rigid or moldable.

``rigid`` (RIGID §5.1's synthetic set), ``moldable:<model>`` (MOLDABLE §5.1's set under a speedup model),
``table:<path>`` (a user's t_j(p) table), ``refcode:<path>`` (the RIGID reference code's job file) and
``steady-state`` (CKPT-MIG's job sizes).

References:
    RIGID §5.1; MOLDABLE §5.1; CKPT-MIG.
"""

from __future__ import annotations

import numpy as np

from torus_sim.core.errors import ConfigurationError, TorusSimError
from torus_sim.inputs.workload.batch import generate_rigid_set, moldable_workload, rigid_workload
from torus_sim.inputs.workload.source_api import BatchJobs, WorkloadContext, WorkloadSource, stable_hash

__all__ = ["MoldableSet", "RefcodeFile", "RigidSet", "SteadyState", "TimeTable"]


def _generated_set(
    kind: str, model: str, jobs: int | None, job_set: int, seed: int, nodes: int, processor_range, runtime_range, round_size
):
    """The job set of a generated batch (cached: the runs of a sweep share their sets)."""
    if kind == "rigid":
        count = jobs or 100
        low, high = processor_range or (max(1, round(0.005 * nodes)), max(1, round(0.2 * nodes)))
        rigid = generate_rigid_set(np.random.default_rng([seed, job_set, count]), count, (low, high), tuple(runtime_range))
        source = f"RIGID §5.1 synthetic set {job_set} (n = {count}, seed {seed})"
        return rigid_workload(rigid, source, nodes, round_size), rigid
    from torus_sim.inputs.workload.speedup import SPEEDUP_MODELS, generate_speedup_model

    if model not in SPEEDUP_MODELS:
        raise ConfigurationError(f"unknown speedup model {model!r}; choose from {', '.join(SPEEDUP_MODELS)}")
    count = jobs or 500
    speedup = generate_speedup_model(model, count, np.random.default_rng([seed, job_set, count, SPEEDUP_MODELS.index(model)]))
    source = f"MOLDABLE §5.1 synthetic set {job_set} ({model}, n = {count}, seed {seed})"
    return moldable_workload(speedup.times(nodes), source), speedup


def _generated(context: WorkloadContext, kind: str, model: str, default_nodes: int):
    """``(nodes, workload, set)`` of a generated batch for the run (the platform's nodes, else the paper's P)."""
    scenario = context.scenario
    nodes = context.nodes(default_nodes)
    batch, made = _generated_set(
        kind,
        model,
        scenario.jobs,
        scenario.job_set,
        scenario.seed,
        nodes,
        scenario.processor_range,
        scenario.runtime_range,
        context.round_size,
    )
    return nodes, batch, made


_GENERATED_FIELDS = ("jobs", "job_set", "seed", "processor_range", "runtime_range")
"""The scenario fields a generated batch reads (``from_scenario``)."""


class RigidSet(WorkloadSource):
    """RIGID §5.1's synthetic set: ``jobs`` jobs (100), p_j uniform in ``processor_range`` (0.5%-20% of P), t_j uniform in ``runtime_range``.

    References:
        RIGID §5.1 (n = 100, P = 10,000 by default).
    """

    name = "rigid"
    kind = "batch"
    from_scenario = _GENERATED_FIELDS

    def jobs(self, context: WorkloadContext) -> BatchJobs:  # noqa: D102
        nodes, batch, made = _generated(context, "rigid", "", 10000)
        made.check_fits(nodes)
        return BatchJobs(batch, made)


class MoldableSet(WorkloadSource):
    """MOLDABLE §5.1's set under a speedup model: ``moldable:roofline|communication|amdahl|mix-low-com|mix|power``.

    References:
        MOLDABLE §5.1 (n = 500, P = 7,500 by default; the six models).
    """

    name = "moldable"
    kind = "batch"
    from_scenario = _GENERATED_FIELDS
    takes_argument = True
    argument_form = "<model>"  # roofline, communication, amdahl, mix-low-com, mix, power
    platforms = ("cluster",)
    platform_refusal = "moldable jobs run on a cluster (any processor count); the torus offers only partition sizes"

    def jobs(self, context: WorkloadContext) -> BatchJobs:  # noqa: D102
        return BatchJobs(_generated(context, "moldable", self.argument, 7500)[1])


class TimeTable(MoldableSet):
    """A user's time table t_j(p), one job per line (``table:<path>``); ``monotonic`` checks it.

    References:
        MOLDABLE §3.1 (t_j(p) non-increasing, work non-decreasing: the monotonic model).
    """

    name = "table"
    argument_form = "<path>"  # a t_j(p) table
    reads_file = True
    from_scenario = ("monotonic",)

    @property
    def path(self) -> str:  # noqa: D102
        return self.argument

    def jobs(self, context: WorkloadContext) -> BatchJobs:  # noqa: D102
        from torus_sim.inputs.workload.speedup import read_time_table

        model = read_time_table(self.argument, context.scenario.monotonic)
        nodes = min(context.nodes(model.max_processors), model.max_processors)
        return BatchJobs(moldable_workload(model.times(nodes), f"table:{self.argument}"))

    def silent_error_seed(self, seed: int, job_set: int, count: int, rate: float) -> list[int]:
        """A table's draws are seeded by its path's stable hash (the same in every process)."""
        return [seed, job_set, count, 2, stable_hash(self.argument) % 1000]


class RefcodeFile(WorkloadSource):
    """The RIGID reference code's job file (``refcode:<path>``): its header's P and λ, one job per line.

    References:
        RIGID §5 (the published C++ code's input format).
    """

    name = "refcode"
    kind = "batch"
    from_scenario = ()
    takes_argument = True
    argument_form = "<path>"  # a reference-code job file
    reads_file = True

    @property
    def path(self) -> str:  # noqa: D102
        return self.argument

    def jobs(self, context: WorkloadContext) -> BatchJobs:  # noqa: D102
        from torus_sim.inputs.workload.refcode import read_rigid_jobs

        header, rigid = read_rigid_jobs(self.argument)
        nodes = context.nodes(header.processors)
        rigid.check_fits(nodes)
        batch = rigid_workload(rigid, f"refcode:{self.argument}", header.processors, context.round_size)
        return BatchJobs(batch, rigid, header.error_rate)

    @classmethod
    def declared_fields(cls, argument: str | None) -> dict:
        """The header's priority rule, V and the heuristic its flags select (``policy``).

        The reference code runs one heuristic, with the header's priority and V; a scenario that names
        none of them runs the same (an option given explicitly wins). Flags that select no RIGID
        heuristic (``batch = 1``) leave ``policy`` a sentence.
        """
        from torus_sim.inputs.workload.refcode import read_header

        try:
            header = read_header(argument)
        except (OSError, TorusSimError):
            return {}
        try:
            policy = header.heuristic()
        except ConfigurationError as error:
            policy = ConfigurationError(f"the job file's header names no heuristic to run ({error}); give --policy")
        return {"policy": policy, "priority": header.priority, "verification_time": header.verification_time}


class SteadyState(WorkloadSource):
    """CKPT-MIG's steady-state workload: ``jobs`` jobs (2,000) of the paper's sizes, all at 0.

    References:
        CKPT-MIG (the job-size distribution of the steady-state analysis).
    """

    name = "steady-state"
    kind = "batch"
    from_scenario = ("jobs", "job_set", "seed", "processor_range")

    def jobs(self, context: WorkloadContext) -> BatchJobs:  # noqa: D102
        from torus_sim.inputs.workload.synthetic import steady_state_workload

        scenario = context.scenario
        nodes = context.nodes(None)
        largest = scenario.processor_range[1] if scenario.processor_range else None
        batch = steady_state_workload(
            scenario.jobs or 2000, nodes, np.random.default_rng([scenario.seed, scenario.job_set]), max_job_size=largest
        )
        return BatchJobs(batch)
