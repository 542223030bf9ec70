"""Hours of every day on a run's clock: the on-peak hours of a tariff, the hours a power cap holds.

t = 0 is ``clock_start_hour`` o'clock (a scenario field). ``START-END`` is a span of hours of the day;
START > END spans midnight (``22-6``).

References:
    SC'13 (Yang et al.) and JSSPP'13 (Zhou et al.): on-peak and off-peak hours of a day.
"""

from __future__ import annotations

import numpy as np

from torus_sim.core.errors import ConfigurationError

__all__ = ["DAY", "DailyHours"]

DAY = 86_400.0
"""Seconds in a day."""


class DailyHours:
    """The hours START to END of every day.

    Args:
        text: ``"START-END"``, hours within 0-24 (fractions allowed), START != END.
        where: what the text belongs to, for the error's sentence (``price tou:0.05:3:8-20``).
        what: what the hours are, for the same sentence (``on-peak hours``).

    Raises:
        ConfigurationError: text not of that form.
    """

    def __init__(self, text: str, where: str, what: str = "hours") -> None:
        try:
            start, end = (float(hour) for hour in str(text).split("-"))
            if not (0 <= start < 24 and 0 <= end < 24 and start != end):
                raise ValueError
        except ValueError:
            raise ConfigurationError(f"{where}: {what} START-END within 0-24, START != END (8-20), got {text!r}") from None
        self.start_h, self.end_h = start, end

    def holds(self, times, clock_start_hour: float) -> np.ndarray:
        """Whether each of ``times`` (seconds since t = 0) falls within the hours: a bool array."""
        hour = np.mod(np.asarray(times, dtype=float) / 3600.0 + clock_start_hour, 24.0)
        if self.start_h < self.end_h:
            return (hour >= self.start_h) & (hour < self.end_h)
        return (hour >= self.start_h) | (hour < self.end_h)

    def breakpoints(self, start: float, end: float, clock_start_hour: float) -> np.ndarray:
        """The times strictly between ``start`` and ``end`` (seconds) where the hours begin or end, ascending."""
        offset = clock_start_hour * 3600.0
        marks = []
        for hour in (self.start_h, self.end_h):
            first = np.ceil((start + offset - hour * 3600.0) / DAY) * DAY + hour * 3600.0 - offset
            marks.append(np.arange(first, end, DAY))
        points = np.sort(np.concatenate(marks))
        return points[(points > start) & (points < end)]

    def describe(self) -> str:
        """``8:00-20:00``."""
        return f"{self.start_h:g}:00-{self.end_h:g}:00"
