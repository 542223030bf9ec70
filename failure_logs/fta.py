"""Reader for the Failure Trace Archive (FTA) ``event_trace`` table.

The FTA is the field's common format for availability traces (LANL, Condor, SETI@home, Microsoft
desktops, ...). Its ``event_trace`` table is tab- or whitespace-separated with a header row::

    event_id component_id node_id platform_id node_name event_type event_start_time event_stop_time event_end_reason

``event_type`` 0 is an unavailability interval (the node is down from ``event_start_time`` to
``event_stop_time``), 1 an availability interval; times are seconds since 1970. Each down interval
is read as one fail-stop failure whose repair ends the interval (``downtime = "log"`` uses it);
availability intervals are counted and skipped.

Columns are separated by runs of whitespace (the published tables pad them with tabs and spaces).
A node is identified by ``node_id``. Nodes map onto the platform's supernodes (or cluster nodes) in
contiguous blocks, as the LANL reader does: ``supernode = node * n_supernodes // nodes``. The node
number is the part of ``node_name`` after its first ``.`` (``<system>.<node>``) when those numbers name
the same nodes as the ``node_id`` column (one number per id, one id per number: a converted LANL
table); otherwise (the FTA prints ``node_name`` as a decimal, so ``20.52`` and ``20.520`` are one node,
and a selection of several systems repeats numbers) the rank of ``node_id`` among the selected nodes.
``nodes`` is the system's node count (the event trace lists only nodes that had events, so give it
when known: LANL system 20 has 512).

References:
    Kondo, Javadi, Iosup, Epema, "The Failure Trace Archive: enabling comparative analysis of
    failures in diverse distributed systems", CCGrid 2010; http://fta.scem.uws.edu.au (format).
"""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np

from failure_logs.events import MAX_EPOCH, FailureLog
from torus_sim.core.errors import ConfigurationError, FailureLogFormatError
from torus_sim.core.files import file_sha256, input_lines

__all__ = ["FTA_COLUMNS", "read_fta"]

FTA_COLUMNS = (
    "event_id",
    "component_id",
    "node_id",
    "platform_id",
    "node_name",
    "event_type",
    "event_start_time",
    "event_stop_time",
    "event_end_reason",
)
"""The ``event_trace`` columns, in the FTA's order (``event_end_reason`` may be left empty)."""

MAX_NODE_NUMBER = 99_999_999
"""The largest node number a ``<system>.<node>`` name may give (8 digits; no machine has more nodes): a longer
number is not taken as a node number (the nodes are then ranked by their node_id, and a warning says so)."""

_NEEDED = ("node_id", "platform_id", "node_name", "event_type", "event_start_time", "event_stop_time")
DOWN, UP = 0, 1
"""``event_type`` values: unavailability and availability intervals."""


def _split(line: str) -> list[str]:
    """The fields of a line: the published tables pad their columns with runs of tabs and spaces."""
    return line.split()


