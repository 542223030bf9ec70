"""The browser view's scenario controls: menus that offer only what runs together, and a pending change marked.

Mesa's SolaraViz draws one fixed widget per model parameter; its menus cannot depend on each other and
it keeps the chosen values where the page cannot read them. This component draws the controls itself
(from the catalog :data:`torus_sim.interfaces.viz.menus.model_params`) and keeps the session's choices in a
:class:`ChosenControls`, which Mesa's Reset hands to :class:`torus_sim.interfaces.viz.model.VizModel` as a fixed
parameter. So:

* the policy menu offers only the policies that declare the chosen platform
  (:func:`~torus_sim.interfaces.viz.menus.policies_for`); the machine menu shows for a torus, the node count for a
  cluster, the predictor and its quality for a policy whose placement asks one;
* a control changed since the model was built is listed as pending ("applied at Reset") until Reset.

Every value still goes through VizModel's checks (a crafted message can choose nothing else).
"""

from __future__ import annotations

import solara

from torus_sim.interfaces.viz.menus import POWER_OFF, model_params, policies_for, uses_predictor

__all__ = ["ChosenControls", "ScenarioControls", "pending_changes", "shown_controls"]

CONTROLS = tuple(name for name, control in model_params.items() if isinstance(control, dict) and "type" in control)
"""The controls' names, in the catalog's order."""


class ChosenControls:
    """The values one browser session's controls hold now: what its next Reset builds.

    Attributes:
        values: control name -> chosen value (a label of the control's menu, a number, the seed's text);
            the page's defaults at first.
    """

    def __init__(self) -> None:
        self.values = {name: model_params[name]["value"] for name in CONTROLS}


def shown_controls(values: dict) -> list[str]:
    """The controls that apply to the chosen values, in the catalog's order.

    Args:
        values: control name -> chosen value (:attr:`ChosenControls.values`).

    Returns:
        Names of :data:`CONTROLS`: ``machine`` on a torus only, ``nodes`` on a cluster only, the
        predictor and its confidence / accuracy only for a policy whose placement asks a predictor, the
        power cap and the switch-off only with a price (power accounting on).
    """
    cluster = values.get("platform") == "cluster"
    predicted = uses_predictor(values.get("policy"))
    hidden = {"machine"} if cluster else {"nodes"}
    if not predicted:
        hidden |= {"predictor", "confidence", "accuracy"}
    if values.get("price", POWER_OFF) == POWER_OFF:
        hidden |= {"power_cap", "switch_off"}  # a cap and switched-off nodes are power accounting's
    return [name for name in CONTROLS if name not in hidden]


def pending_changes(values: dict, applied: dict) -> list[str]:
    """Controls whose chosen value differs from the one the running model was built with, as text.

    Args:
        values: control name -> chosen value.
        applied: control name -> value the model applied (:attr:`VizModel.controls`).

    Returns:
        ``["Platform: cluster (running: torus)", ...]`` for the controls that apply to the chosen values
        (:func:`shown_controls`); empty when the page shows the model its controls describe.
    """
    changed = []
    for name in shown_controls(values):
        chosen, running = values.get(name), applied.get(name)
        if str(chosen).strip() != str(running):
            changed.append(f"{model_params[name]['label']}: {chosen} (running: {running})")
    return changed


@solara.component
def ScenarioControls(model: solara.Reactive, chosen: ChosenControls):
    """The scenario's controls for one session, and what Reset will change.

    Args:
        model: the session's model (a reactive :class:`~torus_sim.interfaces.viz.model.VizModel`; Mesa's Reset replaces it).
        chosen: the session's :class:`ChosenControls` (the same object Mesa's Reset passes to VizModel).
    """
    values, set_values = solara.use_state(dict(chosen.values))

    def change(name: str, value) -> None:
        updated = {**chosen.values, name: value}
        if name == "platform" and updated["policy"] not in policies_for(value):
            updated["policy"] = model_params["policy"]["value"]  # the default runs on both platforms
        chosen.values = updated
        set_values(updated)

    for name in shown_controls(values):
        control = model_params[name]
        if control["type"] == "InputText":
            solara.InputText(control["label"], value=str(values[name]), on_value=lambda text, name=name: change(name, text))
            continue
        offered = policies_for(values["platform"]) if name == "policy" else control["values"]
        solara.Select(control["label"], value=values[name], values=offered, on_value=lambda value, name=name: change(name, value))
    pending = pending_changes(values, getattr(model.value, "controls", {}))
    if pending:
        solara.Info("Pending, applied at Reset: " + "; ".join(pending), dense=True)
