"""The run's counts: starts, kills, failures, lost work, cancelled events, with one owner.

:class:`RunCounters` is a :class:`collections.Counter` (the record's ``counters``: ``failures``, ``job_kills``,
``lost_work``, ``migrations``, ...) that also keeps the two counts a hot path bumps as plain attributes (an
attribute's ``+= 1`` is about three times quicker than a dictionary key's); :meth:`sync` folds them, and the
clock's events scheduled and run (:class:`~torus_sim.engine.events.EngineSimulator` counts them), into the keys.
The model checks with them that every scheduled event was run or cancelled.
"""

from __future__ import annotations

from collections import Counter

__all__ = ["RunCounters"]


class RunCounters(Counter):
    """The run's counts by name, and the hot paths' four as attributes.

    Attributes:
        starts: attempts started.
        silent_errors: silent errors detected at the end of an attempt (RIGID §3.2).
    """

    def __init__(self) -> None:
        super().__init__()
        self.starts = self.silent_errors = 0

    def sync(self, clock, placement_diagnostics: dict | None = None) -> None:
        """Fold the hot paths' counts and the clock's into the keys, and a placement's own diagnostics.

        Args:
            clock: the run's :class:`~torus_sim.engine.events.EngineSimulator` (``scheduled``, ``ran``).
            placement_diagnostics: a placement's counts by name, set (not added): BGL-FAULT §5.2.2's tie-break counts.
        """
        self["events_scheduled"] = clock.scheduled
        self["events_run"] = clock.ran
        self["job_starts"] = self.starts
        self["silent_errors"] = self.silent_errors
        if placement_diagnostics:
            for key, value in placement_diagnostics.items():
                self[key] = value
