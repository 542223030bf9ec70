"""How far a sweep is, for the person waiting: a tqdm bar on a terminal, one plain line per finished run elsewhere.

A sweep piped to a file or run under a batch system has no terminal; tqdm then shows nothing, and
for minutes the log says only the sweep's title. :class:`RunProgress` writes instead one flushed line
per finished run on standard error (``[3/16] done in 12.3 s: policy=EASY-SJBF seed=1``), naming the
scenario fields that vary between the sweep's runs, so the log shows what finished and how long it took.
"""

from __future__ import annotations

import sys
import typing
from collections.abc import Sequence

__all__ = ["RunProgress", "varying_fields"]


def varying_fields(configs: Sequence[typing.Any]) -> list[str]:
    """The scenario fields whose values differ between ``configs`` (pydantic Scenarios), in field order.

    Args:
        configs: the sweep's runs.

    Returns:
        Field names; empty for one run or runs that differ in nothing.
    """
    if len(configs) < 2:
        return []
    dumps = [config.model_dump() for config in configs]
    return [name for name in dumps[0] if any(dump[name] != dumps[0][name] for dump in dumps[1:])]


class RunProgress:
    """Progress of a sweep's runs: a tqdm bar when standard error is a terminal, else a line per run.

    Args:
        total: runs in the sweep (stored ones included).
        already: runs found stored (resumed), counted as done from the start.
        labels: the field names each line names (:func:`varying_fields`).
        stream: where the lines go (standard error when None).
        terminal: whether ``stream`` is a terminal (asked of the stream when None).
    """

    def __init__(
        self,
        total: int,
        already: int = 0,
        labels: Sequence[str] = (),
        stream: typing.TextIO | None = None,
        terminal: bool | None = None,
    ) -> None:
        self.total = total
        self.done = already
        self.labels = list(labels)
        self.stream = stream if stream is not None else sys.stderr
        if terminal is None:
            terminal = bool(getattr(self.stream, "isatty", lambda: False)())
        self.bar = None
        if terminal:
            from torus_sim.core.progress_bars import progress_bar

            self.bar = progress_bar(auto=True, total=total, initial=already, unit="run", desc="sweep", file=self.stream)
        elif already:
            self._line(f"{already} of {total} runs found stored; running the other {total - already}")

    def _line(self, text: str) -> None:
        print(text, file=self.stream, flush=True)

    def finished(self, row: dict) -> None:
        """Count one finished run; ``row`` is its results row (scenario fields, metrics, ``wall_time`` in seconds)."""
        self.done += 1
        if self.bar is not None:
            self.bar.update(1)
            return
        named = " ".join(f"{label}={row.get(label)}" for label in self.labels if label in row)
        seconds = row.get("wall_time")
        took = f" in {seconds:.1f} s" if isinstance(seconds, (int, float)) else ""
        self._line(f"[{self.done}/{self.total}] done{took}" + (f": {named}" if named else ""))

    def close(self) -> None:
        """Close the bar (nothing to do for lines)."""
        if self.bar is not None:
            self.bar.close()
