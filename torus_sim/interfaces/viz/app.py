"""Mesa browser visualization of the one model, on any torus or a cluster (SolaraViz), and a comparison page.

Start it with ``torus-sim viz`` or ``solara run torus_sim/interfaces/viz/app.py``. Each press of *Step* advances
the model by ``step_seconds`` of simulated time (one hour by default) through the model's own
discrete-event clock; *Play* keeps stepping. Every browser session has its own model.

What the page shows (drawn in the browser as Vega-Lite charts, :mod:`torus_sim.interfaces.viz.charts`):

* a line naming the scenario shown (platform, workload, failures, policy, predictor, c, seed);
* the machine: a torus as 2-D slices of its first two dimensions (BG/L's 4x4x8: 8 z-slices of 4x4
  supernodes; Mira's 2x3x4x4: 16 slices of 2x3 midplanes), or a cluster as a near-square grid of
  nodes; free, busy (one colour per job, stable across steps), down; outlined red when a node
  failed during the last step, blue when its job started then; hover a node for its job, size,
  start, walltime and attempts;
* the wait queue: the head job, its size and its reservation, and the next jobs;
* jump: to a simulated hour, or to the next failure;
* live plots: utilization, queue length, average bounded slowdown of the jobs finished so far, job
  kills by failures (or preemptions);
* the most recently started jobs (one row each, start to end);
* controls (:mod:`torus_sim.interfaces.viz.controls`): platform, machine (BG/L, Intrepid, Mira) on a torus or node
  count on a cluster, workload (the bundled NASA log, and the SDSC / CTC logs when ``../shared/data`` is
  present), failure source, downtime after a failure (transient, the log's repair times, a fixed time),
  policy (only those declaring the chosen platform), predictor and confidence / accuracy (for a policy
  whose placement asks one), load scale c, seed. A control changes the model at Reset and is listed as
  pending until then; a message about an earlier model is not shown beside a new one; Solara's busy bar
  shows above the app bar while a Reset builds the model.

``/compare`` runs two policies side by side on the same workload and failures (load scale and
failure source chosen on the page), stepped together, with their metrics so far in one table
(:func:`ComparePage`).

A closed session is freed after the cull timeout (:mod:`torus_sim.interfaces.viz.session`); the model and what
the page says of it live in :mod:`torus_sim.interfaces.viz.model`.

Mesa's SolaraViz frames the page (controls, Step / Play / Reset, the step counter); its space
drawing does not serve here (it flattens a torus into one 2-D grid and redraws through matplotlib),
so the machine, plots and Gantt chart are our own components on Vega-Lite, which the browser draws.
"""

from __future__ import annotations

import html
import math
import os
import warnings
from pathlib import Path

# Two warnings Solara printed for every session, about code that is not ours and needs no action: Mesa
# 3.3's ComponentsView calls use_state after an early return (its tab index), and a plain-http
# server falls back to SameSite=lax cookies. Set before Mesa's components are defined (issue 44 §4).
warnings.filterwarnings("ignore", message=r".*ComponentsView: `use_state` found despite early return", category=UserWarning)
warnings.filterwarnings("ignore", message=r"Cookies with samesite=none require https", category=UserWarning)

import markdown  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import solara  # noqa: E402
import solara.widgets  # noqa: E402
from mesa.visualization import SolaraViz  # noqa: E402
from mesa.visualization import solara_viz as _solara_viz  # noqa: E402
from mesa.visualization.utils import update_counter  # noqa: E402

from torus_sim.interfaces.viz import charts as viz_charts  # noqa: E402
from torus_sim.interfaces.viz.controls import ChosenControls, ScenarioControls  # noqa: E402
from torus_sim.interfaces.viz.menus import PAIR_MACHINES, PAIRS, model_params  # noqa: E402
from torus_sim.interfaces.viz.model import VizModel, VizTorusModel, failed_nodes_text, jump, scenario_line, shown_text  # noqa: E402
from torus_sim.interfaces.viz.session import use_session_release  # noqa: E402
from torus_sim.metrics import bounded_slowdown  # noqa: E402

__all__ = [
    "ComparePage",
    "Page",
    "VizModel",
    "VizTorusModel",
    "compare_markdown",
    "compare_table",
    "failed_nodes_text",
    "jump",
    "model_params",
    "queue_summary",
    "routes",
    "scenario_line",
]


