"""A finished replay of an SWF log held against the schedule the log records (``torus-sim run --against-log``).

:func:`check_against_log` refuses, before the simulation, a scenario whose schedule cannot be compared with
its log's (a load scale other than 1: the log's waits are for its own load); :func:`against_log` reads the
log the run replayed again (the same bytes: its SHA-256 is checked) and compares job by job
(:func:`torus_sim.metrics.against_log.compare_with_log`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from torus_sim.core.errors import ConfigurationError, TorusSimError
from torus_sim.inputs.workload.logged import check_own_load, logged_schedule, replayed_file
from torus_sim.inputs.workload.swf import read_swf
from torus_sim.metrics.against_log import LogComparison, compare_with_log

if TYPE_CHECKING:
    from torus_sim.experiments.runner import RunResult
    from torus_sim.experiments.scenario import Scenario

__all__ = ["against_log", "check_against_log"]


def check_against_log(scenario: Scenario) -> None:
    """Refuse, before a run, a scenario whose replay cannot be compared with its log.

    Args:
        scenario: the run's scenario (its ``load_scale`` and ``offered_load``).

    Raises:
        ConfigurationError: a load scale c other than 1 (the logged waits belong to the log's own load).
    """
    check_own_load(
        scenario.load_scale,
        scenario.offered_load,
        "--against-log compares with the schedule the log records, which ran the log's own load",
    )


def against_log(result: RunResult) -> LogComparison:
    """The run's schedule against the one its SWF log records, over the jobs both kept.

    Args:
        result: a finished online run of an SWF log at load scale 1 (:func:`torus_sim.experiments.runner.run`).

    Returns:
        The comparison (:class:`~torus_sim.metrics.against_log.LogComparison`).

    Raises:
        ConfigurationError: a batch workload, a workload that is no SWF file (a Batsim or generated one records
            no real schedule), a load scale other than 1, or a log whose bytes changed since the run read it.
    """
    check_against_log(result.config)
    workload = result.inputs["workload"]
    path = replayed_file(workload, "--against-log compares with the waits an SWF log records")
    try:
        trace = read_swf(path)
    except TorusSimError as error:
        raise ConfigurationError(f"--against-log needs an SWF log (it records each job's real wait): {error}") from None
    if trace.sha256 != workload.get("sha256"):
        raise ConfigurationError(f"{path} changed since the run read it (SHA-256 {workload.get('sha256')}, now {trace.sha256})")
    scenario = result.config
    return compare_with_log(
        result.jobs,
        logged_schedule(trace, name=path.name),
        int(result.inputs["platform"]["nodes"]),
        attempts=result.record.attempts if result.record is not None else None,
        gamma=scenario.gamma,
        form=scenario.bsld_form,
        prefix=scenario.max_jobs is not None,
    )
