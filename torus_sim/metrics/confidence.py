"""Confidence intervals and paired tests over repeated runs: is policy A better than B, or is it the seed?

A sweep that repeats every case over replicates (failure-draw seeds, job sets, windows of a log, logs) has
one number per run and metric. This module turns them into what a reviewer asks for:

- :func:`mean_interval`: the mean over the replicates with a 95% confidence interval, by the bootstrap over
  runs (``scipy.stats.bootstrap``, bias-corrected and accelerated, seeded: the same table every time);
- :func:`paired_difference`: for two cases run on the same replicates, the mean of the paired differences
  B - A with its bootstrap interval and the Wilcoxon signed-rank test (``scipy.stats.wilcoxon``, two-sided);
- :func:`interval_table` and :func:`paired_table`: the same for every case and metric of a results table.

References:
    Efron and Tibshirani, *An Introduction to the Bootstrap*, Chapman & Hall 1993, ch. 14 (BCa intervals);
    Wilcoxon, "Individual comparisons by ranking methods", Biometrics Bulletin 1(6), 1945;
    scipy.stats.bootstrap and scipy.stats.wilcoxon (SciPy >= 1.15).
"""

from __future__ import annotations

import itertools
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Sequence

    import pandas as pd

__all__ = [
    "CONFIDENCE",
    "RESAMPLES",
    "SEED",
    "Interval",
    "PairedDifference",
    "interval_table",
    "mean_interval",
    "mean_intervals",
    "paired_difference",
    "paired_table",
]

CONFIDENCE = 0.95
"""The confidence level of every interval."""

RESAMPLES = 9999
"""Bootstrap resamples per interval (scipy's default)."""

SEED = 0
"""The bootstrap's seed: an interval is a function of the values alone (the same table on every run)."""


@dataclass(frozen=True)
class Interval:
    """A mean over replicates with its confidence interval.

    Attributes:
        n: replicates (runs) with a value.
        mean: their mean (NaN when n = 0).
        low, high: the interval's ends (NaN when n < 2: one run has no spread to measure).
        method: ``BCa`` (bias-corrected and accelerated bootstrap), ``percentile`` (where BCa is undefined:
            very few distinct values), ``constant`` (every value equal: the interval is that value) or ``none``.
    """

    n: int
    mean: float
    low: float
    high: float
    method: str


@dataclass(frozen=True)
class PairedDifference:
    """B - A over the replicates both cases ran (the same seed, job set, window or log).

    Attributes:
        n: pairs.
        mean_a, mean_b: each case's mean over those pairs.
        difference: the interval of the mean paired difference B - A (:class:`Interval`).
        statistic: Wilcoxon's signed-rank statistic (the smaller of the two rank sums; NaN when n = 0).
        p_value: its two-sided p-value (exact for small n without ties, else the normal approximation;
            1.0 when every difference is 0).
        zeros: pairs with no difference (Wilcoxon's ``wilcox`` zero method leaves them out of the ranks).
    """

    n: int
    mean_a: float
    mean_b: float
    difference: Interval
    statistic: float
    p_value: float
    zeros: int