VEGA_ALIASES = {"vega@5": "vega@5.21.0", "vega-lite@5": "vega-lite@5.2.0", "vega-embed@6": "vega-embed@6.20.2"}
"""Major-version names solara's VegaLite widget asks the CDN proxy for -> the versions solara-assets ships."""


def offline_vega_assets(cache: Path | None = None) -> Path | None:
    """Serve Vega-Lite's scripts without the internet: a CDN cache that aliases the versions solara-assets ships.

    Solara's ``VegaLite`` widget loads ``vega@5``, ``vega-lite@5`` and ``vega-embed@6`` through its CDN
    proxy, which serves files from its cache directory or fetches them from the internet;
    ``solara-assets`` ships ``vega@5.21.0``, ``vega-lite@5.2.0`` and ``vega-embed@6.20.2``, so offline
    the major-version names are 404s and no chart is drawn. This makes a cache directory of links to
    everything in solara's own cache plus the three aliases, and points solara's setting at it.

    Args:
        cache: the directory to use; ``<temp>/torus-sim-solara-cdn-<uid>`` when None.

    Returns:
        The cache directory in use, or None when solara's own cache does not hold the Vega scripts
        (then the proxy fetches them as usual).
    """
    from solara.server import settings

    source = Path(settings.assets.proxy_cache_dir)
    if not all((source / version).is_dir() for version in VEGA_ALIASES.values()):
        return None
    import tempfile

    cache = cache or Path(tempfile.gettempdir()) / f"torus-sim-solara-cdn-{os.getuid() if hasattr(os, 'getuid') else 0}"
    cache.mkdir(parents=True, exist_ok=True)
    links = {entry.name: entry for entry in source.iterdir()}
    links.update({alias: source / version for alias, version in VEGA_ALIASES.items()})
    for name, target in links.items():
        link = cache / name
        if not link.exists() and not link.is_symlink():
            try:
                link.symlink_to(target, target_is_directory=target.is_dir())
            except FileExistsError:  # another server process made it meanwhile
                pass
    settings.assets.proxy_cache_dir = cache
    return cache


offline_vega_assets()


def _quiet_frame() -> None:
    """The page's frame says torus-sim: no "This website runs on Solara" badge (it covered a chart title at 1280x800)."""
    from solara.server import settings

    settings.theme.show_banner = False
    settings.theme.title = "torus-sim"


_quiet_frame()

PAGE_CSS = """
.v-tabs:not(:has(.v-tab ~ .v-tab)) { display: none; }
.v-navigation-drawer .v-card:has(> .v-card__text > .d-flex:empty) { display: none; }
.v-application--wrap > .v-progress-linear { z-index: 10; height: 6px !important; }
.v-application--wrap > .v-progress-linear .v-progress-linear__indeterminate { background-color: #ffb300 !important; }
"""
"""Mesa's SolaraViz draws a tab bar ("PAGE 0") even for one page of components: a bar of one tab is hidden;
its "Model Parameters" card is empty (the page draws the scenario's controls itself): hidden. Solara's own
busy bar (shown while the server works longer than 0.3 s: a Reset builds a model, a jump steps it) lay
under the app bar in its colour: raised above it, amber."""


def _markdown(text: str) -> solara.Element:
    """Markdown drawn as HTML made here (python-markdown, tables), its text's ``<``, ``>`` and ``&`` escaped first.

    solara.Markdown would do it in the browser and ask its CDN for KaTeX's math stylesheet and script on every
    page, which a server without the internet answers with 404s; none of these texts holds math.
    """
    return solara.HTML(tag="div", unsafe_innerHTML=markdown.markdown(html.escape(text, quote=False), extensions=["tables"]))


def _vega(chart) -> solara.Element:
    return solara.widgets.VegaLite.element(spec=viz_charts.spec(chart))


