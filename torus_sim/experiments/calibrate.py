"""Calibration held out in time: a site's production settings fitted on the first part of a log, judged on the rest.

``torus-sim calibrate`` (:func:`calibrate`) fits the free parameters of the documented production behaviours (the
scheduling cycle, the per-user job limit, Slurm's multifactor priority: :data:`SPACE`; Slurm's backfill window:
:data:`BACKFILL_SPACE`; a user's running node-seconds: :data:`NODE_SECONDS_SPACE`; the log's idle spans as maintenance windows or not: :data:`WINDOWS`) to the schedule an SWF log
records. Each trial replays only the first ``train`` share of the log's jobs (``max_jobs``: the rest of the log is
never read) and scores the replay against those jobs' logged waits (:func:`objective`; or, asked, the shortfall from
the four aims of issue 77 with the daily utilization: :func:`aims_objective`). The optimiser is Optuna's
TPE sampler, seeded; the study is stored in SQLite beside the results, so a calibration stopped by Ctrl-C or a
killed process keeps its finished trials and resumes where it stopped, the sampler's random state restored from the
study (:data:`SAMPLER_STATE`), so the resumed trials are those an uninterrupted calibration draws. The best trial's
settings then replay the
whole log (the first part's queue and running jobs carried into the second by the replay itself), and the
replay is judged on the held-out jobs, next to the same replay without the fitted settings (the site as given).

What is fitted is parameters of documented behaviours; nothing depends on the log beyond its jobs and logged waits.

References:
    Akiba et al., "Optuna: a next-generation hyperparameter optimization framework", KDD 2019 (TPE sampler,
    RDB storage); Slurm's documentation of ``sched_min_interval``, the multifactor priority and association
    limits; Feitelson, Tsafrir and Krakov, JPDC 74(10), 2014 (the archive's logs and their waits).
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np

from torus_sim.core.errors import ConfigurationError
from torus_sim.experiments.scenario import LIMIT_FIELDS, Scenario

__all__ = [
    "AIMS",
    "BACKFILL_SPACE",
    "FAIRSHARE_BY",
    "GROUPS",
    "NODE_SECONDS_SPACE",
    "OBJECTIVES",
    "QUEUE_SPACE",
    "SPACE",
    "WINDOWS",
    "Calibration",
    "LogSplit",
    "PartScore",
    "aims_objective",
    "calibrate",
    "grouped_scores",
    "misplaced_waiting",
    "objective",
    "replay_waits",
    "score_part",
    "score_parts",
    "sizes_objective",
    "space",
    "split_log",
]

DAY = 86400.0

SHAKE_SECONDS = 1.0
"""How far a shaken judgement moves each submit time (``shakes``): a second, the SWF logs' own resolution, by which a
replay already parts from itself by more than an hour on 12-55% of the held-out jobs' starts (docs/validation/real_machine.md)."""
UNLIMITED_JOBS = 512
"""A per-user job limit drawn at this value or above means no limit."""

SPACE: dict[str, tuple[str, float, float]] = {
    "sched_min_interval": ("log", 5.0, 900.0),
    "max_jobs_per_user": ("int-log", 2, UNLIMITED_JOBS),
    "priority_weight_fairshare": ("float", 0.0, 20.0),
    "priority_weight_job_size": ("float", 0.0, 5.0),
    "priority_max_age": ("log", 3600.0, 30 * DAY),
    "priority_decay_half_life": ("log", 3600.0, 30 * DAY),
}
"""The fitted settings and their ranges: ``(kind, low, high)``; kind ``log`` (a log-uniform float), ``int-log``, ``float``;
a ``choice`` (:data:`READING`) is one of two values. The age factor's weight is fixed at 1: the other weights are relative
to it. The size factor's direction (``priority_favor_small``) is the site's: drawn for every log too (CTC-SP2, SDSC-SP2,
HPC2N, with the backfill window), 80-160 trials found no better fit of the first halves than 40-60 trials without them,
and worse held-out halves (docs/validation/real_machine.md)."""

WINDOWS = {
    "none": {"maintenance": None, "maintenance_drain": None},
    "outages": {"maintenance": "inferred", "maintenance_drain": False},
    "drained": {"maintenance": "inferred", "maintenance_drain": True},
}
"""The fitted choice of maintenance windows (``windows``): none, the log's idle spans as outages (jobs held while one
lasts), or as drained maintenance (no job starts that would reach into one). The spans are the whole log's
(:func:`~torus_sim.inputs.workload.logged.idle_windows`): facts of the machine's history, as a downtime calendar
would be; whether to use them, and how, is what the first part decides."""

FAIRSHARE_BY = ("user", "group")
"""The fitted choice of the fair share's owners: users, or the log's groups (``priority_fairshare_by``)."""


QUEUE_SPACE: dict[str, tuple[str, float, float]] = {"priority_weight_queue": ("float", 0.0, 20.0)}
"""Fitted besides :data:`SPACE` when the site gives its queues' tiers (``priority_queue_tiers``): the queue factor's weight."""

AGE_WEIGHT = 1.0


CARRIED = (
    "priority_queue_tiers",
    "effective_size",
    "effective_size_period",
    "priority_favor_small",
    "dependencies",
    "priority_age_from",
    "priority_fairshare_shares",
    "effective_size_starved",
    "effective_size_starved_min_length",
    "effective_size_starved_min_idle",
)
"""Settings of the site as given, not fitted, that every trial ran with: written beside the fitted ones (the site file)
where set (a size factor favouring small jobs: where the site says so; the dependencies a replay keeps; ages counted
from eligibility, ``priority_age_from = "eligible"``: where the site says so, except in a trial that drew no limit,
which holds no job; the fair share's shares as the users asked, ``priority_fairshare_shares = "submitted"``; the
capacity the log's starved spans lost, ``effective_size_starved = true``, beside a fitted ``effective_size_share``)."""


SHARE_FITTED_BELOW = 0.95
"""The machine's effective size (``effective_size_share``) is fitted where the first part's largest job asks less than
this share of a cluster's processors (and the site gives no effective size): on CTC-SP2 (336 of 338) or RICC (the whole
machine) no smaller machine could run the log."""


