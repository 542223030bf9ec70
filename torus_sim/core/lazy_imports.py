"""A package's public names imported on first use (PEP 562's module ``__getattr__``), from one table.

The command line's ``--help`` and argument errors must not import pandas, Mesa or scipy (issue 44 §5:
0.31 s instead of 0.96-1.39 s). Packages whose ``__init__`` re-exported their heavy modules (the engine,
the metrics, the failure readers) now name where each public name lives and import it when it is
first read; ``from package import name`` works as before.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

__all__ = ["lazy_attributes"]


def lazy_attributes(package: str, homes: dict[str, str]) -> Callable[[str], object]:
    """A module ``__getattr__`` for ``package`` that imports each public name from its home module.

    Args:
        package: the package's ``__name__`` (for the error message).
        homes: public name -> the absolute name of the module that defines it.

    Returns:
        The function to assign to the package's ``__getattr__``.

    Raises (from the returned function):
        AttributeError: a name that is not in ``homes``, as Python's own message says it.
    """

    def __getattr__(name: str) -> object:
        if name in homes:
            return getattr(importlib.import_module(homes[name]), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
