"""Progress bars (tqdm) that start no second process.

tqdm's default write lock pairs a threading lock with a ``multiprocessing.RLock``; creating the latter
starts multiprocessing's resource tracker (a second Python process, left as a defunct child of the run)
wherever the start method is not ``fork``: Python 3.14's default on Linux and the only ones on macOS and
Windows (issue 61 §3). A run's bars are written from one process, its threads at most, so a threading
lock is the lock they need; a lock the caller set with ``tqdm.set_lock`` is kept.
"""

from __future__ import annotations

import threading

__all__ = ["progress_bar"]


def progress_bar(auto: bool = False, **options):
    """A tqdm bar whose write lock is a threading lock (see the module's note).

    Args:
        auto: ``tqdm.auto.tqdm`` (a notebook widget in Jupyter) instead of the terminal's ``tqdm.tqdm``.
        **options: tqdm's own arguments (``total``, ``unit``, ``desc``, ``file``, ...).

    Returns:
        The bar (a context manager, as tqdm's).
    """
    from tqdm import std

    if "_lock" not in vars(std.tqdm):  # nobody chose a lock yet: never create tqdm's multiprocessing one
        std.tqdm.set_lock(threading.RLock())
    if auto:
        from tqdm.auto import tqdm
    else:
        tqdm = std.tqdm
    return tqdm(**options)
