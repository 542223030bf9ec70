"""Parameter sweeps: many runs on one machine or a cluster, with results that survive.

``sweep(base, grid, seeds)`` runs every combination of grid values for every seed, on one of three
executors:

* ``serial``: one run after another in this process;
* ``process``: local worker processes (:class:`concurrent.futures.ProcessPoolExecutor`);
* ``dask``: a Dask distributed cluster: a :class:`dask.distributed.LocalCluster` of ``workers``
  processes by default, or the scheduler at ``scheduler_address`` (``tcp://host:port``) for a real
  cluster. Dask is an optional extra: ``pip install 'torus-sim[distributed]'``.

Every platform, workload and policy runs the same way: a run is a :class:`~torus_sim.experiments.scenario.Scenario`.
With ``results_dir``, each run's row is written atomically to ``results_dir/runs/<key>.json`` the
moment it finishes, together with its manifest (scenario, seed, torus-sim version, input file
hashes), the digest of the code that made it (:func:`code_digest`) and its extra tables (PV-EASY's size
groups for an online run, the per-scenario makespans of a batch). The key is a hash of the run's full
scenario, so running the same sweep again skips every run already stored by the same code: a sweep
killed midway resumes with no lost and no duplicated row, and a run stored by other code (an older
version, an edited checkout) is run again, with a sentence.
"""

from __future__ import annotations

import functools
import gc
import hashlib
import itertools
import json
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from torus_sim.core.errors import ConfigurationError
from torus_sim.core.files import atomic_write, json_text
from torus_sim.experiments.progress import RunProgress, varying_fields
from torus_sim.experiments.scenario import INPUT_FILE_FIELDS, PRIORITY_FIELDS, Scenario

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["EXECUTORS", "code_digest", "grid_points", "run_configs", "run_key", "run_row", "sweep"]

EXECUTORS = ("serial", "process", "dask")
"""Where the runs of a sweep execute."""


def grid_points(grid: dict[str, Sequence], seeds: Sequence[int] = (0,), cases: Sequence[dict] = ({},)) -> list[dict]:
    """Every case x combination of grid values x seed, as dictionaries of Scenario fields.

    Args:
        grid: parameter -> values; the last parameter varies fastest.
        seeds: seeds, crossed with everything (the seed varies fastest of all).
        cases: parameter sets that vary together.

    Returns:
        One dictionary per run.
    """
    names = list(grid)
    points = []
    for case in cases:
        for values in itertools.product(*(grid[name] for name in names)):
            for seed in seeds:
                points.append({**case, **dict(zip(names, values, strict=True)), "seed": seed})
    return points


def run_key(config: Scenario) -> str:
    """A stable identifier of a run: SHA-256 (16 hex digits) of its scenario as sorted JSON.

    Fields that cannot change what runs are left out: the silent-error scenario count and the job set
    of an online workload, empty parameter tables, fields added later and left unset
    (:data:`LATER_FIELDS`), and the wall-clock limit of a pass (``plan_timeout``: it stops a run, never
    changes one); so a sweep resumed with other reduction options, or by a later version, finds the runs
    it already has. An input file counts by its content, not its path (:func:`content_named`): a
    results folder resumed from another checkout finds its runs, and one whose input file was edited in
    place runs them again instead of reusing numbers made from the old content.
    """
    fields = config.model_dump(mode="json")
    for name in INPUT_FILE_FIELDS:
        if isinstance(fields.get(name), str):
            fields[name] = content_named(fields[name])
    fields.pop("plan_timeout", None)
    if fields.get("event_order") == "instant":  # the order before the setting existed: keys of earlier runs hold
        fields.pop("event_order")
    if not config.batch:  # what cannot apply to an online run does not make it another run (resume keeps it)
        fields.update(scenarios=1, job_set=0)
    for name in PARAMS_FIELDS:  # empty parameter tables leave the key of a run as it was before they existed
        if not fields.get(name):
            fields.pop(name, None)
    for name in LATER_FIELDS:  # so do fields added later, left unset
        if fields.get(name) is None:
            fields.pop(name, None)
    for name in (*PRIORITY_FIELDS, "cancelled", "failed"):  # added later: at their defaults they leave a run's key as it was
        if fields.get(name) == Scenario.model_fields[name].default:
            fields.pop(name, None)
    canonical = json.dumps(fields, sort_keys=True, default=list)
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def content_named(value: str) -> str:
    """``value`` with the existing file it names (whole, or after its first ``:``) replaced by ``sha256:`` and its digest.

    Only the text is looked at (no registry is asked); a value that names no existing file (``bundled``,
    ``synthetic:500``, ``uniform:50:300``) is returned as it is.

    Args:
        value: a scenario field's text, e.g. ``/data/log.swf.gz`` or ``table:/data/t.txt``.

    Returns:
        e.g. ``sha256:9f86d0...`` or ``table:sha256:9f86d0...``.
    """
    path = Path(value)
    if path.is_file():
        return "sha256:" + _file_digest(str(path.resolve()))
    prefix, separator, rest = value.partition(":")
    if separator and rest and Path(rest).is_file():
        return f"{prefix}:sha256:" + _file_digest(str(Path(rest).resolve()))
    return value


