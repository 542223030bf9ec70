"""The browser view's menus: the choices its page offers, and how they become a scenario's fields.

This is the browser's catalog: the only place where the page names workloads, failure sources,
machines, policies and predictors. The server checks every value a page sends against these choices
(:class:`torus_sim.interfaces.viz.app.VizModel`), so a crafted message can select nothing else.
"""

from __future__ import annotations

import os
from pathlib import Path

from torus_sim.experiments.scenario import ONLINE_POLICIES
from torus_sim.inputs.workload.sources import BUNDLED_NASA_LOG

__all__ = [
    "BGL_FAILURES",
    "CAPS",
    "JOB_POWER",
    "POWER_OFF",
    "POWER_POLICIES",
    "PRICES",
    "DEFAULT_CHOICE",
    "PAIRS",
    "DOWNTIMES",
    "NODES",
    "PAIR_MACHINES",
    "WORKLOADS",
    "installed_policies",
    "model_params",
    "policies_for",
    "power_fields",
    "scenario_fields",
    "uses_predictor",
]


def _available_workloads() -> dict[str, str]:
    """Label -> path of the workloads offered in the controls."""
    workloads = {"NASA iPSC/860 (bundled)": str(BUNDLED_NASA_LOG)}
    shared = Path(os.environ.get("TORUS_SIM_SHARED_DATA", Path.cwd().parent / "shared" / "data")) / "swf"
    for label, name in (("SDSC-SP2", "SDSC-SP2-1998-4.2-cln.swf.gz"), ("CTC-SP2", "CTC-SP2-1996-3.1-cln.swf.gz")):
        if (shared / name).exists():
            workloads[label] = str(shared / name)
    workloads.update({name: name for name in _installed("workload")})  # installed online workload plug-ins, by name
    return workloads


def _installed(kind: str) -> list[str]:
    """Installed plug-ins' names of an input registry (``workload``: online sources only; ``failures``)."""
    from torus_sim.experiments.extensions import input_registries

    registry = input_registries()[kind][0]
    names = []
    for name in sorted(registry.iter_plugins()):
        try:
            factory = registry.resolve(name)[0]
        except Exception:  # noqa: BLE001 - a broken plug-in is left out of the menu (a run would name it)
            continue
        if kind == "workload" and getattr(factory, "kind", "online") != "online":
            continue
        if getattr(factory, "takes_argument", False) or getattr(factory, "reads_file", False):
            continue  # the page offers names, never paths or arguments
        names.append(name)
    return names


WORKLOADS = _available_workloads()


def installed_policies() -> list[str]:
    """Installed plug-ins' policy names (``torus_sim.policies`` entry points), for the policy menu."""
    from torus_sim.policies.catalog import POLICIES

    return sorted(POLICIES.iter_plugins())


_TENTHS = [round(tenth / 10, 1) for tenth in range(11)]
"""0.0, 0.1, ..., 1.0: the values of the confidence and accuracy menus."""

DOWNTIMES = {
    "transient": "transient",
    "log (the log's repair times; Mira has them)": "log",
    "1 h": 3600.0,
    "12 h": 43200.0,
}
"""The downtime control's choices -> the scenario's ``downtime`` (BGL-FAULT's failures are transient:
a node is back at once, so nothing is ever drawn "down"; ``log`` takes each failure's repair time)."""


WORKLOAD_NODES = "the workload's (its MaxNodes)"
"""The node-count control's choice that means "as many nodes as the workload's machine had"."""

NODES = {WORKLOAD_NODES: None, "128": 128, "256": 256, "512": 512, "1024": 1024, "4096": 4096}
"""The node-count control's choices (a cluster only) -> the scenario's ``nodes`` (None: the workload's
``MaxNodes``, 128 for the bundled NASA log). A job larger than the cluster is skipped and counted in the
run's cleaning counts; none is below 128, the nodes BG/L's RAS sample names (the bundled failures)."""


POWER_OFF = "off (no power accounting)"
"""The price control's choice that means no power accounting."""

PRICES = {
    POWER_OFF: None,
    "time of use: 0.05 per kWh, 3x on-peak 8-20": "tou:0.05:3:8-20",
    "time of use: 0.05 per kWh, 5x on-peak 8-20": "tou:0.05:5:8-20",
    "flat 0.10 per kWh": "flat:0.10",
}
"""The price control's choices -> the scenario's ``price``. Any but the first turns power accounting on,
each job drawing per node uniform 0.5 to 1.5 x the machine's busy figure (``busy-share:0.5:1.5``, as
docs/energy): the page then shows the machine's power over time beside the price."""

