"""Power accounting's cost (issue 45 target: at most 1.15x the same run without it).

    python -m benchmarks.run --only power        # or: python -m benchmarks.power [--quick]

1. SDSC-SP2 on the 4x4x8 torus with 4,000 synthetic failures (1 h downtime), Krevat's scheduler; a
   time-of-use tariff and a uniform job-power model.
2. RICC (447,794 jobs after cleaning, 8,192 nodes) online under FCFS-EASY on a cluster, the same tariff.

Each run is made with and without ``power = true``, and with idle nodes switched off (:data:`SWITCH_OFF`),
alternated (without, with, switched off, without, ...),
in the same process; the ratio of the medians is printed (the run's wall time includes the
accounting, which reads the record after the simulation). ``--quick`` takes the first 20,000 jobs
of each log.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

SWF = Path(__file__).resolve().parents[2] / "shared" / "data" / "swf"
GOAL = 1.15

CASES = {
    "SDSC-SP2, torus 4x4x8, 4,000 failures, Krevat": {
        "workload": str(SWF / "SDSC-SP2-1998-4.2-cln.swf.gz"),
        "failures": "synthetic:4000",
        "downtime": 3600.0,
    },
    "RICC, cluster, FCFS-EASY": {
        "workload": str(SWF / "RICC-2010-2.swf.gz"),
        "platform": "cluster",
        "policy": "FCFS-EASY",
        "failures": "none",
    },
}
POWER = {"power": True, "price": "tou:0.05:3", "job_power": "uniform:50:300"}
SWITCH_OFF = {"idle_off_after": 0.0}
"""Idle nodes switched off at once, drawing the idle figure (``node_off_w`` set per case to the node's idle draw),
boots of 0 s: the schedule and the energy of the run without switching off (tests/test_switch_off.py), so the
ratio is the cost of keeping each node's power state (and, on a cluster, its node ids)."""
IDLE_W = {"SDSC-SP2, torus 4x4x8, 4,000 failures, Krevat": 5600.0, "RICC, cluster, FCFS-EASY": 100.0}


def timed(fields: dict) -> tuple[float, float]:
    """Wall time of one run (simulation, summary and, with power on, the accounting), and of the accounting alone.

    The accounting alone: the power inputs and :func:`~torus_sim.metrics.energy.account_energy` timed
    again on the finished run's record (a number the machine's load disturbs less than the ratio).
    """
    from torus_sim.experiments.run_inputs import load_power
    from torus_sim.experiments.runner import Scenario, run
    from torus_sim.metrics.energy import account_energy

    scenario = Scenario.make("bench", **fields)
    began = time.perf_counter()
    result = run(scenario)
    whole = time.perf_counter() - began
    if not scenario.power:
        return whole, 0.0
    began = time.perf_counter()
    power = load_power(scenario, result.jobs["job_id"].tolist())
    watts = result.record.attempts["job_id"].map(power.job_watts).to_numpy(float)
    account_energy(result.record, watts, power.node, power.tariff, scenario.clock_start_hour, switch_off=power.switch_off)
    return whole, time.perf_counter() - began


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="the first 20,000 jobs of each log, 3 pairs")
    parser.add_argument("--pairs", type=int, default=None, help="runs with and without power (default 3; quick 3)")
    args = parser.parse_args(argv)
    pairs = args.pairs or 3
    print(f"power accounting (issue 45; goal <= {GOAL}x the run without it; {pairs} alternated pairs, medians):")
    for name, fields in CASES.items():
        if not Path(fields["workload"]).exists():
            print(f"  {name}: skipped ({fields['workload']} is not there)")
            continue
        fields = {**fields, **({"max_jobs": 20_000} if args.quick else {})}
        without, with_power, alone, switched = [], [], [], []
        for _ in range(pairs):
            without.append(timed(fields)[0])
            whole, accounting = timed({**fields, **POWER})
            with_power.append(whole)
            alone.append(accounting)
            switched.append(timed({**fields, **POWER, **SWITCH_OFF, "node_off_w": IDLE_W[name]})[0])
        base, powered, accounting = statistics.median(without), statistics.median(with_power), statistics.median(alone)
        off = statistics.median(switched)
        print(
            f"  {name}: without {base:.2f} s, with {powered:.2f} s -> {powered / base:.3f}x; "
            f"the accounting alone {accounting:.2f} s ({accounting / base:.1%} of the run); "
            f"with idle nodes switched off (at the idle draw, boots of 0 s: the same schedule) {off:.2f} s -> "
            f"{off / base:.3f}x"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