def mean_intervals(
    values: np.ndarray, confidence: float = CONFIDENCE, resamples: int = RESAMPLES, seed: int = SEED
) -> list[Interval]:
    """The mean of every row of ``values`` with its bootstrap confidence interval (one call for all rows).

    Args:
        values: float ``(metrics, n)``, each row one metric over n replicates; NaN for a replicate without
            the metric (a row with NaN is bootstrapped over its finite values alone).
        confidence: the level, in (0, 1) (default CONFIDENCE = 0.95).
        resamples: bootstrap resamples (default RESAMPLES = 9,999).
        seed: the resampling generator's seed (default SEED = 0).

    Returns:
        list[Interval]: one per row of ``values``, in order.

    Raises:
        ValueError: ``values`` is not two-dimensional, or ``confidence`` not in (0, 1).
    """
    values = np.asarray(values, dtype=float)
    if values.ndim != 2:
        raise ValueError(f"values must be (metrics, replicates), got shape {values.shape}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    results: list[Interval | None] = [None] * len(values)
    finite = np.isfinite(values)
    # rows with every value finite are bootstrapped together (one resampling for all of them)
    whole = [row for row in range(len(values)) if finite[row].all()]
    groups = [whole] if whole else []
    groups += [[row] for row in range(len(values)) if not finite[row].all()]
    for rows in groups:
        data = [values[row][finite[row]] for row in rows]
        n = len(data[0])
        if n == 0:
            for row in rows:
                results[row] = Interval(0, float("nan"), float("nan"), float("nan"), "none")
            continue
        block = np.array(data)
        means = block.mean(axis=1)
        constant = (block == block[:, :1]).all(axis=1)
        if n < 2:
            for row, mean in zip(rows, means, strict=True):
                results[row] = Interval(1, float(mean), float("nan"), float("nan"), "none")
            continue
        spread = [index for index in range(len(rows)) if not constant[index]]
        for index in range(len(rows)):
            if constant[index]:
                results[rows[index]] = Interval(n, float(means[index]), float(means[index]), float(means[index]), "constant")
        if not spread:
            continue
        low, high, method = _bootstrap(block[spread], confidence, resamples, seed)
        for index, lo, hi, how in zip(spread, low, high, method, strict=True):
            results[rows[index]] = Interval(n, float(means[index]), float(lo), float(hi), how)
    return results  # type: ignore[return-value]


def _bootstrap(block: np.ndarray, confidence: float, resamples: int, seed: int) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """BCa intervals of each row's mean; percentile ones for the rows where BCa is undefined."""
    from scipy import stats

    def interval(method: str, rows: np.ndarray):
        with warnings.catch_warnings():  # BCa's undefined rows come back NaN; they get the percentile interval
            warnings.simplefilter("ignore", RuntimeWarning)
            warnings.simplefilter("ignore", getattr(stats, "DegenerateDataWarning", RuntimeWarning))
            result = stats.bootstrap(
                (rows,),
                np.mean,
                axis=-1,
                vectorized=True,
                confidence_level=confidence,
                n_resamples=resamples,
                method=method,
                rng=np.random.default_rng(seed),
            )
        return np.atleast_1d(result.confidence_interval.low), np.atleast_1d(result.confidence_interval.high)

    low, high = interval("BCa", block)
    method = ["BCa"] * len(block)
    undefined = ~(np.isfinite(low) & np.isfinite(high))
    if undefined.any():
        plain_low, plain_high = interval("percentile", block[undefined])
        low, high = low.copy(), high.copy()
        low[undefined], high[undefined] = plain_low, plain_high
        method = ["percentile" if gone else "BCa" for gone in undefined]
    return low, high, method


def mean_interval(
    values: Sequence[float], confidence: float = CONFIDENCE, resamples: int = RESAMPLES, seed: int = SEED
) -> Interval:
    """The mean of ``values`` (one metric over n replicates) with its bootstrap confidence interval.

    Args:
        values: one number per replicate (NaN left out).
        confidence: the level, in (0, 1) (default CONFIDENCE = 0.95).
        resamples: bootstrap resamples (default RESAMPLES = 9,999).
        seed: the resampling generator's seed (default SEED = 0).

    Returns:
        Interval: the mean over the replicates, the interval's ends and how they were found.
    """
    return mean_intervals(np.asarray(values, dtype=float).reshape(1, -1), confidence, resamples, seed)[0]


def paired_difference(
    a: Sequence[float], b: Sequence[float], confidence: float = CONFIDENCE, resamples: int = RESAMPLES, seed: int = SEED
) -> PairedDifference:
    """B - A paired by replicate: the mean difference with its bootstrap interval, and Wilcoxon's signed-rank test.

    Args:
        a: case A's values, position i from replicate i (a seed, a window, a log); a pair with a NaN on
            either side is left out.
        b: case B's values, from the same replicates in the same order.
        confidence: the level, in (0, 1) (default CONFIDENCE = 0.95).
        resamples: bootstrap resamples (default RESAMPLES = 9,999).
        seed: the resampling generator's seed (default SEED = 0).

    Returns:
        PairedDifference: B - A over the pairs, with its interval and Wilcoxon's signed-rank test.

    Raises:
        ValueError: ``a`` and ``b`` differ in length.
    """
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"paired values must be two sequences of one length, got {a.shape} and {b.shape}")
    return _paired(a, b, mean_interval(b - a, confidence, resamples, seed))


