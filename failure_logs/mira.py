"""Reader for Mira's FATAL RAS events (Blue Gene/Q, ALCF, 2013-2018) as LogAider groups them.

Three files of LogAider's repository describe Mira's failures (bundled in ``failure_logs/data/mira``):

* ``allEvents.txt-<threshold>.cor``: the FATAL RAS records grouped into events by LogAider's
  spatio-temporal similarity filter. Line 1 is ``#count=<events>``; a line ``event ...`` is an
  event's leader, a line starting with a tab one of its member records (first field: its
  similarity score). Fields: record id, MSG_ID, RECID, SEVERITY, CATEGORY, COMPONENT, start and
  end time (``YYYY-MM-DD;hh:mm:ss.us``), record count, location type, LOCATION (absent for ``NULL``),
  block size.
* ``total-reservation.txt``: Cobalt's hardware-repair reservations (CSV: start, end, ..., name
  ``hw.R20-M0-N02-J14``, ..., block ``MIR-08000-3B331-512``).
* ``maintenance_periods.txt``: whole-machine maintenance, one ``start,end`` per line.

**Where a midplane sits in the torus** is read from the reservations, not guessed. A block name
``MIR-<A B C D E of its first node>-<... of its last node>-<nodes>`` (hex digits) gives a
one-midplane (512-node) block's place in the 5-D node torus; dividing A..D by 4 (a midplane is
4x4x4x4x2 nodes) gives its coordinate in the 2x3x4x4 midplane torus. Every reservation named
``hw.Rxy-Mz...`` on a one-midplane block votes for midplane ``Rxy-Mz`` at that coordinate; the
majority wins (:func:`derive_midplane_map`). On the published file: 617 such reservations name
all 96 midplanes, the majorities give 96 distinct coordinates (a bijection), and 18 midplanes
also get a minority vote for a neighbouring block (23 reservations, e.g. link-error repairs that
name one end of the link) which last-one-wins would have taken.

**I/O drawers** (``Qxy-Iz...``) serve compute racks, one drawer per rack (ALCF: "every rack
connects to one drawer"). The drawer ``Q<r>G-I<k>`` serves rack ``R<r><k>`` and ``Q<r>H-I<k>`` rack
``R<r><k+8>`` (hex); the reservations that name a drawer and one rack's block agree with this rule
for every drawer they name (:func:`io_drawer_rack`, checked in the tests). ``io_drawers`` says
whether a drawer's event takes down both midplanes of its rack (a BG/Q block cannot run without
its I/O nodes) or is only counted.

**Each event is one failure** at its leader's location: a location ``Rxy-Mz...`` fails that
midplane; a rack-level location ``Rxy-...`` (bulk power, links) both midplanes of the rack; an I/O
drawer as above; ``NULL`` and anything else is counted (``no_location``, ``unknown_location``),
never silently dropped. Maintenance periods are whole-machine downtime: one failure of every
midplane at the start, repaired at the end (``maintenance = False`` leaves them out). With
``--downtime log``, a failure's repair is the end of the first hardware-repair reservation on
its midplane that starts within ``repair_window`` seconds of it (or is under way); NaN otherwise.

Times are local (US Central) times taken as written, as the LANL reader does.

References:
    S. Di et al., "LogAider: A tool for mining potential correlations of HPC log events",
    CCGrid 2017; ALCF, "Machine Overview for Mira" (racks, midplanes, I/O drawers).
"""

from __future__ import annotations

import calendar
import csv
import io
import re
import warnings
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from importlib.resources import files
from itertools import product
from pathlib import Path

import numpy as np

from failure_logs.events import FailureLog
from torus_sim.core.errors import ConfigurationError, FailureLogFormatError
from torus_sim.core.files import file_sha256, input_lines, input_text

__all__ = [
    "BUNDLED_MIRA_EVENTS",
    "BUNDLED_MIRA_MAINTENANCE",
    "BUNDLED_MIRA_RESERVATIONS",
    "MIRA_DIMS",
    "MidplaneMap",
    "Reservation",
    "derive_midplane_map",
    "io_drawer_rack",
    "read_maintenance",
    "read_mira",
    "read_reservations",
]

