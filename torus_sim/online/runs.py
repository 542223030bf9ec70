"""One online replay by policy and predictor name (Python entry point for PV-EASY's experiments)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from predictors.runtime import make_runtime_predictor
from torus_sim.errors import ConfigurationError
from torus_sim.online.jobs import OnlineWorkload, load_online_workload
from torus_sim.online.metrics import job_table, online_summary
from torus_sim.online.model import OnlineModel, Preemption
from torus_sim.policies.easy import ConservativePolicy, EasyPolicy, FcfsPolicy
from torus_sim.policies.pv_easy import PvEasyPolicy

__all__ = ["ONLINE_POLICIES", "ConfiguredOnlineModel", "OnlineResult", "make_online_policy", "run_online"]

ONLINE_POLICIES = ("FCFS", "FCFS-EASY", "SJF-EASY", "conservative", "PV-EASY")


def make_online_policy(name: str):
    """The policy object for a name of :data:`ONLINE_POLICIES`.

    Raises:
        ConfigurationError: unknown name.
    """
    factories = {
        "FCFS": FcfsPolicy,
        "FCFS-EASY": lambda: EasyPolicy("fcfs"),
        "SJF-EASY": lambda: EasyPolicy("sjf"),
        "conservative": ConservativePolicy,
        "PV-EASY": PvEasyPolicy,
    }
    if name not in factories:
        raise ConfigurationError(f"unknown online policy {name!r}; choose from {', '.join(ONLINE_POLICIES)}")
    return factories[name]()


@dataclass
class OnlineResult:
    """A replay's job table (one row per job) and summary metrics (see :func:`online_summary`)."""

    jobs: pd.DataFrame
    summary: dict


def run_online(
    workload: OnlineWorkload,
    policy: str = "FCFS-EASY",
    predictor: str = "estimate",
    preemption: Preemption | None = None,
    seed: int = 0,
) -> OnlineResult:
    """Replay a workload under one policy and runtime predictor.

    Args:
        workload: jobs and P (:func:`torus_sim.online.jobs.load_online_workload`).
        policy: FCFS, FCFS-EASY, SJF-EASY, conservative or PV-EASY.
        predictor: ``estimate``, ``last``, ``exact`` or ``virtual:x`` (EASY-Last is FCFS-EASY with ``last``).
        preemption: PV-EASY's preemption mode (kill/restart by default).
        seed: the run's seed (the virtual predictor draws from it).

    Returns:
        The job table and the summary.

    References:
        PV-EASY §4-5.
    """
    model = OnlineModel(
        workload, make_online_policy(policy), lambda rng: make_runtime_predictor(predictor, rng), preemption, seed
    )
    jobs = model.run()
    summary = online_summary(jobs, workload.processors)
    summary.update({"policy": policy, "predictor": predictor, "preemption": (preemption or Preemption()).mode, "seed": seed})
    return OnlineResult(job_table(jobs), summary)


class ConfiguredOnlineModel(OnlineModel):
    """An :class:`OnlineModel` built from plain parameters, the class to hand to ``mesa.batch_run``.

    ``batch_run`` does not vary seeds between iterations: give ``seed`` as a list parameter.

    Args:
        workload: SWF path.
        processors: P (None: the header's).
        policy: a name of :data:`ONLINE_POLICIES`.
        predictor: ``estimate``, ``last``, ``exact`` or ``virtual:x``.
        preemption: ``kill``, ``checkpoint`` or ``suspend``.
        time_cost: seconds per checkpoint / restart / resume.
        seed: the run's seed.
        max_jobs: replay only the first jobs.
        step_seconds: simulated seconds per Mesa step.
    """

    def __init__(
        self,
        workload: str,
        processors: int | None = None,
        policy: str = "FCFS-EASY",
        predictor: str = "estimate",
        preemption: str = "kill",
        time_cost: float = 60.0,
        seed: int = 0,
        max_jobs: int | None = None,
        step_seconds: float = 3600.0,
    ) -> None:
        trace = load_online_workload(workload, processors, max_jobs)
        super().__init__(
            trace,
            make_online_policy(policy),
            lambda rng: make_runtime_predictor(predictor, rng),
            Preemption(preemption, time_cost=time_cost),
            seed,
            step_seconds,
        )
