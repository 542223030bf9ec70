"""Each node's power state during a run with idle nodes switched off: idle, off, booting (busy and down are the platform's).

The engine tells :class:`NodePowerStates` when nodes are given to a job (:meth:`~NodePowerStates.take`),
freed (:meth:`~NodePowerStates.release`), failed and repaired; it answers the boot delay of each
start and keeps the off and boot intervals of every node for the record (:meth:`~NodePowerStates.table`),
from which :func:`torus_sim.metrics.energy.account_energy` integrates their energy.

The rule (:class:`~torus_sim.energy.switch_off.SwitchOff`): a node idle (up, no job) for longer than
``after_s`` is off from ``idle since + after_s``; when a job is given it, it boots for ``boot_s`` and
the job's work starts after the boot (the attempt's overhead). At t = 0 every node is up and idle. A
node that fails while off is off until the failure, then down; after its repair it is idle again.

References:
    Batsim's host power states (computing, idle, switching on, off); SLURM's power saving
    (``SuspendTime``, ``ResumeTimeout``); issue 45 §1.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

__all__ = ["POWER_STATE_COLUMNS", "NodePowerStates"]

POWER_STATE_COLUMNS = ["node", "state", "start", "end", "job_id", "attempt"]
"""One row per off or boot interval of one node: ``state`` ``off`` or ``boot``, ``[start, end)`` in
seconds (an off interval still open at the run's end ends at +inf), the job and attempt a boot was for
(-1 for an off interval)."""


class NodePowerStates:
    """Idle-since times and the off / boot intervals of N nodes under a switch-off rule.

    Args:
        capacity: N, the platform's nodes.
        rule: the :class:`~torus_sim.energy.switch_off.SwitchOff`.
        counts: the platform keeps node counts only (a cluster nothing else needs node ids on): the
            nodes of each allocation are then the lowest ids free in this object's own mask, the choice
            the node-id cluster makes (:meth:`nodes_taken`), so the scheduling keeps its count-only path.

    Attributes:
        idle_since: float ``(N,)``, when each node last became idle (seconds); +inf while it is busy or down.
        booting_until: float ``(N,)``, the end of each node's boot (-inf when not booting).
        booting_job: int ``(N,)``, the job each node boots for (-1 when none).
        boots: ``(job id, attempt) -> (nodes, start, end)``: each attempt's boot (nodes booted, seconds),
            kept only once a reader of the run as it goes sets it to ``{}`` (the learning environment's
            energy-cost reward, which pops what it read); None: not kept (the record has every boot).
    """

    def __init__(self, capacity: int, rule, counts: bool = False) -> None:
        self.rule = rule
        self._counts = bool(counts)
        self._free = np.ones(capacity, dtype=bool) if counts else None  # count mode: the nodes no job holds
        self._held: dict[int, np.ndarray] = {}  # count mode: job id -> its nodes
        self.idle_since = np.zeros(capacity)
        self.booting_until = np.full(capacity, -math.inf)
        self.booting_job = np.full(capacity, -1, dtype=np.int64)
        self.boots: dict[tuple[int, int], tuple[int, float, float]] | None = None
        self._chunks: list[tuple] = []  # (nodes, state, starts, ends, job id, attempt): one per event, arrays of nodes

    def _add(self, nodes: np.ndarray, state: str, starts, end: float, job_id: int = -1, attempt: int = -1) -> None:
        self._chunks.append((nodes, state, starts, end, job_id, attempt))

    def nodes_taken(self, platform, allocation, job_id: int) -> np.ndarray:
        """The node ids ``allocation`` gives job ``job_id``: the platform's, or in count mode the lowest free ids.

        Args:
            platform: the run's platform.
            allocation: its allocation handle (a partition id, node ids, or a node count in count mode).
            job_id: the job.

        Returns:
            Node ids, int64.
        """
        if not self._counts:
            return platform.members(allocation)
        nodes = np.flatnonzero(self._free)[: int(allocation)]
        self._free[nodes] = False
        self._held[job_id] = nodes
        return nodes

    def nodes_freed(self, platform, allocation, job_id: int) -> np.ndarray:
        """The node ids job ``job_id`` gives back with ``allocation`` (its end, a kill, a preemption, a move)."""
        if not self._counts:
            return platform.members(allocation)
        nodes = self._held.pop(job_id)
        self._free[nodes] = True
        return nodes

    def off(self, now: float) -> np.ndarray:
        """Bool ``(N,)``: the nodes off at ``now`` (idle for longer than the rule's ``after_s``)."""
        return now - self.idle_since > self.rule.after_s

    def take(self, members: np.ndarray, now: float, job_id: int, attempt: int) -> float:
        """Nodes given to a job at ``now``: the off ones boot.

        Args:
            members: the allocation's node ids (int array).
            now: seconds.
            job_id: the job (the boot rows name it).
            attempt: its attempt number.

        Returns:
            The boot delay, seconds: the rule's ``boot_s`` if any node was off, else 0.
        """
        members = np.asarray(members, dtype=np.int64)
        since = self.idle_since[members]
        off = now - since > self.rule.after_s
        self.idle_since[members] = math.inf
        if not off.any():
            return 0.0
        boot = self.rule.boot_s
        nodes = members[off]
        self._add(nodes, "off", since[off] + self.rule.after_s, now)
        if boot > 0:
            self._add(nodes, "boot", now, now + boot, job_id, attempt)
            if self.boots is not None:
                self.boots[job_id, attempt] = (len(nodes), now, now + boot)
            self.booting_until[nodes] = now + boot
            self.booting_job[nodes] = job_id
        return boot

    def release(self, members: np.ndarray, now: float) -> None:
        """A job's nodes are free at ``now`` (its end, a kill, a preemption, a move): idle from now."""
        members = np.asarray(members, dtype=np.int64)
        self.idle_since[members] = now
        self.booting_until[members] = -math.inf
        self.booting_job[members] = -1

    def fail(self, node: int, now: float) -> None:
        """A node goes down at ``now`` (a failure with a downtime): an off period ends there."""
        since = self.idle_since[node]
        if now - since > self.rule.after_s:
            self._add(np.array([node], dtype=np.int64), "off", float(since) + self.rule.after_s, now)
        self.idle_since[node] = math.inf

    def repair(self, node: int, now: float) -> None:
        """A node is back up at ``now``: idle from now."""
        self.idle_since[node] = now

    def state(self, node: int, now: float) -> str | None:
        """``off``, ``booting`` or None (then the platform says: idle, busy or down)."""
        if now - self.idle_since[node] > self.rule.after_s:
            return "off"
        if self.booting_until[node] > now:
            return "booting"
        return None

    def draw_change_w(self, now: float, idle_w: float, job_watts: dict, busy_w: float) -> float:
        """What the off and booting nodes change in the machine's draw at ``now``, watts.

        ``off nodes x (off_w - idle_w)`` plus, with a boot draw, ``booting nodes x (boot_w - their job's watts)``:
        added to :func:`~torus_sim.energy.node_power.draw_now`'s draw, which counts off nodes as idle and
        booting ones at their job's watts.
        """
        rule = self.rule
        change = int(self.off(now).sum()) * (rule.off_w - idle_w)
        if rule.boot_w is not None:
            booting = self.booting_job[self.booting_until > now]
            change += sum(rule.boot_w - job_watts.get(job, busy_w) for job in booting.tolist())
        return change

    def table(self) -> pd.DataFrame:
        """The off and boot intervals so far (:data:`POWER_STATE_COLUMNS`), with the nodes off now open to +inf."""
        idle = np.flatnonzero(np.isfinite(self.idle_since))
        chunks = [*self._chunks, (idle, "off", self.idle_since[idle] + self.rule.after_s, math.inf, -1, -1)]
        sizes = [len(chunk[0]) for chunk in chunks]
        columns = {
            "node": np.concatenate([chunk[0] for chunk in chunks]).astype(np.int64),
            "state": np.repeat([chunk[1] for chunk in chunks], sizes),
        }
        for index, name in ((2, "start"), (3, "end"), (4, "job_id"), (5, "attempt")):
            parts = [
                np.broadcast_to(np.asarray(chunk[index], dtype=float), (size,)) for chunk, size in zip(chunks, sizes, strict=True)
            ]
            columns[name] = np.concatenate(parts)
        table = pd.DataFrame(columns, columns=POWER_STATE_COLUMNS)
        return table.astype({"job_id": np.int64, "attempt": np.int64})