BACKFILL_SPACE: dict[str, tuple[str, float, float]] = {"bf_window": ("log", 600.0, 30 * DAY)}
"""Fitted besides :data:`SPACE` where the site gives Slurm's ``bf_window`` (seconds; its policy's constructor parameter,
kept in ``policy_params``) on a cluster, from the site's value: a head whose shadow time is further ahead than the
window gets no reservation and every job that fits is backfilled (Slurm's ``SchedulerParameters=bf_window``, there in
minutes). At the top of the range no head of these logs is that far ahead: no window in effect. Not drawn where the
site gives none: a window drawn for every log did not fit the first halves better (:data:`SPACE`)."""

NODE_SECONDS_SPACE: dict[str, tuple[str, float, float]] = {"max_node_seconds_per_user": ("log", DAY, 1e10)}
"""Fitted besides :data:`SPACE` where the site gives a limit on a user's running jobs' node-seconds left (Maui's
``MAXPS``; processor-seconds on a cluster), from the site's value: from a day of one node to 10^10 node-seconds, which
no user of these logs' machines reaches (HPC2N's 240 processors for its longest request, 4.6 days, hold 9.6 x 10^7).
Not drawn where the site gives none: on HPC2N's first half no value of it scored better with the site's other fitted
settings (docs/validation/real_machine.md)."""

POLICY_PARAMS = tuple(BACKFILL_SPACE)
"""The fitted settings that are the policy's constructor parameters (``policy_params``), not scenario fields."""


READING = {"cancelled": ("choice", "run", "skip")}
"""Fitted besides :data:`SPACE` where the first part holds cancelled lines (SWF status 5) and the whole log is replayed:
whether they ran for their logged run time or are no job of the run (neither replayed nor judged)."""


def space(base, fill: float | None = None, cancelled: bool = False) -> dict[str, tuple]:
    """The settings fitted for the site ``base``.

    Args:
        base: the site as given.
        fill: the first part's largest job over the cluster's processors, or None (not known: no share fitted).
        cancelled: the first part holds cancelled lines and ``base`` replays the whole log (no ``max_jobs``: a prefix
            cut by count would hold other lines under each reading).

    Returns:
        :data:`SPACE`; :data:`QUEUE_SPACE` when the site gives queue tiers; ``effective_size_share`` from ``fill`` to 1
        on a cluster whose site gives no effective size, where ``fill`` is below :data:`SHARE_FITTED_BELOW` (a
        constant effective size: the whole run on that share of the processors, Slurm's reservation of a node count);
        :data:`READING` where ``cancelled``; :data:`BACKFILL_SPACE` where ``fill`` is known (a cluster) and the site
        gives a ``bf_window``; :data:`NODE_SECONDS_SPACE` where the site gives ``max_node_seconds_per_user``. A
        ``choice`` is drawn among its two values.
    """
    fitted = {**SPACE, **QUEUE_SPACE} if base.priority_queue_tiers is not None else dict(SPACE)
    if fill is not None and fill < SHARE_FITTED_BELOW and base.effective_size is None:
        fitted["effective_size_share"] = ("float", fill, 1.0)
    if fill is not None and any(name in base.policy_params for name in BACKFILL_SPACE):
        fitted.update(BACKFILL_SPACE)
    if base.max_node_seconds_per_user is not None:
        fitted.update(NODE_SECONDS_SPACE)
    if cancelled and base.max_jobs is None:
        fitted.update(READING)
    return fitted


@dataclass
class PartScore:
    """A replay's waits against the logged ones on one part of the log (seconds unless named).

    Attributes:
        jobs: the jobs compared.
        ks: Kolmogorov-Smirnov distance between the simulated and the logged waits (scipy.stats.ks_2samp).
        mean_wait, logged_mean_wait: the mean waits; mean_error: (simulated - logged) / logged.
        median_wait, logged_median_wait: the median waits.
        within_hour: share of jobs whose simulated wait is within an hour of the logged wait: their start within an hour
            of the logged start where the run keeps the logged submit times (not with ``dependencies``).
        daily_utilization_error: mean |simulated - logged| daily utilization over the part's days (NaN when not known).
        misplaced_waiting: the share of the logged waiting put in the wrong size class (:func:`misplaced_waiting`; NaN
            when the waits carry no ``size_class`` or the part logged no waiting).
    """

    jobs: int
    ks: float
    mean_wait: float
    logged_mean_wait: float
    mean_error: float
    median_wait: float
    logged_median_wait: float
    within_hour: float
    daily_utilization_error: float = math.nan
    misplaced_waiting: float = math.nan

    def as_dict(self) -> dict:
        """JSON-ready (NaN as None)."""
        return {key: (None if isinstance(value, float) and math.isnan(value) else value) for key, value in self.__dict__.items()}


