"""Mesa agents of the torus model.

Key components:
    SupernodeAgent: one supernode, its state (from the platform) and failure history.
    SchedulerAgent: the wait queue and the scheduling policy.
"""

from agents.scheduler import SchedulerAgent
from agents.supernode import SupernodeAgent, SupernodeState

__all__ = ["SchedulerAgent", "SupernodeAgent", "SupernodeState"]
