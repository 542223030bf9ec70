"""A machine power cap: a share of the machine's busy draw, at every hour, in hours of the day, or a schedule file.

The run's cap (``power_cap``, ``power_cap_hours`` in the scenario's ``[power]`` section, or a file of
levels over time, ``power_cap_file``: :class:`CapSchedule`) is what the
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

from torus_sim.inputs.energy.daily_hours import DAY, DailyHours
from torus_sim.inputs.energy.pair_file import PairFileError, read_pairs

__all__ = ["CapSchedule", "PowerCap"]


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
    def of(cls, share: float | None, hours: str | None, path: str | None = None) -> PowerCap | CapSchedule | None:
        """The cap a scenario's ``power_cap`` / ``power_cap_hours`` or ``power_cap_file`` give, or None without either.

        Raises:
            ConfigurationError: hours not of the form ``START-END``.
            FileNotFoundError, InputFileError, PairFileError: a missing, empty or malformed cap file (file and line named).
        """
        if path is not None:
            return CapSchedule.read(path)
        if share is None:
            return None
        return cls(float(share), None if hours is None else DailyHours(hours, "power_cap_hours", "the cap's hours"))

    def next_change(self, after: float, clock_start_hour: float) -> float | None:
        """The first time after ``after`` (seconds) where the cap begins or ends; None for a cap at every hour."""
        changes = self.breakpoints(after, after + 2 * DAY, clock_start_hour)
        return float(changes[0]) if len(changes) else None

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


@dataclass(frozen=True, eq=False)
class CapSchedule:
    """A power cap over time from a CSV file ``time,share``.

    From each time (seconds since t = 0) until the next the cap is ``share`` x N x busy_w watts; before
    the first time, the first share. A share of 10 or more never binds.

    Attributes:
        path: the file.
        times: float ``(k,)``, ascending, seconds.
        shares: float ``(k,)``, each > 0.

    References:
        Issue 45 §3 ("a machine power cap (constant or a schedule)"); a utility's or a centre's power budget
        over the days, as SC'13 §1 describes Blue Gene's.
    """

    path: str
    times: np.ndarray
    shares: np.ndarray

    @classmethod
    def read(cls, path: str) -> CapSchedule:
        """Read and check a cap file (header ``time,share``; ``#`` lines and blank lines skipped).

        Raises:
            FileNotFoundError: no file there.
            InputFileError: no data line.
            PairFileError: a line without two finite numbers, times not increasing, a share <= 0 (file and line named).
        """
        times, shares, lines = read_pairs(str(path), ("time", "share"), "power cap file")
        steps = np.diff(times) <= 0
        if steps.any():
            raise PairFileError(str(path), int(lines[np.argmax(steps) + 1]), "times must increase line by line")
        if (shares <= 0).any():
            raise PairFileError(str(path), int(lines[np.argmax(shares <= 0)]), "a cap's share must be > 0 (of the busy draw)")
        return cls(str(path), times, shares)

    @property
    def share(self) -> float:
        """The lowest share of the schedule (the policy checks it is above the idle draw)."""
        return float(self.shares.min())

    def watts(self, nodes: int, busy_w: float) -> float:
        """The schedule's lowest level, watts (the summary's ``cap_kw``)."""
        return self.share * nodes * busy_w

    def at(self, times, nodes: int, busy_w: float, clock_start_hour: float) -> np.ndarray:
        """The cap in force from each of ``times`` (seconds) on, watts: a float array."""
        index = np.searchsorted(self.times, np.asarray(times, dtype=float), side="right") - 1
        return self.shares[np.clip(index, 0, len(self.shares) - 1)] * nodes * busy_w

    def breakpoints(self, start: float, end: float, clock_start_hour: float) -> np.ndarray:
        """The file's times strictly between ``start`` and ``end`` (seconds)."""
        return self.times[(self.times > start) & (self.times < end)]

    def next_change(self, after: float, clock_start_hour: float) -> float | None:
        """The file's first time after ``after`` (seconds), or None past its last."""
        later = self.times[self.times > after]
        return float(later[0]) if len(later) else None

    def describe(self, nodes: int, busy_w: float) -> str:
        """``cap from caps.csv: 12 levels, 0.7 to 1 x the busy draw (1,003.5 to 1,433.6 kW)``."""
        low, high = self.shares.min(), self.shares.max()
        return (
            f"cap from {self.path}: {len(self.shares):,} levels, {low:g} to {high:g} x the busy draw "
            f"({low * nodes * busy_w / 1e3:,.1f} to {high * nodes * busy_w / 1e3:,.1f} kW)"
        )
