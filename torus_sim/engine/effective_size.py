"""The machine's effective size over time: spans in which only part of the machine was there to schedule on.

A log's machine size is not always what its scheduler could use: SDSC-SP2's log never holds more than 115 of its
128 processors busy with the jobs that completed until late November 1998 (seven months), although jobs that would
have fitted waited; nodes were held for interactive work, tests or repairs that the log does not record. Slurm says
it with a reservation of part of the machine (``scontrol create reservation nodecnt=13 ...``) or a root
association's ``GrpTRES``; Maui with a standing reservation of a node count. :class:`EffectiveSize` does that for
any online policy: from each span's start to its end the machine has only the span's nodes; the others are held
out, as down nodes whose return (the span's end) every policy's planning knows (a platform's ``repairs_ahead``:
EASY's shadow, conservative's profile and the torus's partition finder count them back at the span's end). Nothing
is killed: nodes busy at a span's start are taken as their jobs end (the span waits for them), the highest free
ids first, and a failed node is taken once it is repaired. The held nodes come back at the span's end (a pass is
asked there, and at each span's start).

References:
    Slurm's documentation, "Advanced Resource Reservation Guide" (reservations of a node count) and "Resource
    Limits" (``GrpTRES``); Maui Scheduler Administrator's Guide §7.1 (standing reservations); Feitelson, Tsafrir,
    Krakov, "Experience with using the Parallel Workloads Archive", JPDC 74(10), 2014 (a log's MaxProcs is not
    always what was usable).
"""

from __future__ import annotations

import bisect
import math

import numpy as np

from torus_sim.core.errors import ConfigurationError
from torus_sim.machine.platforms.torus import NO_JOB

__all__ = ["EffectiveSize", "checked_spans"]


def checked_spans(spans, capacity: int) -> np.ndarray:
    """Spans of an effective size as a float ``(S, 3)`` array of ``(start, end, nodes)`` by start, checked.

    Args:
        spans: ``(start, end, nodes)`` triples: seconds of the run's clock and the nodes usable from start to end
            (processors of a cluster, supernodes of a torus), any order.
        capacity: the machine's nodes.

    Returns:
        float64 ``(S, 3)`` sorted by start.

    Raises:
        ConfigurationError: a span that is not finite with start < end, nodes that are not a whole number in
            [1, capacity], or two spans that overlap.
    """
    array = np.asarray(spans, dtype=np.float64).reshape(-1, 3) if len(spans) else np.empty((0, 3))
    if not np.isfinite(array).all() or np.any(array[:, 0] >= array[:, 1]):
        raise ConfigurationError("an effective-size span needs a finite start before its end")
    nodes = array[:, 2]
    if np.any(nodes != np.round(nodes)) or np.any(nodes < 1) or np.any(nodes > capacity):
        bad = nodes[(nodes != np.round(nodes)) | (nodes < 1) | (nodes > capacity)][0]
        raise ConfigurationError(f"an effective size must be a whole number of nodes in [1, {capacity}], got {bad:g}")
    array = array[np.argsort(array[:, 0], kind="stable")]
    overlap = np.flatnonzero(array[1:, 0] < array[:-1, 1])
    if len(overlap):
        first, second = array[overlap[0]], array[overlap[0] + 1]
        raise ConfigurationError(f"effective-size spans overlap: {first[0]:g}-{first[1]:g} s and {second[0]:g}-{second[1]:g} s")
    return array


class EffectiveSize:
    """The nodes held out of the machine in each span of a smaller effective size.

    Args:
        spans: ``(start, end, nodes)`` triples (:func:`checked_spans`): from start to end (seconds of the run's
            clock) only ``nodes`` of the machine are usable.
        platform: the run's platform; it must tell nodes apart (``tracks_nodes``): a held node is taken down until
            the span's end and repaired there.
        request_pass_at: ``at -> None``: asks the engine for a scheduling pass at a later time (a span's start or end).
        on_back: ``(node, now) -> None``, called for each held node back in service at a span's end (the engine closes
            the downtime of a node that failed while it was held: its own repair came while the span held it), or None.

    Attributes:
        spans: float64 ``(S, 3)``, the spans by start.
        held: the node ids held out now.
        node_seconds: node-seconds held out of the machine so far (from each take to its span's end).

    Raises:
        ConfigurationError: the spans (:func:`checked_spans`), or a platform without node identities.
    """

    def __init__(self, spans, platform, request_pass_at, on_back=None) -> None:
        if not platform.tracks_nodes or not hasattr(platform, "down") or not hasattr(platform, "take_down"):
            raise ConfigurationError(
                f"an effective size takes single nodes out of a cluster or a torus, not of a {platform.label}"
            )
        self.spans = checked_spans(spans, platform.capacity)
        self._starts = self.spans[:, 0].tolist()
        self._ends = self.spans[:, 1].tolist()
        self._platform = platform
        self._request_pass_at = request_pass_at
        self._on_back = on_back
        self._span = -1  # the span whose nodes are held now
        self._asked = -math.inf  # the latest boundary a pass is asked at
        self.held: list[int] = []
        self.node_seconds = 0.0

    def apply(self, now: float) -> None:
        """At a pass's start: give back the nodes of a span that ended, hold out what the span now in force asks.

        Args:
            now: the pass's time, seconds.
        """
        index = bisect.bisect_right(self._starts, now) - 1  # the last span started by now
        current = index if index >= 0 and now < self._ends[index] else -1
        if self._span >= 0 and self._span != current:
            self._give_back(now)
        self._span = current
        if current >= 0:
            self._hold(current, now)
        self._ask_next(now)

    def _give_back(self, now: float) -> None:
        platform = self._platform
        for node in self.held:
            # False where a failure keeps it down longer: its own repair brings it back
            if platform.repair(node, now) and self._on_back is not None:
                self._on_back(node, now)
        self.held = []

    def _hold(self, index: int, now: float) -> None:
        platform = self._platform
        short = platform.capacity - int(self.spans[index, 2]) - len(self.held)
        if short <= 0:
            return
        if platform.free_count() <= 0:  # nothing to take until a job ends
            return
        end = self._ends[index]
        for node in self._free_highest_first(platform):
            platform.take_down(node, end)
            self.held.append(node)
            self.node_seconds += end - now
            short -= 1
            if not short:
                break

    @staticmethod
    def _free_highest_first(platform):
        """The free nodes' ids, the highest first (a cluster lists them at once; a torus is asked node by node)."""
        free_nodes = getattr(platform, "free_nodes", None)
        if free_nodes is not None:
            return free_nodes()[::-1].tolist()
        down = platform.down
        return [node for node in range(platform.capacity - 1, -1, -1) if not down[node] and platform.job_on(node) == NO_JOB]

    def _ask_next(self, now: float) -> None:
        """Ask for a pass at the next span's start or the current span's end, once."""
        index = bisect.bisect_right(self._starts, now)
        boundary = self._ends[self._span] if self._span >= 0 else math.inf
        if index < len(self._starts):
            boundary = min(boundary, self._starts[index])
        if math.isfinite(boundary) and boundary > self._asked:
            self._asked = boundary
            self._request_pass_at(boundary)

    def hours(self) -> float:
        """Node-hours held out of the machine so far."""
        return self.node_seconds / 3600.0
