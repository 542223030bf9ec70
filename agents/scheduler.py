"""The scheduler agent: owns the wait queue and asks its policy what to start."""

from __future__ import annotations

import mesa

from torus_sim.job import Job
from torus_sim.policies.krevat import KrevatScheduler, Repack, Start
from torus_sim.wait_queue import WaitQueue

__all__ = ["SchedulerAgent"]


class SchedulerAgent(mesa.Agent):
    """Holds the wait queue in FCFS order and plans each scheduling pass with its policy.

    A killed job re-enters the queue at its FCFS position (its arrival time), as BGL-FAULT
    §6.1 restarts failed jobs.

    Args:
        model: the torus model (has ``platform``).
        policy: the scheduling policy (Krevat's FCFS + backfilling + migration by default).

    Attributes:
        queue: the wait queue, FCFS by (submitted_at, job_id), indexed by partition size.
        passes: number of scheduling passes run.

    References:
        BGL-FAULT §5.1, §6.1.
    """

    def __init__(self, model: mesa.Model, policy: KrevatScheduler) -> None:
        super().__init__(model)
        self.policy = policy
        self.queue = WaitQueue()
        self.passes = 0

    def enqueue(self, job: Job) -> None:
        """Put an arriving or killed job at its FCFS position."""
        self.queue.add(job)

    def queued_demand(self) -> int:
        """Supernodes requested by the waiting jobs (BGL-FAULT §6.1's q(t), partition sizes)."""
        return self.queue.demand

    def plan_pass(self, now: float, running: list[Job]) -> list[Start | Repack]:
        """Plan a pass and take the jobs it starts off the queue.

        Args:
            now: current time, seconds.
            running: the running jobs.

        Returns:
            The actions for the engine to apply, in order.
        """
        self.passes += 1
        actions = self.policy.plan(now, self.queue, running, self.model.platform)
        for action in actions:
            if isinstance(action, Start):
                self.queue.remove(action.job)
        return actions
