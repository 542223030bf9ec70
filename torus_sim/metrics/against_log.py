"""A replay held against the schedule that really ran: how far the simulated production policy is from the log.

A simulator earns trust by saying how close its replay of a log's production policy comes to what the machine
did (the UB Slurm simulator is validated against real Slurm runs). Every SWF log records each job's real wait;
:func:`compare_with_log` compares the simulated schedule with it job by job, over the jobs both kept:

- per job, the simulated wait minus the logged one (the same as the start difference: both start from the
  log's submit time): mean, median, mean absolute, share within 1 minute and within 1 hour;
- the two waits' distributions: quantiles and the two-sample Kolmogorov-Smirnov distance (scipy.stats.ks_2samp);
- mean wait and bounded slowdown by job-size class (the log's processors over its machine, PV-EASY's groups)
  and by calendar month of submission (the log's time zone);
- the utilization per day, simulated against logged (the compared jobs' node-seconds over capacity x 86,400 s).

The simulated wait is the time to a job's first start (the log's wait is to its only start); the simulated
bounded slowdown is the run's own (jobs.csv's ``bounded_slowdown``), the logged one the same formula on the
logged wait and run time. Lines the log cannot place (no wait, cancelled before starting, no run time) are
counted by reason and left out.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from torus_sim.inputs.workload.logged import NOT_PLACED, LoggedSchedule
from torus_sim.metrics.online import SIZE_FRACTIONS
from torus_sim.metrics.summary import DEFAULT_GAMMA, bounded_slowdown

__all__ = ["QUANTILES", "LogComparison", "busy_fraction_by_day", "compare_with_log", "size_class_labels"]

QUANTILES = (0.1, 0.25, 0.5, 0.75, 0.9, 0.99)
"""The wait quantiles compared."""

DAY = 86_400.0
"""Seconds in a day."""


@dataclass
class LogComparison:
    """The simulated schedule against the logged one.

    Attributes:
        summary: the headline numbers (JSON-ready): the log (name, SHA-256, machine, scheduler notes), job counts
            (``log_jobs``, ``simulated``, ``compared``, ``not_placed`` by reason, ``not_simulated``), waits and
            their differences, bounded slowdowns, the KS distance and the mean utilizations.
        quantiles: one row per quantile: ``quantile``, ``simulated_wait``, ``logged_wait`` (s).
        by_size: one row per size class: ``size_class``, ``jobs``, ``simulated_wait``, ``logged_wait``,
            ``simulated_bsld``, ``logged_bsld``.
        by_month: likewise per calendar month (``month``: ``YYYY-MM`` in the log's time zone).
        by_day: one row per day from the log's start: ``day``, ``date``, ``simulated_utilization``,
            ``logged_utilization``.
        waits: the compared jobs: ``job_id``, ``simulated_wait``, ``logged_wait`` (for the CDF figure), and each job's
            ``size_class`` and ``month`` (its groups in ``by_size`` and ``by_month``).
    """

    summary: dict
    quantiles: pd.DataFrame = field(repr=False)
    by_size: pd.DataFrame = field(repr=False)
    by_month: pd.DataFrame = field(repr=False)
    by_day: pd.DataFrame = field(repr=False)
    waits: pd.DataFrame = field(repr=False)

    def to_json_ready(self) -> dict:
        """Everything but the per-job waits, as one JSON-ready dictionary (``against_log.json``)."""

        def records(table: pd.DataFrame) -> list[dict]:
            return [{key: _plain(value) for key, value in row.items()} for row in table.to_dict(orient="records")]

        return {
            "summary": self.summary,
            "wait_quantiles": records(self.quantiles),
            "by_size": records(self.by_size),
            "by_month": records(self.by_month),
            "by_day": records(self.by_day),
        }


def _plain(value):
    """A JSON-ready scalar (NaN as None)."""
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return None if np.isnan(value) else float(value)
    return value


def busy_fraction_by_day(starts: np.ndarray, ends: np.ndarray, sizes: np.ndarray, capacity: float, days: int) -> np.ndarray:
    """The share of ``capacity`` busy in each day ``[k x 86,400, (k + 1) x 86,400)``, k = 0 .. days - 1.

    Args:
        starts: float ``(n,)``, seconds from the log's start.
        ends: float ``(n,)``, seconds (>= starts).
        sizes: ``(n,)``, nodes (processors) each interval holds.
        capacity: nodes of the machine (> 0).
        days: days to report.

    Returns:
        float ``(days,)``: node-seconds busy in the day over capacity x 86,400 (exact: the busy level is a step
        function, integrated between its steps).
    """
    times = np.concatenate([starts, ends]).astype(float)
    steps = np.concatenate([sizes, -np.asarray(sizes)]).astype(float)
    order = np.argsort(times, kind="stable")
    times, steps = times[order], steps[order]
    level = np.cumsum(steps)  # busy nodes from times[i] to times[i + 1]
    area = np.concatenate([[0.0], np.cumsum(level[:-1] * np.diff(times))])  # busy node-seconds up to times[i]
    bounds = np.arange(days + 1, dtype=float) * DAY
    last = np.searchsorted(times, bounds, side="right") - 1  # the last step at or before each bound
    before = last < 0
    last = np.clip(last, 0, None)
    integral = np.where(before, 0.0, area[last] + level[last] * (bounds - times[last])) if len(times) else np.zeros(days + 1)
    return np.diff(integral) / (capacity * DAY)


_FRACTION_LABELS = {1 / 32: "P/32", 1 / 16: "P/16", 1 / 8: "P/8", 1 / 4: "P/4", 1 / 2: "P/2", 1: "P"}


def size_class_labels() -> list[str]:
    """The size classes' labels in order: ``(0, P/32]`` .. ``(P/2, P]``, then ``> P`` and ``unknown``."""
    bounds = ["0", *(_FRACTION_LABELS.get(fraction, f"{fraction:g}P") for fraction in SIZE_FRACTIONS)]
    return [f"({low}, {high}]" for low, high in zip(bounds[:-1], bounds[1:], strict=True)] + ["> P", "unknown"]


def _size_classes(processors: np.ndarray, machine: int) -> np.ndarray:
    """Each job's size class (PV-EASY's groups of the log's machine P; ``> P`` above it, ``unknown`` without a size)."""
    labels = size_class_labels()
    result = np.full(len(processors), labels[-1], dtype=object)
    result[processors > machine] = labels[-2]
    low = 0.0
    for label, fraction in zip(labels, SIZE_FRACTIONS, strict=False):
        high = fraction * machine
        result[(processors > low) & (processors <= high)] = label
        low = high
    return result


def compare_with_log(
    jobs: pd.DataFrame,
    logged: LoggedSchedule,
    capacity: int,
    attempts: pd.DataFrame | None = None,
    gamma: float = DEFAULT_GAMMA,
    form: str = "standard",
    prefix: bool = False,
) -> LogComparison:
    """The simulated schedule against the one the log records, over the jobs both kept.

    Args:
        jobs: the run's per-job table (jobs.csv's columns: ``job_id``, ``submitted_at``, ``first_started_at``,
            ``finished_at``, ``size``, ``bounded_slowdown``), times in seconds from the log's start (load scale 1).
        logged: the log's schedule (:func:`~torus_sim.inputs.workload.logged.logged_schedule`).
        capacity: nodes of the simulated platform (its sizes' unit: processors on a cluster, supernodes on a torus).
        attempts: the run's attempt table (``job_id``, ``started_at``, ``ended_at``, ``nodes``): the simulated
            utilization counts every attempt (killed ones too); from ``jobs``' first start to end when None.
        gamma: Γ of the bounded slowdown, seconds (the run's).
        form: the bounded slowdown's form (the run's; :data:`torus_sim.metrics.summary.BSLD_FORMS`).
        prefix: the run replayed the log's first jobs only (``max_jobs``): the counts cover the lines up to its
            last job's, not the whole log.

    Returns:
        A :class:`LogComparison`.

    References:
        Feitelson et al., JPDC 74(10) 2014 (SWF's wait field); Lucero, "Simulation of batch scheduling using real
        production-ready software tools" (Slurm simulator validation against the real schedule), 2011.
    """
    kept = pd.Index(jobs["job_id"].to_numpy(dtype=np.int64))
    in_run = np.isin(logged.job_id, kept.to_numpy())
    covered = np.flatnonzero(in_run)  # a prefix run covers the log's lines up to its last job's
    span = slice(0, int(covered[-1]) + 1) if prefix and len(covered) else slice(0, len(in_run))
    reasons = np.full(len(in_run), -1, dtype=np.int64)
    reasons[span] = logged.not_placed()[span]
    placed = reasons < 0
    outside = np.ones(len(in_run), dtype=bool)
    outside[span] = False
    chosen = np.flatnonzero(placed & in_run)
    position = pd.Series(np.arange(len(jobs)), index=kept)
    rows = position.loc[logged.job_id[chosen]].to_numpy()
    simulated = jobs.iloc[rows]
    sim_wait = simulated["first_started_at"].to_numpy(dtype=float) - simulated["submitted_at"].to_numpy(dtype=float)
    log_wait = logged.wait[chosen]
    log_run = logged.run_time[chosen]
    sim_bsld = simulated["bounded_slowdown"].to_numpy(dtype=float)
    log_bsld = bounded_slowdown(log_wait + log_run, log_run, gamma, form) if len(chosen) else np.empty(0)
    difference = sim_wait - log_wait
    compared = len(chosen)

    def mean(values: np.ndarray) -> float | None:
        return float(np.mean(values)) if len(values) else None

    from scipy import stats

    ks = stats.ks_2samp(sim_wait, log_wait) if compared else None
    machine = logged.machine or int(logged.processors.max(initial=1))
    counts = {reason: int(np.count_nonzero(reasons == index)) for index, reason in enumerate(NOT_PLACED)}
    summary = {
        "log": {
            "path": logged.path,
            "sha256": logged.sha256,
            "machine_processors": logged.machine,
            "scheduler_notes": list(logged.scheduler_notes),
            "time_zone": logged.time_zone,
        },
        "jobs": {
            "log_jobs": span.stop - span.start,
            "simulated": len(jobs),
            "compared": compared,
            "not_placed": {reason: count for reason, count in counts.items() if count},
            "not_placed_simulated": int(np.count_nonzero(~placed & in_run)),
            "not_simulated": int(np.count_nonzero(placed & ~in_run & ~outside)),
        },
        "wait": {
            "simulated_mean": mean(sim_wait),
            "logged_mean": mean(log_wait),
            "difference_mean": mean(difference),
            "difference_median": float(np.median(difference)) if compared else None,
            "difference_mean_absolute": mean(np.abs(difference)),
            "within_1_min": mean(np.abs(difference) <= 60.0),
            "within_1_h": mean(np.abs(difference) <= 3600.0),
        },
        "bounded_slowdown": {"simulated_mean": mean(sim_bsld), "logged_mean": mean(log_bsld)},
        "ks": {"statistic": float(ks.statistic), "p_value": float(ks.pvalue)} if ks is not None else None,
    }
    quantiles = pd.DataFrame(
        {
            "quantile": QUANTILES,
            "simulated_wait": np.quantile(sim_wait, QUANTILES) if compared else np.nan,
            "logged_wait": np.quantile(log_wait, QUANTILES) if compared else np.nan,
        }
    )
    per_job = pd.DataFrame(
        {
            "size_class": _size_classes(logged.processors[chosen], machine),
            "month": _months(logged, chosen),
            "simulated_wait": sim_wait,
            "logged_wait": log_wait,
            "simulated_bsld": sim_bsld,
            "logged_bsld": log_bsld,
        }
    )
    rank = {label: index for index, label in enumerate(size_class_labels())}
    by_size = _grouped(per_job, "size_class")
    by_size = by_size.iloc[np.argsort(by_size["size_class"].map(rank).to_numpy(), kind="stable")].reset_index(drop=True)
    by_month = _grouped(per_job, "month").sort_values("month", kind="stable").reset_index(drop=True)
    by_day = _by_day(simulated, attempts, logged, chosen, capacity, machine)
    if len(by_day):
        summary["utilization"] = {
            "simulated_mean": float(by_day["simulated_utilization"].mean()),
            "logged_mean": float(by_day["logged_utilization"].mean()),
            "daily_difference_mean_absolute": float(
                (by_day["simulated_utilization"] - by_day["logged_utilization"]).abs().mean()
            ),
            "days": len(by_day),
        }
    waits = pd.DataFrame(
        {
            "job_id": logged.job_id[chosen],
            "simulated_wait": sim_wait,
            "logged_wait": log_wait,
            "size_class": per_job["size_class"].to_numpy(),
            "month": per_job["month"].to_numpy(),
        }
    )
    return LogComparison(summary, quantiles, by_size, by_month, by_day, waits)


def _grouped(per_job: pd.DataFrame, by: str) -> pd.DataFrame:
    """Jobs and mean waits and bounded slowdowns per value of ``by``."""
    columns = [by, "jobs", "simulated_wait", "logged_wait", "simulated_bsld", "logged_bsld"]
    if per_job.empty:
        return pd.DataFrame(columns=columns)
    grouped = per_job.groupby(by, sort=False)
    table = grouped[["simulated_wait", "logged_wait", "simulated_bsld", "logged_bsld"]].mean()
    table.insert(0, "jobs", grouped.size())
    return table.reset_index()[columns]


def _months(logged: LoggedSchedule, chosen: np.ndarray) -> np.ndarray:
    """Each compared job's calendar month of submission, ``YYYY-MM``, in the log's time zone (UTC when unknown)."""
    if logged.unix_start_time is None:
        return np.array([f"month {int(value // (30 * DAY))}" for value in logged.submitted_at[chosen]], dtype=object)
    return _local_text(logged, logged.submitted_at[chosen], "%Y-%m")


def _local_text(logged: LoggedSchedule, seconds: np.ndarray, form: str) -> np.ndarray:
    """Times (seconds from the log's start) as calendar text in the log's time zone (UTC when it names none or an unknown one)."""
    stamps = pd.to_datetime(logged.unix_start_time + seconds, unit="s", utc=True)
    if logged.time_zone:
        try:
            stamps = stamps.tz_convert(logged.time_zone)
        except Exception:  # an unknown zone name (or no time-zone data here): UTC
            pass
    return np.asarray(stamps.strftime(form), dtype=object)


def _by_day(
    simulated: pd.DataFrame,
    attempts: pd.DataFrame | None,
    logged: LoggedSchedule,
    chosen: np.ndarray,
    capacity: int,
    machine: int,
) -> pd.DataFrame:
    """Utilization per day, simulated (every attempt of the compared jobs) against logged."""
    columns = ["day", "date", "simulated_utilization", "logged_utilization"]
    if not len(chosen):
        return pd.DataFrame(columns=columns)
    log_start = logged.started_at[chosen]
    log_end = log_start + logged.run_time[chosen]
    if attempts is not None and len(attempts):
        mine = attempts[attempts["job_id"].isin(simulated["job_id"])]
        sim_start = mine["started_at"].to_numpy(dtype=float)
        sim_end = mine["ended_at"].to_numpy(dtype=float)
        sim_size = mine["nodes"].to_numpy(dtype=float)
    else:
        sim_start = simulated["first_started_at"].to_numpy(dtype=float)
        sim_end = simulated["finished_at"].to_numpy(dtype=float)
        sim_size = simulated["size"].to_numpy(dtype=float)
    first = int(np.floor(min(log_start.min(), sim_start.min(), logged.submitted_at[chosen].min()) / DAY))
    first = max(first, 0)
    last = int(np.ceil(max(log_end.max(), sim_end.max()) / DAY))
    days = max(last, first + 1)
    simulated_share = busy_fraction_by_day(sim_start, sim_end, sim_size, capacity, days)[first:]
    logged_share = busy_fraction_by_day(log_start, log_end, logged.processors[chosen].astype(float), machine, days)[first:]
    day = np.arange(first, days)
    if logged.unix_start_time is not None:
        dates = _local_text(logged, day * DAY, "%Y-%m-%d")
    else:
        dates = np.full(len(day), "", dtype=object)
    return pd.DataFrame(
        {"day": day, "date": dates, "simulated_utilization": simulated_share, "logged_utilization": logged_share}
    )[columns]
