"""The electricity price over a run: flat, time-of-use (on-peak hours cost a ratio more), or a price file.

A registry of tariffs (``price`` in a scenario selects one): ``flat:PRICE``,
``tou:OFF_PEAK:RATIO[:START-END]``, a CSV file ``time,price``, an installed package's (entry points
``torus_sim.tariffs``) or an import path. A tariff is piecewise constant: :meth:`Tariff.breakpoints`
lists where it may change within a span and :meth:`Tariff.price_at` its value from each of them on, so
the bill is integrated exactly (:mod:`torus_sim.metrics.energy`). Prices are per kWh in any currency.

Time-of-use pricing as in SC'13 (Yang et al.) and JSSPP'13 (Zhou et al.): a day of on-peak and
off-peak hours, the on-peak price a ratio times the off-peak one.
"""

from __future__ import annotations

import numpy as np

from torus_sim.core.errors import ConfigurationError
from torus_sim.inputs.energy.daily_hours import DailyHours
from torus_sim.inputs.energy.pair_file import EnergyInput, PairFileError, built, read_pairs
from torus_sim.inputs.input_registry import InputRegistry

__all__ = ["TARIFFS", "Tariff", "tariff"]


class Tariff(EnergyInput):
    """Base of the tariffs: a piecewise-constant price per kWh over simulated time.

    Hooks a subclass overrides:
        breakpoints(start, end, clock_start_hour) -> sorted times in (start, end) where the price may change.
        price_at(times, clock_start_hour) -> the price from each time on (float array);
        describe() and load() (:class:`~torus_sim.inputs.energy.pair_file.EnergyInput`).
    """

    name = "tariff"

    def breakpoints(self, start: float, end: float, clock_start_hour: float) -> np.ndarray:
        """Times strictly between ``start`` and ``end`` (seconds) where the price may change."""
        return np.empty(0)

    def price_at(self, times: np.ndarray, clock_start_hour: float) -> np.ndarray:
        """The price per kWh in force from each of ``times`` (seconds) on."""
        raise NotImplementedError


class Flat(Tariff):
    """``flat:PRICE``: one price per kWh at every hour."""

    name = "flat"
    takes_argument = True
    argument_form = "PRICE (per kWh)"

    def __init__(self, argument: str | None = None) -> None:
        super().__init__(argument)
        self.price = _price(argument, f"price flat:{argument}")

    def price_at(self, times: np.ndarray, clock_start_hour: float) -> np.ndarray:  # noqa: D102
        return np.full(len(times), self.price)

    def describe(self) -> str:  # noqa: D102
        return f"flat {self.price:g} per kWh"


class TimeOfUse(Tariff):
    """``tou:OFF_PEAK:RATIO[:START-END]``: on-peak hours START to END (default 8-20) cost RATIO x OFF_PEAK.

    Hours are of the day; t = 0 is ``clock_start_hour`` o'clock. START > END spans midnight (``22-6``).
    """

    name = "tou"
    takes_argument = True
    argument_form = "OFF_PEAK:RATIO[:START-END] (per kWh; on-peak hours, default 8-20)"

    def __init__(self, argument: str | None = None) -> None:
        super().__init__(argument)
        parts = str(argument).split(":")
        where = f"price tou:{argument}"
        if len(parts) not in (2, 3):
            raise ConfigurationError(f"{where}: expected tou:OFF_PEAK:RATIO or tou:OFF_PEAK:RATIO:START-END (0.05:3:8-20)")
        self.off_peak = _price(parts[0], where)
        self.ratio = _price(parts[1], where)
        self.hours = DailyHours(parts[2] if len(parts) == 3 else "8-20", where, "on-peak hours")

    def breakpoints(self, start: float, end: float, clock_start_hour: float) -> np.ndarray:  # noqa: D102
        return self.hours.breakpoints(start, end, clock_start_hour)

    def price_at(self, times: np.ndarray, clock_start_hour: float) -> np.ndarray:  # noqa: D102
        return np.where(self.hours.holds(times, clock_start_hour), self.off_peak * self.ratio, self.off_peak)

    def describe(self) -> str:  # noqa: D102
        return f"time of use: {self.off_peak:g} per kWh off-peak, {self.ratio:g}x on-peak {self.hours.describe()}"


class PriceFile(Tariff):
    """A CSV file ``time,price``: the price from each time (seconds since t = 0) until the next; the first before it."""

    name = "price-file"
    reads_file = True
    suffixes = (".csv",)
    fallback = True

    def load(self) -> None:  # noqa: D102
        times, prices, lines = read_pairs(str(self.argument), ("time", "price"), "price file")
        if (np.diff(times) <= 0).any():
            raise PairFileError(
                str(self.argument), int(lines[np.argmax(np.diff(times) <= 0) + 1]), "times must increase line by line"
            )
        if (prices < 0).any():
            raise PairFileError(str(self.argument), int(lines[np.argmax(prices < 0)]), "prices must be >= 0")
        self.times, self.prices = times, prices

    def breakpoints(self, start: float, end: float, clock_start_hour: float) -> np.ndarray:  # noqa: D102
        return self.times[(self.times > start) & (self.times < end)]

    def price_at(self, times: np.ndarray, clock_start_hour: float) -> np.ndarray:  # noqa: D102
        index = np.searchsorted(self.times, np.asarray(times, dtype=float), side="right") - 1
        return self.prices[np.clip(index, 0, len(self.prices) - 1)]

    def describe(self) -> str:  # noqa: D102
        return f"{self.argument} ({len(self.times):,} prices, {self.prices.min():g} to {self.prices.max():g} per kWh)"


def _price(text, where: str) -> float:
    try:
        value = float(text)
        if not 0 <= value < float("inf"):
            raise ValueError
    except (TypeError, ValueError):
        raise ConfigurationError(f"{where}: {text!r} is not a number >= 0") from None
    return value


TARIFF_ENTRY_POINTS = "torus_sim.tariffs"
"""The entry-point group installed packages add their tariffs to."""

TARIFFS: InputRegistry[Tariff] = InputRegistry("tariff", TARIFF_ENTRY_POINTS, Tariff)
"""Tariffs by name: the built-ins, installed plug-ins, import paths; a CSV file by suffix."""

for _tariff in (Flat, TimeOfUse, PriceFile):
    TARIFFS.register(_tariff.name, _tariff)


def tariff(spec: str) -> Tariff:
    """The tariff a scenario's ``price`` names (a fresh one).

    Raises:
        ConfigurationError: an unknown name or a bad argument.
        FileNotFoundError: a price file that is not there.
        PairFileError: a malformed line of the file (the file and the line named).
    """
    return built(TARIFFS, spec)
