"""Running a scenario file: its runs on any executor, then its tables and figures.

Outputs (:func:`write_experiment`): ``results.csv`` (one row per run: every parameter and metric),
``size_groups.csv`` (PV-EASY Figs. 2-3: MBS / MWBS of blocked jobs by size, online runs),
``summary.csv`` (batch experiments with job sets: the expected and maximum ratios of RIGID /
MOLDABLE, means over the sets), ``comparison.csv`` (ours beside the file's published values),
``intervals.csv`` and ``paired.csv`` (with replicates: every case's mean and 95% confidence interval of
every metric, and the paired differences between the compared cases with Wilcoxon's signed-rank test;
:mod:`torus_sim.metrics.confidence`) and one PNG per figure (error bars: the intervals).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from torus_sim.core.files import atomic_write
from torus_sim.experiments.batch import expected_ratio_table
from torus_sim.experiments.experiment import Experiment, file_fields_relative
from torus_sim.experiments.sweep import run_configs, run_key, stored_tables

__all__ = ["compare_with_paper", "experiment_tables", "run_experiment", "write_experiment"]


def run_experiment(
    experiment: Experiment,
    executor: str = "serial",
    workers: int = 2,
    results_dir=None,
    scheduler_address: str | None = None,
    progress: bool = True,
    on_checked=None,
    **overrides,
) -> pd.DataFrame:
    """Run every point of an experiment (cases x grid x job sets x seeds).

    Args:
        experiment: the parsed file.
        executor: ``serial``, ``process`` or ``dask`` (see :mod:`torus_sim.experiments.sweep`).
        workers: worker processes.
        results_dir: folder for per-run results; runs already stored there are skipped (resume).
        scheduler_address: a Dask scheduler instead of a local cluster.
        progress: show progress (a bar on a terminal, else a line per finished run on standard error).
        on_checked: called with no argument once every run's scenario, the executor, the workers and the inputs
            are checked, before the first run (:func:`~torus_sim.experiments.sweep.run_configs`).
        **overrides: Scenario fields replacing the file's for every run (``max_jobs``, ``scenarios``).

    Returns:
        One row per run, in file order, with the varying parameters under their own names as the file
        gives them (an integer failure count stays an integer in column ``failures``) and ``name`` for
        named cases. ``table.attrs["tables"]`` holds the runs' extra tables (by key).
    """
    points = experiment.points()
    configs = [experiment.scenario(point, **overrides) for point in points]
    collected: dict[str, dict] = {}
    table = run_configs(
        configs,
        executor,
        workers,
        results_dir,
        scheduler_address,
        progress,
        on_result=lambda record: collected.__setitem__(record["key"], record.get("tables", {})),
        on_checked=on_checked,
    )
    for key in experiment.parameters:
        if key != "name":
            table[key] = [point.get(key) for point in points]
    if any("name" in case for case in experiment.cases):
        table.insert(0, "name", [point.get("name", "") for point in points])
    keys = [run_key(config) for config in configs]
    if results_dir is not None:
        stored = stored_tables(results_dir, keys, "size_groups")
        collected.update({key: {"size_groups": groups} for key, groups in zip(keys, stored, strict=True) if groups})
    table.attrs["tables"] = collected
    return table


def experiment_tables(experiment: Experiment, table: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The derived tables of a finished experiment: size groups, summary and comparison (where they apply)."""
    tables: dict[str, pd.DataFrame] = {}
    extra = table.attrs.get("tables", {})
    labels = [key for key in ("name", *experiment.parameters) if key in table]
    groups = []
    if extra and "key" in table:
        for _, row in table.iterrows():
            for group in extra.get(row["key"], {}).get("size_groups", []):
                groups.append({**{key: row[key] for key in labels}, **group})
    if groups:
        tables["size_groups"] = pd.DataFrame(groups)
    if experiment.sets and "mean_ratio" in table:
        by = [key for key in labels if key not in ("job_set", "seed")]
        tables["summary"] = expected_ratio_table(table.rename(columns={"job_set": "set"}), by)
    if experiment.paper:
        tables["comparison"] = compare_with_paper(table, experiment.paper)
    tables.update(interval_tables(experiment, table))
    return tables


