"""A node agent: one supernode of the torus or one node of a cluster (BGL-FAULT §3.1)."""

from __future__ import annotations

import math
from enum import Enum

from torus_sim.engine.mesa_core import Agent, Model

__all__ = ["NodeAgent", "NodeState"]


class NodeState(Enum):
    """What a node is doing."""

    FREE = "free"
    BUSY = "busy"
    DOWN = "down"


class NodeAgent(Agent):
    """One node with its own failure and downtime history: a supernode of the torus or a cluster node.

    Its occupancy (the job it runs, whether it is down) is read from the model's platform, the
    one place that holds it; the agent keeps what is its own: where it is and how it failed.

    Args:
        model: the model (has ``platform``).
        index: node index in ``[0, N)``.

    Attributes:
        index: node index.
        coordinate: ``(x, y, z)`` on the torus; ``(row, column)`` of the drawing grid on a cluster.
        failed_at: times of its failures, seconds, in order.
        jobs_killed: ids of the jobs its failures killed, in order.
        downtime: total seconds spent down (known repairs only).
        down_since: when its current downtime began, seconds (NaN while it is up).

    References:
        BGL-FAULT §3.1 (supernodes), §3.3 (nodes may fail at any time), §6.1.
    """

    def __init__(self, model: Model, index: int) -> None:
        super().__init__(model)
        self.index = index
        self.coordinate = model.platform.coordinate(index)
        self.failed_at: list[float] = []
        self.jobs_killed: list[int] = []
        self.downtime = 0.0
        self.down_since = math.nan  # when its current downtime began (NaN: up)

    @property
    def state(self) -> NodeState:
        """FREE, BUSY or DOWN, from the platform."""
        platform = self.model.platform
        if platform.down_until[self.index] > -float("inf"):
            return NodeState.DOWN
        return NodeState.BUSY if platform.job_at[self.index] >= 0 else NodeState.FREE

    @property
    def power_state(self) -> str:
        """``busy``, ``down``, ``idle``, or with idle nodes switched off ``switching off`` / ``off`` / ``booting`` (issue 45 §1).

        Read from the platform and the model's :class:`~torus_sim.engine.power_states.NodePowerStates`
        (Batsim's power states: computing, idle, switching on, off); a booting node is also BUSY.
        """
        states = getattr(self.model, "power_states", None)
        switched = None if states is None else states.state(self.index, self.model.now)
        if switched is not None:
            return switched
        return {NodeState.FREE: "idle", NodeState.BUSY: "busy", NodeState.DOWN: "down"}[self.state]

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