@dataclass
class Calibration:
    """A finished calibration: the fitted settings and the scores.

    Attributes:
        log: the workload name; train_jobs: the jobs of the first part; trials: the finished trials in the study.
        fitted: the best trial's settings (scenario field -> value; ``max_jobs_per_user`` None: no limit); empty when
            no trial did better on the first part than the site as given (which then stands).
        train_objective: the objective of what stands (the best trial, or the site as given) on the first part.
        given_objective: the site as given's objective on the first part (a replay of that part alone, as a trial's).
        scores: ``{"as given" | "calibrated": {"train": PartScore, "test": PartScore, ...}}``, both from whole-log
            replays; where some held-out jobs are of users who submitted no job of the first part, also ``"test, users
            seen"`` and ``"test, new users"``: the held-out jobs split by whether the fit saw their user (an unknown
            user counts as seen), without a daily figure (a fit learns nothing of a user it never saw).
        held_out: ``{"as given" | "calibrated": the held-out jobs' waits}`` (``job_id``, ``simulated_wait``,
            ``logged_wait``, seconds), for the figure.
        shaken: ``{"as given" | "calibrated": {"train": [PartScore, ...], "test": [...]}}``: the same whole-log replays
            with every submit time moved by up to :data:`SHAKE_SECONDS` (input shaking), one score per seed 1, 2, ...;
            empty without ``shakes``. Their spread is what of each figure is the input's chance.
        objective: the objective's name, a key of :data:`OBJECTIVES`.
        groups: ``{"as given" | "calibrated": {"size_class" | "month": [row, ...]}}``: the whole-log replays' figures
            by size class (the against-log comparison's classes of the log's machine) and by month of submission, each
            part's groups in turn (:func:`grouped_scores`).
        sampler: what drew the trials: Optuna's version, its TPE sampler and the seed. The draws depend on both: from
            the same seed Optuna 4 draws other trials than Optuna 5, whose TPE is always multivariate (5.0 and 5.1 draw
            the same; docs/validation/real_machine.md's fits were made with 5.1).
        starts: with several sampler paths (``starts``), each path's ``seed``, finished ``trials``, ``best`` first-part
            objective and ``best_trial`` number; empty with one.
    """

    log: str
    train_jobs: int
    trials: int
    fitted: dict
    train_objective: float
    given_objective: float = math.nan
    scores: dict = field(default_factory=dict)
    held_out: dict = field(default_factory=dict, repr=False)
    shaken: dict = field(default_factory=dict)
    objective: str = "waits"
    groups: dict = field(default_factory=dict)
    sampler: str = ""
    starts: list = field(default_factory=list)

    def as_dict(self) -> dict:
        """JSON-ready."""
        return {
            "log": self.log,
            "train_jobs": self.train_jobs,
            "trials": self.trials,
            "objective": f"{self.objective}: {OBJECTIVES[self.objective]} (first part only)",
            "fitted": self.fitted,
            "train_objective": self.train_objective,
            "given_objective": self.given_objective,
            "scores": {name: {part: score.as_dict() for part, score in parts.items()} for name, parts in self.scores.items()},
            "shaken": {
                "seconds": SHAKE_SECONDS,
                "scores": {
                    name: {part: [score.as_dict() for score in scores] for part, scores in parts.items()}
                    for name, parts in self.shaken.items()
                },
            }
            if self.shaken
            else None,
            "groups": self.groups,
            "sampler": self.sampler,
            **({"starts": self.starts} if self.starts else {}),  # a one-path calibration's JSON as it was
        }


def score_part(waits, by_day=None, first_day: int | None = None, last_day: int | None = None) -> PartScore:
    """Score simulated against logged waits.

    Args:
        waits: a table with ``simulated_wait`` and ``logged_wait`` (seconds), one row per compared job
            (:attr:`~torus_sim.metrics.against_log.LogComparison.waits`).
        by_day: the comparison's daily utilizations (``day``, ``simulated_utilization``, ``logged_utilization``), or None.
        first_day: the part's first day in ``by_day`` (days from the trace's start), or None: no daily figure.
        last_day: its last day (inclusive), or None: to the end.

    Returns:
        The :class:`PartScore`.
    """
    from scipy.stats import ks_2samp

    simulated = waits["simulated_wait"].to_numpy(dtype=float)
    logged = waits["logged_wait"].to_numpy(dtype=float)
    logged_mean = float(logged.mean())
    daily = math.nan
    if by_day is not None and first_day is not None:
        days = by_day[(by_day["day"] >= first_day) & (by_day["day"] <= (last_day if last_day is not None else math.inf))]
        if len(days):
            daily = float((days["simulated_utilization"] - days["logged_utilization"]).abs().mean())
    return PartScore(
        jobs=len(simulated),
        ks=float(ks_2samp(simulated, logged).statistic),
        mean_wait=float(simulated.mean()),
        logged_mean_wait=logged_mean,
        mean_error=float((simulated.mean() - logged_mean) / logged_mean) if logged_mean > 0 else math.nan,
        median_wait=float(np.median(simulated)),
        logged_median_wait=float(np.median(logged)),
        within_hour=float(np.mean(np.abs(simulated - logged) <= 3600.0)),
        daily_utilization_error=daily,
        misplaced_waiting=misplaced_waiting(waits) if "size_class" in waits.columns else math.nan,
    )


def score_parts(waits, by_day, cut) -> dict[str, PartScore]:
    """Both parts of a whole-log replay scored: the jobs a calibration fits on and the held-out ones.

    Args:
        waits: the replay's compared jobs (:func:`replay_waits`: ``job_id``, ``simulated_wait``, ``logged_wait``).
        by_day: its daily utilizations (:func:`replay_waits`).
        cut: where the log is cut (:func:`split_log`): jobs below ``first_test_id`` and the days before ``split_day``
            are the first part, the rest held out.

    Returns:
        ``{"train": PartScore, "test": PartScore}`` (:func:`score_part`).
    """
    held = (waits["job_id"] >= cut.first_test_id).to_numpy()
    return {
        "train": score_part(waits[~held], by_day, 0, cut.split_day - 1),
        "test": score_part(waits[held], by_day, cut.split_day, None),
    }


GROUPS = ("size_class", "month")
"""The groups a calibration's report gives each part's figures by: the log's size classes and months of submission."""


def grouped_scores(waits, part: str, by: str) -> list[dict]:
    """One part's figures by size class or by month (the report's tables; Issue 77 §3: "by size class and by month").

    Args:
        waits: the part's compared jobs (:attr:`~torus_sim.metrics.against_log.LogComparison.waits`: ``simulated_wait``
            and ``logged_wait`` in seconds, and the column ``by``).
        part: the part's name written in each row (``train`` or ``test``).
        by: ``size_class`` (in the classes' order, smallest first) or ``month`` (``YYYY-MM``, in order).

    Returns:
        One JSON-ready dict per group with jobs: ``part``, ``by``, ``group``, ``jobs``, ``mean_wait`` and
        ``logged_mean_wait`` (seconds), ``mean_error`` ((simulated - logged) / logged; None where the logged mean is
        0) and ``within_hour`` (the share of jobs whose simulated wait is within an hour of the logged one): each
        group's :func:`score_part`.

    Raises:
        KeyError: ``waits`` has no column ``by``.
    """
    from torus_sim.metrics.against_log import size_class_labels

    if not len(waits):
        return []
    keys = waits[by].to_numpy()
    order = size_class_labels() if by == "size_class" else sorted(set(keys.tolist()))
    kept = ("jobs", "mean_wait", "logged_mean_wait", "mean_error", "within_hour")
    rows = []
    for group in order:
        chosen = keys == group
        if chosen.any():  # the group's figures as score_part makes them (a NaN error as None)
            figures = score_part(waits[chosen]).as_dict()
            rows.append({"part": part, "by": by, "group": str(group), **{name: figures[name] for name in kept}})
    return rows