CELLS = [
    {"i": 0, "x": 0, "y": 0, "w": 7, "h": 13},  # the machine, with the scenario line and the legend (room for both at 1280 px)
    {"i": 1, "x": 7, "y": 0, "w": 5, "h": 7},  # the wait queue
    {"i": 2, "x": 7, "y": 7, "w": 5, "h": 6},  # jump
    {"i": 3, "x": 0, "y": 13, "w": 12, "h": 8},  # live plots
    {"i": 4, "x": 0, "y": 21, "w": 12, "h": 12},  # recent jobs
]
"""Where the page's components sit in Mesa's 12-column grid (rows of 30 px): sized to their drawings."""


def _grid_layout(count: int) -> list[dict]:
    """Mesa's initial grid layout, with our cells for our five components (Mesa gives each a 6 x 10 cell)."""
    if count == len(CELLS):
        return [dict(cell, moved=False) for cell in CELLS]
    return _mesa_grid_layout(count)


# Mesa 3.3's SolaraViz takes no layout: it gives every component half the width and 10 rows, which clips
# the machine and squeezes the plots. Its module-level layout function is the one place to say otherwise.
_mesa_grid_layout = getattr(_solara_viz.make_initial_grid_layout, "mesa_original", _solara_viz.make_initial_grid_layout)
_grid_layout.mesa_original = _mesa_grid_layout  # a re-import (solara's reload) finds Mesa's own function, not ours
_solara_viz.make_initial_grid_layout = _grid_layout


@solara.component
def TorusView(model):
    """The machine (torus or cluster) with the scenario line above it, redrawn after every step."""
    update_counter.get()
    with solara.Column(style={"width": "100%"}):
        _markdown(scenario_line(model))
        _vega(viz_charts.machine_chart(model))
        switched_off = getattr(model, "power_states", None) is not None
        switching_off = bool(getattr(model.config, "shutdown_time", None))
        solara.HTML(tag="div", unsafe_innerHTML=viz_charts.legend_html(switched_off, switching_off))


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
        f"completed {model.completed:,} / {len(model.run_jobs):,} · failures {model.counters['failures']} · "
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
    _markdown("\n\n".join(queue_summary(model)))


@solara.component
def JumpView(model):
    """Jump to a simulated hour or to the next failure (a bad hour is refused beside the field)."""
    update_counter.get()
    hours, set_hours = solara.use_state("")
    said, set_said = solara.use_state(("", 0))  # (message, serial of the model it is about)
    serial = getattr(model, "serial", 0)
    message = said[0] if said[1] == serial else ""  # after Reset or a new model: no stale message

    def set_message(text: str) -> None:
        set_said((text, serial))

    def go_to_hour():
        try:
            target = float(hours)
            if not math.isfinite(target) or target < 0:
                raise ValueError
        except ValueError:
            set_message(f"{hours!r} is not a number of hours >= 0")
            return
        taken = jump(model, until_hours=target)
        set_message(f"{taken} steps: t = {model.now / 3600:,.1f} h")
        update_counter.value += 1

    def go_to_failure():
        taken = jump(model, next_failure=True)
        set_message(f"{taken} steps: t = {model.now / 3600:,.1f} h, {failed_nodes_text(model)}")
        update_counter.value += 1

    with solara.Row(style={"align-items": "center", "flex-wrap": "wrap"}):
        solara.InputText("Jump to hour", value=hours, on_value=set_hours, continuous_update=True)
        solara.Button("Go", on_click=go_to_hour)
        solara.Button("Next failure", on_click=go_to_failure)
        if message:
            solara.Text(message)


@solara.component
def LivePlots(model):
    """Utilization, queue length, average bounded slowdown so far, job kills; power and price with power accounting."""
    update_counter.get()
    charts = viz_charts.live_charts(model)
    with solara.Columns([1, 1, 1, 1, 2][: len(charts)]):  # the power plot's two axes need a double column
        for chart in charts:
            _vega(chart)


@solara.component
def RecentJobs(model):
    """The most recently started jobs, start to end."""
    update_counter.get()
    _vega(viz_charts.gantt_chart(model))


