"""What a job and a machine draw, and when the price is on-peak: the helpers the power-aware policies share.

Used by :mod:`torus_sim.policies.power_aware` (the window policy) and :mod:`torus_sim.policies.power_cap`
(the budget backfilling): both read the run's power inputs (job watts, node figures, tariff) through these,
so neither imports the other's helpers.

References:
    Yang et al., SC'13 and Zhou et al., JSSPP'13 (on-peak / off-peak hours, a job's draw as its nodes x its
    watts per node); the machine's draw is ours (every node at idle plus each running job's added draw).
"""

from __future__ import annotations

import numpy as np

from torus_sim.core.errors import ConfigurationError

__all__ = ["added_draw", "job_watts", "machine_draw", "on_peak", "run_power"]


def on_peak(tariff, now: float, clock_start_hour: float) -> bool:
    """Whether the price at ``now`` (seconds) is above the lowest price of the next 24 hours (on-peak hours).

    Args:
        tariff: the :class:`~torus_sim.inputs.energy.tariffs.Tariff`.
        now: the time, seconds.
        clock_start_hour: the hour of the day at t = 0.

    References:
        SC'13 and JSSPP'13 (on-peak and off-peak hours of a day).
    """
    points = np.concatenate([[now], tariff.breakpoints(now, now + 86_400.0, clock_start_hour)])
    prices = tariff.price_at(points, clock_start_hour)
    return bool(prices[0] > prices.min())


def run_power(context, policy: str):
    """The run's :class:`~torus_sim.experiments.run_inputs.PowerInputs` (``context.power``) for a power-aware policy.

    Raises:
        ConfigurationError: the run has no power accounting (``power = true``), naming ``policy``.
    """
    power = context.power
    if power is None:
        raise ConfigurationError(f"{policy} needs power accounting: set power = true (--power) with a job power and a price")
    return power


def job_watts(power, job) -> float:
    """A job's draw per node, watts: the run's job power (a workload column, a model), else the node's busy draw."""
    return power.job_watts.get(job.job_id, power.node.busy_w)


def added_draw(power, job, size: int) -> float:
    """What ``job`` on ``size`` nodes adds to the machine's draw, watts: ``size x (its watts per node - idle_w)``."""
    return size * (job_watts(power, job) - power.node.idle_w)


def machine_draw(power, nodes: int, running) -> float:
    """The draw of a machine of ``nodes`` nodes running ``running`` (jobs with ``allocated_size``), watts.

    Every node at the idle draw (down nodes too: an upper bound when ``node_down_w`` <= idle) plus each
    running job's :func:`added_draw` on its allocated nodes.
    """
    return nodes * power.node.idle_w + sum(added_draw(power, job, job.allocated_size) for job in running)
