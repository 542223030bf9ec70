"""Mesa browser visualization of the one model, on the torus or a cluster (SolaraViz).

Start it with ``torus-sim viz`` or ``solara run torus_sim/app.py``. Each press of *Step* advances
the model by ``step_seconds`` of simulated time (one hour by default) through the model's own
discrete-event clock; *Play* keeps stepping.

What the page shows:

* the machine: the 4x4x8 torus as 8 z-slices of 4x4 supernodes (two rows of four), or a cluster as
  a near-square grid of nodes; free (light grey), busy (one colour per job), down (black); nodes
  that failed during the last step are outlined in red, the nodes of jobs started during the last
  step in blue (Mesa 3.3's space drawing flattens a 3-D grid, so this is a custom matplotlib component);
* the wait queue: the head job, its size and its reservation, and the next jobs;
* live plots: utilization, queue length, average bounded slowdown of the jobs finished so far, job
  kills by failures and preemptions;
* a Gantt-like chart of the most recent jobs (nodes x time);
* controls: platform (the torus, or a cluster of the workload's size), workload (the bundled NASA
  log, and the SDSC / CTC logs when ``../shared/data`` is present), failure source, policy,
  predictor, confidence / accuracy, load scale c, seed.
"""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib
import numpy as np
import solara
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from mesa.visualization import SolaraViz
from mesa.visualization.utils import update_counter

from torus_sim.metrics import bounded_slowdown
from torus_sim.runner import BUNDLED_NASA_LOG, ConfiguredModel
from torus_sim.scenario import ONLINE_POLICIES

__all__ = [
    "Page",
    "VizModel",
    "VizTorusModel",
    "draw_cluster",
    "draw_live_plots",
    "draw_machine",
    "draw_recent_jobs",
    "draw_torus",
    "model_params",
    "queue_summary",
]

FREE_COLOUR = (0.92, 0.92, 0.92)
DOWN_COLOUR = (0.05, 0.05, 0.05)
JOB_COLOURS = matplotlib.colormaps["tab20"]


def _available_workloads() -> dict[str, str]:
    """Label -> path of the workloads offered in the controls."""
    workloads = {"NASA iPSC/860 (bundled)": str(BUNDLED_NASA_LOG)}
    shared = Path(os.environ.get("TORUS_SIM_SHARED_DATA", Path.cwd().parent / "shared" / "data")) / "swf"
    for label, name in (("SDSC-SP2", "SDSC-SP2-1998-4.2-cln.swf.gz"), ("CTC-SP2", "CTC-SP2-1996-3.1-cln.swf.gz")):
        if (shared / name).exists():
            workloads[label] = str(shared / name)
    return workloads


WORKLOADS = _available_workloads()


class VizModel(ConfiguredModel):
    """The model with the parameters the page's controls set.

    Args:
        platform: ``torus`` (BG/L's 4x4x8 supernodes) or ``cluster`` (P nodes, the workload's size).
        workload: a label of :data:`WORKLOADS` or a path to an SWF file.
        failures: ``bundled``, ``none``, ``synthetic:N[:bursty]`` or a path.
        policy: a name of :data:`~torus_sim.scenario.ONLINE_POLICIES` (``scheduler`` is accepted too).
        predictor: ``default`` (the policy's own), ``oracle-confidence``, ``oracle-accuracy`` or
            ``history``; ignored by policies that use none.
        confidence: a of the oracle-confidence predictor, in [0, 1].
        accuracy: a of the oracle-accuracy predictor, in [0, 1].
        load_scale: c.
        seed: the run's seed.
        step_seconds: simulated seconds per step.

    Raises:
        ConfigurationError: a parameter out of its domain.
    """

    def __init__(
        self,
        platform: str = "torus",
        workload: str = "NASA iPSC/860 (bundled)",
        failures: str = "bundled",
        policy: str = "krevat",
        predictor: str = "default",
        confidence: float = 0.1,
        accuracy: float = 0.1,
        load_scale: float = 1.0,
        seed: int = 0,
        step_seconds: float = 3600.0,
        scheduler: str | None = None,
    ) -> None:
        policy = scheduler or policy
        chosen = None if predictor == "default" or policy not in ("balancing", "tiebreak") else predictor
        self.notice = ""
        try:  # a control's text: refused in place (a notice on the page), never a traceback
            seed = int(str(seed).strip())
            if seed < 0:
                raise ValueError
        except ValueError:
            self.notice = f"Seed {seed!r} is not a whole number >= 0: seed 0 is used."
            seed = 0
        super().__init__(
            step_seconds=step_seconds,
            node_identities=True,
            platform=platform,
            workload=WORKLOADS.get(workload, workload),
            failures=failures,
            policy=policy,
            predictor=chosen,
            confidence=float(confidence),
            accuracy=float(accuracy),
            load_scale=float(load_scale),
            seed=seed,
        )

    @property
    def config(self):
        """The scenario (as the controls set it)."""
        return self.scenario


