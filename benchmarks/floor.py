"""The baseline every benchmark prints its ratio against: Mesa's DEVSimulator running no-op events.

Measured in the same process as the replay it is compared with, so the ratio says how far the engine
is from the cost of its clock alone, whatever the machine.
"""

from __future__ import annotations

import time

import numpy as np
from mesa.experimental.devs import DEVSimulator

__all__ = ["engine_floor"]


class _NoOp:
    def __init__(self) -> None:
        self.calls = 0

    def handle(self) -> None:
        self.calls += 1


def engine_floor(n_events: int) -> float:
    """Seconds Mesa's DEVSimulator takes to run ``n_events`` no-op events (scheduled at random times, run in order)."""
    import mesa

    model = mesa.Model(seed=0)
    simulator = DEVSimulator()
    simulator.setup(model)
    sink = _NoOp()
    began = time.perf_counter()
    for at in np.random.default_rng(0).uniform(0, 1e8, n_events):
        simulator.schedule_event_absolute(sink.handle, float(at))
    simulator.run_until(1e8)
    elapsed = time.perf_counter() - began
    if sink.calls != n_events:
        raise RuntimeError(f"the no-op floor ran {sink.calls} of {n_events} events")
    return elapsed
