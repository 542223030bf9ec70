"""What the browser view draws, as Vega-Lite charts (altair) rendered in the browser.

The page sends a small chart specification per step (a few kilobytes for 128 nodes) and the
browser draws it, so a step costs the model's step plus building these tables; nothing is
rasterized on the server. Each function takes a model (:class:`torus_sim.interfaces.viz.app.VizModel`) and returns
an ``altair`` chart; :func:`node_table` is the data of the machine drawing (tested directly).

* :func:`machine_chart`: every node (a torus's supernodes as 2-D slices of its first two
  dimensions, one panel per position along the others; a cluster as a near-square grid), free /
  busy (one colour per job, stable across steps) / down, outlined red when it failed during the
  last step and blue when its job started then, white separators, a hover tooltip (node, job,
  size, start, walltime, attempts); it fills its cell's width; :func:`legend_html` is its legend.
* :func:`live_charts`: utilization, queue length, average bounded slowdown of the jobs finished so
  far, and job kills (or preemptions) against simulated hours, with labelled axes.
* :func:`gantt_chart`: the most recently started jobs, one row each, from start to end (or now).
"""

from __future__ import annotations

import math

import altair as alt
import numpy as np
import pandas as pd

from torus_sim.metrics import bounded_slowdown

__all__ = [
    "JOB_PALETTE",
    "STATES",
    "gantt_chart",
    "legend_html",
    "live_charts",
    "machine_chart",
    "node_table",
    "power_chart",
    "spec",
]

JOB_PALETTE = (
    "#1f77b4 #aec7e8 #ff7f0e #ffbb78 #2ca02c #98df8a #d62728 #ff9896 #9467bd #c5b0d5 "
    "#8c564b #c49c94 #e377c2 #f7b6d2 #7f7f7f #c7c7c7 #bcbd22 #dbdb8d #17becf #9edae5"
).split()
"""One colour per job id (``job_id % 20``): a job keeps its colour from step to step (matplotlib's tab20)."""

FREE, DOWN = "#e6e6e6", "#111111"
OFF = "#9fb3c8"
"""A switched-off node's fill (idle nodes switched off, ``idle_off_after``); a booting one has its job's colour."""
SWITCHING_OFF = "#cbd8e6"
"""An idle node's fill while it switches off (a run with a ``shutdown_time``): between free and :data:`OFF`."""
BOOTING = "#f2d680"
"""An idle node's fill while it finishes a boot for a job that ended before the boot did (killed, moved)."""
FAILED_STROKE, STARTED_STROKE, SEPARATOR = "#e00000", "#1f4fff", "#ffffff"
STATES = ("free", "switching off", "switched off", "booting", "busy", "down", "failed this step", "started this step")
"""The legend's entries."""


