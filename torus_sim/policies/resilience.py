"""Fault tolerance of running jobs: periodic checkpointing, preventive checkpointing, preventive migration.

A :class:`ResiliencePolicy` says how jobs protect their work (CKPT-MIG; BGL-FAULT §3.2, §8):

* **periodic checkpointing**: every ``T`` seconds of work a job saves its state (``C`` seconds); a
  killed job restarts from its last checkpoint after reading it back (``R`` seconds). ``T`` is given,
  or Young's period sqrt(2 C μ_j) / Daly's higher-order period, where μ_j = μ / s_j is the MTBF of the
  job's s_j supernodes and μ the per-supernode MTBF measured on the run's failure log;
* **preventive checkpointing**: a failure the predictor foresees is preceded by a checkpoint (``C``)
  that ends when the failure strikes, so only the checkpoint's time is lost;
* **preventive migration**: ``M`` seconds before a foreseen failure, the job moves to another
  partition (free supernodes, or the ``spares`` held back from scheduling) that avoids the failing
  supernode; if none exists the failure kills it as usual.

Predictions come from an oracle that detects each failure of the log with probability
``prediction_accuracy`` (1: the perfect prediction CKPT-MIG assumes), drawn once per failure with
the run's generator.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from torus_sim.core.errors import ConfigurationError

__all__ = ["PREVENTIVE_ACTIONS", "ResiliencePolicy", "daly_period", "young_period_seconds"]

PREVENTIVE_ACTIONS = ("none", "checkpoint", "migration")


def young_period_seconds(checkpoint_cost: float, mtbf: float) -> float:
    """Young's first-order checkpoint period sqrt(2 C μ), seconds.

    References:
        Young, CACM 1974; CKPT-MIG "Optimal period T (1/3)".
    """
    return math.sqrt(2.0 * checkpoint_cost * mtbf)


def daly_period(checkpoint_cost: float, mtbf: float) -> float:
    """Daly's higher-order checkpoint period, seconds.

    T = sqrt(2 C μ) (1 + sqrt(C / (2 μ)) / 3 + (C / (2 μ)) / 9) - C for C < 2 μ, else μ.

    References:
        Daly, "A higher order estimate of the optimum checkpoint interval for restart dumps",
        FGCS 22(3), 2006, Eq. 37.
    """
    if checkpoint_cost >= 2.0 * mtbf:
        return mtbf
    ratio = checkpoint_cost / (2.0 * mtbf)
    return math.sqrt(2.0 * checkpoint_cost * mtbf) * (1.0 + math.sqrt(ratio) / 3.0 + ratio / 9.0) - checkpoint_cost


@dataclass(frozen=True)
class ResiliencePolicy:
    """How running jobs protect their work.

    Attributes:
        checkpoint_interval: seconds of work between periodic checkpoints, ``"young"``, ``"daly"``,
            or None (no periodic checkpoints).
        checkpoint_cost: C, seconds per checkpoint (periodic or preventive).
        recovery_time: R, seconds to read a checkpoint back before a restart.
        preventive: ``none``, ``checkpoint`` or ``migration`` before predicted failures.
        migration_cost: M, seconds a preventive migration costs the job.
        spares: supernodes held back from scheduling, used only as migration targets.
        prediction_accuracy: probability that a failure is foreseen, in [0, 1].
        mtbf: per-supernode MTBF in seconds for Young's / Daly's period; measured on the run's
            failure log when None.

    Raises:
        ConfigurationError: a negative time, an unknown interval name or preventive action, a
            non-positive interval, or an accuracy outside [0, 1].
    """

    checkpoint_interval: float | str | None = None
    checkpoint_cost: float = 0.0
    recovery_time: float = 0.0
    preventive: str = "none"
    migration_cost: float = 0.0
    spares: int = 0
    prediction_accuracy: float = 1.0
    mtbf: float | None = None

    def __post_init__(self) -> None:
        for name in ("checkpoint_cost", "recovery_time", "migration_cost"):
            value = getattr(self, name)
            if not value >= 0 or not math.isfinite(value):
                raise ConfigurationError(f"{name.replace('_', ' ')} must be >= 0 seconds, got {value}")
        interval = self.checkpoint_interval
        if isinstance(interval, str):
            if interval not in ("young", "daly"):
                raise ConfigurationError(f"checkpoint interval must be seconds, 'young' or 'daly', got {interval!r}")
            if not self.checkpoint_cost > 0:
                raise ConfigurationError("Young's and Daly's periods need a checkpoint cost C > 0")
        elif interval is not None and not interval > 0:
            raise ConfigurationError(f"checkpoint interval must be positive, got {interval}")
        if self.preventive not in PREVENTIVE_ACTIONS:
            raise ConfigurationError(f"preventive action must be one of {PREVENTIVE_ACTIONS}, got {self.preventive!r}")
        if self.spares < 0:
            raise ConfigurationError(f"spares must be >= 0, got {self.spares}")
        if not 0.0 <= self.prediction_accuracy <= 1.0:
            raise ConfigurationError(f"prediction accuracy must lie in [0, 1], got {self.prediction_accuracy}")
        if self.mtbf is not None and not self.mtbf > 0:
            raise ConfigurationError(f"MTBF must be positive, got {self.mtbf}")

    @property
    def active(self) -> bool:
        """True when the policy changes anything (a run without it is BGL-FAULT's: no checkpoints)."""
        return self.checkpoint_interval is not None or self.preventive != "none" or self.spares > 0

    def interval_for(self, partition_size: int, supernode_mtbf: float) -> float | None:
        """The periodic checkpoint interval of a job on ``partition_size`` supernodes, seconds (None: off).

        Args:
            partition_size: s_j.
            supernode_mtbf: μ, seconds.

        Returns:
            The given interval, or Young's / Daly's period for μ_j = μ / s_j (CKPT-MIG "Failures":
            exponential failures, μ_j = μ / 2^j).
        """
        if self.checkpoint_interval is None:
            return None
        if isinstance(self.checkpoint_interval, str):
            mtbf = (self.mtbf or supernode_mtbf) / partition_size
            period = young_period_seconds if self.checkpoint_interval == "young" else daly_period
            return max(1e-6, period(self.checkpoint_cost, mtbf))
        return float(self.checkpoint_interval)
