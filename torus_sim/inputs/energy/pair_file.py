"""What the energy inputs share: a base that may read a file, and its CSV of two numbers per line, read strictly.

:class:`EnergyInput` is the base of the job-power sources and the tariffs (a name, ``name:argument``
or a file, as every input registry selects); :func:`built` makes one from its registry and reads its
file outside the registry's guard, so a malformed line keeps its own error (file and line named).
"""

from __future__ import annotations

import math

import numpy as np

from torus_sim.core.errors import InputFileError, InputFormatError
from torus_sim.core.files import require_file
from torus_sim.inputs.input_source import InputSource

__all__ = ["EnergyInput", "PairFileError", "built", "read_pairs"]

MAX_ROWS = 10_000_000
"""The most data lines a pair file may have (a year of per-second prices is 31.5 million: resample)."""


class EnergyInput(InputSource):
    """Base of the energy inputs (job power, tariffs): a name for the header and a file read once before the run.

    Hooks a subclass overrides:
        describe() -> str: a few words for the run's header (its name by default).
        load(): read its file, raising the reader's errors (nothing by default).
    """

    def describe(self) -> str:
        """A few words for the run's header."""
        return self.name

    def load(self) -> None:
        """Read what the input reads (a file), raising its reader's errors (called once, before the run)."""


def built(registry, spec: str):
    """The input ``spec`` selects from ``registry``, built and loaded (its file's errors keep their type and sentence)."""
    made = registry.build_selected(spec)
    made.load()
    return made


class PairFileError(InputFormatError):
    """A malformed line of a job-power or price file."""

    kind = "power or price"


def read_pairs(path: str, header: tuple[str, str], what: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The two columns of a CSV file whose first line is ``header`` (``#`` lines and blank lines skipped).

    Args:
        path: the file.
        header: the two column names expected on the first line (``("time", "price")``).
        what: what the file is for, in messages (``price file``).

    Returns:
        ``(first, second, line_numbers)``: float64 arrays in file order and each value's 1-based line.

    Raises:
        FileNotFoundError: no file there.
        InputFileError: no data line, or more than :data:`MAX_ROWS`.
        PairFileError: a line without two finite numbers, or a wrong header (file and line named).
    """
    checked = require_file(path, what)
    first, second, lines = [], [], []
    with open(checked, encoding="utf-8", errors="replace") as handle:
        seen_header = False
        for line_no, line in enumerate(handle, start=1):
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            parts = [part.strip() for part in text.split(",")]
            if not seen_header:
                if [part.lower() for part in parts] != list(header):
                    raise PairFileError(path, line_no, f"expected the header {','.join(header)}, got {text[:80]!r}")
                seen_header = True
                continue
            try:
                if len(parts) != 2:
                    raise ValueError
                values = float(parts[0]), float(parts[1])
                if not all(math.isfinite(value) for value in values):
                    raise ValueError
            except ValueError:
                raise PairFileError(
                    path, line_no, f"expected two finite numbers ({','.join(header)}), got {text[:80]!r}"
                ) from None
            first.append(values[0])
            second.append(values[1])
            lines.append(line_no)
            if len(first) > MAX_ROWS:
                raise InputFileError(path, f"more than {MAX_ROWS:,} lines: resample it")
    if not first:
        raise InputFileError(path, f"no data line under the header {','.join(header)}: the {what} is empty")
    return np.asarray(first, dtype=float), np.asarray(second, dtype=float), np.asarray(lines, dtype=np.int64)
