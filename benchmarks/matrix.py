"""Every built-in on every platform it declares, with every failure source (issue 40, section 2).

``python -m benchmarks.run --only matrix`` runs the whole logs; ``--matrix-jobs N`` a prefix of N jobs
of each (the test suite's cells, ``tests/test_matrix.py``). Each cell is one policy on one platform
with one failure source on a real SWF log; the table says, for each, ``completed`` or the sentence it
was refused with, the wall time, the failures that hit the run, and a digest of the job record (the
first 12 hex digits of the SHA-256 of every job's id, start, end, kills and preemptions), so two
commits' tables show which schedules moved.

Axes:
    policies: every built-in (:data:`torus_sim.policies.catalog.BUILTIN_POLICIES`).
    platforms: BG/L's 4x4x8 torus of supernodes and Mira's 2x3x4x4 torus of midplanes with
        SDSC-SP2 (128 processors; on Mira the log's machine is scaled onto 96 midplanes), a cluster
        of CTC-SP2's 338 nodes keeping node identities, and the same cluster keeping counts only.
    failures: none; the BG/L RAS sample (FATAL lines); LANL's failure data with the logged repair
        times (``downtime = "log"``); the same LANL system 20 in the Failure Trace Archive's
        ``event_trace`` layout (written from the published CSV, :func:`write_lanl_as_fta`); Mira's
        LogAider events; 4,000 synthetic bursty failures.

A count-only cluster cannot tell nodes apart, so it runs without failures only (node failures make
the engine keep identities, which is the node-identity column). A policy that declares it cannot run a
cell (MOLDABLE's four on rigid jobs) is refused before anything runs: the cell shows the sentence.
"""

from __future__ import annotations

import hashlib
import os
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from torus_sim.core.errors import TorusSimError
from torus_sim.policies.catalog import BUILTIN_POLICIES

__all__ = [
    "FAILURE_SOURCES",
    "FTA_HEADER",
    "PLATFORMS",
    "Cell",
    "CellResult",
    "cells",
    "job_digest",
    "matrix",
    "print_table",
    "read_markdown",
    "run_cell",
    "write_markdown",
    "write_lanl_as_fta",
]