def _file_digest(path: str) -> str:
    """SHA-256 of a file's bytes, remembered per (path, size, modification time) for the process.

    A file that cannot be read keys by its path (the run's own input check then refuses it with a sentence).
    """
    try:
        stat = Path(path).stat()
        return _digest_of(path, stat.st_size, stat.st_mtime_ns)
    except OSError:
        return "path:" + path


@functools.lru_cache(maxsize=256)
def _digest_of(path: str, size: int, mtime_ns: int) -> str:
    from torus_sim.core.files import file_sha256

    return file_sha256(path)


LATER_FIELDS = (
    "shutdown_time",
    "node_shutdown_w",
    "sched_min_interval",
    "dispatch_latency",
    "max_jobs_per_user",
    "max_nodes_per_user",
    "max_node_seconds_per_user",
    "max_jobs_per_group",
    "max_nodes_per_group",
    "max_jobs_per_queue",
    "max_nodes_per_queue",
    "maintenance",
    "maintenance_drain",
    "kill_at_walltime",
    "maintenance_min_length",
    "node_types",
    "prime_time",
    "prime_time_max_walltime",
    "prime_time_spill",
    "effective_size",
    "effective_size_period",
    "effective_size_share",
    "effective_size_starved",
    "effective_size_starved_min_length",
    "effective_size_starved_min_idle",
    "reservations",
    "standing_reservations",
    "partitions",
    "partition_field",
    "priority_fairshare_windows",
    "preempt_by_tier",
    "shake",
    "dependencies",
)
"""Scenario fields added after results were committed: unset (None), they leave a run's key as it was."""

EXECUTION_FIELDS = ("plan_timeout",)
"""Scenario fields that say how a run is executed, not what it simulates (no column in a results table)."""

PARAMS_FIELDS = (
    "policy_params",
    "placement_params",
    "predictor_params",
    "runtime_predictor_params",
    "workload_params",
    "failures_params",
)
"""The scenario's constructor-parameter tables (one column each in a results table, as JSON, when given)."""


def scenario_row(config: Scenario) -> dict:
    """A scenario's fields as one table row: tuples as lists, plug-in objects as import paths, parameter tables as JSON."""
    from torus_sim.inputs.plugin_admission import object_path

    row = {}
    for key, value in config.model_dump().items():
        if key in EXECUTION_FIELDS:
            continue
        if key in PARAMS_FIELDS:
            if value:
                row[key] = json.dumps(value, sort_keys=True, default=str)
            continue
        if key in ("policy", "placement", "predictor", "runtime_predictor") and value is not None and not isinstance(value, str):
            value = object_path(value)
        row[key] = list(value) if isinstance(value, tuple) else value
    return row


