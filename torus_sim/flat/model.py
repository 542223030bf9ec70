"""The engine for flat platforms: a Mesa model whose DEVS simulator runs the attempts of a batch.

All jobs are released at time 0 (RIGID §3.1, MOLDABLE §3.1). A policy starts attempts
(:meth:`FlatModel.start`); the engine holds the clock and the event list, and at the end of every
attempt it runs the silent-error detector: the attempt failed while the job has failed fewer than
f_j times, then it succeeded. The policy is told and decides what starts next.
"""

from __future__ import annotations

from dataclasses import dataclass

import mesa
import numpy as np
import pandas as pd
from mesa.experimental.devs import DEVSimulator

from torus_sim.errors import ConfigurationError, SimulationError
from torus_sim.platforms.flat import FlatPlatform
from torus_sim.policies.flat_policy import FlatPolicy

__all__ = ["FlatModel", "FlatPolicy", "FlatRunResult"]

_ATTEMPT_COLUMNS = ["job", "attempt", "start_at", "end_at", "processors", "failed"]


@dataclass(frozen=True)
class FlatRunResult:
    """What one run of a batch under one failure scenario gave.

    Attributes:
        makespan: end of the last successful attempt, seconds (RIGID Eq. 1, MOLDABLE Eq. 1).
        attempts: number of attempts run (n + Σ f_j).
        events: completion events the engine ran.
        attempt_table: one row per attempt (job, attempt, start_at, end_at, processors, failed), or
            None when the model was built with ``record_attempts=False``.
    """

    makespan: float
    attempts: int
    events: int
    attempt_table: pd.DataFrame | None


class FlatModel(mesa.Model):
    """Run a batch of jobs that fail silently on P identical processors.

    Args:
        processors: P.
        failures: int ``(n,)``, the failure scenario f (f_j >= 0 failed attempts before success).
        policy: the scheduling policy (:class:`FlatPolicy`).
        verification_time: V, seconds added to every attempt for the error detector (0 in the papers).
        seed: seed of the model's generator (``self.rng``; the RANDOM priority draws from it).
        record_attempts: keep one DataCollector table row per attempt (off in large experiments).

    Raises:
        ConfigurationError: a negative failure count or V < 0.

    References:
        RIGID §3.2 (silent errors detected at the end of each attempt), MOLDABLE §3.2.
    """

    def __init__(
        self,
        processors: int,
        failures,
        policy: FlatPolicy,
        verification_time: float = 0.0,
        seed: int = 0,
        record_attempts: bool = True,
    ) -> None:
        super().__init__(seed=seed)
        self.failures = np.asarray(failures, dtype=np.int64)
        if self.failures.ndim != 1 or np.any(self.failures < 0):
            raise ConfigurationError("a failure scenario is a vector of failure counts >= 0, one per job")
        if not verification_time >= 0:
            raise ConfigurationError(f"the verification time V must be >= 0, got {verification_time}")
        self.verification_time = float(verification_time)
        self.platform = FlatPlatform(processors)
        self.simulator = DEVSimulator()
        self.simulator.setup(self)
        self.policy = policy
        self.job_count = int(self.failures.size)
        self.attempts_done = [0] * self.job_count
        self._failures = self.failures.tolist()
        self.running_attempts: dict[int, tuple[float, float, int]] = {}  # job -> (start_at, end_at, processors)
        self.completed = 0
        self.makespan = 0.0
        self.events_scheduled = 0
        self.events_run = 0
        self.record_attempts = record_attempts
        self.datacollector = mesa.DataCollector(tables={"attempts": _ATTEMPT_COLUMNS}) if record_attempts else None
        self.simulator.schedule_event_absolute(self._on_begin, 0.0)

    @property
    def now(self) -> float:
        """Current simulated time, seconds."""
        return self.simulator.time

    def start(self, job: int, processors: int, runtime: float) -> None:
        """Start the next attempt of a job now, on ``processors`` processors for ``runtime`` + V seconds.

        Raises:
            SimulationError: the job is already running or finished, or not enough processors are free.
        """
        if job in self.running_attempts:
            raise SimulationError(f"job {job} is already running")
        if self.attempts_done[job] > self._failures[job]:
            raise SimulationError(f"job {job} has already succeeded")
        self.platform.allocate(processors, job)
        now = self.simulator.time
        end_at = now + runtime + self.verification_time
        self.running_attempts[job] = (now, end_at, processors)
        self.events_scheduled += 1
        self.simulator.schedule_event_absolute(self._on_completion, end_at, function_args=[job])

    def _on_begin(self) -> None:
        self.policy.begin(self)

    def _on_completion(self, job: int) -> None:
        self.events_run += 1
        start_at, end_at, processors = self.running_attempts.pop(job)
        self.platform.release(processors, job)
        attempt = self.attempts_done[job]
        self.attempts_done[job] = attempt + 1
        failed = attempt < self._failures[job]
        if not failed:
            self.completed += 1
            self.makespan = end_at
        if self.record_attempts:
            self.datacollector.add_table_row(
                "attempts",
                {
                    "job": job,
                    "attempt": attempt + 1,
                    "start_at": start_at,
                    "end_at": end_at,
                    "processors": processors,
                    "failed": failed,
                },
            )
        self.policy.on_completion(self, job, failed)

    def run(self) -> FlatRunResult:
        """Run until every job has succeeded.

        Returns:
            The makespan and the attempt record.

        Raises:
            SimulationError: the events ran out with jobs unfinished (the policy left jobs waiting
                with nothing running), or an event was lost.
        """
        events = self.simulator.event_list
        while len(events) > 0:
            self.simulator.run_next_event()
        if self.completed < self.job_count:
            raise SimulationError(f"no attempt left running with {self.job_count - self.completed} jobs unfinished")
        if self.events_run != self.events_scheduled:
            raise SimulationError(f"{self.events_scheduled - self.events_run} completion events never ran")
        self.running = False
        table = self.datacollector.get_table_dataframe("attempts") if self.record_attempts else None
        return FlatRunResult(self.makespan, int(sum(self.attempts_done)), self.events_run, table)
