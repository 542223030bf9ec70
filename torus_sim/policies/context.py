"""What a policy may read of its run when it is attached: the context, never the model.

A policy is attached once, before any event (:meth:`~torus_sim.policies.base.Policy.attach`), with a
:class:`PolicyContext`: the run's jobs as a read-only table, the run's random generator, the platform,
the workload's facts, the failure log and the power inputs. During a pass it sees the engine's
:class:`~torus_sim.engine.view.SchedulingView`. Neither hands out the engine: a policy returns actions
and the engine applies them (ARCHITECTURE, "a policy sees a view").

The context's names are the ones the plug-in guide documented for ``attach(model)`` (``jobs``, ``workload``,
``rng``, ``platform``, ``failure_log``, ``power``), so a plug-in written against them runs unchanged;
anything else of the engine is not there, and asking for it is an ``AttributeError`` that says so.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from failure_logs.events import FailureLog
from torus_sim.core.job import Job

__all__ = ["JobTable", "PolicyContext", "PolicyView", "WaitingJobs", "WorkloadFacts"]


class JobTable(Sequence):
    """The run's jobs in rank order (the workload's priority order), read-only: no item can be set, added or removed.

    The jobs themselves are the engine's: a policy reads their fields (``job_id``, ``rank``, ``submitted_at``,
    ``runtime``, ``walltime``, ``partition_size``, ...) and never assigns them (the guard refuses a plug-in's
    writes while its code runs).

    Args:
        jobs: the engine's list of jobs (held, not copied).
    """

    __slots__ = ("_jobs",)

    def __init__(self, jobs: list[Job]) -> None:
        self._jobs = jobs

    def __getitem__(self, index):
        """The job at ``index`` (a slice gives a list)."""
        return self._jobs[index]

    def __len__(self) -> int:
        return len(self._jobs)

    def __iter__(self) -> Iterator[Job]:
        return iter(self._jobs)

    def __repr__(self) -> str:
        return f"JobTable({len(self._jobs):,} jobs)"


@dataclass(frozen=True)
class WorkloadFacts:
    """What a policy may know of the workload as a whole.

    Attributes:
        source: where the jobs came from (a file's path, a generator's name), for messages.
        kind: ``online`` (jobs submitted over time) or ``batch`` (released at 0).
        span: ``(first submit, last submit)`` in seconds.
        times: a moldable batch's time tables t_j(p), float ``(n, P)`` (column p - 1), or None for rigid jobs.
        processors: the machine size the workload names (SWF ``MaxProcs``), or None.
        load_scale: c, the factor on run and requested times (BGL-FAULT §6.2).
    """

    source: str
    kind: str
    span: tuple[float, float]
    times: np.ndarray | None = None
    processors: int | None = None
    load_scale: float = 1.0

    @classmethod
    def of(cls, workload) -> WorkloadFacts:
        """The facts of a :class:`~torus_sim.inputs.workload.jobs.Workload`."""
        return cls(
            str(workload.source),
            workload.kind,
            workload.span,
            workload.times,
            getattr(workload, "processors", None),
            getattr(workload, "load_scale", 1.0),
        )


@dataclass(frozen=True)
class PolicyContext:
    """What a policy reads when it is attached to a run (once, before any event).

    Attributes:
        jobs: the run's jobs in rank order (:class:`JobTable`, read-only).
        rng: the run's ``numpy.random.Generator`` (the one generator of the run: draw from it for
            RANDOM priorities and the like, never seed another from the clock).
        platform: the platform (``kind``, ``capacity``; on a torus its ``torus`` and partition ``table``).
        workload: the workload's facts (:class:`WorkloadFacts`).
        failure_log: the run's fail-stop failures (:class:`~failure_logs.events.FailureLog`, empty when none):
            what a failure predictor is attached to.
        power: the run's :class:`~torus_sim.inputs.energy.power_inputs.PowerInputs` when it accounts for power, else None.
        power_states: the nodes' switch-off states (:class:`~torus_sim.engine.power_states.NodePowerStates`)
            when idle nodes are switched off, else None (a placement that declares ``uses_power_states`` reads it).

    References:
        ARCHITECTURE ("a policy reads a read-only view ... it never advances time and never mutates state").
    """

    jobs: JobTable
    rng: np.random.Generator
    platform: object
    workload: WorkloadFacts
    failure_log: FailureLog
    power: object = None
    power_states: object = None

    def __getattr__(self, name: str):
        raise AttributeError(
            f"a policy's attach gets the run's context (jobs, rng, platform, workload, failure_log, power, power_states), "
            f"not the engine: {name!r} is not part of it"
        )


class WaitingJobs(Protocol):
    """What a policy reads of the wait queue during a pass (the engine's :class:`~torus_sim.engine.wait_queue.WaitQueue`).

    The policy's side of the port: the policies name this protocol, the engine's queue implements it, and no
    policy module imports the engine (the layers run inputs -> platform + policy -> engine).

    Attributes:
        head: the first waiting job in the queue's order, or None.
        indexed: each size's waiting jobs are searchable by remaining time (the engine keeps a size index).
        demand: nodes requested by all waiting jobs (BGL-FAULT §6.1's q(t)).
    """

    head: Job | None
    indexed: bool
    demand: int

    def __len__(self) -> int: ...  # noqa: D105

    def __iter__(self) -> Iterator[Job]: ...  # noqa: D105

    def __getitem__(self, index): ...  # noqa: D105

    def __contains__(self, job: Job) -> bool: ...  # noqa: D105

    def jobs(self) -> list[Job]:
        """The waiting jobs in queue order (a copy)."""
        ...

    def sizes(self) -> list[int]:
        """Partition sizes of the waiting jobs, ascending."""
        ...

    def least_walltime(self, size: int) -> float:
        """The shortest walltime among the waiting jobs of one partition size (seconds; inf when none waits)."""
        ...

    def of_size(self, size: int) -> list[Job]:
        """Waiting jobs of one partition size, in queue order (read only)."""
        ...


class PolicyView(Protocol):
    """What a policy sees during a pass (the engine's :class:`~torus_sim.engine.view.SchedulingView` implements it).

    The policy's side of the port (ARCHITECTURE: "a policy sees a view, never the model"): the policies annotate
    with this protocol and never import the engine.

    Attributes:
        now: current simulated time, seconds.
        queue: the waiting jobs in the policy's order (:class:`WaitingJobs`).
        running: running jobs by job id, a read-only mapping.
        platform: the platform (the protocol of :mod:`torus_sim.machine.platforms.base`), read only.
        returned: jobs a failure or a preemption sent back to the queue since the last pass.
        ended: ``(job, failed)`` of the attempt that just ended, in passes after an attempt's end; else None.
        rng: the run's one generator.
        verification_time: V, seconds the engine adds to every attempt.

    References:
        PV-EASY §4 (a scheduler sees the queue, the running jobs and their predictions); BGL-FAULT §5.
    """

    now: float
    queue: WaitingJobs
    running: object
    platform: object
    returned: list
    ended: tuple | None
    rng: np.random.Generator
    verification_time: float

    def free_count(self) -> int:
        """Nodes free now."""
        ...

    def down_count(self) -> int:
        """Nodes down now."""
        ...

    def predicted_end(self, job: Job) -> float:
        """When the scheduler expects a running job to end, seconds."""
        ...

    def predicted_remaining(self, job: Job) -> float:
        """Wall time a waiting job is expected to hold its nodes once started, seconds."""
        ...

    def snapshot(self):
        """A planning copy of the occupancy now."""
        ...

    def shadow(self, need: int, releasing, vacated=(), together: bool = True, above_rank: int | None = None):
        """When ``need`` nodes fit, releasing running jobs at their predicted ends: ``(time, occupancy)``."""
        ...

    def place(self, job: Job, keep_room: tuple | None = None, placement=None, size: int | None = None, taken: tuple = ()):
        """Where ``job`` can start now, as the policy's placement chooses, or None."""
        ...
