"""Reservations on backlogs: the matrix's slowest cells, this checkout against a baseline (issues 40, 61 §2).

R-LIST-Q and conservative backfilling stopped at their wall-clock limit on the whole logs.

    python -m benchmarks.run --only reservations [--baseline PATH]
    python -m benchmarks.reservations [--jobs N] [--repeats R] [--baseline PATH]

R-LIST-Q and conservative backfilling recompute every waiting job's reservation at every pass (RIGID
Alg. 1; Mu'alem and Feitelson 2001); on the torus each reservation is a search over the profile's steps
for the first one from which a partition stays free, the MFP heuristic's choice among the partitions
free there, and the steps split and taken. With failures the queue holds hundreds of jobs and the
profile hundreds of steps. The search keeps, per size, which steps hold a free partition on their own
and, where numba imports, the whole pass runs compiled over the steps mirrored as arrays
(:meth:`~torus_sim.policies.partition_steps.StepArrays.plan`: the search, the MFP choice through a memo,
the reservations, the floors per size and the test that stops a pass once no later job could start
now). On a cluster R-LIST-Q reserves on conservative backfilling's compiled count profile
(:mod:`torus_sim.policies.count_reservations`).

Each cell (a prefix of the matrix's log: SDSC-SP2, CTC-SP2 on the cluster) runs in its own process,
this checkout and the baseline alternated, after one untimed run of every cell on 200 jobs in each (numba
compiles a changed module's functions once, then loads them from its cache); the median wall of :func:`benchmarks.matrix.run_cell` and
the digest of the job record are printed, with the ratio (this / baseline: below 1 is faster) and
whether both gave the same schedule. :func:`plain_search` is the reference scan of every step the
tests compare the search with.
"""

from __future__ import annotations

import argparse
import bisect
import math
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

CELLS = (
    ("R-LIST-Q", "torus 4x4x8", "LANL, logged repairs", 4000),
    ("R-LIST-Q", "Mira 2x3x4x4", "Mira", 4000),
    ("conservative", "Mira 2x3x4x4", "LANL, logged repairs", 4000),
    ("R-LIST-Q", "cluster, node ids", "LANL, logged repairs", 15000),
    ("conservative", "Mira 2x3x4x4", "LANL, logged repairs", 12000),
    ("R-LIST-Q", "Mira 2x3x4x4", "Mira", 10000),
)
"""(policy, platform, failure source, jobs) of the matrix: cells that stopped on the whole logs, on prefixes
whose queues hold hundreds of jobs (thousands on the cluster)."""


def plain_search(self, size: int, duration: float, floor: float):
    """The baseline: every step from ``floor`` asked in turn (the partition table's memo per step), as before the flags."""
    if math.isinf(floor):
        return math.inf, None
    free_under = self.table.free_ids_under
    dates, occupied = self.dates, self.occupied
    for index in range(bisect.bisect_left(dates, floor), len(dates)):
        if not len(free_under(occupied[index], size)):
            continue
        window = self._window(index, duration)
        candidates = free_under(window, size)
        if len(candidates):
            return dates[index], self._choose(candidates, window, dates[index])
    return math.inf, None


_CHILD = """
import sys, time
from pathlib import Path
from benchmarks.matrix import Cell, run_cell
policy, platform, failures, jobs, fta = sys.argv[1:]
began = time.perf_counter()
result = run_cell(Cell(policy, platform, failures), int(jobs), Path(fta))
wall = time.perf_counter() - began
print(result.status, result.digest, wall)
"""


def timed(checkout: Path, cell, jobs: int, fta: Path) -> tuple[float, str]:
    """Wall time (seconds, of the run alone) of one matrix cell on ``jobs`` jobs in a fresh process of ``checkout``, and its digest.

    Raises:
        RuntimeError: the cell did not complete.
    """
    environment = {**os.environ, "PYTHONPATH": str(checkout)}
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, *cell, str(jobs), str(fta)], cwd=checkout, env=environment, capture_output=True, text=True
    )
    words = done.stdout.split()
    if done.returncode or len(words) != 3 or words[0] != "completed":
        raise RuntimeError(f"{cell} in {checkout.name}: {done.stdout[-500:]}{done.stderr[-2000:]}")
    return float(words[2]), words[1]


def main(argv: list[str] | None = None) -> int:
    """Time each cell here (and on the baseline, alternated); print the medians, their ratio and the digests."""
    from benchmarks.matrix import write_lanl_as_fta

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=None, help="a prefix of N jobs for every cell (default: each cell's)")
    parser.add_argument("--repeats", type=int, default=2, help="runs of each (default 2)")
    parser.add_argument("--baseline", type=Path, default=None, help="another checkout measured beside this one")
    args = parser.parse_args(argv)
    here = Path(__file__).resolve().parents[1]
    checkouts = [("this", here)] + ([("baseline", args.baseline.resolve())] if args.baseline else [])
    with tempfile.TemporaryDirectory() as folder:
        fta = Path(folder) / "fta.txt"
        write_lanl_as_fta(fta)
        for _, checkout in checkouts:  # numba's cache compiled first: a process after a source change compiles for seconds
            for *cell, _ in CELLS:
                timed(checkout, cell, 200, fta)
        print(f"Reservations on backlogs (median of {args.repeats}, each run in its own process after a warm-up run):")
        for *cell, jobs in CELLS:
            jobs = args.jobs or jobs
            walls: dict[str, list[float]] = {name: [] for name, _ in checkouts}
            digests: dict[str, set[str]] = {name: set() for name, _ in checkouts}
            for _ in range(args.repeats):
                for name, checkout in checkouts:
                    wall, digest = timed(checkout, cell, jobs, fta)
                    walls[name].append(wall)
                    digests[name].add(digest)
            now = statistics.median(walls["this"])
            line = f"  {cell[0]:<13} {cell[1]:<18} {cell[2]:<21} {jobs:>6,} jobs  now {now:7.1f} s"
            if args.baseline:
                before = statistics.median(walls["baseline"])
                same = (
                    "same schedule"
                    if digests["this"] == digests["baseline"] and len(digests["this"]) == 1
                    else "SCHEDULES DIFFER"
                )
                line += f"  baseline {before:7.1f} s  ratio {now / before:4.2f}x ({same}, {sorted(digests['this'])[0]})"
            else:
                line += f"  ({sorted(digests['this'])[0]})"
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