SHARED_DATA = Path(os.environ.get("TORUS_SIM_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data").resolve()
"""The shared inputs: the mirror ``TORUS_SIM_DATA`` names (as the runs read it), else ../shared/data beside the checkout
(so a baseline checkout elsewhere finds them)."""
SDSC = SHARED_DATA / "swf" / "SDSC-SP2-1998-4.2-cln.swf.gz"
CTC = SHARED_DATA / "swf" / "CTC-SP2-1996-3.1-cln.swf.gz"
BGL_RAS = SHARED_DATA / "failures" / "bgl" / "BGL_2k.log"
LANL = SHARED_DATA / "failures" / "lanl" / "LA-UR-05-7318-failure-data-1996-2005.csv.xz"
FTA_HEADER = "event_id component_id node_id platform_id node_name event_type event_start_time event_stop_time event_end_reason"
"""The FTA ``event_trace`` table's header row (Kondo et al., CCGrid 2010), space-separated here."""
FTA_SYSTEM = "20"
"""The LANL system written in the FTA layout: system 20, 512 nodes, 2,478 failures (Schroeder & Gibson)."""

PLATFORMS: dict[str, dict] = {
    "torus 4x4x8": {"platform": "torus", "workload": str(SDSC)},
    "Mira 2x3x4x4": {"machine": "mira", "workload": str(SDSC)},
    "cluster, node ids": {"platform": "cluster", "nodes": 338, "workload": str(CTC), "node_identities": True},
    "cluster, counts": {"platform": "cluster", "nodes": 338, "workload": str(CTC)},
}
"""Platform columns: scenario fields (``node_identities`` is the model's, not the scenario's)."""

FAILURE_SOURCES: dict[str, dict] = {
    "none": {"failures": "none"},
    "BG/L RAS": {"failures": str(BGL_RAS)},
    "LANL, logged repairs": {"failures": str(LANL), "downtime": "log"},
    "FTA event_trace": {"failures": "{fta}", "fta_system": FTA_SYSTEM, "fta_nodes": 512, "downtime": "log"},
    "Mira": {"failures": "mira"},
    "synthetic bursty": {"failures": "synthetic:4000:bursty"},
}
"""Failure rows: scenario fields (``{fta}`` is the FTA table :func:`write_lanl_as_fta` writes)."""

COUNT_ONLY = "cluster, counts"


@dataclass(frozen=True)
class Cell:
    """One policy on one platform with one failure source."""

    policy: str
    platform: str
    failures: str


@dataclass
class CellResult:
    """What a cell did.

    Attributes:
        cell: the cell.
        status: ``completed``, ``refused`` (a sentence before anything ran), ``failed`` (an error
            while the engine ran: a defect) or ``stopped`` (the cell's wall-clock limit came first;
            the sentence says how far it got).
        sentence: the refusal's or the failure's message ("" when completed).
        wall: seconds of wall time (building and running).
        jobs: jobs in the record; failures: failures that hit the run's span (None: not known, a cell
            carried over from a table that did not show it, or the failures of a stopped run).
        digest: 12 hex digits of the job record's SHA-256 ("" unless completed).
        summary: the run's summary metrics (empty unless completed).
    """

    cell: Cell
    status: str
    sentence: str = ""
    wall: float = 0.0
    jobs: int | None = 0
    failures: int | None = 0
    digest: str = ""
    summary: dict = field(default_factory=dict)


def cells(policies=BUILTIN_POLICIES, platforms=tuple(PLATFORMS), failures=tuple(FAILURE_SOURCES)) -> list[Cell]:
    """Every cell of the matrix (a count-only cluster without failures only), policies outermost."""
    return [
        Cell(policy, platform, source)
        for policy in policies
        for platform in platforms
        for source in failures
        if platform != COUNT_ONLY or source == "none"
    ]


def write_lanl_as_fta(path: Path, systems: tuple[str, ...] = (FTA_SYSTEM,), up_every: int = 0) -> int:
    """Write LANL systems' failures from the published CSV as an FTA ``event_trace`` table.

    The FTA republished LANL's data in this layout (Kondo et al., CCGrid 2010): one unavailability
    interval (``event_type`` 0) per failure, from "Prob Started" to "Prob Fixed" in seconds since 1970,
    ``node_id`` = system * 10,000 + node, ``platform_id`` the system, ``node_name`` = ``<system>.<node>``.

    Args:
        path: the table to write (tab-separated, with the FTA header row; gzip-compressed when the name
            ends in ``.gz``).
        systems: the LANL system numbers, as the CSV writes them.
        up_every: > 0: an availability interval (``event_type`` 1, one hour from the repair) follows
            every that many down intervals (the readers' tests); 0: none.

    Returns:
        The number of data lines written.
    """
    import gzip

    import pandas as pd

    table = pd.read_csv(LANL, dtype=str, keep_default_na=False)
    rows = table[table["System"].str.strip().isin(systems)]
    epoch = pd.Timestamp("1970-01-01")

    def seconds(column: str):
        stamps = pd.to_datetime(rows[column].str.strip(), format="%m/%d/%Y %H:%M")
        return ((stamps - epoch).dt.total_seconds()).astype(int)

    lines = ["\t".join(FTA_HEADER.split())]
    columns = (rows["System"].str.strip(), rows["nodenumz"].str.strip(), seconds("Prob Started"), seconds("Prob Fixed"))
    for index, (system, node, start, stop) in enumerate(zip(*columns, strict=True)):
        node_id = int(system) * 10_000 + int(node)
        lines.append(f"{2 * index}\t0\t{node_id}\t{system}\t{system}.{node}\t0\t{start}\t{stop}\t")
        if up_every and index % up_every == 0:
            lines.append(f"{2 * index + 1}\t0\t{node_id}\t{system}\t{system}.{node}\t1\t{stop}\t{stop + 3600}\t")
    text = "\n".join(lines) + "\n"
    if str(path).endswith(".gz"):
        Path(path).write_bytes(gzip.compress(text.encode()))
    else:
        Path(path).write_text(text)
    return len(lines) - 1


def job_digest(jobs) -> str:
    """12 hex digits of the SHA-256 of every job's (id, start, end, kills, preemptions), in job-id order.

    Args:
        jobs: the record's job table (columns ``job_id``,
            ``started_at``, ``finished_at``, ``kills``, ``preemptions``).
    """
    table = jobs.sort_values("job_id")
    columns = [table[name].to_numpy() for name in ("job_id", "started_at", "finished_at", "kills", "preemptions")]
    digest = hashlib.sha256()
    for column in columns:
        digest.update(np.ascontiguousarray(column, dtype=np.float64).tobytes())
    return digest.hexdigest()[:12]


def _scenario_fields(cell: Cell, max_jobs: int | None, fta: Path) -> tuple[dict, bool]:
    fields = {"policy": cell.policy, "max_jobs": max_jobs, "seed": 0}
    platform = dict(PLATFORMS[cell.platform])
    identities = platform.pop("node_identities", False)
    fields.update(platform)
    for key, value in FAILURE_SOURCES[cell.failures].items():
        fields[key] = str(fta) if value == "{fta}" else value
    return fields, identities


class _CellLimit(BaseException):
    """Raised by SIGUSR1's handler when a cell's wall-clock limit passes (a BaseException: no policy code swallows it)."""


class _Alarm:
    """A cell's wall-clock limit: past ``limit`` seconds, SIGUSR1 to the main thread every 0.1 s until :meth:`stop`.

    Each signal's handler raises :class:`_CellLimit` in the main thread (a process pool's worker runs its task there).
    A handler that runs inside a finalizer or a weakref callback has its exception printed and dropped by Python, so one
    signal may not end the run: the next one does. After :meth:`stop` no handler raises.
    """

    def __init__(self, limit: float) -> None:
        import signal
        import threading

        self._stopped = threading.Event()
        self._previous = signal.signal(signal.SIGUSR1, self._handle)
        main = threading.main_thread().ident
        self._thread = threading.Thread(target=self._send, args=(limit, main, signal.SIGUSR1), daemon=True)
        self._thread.start()

    def _send(self, limit: float, main: int, signum: int) -> None:
        import signal

        if self._stopped.wait(limit):
            return
        while not self._stopped.is_set():
            signal.pthread_kill(main, signum)
            self._stopped.wait(0.1)

    def _handle(self, signum, frame) -> None:
        if not self._stopped.is_set():
            raise _CellLimit

    def stop(self) -> None:
        """No more signals; the handler as it was before."""
        import signal

        self._stopped.set()
        self._thread.join()
        signal.signal(signal.SIGUSR1, self._previous)


def run_cell(cell: Cell, max_jobs: int | None, fta: Path, limit: float | None = None) -> CellResult:
    """Build and run one cell; a refusal while building is ``refused``, any error while running ``failed``.

    Args:
        cell: the cell.
        max_jobs: the prefix of the log (None: the whole log).
        fta: the FTA table :func:`write_lanl_as_fta` wrote.
        limit: seconds of wall time the run may take (None: no limit); past it the cell is ``stopped``
            and says how many jobs had completed by which simulated day (SIGUSR1 from a timer thread to
            the main thread, which a process pool's worker runs its task in).
    """
    from torus_sim.engine.model import SchedulingModel
    from torus_sim.experiments.runner import Scenario, model_arguments
    from torus_sim.metrics import summarize

    fields, identities = _scenario_fields(cell, max_jobs, fta)
    began = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # offered load, uncovered spans: the run's header says them
            arguments, keywords = model_arguments(Scenario.make("matrix", **fields), {}, node_identities=identities)
            model = SchedulingModel(*arguments, **keywords)
    except TorusSimError as error:  # the sentence names the shared inputs relative to the repository, not this machine
        return CellResult(cell, "refused", str(error).replace(str(SHARED_DATA), "../shared/data"), time.perf_counter() - began)
    alarm = _Alarm(limit) if limit is not None else None  # the engine's pass watchdog owns SIGALRM: SIGUSR1 here
    try:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                record = model.run()
            summary = summarize(record)
        finally:
            if alarm is not None:
                alarm.stop()  # no alarm raises after this
    except Exception as error:  # noqa: BLE001 - a cell that breaks is the finding, reported in the table
        if _stopped_by_limit(error):
            return _stopped(cell, model, limit, began)
        return CellResult(cell, "failed", f"{type(error).__name__}: {error}", time.perf_counter() - began)
    except _CellLimit:
        return _stopped(cell, model, limit, began)
    wall = time.perf_counter() - began
    return CellResult(cell, "completed", "", wall, summary["jobs"], summary["failures"], job_digest(record.jobs), summary)


def _stopped_by_limit(error: BaseException) -> bool:
    """Whether the alarm is what ended the run (the engine turns what a policy's pass raises into a PolicyError)."""
    while error is not None:
        if isinstance(error, _CellLimit):
            return True
        error = error.__cause__ or error.__context__
    return False


def _stopped(cell: Cell, model, limit: float, began: float) -> CellResult:
    """The result of a cell its limit stopped: how many jobs had completed, by which simulated day."""
    sentence = (
        f"after {limit:,g} s of wall time, {model.completed:,} of {len(model.run_jobs):,} jobs completed "
        f"(simulated day {model.now / 86400:,.0f})"
    )
    return CellResult(cell, "stopped", sentence, time.perf_counter() - began, model.completed, None)


def print_table(results: list[CellResult], out=print) -> None:
    """A Markdown table of the cells: policy, platform, failures, outcome, wall time, jobs, failures, digest."""
    out("| policy | platform | failures | outcome | wall (s) | jobs | failures in span | mean wait (s) | digest |")
    out("|---|---|---|---|---:|---:|---:|---:|---|")
    for result in results:
        cell = result.cell
        outcome = result.status if result.status == "completed" else f"{result.status}: {result.sentence}"
        wait = result.summary.get("avg_wait_time")
        wait_text = f"{wait:,.0f}" if wait is not None else ""
        out(
            f"| {cell.policy} | {cell.platform} | {cell.failures} | {outcome} | {result.wall:.1f} | "
            f"{_shown(result.jobs)} | {_shown(result.failures)} | {wait_text} | {result.digest} |"
        )


def _shown(count: int | None) -> str:
    return "" if count is None else f"{count:,}"


def _run_one(arguments) -> CellResult:
    cell, max_jobs, fta, limit = arguments
    return run_cell(cell, max_jobs, fta, limit)


def matrix(
    max_jobs: int | None, workers: int = 1, chosen: list[Cell] | None = None, echo=None, limit: float | None = None
) -> list[CellResult]:
    """Run every cell (or ``chosen``), in this process or over ``workers`` processes.

    Args:
        max_jobs: the prefix of each log (None: the whole logs).
        workers: processes (1: this one).
        chosen: the cells (default: :func:`cells`).
        echo: called with each :class:`CellResult` as it ends, in cell order.
        limit: each cell's wall-clock limit, seconds (None: none; see :func:`run_cell`).

    Returns:
        One :class:`CellResult` per cell, in cell order.
    """
    import tempfile
    from concurrent.futures import ProcessPoolExecutor

    with tempfile.TemporaryDirectory() as scratch:
        fta = Path(scratch) / f"lanl{FTA_SYSTEM}.tab"
        write_lanl_as_fta(fta)
        jobs = [(cell, max_jobs, fta, limit) for cell in (cells() if chosen is None else chosen)]
        results = []
        with ProcessPoolExecutor(workers) if workers > 1 else _InProcess() as pool:
            for result in pool.map(_run_one, jobs):
                results.append(result)
                if echo is not None:
                    echo(result)
    return results


class _InProcess:
    """The part of an executor :func:`matrix` uses, running in this process."""

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        return None

    map = staticmethod(map)


def read_markdown(path: Path) -> dict[Cell, CellResult]:
    """The cells of a table :func:`write_markdown` wrote, by cell (to carry them over: ``--resume``).

    Args:
        path: the Markdown table.

    Returns:
        Cell -> its result as the table shows it (``summary`` holds only ``avg_wait_time`` when shown;
        a blank jobs or failures column reads as None, not known).

    Raises:
        ValueError: a table row without the table's nine columns.
    """
    results = {}
    for line in Path(path).read_text().splitlines():
        if not line.startswith("| ") or line.startswith(("| policy |", "|---")):
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 9:
            raise ValueError(f"{path}: a table row with {len(cells)} columns, expected 9: {line}")
        policy, platform, failures, outcome, wall, jobs, hit, wait, digest = cells
        status, _, sentence = outcome.partition(": ")
        summary = {"avg_wait_time": float(wait.replace(",", ""))} if wait else {}
        cell = Cell(policy, platform, failures)
        results[cell] = CellResult(cell, status, sentence, float(wall), _count(jobs), _count(hit), digest, summary)
    return results


def _count(text: str) -> int | None:
    return int(text.replace(",", "")) if text else None


def write_markdown(
    results: list[CellResult],
    path: Path,
    max_jobs: int | None,
    seconds: float,
    limit: float | None = None,
    carried: int = 0,
    of: int | None = None,
    command: str | None = None,
) -> None:
    """Write the table under the command that makes it and the count of each outcome.

    The commit it ran on, the machine and the wall time of the whole matrix are printed, not written:
    they belong to the benchmark history (docs/benchmarks.md), the table to the user pages.
    ``carried`` cells came from an earlier run of the table (``--resume``); ``of``: the cells the run
    was asked for, when the table holds fewer so far (written after every cell: a stopped run leaves a
    table that ``--resume`` finishes). The header says both.
    """
    import os
    import platform
    import subprocess

    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True, cwd=Path(__file__).parent
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    completed = sum(result.status == "completed" for result in results)
    refused = sum(result.status == "refused" for result in results)
    stopped = sum(result.status == "stopped" for result in results)
    failed = len(results) - completed - refused - stopped
    made_by = command or "python -m benchmarks.matrix"
    lines = [
        f"Made by `{made_by}`: "
        f"{'the whole logs' if max_jobs is None else f'the first {max_jobs:,} jobs of each log'}, "
        f"{len(results)} cells: {completed} completed, {refused} refused up front, {failed} failed, "
        f"{stopped} stopped by the cell limit{'' if limit is None else f' of {limit:,.0f} s'}"
        + (f"; {carried} completed or refused cells carried over from an earlier run (--resume)" if carried else "")
        + (f"; PARTIAL: {len(results)} of the {of} cells asked for so far." if of is not None and of > len(results) else ".")
        + " The wall times are those of the machine that ran each cell (the benchmark history names it).",
        "",
    ]
    print_table(results, lines.append)
    path.write_text("\n".join(lines) + "\n")
    if of is None or of <= len(results):  # the last write of a run: what the history records
        print(
            f"wrote {path}: commit {commit}, {seconds / 60:.1f} minutes on {os.cpu_count()} cores "
            f"({platform.machine()}, Python {platform.python_version()}): record them in docs/benchmarks.md"
        )


def main(argv: list[str] | None = None) -> int:
    """``python -m benchmarks.matrix [--jobs N] [--workers W] [--markdown PATH] [--policy P ...] [--skip-policy P ...] [--platform NAME ...] [--failures NAME ...] [--cell-limit S] [--resume PATH]``."""
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=None, help="a prefix of N jobs of each log (default: the whole logs)")
    parser.add_argument("--workers", type=int, default=1, help="processes (default 1)")
    parser.add_argument("--markdown", type=Path, default=None, help="write the table here, with the commit")
    parser.add_argument("--policy", action="append", default=None, help="only these policies")
    parser.add_argument("--skip-policy", action="append", default=[], help="all policies but these")
    parser.add_argument("--platform", action="append", default=None, choices=list(PLATFORMS), help="only these platforms")
    parser.add_argument(
        "--failures", action="append", default=None, choices=list(FAILURE_SOURCES), help="only these failure sources"
    )
    parser.add_argument("--cell-limit", type=float, default=None, help="stop a cell after S seconds of wall time")
    parser.add_argument(
        "--resume", type=Path, default=None, help="keep the completed and refused cells of this earlier table, run the rest"
    )
    args = parser.parse_args(argv)
    import shlex
    import sys

    made_by = "python -m benchmarks.matrix " + " ".join(shlex.quote(arg) for arg in (sys.argv[1:] if argv is None else argv))
    policies = tuple(args.policy) if args.policy else BUILTIN_POLICIES
    platforms = tuple(args.platform) if args.platform else tuple(PLATFORMS)
    sources = tuple(args.failures) if args.failures else tuple(FAILURE_SOURCES)
    chosen = cells(
        policies=tuple(policy for policy in policies if policy not in args.skip_policy), platforms=platforms, failures=sources
    )
    began = time.perf_counter()

    def echo(result: CellResult) -> None:
        cell = result.cell
        what = result.status if result.status == "completed" else f"{result.status}: {result.sentence}"
        print(
            f"{cell.policy:>14} | {cell.platform:<17} | {cell.failures:<20} | {result.wall:7.1f} s | {result.digest:<12} | {what}",
            flush=True,
        )

    kept = {}
    if args.resume is not None:
        kept = {cell: result for cell, result in read_markdown(args.resume).items() if result.status in ("completed", "refused")}
    done = dict(kept)

    def echo_and_keep(result: CellResult) -> None:
        echo(result)
        done[result.cell] = result
        if args.markdown is not None:  # the table so far, in cell order: a run stopped here can be resumed
            so_far = [done[cell] for cell in chosen if cell in done]
            write_markdown(
                so_far, args.markdown, args.jobs, time.perf_counter() - began, args.cell_limit, len(kept), len(chosen), made_by
            )

    fresh = iter(matrix(args.jobs, args.workers, [cell for cell in chosen if cell not in kept], echo_and_keep, args.cell_limit))
    results = [kept[cell] if cell in kept else next(fresh) for cell in chosen]
    seconds = time.perf_counter() - began
    if args.markdown is not None:
        write_markdown(results, args.markdown, args.jobs, seconds, args.cell_limit, len(kept), command=made_by)
    failed = [result for result in results if result.status == "failed"]
    print(f"{len(results)} cells in {seconds:.0f} s; {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
