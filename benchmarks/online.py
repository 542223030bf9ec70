"""Benchmark of the online replay (PV-EASY issue): the full CTC-SP2 trace under FCFS-EASY and PV-EASY.

Each replay runs in its own process, which reports its wall time and peak memory (max RSS). Goal
(issue 5): under 30 s each on one core. Baseline measured in the same run: Mesa's DEVSimulator
running the same number of no-op events (one per arrival, one per job end, one per pass).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from benchmarks.child import CHILD_PRELUDE

CTC = Path(__file__).resolve().parents[2] / "shared" / "data" / "swf" / "CTC-SP2-1996-3.1-cln.swf.gz"

_CHILD = (
    CHILD_PRELUDE
    + """
began = time.perf_counter()
predictor = None if sys.argv[3] == "estimate" else sys.argv[3]
scenario = Scenario(platform="cluster", nodes=430, workload=sys.argv[1], policy=sys.argv[2], runtime_predictor=predictor)
inputs = {}
model = build_model(scenario, inputs)
loaded = time.perf_counter() - began
model.run()
events = model.counters["events_run"] + model.counters["events_cancelled"]
print(json.dumps({"seconds": time.perf_counter() - began, "load_seconds": loaded, "events": events,
                  "max_rss_mib": peak_mib()}))
"""
)


def ctc_replays() -> None:
    """Time the full CTC replay under FCFS-EASY (estimates) and PV-EASY (Last Model), P = 430."""
    from benchmarks.floor import engine_floor

    if not CTC.exists():
        print(f"CTC trace not found at {CTC}", file=sys.stderr)
        return
    print("Full CTC-SP2 replay (77,222 jobs, P = 430), one process each:")
    for policy, predictor in (("FCFS-EASY", "estimate"), ("PV-EASY", "last")):
        output = subprocess.run(
            [sys.executable, "-c", _CHILD, str(CTC), policy, predictor], capture_output=True, text=True, check=True
        )
        found = json.loads(output.stdout.strip().splitlines()[-1])
        floor = engine_floor(found["events"])
        print(
            f"  {policy:<10} {found['seconds']:.1f} s (reading the trace {found['load_seconds']:.1f} s), "
            f"{found['max_rss_mib']:.0f} MiB peak; {found['events']:,} events, Mesa no-op floor {floor:.1f} s "
            f"({found['seconds'] / floor:.1f}x); goal < 30 s"
        )
