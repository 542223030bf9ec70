"""One simulation run from a configuration: inputs -> platform + policy -> engine -> metrics.

:func:`run` is what the CLI, the benchmarks and Python users call::

    from torus_sim.runner import RunConfig, run
    result = run(RunConfig(failures="synthetic:1000", load_scale=1.2, seed=3))
    result.summary["avg_bounded_slowdown"]
"""

from __future__ import annotations

import math
import warnings
from dataclasses import asdict, dataclass, field
from functools import partial
from importlib.resources import files
from pathlib import Path

import pandas as pd

from failure_logs.events import FailureLog
from failure_logs.sources import BUNDLED_BGL_RAS, load_failure_source
from failure_logs.synthetic import DISTRIBUTIONS
from predictors import PREDICTORS
from torus_sim.errors import ConfigurationError
from torus_sim.metrics import BSLD_FORMS, DEFAULT_GAMMA, job_table, summarize
from torus_sim.model import DOWNTIME_MODES, SchedulingModel, SimulationRecord
from torus_sim.partitions import PartitionTable, round_up_to_feasible_size
from torus_sim.platforms.torus import TorusPlatform
from torus_sim.policies.fault_aware import PF_FORMS, BalancingPlacement, TieBreakPlacement
from torus_sim.policies.krevat import KrevatScheduler
from torus_sim.policies.placement import MfpPlacement
from torus_sim.policies.resilience import ResiliencePolicy
from torus_sim.topology import Torus
from torus_sim.workload.jobs import Workload, jobs_from_swf
from torus_sim.workload.swf import read_swf

__all__ = [
    "ConfiguredTorusModel",
    "BUNDLED_NASA_LOG",
    "DEFAULT_PREDICTOR",
    "SCHEDULERS",
    "RunConfig",
    "RunResult",
    "build_scheduler",
    "load_workload",
    "run",
]

SCHEDULERS = ("krevat", "balancing", "tiebreak")
"""Krevat's FCFS + backfilling + migration with MFP placement (BGL-FAULT §5.1), and the balancing
(§5.2.1) and tie-break (§5.2.2) schedulers, which keep Krevat's FCFS, backfilling and migration."""

DEFAULT_PREDICTOR = {"krevat": "null", "balancing": "oracle-confidence", "tiebreak": "oracle-accuracy"}
"""The predictor each scheduler uses unless told otherwise (BGL-FAULT §4.1, §4.2)."""

BUNDLED_NASA_LOG = Path(str(files("torus_sim") / "data" / "NASA-iPSC-1993-3.1-cln.swf.gz"))
"""The bundled NASA iPSC/860 SWF log (see torus_sim/data/README.md for its attribution)."""

_TABLES: dict[tuple[int, int, int], PartitionTable] = {}


def _table(torus: Torus) -> PartitionTable:
    if torus.dims not in _TABLES:
        _TABLES[torus.dims] = PartitionTable(torus)
    return _TABLES[torus.dims]


