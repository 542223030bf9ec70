"""Figures from experiment results, labelled like the paper's (matplotlib, no display needed)."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from torus_sim.core.errors import ConfigurationError  # noqa: E402

if TYPE_CHECKING:
    from torus_sim.outputs.figure_spec import FigureSpec

__all__ = ["METRIC_LABELS", "against_log_png", "draw_bars", "draw_figure"]

METRIC_LABELS = {
    "avg_bounded_slowdown": "Avg Bounded Slowdown",
    "avg_response_time": "Avg Response Time (s)",
    "avg_wait_time": "Avg Wait Time (s)",
    "omega_util": "Utilized",
    "omega_unused": "Unused",
    "omega_lost": "Lost",
    "job_kills": "Job kills",
    "makespan": "Span T (s)",
}
"""Axis and legend labels of summary metrics (BGL-FAULT's wording where it has one)."""


def _select(table: pd.DataFrame, where: dict) -> pd.DataFrame:
    rows = table
    for key, value in where.items():
        rows = rows[rows[key] == value]
    return rows


def _means(rows: pd.DataFrame, by: str, metric: str, intervals: bool, order=None) -> pd.DataFrame:
    """Each ``by`` value's mean of ``metric`` (columns mean, low, high; low and high NaN without intervals).

    With ``intervals``, low and high are the mean's 95% bootstrap confidence interval over the group's rows
    (its replicates: :func:`torus_sim.metrics.confidence.mean_interval`); NaN for a group of one row.
    """
    from torus_sim.metrics.confidence import mean_interval

    grouped = rows.groupby(by, sort=order is None)[metric]
    table = pd.DataFrame({"mean": grouped.mean()})
    table["low"] = float("nan")
    table["high"] = float("nan")
    if intervals:
        for value, values in grouped:
            found = mean_interval(values.to_numpy(dtype=float))
            table.loc[value, ["low", "high"]] = [found.low, found.high]
    return table if order is None else table.reindex(order)


def _error_bars(table: pd.DataFrame):
    """Matplotlib's ``yerr`` (2, n) from a :func:`_means` table, or None when it has no interval."""
    if not table["low"].notna().any():
        return None
    return [
        (table["mean"] - table["low"]).clip(lower=0).fillna(0).to_numpy(),
        (table["high"] - table["mean"]).clip(lower=0).fillna(0).to_numpy(),
    ]


def _line(axis, means: pd.DataFrame, label: str) -> None:
    """One line of a figure: a :func:`_means` table's means over its x values, with their intervals as error bars."""
    axis.errorbar(means.index, means["mean"].to_numpy(), yerr=_error_bars(means), marker="o", capsize=3, label=label)


def draw_figure(table: pd.DataFrame, spec: FigureSpec, path: str | Path, replicates=()) -> Path:
    """Draw one figure to a PNG.

    With a ``series`` parameter, each metric of ``spec.y`` gets a panel with one line per series
    value (Figs. 3, 4, 6, 9 of BGL-FAULT); without one, all metrics share one panel (the
    utilized / unused / lost capacity of Figs. 5, 7, 8, 10). A point is the mean over the runs that share
    its x (and series); where the sweep repeats its cases (``replicates``), an error bar draws the mean's
    95% confidence interval over them (bootstrap: :mod:`torus_sim.metrics.confidence`).

    Args:
        table: experiment results (one row per run).
        spec: what to draw.
        path: the PNG to write (written whole: drawn to a temporary name, then renamed).
        replicates: the columns that repeat a case (seed, job_set, ...): error bars when any is a column of
            ``table``; none when empty.

    Returns:
        The PNG path.

    Raises:
        ConfigurationError: ``spec`` names a column the results do not have (x, y, series or a where key).
        ValueError: no row matches ``spec.where``.
    """
    named = [("x", spec.x), *(("y", name) for name in spec.y), ("series", spec.series), *(("where", key) for key in spec.where)]
    missing = [(role, name) for role, name in named if name and name not in table.columns]
    if missing:
        role, name = missing[0]
        raise ConfigurationError(
            f"figure {spec.name!r}: {role} names {name!r}, which is not a column of the results "
            f"({', '.join(sorted(map(str, table.columns)))}); fix the figure and redraw it with --replot"
        )
    rows = _select(table, spec.where)
    if rows.empty:
        raise ValueError(f"figure {spec.name}: no results match {spec.where}")
    title = spec.title + ("" if not spec.where else "  (" + ", ".join(f"{k} = {v}" for k, v in spec.where.items()) + ")")
    intervals = any(key in rows.columns for key in replicates)
    if not pd.api.types.is_numeric_dtype(rows[spec.x]):
        return draw_bars(rows, spec.x, spec.y, spec.series, title, path, intervals)
    panels = list(spec.y) if spec.series else [None]
    figure, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 4), squeeze=False)
    for axis, metric in zip(axes[0], panels, strict=True):
        if spec.series:
            for value, group in rows.groupby(spec.series, sort=True):
                _line(axis, _means(group, spec.x, metric, intervals), f"{spec.series} = {value}")
            axis.set_ylabel(METRIC_LABELS.get(metric, metric))
        else:
            for name in spec.y:
                _line(axis, _means(rows, spec.x, name, intervals), METRIC_LABELS.get(name, name))
            axis.set_ylabel("Fraction of capacity" if all(name.startswith("omega") for name in spec.y) else "")
        axis.set_xlabel(_x_label(rows, spec))
        if getattr(spec, "log_y", False):
            axis.set_yscale("log")
        axis.grid(alpha=0.3)
        axis.legend(fontsize=8)
    return _save(figure, title, 60 * len(panels), path)


