"""Speedup models of moldable jobs: the execution time t_j(p) of every job on p = 1..P processors.

Every model answers :meth:`SpeedupModel.times` for all jobs and all processor counts at once, as a
numpy array, so allocation strategies are vectorized (MOLDABLE §3.1). New models subclass
:class:`SpeedupModel`, override ``_times`` (and ``describe``), and register in :data:`SPEEDUP_MODELS`.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from torus_sim.core.errors import ConfigurationError

__all__ = [
    "SPEEDUP_MODELS",
    "AmdahlModel",
    "ArbitraryModel",
    "CommunicationModel",
    "MixModel",
    "MonotonicModel",
    "PowerModel",
    "RooflineModel",
    "SpeedupModel",
    "generate_speedup_model",
    "read_time_table",
]


def _positive(name: str, values) -> np.ndarray:
    array = np.asarray(values, dtype=float)
    if array.ndim != 1 or array.size == 0 or not np.all(np.isfinite(array)) or np.any(array <= 0):
        raise ConfigurationError(f"{name} must be a non-empty vector of positive finite numbers")
    return array


def _in_unit(name: str, values, count: int) -> np.ndarray:
    array = np.asarray(values, dtype=float)
    if array.shape != (count,) or np.any(array < 0) or np.any(array > 1):
        raise ConfigurationError(f"{name} must be {count} numbers in [0, 1]")
    return array


class SpeedupModel:
    """Base class: a set of n moldable jobs and their execution-time profile.

    Subclasses override ``_times(processors)``, returning float64 ``(n, len(processors))`` seconds.

    Attributes:
        name: the model's registry name.
        work: float64 ``(n,)``, w_j = t_j(1), the sequential execution time in seconds (for the
            table models, the first column).

    References:
        MOLDABLE §3.1.
    """

    name = "base"
    max_processors: int | None = None  # a table model knows t(p) up to its number of columns only

    def __init__(self, work) -> None:
        self.work = _positive("work", work)

    def __len__(self) -> int:
        return len(self.work)

    def times(self, processors: int) -> np.ndarray:
        """Execution times on 1..P processors.

        Args:
            processors: P >= 1.

        Returns:
            float64 ``(n, P)``; column p - 1 holds t_j(p) in seconds.

        Raises:
            ConfigurationError: P < 1, or P beyond a table model's columns.
        """
        if int(processors) != processors or processors < 1:
            raise ConfigurationError(f"P must be a positive integer, got {processors!r}")
        if self.max_processors is not None and processors > self.max_processors:
            raise ConfigurationError(f"the {self.name} table gives t(p) for p <= {self.max_processors}, P = {processors} asked")
        return self._times(np.arange(1, int(processors) + 1, dtype=float))

    def _times(self, p: np.ndarray) -> np.ndarray:
        raise NotImplementedError


class RooflineModel(SpeedupModel):
    """t_j(p) = w_j / min(p, p̄_j): linear speedup up to p̄_j processors (MOLDABLE §3.1)."""

    name = "roofline"

    def __init__(self, work, max_parallelism) -> None:
        super().__init__(work)
        self.max_parallelism = _positive("max_parallelism", max_parallelism)

    def _times(self, p):
        return self.work[:, None] / np.minimum(p[None, :], self.max_parallelism[:, None])


class CommunicationModel(SpeedupModel):
    """t_j(p) = w_j / p + (p - 1) c_j, with c_j >= 0 the per-processor overhead (MOLDABLE §3.1)."""

    name = "communication"

    def __init__(self, work, overhead) -> None:
        super().__init__(work)
        self.overhead = np.asarray(overhead, dtype=float)
        if self.overhead.shape != self.work.shape or np.any(self.overhead < 0):
            raise ConfigurationError("overhead must be one number >= 0 per job")

    def _times(self, p):
        return self.work[:, None] / p[None, :] + (p[None, :] - 1) * self.overhead[:, None]


class AmdahlModel(SpeedupModel):
    """t_j(p) = w_j ((1 - γ_j) / p + γ_j), γ_j the sequential fraction in [0, 1] (MOLDABLE §3.1)."""

    name = "amdahl"

    def __init__(self, work, sequential_fraction) -> None:
        super().__init__(work)
        self.sequential_fraction = _in_unit("sequential_fraction", sequential_fraction, len(self.work))

    def _times(self, p):
        gamma = self.sequential_fraction[:, None]
        return self.work[:, None] * ((1 - gamma) / p[None, :] + gamma)


class MixModel(SpeedupModel):
    """t_j(p) = w_j (1 - γ_j) / min(p, p̄_j) + w_j γ_j + (p - 1) c_j (MOLDABLE §3.1, §4.3.4)."""

    name = "mix"

    def __init__(self, work, sequential_fraction, max_parallelism, overhead) -> None:
        super().__init__(work)
        self.sequential_fraction = _in_unit("sequential_fraction", sequential_fraction, len(self.work))
        self.max_parallelism = _positive("max_parallelism", max_parallelism)
        self.overhead = np.asarray(overhead, dtype=float)
        if self.overhead.shape != self.work.shape or np.any(self.overhead < 0):
            raise ConfigurationError("overhead must be one number >= 0 per job")

    def _times(self, p):
        w, gamma = self.work[:, None], self.sequential_fraction[:, None]
        return (
            w * (1 - gamma) / np.minimum(p[None, :], self.max_parallelism[:, None])
            + w * gamma
            + (p[None, :] - 1) * self.overhead[:, None]
        )


class PowerModel(SpeedupModel):
    """t_j(p) = w_j / p^δ_j, δ_j in [0, 1] (MOLDABLE §3.1, §4.3.5)."""

    name = "power"

    def __init__(self, work, exponent) -> None:
        super().__init__(work)
        self.exponent = _in_unit("exponent", exponent, len(self.work))

    def _times(self, p):
        """w_j / p^δ_j with p^δ_j from the C library's ``pow``, one element at a time (0.27 s for 500 x 7,500).

        numpy's vectorized power is another function on CPUs with AVX-512 (Intel's SVML): about 5% of
        the entries differ in the last bit, and BATCH's allotment compares sums of these times with whole
        step budgets, so a last-bit difference moved MOLDABLE Table 1's BATCH rows between machines.
        ``math.pow`` gives the same table on every CPU (the values numpy gives without AVX-512).
        """
        bases = p.tolist()
        powered = np.empty((len(self.work), len(bases)))
        for row, exponent in enumerate(self.exponent.tolist()):
            powered[row] = np.fromiter(map(math.pow, bases, itertools.repeat(exponent)), dtype=np.float64, count=len(bases))
        return self.work[:, None] / powered


class ArbitraryModel(SpeedupModel):
    """A table of execution times, no constraint on its shape (MOLDABLE §3.1, "arbitrary").

    Args:
        table: float ``(n, P_max)``; column p - 1 holds t_j(p) in seconds, all positive and finite.

    Raises:
        ConfigurationError: a non-positive or non-finite time, or a table that is not 2-D.
    """

    name = "arbitrary"

    def __init__(self, table) -> None:
        table = np.asarray(table, dtype=float)
        if table.ndim != 2 or table.size == 0:
            raise ConfigurationError("a speedup table must be 2-D: one row per job, one column per processor count")
        bad = np.argwhere(~np.isfinite(table) | (table <= 0))
        if len(bad):
            row, column = bad[0]
            raise ConfigurationError(f"job {row}: t({column + 1}) = {table[row, column]!r}, times must be positive")
        super().__init__(table[:, 0])
        self.table = table
        self.max_processors = table.shape[1]

    def _times(self, p):
        return self.table[:, : len(p)].copy()


class MonotonicModel(ArbitraryModel):
    """A table of execution times checked to be monotonic (MOLDABLE §3.1, §4.3.6).

    t_j(p) must not increase and the area p t_j(p) must not decrease with p.

    Raises:
        ConfigurationError: the first job and processor count where the table breaks either rule.
    """

    name = "monotonic"

    def __init__(self, table, tolerance: float = 1e-9) -> None:
        super().__init__(table)
        times = self.table
        areas = times * np.arange(1, times.shape[1] + 1)
        rising = np.argwhere(times[:, 1:] > times[:, :-1] * (1 + tolerance))
        if len(rising):
            row, column = rising[0]
            raise ConfigurationError(
                f"job {row} is not monotonic: t({column + 2}) = {float(times[row, column + 1])!r} > t({column + 1}) = {float(times[row, column])!r}"
            )
        falling = np.argwhere(areas[:, 1:] < areas[:, :-1] * (1 - tolerance))
        if len(falling):
            row, column = falling[0]
            raise ConfigurationError(
                f"job {row} is not monotonic: area {column + 2} x t({column + 2}) = {float(areas[row, column + 1])!r} "
                f"< {column + 1} x t({column + 1}) = {float(areas[row, column])!r}"
            )


SPEEDUP_MODELS = ("roofline", "communication", "amdahl", "mix-low-com", "mix", "power")
"""The six generated models of MOLDABLE §5.1, in Table 1's order."""


