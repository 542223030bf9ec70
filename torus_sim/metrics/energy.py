"""Energy, wasted energy, the electricity bill and power over time, integrated exactly from a run's record.

The machine's draw is piecewise constant: it changes only when an attempt starts or ends and when a
node goes down or comes back. With N nodes, ``idle_w`` per idle node, ``down_w`` per down node and
each running attempt drawing ``size x w_job`` (its allocated nodes at its job's watts per node),

    P(t) = N idle_w + sum over running attempts a of size_a (w_a - idle_w) + down(t) (down_w - idle_w)

and the energy is the sum over the intervals between events of P x their length (no sampling). The bill
multiplies each interval's energy by the tariff's price, the intervals split where the price changes
(:meth:`torus_sim.energy.tariffs.Tariff.breakpoints`). Energy by state: busy (every attempt), idle
(the node-time neither busy nor down, at ``idle_w``) and down; busy + idle + down = the integral of P.
Wasted energy: the attempts that did not complete (killed by a failure, preempted, spoiled by a
silent error), Batsim's and SC'13's per-job energy accounting extended to failures.

Units: watts, seconds; energies in kWh (W x s / 3.6e6), power in kW.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = ["EnergyAccount", "account_energy", "attempts_cost", "down_intervals", "power_timeline"]

JOULES_PER_KWH = 3.6e6


@dataclass
class EnergyAccount:
    """What power accounting found in one run.

    Attributes:
        summary: ``energy_kwh``, ``busy_energy_kwh``, ``idle_energy_kwh``, ``down_energy_kwh``,
            ``wasted_energy_kwh``, ``energy_per_job_kwh``, ``bill``, ``wasted_bill``, ``peak_power_kw``,
            ``mean_power_kw``, ``mean_price`` (the bill over the energy).
        attempt_energy_j: joules of each attempt, in the order of the record's attempt table.
        job_energy_kwh: kWh of each job's attempts (killed ones included), by job id.
        hourly: one row per simulated hour: ``hour``, ``energy_kwh``, ``mean_power_kw``, ``price``
            (the hour's mean price, weighted by energy: cost / energy_kwh), ``cost``.
    """

    summary: dict
    attempt_energy_j: np.ndarray
    job_energy_kwh: pd.Series
    hourly: pd.DataFrame


def down_intervals(failures: pd.DataFrame | None, horizon: float) -> tuple[np.ndarray, np.ndarray]:
    """Each node's down time as disjoint intervals ``[start, end)`` within ``[0, horizon]``.

    Args:
        failures: the record's failure table (``time``, ``node``, ``down_until``); a failure whose
            ``down_until`` is its time (transient) leaves no interval. Overlapping repairs of one node merge.
        horizon: the end of the accounted span, seconds.

    Returns:
        ``(starts, ends)`` float arrays (one pair per merged interval of one node).
    """
    if failures is None or failures.empty:
        return np.empty(0), np.empty(0)
    table = failures.loc[failures["down_until"] > failures["time"], ["node", "time", "down_until"]]
    table = table.assign(time=table["time"].clip(0, horizon), down_until=table["down_until"].clip(0, horizon))
    table = table[table["down_until"] > table["time"]].sort_values(["node", "time"], kind="stable")
    if table.empty:
        return np.empty(0), np.empty(0)
    reach = table.groupby("node")["down_until"].cummax()
    previous = reach.groupby(table["node"]).shift()
    starts_new = previous.isna() | (table["time"] > previous)
    group = starts_new.cumsum()
    merged = table.groupby(group).agg(start=("time", "first"), end=("down_until", "max"))
    return merged["start"].to_numpy(float), merged["end"].to_numpy(float)


def power_timeline(
    attempts: pd.DataFrame,
    attempt_watts: np.ndarray,
    down: tuple[np.ndarray, np.ndarray],
    nodes: int,
    idle_w: float,
    down_w: float,
) -> tuple[np.ndarray, np.ndarray]:
    """The machine's draw as a step function: ``(times, watts)``, the draw from ``times[k]`` to ``times[k + 1]``.

    Args:
        attempts: ``started_at``, ``ended_at``, ``nodes`` (allocated size) per attempt.
        attempt_watts: each attempt's job's watts per node (same order).
        down: merged down intervals (:func:`down_intervals`).
        nodes: N, the platform's nodes.
        idle_w: watts of an idle node.
        down_w: watts of a down node.

    Returns:
        Sorted distinct event times (the first is 0) and the draw in watts from each on.
    """
    size = attempts["nodes"].to_numpy(float)
    extra = size * (attempt_watts - idle_w)
    starts, ends = down
    times = np.concatenate([[0.0], attempts["started_at"].to_numpy(float), attempts["ended_at"].to_numpy(float), starts, ends])
    deltas = np.concatenate(
        [[nodes * idle_w], extra, -extra, np.full(len(starts), down_w - idle_w), np.full(len(ends), idle_w - down_w)]
    )
    order = np.argsort(times, kind="stable")
    times, deltas = times[order], deltas[order]
    distinct, first = np.unique(times, return_index=True)
    level = np.cumsum(deltas)
    last_of_each = np.append(first[1:], len(times)) - 1
    return distinct, level[last_of_each]


def account_energy(
    record,
    attempt_watts: np.ndarray,
    node,
    tariff,
    clock_start_hour: float = 0.0,
    horizon: float | None = None,
    cap=None,
) -> EnergyAccount:
    """Integrate a run's energy, wasted energy, bill and hourly power from its record.

    Args:
        record: the run's :class:`~torus_sim.engine.record.SimulationRecord` (its attempt and failure tables).
        attempt_watts: watts per node of each attempt's job, in the order of ``record.attempts``.
        node: the :class:`~torus_sim.energy.node_power.NodePower` of the platform's nodes.
        tariff: the :class:`~torus_sim.energy.tariffs.Tariff`.
        clock_start_hour: the hour of the day at t = 0.
        horizon: the end of the accounted span (default: the last attempt's end, the makespan).
        cap: the run's :class:`~torus_sim.energy.caps.PowerCap`, or None: with one, the summary adds
            ``cap_kw`` (its level), ``hours_over_cap`` (time with the draw above it, hours) and
            ``energy_over_cap_kwh`` (the energy above the cap's line), integrated exactly like the rest.

    Returns:
        The :class:`EnergyAccount`.

    Raises:
        ValueError: the record has no attempt table (a run made with ``record=False``).
    """
    attempts = record.attempts
    if attempts is None:
        raise ValueError("power accounting needs the run's attempt table (record=True)")
    attempt_watts = np.asarray(attempt_watts, dtype=float)
    end = float(attempts["ended_at"].max()) if len(attempts) else 0.0
    horizon = max(end, float(record.makespan)) if horizon is None else float(horizon)
    down = down_intervals(record.failures, horizon)
    times, watts = power_timeline(attempts, attempt_watts, down, record.capacity_total, node.idle_w, node.down_w)
    hours = np.arange(3600.0, horizon, 3600.0)
    cuts = np.unique(
        np.concatenate(
            [
                times[times < horizon],
                hours,
                tariff.breakpoints(0.0, horizon, clock_start_hour),
                cap.breakpoints(0.0, horizon, clock_start_hour) if cap is not None else [],
                [horizon],
            ]
        )
    )
    starts, lengths = cuts[:-1], np.diff(cuts)
    draw = watts[np.searchsorted(times, starts, side="right") - 1]
    price = tariff.price_at(starts, clock_start_hour)
    joules = draw * lengths
    durations = (attempts["ended_at"] - attempts["started_at"]).to_numpy(float)
    attempt_j = attempts["nodes"].to_numpy(float) * durations * attempt_watts
    wasted = (attempts["outcome"] != "completed").to_numpy()
    down_node_s = float((down[1] - down[0]).sum())
    busy_node_s = float((attempts["nodes"].to_numpy(float) * durations).sum())
    idle_node_s = max(record.capacity_total * horizon - busy_node_s - down_node_s, 0.0)
    total_j = float(joules.sum())
    bill = float((joules * price).sum() / JOULES_PER_KWH)
    wasted_share = _wasted_bill(attempts[wasted], attempt_watts[wasted], tariff, clock_start_hour)
    jobs_done = int((attempts["outcome"] == "completed").sum())
    hour_index = np.floor(starts / 3600.0).astype(np.int64)
    hourly = (
        pd.DataFrame({"hour": hour_index, "energy_kwh": joules / JOULES_PER_KWH, "cost": joules * price / JOULES_PER_KWH})
        .groupby("hour", as_index=False)
        .sum()
    )
    span = np.minimum((hourly["hour"] + 1) * 3600.0, horizon) - hourly["hour"] * 3600.0
    hourly["mean_power_kw"] = hourly["energy_kwh"] * JOULES_PER_KWH / span / 1000.0
    hourly["price"] = (hourly["cost"] / hourly["energy_kwh"]).where(hourly["energy_kwh"] > 0)
    summary = {
        "energy_kwh": total_j / JOULES_PER_KWH,
        "busy_energy_kwh": float(attempt_j.sum()) / JOULES_PER_KWH,
        "idle_energy_kwh": node.idle_w * idle_node_s / JOULES_PER_KWH,
        "down_energy_kwh": node.down_w * down_node_s / JOULES_PER_KWH,
        "wasted_energy_kwh": float(attempt_j[wasted].sum()) / JOULES_PER_KWH,
        "energy_per_job_kwh": total_j / JOULES_PER_KWH / jobs_done if jobs_done else float("nan"),
        "bill": bill,
        "wasted_bill": wasted_share,
        "peak_power_kw": float(draw[lengths > 0].max()) / 1000.0 if len(draw) else 0.0,
        "mean_power_kw": total_j / horizon / 1000.0 if horizon > 0 else 0.0,
        "mean_price": bill / (total_j / JOULES_PER_KWH) if total_j > 0 else float("nan"),
    }
    if cap is not None:
        level = cap.at(starts, record.capacity_total, node.busy_w, clock_start_hour)
        over = (draw > level) & (lengths > 0)
        summary["cap_kw"] = cap.watts(record.capacity_total, node.busy_w) / 1000.0
        summary["hours_over_cap"] = float(lengths[over].sum()) / 3600.0
        summary["energy_over_cap_kwh"] = float(((draw[over] - level[over]) * lengths[over]).sum()) / JOULES_PER_KWH
    job_kwh = pd.Series(attempt_j / JOULES_PER_KWH, index=attempts["job_id"].to_numpy()).groupby(level=0).sum()
    return EnergyAccount(summary, attempt_j, job_kwh, hourly[["hour", "energy_kwh", "mean_power_kw", "price", "cost"]])


def _wasted_bill(attempts: pd.DataFrame, watts: np.ndarray, tariff, clock_start_hour: float) -> float:
    """What the attempts that did not complete cost: each one's draw x the price over its span, exactly."""
    if attempts.empty:
        return 0.0
    return attempts_cost(
        attempts["started_at"].to_numpy(float),
        attempts["ended_at"].to_numpy(float),
        attempts["nodes"].to_numpy(float),
        watts,
        tariff,
        clock_start_hour,
    )


def attempts_cost(starts, ends, nodes, watts, tariff, clock_start_hour: float = 0.0) -> float:
    """What attempts' energy cost: each one's nodes x watts per node x the price integrated over its span, exactly.

    Args:
        starts: each attempt's start, seconds (a float array).
        ends: each attempt's end, seconds (the same length).
        nodes: each attempt's allocated nodes.
        watts: each attempt's job's draw per node, watts.
        tariff: the :class:`~torus_sim.energy.tariffs.Tariff`.
        clock_start_hour: the hour of the day at t = 0.

    Returns:
        The cost, in the tariff's currency (its price per kWh x kWh); 0.0 for no attempt.
    """
    starts, ends = np.asarray(starts, dtype=float), np.asarray(ends, dtype=float)
    if not len(starts):
        return 0.0
    nodes, watts = np.asarray(nodes, dtype=float), np.asarray(watts, dtype=float)
    low, high = float(starts.min()), float(ends.max())
    cuts = np.unique(np.concatenate([[low, high], tariff.breakpoints(low, high, clock_start_hour)]))
    price = tariff.price_at(cuts[:-1], clock_start_hour)
    # cumulative price x time at each cut, then each attempt's integral by interpolation at its ends (exact: linear between cuts)
    cumulative = np.concatenate([[0.0], np.cumsum(price * np.diff(cuts))])
    integral = np.interp(ends, cuts, cumulative) - np.interp(starts, cuts, cumulative)
    return float((nodes * watts * integral).sum() / JOULES_PER_KWH)
