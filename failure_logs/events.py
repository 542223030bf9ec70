"""The failure log every reader and generator produces: when which supernode failed.

A :class:`FailureLog` holds parallel arrays sorted by time (then supernode). ``repair_at`` is
the end of the downtime where the source records one (LANL) and NaN where it does not (the
BG/L RAS log, synthetic failures); the engine's downtime mode decides what NaN means.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from torus_sim.core.errors import ConfigurationError

__all__ = ["MAX_EPOCH", "FailureLog"]

MAX_EPOCH = 1e11
"""The latest time a failure-log reader accepts, seconds since 1970 (year 5138): a later one is no record's."""


@dataclass
class FailureLog:
    """Failures of supernodes over time.

    Attributes:
        failed_at: float64 array ``(F,)``, failure times in seconds, ascending.
        supernodes: int64 array ``(F,)``, the supernode index of each failure.
        repair_at: float64 array ``(F,)``, end of downtime in seconds, NaN when unknown.
        source: file path or generator description.
        sha256: hash of the source file ("" for generated logs).
        counts: what the reader skipped or noticed (``unknown_location``, ``not_fatal``, ...).

    Raises:
        ConfigurationError: arrays of different lengths, a negative supernode, or a repair
            before its failure.
    """

    failed_at: np.ndarray
    supernodes: np.ndarray
    repair_at: np.ndarray
    source: str = ""
    sha256: str = ""
    counts: Counter = field(default_factory=Counter)

    def __post_init__(self) -> None:
        self.failed_at = np.asarray(self.failed_at, dtype=np.float64)
        self.supernodes = np.asarray(self.supernodes, dtype=np.int64)
        self.repair_at = np.asarray(self.repair_at, dtype=np.float64)
        if not (self.failed_at.shape == self.supernodes.shape == self.repair_at.shape) or self.failed_at.ndim != 1:
            raise ConfigurationError("failure log arrays must be 1-D and of one length")
        if len(self.supernodes) and self.supernodes.min() < 0:
            raise ConfigurationError("failure log holds a negative supernode index")
        known = ~np.isnan(self.repair_at)
        if np.any(self.repair_at[known] < self.failed_at[known]):
            raise ConfigurationError("failure log holds a repair before its failure")
        order = np.lexsort((self.supernodes, self.failed_at))
        self.failed_at = self.failed_at[order]
        self.supernodes = self.supernodes[order]
        self.repair_at = self.repair_at[order]

    @classmethod
    def empty(cls, source: str = "none") -> FailureLog:
        """A log with no failures."""
        return cls(np.empty(0), np.empty(0, dtype=np.int64), np.empty(0), source=source)

    def __len__(self) -> int:
        return len(self.failed_at)

    @property
    def span(self) -> tuple[float, float]:
        """``(first failure, last failure)`` in seconds; ``(0, 0)`` when empty."""
        if not len(self):
            return (0.0, 0.0)
        return (float(self.failed_at[0]), float(self.failed_at[-1]))

    @property
    def downtime(self) -> np.ndarray:
        """Seconds each failure keeps its supernode down (NaN where the log does not say)."""
        return self.repair_at - self.failed_at

    def check_fits(self, n_supernodes: int) -> None:
        """Raise ConfigurationError if a failure names a supernode outside ``[0, n_supernodes)``."""
        if len(self) and self.supernodes.max() >= n_supernodes:
            raise ConfigurationError(
                f"failure log {self.source} names supernode {int(self.supernodes.max())}, the platform has {n_supernodes}"
            )