@dataclass
class RunConfig:
    """Everything that defines a run (and goes into its summary).

    Attributes:
        workload: SWF file (plain or gzip); the bundled NASA log by default.
        failures: ``bundled``, ``none``, ``synthetic:N[:weibull]`` or a path
            (see :mod:`failure_logs.sources`).
        fit_failures: map a real failure log's span onto the workload's submit span.
        lanl_system: LANL system number when ``failures`` is the LANL CSV.
        downtime: ``transient``, ``log`` or seconds (see :data:`torus_sim.model.DOWNTIME_MODES`).
        load_scale: c, multiplies runtimes and walltimes (BGL-FAULT §6.2).
        backfill: Krevat's backfilling on.
        migration: Krevat's migration on.
        migration_cost: seconds per migrated job.
        seed: the run's seed.
        max_jobs: use only the first this many jobs (None: all).
        torus_dims: the supernode torus.
        gamma: Γ of bounded slowdown, seconds.
        bsld_form: ``standard`` or ``printed`` (see :data:`torus_sim.metrics.BSLD_FORMS`).
        scheduler: ``krevat``, ``balancing`` or ``tiebreak`` (see :data:`SCHEDULERS`).
        predictor: ``null``, ``oracle-confidence``, ``oracle-accuracy`` or ``history``; the
            scheduler's default (:data:`DEFAULT_PREDICTOR`) when None.
        confidence: a of the oracle-confidence predictor, in [0, 1] (BGL-FAULT §4.1).
        accuracy: a of the oracle-accuracy predictor, in [0, 1] (BGL-FAULT §4.2).
        false_positive_rate: p_f+ of the oracle-accuracy predictor, in [0, 1] (0 in the paper).
        pf_form: how the balancing scheduler combines supernode probabilities (``product`` or ``max``).
        synthetic_model: distribution of ``synthetic:N`` failures when the spec names none:
            ``exponential``, ``weibull`` or ``bursty`` (see :mod:`failure_logs.synthetic`).
        checkpoint_interval: periodic checkpoints every this many seconds of work, ``young``,
            ``daly``, or None (none, as BGL-FAULT); see :mod:`torus_sim.policies.resilience`.
        checkpoint_cost: C, seconds per checkpoint.
        recovery_time: R, seconds to restart from a checkpoint.
        preventive: ``none``, ``checkpoint`` or ``migration`` before foreseen failures (CKPT-MIG).
        preventive_migration_cost: M, seconds per preventive migration.
        spares: supernodes held back for preventive migrations.
        prediction_accuracy: probability that a failure is foreseen by the preventive actions.
    """

    workload: str = str(BUNDLED_NASA_LOG)
    failures: str = "bundled"
    fit_failures: bool = True
    lanl_system: int = 20
    downtime: str | float = "transient"
    load_scale: float = 1.0
    backfill: bool = True
    migration: bool = True
    migration_cost: float = 0.0
    seed: int = 0
    max_jobs: int | None = None
    torus_dims: tuple[int, int, int] = (4, 4, 8)
    gamma: float = DEFAULT_GAMMA
    bsld_form: str = "standard"
    scheduler: str = "krevat"
    predictor: str | None = None
    confidence: float = 0.1
    accuracy: float = 0.1
    false_positive_rate: float = 0.0
    pf_form: str = "product"
    synthetic_model: str = "exponential"
    checkpoint_interval: float | str | None = None
    checkpoint_cost: float = 0.0
    recovery_time: float = 0.0
    preventive: str = "none"
    preventive_migration_cost: float = 0.0
    spares: int = 0
    prediction_accuracy: float = 1.0

    def resilience(self) -> ResiliencePolicy:
        """The run's :class:`~torus_sim.policies.resilience.ResiliencePolicy` (raises ConfigurationError if invalid)."""
        return ResiliencePolicy(
            checkpoint_interval=self.checkpoint_interval,
            checkpoint_cost=self.checkpoint_cost,
            recovery_time=self.recovery_time,
            preventive=self.preventive,
            migration_cost=self.preventive_migration_cost,
            spares=self.spares,
            prediction_accuracy=self.prediction_accuracy,
        )

    def validate(self) -> None:
        """Raise ConfigurationError for a value out of its domain."""
        if not (self.load_scale > 0 and math.isfinite(self.load_scale)):
            raise ConfigurationError(f"load scale c must be a positive number, got {self.load_scale}")
        if self.bsld_form not in BSLD_FORMS:
            raise ConfigurationError(f"bsld_form must be one of {BSLD_FORMS}, got {self.bsld_form!r}")
        if not self.gamma > 0:
            raise ConfigurationError(f"gamma must be positive, got {self.gamma}")
        if self.max_jobs is not None and self.max_jobs < 1:
            raise ConfigurationError(f"max_jobs must be >= 1, got {self.max_jobs}")
        if self.scheduler not in SCHEDULERS:
            raise ConfigurationError(f"unknown scheduler {self.scheduler!r}; choose from {SCHEDULERS}")
        if self.predictor is not None and self.predictor not in PREDICTORS:
            raise ConfigurationError(f"unknown predictor {self.predictor!r}; choose from {PREDICTORS.names()}")
        if self.scheduler == "krevat" and self.predictor not in (None, "null"):
            raise ConfigurationError(
                f"the krevat scheduler uses no predictor; got {self.predictor!r} (use balancing or tiebreak)"
            )
        for name in ("confidence", "accuracy", "false_positive_rate"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ConfigurationError(f"{name.replace('_', ' ')} must lie in [0, 1], got {value}")
        self.resilience()
        if self.synthetic_model not in DISTRIBUTIONS:
            raise ConfigurationError(f"synthetic_model must be one of {DISTRIBUTIONS}, got {self.synthetic_model!r}")
        if self.pf_form not in PF_FORMS:
            raise ConfigurationError(f"pf_form must be one of {PF_FORMS}, got {self.pf_form!r}")
        if isinstance(self.downtime, str) and self.downtime not in DOWNTIME_MODES:
            raise ConfigurationError(f"downtime must be one of {DOWNTIME_MODES} or seconds, got {self.downtime!r}")


@dataclass
class RunResult:
    """A finished run.

    Attributes:
        config: the configuration.
        summary: the summary metrics (see :func:`torus_sim.metrics.summarize`).
        jobs: per-job results (see :func:`torus_sim.metrics.job_table`).
        inputs: file paths and SHA-256 of the workload and failure log, cleaning counts.
        record: the raw event record.
    """

    config: RunConfig
    summary: dict
    jobs: pd.DataFrame
    inputs: dict
    record: SimulationRecord = field(repr=False)

    def manifest(self) -> dict:
        """Configuration, inputs and summary as one JSON-ready dictionary (no wall-clock data)."""
        from torus_sim import __version__

        return {"torus_sim_version": __version__, "config": asdict(self.config), "inputs": self.inputs, "summary": self.summary}


def load_workload(config: RunConfig, torus: Torus) -> Workload:
    """Read and clean the configured SWF workload for the torus (BGL-FAULT §6.2)."""
    trace = read_swf(config.workload)
    return jobs_from_swf(trace, torus.size, partial(round_up_to_feasible_size, torus.dims), config.load_scale, config.max_jobs)


def build_scheduler(config: RunConfig) -> KrevatScheduler:
    """The configured scheduler with its placement and predictor (BGL-FAULT §5.1, §5.2)."""
    predictor_name = config.predictor or DEFAULT_PREDICTOR[config.scheduler]
    parameters = {
        "oracle-confidence": {"confidence": config.confidence},
        "oracle-accuracy": {"accuracy": config.accuracy, "false_positive_rate": config.false_positive_rate},
    }.get(predictor_name, {})
    predictor = PREDICTORS.make(predictor_name, **parameters)
    if config.scheduler == "balancing":
        placement = BalancingPlacement(predictor, config.pf_form)
    elif config.scheduler == "tiebreak":
        placement = TieBreakPlacement(predictor)
    else:
        placement = MfpPlacement()
    return KrevatScheduler(placement, backfill=config.backfill, migration=config.migration, migration_cost=config.migration_cost)


def uncovered_span(log: FailureLog, span: tuple[float, float]) -> list[tuple[float, float]]:
    """Parts of a workload's span ``(start, end)`` before the log's first or after its last failure."""
    if not len(log):
        return [span]
    first, last = log.span
    gaps = []
    if first > span[0]:
        gaps.append((span[0], min(first, span[1])))
    if last < span[1]:
        gaps.append((max(last, span[0]), span[1]))
    return gaps


def run(config: RunConfig) -> RunResult:
    """Run one simulation.

    Args:
        config: the run's configuration.

    Returns:
        The result: summary, per-job table, inputs and the event record.

    Raises:
        ConfigurationError: a parameter out of its domain.
        WorkloadFormatError, FailureLogFormatError: a malformed input line.
        FileNotFoundError: an input file is missing.
    """
    config.validate()
    model = ConfiguredTorusModel(**{name: getattr(config, name) for name in config.__dataclass_fields__})
    workload, failures, uncovered = model.workload, model.failure_source, model.uncovered
    record = model.run()
    log = model.failure_log
    inputs = {
        "workload": {
            "path": workload.source,
            "sha256": workload.sha256,
            "jobs": len(workload.jobs),
            "cleaning": dict(sorted(workload.cleaning.items())),
        },
        "failures": {
            "spec": config.failures,
            "path": str(BUNDLED_BGL_RAS)
            if config.failures == "bundled"
            else (config.failures if isinstance(failures, FailureLog) else None),
            "sha256": log.sha256,
            "source": log.source,
            "count": len(log),
            "reader_counts": dict(sorted(log.counts.items())),
            "uncovered_span": uncovered,
        },
        "predictor": config.predictor or DEFAULT_PREDICTOR[config.scheduler],
    }
    summary = summarize(record, config.gamma, config.bsld_form)
    return RunResult(
        config=config, summary=summary, jobs=job_table(record.jobs, config.gamma, config.bsld_form), inputs=inputs, record=record
    )


class ConfiguredTorusModel(SchedulingModel):
    """The torus model built from :class:`RunConfig` fields, for ``mesa.batch_run``.

    ``mesa.batch_run`` constructs a model from keyword arguments and steps it; this class takes the
    fields of :class:`RunConfig` (``failures``, ``scheduler``, ``confidence``, ``seed``, ...) plus
    ``step_seconds``. ``batch_run`` does not vary seeds between iterations: pass ``seed`` as a list
    of values instead.

    It is also what :func:`run` builds: reading the workload, resolving the failure source (with a
    warning naming the spans a real log does not cover), building the scheduler and the resilience
    policy happen here once.

    Args:
        step_seconds: simulated seconds per Mesa step (one DataCollector row each).
        **fields: RunConfig fields.

    Raises:
        ConfigurationError: an unknown field or a value out of its domain.
    """

    def __init__(self, step_seconds: float = 3600.0, **fields) -> None:
        try:
            config = RunConfig(**fields)
        except TypeError as error:
            raise ConfigurationError(f"unknown run parameter: {error}") from None
        config.validate()
        torus = Torus(tuple(config.torus_dims))
        workload = load_workload(config, torus)
        span = workload.span if config.fit_failures else None
        failures = load_failure_source(config.failures, torus.size, span, config.lanl_system, config.synthetic_model)
        uncovered = uncovered_span(failures, workload.span) if isinstance(failures, FailureLog) else []
        if uncovered:
            warnings.warn(
                f"failure log {failures.source} does not cover the workload's span: no failures in "
                + ", ".join(f"[{start:.0f}, {end:.0f}] s" for start, end in uncovered)
                + " (fit it onto the span, the default, or choose another log)",
                stacklevel=2,
            )
        super().__init__(
            workload,
            build_scheduler(config),
            TorusPlatform(torus, _table(torus)),
            failures,
            downtime=config.downtime,
            seed=config.seed,
            step_seconds=step_seconds,
            resilience=config.resilience(),
        )
        self.workload = workload  # the inputs, for the run's manifest
        self.failure_source = failures
        self.uncovered = uncovered
        self.config = config
