"""A run's power inputs as one object: node draws, each job's watts per node, the tariff, the cap, switching off.

Read by the engine's energy accounting and, through a policy's context, by the power-aware policies;
built by :func:`torus_sim.experiments.run_inputs.load_power` from the scenario's ``[power]`` section.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PowerInputs"]


@dataclass
class PowerInputs:
    """What power accounting reads (issue 45): node draws, each job's watts per node, the tariff.

    Attributes:
        node: the :class:`~torus_sim.inputs.energy.node_power.NodePower` of the platform's nodes.
        job_watts: job id -> watts per node.
        source: the job-power source (its ``describe()`` for the header).
        tariff: the :class:`~torus_sim.inputs.energy.tariffs.Tariff`.
        clock_start_hour: the hour of the day at t = 0.
        cap: the run's :class:`~torus_sim.inputs.energy.caps.PowerCap`, or None.
        nodes: N, the platform's nodes (midplanes on a torus): the cap's level is ``cap.watts(nodes, node.busy_w)``.
        switch_off: the run's :class:`~torus_sim.inputs.energy.switch_off.SwitchOff` (idle nodes switched off), or None.
    """

    node: object
    job_watts: dict
    source: object
    tariff: object
    clock_start_hour: float = 0.0
    cap: object = None
    nodes: int = 0
    switch_off: object = None

    def manifest(self) -> dict:
        """The run manifest's ``power`` entry: node figures with their sources, job power, tariff."""
        node = self.node
        return {
            "node": {"unit": node.unit, "idle_w": node.idle_w, "busy_w": node.busy_w, "down_w": node.down_w},
            "sources": dict(node.sources),
            "job_power": self.source.describe(),
            "tariff": self.tariff.describe(),
            **({"cap": self.cap.describe(self.nodes, node.busy_w)} if self.cap is not None else {}),
            **({"switch_off": self.switch_off.manifest()} if self.switch_off is not None else {}),
        }
