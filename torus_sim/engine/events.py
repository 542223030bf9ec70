"""The engine's clock and event list: Mesa's ``DEVSimulator`` with a lighter event for the model's handlers.

A run schedules and pops one or more events per attempt (its end, the pass after it, arrivals,
failures), so the per-event cost of Mesa 3.3's ``SimulationEvent`` is a large share of a small run:
its constructor checks the callback, wraps it in a weak reference and reads ``priority.value``, and
its ``__lt__`` builds two tuples at every heap comparison (about log n per push and per pop).
:class:`EngineEvent` is a ``SimulationEvent`` (same fields, same total order on time, priority and
unique id, ids drawn from Mesa's own counter) that holds its callback directly: the model keeps every handler alive anyway (a ``functools.partial`` made at construction),
so nothing is gained by the weak reference there. :class:`EngineSimulator` schedules and runs these
without Mesa's per-event time-unit check (the model only schedules float seconds) and in the same
order as Mesa would: the event sequence of a run is unchanged (tests/test_events.py; the golden
replays). Its :class:`EngineEventList` keeps each event in the heap as the tuple ``(time, priority,
unique_id, event)``: the heap's ~12 comparisons per push and pop are then tuple comparisons in C, not
calls of a Python ``__lt__`` (900,000 of them in the README's main job: ~45 ms of its 1.7 s).

References:
    Mesa 3.3 ``mesa.experimental.devs`` (``DEVSimulator``, ``EventList``, ``SimulationEvent``).
"""

from __future__ import annotations

from enum import IntEnum
from heapq import heappop, heappush

from torus_sim.engine.mesa_core import DEVSimulator, EventList, SimulationEvent

__all__ = ["LEVELS", "EngineEvent", "EngineEventList", "EngineSimulator", "EventPriority"]

_NO_KWARGS: dict = {}  # shared, never written (cancel() replaces it)


class EventPriority(IntEnum):
    """Order of events at the same instant (lower runs first).

    Events carry the level as a plain int (:class:`~torus_sim.engine.events.EngineEvent`).
    """

    REPAIR = 1
    PREVENTIVE = 2  # a preventive migration due at the instant of its failure runs before it
    FAILURE = 3
    JOB_END = 4  # the end of an attempt (completion or silent error)
    ARRIVAL = 5
    SCHEDULE = 6


_LEVELS = {level: int(level) for level in EventPriority}  # the plain ints events carry
_JOB_END = _LEVELS[EventPriority.JOB_END]


LEVELS = {level: int(level) for level in EventPriority}
"""Each priority as the plain int an event carries (a dict lookup: cheaper than ``int()`` per event)."""


class EngineEvent(SimulationEvent):
    """One scheduled call of a model handler at a simulated time.

    Args:
        time: when, seconds (float).
        function: the callable, held by a strong reference (the model keeps it alive too).
        priority: the same-instant order, lower first (an int, Mesa's ``priority.value``).
        function_args: positional arguments of the call (the list is kept, not copied).

    Ordered like Mesa's events, by ``(time, priority, unique_id)``, and comparable with them.
    """

    def __init__(self, time: float, function, priority: int, function_args: list) -> None:
        # SimulationEvent.__init__ is not called: it would wrap the callback in a weak reference
        self.time = time
        self.priority = priority
        self._canceled = False
        self.fn = function
        self.unique_id = next(SimulationEvent._ids)
        self.function_args = function_args
        self.function_kwargs = _NO_KWARGS

    def execute(self) -> None:
        """Call the handler unless the event was cancelled."""
        if not self._canceled:
            self.fn(*self.function_args)

    def __lt__(self, other) -> bool:  # the heap compares its entries' keys, not the events (EngineEventList)
        return (self.time, self.priority, self.unique_id) < (other.time, other.priority, other.unique_id)


class EngineEventList(EventList):
    """Mesa's ``EventList`` whose heap holds ``(time, priority, unique_id, event)`` entries.

    The same events in the same order as Mesa's list (its events sort by that key), compared as tuples.
    Every method of Mesa's list answers as Mesa's does, with events (not entries) in and out;
    ``peak_ahead`` gives the first live events in time order (Mesa's walks the heap in its storage order).
    """

    def add_event(self, event: SimulationEvent) -> None:
        """Add an event (Mesa's or an :class:`EngineEvent`)."""
        heappush(self._events, (event.time, event.priority, event.unique_id, event))

    def peak_ahead(self, n: int = 1) -> list[SimulationEvent]:
        """The first ``n`` live events, earliest first (fewer when fewer are live).

        Raises:
            IndexError: the list is empty.
        """
        if self.is_empty():
            raise IndexError("event list is empty")
        return [entry[3] for entry in sorted(self._events) if not entry[3].CANCELED][:n]

    def pop_event(self) -> SimulationEvent:
        """Remove and return the earliest live event (cancelled ones are dropped on the way).

        Raises:
            IndexError: no live event is left.
        """
        events = self._events
        while events:
            event = heappop(events)[3]
            if not event.CANCELED:
                return event
        raise IndexError("Event list is empty")

    def events(self) -> list[SimulationEvent]:
        """Every event held, live or cancelled, in the heap's storage order."""
        return [entry[3] for entry in self._events]

    def __contains__(self, event: SimulationEvent) -> bool:
        return any(entry[3] is event for entry in self._events)

    def __repr__(self) -> str:
        return f"EngineEventList([{', '.join(f'{entry[3]!r}' for entry in self._events)}])"


class EngineSimulator(DEVSimulator):
    """Mesa's continuous-time ``DEVSimulator`` that also schedules :class:`EngineEvent` s.

    Mesa's own ``schedule_event_*`` calls keep working on it (their events interleave by the same order):
    its event list is an :class:`EngineEventList`. It counts the events scheduled (``scheduled``) and the
    events :meth:`run_next_event` ran (``ran``): the model checks that each was run or cancelled.
    """

    def __init__(self) -> None:
        super().__init__()
        self.event_list = EngineEventList()
        self.scheduled = 0  # events scheduled (ours and Mesa's schedule_event_* calls)
        self.ran = 0  # events run by run_next_event

    def _schedule_event(self, event: SimulationEvent) -> None:
        """Mesa's scheduling path (``schedule_event_*``), counted."""
        super()._schedule_event(event)
        self.scheduled += 1

    def schedule(self, function, time: float, priority: int, function_args: list) -> EngineEvent:
        """Schedule ``function(*function_args)`` at ``time`` (seconds).

        Args:
            function: the callable (kept by a strong reference until the event runs or is cancelled).
            time: when, seconds on the simulator's clock (a float; not checked for its unit).
            priority: the same-instant order, lower first (an int).
            function_args: positional arguments of the call (kept, not copied).

        Returns:
            The event (``cancel()`` it to drop it).

        Raises:
            ValueError: ``time`` is before the simulator's current time.
        """
        if time < self.time:
            raise ValueError(f"trying to schedule an event in the past ({time} < {self.time})")
        event = EngineEvent(time, function, priority, function_args)
        heappush(self.event_list._events, (time, priority, event.unique_id, event))
        self.scheduled += 1
        return event

    def run_next_event(self) -> None:
        """Run the earliest live event (cancelled ones are dropped on the way); nothing when none is left."""
        events = self.event_list._events
        while events:
            event = heappop(events)[3]
            if not event._canceled:
                self.time = event.time
                self.ran += 1
                event.execute()
                return
