"""A workload (the jobs of a run), and SWF records turned into jobs with documented cleaning rules.

Four rule sets (:data:`SWF_RULES`): ``bgl-fault`` (BGL-FAULT §6.2, the default on the torus),
``pv-easy`` (PV-EASY §5.1, the default on a cluster), ``cqsim`` (what CQSim's SWF filter keeps, for
job-for-job comparisons with it; docs/validation) and ``rlscheduler`` (what RLScheduler's SWF reader
keeps, Zhang et al. SC'20, DIR-LAB/deep-batch-scheduler ``job.py``; docs/rl). They differ in rules 2,
3, 3b, 4, 5 and 10 below.
Cleaning rules (each skipped or altered job is counted in :attr:`Workload.cleaning` under the key
given in brackets):

1. Unknown submit time (``submit_time < 0``): skipped [``skipped_unknown_submit``].
2. Size = allocated processors; if unknown, requested processors [``size_from_request``];
   if both unknown: skipped [``skipped_unknown_size``]. ``cqsim``: requested processors first,
   allocated ones when unknown [``size_from_allocation``]. ``rlscheduler``: the larger of the two
   [``size_max_of_both``, the jobs whose requested count was the larger].
3. Runtime = ``run_time``; unknown (``< 0``): skipped [``skipped_unknown_runtime``]. ``rlscheduler``:
   10 s [``runtime_unknown_as_10s``], and a runtime of 0 skipped [``skipped_short_runtime``].
3b. ``cqsim`` only: a runtime under 1 s [``skipped_short_runtime``] or a requested time under 1 s
   (none given) [``skipped_no_walltime``]: skipped, as CQSim's filter does (``int(run) <= 0``,
   ``int(reqTime) <= 0``).
4. Walltime (the scheduler's estimate t_e) = ``requested_time``; if unknown or not positive,
   the runtime [``walltime_from_runtime``] (at least 1 s with ``pv-easy``; ``rlscheduler``: only an
   unknown one, -1, and by the runtime as logged, so -1 when that is unknown too; a requested time of 0
   stays 0).
5. Processors to supernodes: a log from a machine no larger than the platform maps one log
   node to one supernode (BGL-FAULT §6: the 128-node logs on the 128-supernode torus); a larger
   log scales sizes by ``capacity / MaxNodes``, rounding up [``size_scaled``] (``bgl-fault``; with
   ``pv-easy`` sizes are processors and are never scaled).
6. Jobs larger than the platform: skipped [``skipped_too_large``].
7. A size with no rectangular shape (torus only) is rounded up to the next size that has one;
   the job still does only ``size`` supernodes of work, so the extra ones are lost capacity
   [``size_rounded_up``].
8. Load scale ``c`` multiplies runtime and walltime alike (BGL-FAULT §6.2).
9. Jobs are ordered by submit time, then job id; a file out of order is sorted
   [``reordered``, the number of lines that were out of order]; a job's rank is its position.
10. ``pv-easy`` and ``cqsim``: the requested time is the kill time; a job that ran longer is cut
    there [``cut_at_walltime``]. The scenario's ``kill_at_walltime`` turns this on or off for any rule set.
11. Cancelled lines (SWF status 5), any rule set: run for their logged run time (``cancelled = "run"``, the
    default), or skipped (``"skip"``) [``skipped_cancelled``]: a log's cancelled lines often keep run times the
    machine never spent (replayed as logged, RICC's overfill its 8,192 processors 13.8% of the time, SDSC-SP2's
    reach 202 of 128).
12. Failed lines (SWF status 0), any rule set: run for their logged run time (``failed = "run"``, the default), or
    skipped (``"skip"``) [``skipped_failed``]: where a site logs as failed jobs that never started (CTC-SP2's 16,669
    failed lines ran: 42% of them for at least their requested time, killed at their limit; 40% of its logged
    processor-seconds).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from torus_sim.core.disk_tables import GrowingTable, SpillFolder, TableSnapshot
from torus_sim.core.errors import ConfigurationError, InputFileError, WorkloadFormatError
from torus_sim.core.job import Job
from torus_sim.inputs.workload.swf import SwfTrace

__all__ = [
    "CANCELLED_READINGS",
    "CLEANING_FIELDS",
    "SWF_RULES",
    "WORKLOAD_KINDS",
    "JobColumns",
    "SwfRules",
    "Workload",
    "jobs_from_swf",
]

WORKLOAD_KINDS = ("online", "batch")
"""``online``: jobs submitted over time (SWF traces); ``batch``: every job released at time 0."""


@dataclass(frozen=True)
class SwfRules:
    """How SWF records become jobs (see the module docstring).

    Attributes:
        scale_to_platform: a log from a larger machine scales sizes to the platform (else such jobs are skipped).
        kill_at_walltime: the walltime is the kill time (runtimes are cut there).
        walltime_floor: a missing requested time becomes max(runtime, this), seconds.
        size_from_request: the size is the requested processors, the allocated ones when unknown
            (else the allocated ones first).
        min_runtime: jobs that ran less than this many seconds are skipped (0: none is).
        min_walltime: jobs that requested less than this many seconds are skipped (0: none is; the
            walltime of one that requested none is then its runtime).
        size_max_of_both: the size is the larger of the allocated and the requested processors.
        unknown_runtime: an unknown runtime (-1) becomes this many seconds (None: the job is skipped).
        zero_walltime_kept: a requested time of 0 stays 0, and an unknown one (-1) becomes the runtime as
            logged, before an unknown runtime is replaced (so -1 when both are unknown: RLScheduler's reader).
        cancelled: what a cancelled line (status 5) is: ``"run"`` (a job with its logged run time) or ``"skip"``.
        failed: what a failed line (status 0) is: ``"run"`` or ``"skip"``, as ``cancelled``.
    """

    scale_to_platform: bool = True
    kill_at_walltime: bool = False
    walltime_floor: float = 0.0
    size_from_request: bool = False
    min_runtime: float = 0.0
    min_walltime: float = 0.0
    size_max_of_both: bool = False
    unknown_runtime: float | None = None
    zero_walltime_kept: bool = False
    cancelled: str = "run"
    failed: str = "run"


CANCELLED_READINGS = ("run", "skip")
"""What a cancelled SWF line (status 5) is in a run: a job with its logged run time, or none (a failed line's too)."""
CANCELLED = 5
"""SWF's status of a cancelled job (field 11)."""
FAILED = 0
"""SWF's status of a failed job (field 11)."""

SWF_RULES = {
    "bgl-fault": SwfRules(scale_to_platform=True, kill_at_walltime=False, walltime_floor=0.0),
    "pv-easy": SwfRules(scale_to_platform=False, kill_at_walltime=True, walltime_floor=1.0),
    "cqsim": SwfRules(scale_to_platform=False, kill_at_walltime=True, size_from_request=True, min_runtime=1.0, min_walltime=1.0),
    "rlscheduler": SwfRules(
        scale_to_platform=False, min_runtime=1.0, size_max_of_both=True, unknown_runtime=10.0, zero_walltime_kept=True
    ),
}
"""The rule sets: BGL-FAULT §6.2's (the torus default), PV-EASY §5.1's (the cluster default) and CQSim's
SWF filter's (SPEAR-UIC/CQSim ``Filter_job_SWF.input_check``: requested processors, runtime and
requested time of at least 1 s, the runtime cut at the requested time) and RLScheduler's reader's (the
larger processor count, an unknown runtime as 10 s, runtime 0 dropped, only an unknown requested time
replaced by the runtime, no kill at the requested time)."""


class JobColumns(Sequence):
    """The jobs of an SWF workload as columns; each :class:`~torus_sim.core.job.Job` is made when asked for.

    A workload is a template that every run copies (a sweep runs it many times): holding it as
    seven typed columns instead of n ``Job`` objects keeps a 450k-job log at ~25 MB instead of
    ~270 MB, and a run makes its jobs once (:meth:`build`) or one at a time as they arrive. The columns
    are a :class:`~torus_sim.core.disk_tables.GrowingTable`: a log's cleaned jobs past
    :data:`~torus_sim.core.disk_tables.SPILL_ROWS` are on disk (:func:`jobs_from_swf`), and a job is read from
    a chunk of :data:`CHUNK_ROWS` rows kept in memory (the engine asks in rank order: a chunk is read once).
    It reads as a list of PENDING jobs (``len``, indexing, slicing, iteration), each access making a new
    ``Job``: change a run's jobs, not these.

    Args:
        job_id, size, partition_size, user_id: int ``(n,)``.
        submitted_at, runtime, walltime: float ``(n,)``, seconds (load-scaled).
        Rows are in priority order: row i is the job of rank i.

    Attributes:
        unique_ids: the job ids are known to be distinct (the SWF reader refused a repeated one).
    """

    _FIELDS = ("job_id", "submitted_at", "runtime", "walltime", "size", "partition_size", "user_id")
    _TYPES = {
        "job_id": "q",
        "submitted_at": "d",
        "runtime": "d",
        "walltime": "d",
        "size": "q",
        "partition_size": "q",
        "user_id": "q",
    }

    COLUMNS = _FIELDS
    """The seven job columns, in the constructor's order (:meth:`column`, :meth:`pieces` take these names)."""

    @classmethod
    def empty_table(cls, folder: SpillFolder | None, name: str = "jobs") -> GrowingTable:
        """An empty table of the seven job columns, for :meth:`stored`.

        Args:
            folder: where rows past :data:`~torus_sim.core.disk_tables.SPILL_ROWS` go; None keeps them in memory.
            name: the table's name, its files' prefix.
        """
        return GrowingTable(name, list(cls._FIELDS), cls._TYPES, folder=folder)

    def __init__(self, job_id, submitted_at, runtime, walltime, size, partition_size, user_id) -> None:
        columns = (job_id, submitted_at, runtime, walltime, size, partition_size, user_id)
        kinds = (np.int64, float, float, float, np.int64, np.int64, np.int64)
        arrays = [np.asarray(column, dtype=kind) for column, kind in zip(columns, kinds, strict=True)]
        if len({len(column) for column in arrays}) > 1:
            raise ValueError("job columns of different lengths")
        table = self.empty_table(None)  # in memory
        table.extend(dict(zip(self._FIELDS, arrays, strict=True)))
        self._set(TableSnapshot(table, len(table), shared=True), unique_ids=False)

    @classmethod
    def stored(cls, snapshot: TableSnapshot, unique_ids: bool = False) -> JobColumns:
        """The jobs of a table made by :func:`job_table` (its first ``len(snapshot)`` rows, in rank order)."""
        jobs = cls.__new__(cls)
        jobs._set(snapshot, unique_ids)
        return jobs

    def _set(self, snapshot: TableSnapshot, unique_ids: bool) -> None:
        self._snapshot = snapshot
        self.unique_ids = bool(unique_ids)
        self._chunk_first = -1
        self._chunk: list[list] = []

    def __getstate__(self) -> dict:
        return {"_snapshot": self._snapshot, "unique_ids": self.unique_ids}

    def __setstate__(self, state: dict) -> None:
        self._set(state["_snapshot"], state["unique_ids"])

    def __len__(self) -> int:
        return len(self._snapshot)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[position] for position in range(*index.indices(len(self)))]
        position = range(len(self))[index]  # IndexError out of range; negative indices count from the end
        first = position - position % CHUNK_ROWS
        if first != self._chunk_first:
            last = first + CHUNK_ROWS
            self._chunk = [self._snapshot.column(name, first, last).tolist() for name in self._FIELDS]
            self._chunk_first = first
        row = position - first
        job_ids, submitted, runtimes, walltimes, sizes, partition_sizes, users = self._chunk  # _FIELDS' order
        return Job(
            job_ids[row], submitted[row], runtimes[row], walltimes[row], sizes[row], partition_sizes[row], users[row], position
        )

    def build(self) -> list[Job]:
        """Every job, new and PENDING, with its rank (its row)."""
        rows = zip(*(self.column(name).tolist() for name in self._FIELDS), strict=True)
        return [
            Job(job_id, submitted_at, runtime, walltime, size, partition_size, user_id, rank)
            for rank, (job_id, submitted_at, runtime, walltime, size, partition_size, user_id) in enumerate(rows)
        ]

    def __iter__(self):
        return (self[position] for position in range(len(self)))

    def pieces(self, name: str, rows: int | None = None):
        """One column in rank order, ``rows`` (None: :data:`CHUNK_ROWS`) at a time: ``(first rank, array)`` per piece.

        Raises:
            ValueError: not a job column.
        """
        self._check(name)
        step = CHUNK_ROWS if rows is None else int(rows)
        for first in range(0, len(self), step):
            yield first, self._snapshot.column(name, first, first + step)

    def column(self, name: str) -> np.ndarray:
        """One column, read whole: ``job_id``, ``submitted_at``, ``runtime``, ``walltime``, ``size``, ``partition_size``, ``user_id``.

        Float64 seconds for the times, int64 otherwise; a log held in memory gives its array (do not change it).

        Raises:
            ValueError: not one of those names.
        """
        self._check(name)
        return self._snapshot.column(name)

    def _check(self, name: str) -> None:
        if name not in self._FIELDS:
            raise ValueError(f"{name!r} is not a job column; choose from {', '.join(self._FIELDS)}")


CHUNK_ROWS = 1 << 16
"""Rows of a :class:`JobColumns` read at a time when its jobs are made one by one (65,536: ~3.7 MB)."""


def job_table(folder: SpillFolder | None, name: str = "jobs") -> GrowingTable:
    """An empty table of job columns (:class:`JobColumns`' seven) and ``row`` (the job's SWF line row), for ``folder``.

    Args:
        folder: where rows past :data:`~torus_sim.core.disk_tables.SPILL_ROWS` go; None: all kept in memory.
        name: the table's name, its files' prefix (two tables in one folder need two names).
    """
    types = {**JobColumns._TYPES, "row": "q"}
    return GrowingTable(name, [*JobColumns._FIELDS, "row"], types, folder=folder)


@dataclass
class Workload:
    """The jobs of one run and where they came from.

    Attributes:
        jobs: jobs in priority order (online: submit time, then job id; batch: job index): a list,
            or the :class:`JobColumns` of an SWF log.
        source: path of the trace, or a description.
        sha256: hash of the source file ("" for generated workloads).
        load_scale: the c applied to runtimes and walltimes.
        cleaning: counts of skipped or altered jobs by rule (see module docstring).
        header: the SWF header (attribution lines included).
        kind: ``online`` or ``batch`` (:data:`WORKLOAD_KINDS`).
        processors: the machine size the source names (SWF MaxProcs / MaxNodes, a job file's P), or None.
        times: moldable batches: float ``(n, P)``, t_j(p) for p = 1..P (row i is job i's ``times``).
        whole_span: ``(first submit, last submit)`` of the whole cleaned log when ``max_jobs`` kept
            only a prefix (failures are laid over the whole log, then cut to the prefix: the rate
            stays the whole run's); None when every job is kept.
        impossible: of the skipped jobs, how many had a value no real job has rather than SWF's
            "unknown" (-1), by what it was (``negative submit time``, ``negative processor count``,
            ``no processors``, ``negative runtime``); the run warns about them in one line.
        log: the SWF trace the jobs were read from, with the fields the run reads from the log besides them (a
            source's ``log_fields``), until :func:`~torus_sim.inputs.workload.logged.workload_log` takes it (the
            log is read once); None.
    """

    jobs: list[Job] | JobColumns
    source: str
    sha256: str = ""
    load_scale: float = 1.0
    cleaning: Counter = field(default_factory=Counter)
    header: dict[str, str] = field(default_factory=dict)
    kind: str = "online"
    processors: int | None = None
    times: object = None
    whole_span: tuple[float, float] | None = None
    impossible: dict[str, int] = field(default_factory=dict)
    log: object = field(default=None, repr=False, compare=False)

    def offered_load(self, capacity: int) -> float | None:
        """The offered load: sum of partition size x runtime over capacity x the submission span.

        Above 1 the machine cannot keep up: the wait queue grows without bound and the means describe
        the backlog, not the scheduler. None for a batch (all submitted at once) or a span of zero.

        Args:
            capacity: the platform's nodes (supernodes on the torus).

        References:
            Feitelson, "Workload Modeling for Computer Systems Performance Evaluation" (2015), §9.6.1
            (offered load); BGL-FAULT §6.2 (the load scale c multiplies it).
        """
        start, end = self.span
        if self.kind != "online" or end <= start or not len(self.jobs):
            return None
        if isinstance(self.jobs, JobColumns):  # the sizes as floats a chunk at a time: two columns held, not three
            sizes = np.empty(len(self.jobs))
            for first, piece in self.jobs.pieces("partition_size"):
                sizes[first : first + len(piece)] = piece
            work = float(np.dot(sizes, self.jobs.column("runtime")))
        else:
            work = float(sum(job.partition_size * job.runtime for job in self.jobs))
        return work / (capacity * (end - start))

    @property
    def span(self) -> tuple[float, float]:
        """``(first submit, last submit)`` in seconds; ``(0, 0)`` when empty."""
        if not self.jobs:
            return (0.0, 0.0)
        return (self.jobs[0].submitted_at, self.jobs[-1].submitted_at)


def _refuse_duplicate_ids(trace: SwfTrace, rows: np.ndarray, job_ids: np.ndarray) -> None:
    """Raise WorkloadFormatError at the second line of the first job id that appears twice among the usable lines."""
    if len(job_ids) < 2:
        return
    by_id = np.argsort(job_ids, kind="stable")
    repeated = np.flatnonzero(job_ids[by_id][1:] == job_ids[by_id][:-1])
    if len(repeated):
        pairs = [(int(by_id[i + 1]), int(by_id[i])) for i in repeated]
        second, first = min(pairs)  # the earliest line that repeats an id
        raise WorkloadFormatError(
            trace.path,
            trace.line_of(int(rows[second])),
            f"job id {int(job_ids[second])} appears again (first at line {trace.line_of(int(rows[first]))})",
        )


CLEANING_FIELDS = (
    "job_id",
    "submit_time",
    "run_time",
    "allocated_processors",
    "requested_processors",
    "requested_time",
    "user_id",
)
"""The SWF fields :func:`jobs_from_swf` reads (a log read for a run keeps these only: :func:`~torus_sim.inputs.workload.swf.read_swf`)."""


def jobs_from_swf(
    trace: SwfTrace,
    capacity: int,
    round_size: Callable[[int], int] | None = None,
    load_scale: float = 1.0,
    max_jobs: int | None = None,
    rules: SwfRules = SWF_RULES["bgl-fault"],
) -> Workload:
    """Turn SWF records into jobs for a platform of ``capacity`` supernodes (or processors).

    The rules run on the trace's columns :data:`PIECE_ROWS` lines at a time (a 450k-job log in ~1 s), and the jobs
    kept go to a table that spills to a temporary folder (:func:`job_table`): a 10-million-line log is never held
    whole. A log in (submit time, job id) order, as the archive's are, needs no sort; another is sorted once. The
    line-at-a-time reference the rules are tested against is ``tests/reference.py``'s.

    Args:
        trace: the parsed SWF file.
        capacity: supernodes (torus) or processors (flat platform) of the simulated machine.
        round_size: maps a size to the partition size it occupies (the torus's
            :func:`~torus_sim.machine.partitions.round_up_to_feasible_size`); identity when None.
        load_scale: c > 0, multiplies every runtime and walltime (BGL-FAULT §6.2).
        max_jobs: keep only the first this many usable jobs (in FCFS order); all when None.
        rules: the cleaning rule set (:data:`SWF_RULES`).

    Returns:
        The workload with its cleaning counts.

    Raises:
        ConfigurationError: ``load_scale`` or ``capacity`` not positive.
        WorkloadFormatError: a malformed ``MaxNodes`` header.
        InputFileError: no job is left after cleaning (the message gives the cleaning counts).

    References:
        BGL-FAULT §6.2 (logs, load scale c); PV-EASY §5.1 (requested time = kill time);
        ../shared/data/SOURCES.md (size rounding).
    """
    if not load_scale > 0 or math.isinf(load_scale):
        raise ConfigurationError(f"load scale c must be a positive number, got {load_scale}")
    if capacity < 1:
        raise ConfigurationError(f"capacity must be positive, got {capacity}")
    max_nodes = trace.header_int("MaxNodes") or trace.header_int("MaxProcs")
    scale = capacity / max_nodes if rules.scale_to_platform and max_nodes and max_nodes > capacity else 1.0
    cleaner = _Cleaner(rules, scale, capacity, round_size, load_scale)
    folder = SpillFolder()
    kept = job_table(folder)  # the usable lines' jobs, in file order
    in_order = unique_ids = True  # (submit, id) never decreasing; ids always increasing (so no id twice)
    last_submit, last_id = -math.inf, None
    for first, columns in trace.pieces(PIECE_ROWS):
        jobs = cleaner.piece(first, columns)
        submitted, job_ids = jobs["submitted_at"], jobs["job_id"]
        if len(job_ids):
            previous_submit = np.concatenate(([last_submit], submitted[:-1]))
            previous_id = np.concatenate(([job_ids[0] - 1 if last_id is None else last_id], job_ids[:-1]))
            later = (submitted > previous_submit) | ((submitted == previous_submit) & (job_ids >= previous_id))
            in_order = in_order and bool(later.all())
            unique_ids = unique_ids and bool((job_ids > previous_id).all())
            last_submit, last_id = float(submitted[-1]), int(job_ids[-1])
        kept.extend(jobs)
    cleaning, impossible = cleaner.cleaning, cleaner.impossible
    if not len(kept):
        counts = ", ".join(f"{key} {value}" for key, value in sorted(cleaning.items())) or "none"
        raise InputFileError(
            trace.path, f"no job left after cleaning ({len(trace)} job lines; cleaning: {counts}; capacity {capacity})"
        )
    snapshot = kept.snapshot()
    count = len(snapshot)
    # stable: by submit time, then job id, then line (a log in that order already needs no sort)
    order = None if in_order else np.lexsort((snapshot.column("job_id"), snapshot.column("submitted_at")))
    whole_span = None
    if max_jobs is not None and max_jobs < count:
        ends = np.array([0, count - 1]) if order is None else order[[0, -1]]
        whole_span = tuple(snapshot.take("submitted_at", ends).tolist())
        count = max_jobs
        prefix = np.arange(count) if order is None else order[:count]
        last_line = int(snapshot.take("row", prefix).max())  # the counts describe the lines read up to the last job kept
        recount = _Cleaner(rules, scale, capacity, round_size, load_scale, last_line)
        for first, columns in trace.pieces(PIECE_ROWS):
            if first > last_line:
                break
            recount.piece(first, columns)
        cleaning, impossible = recount.cleaning, recount.impossible
        order = None if order is None else order[:count]
    if not unique_ids:
        positions = np.arange(count) if order is None else np.sort(order)  # the jobs of the run, in file order
        _refuse_duplicate_ids(trace, snapshot.take("row", positions), snapshot.take("job_id", positions))
    if order is not None:  # the jobs in rank order: the columns taken a chunk at a time
        ranked = job_table(folder, "ranked")
        for start in range(0, count, PIECE_ROWS):
            rows = order[start : start + PIECE_ROWS]
            ranked.extend({name: snapshot.take(name, rows) for name in ranked.columns})
        snapshot = ranked.snapshot()
        del kept
    jobs = JobColumns.stored(TableSnapshot(snapshot.table, count, shared=True), unique_ids=True)
    return Workload(
        jobs=jobs,
        source=str(trace.path),
        sha256=trace.sha256,
        load_scale=load_scale,
        cleaning=cleaning,
        header=dict(trace.header),
        kind="online",
        processors=trace.header_int("MaxProcs") or trace.header_int("MaxNodes"),
        whole_span=whole_span,
        impossible={key: value for key, value in impossible.items() if value},
    )


PIECE_ROWS = 1 << 18
"""Job lines :func:`jobs_from_swf` cleans at a time (262,144: ~20 MB of columns and masks)."""


class _Cleaner:
    """The cleaning rules (module docstring) over a piece of an SWF log's lines at a time, counting as they go.

    Args:
        rules, scale, capacity, round_size, load_scale: as :func:`jobs_from_swf` (``scale``: the MaxNodes factor).
        last_line: count only the lines up to this row (a ``max_jobs`` prefix's counts); None: every line.

    Attributes:
        cleaning: counts by rule (:attr:`Workload.cleaning`); impossible: the skipped lines no job has, by what.
    """

    def __init__(self, rules: SwfRules, scale: float, capacity: int, round_size, load_scale: float, last_line=None) -> None:
        self.rules, self.scale, self.capacity, self.round_size = rules, scale, capacity, round_size
        self.load_scale, self.last_line = load_scale, last_line
        self.cleaning: Counter = Counter()
        self.impossible: Counter = Counter()
        self._rounded: dict[int, int] = {}
        self._high = -math.inf  # the latest submit of the usable lines so far ("reordered")

    def _count(self, counter: Counter, key: str, mask: np.ndarray, rows: np.ndarray) -> None:
        """Count ``mask``'s lines (their rows ``rows``) under ``key``: those up to :attr:`last_line` when set."""
        if self.last_line is not None:
            mask = mask & (rows <= self.last_line)
        found = int(np.count_nonzero(mask))
        if found:
            counter[key] += found

    def piece(self, first: int, columns: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Clean the lines of rows ``first, first + 1, ...`` (``columns``: float per field of :data:`CLEANING_FIELDS`).

        Returns:
            The usable lines' job columns (:func:`job_table`'s: load-scaled, file order, their rows in ``row``).
        """
        rules = self.rules
        lines = np.arange(first, first + len(columns["submit_time"]), dtype=np.int64)

        def count(key: str, mask: np.ndarray, rows: np.ndarray = lines) -> None:
            self._count(self.cleaning, key, mask, rows)

        submit = columns["submit_time"]
        run_time = columns["run_time"]
        allocated = columns["allocated_processors"]
        requested = columns["requested_processors"]
        impossible = {  # skipped for a value no job has (SWF's "unknown" is -1), told apart for the warning
            "negative submit time": submit < -1,
            "negative processor count": (submit >= 0) & ((allocated < -1) | ((allocated <= 0) & (requested < -1))),
            "no processors": (submit >= 0) & (allocated == 0) & (requested == 0),
            "negative runtime": (submit >= 0) & (np.maximum(allocated, requested) > 0) & (run_time < -1),
        }
        for key, mask in impossible.items():
            self._count(self.impossible, key, mask, lines)
        keep = submit >= 0
        count("skipped_unknown_submit", ~keep)
        for reading, status, key in ((rules.cancelled, CANCELLED, "skipped_cancelled"), (rules.failed, FAILED, "skipped_failed")):
            if reading == "skip" and "status" in columns:  # rules 11 and 12: a cancelled or failed line is no job of the run
                skipped = keep & (columns["status"] == status)
                count(key, skipped)
                keep &= ~skipped
        first_count, second = (requested, allocated) if rules.size_from_request else (allocated, requested)
        from_second = keep & (first_count <= 0)
        unknown_size = from_second & (second <= 0)
        count("skipped_unknown_size", unknown_size)
        count("size_from_allocation" if rules.size_from_request else "size_from_request", from_second & ~unknown_size)
        keep &= ~unknown_size
        processors = np.where(first_count > 0, first_count, second)
        if rules.size_max_of_both:
            count("size_max_of_both", keep & (second > first_count) & (first_count > 0))
            processors = np.maximum(first_count, second)
        logged_run_time = run_time
        if rules.unknown_runtime is not None:
            key = "runtime_unknown_as_10s" if rules.unknown_runtime == 10.0 else "runtime_unknown_replaced"
            count(key, keep & (run_time < 0))
            run_time = np.where(run_time < 0, rules.unknown_runtime, run_time)
        count("skipped_unknown_runtime", keep & (run_time < 0))
        keep &= run_time >= 0
        if rules.min_runtime > 0:
            short = keep & (run_time < rules.min_runtime)
            count("skipped_short_runtime", short)
            keep &= ~short
        if rules.min_walltime > 0:
            unasked = keep & (columns["requested_time"] < rules.min_walltime)
            count("skipped_no_walltime", unasked)
            keep &= ~unasked
        size = processors
        if self.scale != 1.0:
            size = np.maximum(1.0, np.ceil(processors * self.scale - 1e-9))
            count("size_scaled", keep)
        count("skipped_too_large", keep & (size > self.capacity))
        keep &= size <= self.capacity
        rows = np.flatnonzero(keep)
        kept_lines = lines[rows]
        size = size[rows].astype(np.int64)
        partition_size = size
        if self.round_size is not None:
            rounded = self._rounded
            for value in sorted(set(size.tolist())):  # not np.unique: it imports numpy.ma (~15 ms of a run's start)
                if value not in rounded:
                    rounded[value] = self.round_size(value)
            partition_size = np.array([rounded[value] for value in size.tolist()], dtype=np.int64).reshape(size.shape)
        count("size_rounded_up", partition_size != size, kept_lines)
        runtime = run_time[rows]
        walltime = columns["requested_time"][rows]
        unknown_walltime = walltime < 0 if rules.zero_walltime_kept else walltime <= 0
        count("walltime_from_runtime", unknown_walltime, kept_lines)
        floor = np.maximum(runtime, rules.walltime_floor) if rules.walltime_floor else runtime
        if rules.zero_walltime_kept:  # RLScheduler's reader: the logged runtime, before its own replacement
            floor = logged_run_time[rows]
        walltime = np.where(unknown_walltime, floor, walltime)
        if rules.kill_at_walltime:
            cut = runtime > walltime
            count("cut_at_walltime", cut, kept_lines)
            runtime = np.where(cut, walltime, runtime)
        submitted = submit[rows]
        if len(rows):  # a line out of order: submitted before the latest submit of the lines above it
            highs = np.maximum.accumulate(np.concatenate(([self._high], submitted)))
            count("reordered", submitted < highs[:-1], kept_lines)
            self._high = float(highs[-1])
        return {
            "job_id": columns["job_id"][rows].astype(np.int64),
            "submitted_at": submitted,
            "runtime": runtime * self.load_scale,
            "walltime": walltime * self.load_scale,
            "size": size,
            "partition_size": partition_size,
            "user_id": columns["user_id"][rows].astype(np.int64),
            "row": kept_lines,
        }
