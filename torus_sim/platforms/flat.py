"""The flat platform: P identical processors, no topology.

A job holds a number of processors; any free processors will do (RIGID §3.1, MOLDABLE §3.1).
"""

from __future__ import annotations

from torus_sim.errors import ConfigurationError, SimulationError

__all__ = ["FlatPlatform"]


class FlatPlatform:
    """Occupancy of P identical processors.

    Args:
        processors: P, the number of processors (>= 1).

    Attributes:
        free: processors free now.
        held: job id -> processors that job holds.

    Raises:
        ConfigurationError: P < 1.

    References:
        RIGID §3.1, MOLDABLE §3.1 (P identical processors; Eq. 2 of RIGID: the running jobs never
        hold more than P).
    """

    def __init__(self, processors: int) -> None:
        if int(processors) != processors or processors < 1:
            raise ConfigurationError(f"the number of processors P must be a positive integer, got {processors!r}")
        self._capacity = int(processors)
        self.free = self._capacity
        self.held: dict[int, int] = {}

    @property
    def capacity(self) -> int:
        """P."""
        return self._capacity

    def free_count(self) -> int:
        """Processors free now."""
        return self.free

    def find(self, size: int) -> int | None:
        """``size`` if that many processors are free now, else None."""
        return size if 0 < size <= self.free else None

    def allocate(self, allocation: int, job_id: int) -> None:
        """Give ``allocation`` processors to a job.

        Raises:
            SimulationError: fewer than ``allocation`` processors are free, or the job already holds some.
        """
        if allocation > self.free or allocation < 1:
            raise SimulationError(f"job {job_id} asks {allocation} processors, {self.free} of {self._capacity} are free")
        if job_id in self.held:
            raise SimulationError(f"job {job_id} already holds {self.held[job_id]} processors")
        self.free -= allocation
        self.held[job_id] = allocation

    def release(self, allocation: int, job_id: int) -> None:
        """Take back the processors a job holds.

        Raises:
            SimulationError: the job does not hold exactly ``allocation`` processors.
        """
        if self.held.get(job_id) != allocation:
            raise SimulationError(f"job {job_id} holds {self.held.get(job_id, 0)} processors, not {allocation}")
        del self.held[job_id]
        self.free += allocation