_DATA = files("failure_logs") / "data" / "mira"
BUNDLED_MIRA_EVENTS = Path(str(_DATA / "allEvents.txt-0.5.cor.gz"))
"""LogAider's 1,384 FATAL events of Mira (threshold 0.5), bundled (see failure_logs/data/mira/README.md)."""
BUNDLED_MIRA_RESERVATIONS = Path(str(_DATA / "total-reservation.txt.gz"))
"""Mira's 935 hardware-repair reservations, bundled."""
BUNDLED_MIRA_MAINTENANCE = Path(str(_DATA / "maintenance_periods.txt"))
"""Mira's 160 maintenance periods, bundled."""

MIRA_DIMS = (2, 3, 4, 4)
"""Mira's midplane torus (ALCF machine overview: a 5-D node torus of 8x12x16x16x2, midplanes of 4x4x4x4x2)."""

REPAIR_WINDOW = 7 * 86400.0
"""Seconds after a failure within which a repair reservation on its midplane is taken as its repair."""

_MIDPLANE = re.compile(r"R([0-9A-F]{2})-M([01])")
_RACK = re.compile(r"R([0-9A-F]{2})(?:-|$)")
_DRAWER = re.compile(r"Q([0-9A-F])([GH])-I([0-7])")
_BLOCK = re.compile(r"MIR-([0-9A-F]{5})-([0-9A-F]{5})-(\d+)")
_TIME = "%Y-%m-%d;%H:%M:%S.%f"


def _seconds(text: str, form: str) -> float:
    """Seconds since 1970 of a local time taken as written (as UTC); ValueError when unreadable."""
    moment = datetime.strptime(text, form)
    return calendar.timegm(moment.timetuple()) + moment.microsecond / 1e6


