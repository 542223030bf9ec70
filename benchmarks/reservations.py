"""The torus profile's reservation search on backlogs (issue 40: whole-log cells that did not finish).

R-LIST-Q and conservative backfilling stopped at their wall-clock limit on the whole logs.

    python -m benchmarks.run --only reservations      # or: python -m benchmarks.reservations [--jobs N]

R-LIST-Q and conservative backfilling recompute every waiting job's reservation at every pass (RIGID
Alg. 1; Mu'alem and Feitelson 2001); on the torus each reservation is a search over the profile's steps
for the first one from which a partition stays free (:meth:`~torus_sim.policies.availability.PartitionProfile.earliest`).
With failures the queue holds hundreds of jobs and the profile hundreds of steps. The search keeps, per
size, which steps hold a free partition on their own (a step that holds none never does again in the
pass) and, where numba imports, runs compiled over the steps mirrored as arrays
(:mod:`torus_sim.policies.partition_steps`); the baseline is :func:`plain_search`, the Python scan of every
step it replaced, swapped in for the same runs, with :func:`plain_earliest` (the search's floor found by
scanning every answer the profile gave: :class:`~torus_sim.policies.availability.StartFloors` replaced
it). On a cluster R-LIST-Q reserves on conservative
backfilling's compiled count profile (:mod:`torus_sim.policies.count_reservations`); the baseline is the
Python profile. Both give the same schedule (the digest of the job record is printed and compared); the
cells are the matrix's (:mod:`benchmarks.matrix`) on prefixes of SDSC-SP2 (CTC-SP2 on the cluster),
alternated (plain, now, plain, ...), the median of each printed.
"""

from __future__ import annotations

import argparse
import bisect
import math
import statistics
import sys
import tempfile
import time
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


def plain_earliest(self, size: int, duration: float):
    """The baseline's floor: every (duration, start) the profile answered for the size scanned at each call, as before the staircase."""
    found = self.__dict__.setdefault("_plain_found", {}).setdefault(size, [])
    floor = self.dates[0]
    for shorter, start_at in found:
        if shorter <= duration and start_at > floor:
            floor = start_at
    answer = self._search(size, duration, floor)
    found.append((duration, answer[0]))
    return answer


def timed(cell, jobs: int, fta: Path, plain: bool) -> tuple[float, str]:
    """Wall time of one matrix cell on ``jobs`` jobs and its job-record digest, plain or as the code runs.

    Plain: the torus profile's :func:`plain_search` and :func:`plain_earliest`, and on a cluster R-LIST-Q's reservations on the
    Python profile (:class:`~torus_sim.policies.availability.AvailabilityProfile`, as where numba is
    missing) instead of the compiled one.
    """
    from benchmarks.matrix import Cell, run_cell
    from torus_sim.policies import easy
    from torus_sim.policies.availability import PartitionProfile

    kept, earliest, compiled = PartitionProfile._search, PartitionProfile.earliest, easy._COUNT_PROFILE
    if plain:
        PartitionProfile._search, PartitionProfile.earliest = plain_search, plain_earliest
        easy._COUNT_PROFILE = None
    try:
        began = time.perf_counter()
        result = run_cell(Cell(*cell), jobs, fta)
        wall = time.perf_counter() - began
    finally:
        PartitionProfile._search, PartitionProfile.earliest, easy._COUNT_PROFILE = kept, earliest, compiled
    if result.status != "completed":
        raise RuntimeError(f"{cell}: {result.sentence}")
    return wall, result.digest


def main(argv: list[str] | None = None) -> int:
    """Time each cell plain and as the code runs, alternated; print the medians, their ratio and the digests."""
    from benchmarks.matrix import write_lanl_as_fta

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=None, help="a prefix of N jobs for every cell (default: each cell's)")
    parser.add_argument("--repeats", type=int, default=2, help="runs of each (default 2)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        fta = Path(folder) / "fta.txt"
        write_lanl_as_fta(fta)
        print(f"Reservations on backlogs (median of {args.repeats}; plain: the scan of every step / the Python count profile):")
        for *cell, jobs in CELLS:
            jobs = args.jobs or jobs
            walls: dict[bool, list[float]] = {True: [], False: []}
            digests: dict[bool, set[str]] = {True: set(), False: set()}
            for _ in range(args.repeats):
                for plain in (True, False):
                    wall, digest = timed(cell, jobs, fta, plain)
                    walls[plain].append(wall)
                    digests[plain].add(digest)
            same = "same schedule" if digests[True] == digests[False] and len(digests[True]) == 1 else "SCHEDULES DIFFER"
            before, after = statistics.median(walls[True]), statistics.median(walls[False])
            print(
                f"  {cell[0]:<13} {cell[1]:<18} {cell[2]:<21} {jobs:>6,} jobs  plain {before:7.1f} s  now {after:7.1f} s"
                f"  {before / after:5.2f}x faster  ({same}, {sorted(digests[False])[0]})"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
