"""Mesa browser visualization of the one model, on any torus or a cluster (SolaraViz), and a comparison page.

Start it with ``torus-sim viz`` or ``solara run torus_sim/app.py``. Each press of *Step* advances
the model by ``step_seconds`` of simulated time (one hour by default) through the model's own
discrete-event clock; *Play* keeps stepping. Every browser session has its own model.

What the page shows (drawn in the browser as Vega-Lite charts, :mod:`torus_sim.viz_charts`):

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
* controls: platform, machine (BG/L, Intrepid, Mira), workload (the bundled NASA log, and the SDSC /
  CTC logs when ``../shared/data`` is present), failure source, policy, predictor, confidence /
  accuracy, load scale c, seed. A control changes the model at Reset.

``/compare`` runs two policies side by side on the same workload and failures, stepped together,
with their metrics so far in one table (:func:`ComparePage`).

Mesa's SolaraViz frames the page (controls, Step / Play / Reset, the step counter); its space
drawing does not serve here (it flattens a torus into one 2-D grid and redraws through matplotlib),
so the machine, plots and Gantt chart are our own components on Vega-Lite, which the browser draws.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pandas as pd
import solara
import solara.widgets
from mesa.visualization import SolaraViz
from mesa.visualization import solara_viz as _solara_viz
from mesa.visualization.utils import update_counter

from torus_sim import viz_charts
from torus_sim.metrics import bounded_slowdown
from torus_sim.platforms.kinds import platform_kind
from torus_sim.runner import ConfiguredModel
from torus_sim.viz_menus import (
    DEFAULT_CHOICE,
    PAIR_MACHINES,
    PAIRS,
    WORKLOADS,
    model_params,
    scenario_fields,
    uses_predictor,
)
from torus_sim.viz_session import use_session_release

__all__ = [
    "ComparePage",
    "Page",
    "VizModel",
    "VizTorusModel",
    "compare_table",
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


class VizModel(ConfiguredModel):
    """The model with the parameters the page's controls set.

    Args:
        platform: ``torus`` (the machine's torus of midplanes) or ``cluster`` (P nodes, the workload's size).
        machine: ``bgl`` (4x4x8), ``intrepid`` (4x4x5) or ``mira`` (2x3x4x4), see :mod:`torus_sim.machines`.
        workload: a label of :data:`WORKLOADS` (never a path: the values come from the browser).
        failures: ``bundled`` (the machine's own log: BG/L's RAS sample, Mira's events; none on Intrepid),
            ``mira``, ``none`` or one of the ``synthetic:N[:bursty]`` the control offers.
        policy: a name of :data:`~torus_sim.scenario.ONLINE_POLICIES` (``scheduler`` is accepted too).
        predictor: ``default`` (the policy's own), ``oracle-confidence``, ``oracle-accuracy`` or
            ``history``; ignored by policies that use none.
        confidence: a of the oracle-confidence predictor, in [0, 1].
        accuracy: a of the oracle-accuracy predictor, in [0, 1].
        load_scale: c.
        seed: the run's seed.
        step_seconds: simulated seconds per step.

    Every value is checked against the choices the page offers (:data:`model_params`: names from
    the menus, numbers within their slider's range) before anything is opened or imported: the
    values come from a websocket, and a crafted message can send any. A value outside them is refused
    on the page (:attr:`notice`) and the control's default runs instead; a Python caller who wants
    another file or a plug-in uses :class:`~torus_sim.runner.ConfiguredModel`.

    Raises:
        ConfigurationError: a combination of offered values that cannot run together.
    """

    def __init__(
        self,
        platform: str | None = None,
        machine: str | None = None,
        workload: str | None = None,
        failures: str | None = None,
        policy: str | None = None,
        predictor: str | None = None,
        confidence: float | None = None,
        accuracy: float | None = None,
        load_scale: float | None = None,
        seed: int = 0,
        step_seconds: float | None = None,
        scheduler: str | None = None,
    ) -> None:
        policy = scheduler or policy
        given = {"platform": platform, "machine": machine, "workload": workload, "failures": failures, "policy": policy}
        given |= {"predictor": predictor, "confidence": confidence, "accuracy": accuracy, "load_scale": load_scale}
        platform, machine, workload, failures, policy, predictor, confidence, accuracy, load_scale = (
            model_params[name]["value"] if value is None else value for name, value in given.items()
        )  # a control left out takes the page's default
        step_seconds = model_params["step_seconds"] if step_seconds is None else step_seconds
        refused: list[str] = []
        platform = _offered("platform", platform, refused)
        machine = _offered("machine", machine, refused)
        workload = _offered("workload", workload, refused)
        failures = _offered("failures", failures, refused)
        policy = _offered("policy", policy, refused)
        predictor = _offered("predictor", predictor, refused)
        confidence = _in_range("confidence", confidence, refused)
        accuracy = _in_range("accuracy", accuracy, refused)
        load_scale = _in_range("load_scale", load_scale, refused)
        if not (isinstance(step_seconds, (int, float)) and 0 < step_seconds <= 7 * 86400):
            refused.append(f"Step of {step_seconds!r} s is not between 0 and a week: {model_params['step_seconds']:g} s is used.")
            step_seconds = model_params["step_seconds"]
        # a predictor applies to a policy whose placement asks one (its registry entry declares a default placement)
        chosen = None if predictor == DEFAULT_CHOICE or not uses_predictor(policy) else predictor
        try:  # a control's text: refused in place (a notice on the page), never a traceback
            text = str(seed).strip()
            if len(text) > 20:
                raise ValueError
            seed = int(text)
            if not 0 <= seed < 2**63:
                raise ValueError
        except ValueError:
            refused.append(f"Seed {_shown(seed)} is not a whole number >= 0: seed 0 is used.")
            seed = 0
        self.notice = " ".join(refused)
        super().__init__(
            step_seconds=step_seconds,
            node_identities=True,
            **scenario_fields(platform, machine, failures),
            workload=WORKLOADS[workload],
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


def _shown(value) -> str:
    """A value from the page, shortened for a notice (a crafted message may send megabytes)."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _offered(name: str, value, refused: list[str]):
    """``value`` when it is one of the choices the page offers for control ``name``; else its default (and a notice)."""
    control = model_params[name]
    if isinstance(value, str) and value in control["values"]:
        return value
    refused.append(f"{control['label']} {_shown(value)} is not one of the choices offered: {control['value']!r} is used.")
    return control["value"]


def _in_range(name: str, value, refused: list[str]) -> float:
    """``value`` as a float when it is a number within the slider ``name``'s range; else its default (and a notice)."""
    control = model_params[name]
    try:
        number = float(value) if not isinstance(value, (bool, str)) else math.nan
    except (TypeError, ValueError, OverflowError):
        number = math.nan
    if control["min"] <= number <= control["max"]:
        return number
    refused.append(
        f"{control['label']} {_shown(value)} is outside its range {control['min']:g} to {control['max']:g}: "
        f"{control['value']:g} is used."
    )
    return float(control["value"])


def scenario_line(model) -> str:
    """One line naming the scenario a model runs: platform, workload, failures, policy, predictor, c, seed.

    Args:
        model: a :class:`VizModel`.

    Returns:
        Markdown text, e.g. ``Scenario: torus 4x4x8 · NASA-iPSC-... (18,239 jobs) · failures bundled (347) · ...``.
    """
    config = model.config
    where = platform_kind(config.platform).label(model.platform, config)
    workload = Path(config.workload_path).name
    predictor = config.predictor or "the policy's own"
    return (
        f"**Scenario:** {where} · {workload} ({len(model.jobs):,} jobs) · failures {config.failure_spec} "
        f"({len(model.failure_log):,}) · policy {config.policy} · predictor {predictor} · c = {model.workload.load_scale:g} · "
        f"seed {config.seed}"
    )


def jump(model, until_hours: float | None = None, next_failure: bool = False, limit: int = 100_000) -> int:
    """Step a model to a simulated time, or until a step in which a node fails.

    Args:
        model: a :class:`VizModel`.
        until_hours: step until ``model.now`` reaches this many hours (or the run ends).
        next_failure: step until a step in which a failure happened (or the run ends).
        limit: the most steps taken.

    Returns:
        The number of steps taken.
    """
    taken = 0
    while taken < limit and model.running:
        if until_hours is not None and model.now >= until_hours * 3600.0:
            break
        model.step()
        taken += 1
        if next_failure and model.failed_this_step:
            break
    return taken


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
        solara.Markdown(scenario_line(model))
        _vega(viz_charts.machine_chart(model))
        solara.HTML(tag="div", unsafe_innerHTML=viz_charts.legend_html())


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
def JumpView(model):
    """Jump to a simulated hour or to the next failure (a bad hour is refused beside the field)."""
    update_counter.get()
    hours, set_hours = solara.use_state("")
    message, set_message = solara.use_state("")

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
        failed = ", ".join(str(n) for n in model.failed_this_step) or "none (the run ended)"
        set_message(f"{taken} steps: t = {model.now / 3600:,.1f} h, failed node(s) {failed}")
        update_counter.value += 1

    with solara.Row(style={"align-items": "center", "flex-wrap": "wrap"}):
        solara.InputText("Jump to hour", value=hours, on_value=set_hours, continuous_update=True)
        solara.Button("Go", on_click=go_to_hour)
        solara.Button("Next failure", on_click=go_to_failure)
        if message:
            solara.Text(message)


@solara.component
def LivePlots(model):
    """Utilization, queue length, average bounded slowdown so far, job kills."""
    update_counter.get()
    with solara.Columns([1, 1, 1, 1]):
        for chart in viz_charts.live_charts(model):
            _vega(chart)


@solara.component
def RecentJobs(model):
    """The most recently started jobs, start to end."""
    update_counter.get()
    _vega(viz_charts.gantt_chart(model))


@solara.component
def Page():
    """The page: one model per browser session (a module-level model would be shared by every visitor).

    Solara renders ``Page`` once per session; ``use_memo`` keeps that session's model across renders,
    and Mesa's Reset replaces it in the session's own reactive state.
    """
    model = solara.use_reactive(solara.use_memo(VizModel, dependencies=[]))
    use_session_release(lambda: [model.peek()])  # at the session's close: its model and the hooks Solara keeps are freed
    return SolaraViz(
        model,
        components=[(TorusView, 0), (QueueView, 0), (JumpView, 0), (LivePlots, 0), (RecentJobs, 0)],
        model_params=model_params,
        name="torus-sim: scheduling on failure-prone machines",
    )


COMPARED = ("average bounded slowdown", "average wait (h)", "completed", "queued", "job kills", "utilization")


def compare_table(models: dict[str, VizModel]) -> pd.DataFrame:
    """The metrics so far of models run side by side: one row per metric, one column per policy.

    Args:
        models: label -> model (same workload and failures, stepped together).

    Returns:
        A table with the rows of :data:`COMPARED` (bounded slowdown and wait over the jobs finished so far).
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
        busy = int(np.count_nonzero(np.asarray(model.platform.job_at) >= 0))
        columns[label] = [
            round(slowdown, 3),
            round(wait, 3),
            done,
            len(model.scheduler.queue),
            int(model.counters["job_kills"]),
            round(busy / model.platform.capacity, 3),
        ]
    return pd.DataFrame(columns, index=list(COMPARED)).rename_axis("metric").reset_index()


@solara.component
def ComparePage():
    """Two policies side by side on the same workload and failures, stepped together, with one metrics table.

    The question a scheduling researcher asks of a live view: what does the other policy do with
    the same jobs and the same failures, right now? Each session has its own two models.
    """
    pair, set_pair = solara.use_state(next(iter(PAIRS)))
    seed, set_seed = solara.use_state("0")
    counter, set_counter = solara.use_state(0)
    message, set_message = solara.use_state("")

    def build():
        chosen = pair if isinstance(pair, str) and pair in PAIRS else next(iter(PAIRS))  # only the pairs offered
        machine = PAIR_MACHINES.get(chosen, model_params["machine"]["value"])
        return {policy: VizModel(policy=policy, machine=machine, seed=seed) for policy in PAIRS[chosen]}

    models = solara.use_memo(build, dependencies=[pair, seed])
    shown_now = solara.use_memo(dict, dependencies=[])  # the models on the page now, read at the session's close
    shown_now["models"] = models
    use_session_release(lambda: shown_now["models"].values())

    def step(count: int = 1):
        for model in models.values():
            for _ in range(count):
                if model.running:
                    model.step()
        set_counter(counter + count)

    def next_failure():
        first = next(iter(models.values()))
        taken = jump(first, next_failure=True)
        for model in list(models.values())[1:]:
            for _ in range(taken):
                if model.running:
                    model.step()
        set_counter(counter + taken)
        set_message(f"{taken} steps to the next failure (same log for both)")

    def set_seed_checked(text: str):
        try:
            if len(str(text)) > 20 or not 0 <= int(text) < 2**63:
                raise ValueError
            set_message("")
        except (TypeError, ValueError):
            set_message(f"Seed {_shown(text)} is not a whole number >= 0: seed 0 is used.")
        set_seed(str(text)[:20])

    first = next(iter(models.values()))
    with solara.Column(style={"padding": "12px"}):
        solara.Markdown("## Two policies side by side (same workload, same failures)")
        with solara.Row(style={"align-items": "center", "flex-wrap": "wrap"}):
            solara.Select("Comparison", value=pair, values=list(PAIRS), on_value=set_pair)
            solara.InputText("Seed", value=seed, on_value=set_seed_checked)
            solara.Button("Step both", on_click=lambda: step(1))
            solara.Button("Step both x 24", on_click=lambda: step(24))
            solara.Button("Next failure", on_click=next_failure)
        if message:
            solara.Warning(message)
        config = first.config
        solara.Markdown(
            f"**t = {first.now / 3600:,.1f} h** (step {counter}) · {Path(config.workload_path).name} ({len(first.jobs):,} jobs) · "
            f"failures {config.failure_spec} ({len(first.failure_log):,}) · c = {first.workload.load_scale:g} · seed {config.seed}"
        )
        table = compare_table(models)
        shown = table.assign(**{label: [f"{value:,.3f}".rstrip("0").rstrip(".") for value in table[label]] for label in models})
        solara.DataFrame(shown, items_per_page=len(COMPARED))
        with solara.Columns([1, 1]):
            for label, model in models.items():
                with solara.Column():
                    solara.Markdown(f"### {label}")
                    _vega(viz_charts.machine_chart(model))


routes = [
    solara.Route(path="/", component=Page, label="Simulation"),
    solara.Route(path="compare", component=ComparePage, label="Compare two policies"),
]
"""The app's pages: ``/`` (one model) and ``/compare`` (two policies side by side)."""
