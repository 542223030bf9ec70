"""RLScheduler's evaluation protocol on the engine: its windows, its cleaning, its heuristics' table.

Run it (SDSC-SP2 and HPC2N under ``../shared/data/swf``, about 20 s on 2 cores)::

    python -m torus_sim.rl.rlscheduler                    # the table, beside the published values
    python -m torus_sim.rl.rlscheduler --wait actual      # WFP3 and UNICEP with the time actually waited

Zhang et al., "RLScheduler" (SC'20, Table V; DIR-LAB/deep-batch-scheduler's ``make_table_script.py``
and ``compare-make-table.py``) compare FCFS, WFP3, UNICEP, SJF and F1 with and without backfilling on
10 windows of 1,024 consecutive jobs, seed 1, the windows' first jobs drawn from the first 10,000 jobs
of SDSC-SP2 and HPC2N; each window on an empty machine; the value is the mean bounded slowdown
max(1, (wait + run) / max(run, 10)) of the window's jobs, averaged over the windows. Here:

* cleaning: the ``rlscheduler`` SWF rules (:data:`~torus_sim.inputs.workload.jobs.SWF_RULES`): size =
  max(allocated, requested), an unknown requested time the logged runtime, an unknown runtime 10 s,
  runtime 0 dropped, no kill at the requested time;
* machine: a cluster of the log's ``MaxProcs`` nodes (both logs have one processor per node; a log
  with more is refused: RLScheduler allocates whole nodes but scores processors);
* windows: :func:`window_starts`, RLScheduler's draws (``np_random.randint(len, slice - len - 1)``
  once per window) from its generator: gym's 2019 ``seeding.np_random(seed)``, a NumPy RandomState
  seeded with the SHA-512 of the seed's decimal text (:func:`legacy_gym_generator`);
* schedule: the built-in ``greedy`` policy (:class:`~torus_sim.policies.priority.PriorityPolicy`) with
  the order, ``backfill="rlscheduler"`` or ``"none"`` and ``wait="rlscheduler"`` (its code's reading of
  WFP3's and UNICEP's wait, -1 - s), under ``event_order="each-event-submissions-first"``.

With these, every start time of every job of the 200 window schedules equals the one RLScheduler's own
simulator gives (tests/test_rlscheduler.py against its outputs, tests/peers/rlscheduler), and the table
equals the published one cell for cell (docs/rl).

References:
    Zhang, Dai, He, Bao, Xie: RLScheduler, SC'20, §5 and Table V; Tang et al. 2009 (WFP3, UNICEP);
    Carastan-Santos & de Camargo, SC'17 (F1); Feitelson (bounded slowdown, Γ = 10 s).
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

import numpy as np

__all__ = [
    "HEURISTICS",
    "PUBLISHED",
    "TRACES",
    "heuristic_table",
    "legacy_gym_generator",
    "main",
    "run_window",
    "window_starts",
]

HEURISTICS = ("FCFS", "WFP3", "UNICEP", "SJF", "F1")
"""The table's columns, in RLScheduler's order; each is the ``greedy`` policy's order of the same name."""

TRACES = {"SDSC-SP2": "SDSC-SP2-1998-4.2-cln.swf.gz", "HPC2N": "HPC2N-2002-2.2-cln.swf.gz"}
"""The real traces of the table and their files under ``../shared/data/swf``."""

PUBLISHED = {
    ("SDSC-SP2", False): (1727.54, 3000.88, 1848.45, 2680.55, 1232.06),
    ("HPC2N", False): (297.18, 426.99, 609.77, 157.71, 118.01),
    ("SDSC-SP2", True): (1595.12, 1083.12, 548.01, 2167.84, 1098.22),
    ("HPC2N", True): (127.38, 97.39, 175.12, 122.04, 71.95),
}
"""RLScheduler's Table V (bounded slowdown; also its repository's README), by (trace, backfilling), in
:data:`HEURISTICS` order."""

WINDOW, WINDOWS, SEED, BATCH_JOB_SLICE = 1024, 10, 1, 10_000