def objective(score: PartScore) -> float:
    """The calibration's objective (smaller is better): KS distance of the waits + 0.5 x |relative mean-wait error|."""
    error = 0.0 if math.isnan(score.mean_error) else abs(score.mean_error)
    return score.ks + 0.5 * error


AIMS = {"ks": 0.15, "mean_error": 0.15, "within_hour": 0.70, "daily_utilization_error": 0.05}
"""Issue 77's aims on a held-out part: a KS distance of the waits of at most 0.15, a mean wait within 15% of the logged,
at least 70% of the jobs within an hour of their logged start, a mean |daily utilization difference| of at most 0.05."""


def aims_objective(score: PartScore) -> float:
    """The shortfall from :data:`AIMS` (smaller is better; 0: every aim met), each figure relative to its aim.

    ``max(0, KS / 0.15 - 1) + max(0, |mean-wait error| / 0.15 - 1) + max(0, 1 - within 1 h / 0.70)
    + max(0, daily utilization difference / 0.05 - 1)``: a figure within its aim adds nothing, one twice its aim (or, for
    the share within an hour, none of it) adds 1. A figure not known (NaN: no logged mean wait, no daily utilization)
    adds nothing.

    Args:
        score: the part's :class:`PartScore`, its ``daily_utilization_error`` from the part's days.

    Returns:
        The shortfall, >= 0.
    """
    shortfalls = (
        score.ks / AIMS["ks"] - 1.0,
        abs(score.mean_error) / AIMS["mean_error"] - 1.0,
        1.0 - score.within_hour / AIMS["within_hour"],
        score.daily_utilization_error / AIMS["daily_utilization_error"] - 1.0,
    )
    return float(sum(max(0.0, value) for value in shortfalls if not math.isnan(value)))


def misplaced_waiting(waits, by: str = "size_class") -> float:
    """The share of the logged waiting that a replay puts in the wrong group of jobs (by size class, unless ``by``).

    ``sum over groups g of |sum_{j in g} (simulated_j - logged_j)| / sum_j logged_j``: 0 where every group's simulated
    waiting is its logged waiting; never below the |relative error of the mean wait| (one group gives exactly that). A
    replay that meets the mean wait by making the many small jobs wait what the machine made its few large ones wait
    scores the waiting it moved between them (CTC-SP2's fitted site: 0.70 on the first half at a mean-wait error of
    -0.6%; FCFS-EASY 0.35 at -33.8%).

    Args:
        waits: the compared jobs (:attr:`~torus_sim.metrics.against_log.LogComparison.waits`: ``simulated_wait`` and
            ``logged_wait`` in seconds, and the column ``by``).
        by: the grouping column: ``size_class`` (the report's size classes, shares of the machine) or ``month``.

    Returns:
        The share, >= 0; NaN where the logged waiting is 0.

    Raises:
        KeyError: ``waits`` has no column ``by``.
    """
    difference = waits["simulated_wait"].to_numpy(dtype=float) - waits["logged_wait"].to_numpy(dtype=float)
    total = float(waits["logged_wait"].to_numpy(dtype=float).sum())
    if total <= 0:
        return math.nan
    _, groups = np.unique(waits[by].to_numpy(), return_inverse=True)
    return float(np.abs(np.bincount(groups.ravel(), weights=difference)).sum() / total)


def sizes_objective(score: PartScore) -> float:
    """The objective ``sizes`` (smaller is better): KS distance of the waits + 0.5 x :func:`misplaced_waiting` by size class.

    The default objective (:func:`objective`) with the relative error of the mean wait replaced by the waiting misplaced
    between the size classes: the same where every job is of one class, larger where the mean is met by moving waiting
    from one class to another.

    Args:
        score: the part's :class:`PartScore` (:func:`score_part` of waits with ``size_class``): its KS distance and
            ``misplaced_waiting``.

    Returns:
        The objective, >= 0 (a NaN share, no logged waiting or no size classes, adds nothing).
    """
    misplaced = score.misplaced_waiting
    return score.ks + (0.0 if math.isnan(misplaced) else 0.5 * misplaced)


OBJECTIVES = {
    "waits": "KS distance of the waits + 0.5 x |relative error of the mean wait|",
    "sizes": "KS distance of the waits + 0.5 x the share of the logged waiting misplaced between size classes "
    "(sum over the classes of |simulated - logged waiting| / the logged waiting)",
    "aims": "the shortfall from the aims, each relative to its aim: "
    f"max(0, KS / {AIMS['ks']:g} - 1) + max(0, |relative error of the mean wait| / {AIMS['mean_error']:g} - 1) + "
    f"max(0, 1 - share within 1 h / {AIMS['within_hour']:.2f}) + "
    f"max(0, mean |daily utilization difference| / {AIMS['daily_utilization_error']:g} - 1)",
}
"""The calibration's objectives by name (``--objective``): ``waits`` (:func:`objective`, the default), ``sizes``
(:func:`sizes_objective`) and ``aims`` (:func:`aims_objective`)."""


def _scored(kind: str, waits, by_day) -> float:
    """A first-part replay's objective ``kind`` (:data:`OBJECTIVES`): its waits, and for ``aims`` its days too."""
    if kind == "aims":
        return aims_objective(score_part(waits, by_day, 0, None))
    if kind == "sizes":
        return sizes_objective(score_part(waits))
    return objective(score_part(waits))


