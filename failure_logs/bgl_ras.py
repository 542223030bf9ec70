"""Reader for the BlueGene/L RAS log in Loghub's format, and the midplane-to-supernode mapping.

Each line: ``Label EpochSec YYYY.MM.DD Location YYYY-MM-DD-hh.mm.ss.us LocationRepeat Type
Component Level Content...``. A failure is a line whose Level is FATAL (selectable). The
location ``Rxy-Mz-...`` names rack ``xy`` (rows and columns 0..7) and midplane ``z`` (0..1):
one of 128 midplanes of 512 nodes, i.e. one supernode of the 4x4x8 torus (BGL-FAULT §3.1).

The log does not say where a midplane sits in the torus. :class:`MidplaneMapping` is the
replaceable rule; the default (:meth:`MidplaneMapping.default`) is a documented bijection
with no physical claim::

    x = row // 2,  y = column // 2,  z = 4 * (row % 2) + 2 * (column % 2) + midplane

Lines whose location is ``NULL``, ``UNKNOWN_LOCATION`` or not of the form ``Rxy-Mz`` are
counted under ``unknown_location``, never guessed. The RAS log records no repair time, so every
failure's ``repair_at`` is NaN.

References:
    Oliner & Stearley, "What Supercomputers Say", DSN 2007; Zhu et al., Loghub, ISSRE 2023.
"""

from __future__ import annotations

import csv
import re
import warnings
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from failure_logs.events import MAX_EPOCH, FailureLog
from torus_sim.core.errors import ConfigurationError, FailureLogFormatError, InputFileError
from torus_sim.core.files import file_sha256, input_lines
from torus_sim.machine.topology import BGL_SUPERNODE_TORUS, Torus

__all__ = ["MidplaneMapping", "read_bgl_ras"]

_MIDPLANE = re.compile(r"^R([0-7])([0-7])-M([01])(?:-|$)")
_MIDPLANE_LIKE = re.compile(r"^R[0-9A-Za-z]{1,3}-M[0-9A-Za-z]+(?:-|$)")  # a rack-midplane location, of any machine


@dataclass(frozen=True)
class MidplaneMapping:
    """Which supernode each BG/L midplane ``Rxy-Mz`` is.

    Attributes:
        supernode_of: maps a midplane name such as ``"R23-M0"`` to a supernode index.
        name: a label for manifests.
    """

    supernode_of: dict[str, int]
    name: str = "custom"

    @classmethod
    def default(cls, torus: Torus = BGL_SUPERNODE_TORUS) -> MidplaneMapping:
        """The documented default bijection of the 128 midplanes onto the 4x4x8 torus.

        Raises:
            ConfigurationError: the torus is not 4x4x8.
        """
        if torus.dims != (4, 4, 8):
            raise ConfigurationError("the default midplane mapping needs the 4x4x8 supernode torus")
        mapping = {}
        for row in range(8):
            for column in range(8):
                for midplane in range(2):
                    x, y, z = row // 2, column // 2, 4 * (row % 2) + 2 * (column % 2) + midplane
                    mapping[f"R{row}{column}-M{midplane}"] = torus.index((x, y, z))
        return cls(mapping, name="default")

    @classmethod
    def from_csv(cls, path: str | Path) -> MidplaneMapping:
        """Read a mapping from a CSV file with columns ``midplane,supernode``.

        Raises:
            FailureLogFormatError: a row without a midplane name or an integer supernode.
        """
        mapping = {}
        with open(path, newline="") as handle:
            for line_no, row in enumerate(csv.DictReader(handle), start=2):
                try:
                    mapping[row["midplane"].strip()] = int(row["supernode"])
                except (KeyError, ValueError, AttributeError):
                    raise FailureLogFormatError(path, line_no, "expected columns midplane,supernode") from None
        return cls(mapping, name=str(path))

    def midplane_of(self, location: str) -> str | None:
        """The ``Rxy-Mz`` midplane of a RAS location, or None when the location names none."""
        match = _MIDPLANE.match(location)
        return f"R{match.group(1)}{match.group(2)}-M{match.group(3)}" if match else None


def read_bgl_ras(
    path: str | Path,
    mapping: MidplaneMapping | None = None,
    levels: tuple[str, ...] = ("FATAL",),
) -> FailureLog:
    """Read failures from a BG/L RAS log in Loghub's format.

    Args:
        path: the log file.
        mapping: midplane to supernode; :meth:`MidplaneMapping.default` when None.
        levels: which Level values count as failures (FATAL by default; FAILURE in the full log).

    Returns:
        One failure per matching line, at its ``EpochSec`` time (seconds since 1970), on the
        mapped supernode, with unknown repair time. ``counts`` holds ``lines``,
        ``not_failure_level``, ``unknown_location`` (no midplane: ``NULL``, a service node),
        ``outside_machine`` (a rack-midplane location this machine does not have, ``R99-M9-N9``: a
        warning names the first) and ``unmapped_midplane`` (a BG/L midplane the mapping leaves out).

    Raises:
        FileNotFoundError: no such file.
        InputFileError: a directory, or a truncated or corrupt compressed file.
        FailureLogFormatError: a line with fewer than 9 fields, or an EpochSec that is not an
            integer in 0..:data:`failure_logs.events.MAX_EPOCH`.
        InputFileError: an empty file (no line at all).
    """
    mapping = mapping or MidplaneMapping.default()
    counts: Counter = Counter()
    times, supernodes = [], []
    first_outside: tuple[int, str] | None = None
    for line_no, line in enumerate(input_lines(path, "failure log"), start=1):
        if not line.strip():
            continue
        counts["lines"] += 1
        fields = line.split(maxsplit=9)
        if len(fields) < 9:
            raise FailureLogFormatError(path, line_no, f"expected at least 9 fields, found {len(fields)}")
        try:
            epoch = int(fields[1])
        except ValueError:
            raise FailureLogFormatError(path, line_no, f"EpochSec is not an integer: {fields[1]!r}") from None
        if not 0 <= epoch <= MAX_EPOCH:
            raise FailureLogFormatError(path, line_no, f"EpochSec {epoch} is outside 0..{MAX_EPOCH:.0e} (seconds since 1970)")
        if fields[8] not in levels:
            counts["not_failure_level"] += 1
            continue
        midplane = mapping.midplane_of(fields[3])
        if midplane is None:
            if _MIDPLANE_LIKE.match(fields[3]):
                counts["outside_machine"] += 1
                first_outside = first_outside or (line_no, fields[3])
            else:
                counts["unknown_location"] += 1
            continue
        if midplane not in mapping.supernode_of:
            counts["unmapped_midplane"] += 1
            continue
        times.append(float(epoch))
        supernodes.append(mapping.supernode_of[midplane])
    if not counts["lines"]:  # the rule of every reader: an empty file is refused (a log without failures is not)
        raise InputFileError(path, "is empty: a BG/L RAS log has one event per line")
    if first_outside is not None:
        line_no, location = first_outside
        warnings.warn(
            f"{path}:{line_no}: {counts['outside_machine']:,} {'/'.join(levels)} event(s) at locations outside the machine "
            f"(first: {location}) were dropped (counted as outside_machine)",
            stacklevel=2,
        )
    return FailureLog(
        failed_at=np.array(times, dtype=np.float64),
        supernodes=np.array(supernodes, dtype=np.int64),
        repair_at=np.full(len(times), np.nan),
        source=str(path),
        sha256=file_sha256(path),
        counts=counts,
    )