def _paired(a: np.ndarray, b: np.ndarray, interval: Interval) -> PairedDifference:
    """The paired difference of ``a`` and ``b`` (NaN pairs left out) given the interval of B - A's mean."""
    from scipy import stats

    kept = np.isfinite(a) & np.isfinite(b)
    a, b = a[kept], b[kept]
    differences = b - a
    zeros = int(np.count_nonzero(differences == 0))
    if len(differences) == 0:
        statistic, p_value = float("nan"), float("nan")
    elif zeros == len(differences):
        statistic, p_value = 0.0, 1.0
    else:
        with warnings.catch_warnings():  # a handful of pairs: scipy warns that the normal approximation is rough
            warnings.simplefilter("ignore", RuntimeWarning)
            warnings.simplefilter("ignore", UserWarning)
            test = stats.wilcoxon(differences)
        statistic, p_value = float(test.statistic), float(test.pvalue)
    return PairedDifference(
        n=len(differences),
        mean_a=float(a.mean()) if len(a) else float("nan"),
        mean_b=float(b.mean()) if len(b) else float("nan"),
        difference=interval,
        statistic=statistic,
        p_value=p_value,
        zeros=zeros,
    )


def _numeric(results: pd.DataFrame, metrics: Sequence[str]) -> list[str]:
    """The metrics that are numeric columns of ``results`` with at least one value."""
    import pandas as pd

    return [
        metric
        for metric in metrics
        if metric in results.columns
        and pd.api.types.is_numeric_dtype(results[metric])
        and not pd.api.types.is_bool_dtype(results[metric])
        and results[metric].notna().any()
    ]


