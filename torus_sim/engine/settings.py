"""A run's engine settings, fixed when the model is built: how downtime, verification and passes behave, what is recorded."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["RunSettings", "StepLog"]


@dataclass(frozen=True, slots=True)
class RunSettings:
    """What the model's components read of how the run goes (validated by the model before it is made).

    Attributes:
        downtime: ``"transient"``, ``"log"`` or seconds >= 0 (a failed node's time down; BGL-FAULT §6.1).
        verification_time: V, seconds added to every attempt for the silent-error detector (RIGID §3.2).
        record: keep the per-job, per-attempt, per-pass and per-failure tables.
        fairness: add the head's fairness columns to the pass table (PV-EASY §3.1).
        each_event: a pass right after each submission and each attempt end (``event_order`` other than ``instant``).
        node_id_allocations: allocations are node id arrays on a cluster that tracks nodes (the pass normalises them).
        step_seconds: simulated seconds one Mesa step advances.
        plan_timeout: wall-clock seconds one pass may take, or None.
        event_order: ``instant``, ``each-event`` or ``each-event-submissions-first``.
        pass_interval: seconds: a pass asked by an event runs at least this long after the last pass (Slurm's
            ``sched_min_interval``, in seconds here), or None: at the instant it is asked.
    """

    downtime: str | float
    verification_time: float
    record: bool
    fairness: bool
    each_event: bool
    node_id_allocations: bool
    step_seconds: float
    plan_timeout: float | None
    event_order: str
    pass_interval: float | None = None


class StepLog:
    """What the last Mesa step did, for the browser view: the nodes that failed and the jobs started (a plain run keeps none).

    Attributes:
        on: :meth:`~torus_sim.engine.model.SchedulingModel.step` has run: the handlers note failures and starts.
        failed: node ids that failed during the last step.
        started: ``(job id, allocation)`` started during the last step.
    """

    __slots__ = ("failed", "on", "started")

    def __init__(self) -> None:
        self.on = False
        self.failed: list[int] = []
        self.started: list[tuple[int, object]] = []

    def begin(self) -> None:
        """A step begins: from now on failures and starts are noted, the last step's forgotten."""
        self.on = True
        self.failed = []
        self.started = []
