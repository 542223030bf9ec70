"""The command line's value types: what an option's text becomes (argparse ``type=`` and actions), shared by the subcommands."""

from __future__ import annotations

import argparse

__all__ = ["ParameterAction", "bounded", "duration", "fraction", "parameter", "number_or_text", "positive", "value_tuple"]


def number_or_text(text: str):
    """A command-line value as a scenario field gets it: a number when it reads as one."""
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def duration(text: str) -> str:
    """A duration as Solara reads it (``90s``, ``2m``, ``1.5h``, ``1d``; seconds without a unit)."""
    import re

    if not re.fullmatch(r"\d+(\.\d+)?[smhd]?", text.strip()):
        raise argparse.ArgumentTypeError(f"expected a duration such as 90s, 2m or 1h, got {text!r}")
    return text.strip()


def parameter(text: str) -> tuple[str, object]:
    """``key=value`` of ``--policy-param``: the value read as a TOML value (``3``, ``0.5``, ``true``, ``"x"``, ``[1, 2]``), else as text."""
    import tomllib

    key, sep, value = text.partition("=")
    key = key.strip()
    if not sep or not key.isidentifier():
        raise argparse.ArgumentTypeError(f"expected key=value with a Python name as key, got {text!r}")
    try:
        return key, tomllib.loads(f"value = {value.strip()}")["value"]
    except tomllib.TOMLDecodeError:
        return key, value


class ParameterAction(argparse.Action):
    """Collect repeated ``--x-param key=value`` into one dict."""

    def __call__(self, parser, namespace, values, option_string=None):  # noqa: D102 (argparse.Action)
        current = dict(getattr(namespace, self.dest, None) or {})
        key, value = values
        current[key] = value
        setattr(namespace, self.dest, current)


def positive(text: str) -> int:
    """An integer >= 1 (argparse type)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {value}")
    return value


def bounded(low: int, high: int):
    """An argparse type: an integer in ``low..high``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer from {low:,} to {high:,}, got {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"expected an integer from {low:,} to {high:,}, got {value:,}")
        return value

    return parse


def fraction(text: str) -> float:
    """An argparse type: a number in [0, 1)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1), got {text!r}") from None
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1), got {value}")
    return value


def value_tuple(text: str) -> list:
    """``2x3x4x4`` or ``1,2``: a tuple-valued field's parts, each read as :func:`number_or_text` does."""
    return [number_or_text(part) for part in text.replace("x", ",").split(",")]
