"""A run's reservations of part of the machine, read from a file.

``reservations = "FILE"`` reads one reservation per line, ``start,end,nodes[,on_running]``:

* ``start``, ``end``: seconds of the workload's clock (an SWF log's submit times: seconds from its start),
  0 <= start < end;
* ``nodes``: a node count (``13``: any 13 nodes, Slurm's ``nodecnt=13``) or named nodes after ``ids=``, single ids
  and ranges separated by ``;`` (``ids=0-12;40``: nodes 0 to 12 and 40, 0-based; Slurm's ``nodes=``); nodes are
  processors of a cluster and supernodes of a torus;
* ``on_running`` (optional): ``wait`` (the default: the reservation takes a node once the job on it ends) or ``kill``
  (the jobs on its nodes at its start are killed and requeued; by count, the jobs started last until enough nodes
  are free: a maintenance of part of the machine).

``#`` comments and blank lines are skipped, and an optional ``start,end,nodes[,on_running]`` header. The engine
checks each reservation against the machine and the others (a node beyond the machine, two reservations of one node
that overlap in time, more nodes held at once than the machine has) and holds them
(:class:`~torus_sim.engine.node_reservations.HeldNodes`).

References:
    Slurm's documentation, "Advanced Resource Reservation Guide" (``scontrol create reservation`` with ``nodecnt``
    or ``nodes``, ``flags=maint``); Maui Scheduler Administrator's Guide §7.1 (administrative reservations).
"""

from __future__ import annotations

import math
from pathlib import Path

from torus_sim.core.errors import ReservationFormatError
from torus_sim.core.files import input_lines

__all__ = ["ON_RUNNING", "parse_node_ids", "read_reservations"]


ON_RUNNING = ("wait", "kill")
"""What a reservation does with the jobs running on its nodes at its start: wait for their ends, or kill them."""

_HEADERS = ("start,end,nodes", "start,end,nodes,on_running")


def parse_node_ids(text: str) -> tuple[int, ...]:
    """Node ids from ``"0-12;40"``: single ids and inclusive ranges separated by ``;``, in the order given.

    Args:
        text: the ids after ``ids=``.

    Returns:
        The ids, each range expanded.

    Raises:
        ValueError: an empty item, an id that is not a whole number >= 0, or a range whose end is below its start.
    """
    nodes: list[int] = []
    for item in text.split(";"):
        item = item.strip()
        first, dash, last = item.partition("-")
        if not first.strip().isdigit() or (dash and not last.strip().isdigit()):
            raise ValueError(f"{item!r} is not a node id or a range of them (as 0-12)")
        low, high = int(first), int(last) if dash else int(first)
        if high < low:
            raise ValueError(f"the range {item!r} ends below its start")
        nodes.extend(range(low, high + 1))
    return tuple(nodes)


def read_reservations(path: str | Path) -> tuple[tuple, ...]:
    """Read a reservation file: one ``start,end,nodes[,on_running]`` per line.

    Args:
        path: the file (plain or compressed).

    Returns:
        One ``(start, end, count, nodes, kill, origin)`` tuple per reservation, in file order: seconds, the node count
        (0 where nodes are named), the named node ids (``()`` for a count), whether it kills, and ``"NAME:LINE"``
        (the file's name and the line) for the sentences; the fields of
        :class:`~torus_sim.engine.node_reservations.NodeReservation`.

    Raises:
        FileNotFoundError: no such file.
        ReservationFormatError: a line that is not three or four fields, times that are not 0 <= start < end finite
            seconds, a count that is not a whole number >= 1, named nodes that do not parse (:func:`parse_node_ids`),
            or an ``on_running`` other than wait or kill (file and line named).
    """
    name = Path(path).name
    reservations = []
    for number, line in enumerate(input_lines(path, "reservation"), start=1):
        text = line.split("#", 1)[0].strip()
        if not text or (not reservations and text.replace(" ", "").lower() in _HEADERS):
            continue
        fields = [field.strip() for field in text.split(",")]
        if len(fields) not in (3, 4):
            raise ReservationFormatError(path, number, f"expected start,end,nodes[,on_running], got {text!r}")
        try:
            start, end = float(fields[0]), float(fields[1])
        except ValueError:
            raise ReservationFormatError(path, number, f"expected start,end in seconds, got {text!r}") from None
        if not (math.isfinite(start) and math.isfinite(end) and 0 <= start < end):
            raise ReservationFormatError(path, number, f"a reservation needs 0 <= start < end in finite seconds, got {text!r}")
        count, nodes = _nodes(path, number, fields[2])
        on_running = fields[3].lower() if len(fields) == 4 else "wait"
        if on_running not in ON_RUNNING:
            raise ReservationFormatError(path, number, f"on_running must be wait or kill, got {fields[3]!r}")
        reservations.append((start, end, count, nodes, on_running == "kill", f"{name}:{number}"))
    return tuple(reservations)


def _nodes(path, number: int, field: str) -> tuple[int, tuple[int, ...]]:
    """``(count, ())`` for a count, ``(0, ids)`` for ``ids=...``.

    Raises:
        ReservationFormatError: neither a whole count >= 1 nor parseable named nodes.
    """
    if field.lower().startswith("ids="):
        try:
            nodes = parse_node_ids(field[4:])
        except ValueError as error:
            raise ReservationFormatError(path, number, f"named nodes as ids=0-12;40: {error}") from None
        return 0, nodes
    try:
        count = float(field)
    except ValueError:
        count = math.nan
    if not (count >= 1 and count == round(count)):
        raise ReservationFormatError(path, number, f"the nodes must be a whole count >= 1 or named as ids=0-12;40, got {field!r}")
    return int(count), ()
