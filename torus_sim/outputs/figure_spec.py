"""What one figure of an experiment draws: its axes, series, panels and the rows it selects.

Read from a scenario file's ``[[figure]]`` tables (:func:`~torus_sim.experiments.experiment.load_experiment`) and
drawn by :func:`~torus_sim.outputs.figures.draw_figure`; it lives with the outputs so that the drawing never
imports the orchestration above it.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FigureSpec"]


@dataclass(frozen=True)
class FigureSpec:
    """One figure drawn from an experiment's results.

    Attributes:
        name: file stem of the PNG.
        x: a column on the x axis (a grid parameter, ``name``, ``size_group``).
        series: a column drawn as one line (bar) per value ("" for one).
        y: metrics, one panel each (all in one panel without a series).
        where: fixed values of other columns selecting the rows.
        title: figure title.
        x_label: x-axis label.
        table: ``results`` (one row per run) or ``size_groups`` (one row per run and size group).
        log_y: draw the y axes on a log scale.
    """

    name: str
    x: str
    series: str
    y: tuple[str, ...]
    where: dict
    title: str = ""
    x_label: str = ""
    table: str = "results"
    log_y: bool = False