@dataclass(frozen=True)
class WorkRange:
    """Bounds of the uniform draw of the work w_j, seconds (MOLDABLE §5.1: [5000, 4e6])."""

    low: float = 5_000.0
    high: float = 4_000_000.0


def generate_speedup_model(name: str, count: int, rng: np.random.Generator, work: WorkRange = WorkRange()) -> SpeedupModel:
    """Draw n jobs of one speedup model with MOLDABLE §5.1's parameter distributions.

    - w_j ~ U[5000, 4e6] seconds;
    - roofline: p̄_j integer ~ U[100, 4000];
    - communication: c_j = α 2^r, r integer ~ U[0, 3], α ~ U[1, 2];
    - Amdahl: γ_j = α / 10^r, r integer ~ U[2, 7], α ~ U[0, 10];
    - mix-low-com: the three above together; mix: the same with 3 c_j;
    - power: δ_j ~ U[0, 1].

    Args:
        name: one of :data:`SPEEDUP_MODELS`.
        count: n, number of jobs (>= 1).
        rng: the generator (draws in a fixed order, so a seed gives one job set).
        work: bounds of w_j.

    Returns:
        The model holding the n jobs.

    Raises:
        ConfigurationError: unknown model name or n < 1.

    References:
        MOLDABLE §5.1, "Speedup Models".
    """
    if name not in SPEEDUP_MODELS:
        raise ConfigurationError(f"unknown speedup model {name!r}; choose from {', '.join(SPEEDUP_MODELS)}")
    if count < 1:
        raise ConfigurationError(f"the number of jobs must be >= 1, got {count}")
    w = rng.uniform(work.low, work.high, count)
    if name == "roofline":
        return RooflineModel(w, rng.integers(100, 4000, count, endpoint=True))
    if name == "communication":
        return CommunicationModel(w, _overhead(rng, count))
    if name == "amdahl":
        return AmdahlModel(w, _sequential_fraction(rng, count))
    if name == "power":
        return PowerModel(w, rng.uniform(0.0, 1.0, count))
    gamma = _sequential_fraction(rng, count)
    bar_p = rng.integers(100, 4000, count, endpoint=True)
    overhead = _overhead(rng, count) * (3.0 if name == "mix" else 1.0)
    return MixModel(w, gamma, bar_p, overhead)


