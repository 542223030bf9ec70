"""Power and electricity as inputs of a run: node draws, job power profiles, tariffs.

* :mod:`torus_sim.inputs.energy.settings`: the scenario's ``[power]`` fields (``power``, ``job_power``,
  ``price``, node watts, the clock).
* :mod:`torus_sim.inputs.energy.node_power`: what a node (a midplane on a torus, a node on a cluster) draws
  idle, busy and down, from the machine's published figures or the scenario's.
* :mod:`torus_sim.inputs.energy.job_power`: each job's draw per node (the machine's busy figure, a seeded
  uniform model, a side file keyed by job id): a registry of sources.
* :mod:`torus_sim.inputs.energy.tariffs`: the electricity price over time (flat, time-of-use with on-peak
  hours and a ratio, a price file): a registry of tariffs.

The energy and the bill are integrated from the run's record by :mod:`torus_sim.metrics.energy`.
Vocabulary after Batsim's energy plug-in (node power states idle / computing / off) and SC'13 / JSSPP'13
(Yang et al.; Zhou et al.: on-peak / off-peak prices, job power profiles).
"""
