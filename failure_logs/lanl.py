"""Reader for the LANL failure data (Schroeder & Gibson, LA-UR-05-7318).

A CSV with one record per failure: the system, the node (``nodenumz``, from 0), when the
problem started and when it was fixed (``m/d/yyyy h:mm``, local time, taken as written), and
the downtime in minutes. Unlike the BG/L RAS log it gives real repair times.

Nodes of the chosen system are mapped onto the platform's supernodes in contiguous blocks:
``supernode = nodenumz * n_supernodes // nodes`` (system 20's 512 nodes give 4 nodes per
supernode of a 128-supernode torus). The rule is a parameter-free, documented choice; replace
it by passing ``node_to_supernode``.

References:
    Schroeder & Gibson, "A large-scale study of failures in high-performance computing
    systems", DSN 2006; data LA-UR-05-7318 (recognize Los Alamos for providing these data).
"""

from __future__ import annotations

import io
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np

from failure_logs.events import FailureLog
from torus_sim.core.errors import ConfigurationError, FailureLogFormatError
from torus_sim.core.files import file_sha256, input_text

__all__ = ["LANL_COLUMNS", "MAX_NODES", "read_lanl"]

LANL_COLUMNS = ("System", "nodes", "nodenumz", "Prob Started", "Prob Fixed", "Down Time")
"""The columns the reader needs."""

MAX_NODES = 10**7
"""The largest node number or node count a failure record may give (no machine has more nodes)."""

_TIME_FORMAT = "%m/%d/%Y %H:%M"


def read_lanl(
    path: str | Path,
    system: int = 20,
    n_supernodes: int = 128,
    node_to_supernode: Callable[[np.ndarray, int], np.ndarray] | None = None,
) -> FailureLog:
    """Read one system's failures, with their repair times.

    Args:
        path: the CSV (plain or ``.xz``/``.gz``, as pandas infers from the name).
        system: the LANL system number (18 and 19 have 1024 nodes, 20 has 512).
        n_supernodes: supernodes of the simulated platform.
        node_to_supernode: maps ``(nodenumz array, system node count)`` to supernode indices;
            the block mapping of the module docstring when None.

    Returns:
        Failures at ``Prob Started`` with ``repair_at`` = ``Prob Fixed`` (seconds since 1970,
        local time taken as UTC). ``counts`` holds ``records`` (the system's rows) and
        ``repair_before_failure`` (rows whose fix precedes the start; their repair is set to the
        failure time, i.e. zero downtime).

    Raises:
        FileNotFoundError: no such file.
        InputFileError: a directory, or a truncated or corrupt compressed file.
        FailureLogFormatError: no header, a missing column, a line that is not CSV, or a row of
            the system with an unreadable time or a node number that is not an integer in
            0..:data:`MAX_NODES` (naming the CSV line).
        ConfigurationError: the system has no rows.
    """
    import pandas as pd  # here: the failure sources' registry (and the command line's --help) reads this module

    text = input_text(path, "failure log")
    try:
        table = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    except pd.errors.EmptyDataError:
        raise FailureLogFormatError(path, 1, f"no header line (expected the columns {list(LANL_COLUMNS)})") from None
    except pd.errors.ParserError as error:
        line = re.search(r"line (\d+)", str(error))
        row = re.search(r"row (\d+)", str(error))  # pandas counts rows from the header, row 0
        number = int(line.group(1)) if line else int(row.group(1)) + 1 if row else 1
        raise FailureLogFormatError(path, number, f"not a CSV table: {error}") from None
    missing = [column for column in LANL_COLUMNS if column not in table.columns]
    if missing:
        raise FailureLogFormatError(path, 1, f"missing columns {missing}")
    table["line_no"] = np.arange(len(table)) + 2  # the header is line 1
    rows = table[table["System"].str.strip() == str(system)]
    if rows.empty:
        raise ConfigurationError(f"{path}: no failure records for system {system}")
    started = pd.to_datetime(rows["Prob Started"].str.strip(), format=_TIME_FORMAT, errors="coerce")
    fixed = pd.to_datetime(rows["Prob Fixed"].str.strip(), format=_TIME_FORMAT, errors="coerce")
    nodes = pd.to_numeric(rows["nodenumz"].str.strip(), errors="coerce")
    system_nodes = pd.to_numeric(rows["nodes"].str.strip(), errors="coerce")
    for name, values in (("Prob Started", started), ("Prob Fixed", fixed), ("nodenumz", nodes), ("nodes", system_nodes)):
        bad = values.isna().to_numpy()
        if bad.any():
            row = rows.iloc[int(np.argmax(bad))]
            raise FailureLogFormatError(path, int(row["line_no"]), f"unreadable {name!r}: {row[name]!r}")
    for name, values, lowest in (("nodenumz", nodes, 0), ("nodes", system_nodes, 1)):
        bad = ~((values >= lowest) & (values <= MAX_NODES) & (values % 1 == 0)).to_numpy()
        if bad.any():
            row = rows.iloc[int(np.argmax(bad))]
            raise FailureLogFormatError(
                path, int(row["line_no"]), f"{name!r} must be an integer in {lowest}..{MAX_NODES}: {row[name]!r}"
            )
    epoch = pd.Timestamp("1970-01-01")
    failed_at = ((started - epoch).dt.total_seconds()).to_numpy(dtype=np.float64)
    repair_at = ((fixed - epoch).dt.total_seconds()).to_numpy(dtype=np.float64)
    counts: Counter = Counter(records=len(rows))
    early = repair_at < failed_at
    counts["repair_before_failure"] = int(early.sum())
    repair_at = np.where(early, failed_at, repair_at)
    node_count = int(system_nodes.iloc[0])
    node_ids = nodes.to_numpy(dtype=np.int64)
    mapper = node_to_supernode or (lambda ids, count: ids * n_supernodes // count)
    beyond = node_ids >= node_count
    if beyond.any():
        row = rows.iloc[int(np.argmax(beyond))]
        raise FailureLogFormatError(
            path, int(row["line_no"]), f"'nodenumz' {row['nodenumz'].strip()} is not below the system's node count {node_count}"
        )
    supernodes = np.asarray(mapper(node_ids, node_count), dtype=np.int64)
    if len(supernodes) and (supernodes.min() < 0 or supernodes.max() >= n_supernodes):
        outside = (supernodes < 0) | (supernodes >= n_supernodes)
        row = rows.iloc[int(np.argmax(outside))]
        raise FailureLogFormatError(path, int(row["line_no"]), f"node mapping left the range 0..{n_supernodes - 1}")
    return FailureLog(failed_at, supernodes, repair_at, source=f"{path}#system={system}", sha256=file_sha256(path), counts=counts)
