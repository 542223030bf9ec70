"""Learning schedulers: a Gymnasium environment over the engine (install the ``rl`` extra).

Key components:
    SchedulingEnv: pick the next job to start, over windows of a real SWF log, on a torus or a
        cluster, with failures; registered as ``torus_sim/Scheduling-v0``.
    agents: reference agents (FCFS head-always, SJF) and a small numpy policy-gradient learner.
"""

try:
    import gymnasium
except ImportError as error:  # pragma: no cover - depends on the installation
    from torus_sim.errors import ConfigurationError

    raise ConfigurationError("torus_sim.rl needs gymnasium: pip install 'torus-sim[rl]'") from error

from torus_sim.rl.env import JOB_FEATURES, REWARDS, SchedulingEnv

ENV_ID = "torus_sim/Scheduling-v0"
"""The id under which :class:`SchedulingEnv` is registered with ``gymnasium.make``."""

if ENV_ID not in gymnasium.registry:
    gymnasium.register(id=ENV_ID, entry_point="torus_sim.rl.env:SchedulingEnv")

__all__ = ["ENV_ID", "JOB_FEATURES", "REWARDS", "SchedulingEnv"]
