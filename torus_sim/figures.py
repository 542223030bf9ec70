"""Figures from experiment results, labelled like the paper's (matplotlib, no display needed)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from torus_sim.experiments.scenario import FigureSpec  # noqa: E402

__all__ = ["METRIC_LABELS", "draw_figure"]

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


def draw_figure(table: pd.DataFrame, spec: FigureSpec, path: str | Path) -> Path:
    """Draw one figure to a PNG.

    With a ``series`` parameter, each metric of ``spec.y`` gets a panel with one line per series
    value (Figs. 3, 4, 6, 9 of BGL-FAULT); without one, all metrics share one panel (the
    utilized / unused / lost capacity of Figs. 5, 7, 8, 10).

    Args:
        table: experiment results (one row per run).
        spec: what to draw.
        path: the PNG to write (written whole: drawn to a temporary name, then renamed).

    Returns:
        The PNG path.

    Raises:
        ValueError: no row matches ``spec.where``.
    """
    rows = _select(table, spec.where)
    if rows.empty:
        raise ValueError(f"figure {spec.name}: no results match {spec.where}")
    panels = list(spec.y) if spec.series else [None]
    figure, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 4), squeeze=False)
    for axis, metric in zip(axes[0], panels, strict=True):
        if spec.series:
            for value, group in rows.groupby(spec.series, sort=True):
                mean = group.groupby(spec.x, sort=True)[metric].mean()
                axis.plot(mean.index, mean.values, marker="o", label=f"{spec.series} = {value}")
            axis.set_ylabel(METRIC_LABELS.get(metric, metric))
        else:
            for name in spec.y:
                mean = rows.groupby(spec.x, sort=True)[name].mean()
                axis.plot(mean.index, mean.values, marker="o", label=METRIC_LABELS.get(name, name))
            axis.set_ylabel("Fraction of capacity" if all(name.startswith("omega") for name in spec.y) else "")
        axis.set_xlabel(spec.x_label or spec.x)
        axis.grid(alpha=0.3)
        axis.legend(fontsize=8)
    title = spec.title + ("" if not spec.where else "  (" + ", ".join(f"{k} = {v}" for k, v in spec.where.items()) + ")")
    figure.suptitle("\n".join(textwrap.wrap(title, 60 * len(panels))), fontsize=10)
    figure.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.tmp.png")
    figure.savefig(partial, dpi=110)
    plt.close(figure)
    partial.replace(path)
    return path
