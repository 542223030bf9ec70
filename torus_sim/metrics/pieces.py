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

__all__ = ["PIECE_ROWS", "mean_by_pieces", "pairwise_sum", "piece_reader"]

PIECE_ROWS = 1 << 16
"""Values read and computed at a time (65,536 jobs or passes: ~0.5 MB a column)."""


def pairwise_sum(count: int, piece) -> float:
    """The sum of ``count`` float64 values made ``piece(first, last)`` at a time, to the bits of numpy's one ``sum()``.

    numpy sums a contiguous float64 array pairwise: above 128 values, the first ``n // 2`` rounded down to a multiple
    of 8 and the rest, each summed the same way. Splitting where it splits, down to pieces of :data:`PIECE_ROWS`
    summed by numpy itself, gives its result without the whole array (tests/test_metrics.py).

    Args:
        count: how many values.
        piece: ``(first, last) -> float64 (last - first,)``, the values of positions ``first`` to ``last - 1``.

    References:
        numpy ``umath/loops_utils.h.src`` (``pairwise_sum``).
    """
    smallest = max(PIECE_ROWS, 128)  # numpy sums 128 values or fewer without splitting: never split below

    def split(first: int, count: int):
        if count <= smallest:
            return np.ascontiguousarray(piece(first, first + count), dtype=np.float64).sum()
        half = count // 2
        half -= half % 8
        return split(first, half) + split(first + half, count - half)

    return float(split(0, count)) if count else 0.0


def mean_by_pieces(count: int, piece) -> float:
    """:func:`~torus_sim.metrics.online.series_mean` (pandas' ``Series.mean``) of float values made a piece at a time.

    NaN left out: summed as 0 and not counted; the sum is :func:`pairwise_sum`'s (the same bits as the whole array's).

    Args:
        count: how many values.
        piece: ``(first, last) -> float (last - first,)``, the values of positions ``first`` to ``last - 1``.

    Returns:
        The mean; NaN when every value is NaN or there is none.
    """
    missing = 0

    def zeroed(first: int, last: int) -> np.ndarray:
        nonlocal missing
        values = np.asarray(piece(first, last), dtype=np.float64)
        absent = np.isnan(values)
        found = int(absent.sum())
        missing += found
        return np.where(absent, 0.0, values) if found else values

    total = pairwise_sum(count, zeroed)
    with np.errstate(invalid="ignore", divide="ignore"):
        return float(np.float64(total) / np.float64(count - missing))


def piece_reader(table):
    """``read(name, first, last)``: rows ``first`` to ``last - 1`` of one column of ``table``.

    Args:
        table: a record's table snapshot (:class:`~torus_sim.disk_tables.TableSnapshot`: only those rows are read),
            or a DataFrame or mapping of whole arrays (sliced).
    """
    if hasattr(table, "column") and hasattr(table, "take"):
        return table.column
    return lambda name, first, last: np.asarray(table[name])[first:last]