def legacy_gym_generator(seed: int) -> np.random.RandomState:
    """The generator gym's ``seeding.np_random(seed)`` made in 2019 (gym before 0.22), which RLScheduler uses.

    The seed's decimal text is hashed with SHA-512; the first 8 bytes, read as little-endian 32-bit
    words with 4 zero bytes of padding after them (gym's ``_bigint_from_bytes``), form an integer
    whose base-2^32 digits, least significant first, seed a NumPy ``RandomState``.

    Args:
        seed: a whole number >= 0 (taken modulo 2^64, as gym's ``create_seed``).

    Returns:
        The seeded ``RandomState`` (its legacy streams are stable across NumPy versions).
    """
    digest = hashlib.sha512(str(seed % 2**64).encode("utf8")).digest()[:8] + b"\0" * 4
    number = sum(int.from_bytes(digest[4 * i : 4 * i + 4], "little") << (32 * i) for i in range(3))
    words = []
    while number > 0:
        number, word = divmod(number, 2**32)
        words.append(word)
    return np.random.RandomState(words or [0])


def window_starts(
    jobs: int, seed: int = SEED, windows: int = WINDOWS, length: int = WINDOW, batch_job_slice: int = BATCH_JOB_SLICE
) -> list[int]:
    """The first jobs of RLScheduler's test windows (``reset_for_test``: one draw per window).

    Args:
        jobs: jobs in the cleaned log.
        seed: the protocol's seed (``--seed``, 1 in its table script).
        windows: how many (``--iter``).
        length: jobs per window (``--len``).
        batch_job_slice: draw from the first this many jobs (0: the whole log).

    Returns:
        Job indices, in draw order.
    """
    rng = legacy_gym_generator(seed)
    high = (batch_job_slice if batch_job_slice else jobs) - length - 1
    return [int(rng.randint(length, high)) for _ in range(windows)]


def _workload(path: str):
    from torus_sim.core.errors import ConfigurationError
    from torus_sim.experiments.run_inputs import load_workload
    from torus_sim.experiments.scenario import Scenario

    scenario = Scenario.make("rlscheduler", platform="cluster", workload=path, swf_rules="rlscheduler")
    workload = load_workload(scenario)
    header = workload.header or {}
    nodes, processors = int(header.get("MaxNodes", 0) or 0), int(header.get("MaxProcs", 0) or 0)
    processors = processors or nodes or workload.processors
    if nodes and processors != nodes:
        raise ConfigurationError(
            f"{path}: {processors} processors on {nodes} nodes; RLScheduler allocates whole nodes but scores processors, "
            "which is not reproduced here (one processor per node only)"
        )
    return scenario, workload, processors


def run_window(
    scenario, workload, nodes: int, start: int, order: str, backfill: bool, wait: str = "rlscheduler", length: int = WINDOW
):
    """One window's schedule: the greedy policy on jobs ``start .. start + length - 1`` on an empty cluster.

    Args:
        scenario: the run's scenario (cluster, the ``rlscheduler`` rules).
        workload: the cleaned log.
        nodes: the cluster's nodes.
        start: the window's first job (index in the cleaned log).
        order: a :data:`~torus_sim.policies.priority.ORDERS` name.
        backfill: RLScheduler's backfilling around the committed job.
        wait: WFP3's and UNICEP's reading of the wait (``rlscheduler`` or ``actual``).
        length: jobs in the window.

    Returns:
        ``(mean bounded slowdown, jobs table)``: the table has job_id, submitted_at, first_started_at, ...
    """
    from torus_sim.experiments.model_builder import build_model
    from torus_sim.inputs.workload.jobs import Workload
    from torus_sim.policies.priority import PriorityPolicy

    jobs = [workload.jobs[index] for index in range(start, start + length)]
    window = Workload(
        jobs,
        f"{workload.source} jobs {start}..{start + length - 1}",
        workload.sha256,
        1.0,
        header=workload.header,
        kind="online",
        processors=nodes,  # the cluster's nodes (the scenario names none)
    )
    policy = PriorityPolicy(order, "rlscheduler" if backfill else "none", wait)
    model = build_model(
        scenario,
        {"workload": window, "failures": None, "uncovered": None},
        policy=policy,
        event_order="each-event-submissions-first",  # RLScheduler's simulator: due submissions before the next end
    )
    table = model.run().jobs
    runtime = table["runtime"].to_numpy()
    bsld = np.maximum((table["finished_at"].to_numpy() - table["submitted_at"].to_numpy()) / np.maximum(runtime, 10.0), 1.0)
    return float(bsld.sum()) / length, table