@solara.component
def Page():
    """The page: one model per browser session (a module-level model would be shared by every visitor).

    Solara renders ``Page`` once per session; ``use_memo`` keeps that session's model and its chosen
    controls across renders. The scenario's controls are ours (:mod:`torus_sim.interfaces.viz.controls`: menus that
    depend on each other, a pending change marked); Mesa's Reset builds the next model from them (a
    fixed model parameter) in the session's own reactive state. The play interval is a reactive of the
    page, so its value is shown beside Mesa's slider (which shows none).
    """
    model = solara.use_reactive(solara.use_memo(VizModel, dependencies=[]))
    chosen = solara.use_memo(ChosenControls, dependencies=[])
    play_interval = solara.use_reactive(PLAY_INTERVAL_MS)
    use_session_release(lambda: [model.peek()])  # at the session's close: its model and the hooks Solara keeps are freed
    with solara.Column(gap="0px") as page:
        solara.Style(PAGE_CSS)
        SolaraViz(
            model,
            components=[(TorusView, 0), (QueueView, 0), (JumpView, 0), (LivePlots, 0), (RecentJobs, 0)],
            model_params={"controls": chosen, "step_seconds": model_params["step_seconds"]},
            play_interval=play_interval,
            name="torus-sim: scheduling on failure-prone machines",
        )
        ScenarioCard(model, chosen, play_interval)
    return page


@solara.component
def ScenarioCard(model, chosen, play_interval):
    """The sidebar's card of scenario controls (:func:`~torus_sim.interfaces.viz.controls.ScenarioControls`) under Mesa's cards.

    Solara orders the sidebar's parts by how deep in the page each is declared, shallowest first: this
    component is one level deeper than Mesa's SolaraViz, so Step, Play and Reset stay at the top.
    """
    with solara.Column():
        with solara.Sidebar():
            with solara.Card("Scenario (applied at Reset, above)"):
                solara.Text(f"Play interval: {play_interval.value} ms between steps while playing (the slider above)")
                ScenarioControls(model, chosen)


PLAY_INTERVAL_MS = 100
"""Mesa's default pause between two steps while playing, in milliseconds (its slider: 1 to 500)."""


COMPARED = (
    "average bounded slowdown (jobs finished)",
    "average wait (h, jobs finished)",
    "completed",
    "queued",
    "job kills",
    "utilization (mean of the hourly samples so far)",
)


def compare_table(models: dict[str, VizModel]) -> pd.DataFrame:
    """The metrics so far of models run side by side: one row per metric, one column per policy.

    Args:
        models: label -> model (same workload and failures, stepped together).

    Returns:
        A table with the rows of :data:`COMPARED`: bounded slowdown (BGL-FAULT §6, threshold 10 s) and
        wait over the jobs finished so far (NaN before the first one finishes), counts, and the mean of
        the utilization sampled at every step (NaN at t = 0).
    """
    columns = {}
    for label, model in models.items():
        jobs = model.table("jobs")
        done = len(jobs)
        slowdown = (
            float(np.mean(bounded_slowdown((jobs["finished_at"] - jobs["submitted_at"]).to_numpy(), jobs["runtime"].to_numpy())))
            if done
            else float("nan")
        )
        wait = float((jobs["started_at"] - jobs["submitted_at"]).mean() / 3600.0) if done else float("nan")
        samples = model.datacollector.get_model_vars_dataframe()
        sampled = samples.loc[samples["time"] > 0, "utilization"]
        columns[label] = [
            round(slowdown, 3),
            round(wait, 3),
            done,
            len(model.scheduler.queue),
            int(model.counters["job_kills"]),
            round(float(sampled.mean()), 3) if len(sampled) else float("nan"),
        ]
    return pd.DataFrame(columns, index=list(COMPARED)).rename_axis("metric").reset_index()


def compare_markdown(table: pd.DataFrame) -> str:
    """:func:`compare_table` as a Markdown table: no index, no pages, "–" where nothing is known yet."""

    def shown(value) -> str:
        if isinstance(value, float) and math.isnan(value):
            return "–"
        return f"{value:,.3f}".rstrip("0").rstrip(".") if isinstance(value, float) else f"{value:,}"

    labels = [column for column in table.columns if column != "metric"]
    lines = ["| metric | " + " | ".join(labels) + " |", "|---|" + "---:|" * len(labels)]
    lines += [
        "| " + row["metric"] + " | " + " | ".join(shown(row[label]) for label in labels) + " |" for _, row in table.iterrows()
    ]
    return "\n".join(lines)


COMPARE_LOADS = ("1.0", "1.2", "1.4")
"""Load scales offered on ``/compare`` (it opens on 1.2: at c = 1 the pairs often schedule alike for days)."""