def _save(figure, title: str, width: int, path: str | Path) -> Path:
    """Title, lay out and write a figure whole (drawn to a temporary name, then renamed); close it."""
    figure.suptitle("\n".join(textwrap.wrap(title, width)), fontsize=10)
    figure.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.tmp.png")
    figure.savefig(partial, dpi=110)
    plt.close(figure)
    partial.replace(path)
    return path


def _x_label(rows: pd.DataFrame, spec: FigureSpec) -> str:
    """The x label, saying which failure count a reduced run (``max_jobs``) had when x is ``failures``."""
    label = spec.x_label or spec.x
    if spec.x != "failures" or "max_jobs" not in rows or not rows["max_jobs"].notna().any():
        return label
    squeezed = "reduced_failures" in rows and (rows["reduced_failures"] == "count").any()
    return label + (" (all inside each reduced run)" if squeezed else " (over the whole log; each reduced run meets its share)")


def draw_bars(table: pd.DataFrame, x: str, y, series: str, title: str, path: str | Path, intervals: bool = False) -> Path:
    """Draw grouped bars: one panel per metric of ``y``, one group per ``x`` value, one bar per ``series`` value.

    Values are means over the rows that share x and series (seeds, sets); with ``intervals``, an error bar
    draws each mean's 95% bootstrap confidence interval over those rows. The x values keep the
    table's order; a panel whose values span more than 30x gets a log scale.

    Args:
        table: results.
        x: a categorical column (run name, speedup model, size group).
        y: metric columns.
        series: a column drawn as one bar per value ("" for one bar per group).
        title: figure title.
        path: the PNG (written whole: drawn to a temporary name, then renamed).
        intervals: draw the means' confidence intervals as error bars.

    Returns:
        The PNG path.
    """
    x_values = list(dict.fromkeys(table[x]))
    series_values = list(dict.fromkeys(table[series])) if series else [None]
    width = 0.8 / len(series_values)
    figure, axes = plt.subplots(1, len(y), figsize=(5.5 * len(y), 4), squeeze=False)
    for axis, metric in zip(axes[0], y, strict=True):
        heights = []
        for index, value in enumerate(series_values):
            rows = table if value is None else table[table[series] == value]
            means = _means(rows, x, metric, intervals, order=x_values)
            heights += [height for height in means["mean"].to_numpy() if height == height and height > 0]
            axis.bar(
                [position + index * width for position in range(len(x_values))],
                means["mean"].to_numpy(),
                width,
                yerr=_error_bars(means),
                capsize=2,
                label=None if value is None else f"{series} = {value}",
            )
        if heights and max(heights) / min(heights) > 30:
            axis.set_yscale("log")
        axis.set_xticks([position + width * (len(series_values) - 1) / 2 for position in range(len(x_values))])
        axis.set_xticklabels([str(value) for value in x_values], rotation=30, ha="right", fontsize=8)
        axis.set_ylabel(METRIC_LABELS.get(metric, metric))
        axis.grid(alpha=0.3, axis="y")
        if series:
            axis.legend(fontsize=8)
    return _save(figure, title, 60 * len(y), path)


def against_log_png(comparison) -> bytes:
    """The figure of a replay against its log: the two waits' CDFs, and the utilization per day.

    Args:
        comparison: a :class:`~torus_sim.metrics.against_log.LogComparison`.

    Returns:
        The PNG's bytes (``against_log.png``).
    """
    import io

    import numpy as np

    figure, (waits, days) = plt.subplots(1, 2, figsize=(11, 4))
    for column, label in (("logged_wait", "logged"), ("simulated_wait", "simulated")):
        values = np.sort(comparison.waits[column].to_numpy(dtype=float))
        if len(values):
            waits.step(np.maximum(values, 1.0), np.arange(1, len(values) + 1) / len(values), where="post", label=label)
    waits.set_xscale("log")
    waits.set_xlabel("wait (s; below 1 s drawn at 1 s)")
    waits.set_ylabel("share of jobs")
    ks = comparison.summary.get("ks")
    waits.set_title(f"waits' CDFs (KS distance {ks['statistic']:.3f})" if ks else "waits' CDFs", fontsize=9)
    waits.grid(alpha=0.3)
    if len(comparison.waits):
        waits.legend(fontsize=8)
    by_day = comparison.by_day
    days.plot(by_day["day"], by_day["logged_utilization"], label="logged", linewidth=0.8)
    days.plot(by_day["day"], by_day["simulated_utilization"], label="simulated", linewidth=0.8)
    days.set_xlabel("day from the log's start")
    days.set_ylabel("utilization (share of the machine)")
    days.set_title("utilization per day", fontsize=9)
    days.grid(alpha=0.3)
    if len(by_day):
        days.legend(fontsize=8)
    log = comparison.summary["log"]
    figure.suptitle(
        f"{log['path']}: simulated against the logged schedule ({comparison.summary['jobs']['compared']:,} jobs)", fontsize=10
    )
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110)
    plt.close(figure)
    return buffer.getvalue()
