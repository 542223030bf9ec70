"""The machine's effective size over time: spans in which only part of the machine was there to schedule on.

A log's machine size is not always what its scheduler could use: SDSC-SP2's log never holds more than 115 of its
128 processors busy with the jobs that completed until late November 1998 (seven months), although jobs that would
have fitted waited; nodes were held for interactive work, tests or repairs that the log does not record. Slurm says
it with a reservation of part of the machine (``scontrol create reservation nodecnt=13 ...``) or a root
association's ``GrpTRES``; Maui with a standing reservation of a node count. :func:`size_reservations` says it
as count reservations that wait (:class:`~torus_sim.engine.node_reservations.HeldNodes` holds them, for any online
policy): from each span's start to its end the machine has only the span's nodes; the others are held out, as down nodes whose return (the span's end) every policy's planning knows (a platform's ``repairs_ahead``:
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

import numpy as np

from torus_sim.core.errors import ConfigurationError
from torus_sim.engine.node_reservations import NodeReservation

__all__ = ["SIZE_ORIGIN", "checked_spans", "size_reservations", "size_spans"]

SIZE_ORIGIN = "effective size"
"""The origin of the reservations that say a machine's effective size."""


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
    if not np.isfinite(array[:, [0, 2]]).all() or np.isnan(array[:, 1]).any() or np.any(array[:, 0] >= array[:, 1]):
        raise ConfigurationError("an effective-size span needs a finite start before its end (or +inf: to the run's end)")
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


def size_reservations(spans, capacity: int) -> tuple[NodeReservation, ...]:
    """The spans of a smaller effective size as count reservations that wait: ``capacity - nodes`` held in each.

    Args:
        spans: ``(start, end, nodes)`` triples (:func:`checked_spans`): from start to end (seconds of the run's clock)
            only ``nodes`` of the machine are usable.
        capacity: the machine's nodes.

    Returns:
        One :class:`~torus_sim.engine.node_reservations.NodeReservation` per span (of 0 nodes at the machine's size), by start,
        its origin :data:`SIZE_ORIGIN`
        (:class:`~torus_sim.engine.node_reservations.HeldNodes` holds them).

    Raises:
        ConfigurationError: the spans (:func:`checked_spans`).
    """
    return tuple(
        NodeReservation(start, end, capacity - int(nodes), origin=SIZE_ORIGIN)
        for start, end, nodes in checked_spans(spans, capacity).tolist()
    )


def size_spans(reservations, capacity: int) -> list[list[float]]:
    """The effective size's spans back from the reservations it became (a run's manifest).

    Args:
        reservations: :class:`~torus_sim.engine.node_reservations.NodeReservation` values; those of origin
            :data:`SIZE_ORIGIN` are read.
        capacity: the machine's nodes.

    Returns:
        ``[[start, end, nodes], ...]``: seconds of the run's clock and the usable nodes, floats, by start.
    """
    return [
        [reservation.start, reservation.end, float(capacity - reservation.count)]
        for reservation in reservations
        if reservation.origin == SIZE_ORIGIN
    ]
