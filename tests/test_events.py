"""The engine's event list (torus_sim/events.py) runs events in Mesa's order, each live one once."""

from __future__ import annotations

from functools import partial

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mesa.experimental.devs import DEVSimulator
from mesa.experimental.devs.eventlist import Priority

from torus_sim.engine.events import EngineEvent, EngineSimulator


class _Log:
    """A model stand-in whose handler notes the order it is called in."""

    def __init__(self) -> None:
        self.calls: list[int] = []

    def note(self, index: int) -> None:
        self.calls.append(index)


def _noop() -> None:
    pass


class _Level:  # what Mesa's SimulationEvent reads from a priority
    def __init__(self, value: int) -> None:
        self.value = value


_EVENTS = st.lists(st.tuples(st.sampled_from([0.0, 1.0, 2.5, 7.0]), st.integers(1, 6), st.booleans()), min_size=1, max_size=40)


def _run_all(simulator) -> None:
    while simulator.event_list._events:
        simulator.run_next_event()


@settings(max_examples=150, deadline=None)
@given(events=_EVENTS)
def test_same_order_as_mesa_and_cancelled_events_never_run(events):
    """Events at equal times and priorities run in scheduling order, exactly as Mesa's own events do."""
    mesa_log, engine_log = _Log(), _Log()
    mesa_simulator, engine_simulator = DEVSimulator(), EngineSimulator()
    mesa_simulator.setup(object())
    engine_simulator.setup(object())
    mesa_note, engine_note = partial(_Log.note, mesa_log), partial(_Log.note, engine_log)
    for index, (at, level, cancel) in enumerate(events):
        plain = mesa_simulator.schedule_event_absolute(mesa_note, at, priority=_Level(level), function_args=[index])
        ours = engine_simulator.schedule(engine_note, at, level, [index])
        if cancel:
            plain.cancel()
            ours.cancel()
    _run_all(mesa_simulator)
    _run_all(engine_simulator)
    assert engine_log.calls == mesa_log.calls
    assert engine_log.calls == [
        index
        for index, _ in sorted(enumerate(events), key=lambda item: (item[1][0], item[1][1], item[0]))
        if not events[index][2]
    ]
    assert engine_simulator.time == mesa_simulator.time


@settings(max_examples=100, deadline=None)
@given(events=_EVENTS)
def test_mesa_events_interleave_with_engine_events(events):
    """Mesa's own scheduling calls on the engine's simulator keep the one (time, priority, id) order."""
    log = _Log()
    simulator = EngineSimulator()
    simulator.setup(object())
    note = partial(_Log.note, log)
    for index, (at, level, use_mesa) in enumerate(events):
        if use_mesa:
            simulator.schedule_event_absolute(note, at, priority=_Level(level), function_args=[index])
        else:
            simulator.schedule(note, at, level, [index])
    _run_all(simulator)
    assert log.calls == [index for index, _ in sorted(enumerate(events), key=lambda item: (item[1][0], item[1][1], item[0]))]


def test_engine_event_holds_its_handler():
    """A handler nothing else refers to still runs (Mesa's weak reference would drop it)."""
    log = _Log()
    simulator = EngineSimulator()
    simulator.setup(object())
    simulator.schedule(lambda value: log.calls.append(value), 3.0, 1, [42])
    simulator.run_next_event()
    assert log.calls == [42]
    assert simulator.time == 3.0
    simulator.run_next_event()  # nothing left: a no-op, like Mesa's
    assert simulator.time == 3.0


def test_engine_event_is_a_mesa_event_and_cancels_like_one():
    simulator = EngineSimulator()
    simulator.setup(object())
    event = simulator.schedule(_noop, 1.0, Priority.DEFAULT.value, [])
    assert isinstance(event, EngineEvent)
    assert not event.CANCELED
    event.cancel()
    assert event.CANCELED and event.fn is None and event.function_args == []


def test_scheduling_in_the_past_is_refused():
    simulator = EngineSimulator()
    simulator.setup(object())
    simulator.schedule(_noop, 5.0, 1, [])
    simulator.run_next_event()
    with pytest.raises(ValueError, match="in the past"):
        simulator.schedule(_noop, 4.0, 1, [])


def test_the_event_list_answers_as_mesas_with_events_in_and_out():
    # the heap holds (time, priority, unique_id, event) entries; Mesa's own methods (run_until, peak_ahead,
    # pop_event, is_empty, `in`) still see events, in (time, priority, id) order, cancelled ones skipped
    log = _Log()
    simulator = EngineSimulator()
    simulator.setup(object())
    note = partial(_Log.note, log)
    late = simulator.schedule(note, 9.0, 1, [3])
    mesa_event = simulator.schedule_event_absolute(note, 2.0, priority=_Level(5), function_args=[1])
    first = simulator.schedule(note, 2.0, 4, [0])
    dropped = simulator.schedule(note, 5.0, 1, [2])
    dropped.cancel()
    events = simulator.event_list
    assert len(events) == 4 and not events.is_empty()
    assert first in events and mesa_event in events and late in events
    assert events.peak_ahead(3) == [first, mesa_event, late]  # time order, the cancelled one left out
    simulator.run_until(6.0)  # Mesa's loop: pop_event, then the later event put back
    assert log.calls == [0, 1] and simulator.time == 6.0
    assert events.events() == [late]
    simulator.run_next_event()
    assert log.calls == [0, 1, 3] and events.is_empty()
    with pytest.raises(IndexError):
        events.pop_event()
    with pytest.raises(IndexError):
        events.peak_ahead()