def run_row(config: Scenario) -> dict:
    """Run one scenario and flatten it to a row with its manifest and extra tables.

    Returns:
        ``{"key", "code", "row", "manifest", "tables"}``: ``code`` is :func:`code_digest` (the code that made
        it); the row has every Scenario field, ``failures_given``
        (the failure source as given: the metric ``failures`` is the count met), every summary metric
        and ``wall_time`` (seconds); the manifest holds scenario, version and input hashes;
        ``tables`` holds ``size_groups`` (PV-EASY Figs. 2-3, online runs) and ``scenarios`` (the
        per-scenario makespans of a batch), as lists of records.
    """
    from torus_sim.experiments.runner import run  # here: the package's names (a scenario, --help) import no engine
    from torus_sim.metrics.families import online_columns
    from torus_sim.metrics.online import size_group_table

    began = time.perf_counter()
    result = run(config)
    row = scenario_row(config)
    # the failure source given (the scenario's field; its default named), kept apart from the metric
    # ``failures`` (the count met) that shares the field's name
    row["failures_given"] = str(row["failures"]) if row.get("failures") is not None else result.inputs["failures"]["spec"]
    row.update(result.summary)
    row["wall_time"] = time.perf_counter() - began
    tables = {}
    if not config.batch and result.record is not None and result.record.count("jobs"):
        import pandas as pd

        # the three columns the groups read, from the record's columns (not its whole job and pass tables)
        columns = online_columns(result.record, config.fairness_reading)
        table = pd.DataFrame({name: columns[name] for name in ("size", "blocked", "bounded_slowdown")})
        tables["size_groups"] = size_group_table(table, result.record.capacity_total).to_dict("records")
    if not result.scenarios.empty:
        tables["scenarios"] = result.scenarios.to_dict("records")
    done = {"key": run_key(config), "code": code_digest(), "row": row, "manifest": result.manifest(), "tables": tables}
    # the model and its record are in reference cycles: collected now, the record's folder on disk goes now,
    # not when the garbage collector next runs (a worker process may end first and leave it behind)
    del result
    gc.collect()
    return done