JOB_POWER = "busy-share:0.5:1.5"
"""The job power the page's runs draw with power accounting on."""

CAPS = {
    "none": (None, None),
    "0.8 x the busy draw": (0.8, None),
    "0.8 x the busy draw, on-peak (8-20)": (0.8, "8-20"),
    "0.7 x the busy draw, on-peak (8-20)": (0.7, "8-20"),
}
"""The power cap control's choices -> the scenario's ``(power_cap, power_cap_hours)`` (with a price only)."""

SWITCH_OFF = {
    "never": (None, None, None),
    "after 10 min idle (boot 5 min)": (600.0, 300.0, None),
    "after 10 min idle (switch-off 5 min, boot 5 min)": (600.0, 300.0, 300.0),
    "after 1 h idle (boot 5 min)": (3600.0, 300.0, None),
    "at once (boot 5 min)": (0.0, 300.0, None),
}
"""The switch-off control's choices -> the scenario's ``(idle_off_after, boot_time, shutdown_time)`` in seconds (with
a price only): idle nodes switched off at 0 W, at once or taking ``shutdown_time`` at the idle draw, a job given a
node that is not on waiting for its switch-off to end and its boot (docs/energy; Batsim's power states)."""

POWER_POLICIES = ("power-window", "power-cap")
"""The power-aware built-ins the policy menu offers (they need a price; power-cap needs a cap too)."""


model_params = {
    "platform": {"type": "Select", "value": "torus", "values": ["torus", "cluster"], "label": "Platform"},
    "nodes": {"type": "Select", "value": WORKLOAD_NODES, "values": list(NODES), "label": "Nodes (cluster)"},
    "workload": {"type": "Select", "value": "NASA iPSC/860 (bundled)", "values": list(WORKLOADS), "label": "Workload"},
    "machine": {"type": "Select", "value": "bgl", "values": ["bgl", "intrepid", "mira"], "label": "Machine (torus)"},
    "failures": {
        "type": "Select",
        "value": "bundled",
        "values": [
            "bundled",
            "mira",
            "none",
            "synthetic:500",
            "synthetic:2000",
            "synthetic:1000:bursty",
            "synthetic:4000:bursty",
            *_installed("failures"),
        ],
        "label": "Failures (bundled = the machine's own log: BG/L RAS, Mira's; none on Intrepid)",
    },
    "downtime": {
        "type": "Select",
        "value": "transient",
        "values": list(DOWNTIMES),
        "label": "Downtime after a failure",
    },
    "policy": {
        "type": "Select",
        "value": "krevat",
        "values": list(ONLINE_POLICIES) + list(POWER_POLICIES) + installed_policies(),
        "label": "Policy",
    },
    "price": {"type": "Select", "value": POWER_OFF, "values": list(PRICES), "label": "Electricity price (power accounting)"},
    "power_cap": {"type": "Select", "value": "none", "values": list(CAPS), "label": "Power cap"},
    "switch_off": {"type": "Select", "value": "never", "values": list(SWITCH_OFF), "label": "Switch idle nodes off"},
    "predictor": {
        "type": "Select",
        "value": "default",
        "values": ["default", "oracle-confidence", "oracle-accuracy", "history", "recency"],
        "label": "Predictor",
    },
    # menus, not sliders: Mesa's sliders do not show their value (issue 44 §3); min and max bound what the model accepts
    "confidence": {
        "type": "Select",
        "value": 0.1,
        "values": _TENTHS,
        "min": 0.0,
        "max": 1.0,
        "label": "Confidence a (balancing)",
    },
    "accuracy": {"type": "Select", "value": 0.1, "values": _TENTHS, "min": 0.0, "max": 1.0, "label": "Accuracy a (tie-break)"},
    "load_scale": {
        "type": "Select",
        "value": 1.0,
        "values": [round(0.5 + tenth, 1) for tenth in _TENTHS],
        "min": 0.5,
        "max": 1.5,
        "label": "Load scale c",
    },
    "seed": {"type": "InputText", "value": 0, "label": "Seed"},
    "step_seconds": 3600.0,
}
"""The page's controls (Mesa user parameters) and fixed parameters."""


