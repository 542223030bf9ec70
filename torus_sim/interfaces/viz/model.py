"""The browser view's model and the facts the page shows about it (no Solara here).

Key components:
    VizModel: the model with the page's controls, every value checked against the choices offered.
    scenario_line: one line naming what the model runs.
    jump, failed_nodes_text: stepping to an hour or to the next failure, and what failed.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path

from torus_sim.experiments.runner import ConfiguredModel
from torus_sim.interfaces.viz.menus import (
    DEFAULT_CHOICE,
    DOWNTIMES,
    NODES,
    WORKLOADS,
    model_params,
    power_fields,
    scenario_fields,
    uses_predictor,
)
from torus_sim.machine.platforms.kinds import platform_kind

__all__ = ["VizModel", "VizTorusModel", "failed_nodes_text", "jump", "scenario_line", "shown_text"]

_MODEL_SERIALS = itertools.count(1)
"""A number per model made by the page: a message about one model is shown only beside that model."""


class VizModel(ConfiguredModel):
    """The model with the parameters the page's controls set.

    Args:
        platform: ``torus`` (the machine's torus of midplanes) or ``cluster`` (P nodes, the workload's size).
        machine: ``bgl`` (4x4x8), ``intrepid`` (4x4x5) or ``mira`` (2x3x4x4), see :mod:`torus_sim.machine.machines`.
        workload: a label of :data:`WORKLOADS` (never a path: the values come from the browser).
        failures: ``bundled`` (the machine's own log: BG/L's RAS sample, Mira's events; none on Intrepid),
            ``mira``, ``none`` or one of the ``synthetic:N[:bursty]`` the control offers.
        policy: a name of :data:`~torus_sim.experiments.scenario.ONLINE_POLICIES` (``scheduler`` is accepted too).
        predictor: ``default`` (the policy's own), ``oracle-confidence``, ``oracle-accuracy`` or
            ``history``; ignored by policies that use none.
        confidence: a of the oracle-confidence predictor, in [0, 1].
        accuracy: a of the oracle-accuracy predictor, in [0, 1].
        load_scale: c.
        seed: the run's seed.
        step_seconds: simulated seconds per step.
        downtime: a label of :data:`~torus_sim.interfaces.viz.menus.DOWNTIMES` (``transient``: a failed node is back at
            once, BGL-FAULT's assumption; ``log``: the log's repair times; or a fixed time).
        nodes: a label of :data:`~torus_sim.interfaces.viz.menus.NODES`: a cluster's node count (the workload's
            ``MaxNodes`` by default); ignored on a torus.
        price: a label of :data:`~torus_sim.interfaces.viz.menus.PRICES`: power accounting off, or a price (jobs draw
            0.5 to 1.5 x the machine's busy figure per node; the page shows the power over time).
        power_cap: a label of :data:`~torus_sim.interfaces.viz.menus.CAPS` (with a price only): the run's cap, which
            ``power-cap`` keeps and the summary measures.
        switch_off: a label of :data:`~torus_sim.interfaces.viz.menus.SWITCH_OFF` (with a price only): idle nodes switched
            off after that long, a job waiting for its off nodes to boot; the drawing shows them off.
        controls: the values a session's controls hold (:class:`torus_sim.interfaces.viz.controls.ChosenControls`,
            its ``values`` dict by control name): how the page's Reset passes them; a keyword given
            explicitly wins.

    After construction :attr:`controls` holds the value of every control as it was applied (a refused
    value replaced by its default): the page compares it with the controls to mark a pending change.

    Every value is checked against the choices the page offers (:data:`model_params`: names from
    the menus, numbers within their slider's range) before anything is opened or imported: the
    values come from a websocket, and a crafted message can send any. A value outside them is refused
    on the page (:attr:`notice`) and the control's default runs instead; a Python caller who wants
    another file or a plug-in uses :class:`~torus_sim.experiments.runner.ConfiguredModel`.

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
        seed: int | str | None = None,
        step_seconds: float | None = None,
        scheduler: str | None = None,
        downtime: str | None = None,
        nodes: str | None = None,
        controls=None,
        price: str | None = None,
        power_cap: str | None = None,
        switch_off: str | None = None,
    ) -> None:
        policy = scheduler or policy
        given = {"platform": platform, "machine": machine, "workload": workload, "failures": failures, "policy": policy}
        given |= {"predictor": predictor, "confidence": confidence, "accuracy": accuracy, "load_scale": load_scale}
        given |= {"downtime": downtime, "nodes": nodes, "seed": seed, "price": price, "power_cap": power_cap}
        given |= {"switch_off": switch_off}
        chosen = dict(getattr(controls, "values", None) or {})
        given = {name: chosen.get(name) if value is None else value for name, value in given.items()}
        given = {name: model_params[name]["value"] if value is None else value for name, value in given.items()}
        platform, machine, workload, failures, policy = (
            given[name] for name in ("platform", "machine", "workload", "failures", "policy")
        )
        predictor, confidence, accuracy, load_scale = (
            given[name] for name in ("predictor", "confidence", "accuracy", "load_scale")
        )
        downtime, nodes, seed = given["downtime"], given["nodes"], given["seed"]  # a control left out takes the page's default
        step_seconds = model_params["step_seconds"] if step_seconds is None else step_seconds
        refused: list[str] = []
        platform = _offered("platform", platform, refused)
        machine = _offered("machine", machine, refused)
        workload = _offered("workload", workload, refused)
        failures = _offered("failures", failures, refused)
        policy = _offered("policy", policy, refused)
        predictor = _offered("predictor", predictor, refused)
        downtime = _offered("downtime", downtime, refused)
        nodes = _offered("nodes", nodes, refused)
        price = _offered("price", given["price"], refused)
        power_cap = _offered("power_cap", given["power_cap"], refused)
        switch_off = _offered("switch_off", given["switch_off"], refused)
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
            refused.append(f"Seed {shown_text(seed)} is not a whole number >= 0: seed 0 is used.")
            seed = 0
        self.notice = " ".join(refused)
        self.serial = next(_MODEL_SERIALS)
        self.controls = {"platform": platform, "nodes": nodes, "machine": machine, "workload": workload, "failures": failures}
        self.controls |= {"downtime": downtime, "policy": policy, "predictor": predictor, "confidence": confidence}
        self.controls |= {"accuracy": accuracy, "load_scale": load_scale, "seed": seed, "price": price, "power_cap": power_cap}
        self.controls |= {"switch_off": switch_off}
        super().__init__(
            step_seconds=step_seconds,
            nodes=NODES[nodes] if platform == "cluster" else None,
            node_identities=True,
            **scenario_fields(platform, machine, failures),
            workload=WORKLOADS[workload],
            policy=policy,
            predictor=chosen,
            confidence=float(confidence),
            accuracy=float(accuracy),
            load_scale=float(load_scale),
            seed=seed,
            downtime=DOWNTIMES[downtime],
            **power_fields(price, power_cap, switch_off),
        )

    @property
    def config(self):
        """The scenario (as the controls set it)."""
        return self.scenario


VizTorusModel = VizModel
"""The name the page's model had before it drew clusters too."""


def shown_text(value) -> str:
    """A value from the page, shortened for a notice (a crafted message may send megabytes)."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _offered(name: str, value, refused: list[str]):
    """``value`` when it is one of the choices the page offers for control ``name``; else its default (and a notice)."""
    control = model_params[name]
    if isinstance(value, str) and value in control["values"]:
        return value
    refused.append(f"{control['label']} {shown_text(value)} is not one of the choices offered: {control['value']!r} is used.")
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
        f"{control['label']} {shown_text(value)} is outside its range {control['min']:g} to {control['max']:g}: "
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
    where = platform_kind(config.platform).label(model.platform, config.platform_fields())
    workload = Path(config.workload_path).name
    predictor = config.predictor or "the policy's own"
    downtime = config.downtime
    if downtime == "transient":
        down = ""
    elif downtime == "log":
        down = " · downtime: the log's repair times"
    else:
        down = f" · downtime {float(downtime) / 3600:g} h"
    power = ""
    if config.power:
        power = f" · price {config.price}"
        if config.power_cap is not None:
            hours = f" in hours {config.power_cap_hours}" if config.power_cap_hours else ""
            power += f" · cap {config.power_cap:g} x the busy draw{hours}"
        if config.idle_off_after is not None:
            power += f" · idle nodes off after {config.idle_off_after:g} s, boot {config.boot_time or 0:g} s"
            if config.shutdown_time:
                power += f", switch-off {config.shutdown_time:g} s"
    return (
        f"**Scenario:** {where} · {workload} ({len(model.run_jobs):,} jobs) · failures {config.failure_spec} "
        f"({len(model.failure_log):,}){down} · policy {config.policy} · predictor {predictor} · "
        f"c = {model.workload.load_scale:g} · seed {config.seed}{power}"
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


def failed_nodes_text(model) -> str:
    """The nodes that failed during the model's last step, each named once: ``failed node(s) 4, 5, 50 (6 events)``.

    Args:
        model: a :class:`VizModel` (``failed_this_step`` lists one entry per failure event).

    Returns:
        Text for the page; ``no node failed (the run ended)`` when the step had no failure.
    """
    events = list(model.failed_this_step)
    if not events:
        return "no node failed (the run ended)" if not model.running else "no node failed"
    nodes = sorted(set(int(node) for node in events))
    extra = f" ({len(events)} events)" if len(events) != len(nodes) else ""
    return f"failed node(s) {', '.join(str(node) for node in nodes)}{extra}"
