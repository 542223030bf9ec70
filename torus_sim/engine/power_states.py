"""Each node's power state during a run with idle nodes switched off: idle, switching off, off, booting (busy and down are the platform's).

The engine tells :class:`NodePowerStates` when nodes are given to a job (:meth:`~NodePowerStates.take`),
freed (:meth:`~NodePowerStates.release`), failed and repaired; it answers the delay of each start and
keeps the switch-off, off and boot intervals of every node for the record (:meth:`~NodePowerStates.table`),
from which :func:`torus_sim.metrics.energy.account_energy` integrates their energy.

The rule (:class:`~torus_sim.inputs.energy.switch_off.SwitchOff`): a node idle (up, no job) for longer than
``after_s`` switches off from ``idle since + after_s`` for ``shutdown_s`` seconds and is off from then;
when a job is given nodes that are not on, they finish switching off, then boot for ``boot_s`` (all
from the last switch-off's end), and the job's work starts after the boot (the attempt's overhead).
At t = 0 every node is up and idle. A node that fails while switching off or off is so until the
failure, then down; after its repair it is idle again. A job that ends before its nodes booted (a
kill, a preemption, a move) leaves them to finish what they were doing: a switch-off, then the boot
already asked for (a transition cannot be cut short, Batsim's rule); they are idle (on) from the
boot's end, and a job given one of them before then waits for that end (no second boot).

References:
    Batsim's host power states (computing, idle, switching on, off); SLURM's power saving
    (``SuspendTime``, ``ResumeTimeout``); issue 45 §1.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["POWER_STATE_COLUMNS", "NodePowerStates"]

POWER_STATE_COLUMNS = ["node", "state", "start", "end", "job_id", "attempt"]
"""One row per switch-off, off or boot interval of one node: ``state`` ``shutdown``, ``off`` or ``boot``,
``[start, end)`` in seconds (an off interval still open at the run's end ends at +inf), the job and
attempt that held the node during it (a boot, and a switch-off or off interval after a job was given
the node; -1 for an idle node's)."""


class NodePowerStates:
    """Idle-since times and the off / boot intervals of N nodes under a switch-off rule.

    Args:
        capacity: N, the platform's nodes.
        rule: the :class:`~torus_sim.inputs.energy.switch_off.SwitchOff`.
        counts: the platform keeps node counts only (a cluster nothing else needs node ids on): the
            nodes of each allocation are then the lowest ids free in this object's own mask, the choice
            the node-id cluster makes (:meth:`nodes_taken`), so the scheduling keeps its count-only path.

    Attributes:
        idle_since: float ``(N,)``, when each node last became idle (seconds); +inf while it is busy or down.
        booting_until: float ``(N,)``, the end of the boot of each node a job was given while not on
            (-inf when none: the job holds it switching off, off, then booting until then).
        booting_job: int ``(N,)``, the job each node boots for (-1 when none).
        boots: ``(job id, attempt) -> [(state, starts, ends)]``: the intervals of each attempt's nodes
            before its work starts (``shutdown``, ``off``, ``boot``; float arrays, one entry per node), kept only once a reader of the run as it goes sets it to ``{}`` (the learning environment's
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
        self._woken = np.full(capacity, -math.inf)  # a held node's boot begins (after its and the others' switch-offs)
        self._switched_off_at = np.full(capacity, -math.inf)  # a held node's switch-off ends
        # a node whose job ended before its boot did, finishing the transition unheld: from, switch-off end, boot
        # start, boot end (from = -inf: none; its rows are written when it is taken, fails, or the table is read)
        self._settle = np.full((4, capacity), -math.inf)
        self._settling = 0  # how many nodes have a settle entry (0: every settle check is skipped)
        self.boots: dict[tuple[int, int], tuple[int, float, float]] | None = None
        self._chunks: list[tuple] = []  # (nodes, state, starts, ends, job id, attempt): one per event, arrays of nodes

    def _add(self, nodes: np.ndarray, state: str, starts, ends, job_id: int = -1, attempt: int = -1) -> None:
        self._chunks.append((nodes, state, starts, ends, job_id, attempt))

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
        """Bool ``(N,)``: the idle nodes off or switching off at ``now``.

        Those idle for longer than the rule's ``after_s``, and those finishing a switch-off their job's end
        left them in (one booting is neither).
        """
        idle = now - self.idle_since > self.rule.after_s
        if not self._settling:
            return idle
        begun, done, woken, _ = self._settle
        return idle | ((begun <= now) & (now < woken))

    def switching_off(self, now: float) -> np.ndarray:
        """Bool ``(N,)``: the idle nodes still switching off at ``now`` (none when the switch-off takes no time)."""
        idle_for = now - self.idle_since
        idle = (idle_for > self.rule.after_s) & (idle_for < self.rule.after_s + self.rule.shutdown_s)
        if not self._settling:
            return idle
        begun, done, _, _ = self._settle
        return idle | ((begun <= now) & (now < done))

    def booting_idle(self, now: float) -> np.ndarray:
        """Bool ``(N,)``: the idle nodes still booting at ``now`` for a job that ended before the boot did."""
        begun, _, woken, until = self._settle
        return (begun <= now) & (woken <= now) & (now < until)

    def _settle_rows(self, nodes: np.ndarray, upto: float) -> list[tuple]:
        """The unheld rows ``(nodes, state, starts, ends)`` of settling ``nodes`` from their job's end to ``upto``."""
        begun, done, woken, until = self._settle[:, nodes]
        rows = []
        for state, lo, hi in (
            ("shutdown", begun, done),
            ("off", np.maximum(begun, done), woken),
            ("boot", np.maximum(begun, woken), until),
        ):
            hi = np.minimum(hi, upto)
            keep = hi > lo
            if keep.any():
                rows.append((nodes[keep], state, lo[keep], hi[keep]))
        return rows

    def _settled(self, nodes: np.ndarray, now: float) -> tuple[np.ndarray, np.ndarray]:
        """Write the settling rows of ``nodes`` up to ``now`` and forget them.

        Returns:
            The nodes still settling at ``now`` and their ``(switch-off end, boot start, boot end)``, shape ``(3, n)``.
        """
        nodes = nodes[self._settle[0, nodes] > -math.inf]
        for rows in self._settle_rows(nodes, now):
            self._add(*rows)
        still = nodes[self._settle[3, nodes] > now]
        times = self._settle[1:, still].copy()
        self._settle[:, nodes] = -math.inf
        self._settling -= len(nodes)
        return still, times

    def take(self, members: np.ndarray, now: float, job_id: int, attempt: int) -> float:
        """Nodes given to a job at ``now``: those not on finish switching off, then boot.

        Each node not on ends its switch-off (at once when it is off), then every one of them boots
        from the last switch-off's end; until then a node that finished switching off is off. Those
        intervals from ``now`` on belong to the attempt (their rows name it): the job holds the nodes.

        Args:
            members: the allocation's node ids (int array).
            now: seconds.
            job_id: the job (the rows from ``now`` on name it).
            attempt: its attempt number.

        Returns:
            The delay before the work starts, seconds: the longest switch-off left plus the rule's
            ``boot_s`` if any node was not on, at least the time until the last node still finishing
            a transition an earlier job's end left is on, else 0.
        """
        members = np.asarray(members, dtype=np.int64)
        rule = self.rule
        ready = 0.0
        if self._settling and (self._settle[0, members] > -math.inf).any():
            settling, times = self._settled(members, now)
            if len(settling):
                ready = self._hold_settling(settling, times, now, job_id, attempt)
        since = self.idle_since[members]
        switched = now - since > rule.after_s
        self.idle_since[members] = math.inf
        if not switched.any():
            return ready
        nodes = members[switched]
        begun = since[switched] + rule.after_s
        done = begun + rule.shutdown_s  # each node's switch-off ends (== begun when it takes no time)
        wait = max(float(done.max()) - now, 0.0)
        woken = now + wait  # every node boots from the last switch-off's end
        held = []  # (nodes, state, starts, ends) from now on: the job holds the nodes
        if rule.shutdown_s > 0:
            self._add(nodes, "shutdown", begun, np.minimum(done, now))
            late = done > now
            if late.any():
                held.append((nodes[late], "shutdown", np.full(int(late.sum()), now), done[late]))
            early = done < now
            if early.any():
                self._add(nodes[early], "off", done[early], now)
            off_from = np.maximum(done, now)
            waiting = off_from < woken
            if waiting.any():
                held.append((nodes[waiting], "off", off_from[waiting], np.full(int(waiting.sum()), woken)))
        else:
            self._add(nodes, "off", begun, now)
        boot = rule.boot_s
        if boot > 0:
            held.append((nodes, "boot", np.full(len(nodes), woken), np.full(len(nodes), woken + boot)))
        for rows in held:
            self._add(*rows, job_id, attempt)
        if held:
            if self.boots is not None:
                self.boots.setdefault((job_id, attempt), []).extend((state, starts, ends) for _, state, starts, ends in held)
            self.booting_until[nodes] = woken + boot
            self.booting_job[nodes] = job_id
            self._woken[nodes] = woken
            self._switched_off_at[nodes] = done
        return max(wait + boot, ready)

    def _hold_settling(self, nodes: np.ndarray, times: np.ndarray, now: float, job_id: int, attempt: int) -> float:
        """A job is given ``nodes`` still finishing a transition another job's end left: it holds them from ``now``.

        Args:
            nodes: the node ids.
            times: their switch-off ends, boot starts and boot ends, shape ``(3, n)``.
            now: seconds.
            job_id: the job that holds them (their rows name it).
            attempt: its attempt number.

        Returns:
            Seconds until the last of them is on (no boot of its own).
        """
        done, woken, until = times
        self._settle[:, nodes] = [np.full(len(nodes), now), done, woken, until]
        held = self._settle_rows(nodes, math.inf)
        self._settle[:, nodes] = -math.inf
        for rows in held:
            self._add(*rows, job_id, attempt)
        if held and self.boots is not None:
            self.boots.setdefault((job_id, attempt), []).extend((state, starts, ends) for _, state, starts, ends in held)
        self.booting_until[nodes] = until
        self.booting_job[nodes] = job_id
        self._woken[nodes] = woken
        self._switched_off_at[nodes] = done
        return float(until.max()) - now

    def release(self, members: np.ndarray, now: float) -> None:
        """A job's nodes are free at ``now`` (its end, a kill, a preemption, a move): idle from now.

        A node not yet on (its job ended before the boot did) finishes its switch-off and boot unheld
        and is idle from the boot's end.
        """
        members = np.asarray(members, dtype=np.int64)
        self.idle_since[members] = now
        settling = members[self.booting_until[members] > now]
        if len(settling):
            until = self.booting_until[settling]
            self._settle[:, settling] = [
                np.full(len(settling), now),
                self._switched_off_at[settling],
                self._woken[settling],
                until,
            ]
            self.idle_since[settling] = until
            self._settling += len(settling)
        self.booting_until[members] = -math.inf
        self.booting_job[members] = -1

    def fail(self, node: int, now: float) -> None:
        """A node goes down at ``now`` (a failure with a downtime): a switch-off, an off period or a boot left unheld ends there."""
        if self._settling and self._settle[0, node] > -math.inf and len(self._settled(np.array([node], dtype=np.int64), now)[0]):
            self.idle_since[node] = math.inf  # it was still finishing its transition: down from now
            return
        since = float(self.idle_since[node])
        rule = self.rule
        if now - since > rule.after_s:
            begun = since + rule.after_s
            done = begun + rule.shutdown_s
            ids = np.array([node], dtype=np.int64)
            if rule.shutdown_s > 0:
                self._add(ids, "shutdown", begun, min(done, now))
            if done < now:
                self._add(ids, "off", done, now)
        self.idle_since[node] = math.inf

    def repair(self, node: int, now: float) -> None:
        """A node is back up at ``now``: idle from now."""
        self.idle_since[node] = now

    def state(self, node: int, now: float) -> str | None:
        """``off``, ``switching off``, ``booting`` or None (then the platform says: idle, busy or down).

        A node a job was given while it was not on is ``switching off`` or ``off`` until its boot
        begins, then ``booting`` (and busy for the platform).
        """
        rule = self.rule
        begun, done, woken, until = self._settle[:, node]
        if begun <= now < until:  # finishing a transition its job's end left
            return "switching off" if now < done else "off" if now < woken else "booting"
        idle_for = now - self.idle_since[node]
        if idle_for > rule.after_s:
            return "switching off" if idle_for < rule.after_s + rule.shutdown_s else "off"
        if self.booting_until[node] > now:
            if now >= self._woken[node]:
                return "booting"
            return "switching off" if now < self._switched_off_at[node] else "off"
        return None

    def draw_change_w(self, now: float, idle_w: float, job_watts: dict, busy_w: float) -> float:
        """What the nodes off, switching off or booting change in the machine's draw at ``now``, watts.

        Added to :func:`~torus_sim.inputs.energy.node_power.draw_now`'s draw, which counts an idle node at
        ``idle_w`` and a job's node at its job's watts: an idle node off draws ``off_w - idle_w`` more,
        one switching off ``shutdown_w - idle_w``; a job's node booting ``boot_w`` (when set) minus its
        job's watts, one still switching off or off before its boot ``shutdown_w`` / ``off_w`` minus them;
        an idle node finishing a transition its job's end left, its state's watts minus ``idle_w`` (a boot:
        ``boot_w``, or ``idle_w`` when None). The draw is the one from ``now`` on: a switch-off beginning at
        ``now`` counts, as the accounting's intervals ``[start, end)`` do.
        """
        rule = self.rule
        shutdown_w = rule.shutdown_draw_w(idle_w)
        idle_for = now - self.idle_since  # from ``now`` on: a switch-off beginning at ``now`` counts (the accounting's rows)
        idle_off = idle_for >= rule.after_s
        switching = idle_off & (idle_for < rule.after_s + rule.shutdown_s)
        change = int(idle_off.sum() - switching.sum()) * (rule.off_w - idle_w)
        change += int(switching.sum()) * (shutdown_w - idle_w)
        begun, done, woken, until = self._settle
        settling = (begun <= now) & (now < until) if self._settling else None
        if settling is not None and settling.any():  # idle nodes finishing a transition their job's end left
            in_shutdown = int((settling & (now < done)).sum())
            in_off = int((settling & (now >= done) & (now < woken)).sum())
            in_boot = int((settling & (now >= woken)).sum())
            boot_w = idle_w if rule.boot_w is None else rule.boot_w
            change += in_shutdown * (shutdown_w - idle_w) + in_off * (rule.off_w - idle_w) + in_boot * (boot_w - idle_w)
        if rule.boot_w is None and rule.shutdown_s == 0:
            return change  # a job's node booting draws its job's watts
        held = np.flatnonzero(self.booting_until > now)
        changes = []
        for node, job in zip(held.tolist(), self.booting_job[held].tolist(), strict=True):
            job_w = job_watts.get(job, busy_w)
            if now >= self._woken[node]:
                changes.append(0.0 if rule.boot_w is None else rule.boot_w - job_w)
            elif now < self._switched_off_at[node]:
                changes.append(shutdown_w - job_w)
            else:
                changes.append(rule.off_w - job_w)
        return change + sum(changes)

    def table(self) -> pd.DataFrame:
        """The switch-off, off and boot intervals so far (:data:`POWER_STATE_COLUMNS`), the idle nodes' to come open to +inf."""
        idle = np.flatnonzero(np.isfinite(self.idle_since))
        begun = self.idle_since[idle] + self.rule.after_s
        done = begun + self.rule.shutdown_s
        settling = np.flatnonzero(self._settle[0] > -math.inf)
        chunks = [*self._chunks, *((*rows, -1, -1) for rows in self._settle_rows(settling, math.inf))]
        chunks.append((idle, "off", done, math.inf, -1, -1))
        if self.rule.shutdown_s > 0:
            chunks.append((idle, "shutdown", begun, done, -1, -1))
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
        import pandas as pd  # the table: read after the run

        table = pd.DataFrame(columns, columns=POWER_STATE_COLUMNS)
        return table.astype({"job_id": np.int64, "attempt": np.int64})
