"""The reward forms of :class:`~torus_sim.rl.env.SchedulingEnv`, by name.

Each form turns what happened since the agent's last decision into a number: the jobs that completed
(the engine's ``jobs`` table) or, for the energy cost, every attempt that ended (its ``attempts`` table:
killed attempts cost too). All are divided by the window's job count, so an episode's return is minus
the window's mean (or, for utilization, its ω_util).

* ``bsld``: minus the completed jobs' bounded slowdowns (RLScheduler's objective).
* ``wait``, ``turnaround``: minus their waits (first start - submission) or submission-to-end times, seconds.
* ``utilization``: their size x runtime over capacity x the window's submission span (BGL-FAULT §6.1's ω_util).
* ``energy_cost``: minus what the ended attempts' energy cost under the run's tariff (nodes x the job's
  watts per node x the price integrated over the attempt, exact, with idle nodes switched off a boot at
  ``node_boot_w`` and a switch-off the job waits for at ``node_shutdown_w``, then off at ``node_off_w``; the idle machine's draw is not the agent's to move): an agent that starts high-power jobs off-peak and loses fewer to failures earns more.
  Needs power accounting (``power = true`` with a ``price``; SC'13 and JSSPP'13's objective).

References:
    Zhang et al., RLScheduler, SC'20 (bsld); BGL-FAULT §6.1 (ω_util); SC'13 (Yang et al.), JSSPP'13 (Zhou
    et al.): the electricity bill under time-of-use prices.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["REWARD_FORMS"]


def _rows(env, table: str, cursor: str, columns: tuple[str, ...]) -> dict | None:
    """The ``columns`` of the model's ``table``'s rows appended since the env's ``cursor`` (which moves past them); None: none.

    Only the columns a form reads are read: a step read all 18 of the jobs table's (a tenth of a step's time).
    """
    rows = env.model.recorder.tables[table]
    first, last = getattr(env, cursor), rows.count  # the rows of this step are read where they wait (GrowingTable.rows)
    setattr(env, cursor, last)
    if first == last:
        return None
    return rows.rows(first, last, columns)


def _completed(env, *columns: str) -> dict | None:
    """``columns`` of the jobs completed since the last decision (column -> values), or None."""
    return _rows(env, "jobs", "_rows_seen", columns)


def _since_submission(rows: dict, column: str) -> np.ndarray:
    """Each completed job's ``column`` (a time, seconds) minus its submission, float64."""
    return np.asarray(rows[column], dtype=np.float64) - np.asarray(rows["submitted_at"], dtype=np.float64)


def _minus_per_job(env, values: np.ndarray) -> float:
    """Minus the exact sum of ``values`` over the window's job count."""
    return -math.fsum(values.tolist()) / env.window


def _bsld(env) -> float:
    rows = _completed(env, "runtime", "finished_at", "submitted_at")
    if rows is None:
        return 0.0
    runtime = np.asarray(rows["runtime"], dtype=np.float64)
    bsld = np.maximum(_since_submission(rows, "finished_at") / np.maximum(runtime, env.scenario.gamma), 1.0)
    return _minus_per_job(env, bsld)


def _wait(env) -> float:
    rows = _completed(env, "first_started_at", "submitted_at")
    return 0.0 if rows is None else _minus_per_job(env, _since_submission(rows, "first_started_at"))


def _turnaround(env) -> float:
    rows = _completed(env, "finished_at", "submitted_at")
    return 0.0 if rows is None else _minus_per_job(env, _since_submission(rows, "finished_at"))


def _utilization(env) -> float:
    rows = _completed(env, "size", "runtime")
    if rows is None:
        return 0.0
    size, runtime = np.asarray(rows["size"], dtype=np.float64), np.asarray(rows["runtime"], dtype=np.float64)
    return float(np.dot(size, runtime)) / (env._capacity * max(env._span[1] - env._span[0], 1.0))


def _energy_cost(env) -> float:
    from torus_sim.metrics.energy import attempts_cost

    rows = _rows(env, "attempts", "_attempts_seen", ("job_id", "attempt", "started_at", "ended_at", "nodes"))
    if rows is None:
        return 0.0
    power = env.power
    job_ids = np.asarray(rows["job_id"]).tolist()
    watts = [power.job_watts.get(job_id, power.node.busy_w) for job_id in job_ids]
    starts, ends, nodes = list(rows["started_at"]), list(rows["ended_at"]), list(rows["nodes"])
    states = getattr(env.model, "power_states", None)
    rule = power.switch_off
    if states is not None and (rule.boot_w is not None or rule.shutdown_s > 0):  # the job's nodes before its work starts
        state_w = {
            "boot": rule.boot_w,  # None: the job's own watts (no change)
            "shutdown": rule.shutdown_draw_w(power.node.idle_w),
            "off": rule.off_w,
        }
        ended = zip(job_ids, np.asarray(rows["attempt"]).tolist(), list(rows["ended_at"]), list(watts), strict=True)
        for job_id, attempt, ended_at, job_w in ended:
            for state, began, until in states.boots.pop((job_id, attempt), ()):
                if state_w[state] is None:
                    continue
                began = np.asarray(began, dtype=float)
                starts.extend(began.tolist())
                ends.extend(np.maximum(np.minimum(until, ended_at), began).tolist())  # a kill before the work ends them
                nodes.extend([1] * len(began))
                watts.extend([state_w[state] - job_w] * len(began))
    cost = attempts_cost(starts, ends, nodes, watts, power.tariff, power.clock_start_hour)
    return -cost / env.window


_energy_cost.needs_power = True

REWARD_FORMS = {"bsld": _bsld, "wait": _wait, "turnaround": _turnaround, "utilization": _utilization, "energy_cost": _energy_cost}
"""Reward form name -> ``form(env) -> float`` (the reward of the decisions since the last; module docstring)."""