VizTorusModel = VizModel
"""The name the page's model had before it drew clusters too."""


def _colours(model) -> np.ndarray:
    platform = model.platform
    job_at = platform.job_at
    down = platform.down_until > -np.inf
    colours = np.empty((platform.capacity, 3))
    for index in range(platform.capacity):
        if down[index]:
            colours[index] = DOWN_COLOUR
        elif job_at[index] >= 0:
            colours[index] = JOB_COLOURS(int(job_at[index]) % 20)[:3]
        else:
            colours[index] = FREE_COLOUR
    return colours


def _started_nodes(model) -> set[int]:
    job_at = model.platform.job_at
    return {int(n) for _, allocation in model.started_this_step for n in model.platform.members(allocation) if job_at[n] >= 0}


def draw_machine(model) -> Figure:
    """The machine the model runs on: :func:`draw_torus` or :func:`draw_cluster`."""
    return draw_torus(model) if model.platform.kind == "torus" else draw_cluster(model)


def draw_cluster(model) -> Figure:
    """A cluster as a near-square grid of nodes, coloured by state (node i at row i // columns).

    Args:
        model: a model on a cluster with node identities.

    Returns:
        A matplotlib figure (not attached to pyplot).
    """
    platform = model.platform
    rows, columns = platform.layout()
    colours = np.ones((rows * columns, 3))
    colours[: platform.capacity] = _colours(model)
    figure = Figure(figsize=(8, 8 * rows / columns + 0.8), dpi=80)
    axis = figure.subplots()
    axis.imshow(colours.reshape(rows, columns, 3), interpolation="nearest")
    failed = set(model.failed_this_step)
    for index in _started_nodes(model):
        row, column = divmod(index, columns)
        axis.add_patch(Rectangle((column - 0.5, row - 0.5), 1, 1, fill=False, edgecolor="#1f4fff", linewidth=1.5))
    for index in failed:
        row, column = divmod(index, columns)
        axis.add_patch(Rectangle((column - 0.45, row - 0.45), 0.9, 0.9, fill=False, edgecolor="red", linewidth=2.5))
    axis.set_xticks([])
    axis.set_yticks([])
    down = int(np.count_nonzero(platform.down_until > -np.inf))
    figure.suptitle(
        f"cluster of {platform.capacity} nodes   t = {model.now / 3600:,.1f} h   busy {int(platform.busy.sum())}   down {down}\n"
        f"failed this step {len(failed)} (red)   started this step {len(model.started_this_step)} (blue)",
        fontsize=10,
    )
    figure.tight_layout()
    return figure


def _slices(torus) -> tuple[tuple[int, int], list[tuple[str, tuple]]]:
    """How a torus of any dimension is drawn: the image's two axes and one (title, index) per panel.

    Each panel shows the first two dimensions (a 1-D torus: one row); the panels run over the
    other dimensions (the z-slices of BG/L's 4x4x8, the 4x4 (C, D) planes of Mira's 2x3x4x4).
    """
    dims = torus.dims if torus.ndim >= 2 else (1, *torus.dims)
    names = "xyzwuv" if torus.ndim <= 3 else "ABCDEF"
    rest = dims[2:]
    panels = []
    for combination in np.ndindex(*rest) if rest else [()]:
        title = ", ".join(f"{names[2 + k]} = {v}" for k, v in enumerate(combination))
        panels.append((title, combination))
    return (dims[0], dims[1]), panels


