"""Energy, wasted energy, the electricity bill and power over time, integrated exactly from a run's record.

The machine's draw is piecewise constant: it changes only when an attempt starts or ends and when a
node goes down or comes back. With N nodes, ``idle_w`` per idle node, ``down_w`` per down node and
each running attempt drawing ``size x w_job`` (its allocated nodes at its job's watts per node),

    P(t) = N idle_w + sum over running attempts a of size_a (w_a - idle_w) + down(t) (down_w - idle_w)

and the energy is the sum over the intervals between events of P x their length (no sampling). The bill
multiplies each interval's energy by the tariff's price, the intervals split where the price changes
(:meth:`torus_sim.inputs.energy.tariffs.Tariff.breakpoints`). Energy by state: busy (every attempt), idle
(the node-time neither busy nor down, at ``idle_w``) and down; busy + idle + down = the integral of P.
With idle nodes switched off (:class:`~torus_sim.inputs.energy.switch_off.SwitchOff`) the record's off and
boot intervals change P by ``off_w - idle_w`` per off node and ``boot_w -`` the job's watts per
booting node (:func:`state_changes`); then busy + idle + down + off = the integral of P, the boots
counted in the busy energy of the attempts they were for.
Wasted energy: the attempts that did not complete (killed by a failure, preempted, spoiled by a
silent error), Batsim's and SC'13's per-job energy accounting extended to failures.

Units: watts, seconds; energies in kWh (W x s / 3.6e6), power in kW.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = ["EnergyAccount", "account_energy", "attempts_cost", "down_intervals", "power_timeline", "state_changes"]

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
        boot_change_j: with idle nodes switched off, what each attempt's boot changed in its energy
            (its booting nodes at ``boot_w`` rather than the job's watts), joules, in the attempt
            table's order (part of ``attempt_energy_j``); None without switch-off.
    """

    summary: dict
    attempt_energy_j: np.ndarray
    job_energy_kwh: pd.Series
    hourly: pd.DataFrame
    boot_change_j: np.ndarray | None = None


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
    changes: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The machine's draw as a step function: ``(times, watts)``, the draw from ``times[k]`` to ``times[k + 1]``.

    Args:
        attempts: ``started_at``, ``ended_at``, ``nodes`` (allocated size) per attempt.
        attempt_watts: each attempt's job's watts per node (same order).
        down: merged down intervals (:func:`down_intervals`).
        nodes: N, the platform's nodes.
        idle_w: watts of an idle node.
        down_w: watts of a down node.
        changes: ``(starts, ends, watts)``: intervals over which the draw changes by ``watts`` (a node
            off: ``off_w - idle_w``; booting: ``boot_w -`` its job's watts, :func:`state_changes`); None: none.

    Returns:
        Sorted distinct event times (the first is 0) and the draw in watts from each on.
    """
    size = attempts["nodes"].to_numpy(float)
    extra = size * (attempt_watts - idle_w)
    starts, ends = down
    change_starts, change_ends, change_w = changes if changes is not None else (np.empty(0), np.empty(0), np.empty(0))
    times = np.concatenate(
        [
            [0.0],
            attempts["started_at"].to_numpy(float),
            attempts["ended_at"].to_numpy(float),
            starts,
            ends,
            change_starts,
            change_ends,
        ]
    )
    deltas = np.concatenate(
        [
            [nodes * idle_w],
            extra,
            -extra,
            np.full(len(starts), down_w - idle_w),
            np.full(len(ends), idle_w - down_w),
            change_w,
            -change_w,
        ]
    )
    order = np.argsort(times, kind="stable")
    times, deltas = times[order], deltas[order]
    distinct, first = np.unique(times, return_index=True)
    level = np.cumsum(deltas)
    last_of_each = np.append(first[1:], len(times)) - 1
    return distinct, level[last_of_each]


def state_changes(
    states: pd.DataFrame, attempts: pd.DataFrame, attempt_watts: np.ndarray, idle_w: float, rule, horizon: float
) -> dict:
    """The switch-off, off and boot intervals of a run with idle nodes switched off, as changes of the machine's draw.

    An interval of an idle node changes its draw from ``idle_w`` to the state's (a boot its job's end left
    unheld: ``boot_w``, or ``idle_w`` when None; it counts as idle); one a job held (a boot,
    and a switch-off or off interval after the job was given the node: its rows name the attempt)
    changes it from the job's watts (the attempt counts its nodes busy from its start), and ends at
    the attempt's end when that comes first (a kill before the work began).

    Args:
        states: the record's ``power_states`` (:data:`~torus_sim.engine.power_states.POWER_STATE_COLUMNS`).
        attempts: the record's attempt table.
        attempt_watts: its jobs' watts per node (same order).
        idle_w: watts of an idle node.
        rule: the run's :class:`~torus_sim.inputs.energy.switch_off.SwitchOff` (``off_w``, ``boot_w``, ``shutdown_w``).
        horizon: the end of the accounted span, seconds: intervals are clipped to ``[0, horizon]``.

    Returns:
        ``changes`` (``(starts, ends, watts)`` for :func:`power_timeline`); ``off_node_s`` and
        ``shutdown_node_s`` (node-seconds off / switching off while idle: not in the attempts'
        node-seconds); ``held_off_node_s`` and ``held_shutdown_node_s`` (those a job held);
        ``boot_node_s`` (node-seconds booting); ``boot_j`` (joules the booting nodes drew);
        ``idle_boot_change_j`` (what the boots left unheld changed in the idle nodes' energy);
        ``attempt_change_j`` (per attempt, what its held intervals changed in its energy:
        ``(state's watts - its watts) x`` their node-seconds) and the held intervals' own
        ``(starts, ends, watts)`` (``boot_changes``) for the bill of the attempts that did not complete,
        with ``boot_attempt`` (each one's row in the attempt table).

    Raises:
        ValueError: a held interval names no attempt of the table.
    """
    starts = states["start"].to_numpy(float).clip(0.0, horizon)
    ends = states["end"].to_numpy(float).clip(0.0, horizon)
    state = states["state"].to_numpy()
    is_boot = state == "boot"
    is_shutdown = state == "shutdown"
    held = states["job_id"].to_numpy() >= 0
    row = pd.Series(np.arange(len(attempts)), index=pd.MultiIndex.from_frame(attempts[["job_id", "attempt"]]))
    holders = states.loc[held, ["job_id", "attempt"]]
    at = row.reindex(pd.MultiIndex.from_frame(holders)).to_numpy() if len(holders) else np.empty(0)
    if len(at) and np.isnan(at.astype(float)).any():
        raise ValueError("an interval a job held (a boot, a switch-off or off wait) names no attempt of the attempt table")
    at = at.astype(np.int64)
    held_ends = np.minimum(ends[held], attempts["ended_at"].to_numpy(float)[at])  # a kill before the work ends them
    ends[held] = np.maximum(held_ends, starts[held])
    drawn = np.where(is_shutdown, rule.shutdown_draw_w(idle_w), float(rule.off_w))  # the state's watts (a boot's below)
    drawn[is_boot & ~held] = idle_w if rule.boot_w is None else float(rule.boot_w)  # a boot its job's end left unheld
    job_w = attempt_watts[at]
    held_boot = is_boot[held]
    boot_w = job_w if rule.boot_w is None else np.full(len(at), float(rule.boot_w))
    held_w = np.where(held_boot, boot_w, drawn[held])
    drawn[held] = held_w
    watts = drawn - idle_w
    watts[held] = held_w - job_w
    lengths = ends - starts
    held_lengths = lengths[held]
    attempt_change_j = np.zeros(len(attempts))
    np.add.at(attempt_change_j, at, (held_w - job_w) * held_lengths)
    keep = lengths > 0
    off, idle = state == "off", ~held
    return {
        "changes": (starts[keep], ends[keep], watts[keep]),
        "off_node_s": float(lengths[off & idle].sum()),
        "shutdown_node_s": float(lengths[is_shutdown & idle].sum()),
        "held_off_node_s": float(lengths[off & held].sum()),
        "held_shutdown_node_s": float(lengths[is_shutdown & held].sum()),
        "boot_node_s": float(lengths[is_boot].sum()),
        "idle_boot_change_j": float(((drawn - idle_w) * lengths)[is_boot & idle].sum()),
        "boot_j": float((drawn * lengths)[is_boot].sum()),
        "attempt_change_j": attempt_change_j,
        "boot_changes": (starts[held], ends[held], held_w - job_w),
        "boot_attempt": at,
    }


def account_energy(
    record,
    attempt_watts: np.ndarray,
    node,
    tariff,
    clock_start_hour: float = 0.0,
    horizon: float | None = None,
    cap=None,
    switch_off=None,
) -> EnergyAccount:
    """Integrate a run's energy, wasted energy, bill and hourly power from its record.

    Args:
        record: the run's :class:`~torus_sim.engine.record.SimulationRecord` (its attempt and failure tables).
        attempt_watts: watts per node of each attempt's job, in the order of ``record.attempts``.
        node: the :class:`~torus_sim.inputs.energy.node_power.NodePower` of the platform's nodes.
        tariff: the :class:`~torus_sim.inputs.energy.tariffs.Tariff`.
        clock_start_hour: the hour of the day at t = 0.
        horizon: the end of the accounted span (default: the last attempt's end, the makespan).
        cap: the run's :class:`~torus_sim.inputs.energy.caps.PowerCap`, or None: with one, the summary adds
            ``cap_kw`` (its level), ``hours_over_cap`` (time with the draw above it, hours) and
            ``energy_over_cap_kwh`` (the energy above the cap's line), integrated exactly like the rest.
        switch_off: the run's :class:`~torus_sim.inputs.energy.switch_off.SwitchOff` when idle nodes were
            switched off (the record then has ``power_states``): off nodes draw ``off_w``, booting ones
            ``boot_w`` (their job's watts when None); the summary adds ``off_energy_kwh``,
            ``off_node_hours``, ``boot_energy_kwh`` (part of the busy energy) and ``boot_node_hours``;
            with a switch-off time, ``shutdown_energy_kwh`` / ``shutdown_node_hours`` (idle nodes
            switching off at ``shutdown_w``) and ``wake_wait_energy_kwh`` / ``wake_wait_node_hours``
            (nodes a job was given waiting, switching off or off, for their boot: part of the busy energy).

    Returns:
        The :class:`EnergyAccount`.

    Raises:
        ValueError: the record has no attempt table (a run made with ``record=False``); a record with
            ``power_states`` and no ``switch_off``.
    """
    attempts = record.attempts
    if getattr(record, "power_states", None) is not None and switch_off is None:
        raise ValueError("the record has switched-off nodes: give the run's switch_off rule")
    if attempts is None:
        raise ValueError("power accounting needs the run's attempt table (record=True)")
    attempt_watts = np.asarray(attempt_watts, dtype=float)
    end = float(attempts["ended_at"].max()) if len(attempts) else 0.0
    horizon = max(end, float(record.makespan)) if horizon is None else float(horizon)
    down = down_intervals(record.failures, horizon)
    states = getattr(record, "power_states", None)
    switched = None if states is None else state_changes(states, attempts, attempt_watts, node.idle_w, switch_off, horizon)
    changes = None if switched is None else switched["changes"]
    times, watts = power_timeline(attempts, attempt_watts, down, record.capacity_total, node.idle_w, node.down_w, changes)
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
    if switched is not None:
        attempt_j = attempt_j + switched["attempt_change_j"]
    wasted = (attempts["outcome"] != "completed").to_numpy()
    down_node_s = float((down[1] - down[0]).sum())
    off_node_s = 0.0 if switched is None else switched["off_node_s"] + switched["shutdown_node_s"]
    busy_node_s = float((attempts["nodes"].to_numpy(float) * durations).sum())
    idle_node_s = max(record.capacity_total * horizon - busy_node_s - down_node_s - off_node_s, 0.0)
    total_j = float(joules.sum())
    bill = float((joules * price).sum() / JOULES_PER_KWH)
    wasted_share = _wasted_bill(attempts[wasted], attempt_watts[wasted], tariff, clock_start_hour)
    if switched is not None:  # what booting changed in the bill of the attempts that did not complete
        boot_starts, boot_ends, boot_w = switched["boot_changes"]
        lost = wasted[switched["boot_attempt"]]
        wasted_share += attempts_cost(
            boot_starts[lost], boot_ends[lost], np.ones(int(lost.sum())), boot_w[lost], tariff, clock_start_hour
        )
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
        "idle_energy_kwh": (node.idle_w * idle_node_s + (0.0 if switched is None else switched["idle_boot_change_j"]))
        / JOULES_PER_KWH,
        "down_energy_kwh": node.down_w * down_node_s / JOULES_PER_KWH,
        "wasted_energy_kwh": float(attempt_j[wasted].sum()) / JOULES_PER_KWH,
        "energy_per_job_kwh": total_j / JOULES_PER_KWH / jobs_done if jobs_done else float("nan"),
        "bill": bill,
        "wasted_bill": wasted_share,
        "peak_power_kw": float(draw[lengths > 0].max()) / 1000.0 if len(draw) else 0.0,
        "mean_power_kw": total_j / horizon / 1000.0 if horizon > 0 else 0.0,
        "mean_price": bill / (total_j / JOULES_PER_KWH) if total_j > 0 else float("nan"),
    }
    if switched is not None:
        summary["off_energy_kwh"] = switch_off.off_w * switched["off_node_s"] / JOULES_PER_KWH
        summary["off_node_hours"] = switched["off_node_s"] / 3600.0
        summary["boot_energy_kwh"] = switched["boot_j"] / JOULES_PER_KWH
        summary["boot_node_hours"] = switched["boot_node_s"] / 3600.0
        if switch_off.shutdown_s > 0:
            shutdown_w = switch_off.shutdown_draw_w(node.idle_w)
            summary["shutdown_energy_kwh"] = shutdown_w * switched["shutdown_node_s"] / JOULES_PER_KWH
            summary["shutdown_node_hours"] = switched["shutdown_node_s"] / 3600.0
            wait_j = shutdown_w * switched["held_shutdown_node_s"] + switch_off.off_w * switched["held_off_node_s"]
            summary["wake_wait_energy_kwh"] = wait_j / JOULES_PER_KWH
            summary["wake_wait_node_hours"] = (switched["held_shutdown_node_s"] + switched["held_off_node_s"]) / 3600.0
    if cap is not None:
        level = cap.at(starts, record.capacity_total, node.busy_w, clock_start_hour)
        over = (draw > level) & (lengths > 0)
        summary["cap_kw"] = cap.watts(record.capacity_total, node.busy_w) / 1000.0
        summary["hours_over_cap"] = float(lengths[over].sum()) / 3600.0
        summary["energy_over_cap_kwh"] = float(((draw[over] - level[over]) * lengths[over]).sum()) / JOULES_PER_KWH
    job_kwh = pd.Series(attempt_j / JOULES_PER_KWH, index=attempts["job_id"].to_numpy()).groupby(level=0).sum()
    hourly = hourly[["hour", "energy_kwh", "mean_power_kw", "price", "cost"]]
    return EnergyAccount(summary, attempt_j, job_kwh, hourly, None if switched is None else switched["attempt_change_j"])


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
        tariff: the :class:`~torus_sim.inputs.energy.tariffs.Tariff`.
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