def _torus_positions(dims: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, list[tuple[str, float, float]]]:
    """Column and row of every supernode (row-major index order) and the panels' titles with their places."""
    shape = dims if len(dims) >= 2 else (1, *dims)
    nx, ny, rest = shape[0], shape[1], shape[2:]
    panels = int(np.prod(rest)) if rest else 1
    if len(shape) >= 4:
        rows = rest[0]
    else:
        rows = 2 if panels % 2 == 0 and panels > 2 else 1
    columns = -(-panels // rows)
    names = "xyzwuv" if len(shape) <= 3 else "ABCDEF"
    index = np.arange(int(np.prod(shape)))
    coordinates = np.array(np.unravel_index(index, shape))
    panel = np.ravel_multi_index(coordinates[2:], rest) if rest else np.zeros(len(index), dtype=np.int64)
    panel_row, panel_column = np.divmod(panel, columns)
    column = panel_column * (ny + 1) + coordinates[1]
    row = panel_row * (nx + 1.6) + coordinates[0]
    titles = []
    for number, combination in enumerate(np.ndindex(*rest) if rest else [()]):
        r, c = divmod(number, columns)
        label = ", ".join(f"{names[2 + k]} = {v}" for k, v in enumerate(combination))
        titles.append((label, c * (ny + 1) + ny / 2, r * (nx + 1.6) - 0.55))
    return column.astype(float), row.astype(float), titles


def node_table(model) -> tuple[pd.DataFrame, list[tuple[str, float, float]]]:
    """One row per node: where it is drawn, its state, its job and what the tooltip says.

    Args:
        model: a model whose platform has node identities (the torus, or a cluster built with them).

    Returns:
        ``(table, titles)``: columns ``node``, ``column``, ``row`` (drawing units, one per node),
        ``state`` (free / busy / down, or off: switched off, or switching off: on its way there, or
        booting: finishing a boot its job ended before), ``fill`` (colour), ``stroke`` (red: failed during the last
        step; blue: its job started then; white: neither), ``job``, ``size``, ``started_h``,
        ``walltime_h``, ``attempts``, ``down_until_h``; and the panel titles with their places
        (a torus; empty for a cluster).
    """
    platform = model.platform
    capacity = platform.capacity
    if platform.table is not None:  # a torus's partitions: its supernodes drawn plane by plane
        column, row, titles = _torus_positions(platform.table.torus.dims)
    else:
        rows, columns = platform.layout()
        row, column = np.divmod(np.arange(capacity), columns)
        row, column, titles = row.astype(float), column.astype(float), []
    job_at = np.asarray(platform.job_at)
    down = np.asarray(platform.down_until) > -np.inf
    state = np.where(down, "down", np.where(job_at >= 0, "busy", "free"))
    fill = np.where(down, DOWN, np.where(job_at >= 0, np.array(JOB_PALETTE)[np.maximum(job_at, 0) % 20], FREE))
    states = getattr(model, "power_states", None)
    if states is not None:  # idle nodes switched off (or switching off): drawn apart from the free ones that are on
        off = states.off(model.now) & (state == "free")
        switching = off & states.switching_off(model.now)
        state, fill = np.where(off, "off", state), np.where(off, OFF, fill)
        state, fill = np.where(switching, "switching off", state), np.where(switching, SWITCHING_OFF, fill)
        booting = states.booting_idle(model.now) & (state == "free")
        state, fill = np.where(booting, "booting", state), np.where(booting, BOOTING, fill)
    stroke = np.full(capacity, SEPARATOR, dtype=object)
    started = {int(n) for _, allocation in model.started_this_step for n in platform.members(allocation) if job_at[n] >= 0}
    stroke[list(started)] = STARTED_STROKE
    failed = [int(n) for n in model.failed_this_step]
    stroke[failed] = FAILED_STROKE
    running = model.running_jobs
    jobs = [running.get(int(j)) if j >= 0 else None for j in job_at]
    table = pd.DataFrame(
        {
            "node": np.arange(capacity),
            "column": column,
            "row": row,
            "state": state,
            "fill": fill,
            "stroke": stroke,
            "job": [int(j) if j >= 0 else None for j in job_at],
            "size": [job.size if job is not None else None for job in jobs],
            "started_h": [round(job.started_at / 3600, 2) if job is not None else None for job in jobs],
            "walltime_h": [round(job.walltime / 3600, 2) if job is not None else None for job in jobs],
            "attempts": [job.attempts if job is not None else None for job in jobs],
            "down_until_h": [
                round(float(platform.down_until[n]) / 3600, 2) if down[n] and math.isfinite(platform.down_until[n]) else None
                for n in range(capacity)
            ],
        }
    )
    table["detail"] = [_node_detail(row) for row in table.itertuples(index=False)]
    return table, titles


def _node_detail(row) -> str:
    """The tooltip's line for one node: its job's facts when busy, its repair time when down, nothing when free."""
    if row.state == "busy":
        return (
            f"job {row.job} · size {row.size} · started t = {row.started_h:,.2f} h · walltime {row.walltime_h:,.2f} h · "
            f"attempt {row.attempts}"
        )
    if row.state == "down":
        return "down" if pd.isna(row.down_until_h) else f"down until t = {row.down_until_h:,.2f} h"
    if row.state == "off":
        return "switched off (idle): a job given it waits for its boot"
    if row.state == "booting":
        return "booting (idle): its job ended before the boot did; a job given it waits for the boot's end"
    if row.state == "switching off":
        return "switching off (idle): a job given it waits for the switch-off to end, then for its boot"
    return ""


def legend_html(switched_off: bool = False, switching_off: bool = False) -> str:
    """The machine drawing's legend as HTML: free, busy (one colour per job), down, failed / started this step.

    Args:
        switched_off: add the switched-off nodes' colour (a run with ``idle_off_after``).
        switching_off: add the colour of nodes still switching off (a run with a ``shutdown_time`` too).

    Returns:
        One ``<div>`` of coloured boxes with their labels.
    """
    items = [
        (FREE, SEPARATOR, "free"),
        *([(SWITCHING_OFF, SEPARATOR, "switching off")] if switched_off and switching_off else []),
        *([(OFF, SEPARATOR, "switched off"), (BOOTING, SEPARATOR, "booting (its job ended)")] if switched_off else []),
        (JOB_PALETTE[0], SEPARATOR, "busy (one colour per job)"),
        (DOWN, SEPARATOR, "down"),
        (FREE, FAILED_STROKE, "failed this step"),
        (FREE, STARTED_STROKE, "started this step"),
    ]
    boxes = "".join(
        f'<span style="display:inline-flex;align-items:center;margin-right:14px">'
        f'<span style="width:14px;height:14px;background:{fill};border:3px solid {stroke};outline:1px solid #bbb;'
        f'margin-right:5px;box-sizing:border-box"></span>{label}</span>'
        for fill, stroke, label in items
    )
    return f'<div class="torus-sim-legend" style="font-size:13px;line-height:22px">{boxes}</div>'


def machine_chart(model, height: int = 330) -> alt.Chart:
    """The machine: every node coloured by state, outlines for this step's failures and starts, tooltips.

    Args:
        model: see :func:`node_table`.
        height: pixels; the width is the cell's (``"container"``), so every node stays inside it.

    Returns:
        A layered altair chart (one view, so it can take its container's width); :func:`legend_html`
        is its legend.
    """
    table, titles = node_table(model)
    platform = model.platform
    table = table.assign(column_end=table["column"] + 0.94, row_end=table["row"] + 0.94)
    width_units = float(table["column"].max() + 1)
    height_units = float(table["row"].max() + 1) + (0.6 if titles else 0)
    top = -0.9 if titles else 0.0
    x = alt.X("column:Q", axis=None, scale=alt.Scale(domain=[0, width_units], nice=False, zero=False))
    y = alt.Y("row:Q", axis=None, scale=alt.Scale(domain=[top, height_units], nice=False, zero=False, reverse=True))
    strokes = alt.condition(f"datum.stroke != '{SEPARATOR}'", alt.value(3), alt.value(1))
    nodes = (
        alt.Chart(table)
        .mark_rect()
        .encode(
            x=x,
            x2="column_end:Q",
            y=y,
            y2="row_end:Q",
            fill=alt.Fill("fill:N", scale=None),
            stroke=alt.Stroke("stroke:N", scale=None),
            strokeWidth=strokes,
            tooltip=[  # only what applies to the node's state (no "down until 0" on a busy node)
                alt.Tooltip("node:Q", title="node"),
                alt.Tooltip("state:N", title="state"),
                alt.Tooltip("detail:N", title=" "),
            ],
        )
    )
    layers = [nodes]
    if titles:
        heads = pd.DataFrame(titles, columns=["title", "column", "row"])
        layers.append(alt.Chart(heads).mark_text(fontSize=11, baseline="middle").encode(x=x, y=y, text="title:N"))
    down = int(np.count_nonzero(np.asarray(platform.down_until) > -np.inf))
    what = platform.label
    off = int((table["state"] == "off").sum())
    switching = int((table["state"] == "switching off").sum())
    switched = f"   off {off}" if getattr(model, "power_states", None) is not None else ""
    if switching:
        switched += f"   switching off {switching}"
    title = [
        f"{what}   t = {model.now / 3600:,.1f} h   busy {int(np.count_nonzero(np.asarray(platform.job_at) >= 0))}   down {down}"
        + switched,
        f"nodes failed this step {len(set(model.failed_this_step))}   jobs started this step {len(model.started_this_step)}",
    ]
    drawing = alt.layer(*layers).properties(width="container", height=height, title=title, autosize="fit")
    return drawing.configure_view(strokeWidth=0).configure_title(fontSize=13, anchor="start")


def _running_bounded_slowdown(model, times: np.ndarray) -> np.ndarray:
    jobs = model.table("jobs")
    if jobs.empty:
        return np.full(len(times), np.nan)
    jobs = jobs.sort_values("finished_at")
    slowdown = bounded_slowdown((jobs["finished_at"] - jobs["submitted_at"]).to_numpy(), jobs["runtime"].to_numpy())
    cumulative = np.cumsum(slowdown) / np.arange(1, len(slowdown) + 1)
    done = np.searchsorted(jobs["finished_at"].to_numpy(), times, side="right")
    return np.where(done > 0, cumulative[np.maximum(done - 1, 0)], np.nan)


def live_charts(model, height: int = 190) -> list[alt.Chart]:
    """Utilization, queue length, average bounded slowdown so far and job kills (or preemptions) over simulated hours.

    With power accounting, the machine's power and the price too (:func:`power_chart`).

    Args:
        model: a model that has collected at least its initial row.
        height: pixels of each chart; the width is the cell's.

    Returns:
        Four line charts (five with power accounting; one view each, so each takes its container's width);
        a flat series gets the range [0, 1] (never a ±0.04 axis).
    """
    series = model.datacollector.get_model_vars_dataframe()
    hours = series["time"].to_numpy() / 3600.0
    killed = series["preemptions"].iloc[-1] == 0
    panels = [
        ("utilization (busy / N)", series["utilization"].to_numpy()),
        ("queue length (jobs)", series["queued_jobs"].to_numpy()),
        ("avg bounded slowdown", _running_bounded_slowdown(model, series["time"].to_numpy())),
        (
            "job kills by failures" if killed else "preemptions by the policy",
            series["job_kills" if killed else "preemptions"].to_numpy(),
        ),
    ]
    charts = []
    for title, values in panels:
        data = pd.DataFrame({"hours": hours, "value": values})
        finite = data["value"].dropna()
        low = float(min(0.0, finite.min())) if len(finite) else 0.0
        high = float(finite.max()) if len(finite) else 1.0
        domain = [low, high if high > low else low + 1.0]
        charts.append(
            alt.Chart(data)
            .mark_line(color="#1f77b4", point=len(data) <= 2)
            .encode(
                x=alt.X("hours:Q", title="simulated hours", scale=_empty_axis(data.dropna(), (0.0, 1.0))),  # NaN: not drawn
                y=alt.Y("value:Q", title=None, scale=alt.Scale(domain=domain, nice=True)),
                tooltip=[alt.Tooltip("hours:Q", format=",.1f"), alt.Tooltip("value:Q", format=",.3f", title=title)],
            )
            .properties(width="container", height=height, title=title, autosize="fit")
            .configure_axis(labelFontSize=11, titleFontSize=11)
            .configure_title(fontSize=12, anchor="start")
        )
    if "power_kw" in series.columns and getattr(model, "power", None) is not None:
        charts.append(power_chart(model, series, height))
    return charts


def power_chart(model, series: pd.DataFrame, height: int = 190) -> alt.Chart:
    """The machine's power (kW) at each step, its cap where one holds, and the electricity price (right axis).

    Args:
        model: a model with power accounting (``model.power``).
        series: its collected rows (``time``, ``power_kw``).
        height: pixels; the width is the cell's.

    Returns:
        A layered chart: power and the cap (left axis, kW), the price per kWh (right axis, dashed).
    """
    power = model.power
    times = series["time"].to_numpy(dtype=float)
    data = pd.DataFrame(
        {
            "hours": times / 3600.0,
            "power_kw": series["power_kw"].to_numpy(dtype=float),
            "price": power.tariff.price_at(times, power.clock_start_hour),
        }
    )
    layers = [
        alt.Chart(data)
        .mark_line(color="#d62728", point=len(data) <= 2)
        .encode(
            x=alt.X("hours:Q", title="simulated hours"),
            y=alt.Y("power_kw:Q", title="kW", scale=alt.Scale(zero=True)),
            tooltip=[alt.Tooltip("hours:Q", format=",.1f"), alt.Tooltip("power_kw:Q", format=",.1f", title="power (kW)")],
        )
    ]
    if power.cap is not None:
        level = power.cap.at(times, power.nodes, power.node.busy_w, power.clock_start_hour) / 1000.0
        data["cap_kw"] = np.where(np.isfinite(level), level, np.nan)
        layers.append(alt.Chart(data).mark_line(color="#7f7f7f").encode(x="hours:Q", y=alt.Y("cap_kw:Q", title="kW")))
    watts = alt.layer(*layers)
    price = (
        alt.Chart(data)
        .mark_line(color="#2ca02c", strokeDash=[4, 3], interpolate="step-after")
        .encode(
            x="hours:Q",
            y=alt.Y("price:Q", title="price per kWh", scale=alt.Scale(zero=True)),
            tooltip=[alt.Tooltip("hours:Q", format=",.1f"), alt.Tooltip("price:Q", format=",.3f", title="price per kWh")],
        )
    )
    title = "power kW (red), cap (grey), price (green)"
    return (
        alt.layer(watts, price)
        .resolve_scale(y="independent")
        .properties(width="container", height=height, title=title, autosize="fit")
        .configure_axis(labelFontSize=11, titleFontSize=11)
        .configure_title(fontSize=12, anchor="start")
    )


def _empty_axis(data: pd.DataFrame, domain: tuple[float, float]) -> alt.Scale:
    """A quantitative axis's scale: its data's extent (not from 0), or ``domain`` when there is no row yet.

    Without rows, Vega-Lite's extent is [Infinity, -Infinity] and the browser logs a warning at every redraw.
    """
    return alt.Scale(zero=False, domain=list(domain)) if data.empty else alt.Scale(zero=False)


def gantt_chart(model, count: int = 20) -> alt.Chart:
    """The most recently started jobs, one row each (job id), from start to end (running jobs: to now).

    Args:
        model: a model.
        count: how many jobs.

    Returns:
        A bar chart, a job's colour as in :func:`machine_chart`; a rule marks now.
    """
    finished = model.table("jobs")
    bars = [(int(r.job_id), r.started_at, r.finished_at, int(r.size), "finished") for r in finished.itertuples()]
    bars += [(int(job.job_id), job.started_at, model.now, int(job.size), "running") for job in model.running_jobs.values()]
    bars = sorted(bars, key=lambda bar: bar[1])[-count:]
    data = pd.DataFrame(bars, columns=["job", "start", "end", "size", "status"])
    data = data.assign(
        start_h=data["start"] / 3600.0,
        end_h=data["end"] / 3600.0,
        colour=[JOB_PALETTE[j % 20] for j in data["job"]],
        label=data["job"].astype(str),
    )
    order = data["label"].tolist()
    gantt = (
        alt.Chart(data)
        .mark_bar(height={"band": 0.8})
        .encode(
            x=alt.X(  # the last hours, not from t = 0
                "start_h:Q", title="simulated hours", scale=_empty_axis(data, (model.now / 3600.0, model.now / 3600.0 + 1.0))
            ),
            x2="end_h:Q",
            y=alt.Y("label:N", sort=order, title="job (by start)", axis=alt.Axis(labelFontSize=10)),
            color=alt.Color("colour:N", scale=None),
            tooltip=[
                "job:Q",
                "size:Q",
                "status:N",
                alt.Tooltip("start_h:Q", format=",.2f"),
                alt.Tooltip("end_h:Q", format=",.2f"),
            ],
        )
    )
    now = alt.Chart(pd.DataFrame({"now": [model.now / 3600.0]})).mark_rule(color="grey").encode(x="now:Q")
    return (gantt + now).properties(
        width="container",
        height=max(120, 16 * len(data)),
        title=f"last {len(data)} jobs started (row: job, bar: start to end)",
        autosize="fit",
    )


VEGA_LITE_SCHEMA = "https://vega.github.io/schema/vega-lite/v5.2.0.json"
"""The Vega-Lite version that draws the charts: the one solara-assets ships (``vega-lite@5.2.0``, served offline).

altair writes the schema of the Vega-Lite it was built for (v6 for altair 6); vega-embed warns in the browser's
console at every drawing when a spec names a newer version than the runtime drawing it. The charts here use
nothing newer than 5.2 (tests/test_app.py draws every one in Chromium with that runtime)."""


def spec(chart: alt.Chart) -> dict:
    """The Vega-Lite specification of a chart, without altair's schema validation (the slow part of a redraw).

    Args:
        chart: an altair chart.

    Returns:
        The JSON-ready specification the browser's vega-embed renders, its ``$schema`` the runtime's
        (:data:`VEGA_LITE_SCHEMA`).
    """
    drawn = chart.to_dict(validate=False)
    drawn["$schema"] = VEGA_LITE_SCHEMA
    return drawn