@solara.component
def ComparePage():
    """Two policies side by side on the same workload and failures, stepped together, with one metrics table.

    The question a scheduling researcher asks of a live view: what does the other policy do with
    the same jobs and the same failures, right now? Each session has its own two models.
    """
    pair, set_pair = solara.use_state(next(iter(PAIRS)))
    seed, set_seed = solara.use_state("0")
    load, set_load = solara.use_state(COMPARE_LOADS[1])
    failures, set_failures = solara.use_state(model_params["failures"]["value"])
    _, set_tick = solara.use_state(0)  # a new value redraws the page after a step
    said, set_said = solara.use_state(("", ()))  # (message, the models it is about)

    def build():
        chosen = pair if isinstance(pair, str) and pair in PAIRS else next(iter(PAIRS))  # only the pairs offered
        machine = PAIR_MACHINES.get(chosen, model_params["machine"]["value"])
        scale = float(load) if load in COMPARE_LOADS else 1.0
        return {
            policy: VizModel(policy=policy, machine=machine, seed=seed, load_scale=scale, failures=failures)
            for policy in PAIRS[chosen]
        }

    models = solara.use_memo(build, dependencies=[pair, seed, load, failures])
    shown_now = solara.use_memo(dict, dependencies=[])  # the models on the page now, read at the session's close
    shown_now["models"] = models
    use_session_release(lambda: shown_now["models"].values())
    serials = tuple(model.serial for model in models.values())
    message = said[0] if said[1] == serials else ""  # a message about other models (another pair, seed...) is gone

    def set_message(text: str) -> None:
        set_said((text, serials))

    def step(count: int = 1):
        for model in models.values():
            for _ in range(count):
                if model.running:
                    model.step()
        set_tick(lambda tick: tick + 1)

    def next_failure():
        first = next(iter(models.values()))
        taken = jump(first, next_failure=True)
        for model in list(models.values())[1:]:
            for _ in range(taken):
                if model.running:
                    model.step()
        set_message(f"{taken} steps to the next failure (the same log for both): {failed_nodes_text(first)}")
        set_tick(lambda tick: tick + 1)

    def set_seed_checked(text: str):
        try:
            if len(str(text)) > 20 or not 0 <= int(text) < 2**63:
                raise ValueError
            set_message("")
        except (TypeError, ValueError):
            set_message(f"Seed {shown_text(text)} is not a whole number >= 0: seed 0 is used.")
        set_seed(str(text)[:20])

    first = next(iter(models.values()))
    with solara.Column(style={"padding": "12px"}):
        _markdown("## Two policies side by side (same workload, same failures)")
        with solara.Row(style={"align-items": "center", "flex-wrap": "wrap"}):
            solara.Select("Comparison", value=pair, values=list(PAIRS), on_value=set_pair)
            solara.Select("Load scale c", value=load, values=list(COMPARE_LOADS), on_value=set_load)
            solara.Select("Failures", value=failures, values=model_params["failures"]["values"], on_value=set_failures)
            solara.InputText("Seed", value=seed, on_value=set_seed_checked)
            solara.Button("Step both", on_click=lambda: step(1))
            solara.Button("Step both x 24", on_click=lambda: step(24))
            solara.Button("Next failure", on_click=next_failure)
        if message:
            solara.Warning(message)
        config = first.config
        _markdown(
            f"**t = {first.now / 3600:,.1f} h** (step {first.steps}) · {Path(config.workload_path).name} ({len(first.run_jobs):,} jobs) · "
            f"failures {config.failure_spec} ({len(first.failure_log):,}) · c = {first.workload.load_scale:g} · seed {config.seed}"
        )
        _markdown(compare_markdown(compare_table(models)))
        with solara.Columns([1, 1]):
            for label, model in models.items():
                with solara.Column():
                    _markdown(f"### {label}")
                    _vega(viz_charts.machine_chart(model))
        solara.HTML(tag="div", unsafe_innerHTML=viz_charts.legend_html())


routes = [
    solara.Route(path="/", component=Page, label="Simulation"),
    solara.Route(path="compare", component=ComparePage, label="Compare two policies"),
]
"""The app's pages: ``/`` (one model) and ``/compare`` (two policies side by side)."""
