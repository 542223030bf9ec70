"""Mesa agents of the scheduling model.

Key components:
    NodeAgent: one node (a supernode of the torus or a cluster node), its state (from the platform)
        and failure history.
    SchedulerAgent: the wait queue and the scheduling policy.
"""

from agents.node import NodeAgent, NodeState
from agents.scheduler import SchedulerAgent

__all__ = ["NodeAgent", "NodeState", "SchedulerAgent"]