def policies_for(platform: str) -> list[str]:
    """The policy menu's names that declare ``platform`` (``torus`` or ``cluster``), in the menu's order.

    A policy's registry entry declares where it runs (:attr:`torus_sim.policies.base.Policy.platforms`;
    ``greedy`` and the moldable policies: clusters only); an entry that declares nothing (a plain
    function) is offered on both, and refused with a sentence at Reset if it cannot run.

    Args:
        platform: a platform kind offered by the platform control.

    Returns:
        Policy names, a sub-list of ``model_params["policy"]["values"]``.
    """
    from torus_sim.experiments.extensions import registries

    registry = registries()["policy"]
    offered = []
    for name in model_params["policy"]["values"]:
        try:
            factory = registry.resolve(name)[0]
        except Exception:  # noqa: BLE001 - a broken plug-in is left out of the menu (a run would name it)
            continue
        declared = getattr(factory, "platforms", None)
        if not isinstance(declared, (tuple, list)) or platform in declared:
            offered.append(name)
    return offered


DEFAULT_CHOICE = "default"
"""The predictor control's choice that means "the policy's own"."""


def uses_predictor(policy: str) -> bool:
    """Whether ``policy``'s placement asks a failure predictor (its registry entry declares a default placement)."""
    from torus_sim.experiments.extensions import registries

    try:
        factory = registries()["policy"].resolve(policy)[0]
    except Exception:  # noqa: BLE001 - an unknown name uses none (the model refuses it with a sentence)
        return False
    return getattr(factory, "default_placement", None) is not None


BGL_FAILURES = "bundled"
"""The failures control's choice that means "the machine's own log" (BG/L's RAS sample on BG/L)."""


def power_fields(price: str, cap: str, switch_off: str = "never") -> dict:
    """The scenario's ``[power]`` fields from the page's checked price, power cap and switch-off controls.

    Returns:
        ``{}`` with the price off (no power accounting; the cap and the switch-off are ignored); else
        ``power``, ``job_power`` (:data:`JOB_POWER`), ``price``, ``power_cap``, ``power_cap_hours`` and,
        with a switch-off chosen, ``idle_off_after``, ``boot_time`` and, where the choice names one,
        ``shutdown_time`` (:data:`SWITCH_OFF`).
    """
    if PRICES[price] is None:
        return {}
    share, hours = CAPS[cap]
    fields = {"power": True, "job_power": JOB_POWER, "price": PRICES[price], "power_cap": share, "power_cap_hours": hours}
    after, boot, shutdown = SWITCH_OFF[switch_off]
    if after is not None:
        fields |= {"idle_off_after": after, "boot_time": boot}
    if shutdown is not None:
        fields |= {"shutdown_time": shutdown}
    return fields


def scenario_fields(platform: str, machine: str, failures: str) -> dict:
    """The scenario's platform fields from the page's checked controls.

    The machine applies to the torus only (BG/L's is the scenario's default); the BG/L RAS sample names
    BG/L's 128 supernodes, so on another machine "bundled" means that machine's own log (Mira's events,
    none on Intrepid).

    Returns:
        ``{"platform", "machine", "failures"}``.
    """
    from torus_sim.machine.machines import load_machine
    from torus_sim.machine.platforms.kinds import DEFAULT_MACHINE

    machine = None if platform != "torus" or machine in (None, "", DEFAULT_MACHINE) else machine
    if machine is not None and failures == BGL_FAILURES:
        failures = load_machine(machine).failures
    return {"platform": platform, "machine": machine, "failures": failures}


PAIRS = {
    "Krevat vs balancing (torus)": ("krevat", "balancing"),
    "FCFS-EASY vs PV-EASY (torus)": ("FCFS-EASY", "PV-EASY"),
    "FCFS-EASY vs conservative (torus)": ("FCFS-EASY", "conservative"),
    "Krevat vs FCFS-EASY (Mira)": ("krevat", "FCFS-EASY"),
}
PAIR_MACHINES = {"Krevat vs FCFS-EASY (Mira)": "mira"}
"""The machine of a comparison that is not BG/L's."""
"""The comparisons offered on ``/compare`` (policy pairs; the Mira one on Mira's torus and failures)."""
