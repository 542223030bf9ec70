"""A machine power cap: a share of the machine's busy draw, at every hour or only in hours of the day.

The run's cap (``power_cap``, ``power_cap_hours`` in the scenario's ``[power]`` section) is what the
``power-cap`` policy keeps the machine under and what the summary measures every policy against
(``hours_over_cap``, ``energy_over_cap_kwh``): a cap held only from 14:00 to 20:00 is a utility's
demand-response window; outside its hours there is no cap.

References:
    SC'13 (Yang et al.) and JSSPP'13 (Zhou et al.) §1 (a power budget over hours of the day on Blue
    Gene); Bodas et al., E2SC 2014 (a power-capped batch scheduler).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from torus_sim.energy.daily_hours import DailyHours

__all__ = ["PowerCap"]


@dataclass(frozen=True)
class PowerCap:
    """A power cap: ``share`` x N x busy_w watts, in ``hours`` of each day (every hour when None).

    Args:
        share: the cap as a share of the machine's busy draw (N nodes x busy_w), > 0.
        hours: the hours of the day it holds (the run's clock), or None: always.
    """

    share: float
    hours: DailyHours | None = None

    @classmethod
    def of(cls, share: float | None, hours: str | None) -> PowerCap | None:
        """The cap a scenario's ``power_cap`` / ``power_cap_hours`` give, or None without a share.

        Raises:
            ConfigurationError: hours not of the form ``START-END``.
        """
        if share is None:
            return None
        return cls(float(share), None if hours is None else DailyHours(hours, "power_cap_hours", "the cap's hours"))

    def watts(self, nodes: int, busy_w: float) -> float:
        """The cap's level, watts, on a machine of ``nodes`` nodes drawing ``busy_w`` each when busy."""
        return self.share * nodes * busy_w

    def at(self, times, nodes: int, busy_w: float, clock_start_hour: float) -> np.ndarray:
        """The cap in force from each of ``times`` (seconds) on, watts (inf outside its hours): a float array."""
        times = np.asarray(times, dtype=float)
        level = np.full(len(times), self.watts(nodes, busy_w))
        if self.hours is not None:
            level[~self.hours.holds(times, clock_start_hour)] = np.inf
        return level

    def breakpoints(self, start: float, end: float, clock_start_hour: float) -> np.ndarray:
        """Times strictly between ``start`` and ``end`` (seconds) where the cap begins or ends (none for a constant cap)."""
        if self.hours is None:
            return np.empty(0)
        return self.hours.breakpoints(start, end, clock_start_hour)

    def describe(self, nodes: int, busy_w: float) -> str:
        """``cap 0.8 x the busy draw (1,146.9 kW), 14:00-20:00``."""
        when = f", {self.hours.describe()} of each day" if self.hours is not None else ""
        return f"cap {self.share:g} x the busy draw ({self.watts(nodes, busy_w) / 1e3:,.1f} kW){when}"
