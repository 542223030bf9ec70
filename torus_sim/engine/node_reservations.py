"""Reservations of part of the machine: nodes held out from a start to an end, by count or by name, killing or waiting.

A production machine loses nodes to reservations its log does not record: a maintenance of one rack, a
demonstration, a course, nodes kept for interactive work. Slurm makes one with ``scontrol create reservation``, of a
node count (``nodecnt=``) or of named nodes (``nodes=``); the jobs running on those nodes when it begins are either
left to end (the reservation waits for their nodes) or, for maintenance, killed (Slurm's ``flags=maint`` with the
nodes' jobs cancelled or requeued; Maui's administrative reservations with ``RSVPREEMPT``). :class:`HeldNodes` does
that for any online policy, at each pass's start before any job is looked at:

* a reservation by name takes each of its nodes as soon as it is free and up; a count reservation takes free nodes,
  the highest ids first, until it holds its count (among the reservations in force the named ones are served first,
  so a count reservation does not take a node a named one is waiting for; one that began earlier may hold it);
* a killing reservation first kills the jobs on its named nodes, or, by count, the running jobs started last (the
  least work lost) until enough nodes are free; a killed job returns to the queue as a failure's victim does (its work
  since its last checkpoint lost, counted in the work lost);
* a held node is down until the reservation's end, a return every policy's planning knows (the platform's
  ``repairs_ahead``: EASY's shadow time, conservative's profile, the torus's partition finder), and is given back
  there; a failed node is taken once it is repaired; a node that fails while held comes back at its own repair.

The machine's effective size over time (:mod:`torus_sim.engine.effective_size`) is a run of count reservations that
wait: ``capacity - nodes`` held in each span. On a cluster that keeps counts only, count reservations that wait are
held as counts (the platform's ``hold_out`` and ``give_back``): any free nodes will do for a job there, so no planning
needs their node ids; their return at the reservation's end is a row of the platform's ``repairs_ahead`` as a held
node's is, and the schedule is the one the same run with node identities makes.

What is not modelled: a reservation does not keep jobs off its nodes before it begins (a job whose requested time
reaches into it may start there and, under ``wait``, delays it; Slurm would not start such a job on those nodes).

References:
    Slurm's documentation, "Advanced Resource Reservation Guide" (``nodecnt``, ``nodes``, ``flags=maint``,
    ``ignore_jobs``); Maui Scheduler Administrator's Guide §7.1 (administrative and standing reservations);
    BGL-FAULT §6.1 (a killed job restarts from its beginning or its last checkpoint).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Iterable
from typing import NamedTuple

from torus_sim.core.errors import ConfigurationError
from torus_sim.machine.platforms.base import interval_text
from torus_sim.machine.platforms.torus import NO_JOB

__all__ = ["HeldNodes", "NodeReservation", "checked_reservations", "counts_only"]


class NodeReservation(NamedTuple):
    """One reservation of part of the machine.

    Attributes:
        start, end: seconds of the run's clock, start < end (``math.inf``: to the run's end).
        count: nodes reserved by count (processors of a cluster, supernodes of a torus); 0 where ``nodes`` names them.
        nodes: the node ids reserved by name (0-based), or () for a count.
        kill: the jobs running on the reserved nodes at the start are killed and requeued; False: the reservation takes
            their nodes as they end.
        origin: where it comes from, for the sentences and the manifest (``"effective size"``, ``"rsv.csv:3"``).
    """

    start: float
    end: float
    count: int = 0
    nodes: tuple[int, ...] = ()
    kill: bool = False
    origin: str = ""

    def size(self) -> int:
        """Nodes the reservation holds once it has them all."""
        return len(self.nodes) or self.count

    def describe(self) -> str:
        """The reservation in words, for the sentences: ``"13 nodes from 0 s to 3600 s"``."""
        what = f"nodes {interval_text(self.nodes).replace(' ', ';')}" if self.nodes else f"{self.count} nodes"
        where = f" ({self.origin})" if self.origin else ""
        return f"{what} from {self.start:g} s to {self.end:g} s{where}"


def checked_reservations(reservations: Iterable[NodeReservation], capacity: int) -> tuple[NodeReservation, ...]:
    """Reservations checked against the machine and each other, sorted by start (stable).

    Args:
        reservations: :class:`NodeReservation` values (or tuples of their fields).
        capacity: the machine's nodes.

    Returns:
        The reservations by start.

    Raises:
        ConfigurationError: a reservation that is not finite with start < end, neither a count in [0, capacity] (0
            holds nothing: a span of an effective size at the whole machine) nor
            named nodes in [0, capacity) without repeats; two overlapping reservations that name the same node; or
            reservations that together hold more than the machine at some instant.
    """
    checked = []
    for value in reservations:
        reservation = NodeReservation(*value)
        start, end = reservation.start, reservation.end
        if not (math.isfinite(start) and start < end):
            raise ConfigurationError(f"a reservation needs a finite start before its end, got {start:g}-{end:g} s")
        if reservation.nodes:
            nodes = tuple(int(node) for node in reservation.nodes)
            bad = [node for node in nodes if not 0 <= node < capacity]
            if bad:
                raise ConfigurationError(f"a reservation names node {bad[0]}; the machine's nodes are 0-{capacity - 1}")
            if len(set(nodes)) != len(nodes):
                raise ConfigurationError(f"a reservation names a node twice ({reservation.describe()})")
            reservation = reservation._replace(nodes=nodes, count=0)
        elif not (reservation.count == int(reservation.count) and 0 <= reservation.count <= capacity):
            raise ConfigurationError(
                f"a reservation's node count must be a whole number in [1, {capacity}], got {reservation.count:g}"
            )
        else:
            reservation = reservation._replace(count=int(reservation.count))
        checked.append(reservation._replace(start=float(start), end=float(end), kill=bool(reservation.kill)))
    checked.sort(key=lambda reservation: reservation.start)
    for index, first in enumerate(checked):  # pairs that overlap in time: the same node twice, or more than the machine
        held = first.size()
        for second in checked[index + 1 :]:
            if second.start >= first.end:
                break
            if set(first.nodes) & set(second.nodes):
                raise ConfigurationError(f"reservations overlap on the same nodes: {first.describe()} and {second.describe()}")
        active = [other for other in checked[:index] if other.end > first.start]
        held += sum(other.size() for other in active)
        if held > capacity:
            raise ConfigurationError(f"reservations hold {held} nodes at {first.start:g} s, more than the machine's {capacity}")
    return tuple(checked)


def counts_only(reservations) -> bool:
    """Whether a cluster that keeps counts only can hold ``reservations``: each a count that waits.

    Such a reservation never asks which node is which (it takes free nodes and kills nothing), so it needs no node
    identities (the run keeps the count cluster's speed); one of named nodes or one that kills needs them.

    Args:
        reservations: :class:`NodeReservation` values (or tuples of their fields).

    Returns:
        True where every one has no named nodes and does not kill.
    """
    return all(
        not reservation.nodes and not reservation.kill for reservation in (NodeReservation(*value) for value in reservations)
    )


class HeldNodes:
    """The nodes held out of the machine by reservations of part of it, taken and given back at the passes' starts.

    Args:
        reservations: :class:`NodeReservation` values (:func:`checked_reservations`).
        platform: the run's platform; a held node is taken down until the reservation's end and repaired there, on
            a platform that tells nodes apart (``tracks_nodes``); on a cluster that keeps counts only
            (``hold_out``), count reservations that wait take counts of free nodes until their end.
        request_pass_at: ``at -> None``: asks the engine for a scheduling pass at a later time (a reservation's start
            or end).
        on_back: ``(node, now) -> None``, called for each held node back in service at a reservation's end (the
            engine closes the downtime of a node that failed while it was held), or None.
        kill: ``job_id -> None``: kills a running job and requeues it (the engine's kill, as at a failure); needed
            where a reservation kills.
        running: ``() -> iterable of running jobs`` (their ``job_id`` and ``started_at``); needed where a count
            reservation kills.

    Attributes:
        reservations: the reservations by start.
        held: the node ids held out now, in the order taken.
        node_seconds: node-seconds held out of the machine by nodes given back so far (from each take to the pass
            that gave it back, at the reservation's end); :meth:`hours` adds the nodes still held.
        kills: jobs killed by reservations so far.

    Raises:
        ConfigurationError: the reservations (:func:`checked_reservations`), a platform without node identities (for
            reservations other than whole-run counts that wait on a count cluster), or a killing reservation without
            ``kill`` and ``running``.
    """

    def __init__(
        self,
        reservations: Iterable[NodeReservation],
        platform,
        request_pass_at: Callable[[float], None],
        on_back: Callable[[int, float], None] | None = None,
        kill: Callable[[int], None] | None = None,
        running: Callable[[], Iterable] | None = None,
    ) -> None:
        reservations = tuple(reservations)
        self._counts = not platform.tracks_nodes and hasattr(platform, "hold_out") and counts_only(reservations)
        if not self._counts and (
            not platform.tracks_nodes or not hasattr(platform, "down") or not hasattr(platform, "take_down")
        ):
            raise ConfigurationError(
                "reservations and an effective size take nodes one by one out of a cluster or a torus, not out of a "
                f"{platform.label}"
            )
        self.reservations = checked_reservations(reservations, platform.capacity)
        if any(reservation.kill for reservation in self.reservations) and (kill is None or running is None):
            raise ConfigurationError("a reservation that kills needs the engine's kill and its running jobs")
        self._starts = [reservation.start for reservation in self.reservations]
        self._platform = platform
        self._request_pass_at = request_pass_at
        self._on_back = on_back
        self._kill = kill
        self._running = running
        self._next = 0  # the first reservation not yet begun
        self._active: list[int] = []  # the reservations in force, named ones first, then by start
        self._holding: dict[int, list[int]] = {}  # reservation -> the nodes it holds now
        self._asked = -math.inf  # the latest boundary a pass is asked at
        self._quiet_until = -math.inf  # until then every reservation in force holds its nodes: a pass has nothing to do
        self._since: dict[int, float] = {}  # held node -> when it was taken
        self._counted: dict[int, list[tuple[int, float]]] = {}  # count mode: reservation -> (nodes, when taken) it holds
        self.node_seconds = 0.0
        self.kills = 0

    @property
    def held(self) -> list[int]:
        """The node ids held out now (each reservation's, in the order taken; -1 for each node of a count cluster)."""
        return [node for index in self._active for node in self._holding[index]]

    def apply(self, now: float) -> None:
        """At a pass's start: give back the nodes of reservations that ended, take what those in force still need.

        Args:
            now: the pass's time, seconds.
        """
        if now < self._quiet_until:  # every reservation in force holds its nodes and none begins or ends before then
            return
        reservations = self.reservations
        begun = bisect.bisect_right(self._starts, now)
        if begun > self._next:
            for index in range(self._next, begun):
                if reservations[index].end > now:  # one that began and ended between two passes holds nothing
                    self._active.append(index)
                    self._holding[index] = []
            self._next = begun
            self._active.sort(key=lambda index: (not reservations[index].nodes, index))
        for index in [index for index in self._active if reservations[index].end <= now]:
            if self._counts:
                self._give_back_count(index, self._holding.pop(index), now)
            else:
                self._give_back(self._holding.pop(index), now)
            self._active.remove(index)
        for index in self._active:
            reservation = reservations[index]
            holding = self._holding[index]
            if len(holding) < reservation.size():
                if reservation.nodes:
                    self._take_named(reservation, holding, now)
                else:
                    self._take_count(index, holding, now)
        boundary = self._ask_next()
        if all(len(self._holding[index]) >= reservations[index].size() for index in self._active):
            self._quiet_until = boundary

    def _give_back(self, nodes: list[int], now: float) -> None:
        platform = self._platform
        since = self._since
        for node in nodes:
            self.node_seconds += now - since.pop(node)
            # False where a failure keeps it down longer: its own repair brings it back
            if platform.repair(node, now) and self._on_back is not None:
                self._on_back(node, now)

    def _give_back_count(self, index: int, holding: list[int], now: float) -> None:
        """Count mode: the nodes reservation ``index`` holds are free again at its end."""
        if holding:
            self._platform.give_back(len(holding), self.reservations[index].end)
        for count, since in self._counted.pop(index, ()):
            self.node_seconds += count * (now - since)

    def _take(self, node: int, end: float, holding: list[int], now: float) -> None:
        self._platform.take_down(node, end)
        holding.append(node)
        self._since[node] = now

    def _take_named(self, reservation: NodeReservation, holding: list[int], now: float) -> None:
        """Take each named node not held yet: free and up, or (killing) once its job is killed; a down node waits."""
        platform = self._platform
        down = platform.down
        taken = set(holding)
        for node in reservation.nodes:
            if node in taken or down[node]:
                continue
            job_id = platform.job_on(node)
            if job_id != NO_JOB:
                if not reservation.kill:
                    continue  # the reservation waits for the job's end
                self._kill(job_id)
                self.kills += 1
            self._take(node, reservation.end, holding, now)

    def _take_count(self, index: int, holding: list[int], now: float) -> None:
        """Take free nodes, the highest ids first, up to the count; killing, first kill the latest started jobs."""
        platform = self._platform
        reservation = self.reservations[index]
        short = reservation.count - len(holding)
        if reservation.kill and platform.free_count() < short:
            victims = sorted(self._running(), key=lambda job: (job.started_at, job.job_id), reverse=True)
            for job in victims:
                if platform.free_count() >= short:
                    break
                self._kill(job.job_id)
                self.kills += 1
        if platform.free_count() <= 0:  # nothing to take until a job ends
            return
        if self._counts:  # a count cluster: free nodes taken until the reservation's end
            taken = min(short, platform.free_count())
            platform.hold_out(taken, reservation.end)
            holding.extend([-1] * taken)
            self._counted.setdefault(index, []).append((taken, now))
            return
        for node in self._free_highest_first(platform):
            self._take(node, reservation.end, holding, now)
            short -= 1
            if not short:
                break

    @staticmethod
    def _free_highest_first(platform) -> list[int]:
        """The free nodes' ids, the highest first (a cluster lists them at once; a torus is asked node by node)."""
        free_nodes = getattr(platform, "free_nodes", None)
        if free_nodes is not None:
            return free_nodes()[::-1].tolist()
        down = platform.down
        return [node for node in range(platform.capacity - 1, -1, -1) if not down[node] and platform.job_on(node) == NO_JOB]

    def _ask_next(self) -> float:
        """Ask for a pass at the next reservation's start or the first end of those in force, once; return that time."""
        boundary = min((self.reservations[index].end for index in self._active), default=math.inf)
        if self._next < len(self._starts):
            boundary = min(boundary, self._starts[self._next])
        if math.isfinite(boundary) and boundary > self._asked:
            self._asked = boundary
            self._request_pass_at(boundary)
        return boundary

    def hours(self, now: float) -> float:
        """Node-hours held out of the machine until ``now`` (seconds; the run's end: a reservation may last beyond it)."""
        held = sum(now - since for since in self._since.values())
        held += sum(count * (now - since) for taken in self._counted.values() for count, since in taken)
        return (self.node_seconds + held) / 3600.0
