"""Each job's draw per node: the machine's busy figure, a seeded uniform model, or a side file by job id.

A registry of sources (``job_power`` in a scenario selects one): ``machine``, ``uniform:LOW:HIGH``, a CSV
file ``job_id,watts_per_node``, an installed package's (entry points ``torus_sim.job_power``) or an
import path. SC'13 (Yang et al.) and JSSPP'13 (Zhou et al.) draw each job's power within a stated
range of per-rack draw (their "power profiles"); a log that records power gives it by job id.
"""

from __future__ import annotations

import numpy as np

from torus_sim.core.errors import ConfigurationError
from torus_sim.inputs.energy.pair_file import EnergyInput, PairFileError, built, read_pairs
from torus_sim.inputs.input_registry import InputRegistry

__all__ = ["JOB_POWER_SOURCES", "JobPowerSource", "job_power_source"]

JOB_POWER_STREAM = 45
"""The run's seed is combined with this number for the uniform model's generator (its own stream:
drawing job power changes no other random number of the run)."""


class JobPowerSource(EnergyInput):
    """Base of the job-power sources: a subclass returns each job's watts per node.

    Hooks a subclass overrides:
        watts(job_ids, busy_w, seed) -> float array, one per job id (watts per node, >= 0);
        describe() and load() (:class:`~torus_sim.inputs.energy.pair_file.EnergyInput`).
    """

    name = "job power"

    def watts(self, job_ids: np.ndarray, busy_w: float, seed: int) -> np.ndarray:
        """Watts per node of each job of ``job_ids`` (int array), given the node's busy draw and the run's seed."""
        raise NotImplementedError


class MachineBusy(JobPowerSource):
    """``machine``: every job draws the node's busy figure."""

    name = "machine"

    def watts(self, job_ids: np.ndarray, busy_w: float, seed: int) -> np.ndarray:  # noqa: D102
        return np.full(len(job_ids), float(busy_w))

    def describe(self) -> str:  # noqa: D102
        return "the node's busy draw for every job"


class Uniform(JobPowerSource):
    """``uniform:LOW:HIGH``: watts per node drawn per job, uniform in [LOW, HIGH], from the run's seed.

    The draw is per job id (sorted), from ``numpy.random.default_rng([seed, JOB_POWER_STREAM])``: the
    same job has the same power under every policy of a comparison.
    """

    name = "uniform"
    takes_argument = True
    argument_form = "LOW:HIGH (watts per node)"

    def __init__(self, argument: str | None = None) -> None:
        super().__init__(argument)
        try:
            low, high = (float(part) for part in str(argument).split(":"))
            if not (0 <= low <= high < float("inf")):
                raise ValueError
        except ValueError:
            raise ConfigurationError(
                f"job power {self.name}:{argument}: expected {self.name}:{self.argument_form.split(' ')[0]} with 0 <= LOW <= HIGH"
            ) from None
        self.low, self.high = low, high

    def watts(self, job_ids: np.ndarray, busy_w: float, seed: int) -> np.ndarray:  # noqa: D102
        order = np.argsort(job_ids, kind="stable")
        drawn = np.random.default_rng([int(seed), JOB_POWER_STREAM]).uniform(self.low, self.high, len(job_ids))
        result = np.empty(len(job_ids))
        result[order] = drawn
        return result

    def describe(self) -> str:  # noqa: D102
        return f"uniform in [{self.low:,.0f}, {self.high:,.0f}] W per node, per job"


class BusyShare(Uniform):
    """``busy-share:LOW:HIGH``: watts per node drawn per job, uniform in [LOW, HIGH] x the node's busy draw.

    The same draw as :class:`Uniform` (per job id, from the run's seed), in shares of the machine's busy
    figure, so one setting reads the same on BG/L, Mira and a cluster (``busy-share:0.5:1.5``: half to one
    and a half times it, the range docs/energy uses).
    """

    name = "busy-share"
    argument_form = "LOW:HIGH (shares of the node's busy draw)"

    def watts(self, job_ids: np.ndarray, busy_w: float, seed: int) -> np.ndarray:  # noqa: D102
        return super().watts(job_ids, busy_w, seed) * busy_w

    def describe(self) -> str:  # noqa: D102
        return f"uniform in [{self.low:g}, {self.high:g}] x the busy draw per node, per job"


class JobPowerFile(JobPowerSource):
    """A CSV file ``job_id,watts_per_node``: each listed job's draw; a job not listed draws the busy figure."""

    name = "job-power-file"
    reads_file = True
    suffixes = (".csv",)
    fallback = True

    def load(self) -> None:  # noqa: D102
        ids, watts, lines = read_pairs(str(self.argument), ("job_id", "watts_per_node"), "job power file")
        bad = (watts < 0) | (ids != np.round(ids))
        if bad.any():
            raise PairFileError(str(self.argument), int(lines[np.argmax(bad)]), "job ids must be whole numbers and watts >= 0")
        self.table = dict(zip(ids.astype(np.int64).tolist(), watts.tolist(), strict=True))
        self.missing = 0

    def watts(self, job_ids: np.ndarray, busy_w: float, seed: int) -> np.ndarray:  # noqa: D102
        result = np.array([self.table.get(int(job), np.nan) for job in job_ids], dtype=float)
        self.missing = int(np.isnan(result).sum())
        result[np.isnan(result)] = busy_w
        return result

    def describe(self) -> str:  # noqa: D102
        return f"{self.argument} ({len(self.table):,} jobs; {self.missing:,} not listed draw the busy figure)"


JOB_POWER_ENTRY_POINTS = "torus_sim.job_power"
"""The entry-point group installed packages add their job-power sources to."""

JOB_POWER_SOURCES: InputRegistry[JobPowerSource] = InputRegistry("job power", JOB_POWER_ENTRY_POINTS, JobPowerSource)
"""Job-power sources by name: the built-ins, installed plug-ins, import paths; a CSV file by suffix."""

for _source in (MachineBusy, Uniform, BusyShare, JobPowerFile):
    JOB_POWER_SOURCES.register(_source.name, _source)


def job_power_source(spec: str) -> JobPowerSource:
    """The source a scenario's ``job_power`` names (a fresh one).

    Raises:
        ConfigurationError: an unknown name, a bad argument, a class of the wrong kind.
        FileNotFoundError: a file that is not there.
        PairFileError: a malformed line of the file (the file and the line named).
    """
    return built(JOB_POWER_SOURCES, spec)