def _block_midplanes(block: str) -> list[tuple[int, ...]] | None:
    """The midplane coordinates of a block name ``MIR-<first>-<last>-<nodes>`` (None if not one)."""
    found = _BLOCK.fullmatch(block)
    if not found:
        return None
    first = [int(c, 16) // 4 for c in found.group(1)[:4]]
    last = [int(c, 16) // 4 for c in found.group(2)[:4]]
    if any(lo > hi or hi >= dim for lo, hi, dim in zip(first, last, MIRA_DIMS, strict=True)):
        return None
    return list(product(*(range(lo, hi + 1) for lo, hi in zip(first, last, strict=True))))


@dataclass(frozen=True)
class Reservation:
    """A Cobalt hardware-repair reservation.

    Attributes:
        start_at: start, seconds (local time as written).
        end_at: end, seconds.
        name: the reservation's name (``hw.R20-M0-N02-J14``).
        blocks: the block names, as written.
        midplanes: coordinates of the midplanes its blocks cover (2x3x4x4 torus).
        line: the line of the file.
    """

    start_at: float
    end_at: float
    name: str
    blocks: tuple[str, ...]
    midplanes: frozenset[tuple[int, ...]]
    line: int


def read_reservations(path: str | Path = BUNDLED_MIRA_RESERVATIONS) -> list[Reservation]:
    """Read the hardware-repair reservations (``total-reservation.txt``, plain or compressed).

    Args:
        path: the CSV file.

    Returns:
        One :class:`Reservation` per line, in file order; a block that is not a ``MIR-...`` name
        (``MIR-...-1-1024`` sub-blocks included, whose node range still names their midplanes) adds
        no midplane when it cannot be read.

    Raises:
        FileNotFoundError: no such file.
        InputFileError: a directory, or truncated or corrupt compressed data.
        FailureLogFormatError: a line of fewer than 14 fields or with an unreadable time.
    """
    text = input_text(path, "reservation file")
    reservations = []
    for number, row in enumerate(csv.reader(io.StringIO(text)), start=1):
        if not row or not "".join(row).strip():
            continue
        if len(row) < 14:
            raise FailureLogFormatError(path, number, f"expected at least 14 CSV fields (start, end, ..., block), got {len(row)}")
        try:
            start, end = (
                _seconds(text.strip(), "%Y-%m-%d %H:%M:%S.%f" if "." in text else "%Y-%m-%d %H:%M:%S") for text in row[:2]
            )
        except ValueError:
            raise FailureLogFormatError(path, number, f"unreadable start or end time: {row[0]!r}, {row[1]!r}") from None
        blocks = tuple(b.strip() for b in row[13].split(",") if b.strip())
        covered = set()
        for block in blocks:
            base = re.sub(r"^(MIR-[0-9A-F]{5}-[0-9A-F]{5})-\d+-(\d+)$", r"\1-\2", block)  # MIR-44C00-77F71-1-1024
            covered.update(_block_midplanes(base) or ())
        reservations.append(Reservation(start, max(end, start), row[4].strip(), blocks, frozenset(covered), number))
    return reservations


@dataclass
class MidplaneMap:
    """Where each of Mira's 96 midplanes (``R00-M0`` .. ``R2F-M1``) sits in the 2x3x4x4 torus.

    Attributes:
        coordinates: midplane name -> its coordinate ``(a, b, c, d)``.
        votes: midplane name -> Counter of the coordinates its one-midplane reservations named.
        minority: reservations that named another coordinate than their midplane's majority.

    References:
        LogAider's ``total-reservation.txt``; this module's docstring (the derivation).
    """

    coordinates: dict[str, tuple[int, ...]]
    votes: dict[str, Counter] = field(default_factory=dict)
    minority: int = 0

    def index(self, midplane: str) -> int:
        """Row-major index of a midplane in the 2x3x4x4 torus.

        Args:
            midplane: ``Rxy-Mz`` (rack in hex, midplane 0 or 1).

        Returns:
            The supernode index in ``[0, 96)``.

        Raises:
            KeyError: a midplane the map does not hold.
        """
        return int(np.ravel_multi_index(self.coordinates[midplane], MIRA_DIMS))


def derive_midplane_map(reservations: list[Reservation]) -> MidplaneMap:
    """The midplane -> torus coordinate map, by majority vote of the one-midplane repair reservations.

    Args:
        reservations: from :func:`read_reservations`.

    Returns:
        The map of all 96 midplanes.

    Raises:
        ConfigurationError: the reservations do not name all 96 midplanes, or two midplanes get
            one coordinate (not a bijection).

    References:
        This module's docstring; ALCF's block naming (first and last node coordinates, hex).
    """
    votes: dict[str, Counter] = defaultdict(Counter)
    for reservation in reservations:
        named = re.match(r"hw\.(R[0-9A-F]{2}-M[01])", reservation.name)
        if named and len(reservation.blocks) == 1 and reservation.blocks[0].endswith("-512"):
            midplanes = _block_midplanes(reservation.blocks[0])
            if midplanes and len(midplanes) == 1:
                votes[named.group(1)][midplanes[0]] += 1
    coordinates = {name: counter.most_common(1)[0][0] for name, counter in sorted(votes.items())}
    minority = sum(sum(counter.values()) - counter.most_common(1)[0][1] for counter in votes.values())
    size = int(np.prod(MIRA_DIMS))
    if len(coordinates) != size:
        raise ConfigurationError(f"the repair reservations place {len(coordinates)} midplanes; Mira has {size}")
    if len(set(coordinates.values())) != size:
        raise ConfigurationError("the repair reservations' majority places two midplanes at one torus coordinate")
    return MidplaneMap(coordinates, dict(votes), minority)


def io_drawer_rack(location: str) -> str | None:
    """The compute rack an I/O drawer serves: ``Q<r>G-I<k>`` -> ``R<r><k>``, ``Q<r>H-I<k>`` -> ``R<r><k + 8>``.

    Args:
        location: a location starting with an I/O drawer (``Q0H-I4-J03``).

    Returns:
        The rack (``R0C``), or None when the location is no I/O drawer.

    References:
        This module's docstring (the rule and the reservations that confirm it).
    """
    found = _DRAWER.match(location)
    if not found:
        return None
    row, half, drawer = found.group(1), found.group(2), int(found.group(3))
    return f"R{row}{drawer + (8 if half == 'H' else 0):X}"


def read_maintenance(path: str | Path = BUNDLED_MIRA_MAINTENANCE) -> list[tuple[float, float]]:
    """Read the maintenance periods: one ``start,end`` (``YYYY-MM-DD hh:mm:ss``) per line.

    Args:
        path: ``maintenance_periods.txt`` (plain or compressed); the bundled one by default.

    Returns:
        ``(start, end)`` seconds (local time as written), in file order.

    Raises:
        FileNotFoundError: no such file.
        FailureLogFormatError: a line that is not two times, or an end before its start.

    References:
        LogAider's ``schema/maintenance_periods.txt`` (Di et al., CCGrid 2017).
    """
    periods = []
    for number, line in enumerate(input_lines(path, "maintenance file"), start=1):
        if not line.strip():
            continue
        parts = line.strip().split(",")
        try:
            start, end = (_seconds(part.strip(), "%Y-%m-%d %H:%M:%S") for part in parts) if len(parts) == 2 else (None, None)
        except ValueError:
            start = end = None
        if start is None:
            raise FailureLogFormatError(path, number, f"expected 'start,end' as YYYY-MM-DD hh:mm:ss, got {line.strip()!r}")
        if end < start:
            raise FailureLogFormatError(path, number, "the maintenance ends before it starts")
        periods.append((start, end))
    return periods


def _fields(line: str, path, number: int, member: bool) -> tuple[str, float, str, str, int]:
    """(severity, start, location type, location, record count) of an event or member line."""
    lead, *parts = line.split()  # lead: "event" or the similarity score
    if member:
        try:
            float(lead)
        except ValueError:
            raise FailureLogFormatError(path, number, f"a member line starts with its similarity score, got {lead!r}") from None
    if len(parts) not in (11, 12):
        raise FailureLogFormatError(
            path,
            number,
            f"expected 12 or 13 fields (id, MSG_ID, RECID, severity, ..., location, block size), got {len(parts) + 1}",
        )
    severity, start_text, count_text, kind = parts[3], parts[6], parts[8], parts[9]
    location = parts[10] if len(parts) == 12 else ""
    try:
        start = _seconds(start_text, _TIME if "." in start_text else _TIME.removesuffix(".%f"))
    except ValueError:
        raise FailureLogFormatError(
            path, number, f"unreadable start time {start_text!r} (expected YYYY-MM-DD;hh:mm:ss[.us])"
        ) from None
    if not count_text.isdigit():
        raise FailureLogFormatError(path, number, f"the record count must be a whole number, got {count_text!r}")
    return severity, start, kind, location, int(count_text)


def read_mira(
    path: str | Path = BUNDLED_MIRA_EVENTS,
    n_supernodes: int = 96,
    reservations: str | Path | None = BUNDLED_MIRA_RESERVATIONS,
    maintenance: str | Path | None = BUNDLED_MIRA_MAINTENANCE,
    io_drawers: bool = True,
    include_maintenance: bool = True,
    repair_window: float = REPAIR_WINDOW,
) -> FailureLog:
    """Read LogAider's event file of Mira as failures of the 96 midplanes of the 2x3x4x4 torus.

    Args:
        path: ``allEvents.txt-<threshold>.cor`` (plain or compressed).
        n_supernodes: the platform's supernodes; must be 96 (Mira's midplanes).
        reservations: the repair reservations (they give the midplane map and the repairs); the
            bundled file when not given.
        maintenance: the maintenance periods, or None for none.
        io_drawers: an I/O drawer's event takes down the two midplanes of the rack it serves
            (else it is only counted, ``io_drawer_ignored``).
        include_maintenance: maintenance periods as whole-machine downtime.
        repair_window: seconds after a failure within which a repair reservation on its midplane
            is its repair.

    Returns:
        The failures, repairs where a reservation gives one (NaN elsewhere). ``counts``: ``events``,
        ``member_records``, ``midplane``, ``rack_level``, ``io_drawer`` / ``io_drawer_ignored``,
        ``no_location``, ``unknown_location``, ``not_fatal``, ``maintenance_periods``,
        ``repair_from_reservation``, ``map_minority_votes``, ``outside_machine`` (a midplane the map does
        not hold, such as ``R99-M0``: dropped, the first named in a warning).

    Raises:
        FileNotFoundError: a file does not exist.
        InputFileError: a directory, or truncated or corrupt compressed data.
        FailureLogFormatError: a malformed line (file and line named), no ``#count=`` first line, or
            fewer events than the first line announces (a truncated file).
        ConfigurationError: the platform is not Mira's 96 midplanes, or the reservations do not
            give a bijective midplane map.

    References:
        This module's docstring; LogAider (CCGrid 2017).
    """
    size = int(np.prod(MIRA_DIMS))
    if n_supernodes != size:
        raise ConfigurationError(
            f"the Mira log names the {size} midplanes of the {'x'.join(map(str, MIRA_DIMS))} torus; the platform has "
            f"{n_supernodes} (use --machine mira)"
        )
    reserved = read_reservations(reservations if reservations is not None else BUNDLED_MIRA_RESERVATIONS)
    midplane_map = derive_midplane_map(reserved)
    counts: Counter = Counter(map_minority_votes=midplane_map.minority)
    failed_at: list[float] = []
    nodes: list[int] = []
    announced = None
    last_line = 0
    first_outside: tuple[int, str] | None = None
    for number, line in enumerate(input_lines(path, "failure log"), start=1):
        last_line = number
        if number == 1:
            found = re.fullmatch(r"#count=(\d+)", line.strip())
            if not found:
                raise FailureLogFormatError(
                    path, 1, f"expected '#count=<events>' (LogAider's event file), got {line.strip()[:60]!r}"
                )
            announced = int(found.group(1))
            continue
        if not line.strip():
            continue
        member = line.startswith("\t")
        if not member and not line.startswith("event "):
            raise FailureLogFormatError(
                path, number, f"expected an 'event' line or a tab-indented member, got {line.strip()[:60]!r}"
            )
        severity, start, kind, location, _ = _fields(line, path, number, member)
        if member:
            counts["member_records"] += 1
            continue
        counts["events"] += 1
        if severity != "FATAL":
            counts["not_fatal"] += 1
            continue
        midplanes = _event_midplanes(kind, location, io_drawers, counts)
        for midplane in midplanes:
            if midplane not in midplane_map.coordinates:  # a rack Mira does not have (R99): counted and warned about
                counts["outside_machine"] += 1
                first_outside = first_outside or (number, location)
                continue
            failed_at.append(start)
            nodes.append(midplane_map.index(midplane))
    if announced is None:
        raise FailureLogFormatError(path, 1, "the file is empty (expected '#count=<events>' and the events)")
    if first_outside is not None:
        warnings.warn(
            f"{path}:{first_outside[0]}: {counts['outside_machine']:,} FATAL event midplane(s) outside Mira's map "
            f"(first: {first_outside[1]}) were dropped (counted as outside_machine)",
            stacklevel=2,
        )
    if counts["events"] < announced:
        raise FailureLogFormatError(
            path, last_line, f"truncated: the first line announces {announced:,} events, the file holds {counts['events']:,}"
        )
    failed = np.array(failed_at, dtype=np.float64)
    supernodes = np.array(nodes, dtype=np.int64)
    repairs = _repairs(failed, supernodes, reserved, midplane_map, repair_window)
    counts["repair_from_reservation"] = int(np.count_nonzero(~np.isnan(repairs)))
    if include_maintenance and maintenance is not None:
        periods = read_maintenance(maintenance)
        counts["maintenance_periods"] = len(periods)
        if periods:
            starts, ends = np.array(periods, dtype=np.float64).T
            failed = np.concatenate([failed, np.repeat(starts, size)])
            supernodes = np.concatenate([supernodes, np.tile(np.arange(size, dtype=np.int64), len(periods))])
            repairs = np.concatenate([repairs, np.repeat(ends, size)])
    source = (
        f"{path}#mira"
        + ("" if io_drawers else ",io_drawers=off")
        + ("" if include_maintenance and maintenance else ",maintenance=off")
    )
    return FailureLog(failed, supernodes, repairs, source=source, sha256=file_sha256(path), counts=counts)


def _event_midplanes(kind: str, location: str, io_drawers: bool, counts: Counter) -> list[str]:
    """The midplanes an event's leader takes down (counted by kind)."""
    midplane = _MIDPLANE.match(location)
    if midplane:
        counts["midplane"] += 1
        return [f"R{midplane.group(1)}-M{midplane.group(2)}"]
    rack = _RACK.match(location)
    if rack:
        counts["rack_level"] += 1
        return [f"R{rack.group(1)}-M0", f"R{rack.group(1)}-M1"]
    served = io_drawer_rack(location)
    if served is not None:
        if not io_drawers:
            counts["io_drawer_ignored"] += 1
            return []
        counts["io_drawer"] += 1
        return [f"{served}-M0", f"{served}-M1"]
    counts["no_location" if kind == "NULL" or not location else "unknown_location"] += 1
    return []


def _repairs(
    failed_at: np.ndarray, supernodes: np.ndarray, reserved: list[Reservation], midplane_map: MidplaneMap, window: float
) -> np.ndarray:
    """Each failure's repair: the end of the first hw reservation on its midplane starting within ``window`` (or under way)."""
    by_midplane: dict[int, list[tuple[float, float]]] = defaultdict(list)
    for reservation in reserved:
        if reservation.name.startswith("hw."):
            for coordinate in reservation.midplanes:
                by_midplane[int(np.ravel_multi_index(coordinate, MIRA_DIMS))].append((reservation.start_at, reservation.end_at))
    repairs = np.full(len(failed_at), np.nan)
    for i, (moment, node) in enumerate(zip(failed_at, supernodes, strict=True)):
        candidates = [(start, end) for start, end in by_midplane.get(int(node), ()) if end > moment and start <= moment + window]
        if candidates:
            repairs[i] = min(candidates)[1]
    return repairs
