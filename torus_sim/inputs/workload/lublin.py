"""The Lublin-Feitelson workload model of rigid parallel jobs, generated lazily and seeded (``workload = "lublin"``).

Lublin and Feitelson's model (JPDC 63(11), 2003) draws, for each job, its arrival (a gamma-distributed
inter-arrival time at rush hours, stretched through a daily cycle of 48 half-hour buckets whose weights are
a gamma density's mass), its size (serial with one probability, a power of two with another, else
``round(2^u)`` with ``u`` two-stage uniform) and its run time (a hyper-gamma of the log run time whose mixing
probability falls linearly with the size). Batch and interactive jobs have their own parameters; each job is
of the type whose next arrival comes first. The parameters are the model's published ones, fitted to
128-node machines; on a machine of ``P`` nodes the size distribution's upper and middle points move by
``log2(P) - 7`` (the model's advice: ``UHi`` is the log2 of the machine, ``UMed`` a fixed step below it).

:func:`lublin_chunks` yields the jobs :data:`CHUNK_JOBS` at a time as SWF columns: a run's memory for the
generator is one chunk, and job ``i`` is the same whatever reads it. Every draw comes from the scenario's
seed: the arrivals of each type from their own stream (``SeedSequence([seed, 2003, 0, type])``), the sizes
and run times of each chunk from one of that chunk (``[seed, 2003, 1, chunk]``).

References:
    U. Lublin and D. G. Feitelson, "The workload on parallel supercomputers: modeling the characteristics of
    rigid jobs", J. Parallel Distrib. Comput. 63(11), 2003; the authors' generator ``m_lublin99.c`` (the
    parameter values and the arrival process's buckets), as published with the model.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from torus_sim.inputs.workload.jobs import CLEANING_FIELDS

__all__ = ["BATCH", "CHUNK_JOBS", "INTERACTIVE", "TYPELESS", "LublinType", "lublin_chunks", "lublin_table"]

CHUNK_JOBS = 65_536
"""Jobs generated at a time (a constant: job i's size and run time come from the stream of its chunk)."""

BUCKETS = 48
SECONDS_IN_BUCKET = 86_400 // BUCKETS
CYCLIC_DAY_START = 11
LONGEST_LOG_RUNTIME = 12.0  # exp(12) s, about two days: a longer draw is drawn again
LONGEST_LOG_GAP = 13.0  # exp(13) s, about five days between two arrivals of one type


@dataclass(frozen=True)
class LublinType:
    """The model's parameters for one type of job (the names of the authors' generator).

    Attributes:
        serial: probability of a serial (one-node) job.
        pow2: probability of a parallel job whose size is a power of two.
        ulow, umed, uhi, uprob: the two-stage uniform of log2(size): [ulow, umed] with probability uprob,
            else [umed, uhi] (fitted to 128 nodes: ``uhi`` 7 for batch jobs).
        a1, b1, a2, b2: the two gammas (shape, scale) of the log run time.
        pa, pb: the first gamma's probability, ``pa x size + pb`` clipped to [0, 1].
        aarr, barr: the gamma (shape, scale) of the log inter-arrival time at rush hours (aarr already times
            the rush-to-all ratio ARAR).
        anum, bnum: the gamma (shape, scale) whose mass over each hour of the (shifted) day weighs its bucket.
    """

    serial: float
    pow2: float
    ulow: float
    umed: float
    uhi: float
    uprob: float
    a1: float
    b1: float
    a2: float
    b2: float
    pa: float
    pb: float
    aarr: float
    barr: float
    anum: float
    bnum: float


BATCH = LublinType(
    0.2927, 0.6686, 1.2, 5.0, 7.0, 0.875, 6.57, 0.823, 639.1, 0.0156, -0.003, 0.6986, 6.0415 * 1.0519, 0.8531, 6.1271, 5.2740
)
"""Batch jobs (queue 1 in the SWF)."""
INTERACTIVE = LublinType(
    0.1541, 0.625, 1.0, 3.0, 5.5, 0.705, 3.8351, 0.6605, 7.073, 0.6856, -0.0118, 0.9156, 6.5510 * 0.9797, 0.6621, 8.9186, 3.6680
)
"""Interactive jobs (queue 0)."""
TYPELESS = LublinType(
    0.244, 0.576, 0.8, 4.5, 7.0, 0.86, 4.2, 0.94, 312.0, 0.03, -0.0054, 0.78, 10.2303 * 1.0225, 0.4871, 8.1737, 3.9631
)
"""The whole sample's fit, without types (``typed=False``)."""


def _bucket_weights(kind: LublinType) -> np.ndarray:
    """Each half-hour's share of the arrivals, divided by the mean share: shape (48,)."""
    from scipy.special import gammainc  # the gamma CDF (scipy.stats' gamma.cdf calls it; stats' import is 46 MiB more)

    buckets = np.arange(CYCLIC_DAY_START, BUCKETS + CYCLIC_DAY_START)  # the day shifted: its busy hours in the middle
    mass = gammainc(kind.anum, (buckets + 0.5) / kind.bnum) - gammainc(kind.anum, (buckets - 0.5) / kind.bnum)
    weights = np.empty(BUCKETS)
    weights[(buckets - 1) % BUCKETS] = mass
    return weights / weights.mean()


class _Arrivals:
    """One type's arrival process: the next arrival time (whole seconds) and the state of its daily cycle."""

    def __init__(self, kind: LublinType, rng: np.random.Generator) -> None:
        self.kind, self.rng = kind, rng
        self.weights = _bucket_weights(kind).tolist()
        self.bucket, self.points, self.remainder, self.time = 0, 0.0, 0.0, 0
        self._gaps: list[float] = []
        self.advance()

    def _gap(self) -> float:
        if not self._gaps:
            draws = self.rng.gamma(self.kind.aarr, self.kind.barr, 4096)
            self._gaps = np.exp(draws[draws <= LONGEST_LOG_GAP]).tolist()[::-1]
        return self._gaps.pop()

    def advance(self) -> None:
        """Draw this type's next arrival: the gap's points are paid bucket by bucket through the day."""
        weights = self.weights
        self.points += self._gap() / SECONDS_IN_BUCKET
        bucket, elapsed = self.bucket, 0.0
        while self.points > weights[bucket]:
            self.points -= weights[bucket]
            bucket = (bucket + 1) % BUCKETS
            elapsed += SECONDS_IN_BUCKET
        remainder = self.points / weights[bucket]
        elapsed += SECONDS_IN_BUCKET * (remainder - self.remainder)
        self.remainder, self.bucket = remainder, bucket
        self.time = int(self.time + elapsed)  # whole seconds, as the authors' generator keeps them


def _sizes(kind: LublinType, count: int, processors: int, rng: np.random.Generator) -> np.ndarray:
    shift = math.log2(processors) - 7.0  # the model is fitted to 128 nodes
    uhi, umed = kind.uhi + shift, kind.umed + shift
    ulow = min(kind.ulow, umed)
    pick = rng.random(count)
    low = rng.random(count) <= kind.uprob
    exponent = np.where(low, rng.uniform(ulow, umed, count), rng.uniform(umed, max(uhi, umed), count))
    exponent = np.where(pick <= kind.serial + kind.pow2, np.floor(exponent + 0.5), exponent)  # powers of two
    sizes = np.floor(2.0**exponent + 0.5)
    sizes = np.where(pick <= kind.serial, 1.0, sizes)
    return np.clip(sizes, 1, processors)


def _runtimes(kind: LublinType, sizes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    first = np.clip(kind.pa * sizes + kind.pb, 0.0, 1.0)
    log_runtime = np.full(len(sizes), np.inf)
    todo = np.arange(len(sizes))
    while len(todo):  # a draw above LONGEST_LOG_RUNTIME is drawn again
        which = rng.random(len(todo)) < first[todo]
        draw = np.where(which, rng.gamma(kind.a1, kind.b1, len(todo)), rng.gamma(kind.a2, kind.b2, len(todo)))
        log_runtime[todo] = draw
        todo = todo[draw > LONGEST_LOG_RUNTIME]
    return np.floor(np.exp(log_runtime))


def lublin_chunks(jobs: int, processors: int, seed: int = 0, typed: bool = True) -> Iterator[np.ndarray]:
    """The model's jobs in arrival order, :data:`CHUNK_JOBS` at a time, as SWF columns.

    Args:
        jobs: how many jobs (>= 1).
        processors: the machine's nodes P (>= 1): sizes are 1..P.
        seed: the run's seed.
        typed: batch and interactive jobs with their own parameters (the model's default); False: the
            whole sample's fit (:data:`TYPELESS`).

    Yields:
        float ``(k, 7)`` tables, one column per field of :data:`~torus_sim.inputs.workload.jobs.CLEANING_FIELDS`: job id
        (1..jobs), submit time (whole seconds from midnight of day 0), run time (whole seconds), allocated
        processors, requested processors and requested time -1 (unknown: the walltime is the run time), user -1.

    Raises:
        ValueError: ``jobs`` or ``processors`` below 1.
    """
    if jobs < 1 or processors < 1:
        raise ValueError(f"the Lublin-Feitelson model needs jobs >= 1 and processors >= 1, got {jobs} and {processors}")
    kinds = (INTERACTIVE, BATCH) if typed else (TYPELESS,)
    arrivals = [_Arrivals(kind, _stream(seed, 0, index)) for index, kind in enumerate(kinds)]
    for first in range(0, jobs, CHUNK_JOBS):
        count = min(CHUNK_JOBS, jobs - first)
        submit = np.empty(count)
        types = np.zeros(count, dtype=np.int64)
        for row in range(count):
            kind = 1 if len(arrivals) == 2 and arrivals[1].time < arrivals[0].time else 0  # ties: interactive
            process = arrivals[kind]
            submit[row], types[row] = process.time, kind
            process.advance()
        # a whole chunk's sizes and run times for every type, then each row takes its type's: job i's values do
        # not depend on how many jobs the run asks for (a prefix of a longer run is the shorter run)
        rng = _stream(seed, 1, first // CHUNK_JOBS)
        sizes = np.empty(count)
        runtimes = np.empty(count)
        for kind_index, kind in enumerate(kinds):
            every_size = _sizes(kind, CHUNK_JOBS, processors, rng)
            every_runtime = _runtimes(kind, every_size, rng)
            rows = np.flatnonzero(types == kind_index)
            sizes[rows], runtimes[rows] = every_size[rows], every_runtime[rows]
        table = np.full((count, len(CLEANING_FIELDS)), -1.0)
        column = {name: index for index, name in enumerate(CLEANING_FIELDS)}
        table[:, column["job_id"]] = np.arange(first + 1, first + count + 1)
        table[:, column["submit_time"]] = submit
        table[:, column["run_time"]] = runtimes
        table[:, column["allocated_processors"]] = sizes
        yield table


def _stream(seed: int, purpose: int, index: int) -> np.random.Generator:
    """The generator of one purpose (0: a type's arrivals, 1: a chunk's sizes and run times) and index, from the seed."""
    return np.random.default_rng(np.random.SeedSequence([int(seed), 2003, purpose, index]))


def lublin_table(jobs: int, processors: int, seed: int = 0, typed: bool = True) -> np.ndarray:
    """:func:`lublin_chunks` as one table in memory, shape ``(jobs, 7)`` (a run streams the chunks to its trace instead).

    Args and raises: as :func:`lublin_chunks`. References: Lublin and Feitelson, JPDC 63(11), 2003.
    """
    return np.concatenate(list(lublin_chunks(jobs, processors, seed, typed)))