def draw_torus(model) -> Figure:
    """The torus as 2-D slices of its first two dimensions, one panel per position along the others, coloured by state.

    BG/L's 4x4x8 torus is 8 z-slices of 4x4 supernodes; Mira's 2x3x4x4 is 16 slices of 2x3 midplanes.

    Args:
        model: a torus model.

    Returns:
        A matplotlib figure (not attached to pyplot).
    """
    torus = model.platform.torus
    (nx_, ny), panels = _slices(torus)
    shape = torus.dims if torus.ndim >= 2 else (1, *torus.dims)
    down = model.platform.down
    grid = _colours(model).reshape(*shape, 3)
    failed = set(model.failed_this_step)
    placed = _started_nodes(model)
    count = len(panels)
    if torus.ndim >= 4:
        rows = shape[2]
    else:
        rows = 2 if count % 2 == 0 and count > 2 else 1
    columns = -(-count // rows)
    figure = Figure(figsize=(max(2.0, 0.5 * ny) * columns, (0.5 * nx_ + 1.3) * rows + 0.4), dpi=80)
    axes = np.atleast_1d(figure.subplots(rows, columns)).ravel()
    for axis in axes[count:]:
        axis.set_visible(False)
    for axis, (title, rest) in zip(axes, panels, strict=False):
        axis.imshow(grid[(slice(None), slice(None), *rest)], interpolation="nearest")
        for x in range(nx_):
            for y in range(ny):
                index = int(np.ravel_multi_index((x, y, *rest), shape))
                if index in placed:
                    axis.add_patch(Rectangle((y - 0.5, x - 0.5), 1, 1, fill=False, edgecolor="#1f4fff", linewidth=2.5))
                if index in failed:
                    axis.add_patch(Rectangle((y - 0.45, x - 0.45), 0.9, 0.9, fill=False, edgecolor="red", linewidth=3))
        axis.set_title(title, fontsize=9)
        axis.set_xticks(np.arange(-0.5, ny, 1), minor=True)
        axis.set_yticks(np.arange(-0.5, nx_, 1), minor=True)
        axis.grid(which="minor", color="white", linewidth=1.2)
        axis.tick_params(which="both", length=0)
        axis.set_xticks([])
        axis.set_yticks([])
    figure.suptitle(
        f"{torus.label} torus   t = {model.now / 3600:,.1f} h   busy {int(model.platform.busy.sum())}   down {int(down.sum())}\n"
        f"failed this step {len(failed)} (red)   started this step {len(model.started_this_step)} (blue)",
        fontsize=10,
    )
    figure.tight_layout()
    return figure


def _running_bounded_slowdown(model, times: np.ndarray) -> np.ndarray:
    jobs = model.table("jobs")
    if jobs.empty:
        return np.full(len(times), np.nan)
    jobs = jobs.sort_values("finished_at")
    slowdown = bounded_slowdown((jobs["finished_at"] - jobs["submitted_at"]).to_numpy(), jobs["runtime"].to_numpy())
    cumulative = np.cumsum(slowdown) / np.arange(1, len(slowdown) + 1)
    done = np.searchsorted(jobs["finished_at"].to_numpy(), times, side="right")
    return np.where(done > 0, cumulative[np.maximum(done - 1, 0)], np.nan)


def draw_live_plots(model) -> Figure:
    """Utilization, queue length, average bounded slowdown so far, and job kills (or preemptions) over time.

    Args:
        model: a torus model that has collected at least its initial row.

    Returns:
        A matplotlib figure with four panels, time in hours.
    """
    series = model.datacollector.get_model_vars_dataframe()
    hours = series["time"].to_numpy() / 3600.0
    figure = Figure(figsize=(10, 3.2), dpi=80)
    axes = figure.subplots(1, 4)
    panels = [
        ("utilization", series["utilization"].to_numpy(), "busy / N"),
        ("queue length", series["queued_jobs"].to_numpy(), "jobs"),
        ("avg bounded slowdown", _running_bounded_slowdown(model, series["time"].to_numpy()), "finished jobs"),
        ("job kills", series["job_kills"].to_numpy(), "kills by failures")
        if series["preemptions"].iloc[-1] == 0
        else ("preemptions", series["preemptions"].to_numpy(), "preemptions by the policy"),
    ]
    for axis, (title, values, label) in zip(axes, panels, strict=True):
        axis.plot(hours, values, color="#1f77b4")
        axis.set_title(title, fontsize=9)
        axis.set_xlabel("hours", fontsize=8)
        axis.set_ylabel(label, fontsize=8)
        axis.tick_params(labelsize=7)
        axis.grid(alpha=0.3)
    figure.tight_layout()
    return figure


def draw_recent_jobs(model, count: int = 20) -> Figure:
    """A Gantt-like chart of the most recently started jobs: one bar per job, its size as thickness.

    Args:
        model: a torus model.
        count: how many jobs.

    Returns:
        A matplotlib figure; running jobs reach the current time.
    """
    figure = Figure(figsize=(10, 2.6), dpi=80)
    axis = figure.subplots()
    finished = model.table("jobs")
    bars = [(row.job_id, row.started_at, row.finished_at, row.size) for row in finished.itertuples()]
    bars += [(job.job_id, job.started_at, model.now, job.size) for job in model.running_jobs.values()]
    bars = sorted(bars, key=lambda bar: bar[1])[-count:]
    for row, (job_id, start, end, size) in enumerate(bars):
        axis.barh(
            row,
            (end - start) / 3600.0,
            left=start / 3600.0,
            height=0.3 + 0.6 * size / model.platform.capacity,
            color=JOB_COLOURS(int(job_id) % 20),
        )
    axis.set_yticks(range(len(bars)), [str(bar[0]) for bar in bars], fontsize=6)
    axis.set_xlabel("hours", fontsize=8)
    axis.set_title(f"last {len(bars)} jobs started (bar height ~ size)", fontsize=9)
    axis.axvline(model.now / 3600.0, color="grey", linewidth=0.8)
    figure.tight_layout()
    return figure


@solara.component
def TorusView(model):
    """The machine (torus or cluster), redrawn after every step."""
    update_counter.get()
    solara.FigureMatplotlib(draw_machine(model), format="png")


def queue_summary(model) -> list[str]:
    """Markdown lines about the clock, the counts, the head job and its reservation, and the next jobs.

    Args:
        model: a torus model.

    Returns:
        Lines of Markdown, shown by :func:`QueueView`.
    """
    queue = model.scheduler.queue
    head = queue.head
    lines = [
        f"**t = {model.now / 3600:,.1f} h** · queued {len(queue)} · running {len(model.running_jobs)} · "
        f"completed {model.completed:,} / {len(model.jobs):,} · failures {model.counters['failures']} · "
        f"kills {model.counters['job_kills']}"
    ]
    if head is None:
        return [*lines, "The wait queue is empty."]
    reserved = "it starts at the next pass"
    if head.reservation_at is not None:
        reserved = (
            "no reservation yet (waits for repairs)"
            if not np.isfinite(head.reservation_at)
            else f"reservation at t = {head.reservation_at / 3600:,.2f} h"
        )
    lines.append(
        f"Head job **{head.job_id}**: size {head.size} (partition {head.partition_size}), walltime "
        f"{head.walltime / 3600:,.2f} h, waiting {(model.now - head.submitted_at) / 3600:,.2f} h; {reserved}"
    )
    following = ", ".join(f"{job.job_id} ({job.partition_size})" for job in list(queue)[1:9])
    if following:
        lines.append(f"Next (job id (partition size)): {following}")
    return lines


@solara.component
def QueueView(model):
    """The wait queue: head job, its reservation, and the next jobs (and a notice about a refused control)."""
    update_counter.get()
    notice = getattr(model, "notice", "")
    if notice:
        solara.Warning(notice)
    solara.Markdown("\n\n".join(queue_summary(model)))


@solara.component
def LivePlots(model):
    """Utilization, queue length, average bounded slowdown so far, job kills."""
    update_counter.get()
    solara.FigureMatplotlib(draw_live_plots(model), format="png")


@solara.component
def RecentJobs(model):
    """Gantt-like chart of the recent jobs."""
    update_counter.get()
    solara.FigureMatplotlib(draw_recent_jobs(model), format="png")


def installed_policies() -> list[str]:
    """Installed plug-ins' policy names (``torus_sim.policies`` entry points), for the policy menu."""
    from torus_sim.policies.catalog import POLICIES

    return sorted(POLICIES.iter_plugins())


model_params = {
    "platform": {"type": "Select", "value": "torus", "values": ["torus", "cluster"], "label": "Platform"},
    "workload": {"type": "Select", "value": "NASA iPSC/860 (bundled)", "values": list(WORKLOADS), "label": "Workload"},
    "failures": {
        "type": "Select",
        "value": "bundled",
        "values": ["bundled", "none", "synthetic:500", "synthetic:2000", "synthetic:1000:bursty", "synthetic:4000:bursty"],
        "label": "Failures",
    },
    "policy": {"type": "Select", "value": "krevat", "values": list(ONLINE_POLICIES) + installed_policies(), "label": "Policy"},
    "predictor": {
        "type": "Select",
        "value": "default",
        "values": ["default", "oracle-confidence", "oracle-accuracy", "history", "recency"],
        "label": "Predictor",
    },
    "confidence": {"type": "SliderFloat", "value": 0.1, "min": 0.0, "max": 1.0, "step": 0.1, "label": "Confidence a"},
    "accuracy": {"type": "SliderFloat", "value": 0.1, "min": 0.0, "max": 1.0, "step": 0.1, "label": "Accuracy a"},
    "load_scale": {"type": "SliderFloat", "value": 1.0, "min": 0.5, "max": 1.5, "step": 0.1, "label": "Load scale c"},
    "seed": {"type": "InputText", "value": 0, "label": "Seed"},
    "step_seconds": 3600.0,
}
"""The page's controls (Mesa user parameters) and fixed parameters."""


@solara.component
def Page():
    """The page: one model per browser session (a module-level model would be shared by every visitor).

    Solara renders ``Page`` once per session; ``use_memo`` keeps that session's model across renders,
    and Mesa's Reset replaces it in the session's own reactive state.
    """
    model = solara.use_memo(VizModel, dependencies=[])
    return SolaraViz(
        model,
        components=[(TorusView, 0), (QueueView, 0), (LivePlots, 0), (RecentJobs, 0)],
        model_params=model_params,
        name="torus-sim: scheduling on failure-prone machines",
    )