def _settings(trial, fitted: dict, base) -> dict:
    """One trial's scenario settings drawn from ``fitted`` (:func:`space`) and :data:`WINDOWS` (``base``: the site as given)."""
    drawn = {
        "windows": trial.suggest_categorical("windows", list(WINDOWS)),
        "priority_fairshare_by": trial.suggest_categorical("priority_fairshare_by", list(FAIRSHARE_BY)),
    }
    for name, (kind, low, high) in fitted.items():
        if kind == "choice":
            drawn[name] = trial.suggest_categorical(name, [low, high])
        elif kind == "log":
            drawn[name] = trial.suggest_float(name, low, high, log=True)
        elif kind == "int-log":
            drawn[name] = trial.suggest_int(name, int(low), int(high), log=True)
        else:
            drawn[name] = trial.suggest_float(name, low, high)
    return _as_scenario(drawn, base)


def _as_scenario(drawn: dict, base) -> dict:
    """Drawn values as scenario fields: the windows' choice, the policy's parameters, the age weight.

    The windows' choice becomes its settings (:data:`WINDOWS`); the policy's parameters (:data:`POLICY_PARAMS`) go
    within ``base``'s ``policy_params``, with ``base``'s policy beside them.
    """
    settings = dict(drawn)
    settings.update(WINDOWS[settings.pop("windows", "none")])
    if settings.get("max_jobs_per_user", 0) >= UNLIMITED_JOBS:
        settings["max_jobs_per_user"] = None
        if base.priority_age_from != "submit" and not _other_limits(base):  # no limit holds a job: ages as submitted
            settings["priority_age_from"] = "submit"
    params = {name: settings.pop(name) for name in POLICY_PARAMS if name in settings}
    if params:  # the policy's parameters, with the policy they are for (a site file names both)
        settings["policy"], settings["policy_params"] = base.policy, {**base.policy_params, **params}
    settings["priority_weight_age"] = AGE_WEIGHT
    return settings


def _other_limits(base) -> bool:
    """Whether ``base`` sets a limit that holds jobs besides the users' running jobs (the one :data:`SPACE` fits)."""
    return any(getattr(base, name) is not None for name in LIMIT_FIELDS if name != "max_jobs_per_user")


def _given_settings(base, fitted_space: dict) -> dict:
    """The settings of :data:`SPACE` the site gives, in the space's terms (weights relative to age's; within range)."""
    age = base.priority_weight_age
    given = {}
    if base.maintenance == "inferred":
        given["windows"] = "drained" if base.maintenance_drain else "outages"
    if base.priority_fairshare_by != "user":
        given["priority_fairshare_by"] = base.priority_fairshare_by
    for name, (kind, low, high) in fitted_space.items():
        value = base.policy_params.get(name) if name in POLICY_PARAMS else getattr(base, name)
        if value is None:
            continue
        if kind == "choice":
            given[name] = value
            continue
        if name.startswith("priority_weight_"):
            if not age:
                continue
            value = value / age
        if name == "max_jobs_per_user":
            value = min(int(value), UNLIMITED_JOBS)
        if low <= value <= high:
            given[name] = value
    return given


class LogSplit(NamedTuple):
    """Where a log is cut into the part a calibration fits on and the part it is judged on (:func:`split_log`).

    Attributes:
        count: the first part's jobs; first_test_id: the first held-out job's id; split_day: the day it was submitted
            (days from the trace's start); fill: the first part's largest job over a cluster's processors (None on
            other platforms); first_ids: the first part's job ids, int64 ``(count,)``; new_user_ids: the ids of the
            held-out jobs whose user (known: SWF field 12 at least 0) submitted no job of the first part, int64, ascending.
    """

    count: int
    first_test_id: int
    split_day: int
    fill: float | None
    first_ids: np.ndarray
    new_user_ids: np.ndarray


