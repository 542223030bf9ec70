"""Plain reference implementations the fast code of the package is tested (and benchmarked) against.

Each is the obvious way to compute what a vectorized, memoized or bitset version in ``torus_sim`` computes; the
tests check one against the other on random and real inputs (STYLE rule 11). They live here, not in the package:
nothing at run time calls them.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from itertools import product

import networkx as nx
import numpy as np

from torus_sim.inputs.workload.jobs import SwfRules
from torus_sim.inputs.workload.swf import SwfTrace
from torus_sim.machine.partitions import Partition, partitions_of_size
from torus_sim.machine.topology import Torus


def brute_force_free_partitions(torus: Torus, blocked: np.ndarray, size: int) -> set[Partition]:
    """Free partitions of a size, found by checking every supernode of every candidate box.

    The naive search of BGL-FAULT Appendix 9: the reference of :class:`~torus_sim.machine.partition_table.PartitionTable`
    and :func:`~torus_sim.machine.partitions.free_partitions_by_box_sums`.

    Args:
        torus: the torus.
        blocked: bool array of shape ``(torus.size,)``, True where a supernode is busy or down.
        size: partition size.

    Returns:
        The set of free partitions of that size.
    """
    free = set()
    for partition in partitions_of_size(torus, size):  # every shape, then every base
        base, shape = partition.base, partition.shape
        if all(
            not blocked[torus.index(tuple(b + o for b, o in zip(base, offset, strict=True)))]
            for offset in product(*(range(extent) for extent in shape))
        ):  # stops at the first busy cell
            free.add(partition)
    return free


def torus_graph(torus) -> nx.Graph:
    """The torus as a networkx graph whose nodes are supernode indices.

    The reference :meth:`~torus_sim.machine.topology.Torus.neighbours` is tested against (networkx's grid graph).

    Returns:
        An undirected graph with ``size`` nodes and an edge between torus neighbours (no
        wrap-around edge along a mesh dimension).
    """
    import networkx as nx  # here, not at the top: the command line's start-up reads this module

    # grid_graph numbers its node tuples in reverse order of `dim`, so reversed dims give (x, y, z, ...).
    grid = nx.grid_graph(dim=list(reversed(torus.dims)), periodic=list(reversed(torus.wraps)))
    return nx.relabel_nodes(grid, {node: torus.index(node if isinstance(node, tuple) else (node,)) for node in grid})


def mfp_after_by_groups(table, candidate_ids: np.ndarray, words: np.ndarray) -> np.ndarray:
    """:meth:`~torus_sim.machine.partition_table.PartitionTable.mfp_after` the plain way, the reference the bitset answer is tested against.

    Free partitions are visited one size group at a time from the largest; each group settles
    every candidate disjoint from one of its members (no memo, no bitsets).
    """
    candidate_ids = np.asarray(candidate_ids, dtype=np.int64)
    result = np.zeros(len(candidate_ids), dtype=np.int64)
    free = table.free_ids(words)
    if not len(free) or not len(candidate_ids):
        return result
    free_sizes = table.sizes[free]
    starts = np.flatnonzero(np.r_[True, free_sizes[1:] != free_sizes[:-1]])
    ends = np.r_[starts[1:], len(free)]
    remaining = np.arange(len(candidate_ids))
    for start, end in zip(starts, ends, strict=True):
        settled = ~table.overlaps(candidate_ids[remaining], free[start:end]).all(axis=1)
        result[remaining[settled]] = free_sizes[start]
        remaining = remaining[~settled]
        if not len(remaining):
            break
    return result


def reservation_by_steps(table, head, blocked, allocation, expected_end, repairs, now):
    """Krevat's :meth:`~torus_sim.policies.krevat.KrevatScheduler._reservation` the plain way: release one instant after another until the head fits."""
    releases: dict[float, list[np.ndarray]] = {}
    for job, partition_id in allocation.items():
        releases.setdefault(expected_end[job], []).append(table.members[partition_id])
    for repair_at, supernode in repairs:
        releases.setdefault(max(repair_at, now), []).append(np.array([supernode]))
    shadow = blocked.copy()
    for at in sorted(releases):
        for members in releases[at]:
            shadow[members] = False
        if len(table.free_ids_of_size(table.pack(shadow), head.partition_size)):
            return at, shadow
    return math.inf, shadow


def jobs_by_lines(
    trace: SwfTrace, capacity: int, round_size: Callable[[int], int] | None, load_scale: float, rules: SwfRules
) -> tuple[list[tuple], Counter]:
    """The plain reference of :func:`torus_sim.inputs.workload.jobs.jobs_from_swf`'s cleaning: one job line at a time.

    Returns:
        ``(rows, cleaning)``: one ``(job_id, submitted_at, runtime, walltime, size, partition_size,
        user_id)`` tuple per usable line, in file order (not sorted), and the cleaning counts.
    """
    max_nodes = trace.header_int("MaxNodes") or trace.header_int("MaxProcs")
    scale = capacity / max_nodes if rules.scale_to_platform and max_nodes and max_nodes > capacity else 1.0
    cleaning: Counter = Counter()
    rows: list[tuple] = []
    last_submit = -math.inf
    for record in trace.records:
        if record.submit_time < 0:
            cleaning["skipped_unknown_submit"] += 1
            continue
        first, second = record.allocated_processors, record.requested_processors
        if rules.size_from_request:
            first, second = second, first
        processors = first
        if processors <= 0:
            processors = second
            if processors <= 0:
                cleaning["skipped_unknown_size"] += 1
                continue
            cleaning["size_from_allocation" if rules.size_from_request else "size_from_request"] += 1
        if rules.size_max_of_both and first > 0 and second > first:
            processors = second
            cleaning["size_max_of_both"] += 1
        run_time = record.run_time
        if rules.unknown_runtime is not None and run_time < 0:
            run_time = rules.unknown_runtime
            cleaning["runtime_unknown_as_10s" if rules.unknown_runtime == 10.0 else "runtime_unknown_replaced"] += 1
        if run_time < 0:
            cleaning["skipped_unknown_runtime"] += 1
            continue
        if rules.min_runtime > 0 and run_time < rules.min_runtime:
            cleaning["skipped_short_runtime"] += 1
            continue
        if rules.min_walltime > 0 and record.requested_time < rules.min_walltime:
            cleaning["skipped_no_walltime"] += 1
            continue
        size = processors
        if scale != 1.0:
            size = max(1, math.ceil(processors * scale - 1e-9))
            cleaning["size_scaled"] += 1
        if size > capacity:
            cleaning["skipped_too_large"] += 1
            continue
        partition_size = round_size(size) if round_size else size
        if partition_size != size:
            cleaning["size_rounded_up"] += 1
        walltime = record.requested_time
        if walltime < 0 or (walltime == 0 and not rules.zero_walltime_kept):
            walltime = max(run_time, rules.walltime_floor) if rules.walltime_floor else run_time
            if rules.zero_walltime_kept:
                walltime = record.run_time
            cleaning["walltime_from_runtime"] += 1
        runtime = run_time
        if rules.kill_at_walltime and runtime > walltime:
            runtime = walltime
            cleaning["cut_at_walltime"] += 1
        if record.submit_time < last_submit:
            cleaning["reordered"] += 1
        last_submit = max(last_submit, record.submit_time)
        rows.append(
            (record.job_id, record.submit_time, runtime * load_scale, walltime * load_scale, size, partition_size, record.user_id)
        )
    return rows, cleaning
