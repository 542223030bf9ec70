"""Benchmarks of the flat-platform heuristics (RIGID, MOLDABLE), called from ``benchmarks.run``.

1. RIGID §5.1's synthetic experiment: 30 sets x 100 scenarios, P = 10000, n = 100, q̄ = 0.3,
   R-LIST-0 with LPT. The published C++ reference code takes about 15 s for it on this kind of
   machine (issue 4); goal: at least as fast.
2. MOLDABLE on the mix model, P = 7500, n = 500, λ = 1e-7: LPA over 30 sets x 100 scenarios
   (reference code about 1060 s), BATCH and MINTIME over 10 x 100 (about 410 s and 180 s).
   Goal: at least 5x faster than those.

Each line also gives the baseline measured in the same run: Mesa's DEVSimulator running the
same number of no-op events (the engine's floor), so the ratio says what the scheduling costs.
"""

from __future__ import annotations

import time

import numpy as np

from failure_logs.silent import (
    draw_scenarios,
    error_rate_for_mean_probability,
    failure_probabilities_by_area,
    failure_probabilities_by_work,
)
from torus_sim.engine.model import SchedulingModel
from torus_sim.inputs.workload.batch import generate_rigid_set, moldable_workload, rigid_workload
from torus_sim.inputs.workload.speedup import generate_speedup_model
from torus_sim.machine.platforms.cluster import ClusterPlatform
from torus_sim.metrics.bounds import moldable_lower_bound, rigid_lower_bound
from torus_sim.policies.moldable import ALLOCATIONS, AllocationListPolicy, AllotmentTables, BatchListPolicy
from torus_sim.policies.rigid import ListPolicy

REFERENCE_SECONDS = {"rigid": (15.0, 30), "LPA": (1060.0, 30), "BATCH": (410.0, 10), "MINTIME": (180.0, 10)}
"""Published C++ reference-code times (seconds, job sets x 100 scenarios) quoted in issue 4."""


def rigid_experiment(sets: int = 30, scenarios: int = 100) -> None:
    """Time RIGID's synthetic experiment with R-LIST-0 / LPT and print it against the reference and the engine floor."""
    from benchmarks.floor import engine_floor

    began = time.perf_counter()
    events, ratios = 0, []
    for index in range(sets):
        rng = np.random.default_rng([2020, index])
        jobs = generate_rigid_set(rng)
        rate = error_rate_for_mean_probability(jobs.areas, 0.3)
        failures = draw_scenarios(failure_probabilities_by_area(jobs.areas, rate), scenarios, rng)
        bounds = rigid_lower_bound(jobs.runtimes, jobs.processors, failures, 10000)
        workload = rigid_workload(jobs)
        for scenario, bound in zip(failures, bounds, strict=True):
            model = SchedulingModel(
                workload, ListPolicy(0, "LPT"), ClusterPlatform(10000, identities=False), silent_errors=scenario, record=False
            )
            result = model.run()
            events += result.counters["events_run"]
            ratios.append(result.makespan / bound)
    elapsed = time.perf_counter() - began
    floor = engine_floor(events)
    reference, reference_sets = REFERENCE_SECONDS["rigid"]
    print(f"RIGID synthetic, R-LIST-0 LPT, {sets} sets x {scenarios} scenarios (mean ratio {np.mean(ratios):.3f}):")
    print(
        f"  {elapsed:.1f} s for {events:,} attempts; Mesa no-op floor {floor:.1f} s ({elapsed / floor:.1f}x; the floor queues every event in one heap); "
        f"reference code ~{reference * sets / reference_sets:.0f} s -> {reference * sets / reference_sets / elapsed:.2f}x "
        "its speed (goal >= 1x)"
    )


def moldable_experiment(algorithm: str, sets: int, scenarios: int = 100) -> None:
    """Time one MOLDABLE algorithm on the mix model (P = 7500, n = 500, λ = 1e-7)."""
    from benchmarks.floor import engine_floor

    began = time.perf_counter()
    events, ratios = 0, []
    for index in range(sets):
        rng = np.random.default_rng([2021, index])
        model = generate_speedup_model("mix", 500, rng)
        times = model.times(7500)
        tables = AllotmentTables(times) if algorithm == "BATCH" else None
        allocation = None if algorithm == "BATCH" else ALLOCATIONS[algorithm](times)
        failures = draw_scenarios(failure_probabilities_by_work(model.work, 1e-7), scenarios, rng)
        bounds = moldable_lower_bound(times, failures)
        workload = moldable_workload(times)
        for scenario, bound in zip(failures, bounds, strict=True):
            policy = (
                BatchListPolicy(tables, "LPT") if algorithm == "BATCH" else AllocationListPolicy(algorithm, "LPT", allocation)
            )
            result = SchedulingModel(
                workload, policy, ClusterPlatform(7500, identities=False), silent_errors=scenario, record=False
            ).run()
            events += result.counters["events_run"]
            ratios.append(result.makespan / bound)
    elapsed = time.perf_counter() - began
    floor = engine_floor(events)
    reference, reference_sets = REFERENCE_SECONDS[algorithm]
    scaled = reference * sets / reference_sets
    print(f"MOLDABLE mix, {algorithm} LPT, {sets} sets x {scenarios} scenarios (mean ratio {np.mean(ratios):.3f}):")
    print(
        f"  {elapsed:.1f} s for {events:,} attempts; Mesa no-op floor {floor:.1f} s ({elapsed / floor:.1f}x; the floor queues every event in one heap); "
        f"reference code ~{scaled:.0f} s -> {scaled / elapsed:.1f}x its speed (goal >= 5x)"
    )
