"""What one node of the platform draws in each power state: idle, busy (at its job's power), down.

A node is what the platform schedules: a midplane (BG/L's supernode) of 512 compute nodes on a torus,
one node on a cluster. The states follow Batsim's energy model (a host's watts per power state:
idle, computing, off); a failed or repairing node draws ``node_down_w`` (0 by default: off).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from torus_sim.core.errors import ConfigurationError

__all__ = ["CLUSTER_NODE_W", "IDLE_SHARE", "NodePower", "draw_now", "node_power"]

CLUSTER_NODE_W = (100.0, 200.0)
"""A cluster node's (idle, busy) watts when the scenario gives none: round numbers of a two-socket
server, an assumption (not a measured figure): set ``node_idle_w`` / ``node_busy_w`` for a real machine."""

IDLE_SHARE = 0.5
"""The idle draw as a share of the busy draw where a machine publishes no idle figure (an assumption)."""


@dataclass(frozen=True)
class NodePower:
    """The draw of one node in each power state.

    Attributes:
        idle_w: watts of a node that is up and runs no job.
        busy_w: watts of a node running a job whose own power is not known (the default job power).
        down_w: watts of a failed or repairing node.
        unit: what a node is (``midplane``, ``node``).
        sources: figure -> where it comes from (the machine's publication, the scenario, an assumption).
    """

    idle_w: float
    busy_w: float
    down_w: float
    unit: str = "node"
    sources: dict[str, str] = field(default_factory=dict, compare=False)

    def describe(self) -> str:
        """``midplane idle 5,600 W, busy 11,200 W, down 0 W``, for the run's header."""
        return f"{self.unit} idle {self.idle_w:,.0f} W, busy {self.busy_w:,.0f} W, down {self.down_w:,.0f} W"


def node_power(settings, machine=None) -> NodePower:
    """The node draws of a run: the scenario's figures where given, else the machine's, else the defaults.

    Args:
        settings: the scenario fields it reads (``node_idle_w``, ``node_busy_w``, ``node_down_w``: its ``from_scenario``).
        machine: the torus's :class:`~torus_sim.machine.machines.Machine` (its nodes are midplanes); None on a
            cluster (or any platform of plain nodes).

    Returns:
        The :class:`NodePower`, with the source of each figure.

    Raises:
        ConfigurationError: an idle draw above the busy draw (power accounting assumes busy >= idle).
    """
    sources = {}
    if machine is not None and machine.midplane_busy_w is not None:
        busy = machine.midplane_busy_w
        sources["busy"] = machine.sources.get("midplane_busy_w", f"machine {machine.name}")
        if machine.midplane_idle_w is not None:
            idle = machine.midplane_idle_w
            sources["idle"] = machine.sources.get("midplane_idle_w", f"machine {machine.name}")
        else:
            idle = IDLE_SHARE * busy
            sources["idle"] = f"no published idle figure: {IDLE_SHARE:g} x busy (an assumption; set node_idle_w)"
        unit = "midplane"
    else:
        idle, busy = CLUSTER_NODE_W
        sources = {"idle": "default (an assumption; set node_idle_w)", "busy": "default (an assumption; set node_busy_w)"}
        unit = "midplane" if machine is not None else "node"
    if settings.node_busy_w is not None:
        busy, sources["busy"] = settings.node_busy_w, "the scenario's node_busy_w"
    if settings.node_idle_w is not None:
        idle, sources["idle"] = settings.node_idle_w, "the scenario's node_idle_w"
    sources["down"] = "the scenario's node_down_w"
    if idle > busy:
        raise ConfigurationError(f"node_idle_w {idle:g} W is above the busy draw {busy:g} W: give node_busy_w >= node_idle_w")
    return NodePower(float(idle), float(busy), float(settings.node_down_w), unit, sources)


node_power.from_scenario = ("node_idle_w", "node_busy_w", "node_down_w")  # the scenario fields it reads


def draw_now(power, nodes: int, down: int, running, model=None) -> float:
    """The machine's draw at an instant, watts: the definition the energy accounting integrates.

    Args:
        power: the run's :class:`~torus_sim.experiments.run_inputs.PowerInputs` (node figures, each job's watts per node).
        nodes: N, the platform's nodes.
        down: nodes down now (failed or repairing: ``node_down_w`` each).
        running: the running jobs (their ``job_id`` and ``allocated_size``).
        model: the model, for its switched-off and booting nodes (``model.power_states``) when idle
            nodes are switched off; None (or a model without them): every idle node draws ``idle_w``.

    Returns:
        ``(N - down - busy) x idle_w + down x down_w + sum over running jobs of allocated nodes x their watts``,
        with off nodes at ``off_w`` instead of ``idle_w`` and booting ones at ``boot_w`` instead of their job's watts.

    References:
        Batsim's power states (idle, computing, off), issue 45 §1.
    """
    node, watts = power.node, power.job_watts
    busy = 0
    jobs_w = 0.0
    for job in running:
        size = job.allocated_size
        busy += size
        jobs_w += size * watts.get(job.job_id, node.busy_w)
    draw = (nodes - down - busy) * node.idle_w + down * node.down_w + jobs_w
    states = getattr(model, "power_states", None)
    if states is not None:
        draw += states.draw_change_w(model.now, node.idle_w, watts, node.busy_w)
    return draw
