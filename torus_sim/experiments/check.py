"""Does a committed results folder still come out of the current code? (``torus-sim sweep FILE --check``).

A sweep's results are re-run into a scratch folder (nothing cached is reused) and its tables
(``results.csv`` and the derived ``size_groups``, ``summary``, ``comparison``) compared with those in the
results folder: every metric, cell by cell. Columns that never come from the simulation are left out:
``wall_time`` (the machine), ``key`` (a hash of the scenario's fields, which grows with new fields), and
scenario fields (the inputs: the file says them; paths differ between checkouts). Rows are matched by
their scenario fields (:func:`aligned_rows`: a grid may expand in another order than when the table was
written). A run is
deterministic for a given seed, so the default tolerance is none: numbers are compared as the CSV
writer rounds them (10 significant digits). ``rtol`` is for a results folder whose runs draw random
numbers from a library whose stream may change between versions (say why where it is used).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

__all__ = ["CHECKED_TABLES", "CheckReport", "aligned_rows", "compare_tables", "results_columns"]

CHECKED_TABLES = ("results", "size_groups", "summary", "comparison", "intervals", "paired")
"""The CSV tables of a results folder that ``--check`` compares (when the folder has them)."""

NOT_RESULTS = {"wall_time", "key", "failures_given"}


def results_columns(table: pd.DataFrame) -> list[str]:
    """The columns of ``table`` that hold what the runs computed (not the scenario's fields, the wall time or the key)."""
    from torus_sim.experiments.scenario import Scenario

    inputs = set(Scenario.model_fields) - {"name"}
    return [column for column in table.columns if column not in NOT_RESULTS and column not in inputs]


@dataclass
class CheckReport:
    """What a check found.

    Attributes:
        compared: cells compared, by table name.
        differences: ``(table, row, column, committed, now)`` for every cell that differs (row: the
            row's ``name`` when it has one, else its index).
        problems: sentences for tables that cannot be compared (missing, different rows, columns gone).
    """

    compared: dict = field(default_factory=dict)
    differences: list = field(default_factory=list)
    problems: list = field(default_factory=list)

    @property
    def identical(self) -> bool:
        """True when every compared cell is the same and nothing was missing."""
        return not self.differences and not self.problems


def _same(committed, now, rtol: float) -> bool:
    if isinstance(committed, float) and isinstance(now, float):
        if math.isnan(committed) or math.isnan(now):
            return math.isnan(committed) and math.isnan(now)
        return committed == now or abs(committed - now) <= rtol * max(abs(committed), abs(now))
    if pd.isna(committed) and pd.isna(now):
        return True
    return str(committed) == str(now)


def aligned_rows(committed: pd.DataFrame, fresh: pd.DataFrame) -> pd.DataFrame:
    """``fresh``'s rows in ``committed``'s order, matched by the scenario fields both tables have.

    A grid's expansion order is presentation, not a result: a table written when the grid expanded
    in another order holds the same runs in other rows. The rows are matched by the scenario fields both
    tables share whose values vary between the rows (``name``, the grid's and the cases' fields,
    ``job_set``, ``seed``; a field every run shares, such as a log's path, may differ between checkouts)
    and that hold the same values in both (older code wrote RIGID's derived ``error_rate``, today's leaves
    it empty), written as text. Where those keys do not identify each row once in both tables, or name
    other runs, ``fresh`` is returned as it is (compared row by row, and its differences reported).

    Args:
        committed: the committed table.
        fresh: the same table from a fresh run (as many rows).

    Returns:
        ``fresh`` reordered (index reset), or ``fresh`` unchanged.
    """
    from torus_sim.experiments.scenario import Scenario

    fields = [
        column
        for column in committed.columns
        if column in fresh.columns and (column in Scenario.model_fields or column == "name")
    ]
    keys = [
        column
        for column in fields
        if committed[column].nunique(dropna=False) > 1  # a field every run shares (a log's path) may differ between checkouts
        and set(committed[column].astype(str)) == set(fresh[column].astype(str))  # a derived field older code wrote is no key
    ]
    if not keys:
        return fresh
    old_keys = committed[keys].astype(str).agg("|".join, axis=1)
    new_keys = fresh[keys].astype(str).agg("|".join, axis=1)
    if not (old_keys.is_unique and new_keys.is_unique) or set(old_keys) != set(new_keys):
        return fresh
    position = pd.Series(range(len(fresh)), index=new_keys.to_numpy())
    return fresh.iloc[position.loc[old_keys.to_numpy()].to_numpy()].reset_index(drop=True)


def compare_tables(committed_folder: Path, fresh_folder: Path, rtol: float = 0.0) -> CheckReport:
    """Compare the tables a fresh run wrote with the committed ones, cell by cell.

    Args:
        committed_folder: the results folder under version control.
        fresh_folder: where the fresh run wrote its tables (same writer, same rounding).
        rtol: relative tolerance on numbers (0: the written values must be equal).

    Returns:
        A :class:`CheckReport`.
    """
    report = CheckReport()
    for name in CHECKED_TABLES:
        committed_path, fresh_path = committed_folder / f"{name}.csv", fresh_folder / f"{name}.csv"
        if not fresh_path.exists():
            continue
        if not committed_path.exists():
            report.problems.append(f"{committed_path} is not committed; the current code writes it")
            continue
        committed, fresh = pd.read_csv(committed_path), pd.read_csv(fresh_path)
        if len(committed) != len(fresh):
            report.problems.append(f"{name}.csv: {len(committed)} rows committed, {len(fresh)} now")
            continue
        fresh = aligned_rows(committed, fresh)
        columns = results_columns(fresh) if name == "results" else list(fresh.columns)
        gone = [column for column in columns if column not in committed.columns]
        if gone:
            report.problems.append(f"{name}.csv: the committed table lacks {', '.join(gone)} (written by older code)")
        columns = [column for column in columns if column in committed.columns]
        report.compared[name] = len(columns) * len(fresh)
        labels = fresh["name"].astype(str) if "name" in fresh.columns else pd.Series(range(len(fresh))).astype(str)
        for column in columns:
            for row, (old, new) in enumerate(zip(committed[column].tolist(), fresh[column].tolist(), strict=True)):
                if not _same(old, new, rtol):
                    report.differences.append((name, f"{labels.iloc[row]} (row {row + 1})", column, old, new))
    return report
