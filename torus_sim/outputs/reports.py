"""Writing a run's results: per-job CSV, summary JSON, and the printed summary table.

A run's files are written with :func:`torus_sim.core.files.write_folder`: a new folder appears whole (written
aside and renamed into place), and in an existing one the manifest comes last, so an interrupted run
never leaves a half-written result.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path

from torus_sim.core.files import RESULT_NAMES, json_text, write_folder

__all__ = ["SUMMARY_LABELS", "format_against_log", "format_intervals", "format_summary", "short_number", "write_results"]

SUMMARY_LABELS = {
    "jobs": ("jobs completed", "{:,}"),
    "offered_load": ("offered load (after cleaning)", "{:.3f}"),
    "avg_wait_time": ("average wait time (s)", "{:,.1f}"),
    "avg_response_time": ("average response time (s)", "{:,.1f}"),
    "avg_bounded_slowdown": ("average bounded slowdown", "{:,.3f}"),
    "max_bounded_slowdown": ("maximum bounded slowdown", "{:,.1f}"),
    "makespan": ("span T (s)", "{:,.0f}"),
    "omega_util": ("capacity utilized ω_util", "{:.4f}"),
    "omega_unused": ("capacity unused ω_unused", "{:.4f}"),
    "omega_lost": ("capacity lost ω_lost", "{:.4f}"),
    "failures": ("failures", "{:,}"),
    "job_kills": ("job kills", "{:,}"),
    "jobs_killed": ("jobs killed at least once", "{:,}"),
    "lost_work": ("work lost (supernode-s)", "{:,.0f}"),
    "migrations": ("job migrations", "{:,}"),
    "repacks": ("repacks (migration rounds)", "{:,}"),
    "preventive_checkpoints": ("preventive checkpoints", "{:,}"),
    "preventive_migrations": ("preventive migrations", "{:,}"),
    "preventive_migrations_failed": ("preventive migrations impossible", "{:,}"),
    "mbs": ("MBS (PV-EASY Eq. 1)", "{:,.3f}"),
    "mwbs": ("MWBS (PV-EASY Eq. 2)", "{:,.3f}"),
    "wasted_load": ("wasted load", "{:.4f}"),
    "preemptions": ("preemptions", "{:,}"),
    "blocked_jobs": ("blocked jobs (PV-EASY Table 1)", "{:,}"),
    "delayed_jobs": ("delayed by lower-priority jobs", "{:,}"),
    "violations": ("reservation violations", "{:,}"),
    "silent_errors": ("silent errors detected", "{:,}"),
    "jobs_held": ("jobs held over a limit", "{:,}"),
    "jobs_held_for_maintenance": ("jobs held for maintenance", "{:,}"),
    "jobs_held_for_prime_time": ("jobs held through prime time", "{:,}"),
    "dependent_submissions": ("jobs submitted after a job they waited for", "{:,}"),
    "node_hours_held_out": ("node-hours held out (size, reservations)", "{:,.1f}"),
    "reservation_kills": ("jobs killed by reservations", "{:,}"),
    "jobs_started_by_preemption": ("jobs started by preempting lower tiers", "{:,}"),
    "energy_kwh": ("energy (kWh)", "{:,.1f}"),
    "busy_energy_kwh": ("  of which jobs (kWh)", "{:,.1f}"),
    "idle_energy_kwh": ("  of which idle nodes (kWh)", "{:,.1f}"),
    "down_energy_kwh": ("  of which down nodes (kWh)", "{:,.1f}"),
    "off_energy_kwh": ("  of which switched-off nodes (kWh)", "{:,.1f}"),
    "shutdown_energy_kwh": ("  of which nodes switching off (kWh)", "{:,.1f}"),
    "boot_energy_kwh": ("  booting nodes, in the jobs' (kWh)", "{:,.1f}"),
    "wake_wait_energy_kwh": ("  nodes a job waits to switch off, in the jobs' (kWh)", "{:,.1f}"),
    "off_node_hours": ("node-hours switched off", "{:,.1f}"),
    "shutdown_node_hours": ("node-hours switching off", "{:,.1f}"),
    "boot_node_hours": ("node-hours booting", "{:,.1f}"),
    "wake_wait_node_hours": ("node-hours a job waited for a switch-off", "{:,.1f}"),
    "wasted_energy_kwh": ("energy wasted by failures (kWh)", "{:,.1f}"),
    "energy_per_job_kwh": ("energy per completed job (kWh)", "{:,.2f}"),
    "bill": ("electricity bill", "{:,.2f}"),
    "wasted_bill": ("  of which wasted attempts", "{:,.2f}"),
    "peak_power_kw": ("peak power (kW)", "{:,.1f}"),
    "mean_power_kw": ("mean power (kW)", "{:,.1f}"),
    "cap_kw": ("power cap (kW)", "{:,.1f}"),
    "hours_over_cap": ("  hours over the cap", "{:,.2f}"),
    "energy_over_cap_kwh": ("  energy over the cap (kWh)", "{:,.1f}"),
    "scenarios": ("failure scenarios", "{:,}"),
    "mean_makespan": ("mean makespan (s)", "{:,.1f}"),
    "mean_energy_kwh": ("mean energy (kWh)", "{:,.1f}"),
    "mean_wasted_energy_kwh": ("  of which spoiled attempts (kWh)", "{:,.1f}"),
    "mean_bill": ("mean electricity bill", "{:,.2f}"),
    "mean_lower_bound": ("mean lower bound (s)", "{:,.1f}"),
    "mean_ratio": ("mean makespan / lower bound", "{:.4f}"),
    "max_ratio": ("max makespan / lower bound", "{:.4f}"),
}
"""Row labels and number formats of the printed summary."""


def format_summary(summary: dict, node_word: str = "supernode") -> str:
    """The summary as an aligned two-column text table (node units named as the platform names them).

    A value that is missing, None, NaN or infinite (an offered load over a single instant, a mean over
    no job) reads ``n/a``: the table never prints ``nan``.

    Args:
        summary: the run's summary (:func:`torus_sim.metrics.summary.summarize`).
        node_word: what the platform calls a node (its kind's ``node_word``: ``supernode``, ``node``).
    """
    rows = [
        (label.replace("supernode", node_word), _shown(summary[key], fmt))
        for key, (label, fmt) in SUMMARY_LABELS.items()
        if key in summary
    ]
    width = max(len(label) for label, _ in rows)
    return "\n".join(f"{label:<{width}}  {value:>18}" for label, value in rows)


def format_intervals(intervals, paired, metrics, limit: int = 20) -> str:
    """A sweep's intervals and paired differences as the lines ``torus-sim sweep`` prints after its runs.

    Args:
        intervals: the sweep's ``intervals`` table (:func:`torus_sim.metrics.confidence.interval_table`).
        paired: its ``paired`` table (:func:`torus_sim.metrics.confidence.paired_table`), or None.
        metrics: the metrics to print (the figures' or the headline one).
        limit: rows printed per table (the rest are in the CSV files).

    Returns:
        The text: per case ``metric: mean [low, high] (n runs)``, then per pair ``B - A: difference [low, high],
        Wilcoxon p``; empty when no row is about ``metrics``.
    """
    lines: list[str] = []
    rows = intervals[intervals["metric"].isin(metrics)]
    labels = [column for column in intervals.columns if column not in ("metric", "n", "mean", "ci_low", "ci_high", "ci_method")]

    def case(row, columns) -> str:
        return (
            ", ".join(f"{column} = {row[column]}" if column != "name" else str(row[column]) for column in columns) or "all runs"
        )

    def interval(low, high) -> str:
        return "no interval" if low != low else f"[{short_number(low)}, {short_number(high)}]"

    if len(rows):
        lines.append("95% confidence intervals over the replicates (intervals.csv):")
        for _, row in rows.head(limit).iterrows():
            lines.append(
                f"  {case(row, labels)}: {row['metric']} {short_number(row['mean'])} {interval(row['ci_low'], row['ci_high'])} ({row['n']} runs)"
            )
        if len(rows) > limit:
            lines.append(f"  ... {len(rows) - limit} more in intervals.csv")
    pairs = paired[paired["metric"].isin(metrics)] if paired is not None else paired
    if pairs is not None and len(pairs):
        shared = [
            column
            for column in paired.columns
            if column
            not in (
                "a",
                "b",
                "metric",
                "n",
                "mean_a",
                "mean_b",
                "difference",
                "ci_low",
                "ci_high",
                "ci_method",
                "wilcoxon",
                "p_value",
                "zeros",
            )
        ]
        lines.append("paired differences B - A on the same replicates (paired.csv):")
        for _, row in pairs.head(limit).iterrows():
            at = case(row, shared)
            lines.append(
                f"  {row['b']} - {row['a']}"
                + (f" ({at})" if shared else "")
                + f": {row['metric']} {short_number(row['difference'])} "
                f"{interval(row['ci_low'], row['ci_high'])}, Wilcoxon p = {row['p_value']:.3g} ({row['n']} pairs)"
            )
        if len(pairs) > limit:
            lines.append(f"  ... {len(pairs) - limit} more in paired.csv")
    return "\n".join(lines)


def short_number(value: float) -> str:
    """A number as a printed comparison shows it (any unit: the caller's).

    Args:
        value: the number.

    Returns:
        4 significant digits below 1,000, whole with thousands separators above (``12.35``, ``79,715``); ``n/a`` for NaN.
    """
    if value != value:
        return "n/a"
    return f"{value:.4g}" if abs(value) < 1000 else f"{value:,.0f}"


def format_against_log(comparison) -> str:
    """The printed lines of a replay held against its log (``torus-sim run --against-log``).

    Args:
        comparison: a :class:`~torus_sim.metrics.against_log.LogComparison`.

    Returns:
        A few lines: jobs compared and those the log cannot place, the mean waits and their per-job difference,
        the bounded slowdowns, the KS distance of the waits and the utilizations.
    """
    summary = comparison.summary
    jobs = summary["jobs"]
    unplaced = ", ".join(f"{reason} {count:,}" for reason, count in jobs["not_placed"].items())
    lines = [
        f"against the log  {summary['log']['path']}: {jobs['compared']:,} of the run's {jobs['simulated']:,} jobs compared"
        + (
            f"; the log cannot place {sum(jobs['not_placed'].values()):,} of the {jobs['log_jobs']:,} lines the run covers ({unplaced})"
            if unplaced
            else ""
        )
    ]
    if jobs["not_placed_simulated"]:
        lines.append(f"  {jobs['not_placed_simulated']:,} of the run's jobs have no place in the logged schedule (left out)")
    notes = summary["log"]["scheduler_notes"]
    if notes:
        lines.append(f"  the log's scheduler: {'; '.join(notes)}")
    if not jobs["compared"]:
        lines.append("  nothing to compare: the log records no wait for the jobs this run kept")
        return "\n".join(lines)
    wait, bsld = summary["wait"], summary["bounded_slowdown"]
    lines.append(f"  mean wait (s)             simulated {wait['simulated_mean']:>12,.1f}   logged {wait['logged_mean']:>12,.1f}")
    lines.append(
        f"  per job, simulated - logged: mean {wait['difference_mean']:,.1f} s, median {wait['difference_median']:,.1f} s, "
        f"mean |difference| {wait['difference_mean_absolute']:,.1f} s; {wait['within_1_min']:.1%} within 1 min, "
        f"{wait['within_1_h']:.1%} within 1 h"
    )
    lines.append(f"  mean bounded slowdown     simulated {bsld['simulated_mean']:>12,.3f}   logged {bsld['logged_mean']:>12,.3f}")
    lines.append(f"  waits' distributions: Kolmogorov-Smirnov distance {summary['ks']['statistic']:.4f}")
    usage = summary.get("utilization")
    if usage:
        lines.append(
            f"  utilization per day: simulated {usage['simulated_mean']:.3f}, logged {usage['logged_mean']:.3f} on average; "
            f"mean |daily difference| {usage['daily_difference_mean_absolute']:.3f} over {usage['days']:,} days"
        )
    return "\n".join(lines)


def _shown(value, fmt: str) -> str:
    """``value`` in its format, or ``n/a`` when it has none (None, NaN, infinite)."""
    try:
        if value is None or not math.isfinite(value):
            return "n/a"
    except TypeError:
        return str(value)
    return fmt.format(value)


def _listed_files(manifest: Path) -> tuple[str, ...]:
    """The result files an earlier run's manifest lists (plain names only: never a path out of the folder)."""
    try:
        earlier = json.loads(manifest.read_text(encoding="utf-8"))
        listed = earlier.get("files", []) if "torus_sim_version" in earlier else []  # a torus-sim manifest only
    except (OSError, ValueError, AttributeError):
        return ()
    return tuple(name for name in listed if isinstance(name, str) and name == Path(name).name and not name.startswith("."))


def write_results(
    out_dir: str | Path, result, batsim: bool = False, swf: bool = False, parquet: bool = False, formats=(), against_log=None
) -> dict[str, Path]:
    """Write a run's folder: ``jobs.csv`` (``scenarios.csv`` for a batch), the formats asked for, and ``summary.json``.

    The formats come from the registry (:mod:`torus_sim.outputs.formats.catalog`): ``jobs`` always, then
    ``batsim``, ``swf``, ``parquet`` (the flags) and any of ``formats`` (names, a plug-in's included).
    Every file is rendered in memory first, so a failure while rendering writes nothing.

    Args:
        out_dir: the folder (created if missing).
        result: a :class:`~torus_sim.experiments.runner.RunResult`.
        batsim: also write ``batsim_jobs.csv``, Batsim's job record (:func:`torus_sim.outputs.formats.batsim.batsim_jobs`).
        swf: also write ``schedule.swf``, the schedule in SWF (:func:`torus_sim.outputs.formats.swf_schedule.schedule_swf`).
        parquet: also write every table as ``.parquet`` with the manifest in its metadata (needs pyarrow).
        formats: more output formats by name (``--format NAME``).
        against_log: the run held against its log (``--against-log``:
            :class:`~torus_sim.metrics.against_log.LogComparison`): also ``against_log.json`` (every table but the
            per-job waits) and ``against_log.png`` (the waits' CDFs, the utilization per day), and its summary under
            ``against_log`` in ``summary.json``.

    Returns:
        ``{"jobs": path, "summary": path[, "scenarios": path][, "batsim_jobs": path][, "schedule": path]}``
        (Parquet files under ``<name>_parquet`` keys; a plug-in's files under their names with ``.`` as ``_``).

    Raises:
        ConfigurationError: an unknown format, or ``parquet`` without pyarrow installed.
        ValueError: ``batsim`` or ``swf`` for a run made without its attempt table.

    A new folder appears whole (written aside, renamed into place); in an existing one the manifest
    ``summary.json`` is written last and an earlier run's results go (:func:`torus_sim.core.files.write_folder`).
    """
    from torus_sim.outputs.formats.catalog import ALWAYS, output_format

    chosen = [*ALWAYS, *(name for name, asked in (("batsim", batsim), ("swf", swf)) if asked), *formats]
    if parquet:
        chosen.append("parquet")
    chosen = list(dict.fromkeys(chosen))  # each once, in order
    writers = [output_format(name) for name in chosen]
    tables: dict = {}
    for writer in writers:
        tables.update(writer.tables(result))
    from torus_sim.outputs.output_columns import csv_writer

    tables_csv = {f"{name}.csv": csv_writer(name, table) for name, table in tables.items()}  # written piece by piece
    texts: dict[str, str] = {}
    files: dict[str, bytes] = {}
    whole = _WholeTables(tables)  # a format's files see DataFrames (jobs.csv's rows are read a piece at a time)
    for writer in writers:
        files.update(writer.files(result, whole))
    manifest = result.manifest()
    if against_log is not None:
        from torus_sim.outputs.figures import against_log_png

        texts["against_log.json"] = json_text(against_log.to_json_ready(), indent=2, sort_keys=True) + "\n"
        files["against_log.png"] = against_log_png(against_log)
        manifest["against_log"] = against_log.summary
    names = sorted({*tables_csv, *texts, *files, "summary.json"})
    texts["summary.json"] = json_text({**manifest, "files": names}, indent=2, sort_keys=True, default=str) + "\n"
    contents = tables_csv | {name: text.encode("utf-8") for name, text in texts.items()} | files
    # the manifest last (a folder without it is no result); an earlier run's results go, all of them: the
    # built-in names and whatever files the earlier manifest lists (a plug-in format's)
    replaces = (*RESULT_NAMES, *_listed_files(Path(out_dir) / "summary.json"))
    paths = write_folder(out_dir, contents, last="summary.json", replaces=replaces)
    written = {name.split(".")[0]: paths[name] for name in (*tables_csv, *texts)}
    for name in files:  # a file whose stem a table took (a Parquet twin, against_log.png) is keyed by its whole name
        stem = name.split(".")[0]
        written[name.replace(".", "_") if name.endswith(".parquet") or stem in written else stem] = paths[name]
    return written


class _WholeTables(Mapping):
    """The run's tables by name, each a DataFrame: a table given as pieces (``frame()``) is built when first read."""

    def __init__(self, tables: dict) -> None:
        self._tables = tables

    def __getitem__(self, name: str):
        table = self._tables[name]
        if _in_pieces(table):
            table = self._tables[name] = table.frame()
        return table

    def __iter__(self):
        return iter(self._tables)

    def __len__(self) -> int:
        return len(self._tables)


def _in_pieces(table) -> bool:
    """A table given as pieces of rows (``chunk(start, stop)``, ``frame()``), not a DataFrame."""
    return callable(getattr(type(table), "chunk", None))