def interval_tables(experiment: Experiment, table: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """``intervals`` and ``paired`` for a sweep whose cases repeat over replicates (none when they do not).

    Args:
        experiment: the parsed file (its :attr:`~Experiment.replicate_columns` and :attr:`~Experiment.compared_column`).
        table: its results, one row per run.

    Returns:
        ``{"intervals": ..., "paired": ...}`` (:func:`~torus_sim.metrics.confidence.interval_table`,
        :func:`~torus_sim.metrics.confidence.paired_table`; ``paired`` only where a column is compared), or ``{}``.
    """
    from torus_sim.experiments.check import results_columns
    from torus_sim.metrics.confidence import interval_table, paired_table

    replicates = [key for key in experiment.replicate_columns if key in table.columns]
    if not replicates:
        return {}
    by = [key for key in ("name", *experiment.parameters) if key in table.columns and key not in replicates]
    by = list(dict.fromkeys(by))
    computed = results_columns(table) + (["failures"] if "failures" in table.columns else [])  # failures: the count met
    metrics = [column for column in computed if column not in by and column not in replicates]
    tables = {"intervals": interval_table(table, by, metrics)}
    compare = experiment.compared_column
    if compare and compare in by:
        # a case's own fields (its policy, its predictor) come with its name: the pairs share the rest
        labels = table[by].astype(str)
        shared = [
            key
            for key in by
            if key != compare and not (labels[key].nunique() > 1 and (labels.groupby(labels[compare])[key].nunique() == 1).all())
        ]
        tables["paired"] = paired_table(table, compare, shared, replicates, metrics)
    return tables


def compare_with_paper(results: pd.DataFrame, paper: list[dict]) -> pd.DataFrame:
    """Our value (mean over seeds and sets) beside the paper's, for every (case, metric) both have.

    Args:
        results: one row per run, with ``name``.
        paper: ``{"case", "metric", "value"}`` entries.

    Returns:
        Columns case, metric, ours, paper, difference (relative, ours / paper - 1).
    """
    means = results.groupby("name").mean(numeric_only=True) if "name" in results else pd.DataFrame()
    rows = []
    for entry in paper:
        name, metric, value = entry["case"], entry["metric"], entry["value"]
        if name in means.index and metric in means.columns:
            ours = float(means.loc[name, metric])
            rows.append(
                {
                    "case": name,
                    "metric": metric,
                    "ours": ours,
                    "paper": value,
                    "difference": ours / value - 1 if value else float("nan"),
                }
            )
    return pd.DataFrame(rows, columns=["case", "metric", "ours", "paper", "difference"])


def readable_order(table: pd.DataFrame) -> pd.DataFrame:
    """``results.csv``'s columns in reading order (issue 44: the shared fields buried the metrics).

    First the run's name and the scenario fields that vary, the failure source given, then the metrics,
    then the fields every run shares. ``failures`` is the metric (the count met) there, not the field.

    Args:
        table: one row per run (scenario fields, metrics, ``wall_time``, ``key``).

    Returns:
        The same table, columns reordered (none dropped: ``--replot`` and the figures read them by name).
    """
    from torus_sim.experiments.scenario import Scenario

    fields = set(Scenario.model_fields) - {"failures"}
    varying = [c for c in table.columns if c in fields and c != "name" and table[c].astype(str).nunique() > 1]
    shared = [c for c in table.columns if c in fields and c != "name" and c not in varying]
    first = [c for c in ("name", *varying, "failures_given") if c in table.columns]
    rest = [c for c in table.columns if c not in first and c not in shared]
    return table[first + rest + shared]


def write_experiment(
    experiment: Experiment, table: pd.DataFrame, out: str | Path, tables: dict | None = None, parquet: bool = False
) -> list[Path]:
    """Write ``results.csv``, the derived tables and the figures of an experiment.

    The tables name the input files relative to the scenario file's folder, as the file does
    (:func:`~torus_sim.experiments.experiment.file_fields_relative`), not as this machine resolved them.

    Args:
        experiment: the parsed file.
        table: its results (:func:`run_experiment`, or read back from ``results.csv`` with its input
            files made absolute again: :func:`~torus_sim.experiments.experiment.file_fields_absolute`).
        out: the results folder.
        tables: derived tables (computed from ``table`` when None; read back for a replot).
        parquet: also write each table as ``.parquet``, the scenario file's path, title and
            reference in its metadata (:mod:`torus_sim.outputs.formats.parquet`; needs pyarrow).

    Returns:
        The paths written.

    Raises:
        ConfigurationError: ``parquet`` without pyarrow installed.
    """
    from torus_sim.outputs.figures import draw_figure

    out = Path(out)
    table = readable_order(table)
    tables = experiment_tables(experiment, table) if tables is None else tables
    # the input files as the scenario file names them (relative to its folder): the same tables on every checkout
    portable = {name: file_fields_relative(frame, experiment.path.parent) for name, frame in {"results": table, **tables}.items()}
    blobs = {}
    if parquet:
        from torus_sim.outputs.formats.parquet import parquet_bytes

        manifest = {"scenario_file": str(experiment.path), "title": experiment.title, "reference": experiment.reference}
        blobs = {name: parquet_bytes(frame, manifest) for name, frame in portable.items()}
    results = portable.pop("results")
    written = [atomic_write(out / "results.csv", lambda handle: results.to_csv(handle, index=False, float_format="%.10g"))]
    for name, frame in portable.items():
        written.append(
            atomic_write(out / f"{name}.csv", lambda handle, frame=frame: frame.to_csv(handle, index=False, float_format="%.10g"))
        )
    for name, blob in blobs.items():
        written.append(atomic_write(out / f"{name}.parquet", lambda handle, blob=blob: handle.write(blob), binary=True))
    for spec in experiment.figures:
        source = table if spec.table == "results" else tables.get(spec.table)
        if source is None or source.empty:
            continue
        replicates = experiment.replicate_columns if spec.table == "results" else ()
        written.append(draw_figure(source, spec, out / f"{spec.name}.png", replicates))
    return written