@functools.lru_cache(maxsize=1)
def code_digest() -> str:
    """The simulator's own code as a digest: SHA-256 (16 hex digits) of its source files.

    Every ``.py`` file of the ``torus_sim`` and ``failure_logs`` packages, by path within the package, as
    this process imports them. A stored run carries the digest of the code that made it; a sweep resumed with other code runs it
    again (:func:`run_configs`). Computed once per process (a few milliseconds).
    """
    import failure_logs

    digest = hashlib.sha256()
    for package in (Path(__file__).resolve().parents[1], Path(failure_logs.__file__).resolve().parent):
        for path in sorted(package.rglob("*.py")):
            digest.update(f"{package.name}/{path.relative_to(package).as_posix()}\n".encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _store(results_dir: Path | None, record: dict) -> None:
    if results_dir is not None:
        payload = json_text(record, default=str, indent=1) + "\n"  # insertion order: columns stay in order
        atomic_write(results_dir / "runs" / f"{record['key']}.json", lambda handle: handle.write(payload))


def _load_done(results_dir: Path | None) -> dict[str, dict]:
    done = {}
    if results_dir is not None and (results_dir / "runs").is_dir():
        for path in sorted((results_dir / "runs").glob("*.json")):
            try:
                record = json.loads(path.read_text())
                done[record["key"]] = record
            except (json.JSONDecodeError, KeyError, TypeError, UnicodeDecodeError):
                print(f"torus-sim: {path} is truncated or not a run record: running it again", file=sys.stderr)
    return done


def _execute(configs: list[Scenario], executor: str, workers: int, scheduler_address: str | None) -> Iterable[dict]:
    """Yield each run's record as it finishes (in completion order)."""
    if executor == "serial":
        for config in configs:
            yield run_row(config)
    elif executor == "process":
        from concurrent.futures import ProcessPoolExecutor, as_completed  # here: a run imports no process pool

        with ProcessPoolExecutor(max_workers=workers) as pool:
            futures = [pool.submit(run_row, config) for config in configs]
            for future in as_completed(futures):
                yield future.result()
    else:
        try:
            from dask.distributed import Client
            from dask.distributed import as_completed as dask_completed
        except ImportError as error:
            raise ConfigurationError("the dask executor needs Dask: pip install 'torus-sim[distributed]'") from error
        cluster = None
        if scheduler_address:
            try:
                client = Client(scheduler_address, timeout="10s")
            except (OSError, TimeoutError) as error:
                raise ConfigurationError(
                    f"no Dask scheduler answers at {scheduler_address} ({type(error).__name__}: {error})"
                ) from None
        else:
            cluster = local_cluster(workers, "sweep")
            client = Client(cluster)
        try:
            futures = [client.submit(run_row, config, pure=False) for config in configs]
            for future in dask_completed(futures):
                yield future.result()
        finally:
            client.close()
            if cluster is not None:
                cluster.close()


def local_cluster(workers: int, what: str):
    """A local Dask cluster of ``workers`` processes of one thread each (no dashboard), for a sweep or a calibration.

    Args:
        workers: processes, >= 1.
        what: what runs on it (``sweep``, ``calibration``), for the sentence.

    Returns:
        The :class:`dask.distributed.LocalCluster` (close it).

    Raises:
        ConfigurationError: its workers cannot start; the sentence names the usual cause (a script calling it outside
            ``if __name__ == "__main__":``, which the workers import again).
    """
    from dask.distributed import LocalCluster

    try:
        return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
    except Exception as error:  # noqa: BLE001 - a worker that cannot start: say the usual cause
        raise ConfigurationError(
            f"a local Dask cluster could not start its workers ({type(error).__name__}: {error}); in a script, call the "
            f'{what} under if __name__ == "__main__": (the workers import the script again)'
        ) from None


def check_inputs(configs: Sequence[Scenario]) -> None:
    """Read every distinct input file of the runs once (workloads, failure logs, silent-error files), before any run.

    A malformed file then stops the sweep before its first run writes anything, with the reader's
    sentence (file and line). Synthetic and bundled inputs need no check.

    Raises:
        ConfigurationError, WorkloadFormatError, FailureLogFormatError, JobSetFormatError, FileNotFoundError:
            as the readers raise them.
    """
    from failure_logs.sources import FailureContext, failure_source
    from torus_sim.experiments.run_inputs import batch_set, failure_horizon, load_workload
    from torus_sim.inputs.workload.sources import workload_source
    from torus_sim.machine.platforms.kinds import platform_kind

    seen: set = set()
    for config in configs:
        source = workload_source(config.workload, config.workload_params)
        if config.batch:
            key = ("batch", config.workload, config.silent_spec, config.scenarios, config.jobs, config.job_set, config.seed)
            if key not in seen and (source.reads_file or config.silent_spec not in ("none", "drawn")):
                seen.add(key)
                batch_set(config)
            continue
        kind = platform_kind(config.platform)
        fields = config.platform_fields()
        key = input_key(config.workload_path, config.workload_params, config.rules, config.fields_for(source, "workload"), fields)
        workload = None
        if key not in seen and source.reads_file:  # a generated or bundled workload is known good
            seen.add(key)
            workload = load_workload(config)
        failures = failure_source(config.failure_spec, config.failures_params)
        if not failures.reads_file:
            continue
        settings = config.fields_for(failures, f"failure source {failures.name!r}")
        failure_key = input_key(config.failure_spec, config.failures_params, settings, key)  # fitted onto that workload
        if failure_key not in seen:
            seen.add(failure_key)
            workload = workload or load_workload(config)
            capacity = kind.capacity(fields, workload.processors)
            failures.load(FailureContext(settings, capacity, failure_horizon(workload, capacity)))


def input_key(*parts) -> str:
    """The key under which :func:`check_inputs` reads an input once: every part as stable JSON text.

    A part that is a room's declared fields (:class:`~torus_sim.experiments.scenario.ScenarioFields`, from ``fields_for``) counts
    by every field it declares, so two runs whose reader is given different settings (Mira's I/O drawers, a LANL
    system, a workload's job cap) are two inputs; the whole scenario, given to a plug-in that declares nothing, counts
    by its run key. Nothing is listed by hand here.

    Args:
        parts: texts, numbers, parameter tables (dicts), declared fields, other keys.

    Returns:
        JSON text (sorted keys; values JSON cannot write, such as a torus, by their ``repr``).
    """
    from torus_sim.experiments.scenario import Scenario, ScenarioFields

    def plain(part):
        if isinstance(part, ScenarioFields):
            return part.as_dict()
        if isinstance(part, Scenario):
            return run_key(part)
        return part

    return json.dumps([plain(part) for part in parts], sort_keys=True, default=repr)


def run_configs(
    configs: Sequence[Scenario],
    executor: str = "serial",
    workers: int = 2,
    results_dir: str | Path | None = None,
    scheduler_address: str | None = None,
    progress: bool = True,
    on_result: Callable[[dict], None] | None = None,
    on_checked: Callable[[], None] | None = None,
) -> pd.DataFrame:
    """Run configurations on an executor, storing and resuming as :func:`sweep` describes.

    Args:
        configs: the runs (scenarios), in the order of the returned rows (repeats are run once).
        executor: ``serial``, ``process`` or ``dask``.
        workers: worker processes for ``process`` and a local Dask cluster.
        results_dir: folder for per-run results and manifests; runs already stored there are skipped.
        scheduler_address: a Dask scheduler (``tcp://host:port``) instead of a local cluster.
        progress: show progress (a bar on a terminal, else a line per finished run on standard error).
        on_result: called with each new run's record as it is stored.
        on_checked: called once the executor, the workers and every run's inputs have been checked, before
            the first run starts (the command line announces the sweep there, never before an error).

    Returns:
        One row per configuration, in order, with ``key``.

    Raises:
        ConfigurationError: an unknown executor, ``workers`` < 1, or an invalid configuration.
    """
    if executor not in EXECUTORS:
        raise ConfigurationError(f"unknown executor {executor!r}; choose from {EXECUTORS}")
    if workers < 1:
        raise ConfigurationError(f"workers must be >= 1, got {workers}")
    results_path = Path(results_dir) if results_dir is not None else None
    done = _load_done(results_path)
    keys = [run_key(config) for config in configs]
    unique = dict(zip(keys, configs, strict=True))
    code = code_digest()
    stale = [key for key in unique if key in done and done[key].get("code") != code]
    if stale:  # made by other code (an older version, an edit): their numbers may not be today's
        print(
            f"torus-sim: {len(stale)} stored run(s) in {results_path / 'runs'} were made by other code than this "
            f"torus-sim's ({code}): running them again",
            file=sys.stderr,
        )
        for key in stale:
            del done[key]
    todo = [config for key, config in unique.items() if key not in done]
    check_inputs(todo)  # every input of every run read once before the first run starts
    if on_checked is not None:
        on_checked()
    bar = None
    if progress:  # a bar on a terminal, a line per finished run elsewhere
        bar = RunProgress(len(unique), len(unique) - len(todo), varying_fields(list(unique.values())))
    try:
        for record in _execute(todo, executor, workers, scheduler_address):
            _store(results_path, record)
            done[record["key"]] = record
            if on_result is not None:
                on_result(record)
            if bar is not None:
                bar.finished(record["row"])
    finally:
        if bar is not None:
            bar.close()
    import pandas as pd  # the table of rows: after the runs

    return pd.DataFrame([{**done[key]["row"], "key": key} for key in keys])


def stored_tables(results_dir: str | Path, keys: Sequence[str], name: str) -> list[list[dict]]:
    """The extra table ``name`` of each stored run (an empty list where a run has none)."""
    done = _load_done(Path(results_dir))
    return [done.get(key, {}).get("tables", {}).get(name, []) for key in keys]


def sweep(
    base: Scenario | dict | None = None,
    grid: dict[str, Sequence] | None = None,
    seeds: Sequence[int] = (0,),
    executor: str = "serial",
    workers: int = 2,
    results_dir: str | Path | None = None,
    scheduler_address: str | None = None,
    cases: Sequence[dict] = ({},),
    progress: bool = True,
    on_result: Callable[[dict], None] | None = None,
) -> pd.DataFrame:
    """Run a parameter sweep.

    Args:
        base: the scenario every run starts from (a Scenario or its fields); defaults when None.
        grid: parameter -> list of values; every combination is run.
        seeds: the seeds each combination runs with (``mesa.batch_run`` does not vary seeds: here
            the seed is a parameter).
        executor: ``serial``, ``process`` or ``dask`` (see the module docstring).
        workers: worker processes for ``process`` and a local Dask cluster.
        results_dir: folder for per-run results and manifests; runs already stored there are skipped.
        scheduler_address: a Dask scheduler (``tcp://host:port``) instead of a local cluster.
        cases: parameter sets that vary together, each crossed with the grid.
        progress: show progress: a bar (runs done / total, time left) on a terminal, else a line per
            finished run on standard error (:mod:`torus_sim.experiments.progress`).
        on_result: called with each new run's record as it is stored (for tests and live reports).

    Returns:
        One row per run in grid order (cases, then grid values, then seeds): every Scenario
        field, every summary metric, ``wall_time`` (seconds) and ``key``.

    Raises:
        ConfigurationError: an unknown executor or parameter, or a value out of its domain.
    """
    base_fields = base.model_dump() if isinstance(base, Scenario) else dict(base or {})
    configs = [Scenario.make("sweep", **{**base_fields, **point}) for point in grid_points(grid or {}, seeds, cases)]
    return run_configs(configs, executor, workers, results_dir, scheduler_address, progress, on_result)