def heuristic_table(swf_folder: Path, wait: str = "rlscheduler", traces=tuple(TRACES)) -> list[dict]:
    """The table: one row per (trace, backfilling), the mean over the windows of each heuristic.

    Args:
        swf_folder: the folder holding :data:`TRACES`' files.
        wait: WFP3's and UNICEP's reading of the wait.
        traces: which traces.

    Returns:
        Rows ``{"trace", "backfilling", "windows": [starts], HEURISTIC: mean bsld, ...}``.

    Raises:
        FileNotFoundError: a trace is missing.
    """
    rows = []
    for trace in traces:
        scenario, workload, nodes = _workload(str(swf_folder / TRACES[trace]))
        starts = window_starts(len(workload.jobs))
        for backfill in (False, True):
            row = {"trace": trace, "backfilling": backfill, "windows": starts}
            for name in HEURISTICS:
                values = [run_window(scenario, workload, nodes, start, name.lower(), backfill, wait)[0] for start in starts]
                row[name] = float(np.mean(values))
            rows.append(row)
    return rows


def markdown(rows: list[dict], published: bool = True) -> str:
    """The table as markdown, each cell ``ours (published)`` when ``published``.

    Args:
        rows: :func:`heuristic_table`'s rows.
        published: put Table V's value beside each cell.

    Returns:
        The markdown text (mean bounded slowdown, 2 decimals).
    """
    lines = ["| trace | backfilling | " + " | ".join(HEURISTICS) + " |", "|---|---|" + "---:|" * len(HEURISTICS)]
    for row in rows:
        key = (row["trace"], row["backfilling"])
        cells = []
        for index, name in enumerate(HEURISTICS):
            cell = f"{row[name]:,.2f}"
            if published and key in PUBLISHED:
                cell += f" ({PUBLISHED[key][index]:,.2f})"
            cells.append(cell)
        lines.append(f"| {row['trace']} | {'with' if row['backfilling'] else 'without'} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Command line: print the table; exit 1 when a cell differs from the published one (``--wait rlscheduler``)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--swf", type=Path, default=Path("../shared/data/swf"), help="folder of the SWF logs")
    parser.add_argument("--wait", choices=("rlscheduler", "actual"), default="rlscheduler", help="WFP3's and UNICEP's wait")
    args = parser.parse_args(argv)
    from torus_sim.core.errors import TorusSimError

    try:
        rows = heuristic_table(args.swf, args.wait)
    except (TorusSimError, FileNotFoundError) as error:
        print(f"torus_sim.rl.rlscheduler: error: {error}", file=sys.stderr)
        return 2
    print(
        f"mean bounded slowdown, {WINDOWS} windows of {WINDOW} jobs, seed {SEED}, first jobs from the first {BATCH_JOB_SLICE:,}"
    )
    print("windows: " + ", ".join(f"{row['trace']} {row['windows']}" for row in rows[::2]))
    print(markdown(rows, published=args.wait == "rlscheduler"))
    if args.wait != "rlscheduler":
        return 0
    differ = [
        (row["trace"], row["backfilling"], name)
        for row in rows
        for index, name in enumerate(HEURISTICS)
        if round(row[name], 2) != PUBLISHED[(row["trace"], row["backfilling"])][index]
    ]
    print(f"{20 - len(differ)} of 20 cells equal the published values" + (f"; differing: {differ}" if differ else ""))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
