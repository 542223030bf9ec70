"""Sums and means over a run's jobs computed a piece at a time, with the bits of numpy's sums over whole arrays.

A summary of a 10-million-job record cannot hold its per-job arrays whole (80 MB each; the summaries held a
dozen, ~2.4 GB). numpy sums a contiguous float64 array pairwise, splitting it where :func:`pairwise_sum`
splits it: summing each piece with numpy and adding the pieces in that tree gives the same bits, so the
published numbers do not move when the arrays are no longer whole (tests/test_metrics.py).

References:
    numpy ``umath/loops_utils.h.src`` (``pairwise_sum``); pandas ``core/nanops.py`` (``nanmean``: NaN left out);
    issue 61 §1 (the summary's metrics from the written record, exact).
"""

from __future__ import annotations

import numpy as np

from torus_sim.core.disk_tables import TableSnapshot

__all__ = ["PIECE_ROWS", "mean_by_pieces", "means_by_pieces", "pairwise_sum", "pairwise_sums", "pieces_of"]

PIECE_ROWS = 1 << 16
"""Values read and computed at a time (65,536 jobs or passes: ~0.5 MB a column)."""


def pairwise_sums(count: int, piece) -> list[float]:
    """The sums of several series of ``count`` float64 values made a piece at a time, each to the bits of numpy's ``sum()``.

    numpy sums a contiguous float64 array pairwise: above 128 values, the first ``n // 2`` rounded down to a multiple
    of 8 and the rest, each summed the same way. Splitting where it splits, down to pieces of :data:`PIECE_ROWS`
    summed by numpy itself, gives its result without the whole array (tests/test_metrics.py). Each piece is made
    once for every series (a wait, a response and a slowdown from one read of the times).

    Args:
        count: how many values in each series (> 0).
        piece: ``(first, last) -> sequence of float64 (last - first,)``, one array per series: the values of
            positions ``first`` to ``last - 1``.

    Returns:
        One sum per series, in the order ``piece`` gives them.

    References:
        numpy ``umath/loops_utils.h.src`` (``pairwise_sum``).
    """
    smallest = max(PIECE_ROWS, 128)  # numpy sums 128 values or fewer without splitting: never split below

    def split(first: int, count: int) -> list:
        if count <= smallest:
            return [np.ascontiguousarray(values, dtype=np.float64).sum() for values in piece(first, first + count)]
        half = count // 2
        half -= half % 8
        return [left + right for left, right in zip(split(first, half), split(first + half, count - half), strict=True)]

    return [float(total) for total in split(0, count)]


def pairwise_sum(count: int, piece) -> float:
    """:func:`pairwise_sums` of one series: ``piece(first, last)`` gives its float64 values; 0.0 when ``count`` is 0.

    References:
        numpy ``umath/loops_utils.h.src`` (``pairwise_sum``).
    """
    return pairwise_sums(count, lambda first, last: (piece(first, last),))[0] if count else 0.0


def means_by_pieces(count: int, piece) -> list[float]:
    """:func:`~torus_sim.metrics.online.series_mean` (pandas' ``Series.mean``) of several series made a piece at a time.

    NaN left out: summed as 0 and not counted; the sums are :func:`pairwise_sums`' (the same bits as the whole arrays').

    Args:
        count: how many values in each series (> 0).
        piece: ``(first, last) -> sequence of float (last - first,)``, one array per series.

    Returns:
        One mean per series; NaN for a series whose values are all NaN.
    """
    missing: list[int] = []

    def zeroed(first: int, last: int) -> list[np.ndarray]:
        made = []
        for series, values in enumerate(piece(first, last)):
            values = np.asarray(values, dtype=np.float64)
            absent = np.isnan(values)
            found = int(absent.sum())
            if series == len(missing):
                missing.append(0)
            missing[series] += found
            made.append(np.where(absent, 0.0, values) if found else values)
        return made

    totals = pairwise_sums(count, zeroed)
    with np.errstate(invalid="ignore", divide="ignore"):
        return [float(np.float64(total) / np.float64(count - absent)) for total, absent in zip(totals, missing, strict=True)]


def mean_by_pieces(count: int, piece) -> float:
    """:func:`means_by_pieces` of one series (``piece(first, last)`` gives its values); NaN when ``count`` is 0."""
    if not count:
        return float("nan")
    return means_by_pieces(count, lambda first, last: (piece(first, last),))[0]


def pieces_of(table, key: str) -> tuple[int, object]:
    """``(rows, read)`` of a table: its length and ``read(name, first, last)``, a column's rows ``first`` to ``last - 1``.

    Args:
        table: a table read by pieces (``rows`` and ``piece``: :class:`~torus_sim.metrics.families.SubmissionOrderColumns`),
            a record's :class:`~torus_sim.core.disk_tables.TableSnapshot` (only the rows asked are read), or a DataFrame or
            mapping of whole arrays (sliced).
        key: a column every row has (the length of a DataFrame or mapping).
    """
    if hasattr(table, "piece"):
        return table.rows, table.piece
    if isinstance(table, TableSnapshot):
        return table.rows, table.column
    return len(table[key]), lambda name, first, last: np.asarray(table[name])[first:last]