def interval_table(
    results: pd.DataFrame,
    by: Sequence[str],
    metrics: Sequence[str],
    confidence: float = CONFIDENCE,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> pd.DataFrame:
    """Every case's mean and confidence interval of every metric over its replicates.

    Args:
        results: one row per run.
        by: the columns that name a case (the sweep's parameters other than the replicates); empty: one case.
        metrics: the metric columns (non-numeric or empty ones are left out).
        confidence: the level, in (0, 1) (default CONFIDENCE = 0.95).
        resamples: bootstrap resamples (default RESAMPLES = 9,999).
        seed: the resampling generator's seed (default SEED = 0).

    Returns:
        One row per case and metric, in the cases' first-appearance order: the ``by`` columns, ``metric``,
        ``n`` (replicates), ``mean``, ``ci_low``, ``ci_high``, ``ci_method``.
    """
    import pandas as pd

    metrics = _numeric(results, metrics)
    rows = []
    for key, group in _groups(results, by):
        intervals = mean_intervals(group[metrics].to_numpy(dtype=float).T, confidence, resamples, seed) if metrics else []
        for metric, found in zip(metrics, intervals, strict=True):
            rows.append(
                {
                    **dict(zip(by, key, strict=True)),
                    "metric": metric,
                    "n": found.n,
                    "mean": found.mean,
                    "ci_low": found.low,
                    "ci_high": found.high,
                    "ci_method": found.method,
                }
            )
    return pd.DataFrame(rows, columns=[*by, "metric", "n", "mean", "ci_low", "ci_high", "ci_method"])


def paired_table(
    results: pd.DataFrame,
    compare: str,
    by: Sequence[str],
    replicates: Sequence[str],
    metrics: Sequence[str],
    confidence: float = CONFIDENCE,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> pd.DataFrame:
    """Paired differences between every two values of ``compare`` that ran the same replicates, all else equal.

    Two cases form a pair when they differ in the ``compare`` column alone (two policies at the same failure
    count, say); their runs are paired by the ``replicates`` columns (the same seed, job set, window or log).

    Args:
        results: one row per run.
        compare: the column whose values are compared (a sweep's ``name`` or ``policy``).
        by: the other columns that name a case (the pair shares their values).
        replicates: the columns that name a replicate (a pair's runs agree on them).
        metrics: the metric columns.
        confidence: the level, in (0, 1) (default CONFIDENCE = 0.95).
        resamples: bootstrap resamples (default RESAMPLES = 9,999).
        seed: the resampling generator's seed (default SEED = 0).

    Returns:
        One row per pair and metric: ``a`` and ``b`` (the two values of ``compare``, in the order they first
        appear), the ``by`` columns, ``metric``, ``n`` (pairs), ``mean_a``, ``mean_b``, ``difference`` (mean of
        B - A), ``ci_low``, ``ci_high`` (its interval), ``ci_method``, ``wilcoxon`` (the signed-rank statistic),
        ``p_value`` (two-sided), ``zeros`` (pairs without difference). Empty when there is no replicate column,
        no metric or no pair.
    """
    import pandas as pd

    metrics = _numeric(results, metrics)
    by = [column for column in by if column != compare]
    columns = ["a", "b", *by, "metric", "n", "mean_a", "mean_b", "difference", "ci_low", "ci_high"]
    columns += ["ci_method", "wilcoxon", "p_value", "zeros"]
    if not replicates or not metrics or compare not in results.columns:
        return pd.DataFrame(columns=columns)
    rows = []
    for key, group in _groups(results, by):
        cases = {value[0]: rows_of.set_index(list(replicates))[metrics] for value, rows_of in _groups(group, [compare])}
        for first, second in itertools.combinations(cases, 2):
            left, right = cases[first], cases[second]
            shared = left.index.intersection(right.index)
            if not (left.index.is_unique and right.index.is_unique) or len(shared) == 0:
                continue
            a = left.loc[shared].to_numpy(dtype=float).T
            b = right.loc[shared].to_numpy(dtype=float).T
            intervals = mean_intervals(b - a, confidence, resamples, seed)
            for index, metric in enumerate(metrics):
                found = _paired(a[index], b[index], intervals[index])
                rows.append(
                    {
                        "a": first,
                        "b": second,
                        **dict(zip(by, key, strict=True)),
                        "metric": metric,
                        "n": found.n,
                        "mean_a": found.mean_a,
                        "mean_b": found.mean_b,
                        "difference": found.difference.mean,
                        "ci_low": found.difference.low,
                        "ci_high": found.difference.high,
                        "ci_method": found.difference.method,
                        "wilcoxon": found.statistic,
                        "p_value": found.p_value,
                        "zeros": found.zeros,
                    }
                )
    return pd.DataFrame(rows, columns=columns)


def _text(value) -> str:
    return "" if value is None or (isinstance(value, float) and np.isnan(value)) else str(value)


def _groups(results: pd.DataFrame, by: Sequence[str]):
    """``(key tuple, rows)`` per case, in first-appearance order (NaN is a value of its own)."""
    if not by:
        yield (), results
        return
    labels = results[list(by)].astype(object).where(results[list(by)].notna(), None)
    keys = [tuple(row) for row in labels.itertuples(index=False, name=None)]
    order: dict[tuple, list[int]] = {}
    for position, key in enumerate(keys):
        order.setdefault(tuple(_text(value) for value in key), []).append(position)
    for positions in order.values():
        yield keys[positions[0]], results.iloc[positions]
