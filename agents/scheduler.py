"""The scheduler agent: owns the wait queue and asks its policy what to start."""

from __future__ import annotations

from bisect import insort

import mesa

from torus_sim.job import Job
from torus_sim.policies.krevat import KrevatScheduler, Repack, Start

__all__ = ["SchedulerAgent"]


def _fcfs_key(job: Job) -> tuple[float, int]:
    return (job.submitted_at, job.job_id)


class SchedulerAgent(mesa.Agent):
    """Holds the wait queue in FCFS order and plans each scheduling pass with its policy.

    A killed job re-enters the queue at its FCFS position (its arrival time), as BGL-FAULT
    §6.1 restarts failed jobs.

    Args:
        model: the torus model (has ``platform``).
        policy: the scheduling policy (Krevat's FCFS + backfilling + migration by default).

    Attributes:
        queue: waiting jobs, ordered by (submitted_at, job_id).
        passes: number of scheduling passes run.

    References:
        BGL-FAULT §5.1, §6.1.
    """

    def __init__(self, model: mesa.Model, policy: KrevatScheduler) -> None:
        super().__init__(model)
        self.policy = policy
        self.queue: list[Job] = []
        self.passes = 0

    def enqueue(self, job: Job) -> None:
        """Put an arriving or killed job at its FCFS position."""
        insort(self.queue, job, key=_fcfs_key)

    def queued_demand(self) -> int:
        """Supernodes requested by the waiting jobs (BGL-FAULT §6.1's q(t), partition sizes)."""
        return sum(job.partition_size for job in self.queue)

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
        started = {id(action.job) for action in actions if isinstance(action, Start)}
        if started:
            self.queue = [job for job in self.queue if id(job) not in started]
        return actions
