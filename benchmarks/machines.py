"""Machines other than BG/L (``python -m benchmarks.run --only machines``).

1. The README's Mira command: the bundled NASA log scaled onto Mira's 96 midplanes with Mira's real
   failures (window at their real rate), balancing with the history predictor, downtimes from the
   repair reservations: wall time of the whole run (goal: under 2 minutes) and the engine's no-op
   floor on the same number of events, measured in the same run.
2. "Free blocks of size s" on Mira's 2x3x4x4 torus at 25 % and 50 % random occupancy: the partition
   table (its memo emptied before each query) against the plain cell-by-cell search, µs per query
   (the slowest size).
"""

from __future__ import annotations

import time
import timeit

import numpy as np

from benchmarks.floor import engine_floor
from tests.reference import brute_force_free_partitions
from torus_sim.experiments.runner import Scenario, run
from torus_sim.machine.machines import MACHINES
from torus_sim.machine.partition_table import PartitionTable
from torus_sim.machine.partitions import feasible_sizes

__all__ = ["mira_queries", "mira_run"]


def mira_run() -> None:
    """Time the README's Mira run and print it beside Mesa's no-op floor on as many events."""
    began = time.perf_counter()
    result = run(Scenario(machine="mira", policy="balancing", predictor="history", downtime="log"))
    elapsed = time.perf_counter() - began
    events = result.summary["jobs"] * 2 + result.inputs["failures"]["count"]
    floor = engine_floor(events)
    print(
        f"Mira run (NASA on 96 midplanes, {result.inputs['failures']['count']:,} failures, balancing + history): "
        f"{elapsed:.1f} s; no-op floor for {events:,} events {floor:.2f} s; ratio {elapsed / floor:.1f}x"
    )


def mira_queries() -> None:
    """Free blocks of every allowed size on Mira's torus: table vs the plain search, µs per query."""
    torus = MACHINES["mira"].torus
    began = time.perf_counter()
    table = PartitionTable(torus)
    built = time.perf_counter() - began
    rng = np.random.default_rng(0)
    for occupancy in (0.25, 0.5):
        blocked = rng.random(torus.size) < occupancy
        words = table.pack(blocked)
        slowest, plain = 0.0, 0.0
        for size in feasible_sizes(torus):

            def query(w=words, s=size):
                table._free_ids_memo.clear()  # time the query, not the memo's answer
                return table.free_ids_of_size(w, s)

            slowest = max(slowest, min(timeit.repeat(query, number=200, repeat=3)) / 200)
            searched = min(timeit.repeat(lambda b=blocked, s=size: brute_force_free_partitions(torus, b, s), number=3, repeat=3))
            plain = max(plain, searched / 3)
        print(
            f"Mira 2x3x4x4 at {occupancy:.0%} busy: slowest table query {slowest * 1e6:.1f} µs, plain search {plain * 1e6:,.0f} µs "
            f"({plain / slowest:,.0f}x); table of {len(table.partitions):,} blocks built in {built:.2f} s"
        )
