"""The supernode agent: one 512-node block of the BG/L torus (BGL-FAULT §3.1)."""

from __future__ import annotations

from enum import Enum

import mesa

__all__ = ["SupernodeAgent", "SupernodeState"]


class SupernodeState(Enum):
    """What a supernode is doing."""

    FREE = "free"
    BUSY = "busy"
    DOWN = "down"


class SupernodeAgent(mesa.Agent):
    """One supernode of the torus, with its own failure and downtime history.

    Its occupancy (the job it runs, whether it is down) is read from the model's platform, the
    one place that holds it; the agent keeps what is its own: where it is and how it failed.

    Args:
        model: the torus model (has ``platform``).
        index: supernode index in ``[0, N)``.

    Attributes:
        index: supernode index.
        coordinate: ``(x, y, z)`` on the torus.
        failed_at: times of its failures, seconds, in order.
        jobs_killed: ids of the jobs its failures killed, in order.
        downtime: total seconds spent down (known repairs only).

    References:
        BGL-FAULT §3.1 (supernodes), §3.3 (nodes may fail at any time), §6.1.
    """

    def __init__(self, model: mesa.Model, index: int) -> None:
        super().__init__(model)
        self.index = index
        self.coordinate = model.platform.torus.coordinate(index)
        self.failed_at: list[float] = []
        self.jobs_killed: list[int] = []
        self.downtime = 0.0

    @property
    def state(self) -> SupernodeState:
        """FREE, BUSY or DOWN, from the platform."""
        platform = self.model.platform
        if platform.down_until[self.index] > -float("inf"):
            return SupernodeState.DOWN
        return SupernodeState.BUSY if platform.job_at[self.index] >= 0 else SupernodeState.FREE

    @property
    def job_id(self) -> int | None:
        """Id of the job it runs, or None."""
        job = int(self.model.platform.job_at[self.index])
        return job if job >= 0 else None

    def record_failure(self, at: float, killed_job: int | None) -> None:
        """Note a failure at time ``at`` (seconds) and the job it killed, if any."""
        self.failed_at.append(at)
        if killed_job is not None:
            self.jobs_killed.append(killed_job)