def split_log(base, train: float) -> LogSplit:
    """Where ``base``'s log is cut: the first ``train`` share of its jobs in submission order, and the rest.

    Args:
        base: a scenario replaying a log (its workload as the run reads it: cleaned, ``max_jobs`` applied).
        train: the share of the jobs in the first part, 0 < train < 1 (rounded down to whole jobs).

    Returns:
        The :class:`LogSplit`: the first part's size and ids, the first held-out job and its day, the first part's
        fill of a cluster, the held-out jobs of users the first part never saw.

    Raises:
        ConfigurationError: a ``train`` share that leaves no job on one side.
    """
    from torus_sim.experiments.run_inputs import load_workload
    from torus_sim.machine.platforms.kinds import platform_kind

    workload = load_workload(base)
    jobs = workload.jobs
    total = len(jobs)
    count = int(total * train)
    if not 0 < count < total:
        raise ConfigurationError(f"--train {train:g} leaves no jobs on one side of the split ({total:,} jobs)")
    first_test = jobs[count]
    fill = None
    if platform_kind(base.platform).sizes_from_workload:  # a cluster: its nodes are the jobs' processors
        capacity = platform_kind(base.platform).capacity(base.platform_fields(), workload.processors)
        sizes = jobs.column("size")[:count] if hasattr(jobs, "column") else [jobs[index].size for index in range(count)]
        fill = float(np.max(sizes)) / capacity
    ids = np.asarray(jobs.column("job_id") if hasattr(jobs, "column") else [job.job_id for job in jobs], dtype=np.int64)
    users = np.asarray(jobs.column("user_id") if hasattr(jobs, "column") else [job.user_id for job in jobs], dtype=np.int64)
    new_user = (users[count:] >= 0) & ~np.isin(users[count:], users[:count])
    return LogSplit(
        count, int(first_test.job_id), int(first_test.submitted_at // DAY), fill, ids[:count], np.sort(ids[count:][new_user])
    )


def replay_waits(scenario):
    """Replay ``scenario`` and hold it against its log.

    Args:
        scenario: an online replay of an SWF log at load scale 1 (:func:`~torus_sim.experiments.log_replay.check_against_log`).

    Returns:
        ``(waits, by_day)``: the compared jobs' waits sorted by job id (``job_id``, ``simulated_wait``,
        ``logged_wait``, seconds) and the daily utilizations (``day``, ``simulated_utilization``,
        ``logged_utilization``) of :func:`~torus_sim.experiments.log_replay.against_log`.

    Raises:
        ConfigurationError: a scenario whose replay cannot be held against its log (no log file, another load).
    """
    from torus_sim.experiments.log_replay import against_log
    from torus_sim.experiments.runner import run

    comparison = against_log(run(scenario))
    return comparison.waits.sort_values("job_id").reset_index(drop=True), comparison.by_day


def _finished(study) -> int:
    """The study's finished trials."""
    import optuna

    return sum(trial.state == optuna.trial.TrialState.COMPLETE for trial in study.trials)


def _study_name(base, train: float, fitted_space: dict, kind: str = "waits") -> str:
    from torus_sim.experiments.sweep import run_key

    choices = {"windows": list(WINDOWS), "priority_fairshare_by": list(FAIRSHARE_BY)}
    if kind != "waits":  # the default objective's studies keep the names they had before there was a choice
        choices["objective"] = kind
    text = json.dumps({"base": run_key(base), "train": train, "space": fitted_space, **choices}, sort_keys=True)
    return "calibrate-" + hashlib.sha256(text.encode()).hexdigest()[:12]


SAMPLER_STATE = "sampler_state"
"""The study's user attribute holding the TPE sampler's random states before the next trial (JSON: no pickle)."""


def _generators(sampler) -> dict | None:
    """The TPE sampler's two numpy generators: its own and its startup trials' random sampler's.

    None where this Optuna keeps them elsewhere (a resumed calibration then draws afresh).
    """
    try:
        return {"tpe": sampler._rng.rng, "random": sampler._random_sampler._rng.rng}
    except AttributeError:
        return None


def _sampler_state(sampler) -> dict | None:
    """The TPE sampler's two random states as JSON lists (None: see :func:`_generators`)."""
    generators = _generators(sampler)
    if generators is None:
        return None
    state = {}
    for name, generator in generators.items():
        kind, keys, position, has_gauss, cached = generator.get_state()
        state[name] = [kind, keys.tolist(), int(position), int(has_gauss), float(cached)]
    return state


def _restore_sampler(sampler, state: dict) -> None:
    """Set the TPE sampler's random states to those :func:`_sampler_state` kept (nothing where they are missing)."""
    for name, generator in (_generators(sampler) or {}).items():
        if name in state:
            kind, keys, position, has_gauss, cached = state[name]
            generator.set_state((kind, np.asarray(keys, dtype=np.uint32), position, has_gauss, cached))


def _first_part_jobs(base, first_ids: np.ndarray) -> dict[str, int]:
    """The first part's job count under each reading of the cancelled lines (``{"run": n, "skip": m}``).

    The first part is the same lines under both: under ``skip`` its cancelled lines are no jobs, so fewer jobs come
    before the first held-out one. A log without cancelled lines in its first part gives one count.

    Args:
        base: the site as given (its reading, ``cancelled``, made ``first_ids``).
        first_ids: the first part's job ids under ``base``'s reading (:class:`LogSplit`).
    """
    from torus_sim.experiments.run_inputs import load_workload

    other = "skip" if base.cancelled == "run" else "run"
    jobs = load_workload(base.replace(cancelled=other)).jobs
    ids = jobs.column("job_id") if hasattr(jobs, "column") else np.array([job.job_id for job in jobs])
    train_jobs = len(first_ids)
    count = int(np.isin(ids, first_ids).sum())
    return {base.cancelled: train_jobs} if count == train_jobs else {base.cancelled: train_jobs, other: count}


def _check_kept(study, out: Path, score) -> None:
    """A kept study resumes only where its first finished trial, replayed again, scores what it scored.

    The replays are deterministic, so the same code on the same log gives the same bits; a trial kept from other code
    (a release, a change that moves a schedule) or another log would mix into the fit unseen.

    Args:
        study: the Optuna study loaded from ``out``.
        out: its folder, for the sentence.
        score: ``params -> objective`` of one trial's settings.

    Raises:
        ConfigurationError: the trial scores otherwise now.
    """
    import optuna

    done = [trial for trial in study.trials if trial.state == optuna.trial.TrialState.COMPLETE]
    if not done:
        return
    first = min(done, key=lambda trial: trial.number)
    now = score(first.params)
    if now != first.value:
        raise ConfigurationError(
            f"{out / 'study.db'} was made by other code or from another log: its trial {first.number} scored "
            f"{first.value:.6g} and scores {now:.6g} now; remove it (or calibrate into another --out) to start afresh"
        )


def _trial_value(trial, base, train_jobs: dict, fitted_space: dict, kind: str = "waits") -> float:
    """One trial: the first part's jobs replayed with the trial's settings, scored (objective ``kind``, :data:`OBJECTIVES`).

    ``train_jobs``: the first part's job count under each reading of the cancelled lines (:func:`_first_part_jobs`).
    """
    settings = _settings(trial, fitted_space, base)
    count = train_jobs[settings.get("cancelled", base.cancelled)]
    waits, by_day = replay_waits(base.replace(max_jobs=count, **settings))
    if not len(waits):
        raise ConfigurationError(f"{base.workload}: the log records no wait of its first {count:,} jobs to fit")
    return _scored(kind, waits, by_day)


HEARTBEAT = 30
"""Seconds between a parallel trial's heartbeats in the study (Optuna's experimental heartbeat); a trial silent for three
of them (its worker killed) is marked failed when the next trial begins (Optuna's ``fail_stale_trials``)."""


def _worker_trial(storage: str, study_name: str, base, train_jobs: dict, fitted_space: dict, trial_seed: int, kind: str):
    """One trial on a Dask worker: the study loaded from its SQLite file, one trial run (Optuna's ``optimize``).

    The sampler is TPE seeded for this trial, with the constant liar (the trials running beside it count as bad
    ones, so parallel workers do not all draw near the same point). The storage keeps the trial's heartbeat; a trial
    of a killed worker is marked failed when the next trial begins.

    Returns:
        (the trial's number, its objective).
    """
    import warnings

    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    sampler = optuna.samplers.TPESampler(seed=trial_seed, constant_liar=True)
    ran = []
    with warnings.catch_warnings():  # the heartbeat and the constant liar are marked experimental: said once here
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        storage = optuna.storages.RDBStorage(storage, heartbeat_interval=HEARTBEAT, grace_period=3 * HEARTBEAT)
        study = optuna.load_study(study_name=study_name, storage=storage, sampler=sampler)
        study.optimize(
            lambda trial: _trial_value(trial, base, train_jobs, fitted_space, kind),
            n_trials=1,
            callbacks=[lambda _, trial: ran.append(trial)],
            gc_after_trial=True,
        )
    (trial,) = ran
    return trial.number, trial.value


def _parallel_trials(
    study,
    storage: str,
    base,
    train_jobs: dict,
    fitted_space: dict,
    finished: int,
    trials: int,
    seed: int,
    workers: int,
    progress,
    kind: str = "waits",
):
    """Run trials ``finished`` to ``trials`` on a local Dask cluster of ``workers`` processes, one trial per task.

    Raises:
        ConfigurationError: Dask missing, or its workers cannot start.
        KeyboardInterrupt: passed on; the finished trials stay in the study.
    """
    try:
        from dask.distributed import Client
        from dask.distributed import as_completed as dask_completed
    except ImportError as error:
        raise ConfigurationError("trials on Dask workers need Dask: pip install 'torus-sim[distributed]'") from error
    from torus_sim.experiments.sweep import local_cluster

    cluster = local_cluster(workers, "calibration")
    client = Client(cluster)
    try:
        futures = [
            client.submit(
                _worker_trial,
                storage,
                study.study_name,
                base,
                train_jobs,
                fitted_space,
                _trial_seed(seed, index),
                kind,
                pure=False,
            )
            for index in range(finished, trials)
        ]
        for future in dask_completed(futures):
            number, value = future.result()
            if progress is not None:
                progress(number, value, study.best_value)
    finally:
        client.close()
        cluster.close()


def _trial_seed(seed: int, index: int) -> int:
    """The seed of parallel trial ``index``: the calibration's seed and the index, mixed by numpy's SeedSequence."""
    return int(np.random.SeedSequence([seed, index]).generate_state(1)[0])


def calibrate(
    base,
    out: Path,
    train: float = 0.5,
    trials: int = 20,
    seed: int = 0,
    progress=None,
    workers: int = 1,
    shakes: int = 0,
    objective_name: str = "waits",
    starts: int = 1,
) -> Calibration:
    """Fit :data:`SPACE` on the first ``train`` share of ``base``'s log, then judge the fit on the rest.

    Args:
        base: the site as given (a :class:`~torus_sim.experiments.scenario.Scenario` replaying an SWF log, online,
            at load scale 1); its fitted fields are replaced by each trial's.
        out: the folder of the study (``study.db``; the caller writes the results beside it).
        train: the share of the log's jobs (in submission order) the fit sees, 0 < train < 1.
        trials: the finished trials wanted in the study (those already there count: a second call resumes, once its
            first finished trial, replayed again, scores what it scored: the same code and the same log).
        seed: the sampler's seed. A calibration stopped and called again resumes with the sampler's random state as
            it stood before its first unfinished trial (kept in the study), so it draws what an uninterrupted one draws.
        progress: called with ``(trial number, objective, best so far)`` after each trial, or None.
        workers: above 1, the trials run at once on a local Dask cluster of this many processes, each trial's TPE
            sampler seeded by its index with the constant liar (the study in SQLite is shared; a killed worker's trial
            is marked failed by its missed heartbeats). A queued trial (the site as given) runs in this process
            before the workers start: SQLite cannot lock its row, so two workers could both take it. Parallel trials are not drawn as serial ones are: the same
            seed gives other trials.
        shakes: the site as given and the calibrated site are also replayed this many times each with every submit
            time moved by up to :data:`SHAKE_SECONDS` (``shake``; seeds 1 .. shakes: with generated failures, the
            failures are drawn by that seed too) and judged alike (:attr:`Calibration.shaken`); 0: not. The trials are
            not shaken: a fit whose every trial was scored on three shaken replays did no better on CTC-SP2's and
            SDSC-SP2's held-out halves (docs/validation/real_machine.md).
        objective_name: what the trials minimise on the first part, a key of :data:`OBJECTIVES`: ``waits`` (the KS
            distance and the mean-wait error, :func:`objective`) or ``aims`` (the shortfall from the four aims, the daily
            utilization and the share within an hour included, :func:`aims_objective`). The site as given is scored alike.
        starts: sampler paths, each ``trials`` trials of its own study in ``study.db`` with the sampler seeded at ``seed``,
            ``seed + 1``, ...; the best first-part objective of them all is the fit (the earlier path on a tie). One
            path's fit depends on its draws more than on some settings: CTC-SP2's, SDSC-SP2's and HPC2N's held-out
            mean waits part by 11 to 212 points between the seeds 0 and 1 (docs/validation/real_machine.md). Each path
            resumes alone; the first is the study a one-path calibration keeps.

    Returns:
        The :class:`Calibration`.

    Raises:
        ConfigurationError: a scenario whose replay cannot be held against its log, a train share outside (0, 1), an
            objective not in :data:`OBJECTIVES`, no finished trial, or a kept study whose trials no longer score as
            they did (the code or the log changed).
        KeyboardInterrupt: passed on; the finished trials stay in ``study.db``.
    """
    try:
        import optuna
    except ImportError:
        raise ConfigurationError("calibration needs Optuna: pip install 'torus-sim[calibrate]' (or pip install optuna)") from None
    from torus_sim.experiments.log_replay import check_against_log

    if not 0 < train < 1:
        raise ConfigurationError(f"--train must be a share between 0 and 1 (exclusive), got {train:g}")
    if trials < 1:
        raise ConfigurationError(f"--trials must be at least 1, got {trials}")
    if workers < 1:
        raise ConfigurationError(f"--workers must be at least 1, got {workers}")
    if shakes < 0:
        raise ConfigurationError(f"--shakes must be 0 or more, got {shakes}")
    if starts < 1:
        raise ConfigurationError(f"--starts must be at least 1, got {starts}")
    if objective_name not in OBJECTIVES:
        raise ConfigurationError(f"--objective must be one of {', '.join(OBJECTIVES)}, got {objective_name!r}")
    check_against_log(base)
    cut = split_log(base, train)
    first_part, first_test_id, split_day, fill, first_ids, new_user_ids = cut
    train_jobs = _first_part_jobs(base, first_ids) if base.max_jobs is None else {base.cancelled: first_part}
    fitted_space = space(base, fill, cancelled=len(train_jobs) > 1)
    out.mkdir(parents=True, exist_ok=True)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    storage = f"sqlite:///{(out / 'study.db').resolve()}"
    study_name = _study_name(base, train, fitted_space, objective_name)
    given_start = _given_settings(base, fitted_space)

    def trial_objective(trial) -> float:
        return _trial_value(trial, base, train_jobs, fitted_space, objective_name)

    callbacks = []
    if progress is not None:
        callbacks.append(lambda study_, trial: trial.value is not None and progress(trial.number, trial.value, study_.best_value))

    def path(index: int):
        """Sampler path ``index``: its study (the first keeps a one-path calibration's name), run to ``trials``."""
        study = optuna.create_study(
            study_name=study_name if index == 0 else f"{study_name}-start{index + 1}",
            storage=storage,
            sampler=optuna.samplers.TPESampler(seed=seed + index),
            direction="minimize",
            load_if_exists=True,
        )
        _check_kept(study, out, lambda params: trial_objective(optuna.trial.FixedTrial(params)))

        def finished() -> int:
            return _finished(study)

        taken = (optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.WAITING)
        if given_start and not any(trial.state in taken for trial in study.trials):
            study.enqueue_trial(given_start)  # the site as given is the first trial (its other settings drawn)
        kept = study.user_attrs.get(SAMPLER_STATE)
        if kept is not None and kept.get("finished") == finished():
            _restore_sampler(study.sampler, kept)  # resumed: the sampler as it stood before the first unfinished trial
        if workers > 1:  # the queued trial (the site as given) runs here first: SQLite has no row lock, and two workers
            waiting = (optuna.trial.TrialState.WAITING,)  # popping it at once would both run it (Optuna's "Cannot tell")
            while finished() < trials and study.get_trials(deepcopy=False, states=waiting):
                study.optimize(trial_objective, n_trials=1, callbacks=callbacks, gc_after_trial=True)
        if workers > 1 and finished() < trials:
            _parallel_trials(
                study,
                storage,
                base,
                train_jobs,
                fitted_space,
                finished(),
                trials,
                seed + index,
                workers,
                progress,
                objective_name,
            )
        while finished() < trials:  # one trial after another
            state = _sampler_state(study.sampler)
            if state is not None:  # kept before each trial, so a stopped calibration resumes with the same draws
                study.set_user_attr(SAMPLER_STATE, {"finished": finished(), **state})
            study.optimize(trial_objective, n_trials=1, callbacks=callbacks, gc_after_trial=True)
        if not finished():
            raise ConfigurationError("no calibration trial finished")
        return study

    studies = [path(index) for index in range(starts)]
    study = min(studies, key=lambda each: each.best_value)  # of equal bests, min keeps the earliest path's
    fitted = _as_scenario(study.best_params, base)
    for name in CARRIED:  # the site's own settings the trials ran with (the queue tiers, whose weight is fitted)
        value = getattr(base, name)
        if name not in fitted and value != Scenario.model_fields[name].default:  # not a trial's own, nor the default
            fitted[name] = value
    given_waits, given_days = replay_waits(base.replace(max_jobs=first_part))  # the site as given, as the trials
    given_objective = _scored(objective_name, given_waits, given_days)
    best = float(study.best_value)
    if given_objective <= best:  # no trial beat the site as given on the first part: it stands
        fitted, best = {}, given_objective
    calibration = Calibration(
        log=base.workload,
        train_jobs=first_part,
        trials=sum(_finished(each) for each in studies),
        fitted=fitted,
        train_objective=best,
        given_objective=given_objective,
        objective=objective_name,
        sampler=f"Optuna {optuna.__version__}, TPESampler seeded at {seed}"
        + (f", {workers} workers (trial i seeded by the seed and i)" if workers > 1 else "")
        + (f"; {starts} paths of {trials} trials, seeded at {seed} to {seed + starts - 1}" if starts > 1 else ""),
        starts=[
            {
                "seed": seed + index,
                "trials": _finished(each),
                "best": float(each.best_value),
                "best_trial": each.best_trial.number,
            }
            for index, each in enumerate(studies)
        ]
        if starts > 1
        else [],
    )

    def judged(scenario, grouped: bool = True) -> tuple[dict, object, dict]:
        waits, by_day = replay_waits(scenario)
        first, rest = waits[waits["job_id"] < first_test_id], waits[waits["job_id"] >= first_test_id]
        scores = score_parts(waits, by_day, cut)
        new = rest["job_id"].isin(new_user_ids).to_numpy()
        for part, jobs in (("test, users seen", ~new), ("test, new users", new)):
            if new.any() and jobs.any():  # the held-out jobs by whether the fit saw their user (no daily figure)
                scores[part] = score_part(rest[jobs])
        if not grouped:  # a shaken replay: its spread is of the parts' figures only
            return scores, rest, {}
        groups = {by: grouped_scores(first, "train", by) + grouped_scores(rest, "test", by) for by in GROUPS}
        return scores, rest, groups

    for name, scenario in (("as given", base), ("calibrated", base.replace(**fitted))):
        calibration.scores[name], calibration.held_out[name], calibration.groups[name] = judged(scenario)
        for index in range(1, shakes + 1):  # the same replay under shaken inputs: each figure's chance
            scores, _, _ = judged(scenario.replace(shake=SHAKE_SECONDS, seed=index), grouped=False)
            for part, score in scores.items():
                calibration.shaken.setdefault(name, {}).setdefault(part, []).append(score)
    return calibration
