"""Two cases of a finished sweep compared run by run: means with intervals, the paired difference and its test.

``torus-sim compare RESULTS A B --metric avg_bounded_slowdown`` reads a sweep's ``results.csv``, selects the
runs of case A and of case B (a case's ``name``, or ``field=value`` pairs), pairs them by everything else that
varies between runs (the seed, the job set, a window, a log, the grid's other values) and reports each case's
mean with its 95% bootstrap interval, the mean paired difference B - A with its interval and Wilcoxon's
signed-rank test (:mod:`torus_sim.metrics.confidence`).
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from torus_sim.core.errors import ConfigurationError, InputFileError
from torus_sim.core.files import input_text
from torus_sim.experiments.check import NOT_RESULTS, results_columns
from torus_sim.metrics.confidence import Interval, PairedDifference, mean_interval, paired_difference

__all__ = ["CaseComparison", "compare_cases", "read_results", "selection"]


@dataclass(frozen=True)
class CaseComparison:
    """Case B against case A on one metric, over the runs both made on the same inputs.

    Attributes:
        metric: the metric compared.
        paired_on: the columns a pair's runs share (seed, job_set, grid values), in the table's order.
        a, b: each case's mean and interval over the paired runs.
        paired: the paired difference B - A and Wilcoxon's test.
        unpaired_a, unpaired_b: runs of A (of B) without a partner in the other case (left out).
    """

    metric: str
    paired_on: tuple[str, ...]
    a: Interval
    b: Interval
    paired: PairedDifference
    unpaired_a: int
    unpaired_b: int


def read_results(path: str | Path) -> pd.DataFrame:
    """A sweep's results table.

    Args:
        path: a results folder (its ``results.csv`` is read) or a CSV file.

    Returns:
        The table, one row per run.

    Raises:
        FileNotFoundError: neither exists.
        InputFileError: binary data, not a CSV table, or empty.
    """
    path = Path(path)
    if path.is_dir():
        path = path / "results.csv"
    text = input_text(path, "results CSV")
    try:
        return pd.read_csv(io.StringIO(text))
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as error:
        raise InputFileError(
            path, f"is not a results CSV table ({str(error).splitlines()[0] if str(error) else 'empty'})"
        ) from None


def selection(text: str, results: pd.DataFrame) -> dict[str, str]:
    """A case as the user names it.

    Args:
        text: ``EASY`` (a value of the ``name`` column) or ``policy=FCFS-EASY,load_scale=1.2``.
        results: the sweep's results (the columns the text may name).

    Returns:
        ``column -> value`` (text), every run of the case holding all of them.

    Raises:
        ConfigurationError: a column the results do not have, or a bare name without a ``name`` column.
    """
    if "=" not in text:
        if "name" not in results.columns:
            raise ConfigurationError(
                f"case {text!r}: these results have no named cases; name a case as field=value (e.g. policy=FCFS-EASY)"
            )
        return {"name": text}
    chosen = {}
    for part in text.split(","):
        key, _, value = part.partition("=")
        key = key.strip()
        if key not in results.columns:
            raise ConfigurationError(
                f"case {text!r}: the results have no column {key!r} (they have: {', '.join(results.columns)})"
            )
        chosen[key] = value.strip()
    return chosen


def _rows(results: pd.DataFrame, chosen: dict[str, str]) -> pd.Series:
    """Which rows hold every ``column = value`` (a number compared as a number, other values as text)."""
    kept = pd.Series(True, index=results.index)
    for column, value in chosen.items():
        values = results[column]
        if pd.api.types.is_numeric_dtype(values):
            try:
                kept &= values == float(value)
                continue
            except ValueError:
                pass
        kept &= values.astype(str) == value
    return kept


def compare_cases(
    results: pd.DataFrame, a: str, b: str, metrics: list[str], where: dict[str, str] | None = None
) -> list[CaseComparison]:
    """Case B against case A on each metric, paired run by run.

    Args:
        results: a sweep's results (one row per run).
        a: case A (:func:`selection`'s forms: a name, or ``field=value`` pairs).
        b: case B, likewise.
        metrics: metric columns.
        where: ``column -> value`` narrowing both cases (a grid value).

    Returns:
        One :class:`CaseComparison` per metric.

    Raises:
        ConfigurationError: a case selects no run, a metric is no numeric column of the results, or the runs
            cannot be paired (two runs of one case on the same inputs: narrow with ``where``).
    """
    where = {key: str(value) for key, value in (where or {}).items()}
    for key in where:
        if key not in results.columns:
            raise ConfigurationError(f"--where {key}: the results have no column {key!r}")
    computed = (set(results_columns(results)) | ({"failures"} & set(results.columns))) - {"name"}  # failures: the count met
    for metric in metrics:
        if metric not in computed or not pd.api.types.is_numeric_dtype(results[metric]):
            numeric = sorted(column for column in computed if pd.api.types.is_numeric_dtype(results[column]))
            raise ConfigurationError(f"--metric {metric}: not a metric of these results (they have: {', '.join(numeric)})")
    chosen_a, chosen_b = ({**selection(text, results), **where} for text in (a, b))
    runs_a, runs_b = results[_rows(results, chosen_a)], results[_rows(results, chosen_b)]
    for text, runs in ((a, runs_a), (b, runs_b)):
        if runs.empty:
            raise ConfigurationError(f"case {text!r}{_where_text(where)} selects no run of the results")
    parameters = [
        column for column in results.columns if column not in computed and column not in NOT_RESULTS - {"failures_given"}
    ]
    paired_on = []
    for column in parameters:
        if results[column].astype(str).nunique() < 2:
            continue
        left, right = runs_a[column].astype(str), runs_b[column].astype(str)
        if left.nunique() == 1 and right.nunique() == 1 and left.iloc[0] != right.iloc[0]:
            continue  # what tells the two cases apart (the name and the fields that come with it)
        paired_on.append(column)
    keys_a = runs_a[paired_on].astype(str).agg("|".join, axis=1) if paired_on else pd.Series("", index=runs_a.index)
    keys_b = runs_b[paired_on].astype(str).agg("|".join, axis=1) if paired_on else pd.Series("", index=runs_b.index)
    for text, keys in ((a, keys_a), (b, keys_b)):
        if not keys.is_unique:
            raise ConfigurationError(
                f"case {text!r}{_where_text(where)} has several runs on the same inputs ({', '.join(paired_on) or 'none vary'}); "
                "narrow both cases with --where column=value"
            )
    shared = [key for key in keys_a if key in set(keys_b)]
    left = runs_a.set_axis(keys_a.to_numpy()).loc[shared]
    right = runs_b.set_axis(keys_b.to_numpy()).loc[shared]
    comparisons = []
    for metric in metrics:
        values_a, values_b = left[metric].to_numpy(dtype=float), right[metric].to_numpy(dtype=float)
        comparisons.append(
            CaseComparison(
                metric=metric,
                paired_on=tuple(paired_on),
                a=mean_interval(values_a),
                b=mean_interval(values_b),
                paired=paired_difference(values_a, values_b),
                unpaired_a=len(runs_a) - len(shared),
                unpaired_b=len(runs_b) - len(shared),
            )
        )
    return comparisons


def _where_text(where: dict[str, str]) -> str:
    return f" (where {', '.join(f'{key} = {value}' for key, value in where.items())})" if where else ""