def _time(path: Path, line_no: int, text: str, name: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise FailureLogFormatError(path, line_no, f"{name} is not a number: {text!r}") from None
    if not 0 <= value <= MAX_EPOCH:  # also refuses NaN
        raise FailureLogFormatError(path, line_no, f"{name} {text} is outside 0..{MAX_EPOCH:.0e} (seconds since 1970)")
    return value


def _integer(path: Path, line_no: int, text: str, name: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise FailureLogFormatError(path, line_no, f"{name} is not an integer: {text!r}") from None
    if not 0 <= value < 2**63:
        raise FailureLogFormatError(path, line_no, f"{name} {value} is not in 0..2**63-1")
    return value


def _one_to_one(numbers: list[int], node_ids: list[int]) -> bool:
    """Whether the node numbers read from the names and the node ids name the same nodes (a bijection)."""
    by_id: dict[int, int] = {}
    by_number: dict[int, int] = {}
    for number, node in zip(numbers, node_ids, strict=True):
        if by_id.setdefault(node, number) != number or by_number.setdefault(number, node) != node:
            return False
    return True


def read_fta(
    path: str | Path,
    n_supernodes: int = 128,
    system: str | None = None,
    platform: int | None = None,
    nodes: int | None = None,
    node_to_supernode: Callable[[np.ndarray, int], np.ndarray] | None = None,
) -> FailureLog:
    """Read the down intervals of an FTA ``event_trace`` table as failures with their repair times.

    Args:
        path: the table (plain or gzip / xz / bzip2).
        n_supernodes: supernodes (or cluster nodes) of the simulated platform.
        system: keep the nodes whose ``node_name`` starts with ``<system>.`` (all when None).
        platform: keep the rows of this ``platform_id`` (all when None).
        nodes: node count of the selected system, for the block mapping; the largest node number
            + 1 when None (``counts["nodes_inferred"]`` is then 1).
        node_to_supernode: maps ``(node numbers, nodes)`` to supernode indices; the block mapping
            of the module docstring when None.

    Returns:
        One failure per down interval of the selection, at ``event_start_time`` with ``repair_at`` =
        ``event_stop_time`` (seconds since 1970). ``counts`` holds ``lines`` (data lines),
        ``down_intervals``, ``up_intervals``, ``other_system`` (rows left out by ``system`` or
        ``platform``), ``repair_before_failure`` (stop before start: zero downtime), ``nodes``.

    Raises:
        FileNotFoundError: no such file.
        InputFileError: a directory, or a truncated or corrupt compressed file.
        FailureLogFormatError: no header or a header without the needed columns, a line with too
            few fields, an event type other than 0 or 1, a time that is not a number in
            0..:data:`~failure_logs.events.MAX_EPOCH`, or a node number at or above ``nodes``
            (naming the file and line).
        ConfigurationError: no down interval in the selection, or ``nodes`` < 1.

    References:
        FTA format (module docstring); block mapping as :func:`failure_logs.lanl.read_lanl`.
    """
    path = Path(path)
    if nodes is not None and nodes < 1:
        raise ConfigurationError(f"the FTA system's node count must be >= 1, got {nodes}")
    counts: Counter = Counter()
    columns: dict[str, int] | None = None
    starts, stops, numbers, node_ids, line_nos = [], [], [], [], []
    first_unnumbered: tuple[int, str] | None = None
    first_beyond: tuple[int, str] | None = None
    for line_no, line in enumerate(input_lines(path, "failure log"), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = _split(line)
        if columns is None:
            columns = {name: index for index, name in enumerate(fields)}
            missing = [name for name in _NEEDED if name not in columns]
            if missing:
                raise FailureLogFormatError(path, line_no, f"expected the FTA event_trace header; missing columns {missing}")
            width = max(columns[name] for name in _NEEDED) + 1
            continue
        if len(fields) < width:
            raise FailureLogFormatError(path, line_no, f"expected at least {width} fields, found {len(fields)}")
        counts["lines"] += 1
        kind = _integer(path, line_no, fields[columns["event_type"]], "event_type")
        if kind not in (DOWN, UP):
            raise FailureLogFormatError(path, line_no, f"event_type must be 0 (down) or 1 (up), got {kind}")
        name = fields[columns["node_name"]]
        prefix, dot, suffix = name.partition(".")
        if (system is not None and (not dot or prefix != system)) or (
            platform is not None and _integer(path, line_no, fields[columns["platform_id"]], "platform_id") != platform
        ):
            counts["other_system"] += 1
            continue
        start = _time(path, line_no, fields[columns["event_start_time"]], "event_start_time")
        stop = _time(path, line_no, fields[columns["event_stop_time"]], "event_stop_time")
        node_id = _integer(path, line_no, fields[columns["node_id"]], "node_id")
        if kind == UP:
            counts["up_intervals"] += 1
            continue
        counts["down_intervals"] += 1
        starts.append(start)
        stops.append(stop)
        numbered = dot and suffix.isascii() and suffix.isdigit() and len(suffix) <= len(str(MAX_NODE_NUMBER))
        if not numbered and not (name.isascii() and name.replace(".", "", 1).isdigit()) and first_unnumbered is None:
            first_unnumbered = (line_no, name)  # not <system>.<node> at all ("banana"): said in a warning
        elif not numbered and dot and suffix.isascii() and suffix.isdigit() and first_beyond is None:
            first_beyond = (line_no, name)  # <system>.<node> with a node number beyond any machine: said in a warning
        numbers.append(int(suffix) if numbered else -1)
        node_ids.append(node_id)
        line_nos.append(line_no)
    if columns is None:
        raise FailureLogFormatError(path, 1, f"no header line (expected the columns {' '.join(FTA_COLUMNS)})")
    if not starts:
        chosen = ", ".join(f"{key} {value}" for key, value in (("system", system), ("platform", platform)) if value is not None)
        raise ConfigurationError(f"{path}: no down interval (event_type 0){' for ' + chosen if chosen else ''}")
    numbers_array = np.array(numbers, dtype=np.int64)
    if (numbers_array < 0).any() or not _one_to_one(numbers, node_ids):
        # node_id is the node's identity: names without a node number, or names that do not name one node
        # each (the FTA prints <system>.<node> as a decimal, so 20.52 and 20.520 are one node, and one
        # node number recurs in every system), give way to the rank of the node id
        ranks = {node: rank for rank, node in enumerate(sorted(set(node_ids)))}
        numbers_array = np.array([ranks[node] for node in node_ids], dtype=np.int64)
        counts["nodes_from_ids"] = 1
        if first_unnumbered is not None:
            warnings.warn(
                f"{path}:{first_unnumbered[0]}: node_name {first_unnumbered[1]!r} is not <system>.<node>: "
                "nodes are numbered by the rank of their node_id instead (counted as nodes_from_ids)",
                stacklevel=2,
            )
        if first_beyond is not None:
            warnings.warn(
                f"{path}:{first_beyond[0]}: node_name {first_beyond[1]!r} numbers a node beyond any machine "
                f"(more than {MAX_NODE_NUMBER:,}{f' and the system has {nodes:,}' if nodes is not None else ''}): "
                "nodes are numbered by the rank of their node_id instead (counted as nodes_from_ids)",
                stacklevel=2,
            )
    if nodes is None:
        nodes = int(numbers_array.max()) + 1
        counts["nodes_inferred"] = 1
    elif numbers_array.max() >= nodes:
        index = int(np.argmax(numbers_array >= nodes))
        raise FailureLogFormatError(path, line_nos[index], f"node {numbers_array[index]} is not below the node count {nodes}")
    counts["nodes"] = nodes
    failed_at = np.array(starts)
    repair_at = np.array(stops)
    early = repair_at < failed_at
    counts["repair_before_failure"] = int(early.sum())
    repair_at = np.where(early, failed_at, repair_at)
    mapper = node_to_supernode or (lambda ids, count: ids * n_supernodes // count)
    supernodes = np.asarray(mapper(numbers_array, nodes), dtype=np.int64)
    if supernodes.min() < 0 or supernodes.max() >= n_supernodes:
        raise ConfigurationError(f"{path}: node mapping left the range 0..{n_supernodes - 1}")
    selection = "".join(f"#{key}={value}" for key, value in (("system", system), ("platform", platform)) if value is not None)
    return FailureLog(failed_at, supernodes, repair_at, source=f"{path}{selection}", sha256=file_sha256(path), counts=counts)
