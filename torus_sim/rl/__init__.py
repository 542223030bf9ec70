"""Learning schedulers: a Gymnasium environment over the engine (install the ``rl`` extra).

Key components:
    SchedulingEnv: pick the next job to start, over windows of a real SWF log, on a torus or a
        cluster, with failures; registered as ``torus_sim/Scheduling-v0``.
    agents: reference agents (FCFS head-always, SJF) and a small numpy policy-gradient learner.

Without gymnasium (``pip install 'torus-sim[rl]'``) the package imports, and asking for the
environment raises a ConfigurationError that says what to install.
"""

try:
    import gymnasium
except ImportError:  # pragma: no cover - depends on the installation
    gymnasium = None

ENV_ID = "torus_sim/Scheduling-v0"
"""The id under which :class:`SchedulingEnv` is registered with ``gymnasium.make``."""

MISSING = "torus_sim.rl needs gymnasium: pip install 'torus-sim[rl]'"
"""The sentence said when gymnasium is not installed."""

if gymnasium is not None and ENV_ID not in gymnasium.registry:
    gymnasium.register(id=ENV_ID, entry_point="torus_sim.rl.env:SchedulingEnv")

__all__ = ["ENV_ID", "JOB_FEATURES", "MISSING", "REWARDS", "SchedulingEnv"]


def __getattr__(name: str):
    """The environment's names, imported when first asked for (they need gymnasium)."""
    if name in ("JOB_FEATURES", "REWARDS", "SchedulingEnv"):
        if gymnasium is None:
            from torus_sim.core.errors import ConfigurationError

            raise ConfigurationError(MISSING)
        from torus_sim.rl import env

        return getattr(env, name)
    raise AttributeError(f"module 'torus_sim.rl' has no attribute {name!r}")