def _overhead(rng: np.random.Generator, count: int) -> np.ndarray:
    return rng.uniform(1.0, 2.0, count) * 2.0 ** rng.integers(0, 3, count, endpoint=True)


def _sequential_fraction(rng: np.random.Generator, count: int) -> np.ndarray:
    return np.minimum(rng.uniform(0.0, 10.0, count) / 10.0 ** rng.integers(2, 7, count, endpoint=True), 1.0)


def read_time_table(path, monotonic: bool = False) -> SpeedupModel:
    """Read a table of execution times: one line per job, t_j(1), t_j(2), ..., t_j(P_max) in seconds.

    Values are separated by commas or white space; ``#`` starts a comment line.

    Args:
        path: the file.
        monotonic: check the monotonic model (t non-increasing, area non-decreasing) and return a
            :class:`MonotonicModel`; otherwise an :class:`ArbitraryModel`.

    Returns:
        The model.

    Raises:
        FileNotFoundError: no such file.
        InputFileError: a directory, or a truncated or corrupt compressed file.
        JobSetFormatError: a non-number, a time <= 0, a line of another length than the first, no
            line at all, or (``monotonic``) a job that breaks the model; the message names the file
            and line.

    References:
        MOLDABLE §3.1 (monotonic and arbitrary models).
    """
    from pathlib import Path

    from torus_sim.core.errors import JobSetFormatError
    from torus_sim.core.files import input_text
    from torus_sim.inputs.workload.swf import MAX_SECONDS

    path = Path(path)
    rows, lines = [], []
    for line_no, line in enumerate(input_text(path, "time table").splitlines(), start=1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        try:
            row = [float(value) for value in text.replace(",", " ").split()]
        except ValueError:
            raise JobSetFormatError(path, line_no, f"times must be numbers: {text[:60]!r}") from None
        if rows and len(row) != len(rows[0]):
            raise JobSetFormatError(path, line_no, f"expected {len(rows[0])} times (one per processor count), got {len(row)}")
        if not all(0 < value <= MAX_SECONDS for value in row):  # also refuses NaN
            raise JobSetFormatError(path, line_no, f"times must be positive and at most {MAX_SECONDS:.0e} s")
        rows.append(row)
        lines.append(line_no)
    if not rows:
        raise JobSetFormatError(path, 1, "no job line")
    try:
        return MonotonicModel(rows) if monotonic else ArbitraryModel(rows)
    except ConfigurationError as error:
        job = int(str(error).split()[1]) if str(error).startswith("job ") else 0
        raise JobSetFormatError(path, lines[job], str(error)) from None
