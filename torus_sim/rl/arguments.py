"""Checks of the learning environment's constructor and method arguments: a sentence naming the argument, never a traceback deep inside."""

from __future__ import annotations

import numpy as np

from torus_sim.core.errors import ConfigurationError

__all__ = ["fractions", "integer", "shown", "whole"]


def integer(value) -> int | None:
    """``value`` as an int when it is a whole number (Python or numpy, or a numpy array of one); None otherwise (a bool too)."""
    if isinstance(value, np.ndarray) and value.size == 1 and value.dtype.kind in "iu":
        value = value.reshape(()).item()
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        return None
    return int(value)


def shown(value) -> str:
    """``repr(value)``, cut to 60 characters (a sentence quotes what it refuses, not a megabyte of it)."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def whole(name: str, value) -> int:
    """A constructor argument that must be a whole number >= 1.

    Raises:
        ConfigurationError: naming the argument, for a float, a bool, text or a number < 1.
    """
    number = integer(value)
    if number is None or number < 1:
        raise ConfigurationError(f"{name} must be a whole number >= 1, got {shown(value)}")
    return number


def fractions(name: str, value) -> tuple[float, float]:
    """``(low, high)`` with 0 <= low < high <= 1.

    Raises:
        ConfigurationError: naming the argument, for anything else.
    """
    try:
        low, high = (float(part) for part in value)
    except (TypeError, ValueError):
        raise ConfigurationError(f"{name} must be (low, high) with 0 <= low < high <= 1, got {shown(value)}") from None
    if not 0.0 <= low < high <= 1.0:
        raise ConfigurationError(f"{name} must satisfy 0 <= low < high <= 1, got {shown(value)}")
    return low, high
