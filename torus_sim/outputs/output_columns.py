"""What every column of a run's outputs means, with its unit: one schema for the docs and the tests.

``jobs.csv`` (one row per job), a batch's ``scenarios.csv`` (one row per failure scenario) and the
``summary`` of ``summary.json`` (a sweep's ``results.csv`` has the same metric columns beside the
scenario's fields) are described here and nowhere else: ``docs/outputs.md`` is made from this module
(``python -m torus_sim.outputs.output_columns > docs/outputs.md``), and tests/test_output_columns.py checks
that every column the writers produce on the torus, on a cluster with the fairness columns and in a
batch is described, and that the document is the one this module makes, so the two cannot drift.

Units: times in seconds unless the name says ``_min`` or ``_h``; sizes in nodes on a cluster and in
supernodes (midplanes) on a torus, as the job's ``size``; ``lost_work`` in those units x seconds.
Times in ``jobs.csv`` (the columns documented in ``s``) are rounded to the millisecond
(:data:`TIME_DECIMALS`), what the inputs carry (SWF: whole seconds; failure logs: timestamps, scaled):
``1.793``, not ``1.7930301229343064``. Every other number is written in its shortest form that reads
back as the same float64 (a batch's ``scenarios.csv`` too: RIGID's and MOLDABLE's makespans are in the
reference code's time units, compared with it at full precision). The Parquet files (``--parquet``) keep every
digit of every column, times included, for programs that need the simulated values bit for bit.
"""

from __future__ import annotations

import numpy as np

from torus_sim.core.job_columns import JOB_TABLE, described

__all__ = [
    "AGAINST_LOG_SUMMARY",
    "AGAINST_LOG_TABLES",
    "INTERVAL_COLUMNS",
    "JOB_COLUMNS",
    "PAIRED_COLUMNS",
    "POWER_COLUMNS",
    "SCENARIO_COLUMNS",
    "SUMMARY_METRICS",
    "TIME_DECIMALS",
    "csv_text",
    "describe",
    "outputs_markdown",
]

TIME_DECIMALS = 3
"""Decimals of a time (seconds) in a CSV table: the millisecond."""

JOB_COLUMNS: dict[str, tuple[str, str]] = described(JOB_TABLE)
"""``jobs.csv``: one row per completed job: the columns :data:`torus_sim.core.job_columns.JOB_TABLE` declares (the
record's, :func:`torus_sim.metrics.summary.job_table`'s three, power accounting's two), each declared there once."""

SCENARIO_COLUMNS: dict[str, tuple[str, str]] = {
    "scenario": ("", "the failure scenario's number (0 to scenarios - 1)"),
    "failures": ("", "silent errors drawn in it"),
    "makespan": ("s", "the batch's makespan in it"),
    "lower_bound": ("s", "the makespan lower bound L(f) (RIGID Eq. 5-6) or L'(J, f) (MOLDABLE §5.1)"),
    "ratio": ("", "makespan / lower_bound"),
    "energy_kwh": ("kWh", "power accounting: the machine's energy over the scenario's makespan"),
    "wasted_energy_kwh": ("kWh", "power accounting: energy of the attempts a silent error spoiled (re-executed)"),
    "bill": ("currency", "power accounting: the scenario's energy priced by the tariff"),
}
"""A batch's ``scenarios.csv``: one row per failure scenario (RIGID §5, MOLDABLE §5)."""

SUMMARY_METRICS: dict[str, tuple[str, str]] = {
    "jobs": ("", "jobs completed"),
    "avg_wait_time": ("s", "mean wait_time (BGL-FAULT §3.4)"),
    "avg_response_time": ("s", "mean response_time"),
    "avg_bounded_slowdown": ("", "mean bounded_slowdown (BGL-FAULT §3.4)"),
    "max_bounded_slowdown": ("", "largest bounded_slowdown"),
    "makespan": ("s", "online: the span T from the first submission to the last end (BGL-FAULT §6.1); batch: see mean_makespan"),
    "omega_util": ("fraction", "ω_util: the jobs' size x runtime over N x T (BGL-FAULT §6.1; CKPT-MIG's yield)"),
    "omega_unused": (
        "fraction",
        "ω_unused: free capacity beyond what the waiting jobs asked for, max(0, free - queued demand), over N x T",
    ),
    "omega_lost": (
        "fraction",
        "ω_lost: 1 - ω_util - ω_unused: capacity wanted but not used (fragmentation, killed work, downtime)",
    ),
    "failures": ("", "fail-stop failures met during the run"),
    "job_kills": ("", "attempts killed by failures"),
    "jobs_killed": ("", "jobs with at least one killed attempt"),
    "lost_work": ("size x s", "work thrown away by kills (summed lost_work)"),
    "migrations": ("", "running jobs moved (Krevat's repacking, preventive migrations)"),
    "repacks": ("", "repacking actions (Krevat's migration of several jobs at once)"),
    "preventive_checkpoints": ("", "checkpoints taken because a failure was predicted (CKPT-MIG)"),
    "preventive_migrations": ("", "jobs moved to spares before a predicted failure (CKPT-MIG)"),
    "preventive_migrations_failed": ("", "preventive migrations the failure overtook"),
    "offered_load": ("", "work / (capacity x submission span) after cleaning; above 1 the queue grows without bound"),
    "mbs": ("", "PV-EASY's mean bounded slowdown (Eq. 1, Γ = 10 s, wait + runtime over runtime)"),
    "mwbs": ("", "PV-EASY's mean bounded slowdown weighted by size (Eq. 2)"),
    "mean_wait": (
        "s",
        "PV-EASY's mean wait: finished_at - submitted_at - runtime, so time lost to preemptions and restarts counts; "
        "equal to avg_wait_time only when no attempt was interrupted (PV-EASY suspend on CTC: 2,834.3 vs 2,954.3 s)",
    ),
    "total_load": ("fraction", "node-time used (time_sum x size) over P x span (PV-EASY Table 4)"),
    "useful_load": ("fraction", "node-time of the jobs' runtimes over P x span"),
    "wasted_load": ("fraction", "total_load - useful_load: lost work and overheads (PV-EASY Table 4)"),
    "preempted_jobs": ("", "jobs preempted at least once"),
    "preempted_rate": ("fraction", "preempted_jobs / jobs"),
    "mkt": ("", "mean preemptions of a preempted job (PV-EASY Table 5)"),
    "mean_rtw": ("", "mean (time_sum - runtime) / runtime of preempted jobs (PV-EASY Eq. 3)"),
    "blocked_jobs": ("", "jobs that were the blocked head of the queue (with --fairness)"),
    "delayed_jobs": ("", "blocked jobs started later than they could have but for lower-priority jobs (PV-EASY Table 1)"),
    "mean_delay_min": ("min", "mean delay of the delayed jobs"),
    "max_delay_h": ("h", "largest delay"),
    "violations": ("", "jobs whose reservation backfilled jobs violated (PV-EASY Table 2)"),
    "mean_dtr_min": ("min", "mean delay from the reservation of the violated jobs"),
    "max_dtr_h": ("h", "largest delay from the reservation"),
    "mean_si": ("", "mean slowdown increase of the violated jobs (actual minus promised bounded slowdown)"),
    "max_si": ("", "largest slowdown increase"),
    "violation_mean_parallelism": ("nodes", "mean size of the violated jobs"),
    "silent_errors": ("", "silent errors met (RIGID, MOLDABLE)"),
    "preemptions": ("", "attempts preempted by the policy"),
    "jobs_held": ("", "with limits only: times a waiting job was put aside, held over its user's, group's or queue's limit"),
    "jobs_held_for_maintenance": (
        "",
        "maintenance windows only: times a waiting job was held because its requested time reached into the next "
        "window (or one was on)",
    ),
    "dependent_submissions": (
        "",
        "dependencies only: jobs submitted a think time after the end of their user's job they waited for (Zakay and "
        "Feitelson 2014), not at their logged submit time",
    ),
    "jobs_held_for_prime_time": (
        "",
        "prime time only: times a waiting job asking more than prime_time_max_walltime was held through a prime time "
        "(once per prime time)",
    ),
    "jobs_started_by_preemption": (
        "",
        "preemption by tier only: waiting jobs of a higher queue tier started by preempting running jobs of lower tiers "
        "(the preemptions themselves: preemptions)",
    ),
    "node_hours_held_out": (
        "h",
        "effective size or reservations only: node-hours (supernode-hours on a torus) held out of the machine in spans "
        "of a smaller effective size and by reservations of part of it",
    ),
    "reservation_kills": (
        "",
        "reservations that kill only: running jobs killed (and requeued) because a reservation took their nodes (they "
        "count in job_kills too; their lost work in lost_work)",
    ),
    "scenarios": ("", "batch: failure scenarios run"),
    "mean_makespan": ("s", "batch: mean makespan over the scenarios"),
    "mean_lower_bound": ("s", "batch: mean lower bound L(f) / L'(J, f)"),
    "mean_ratio": ("", "batch: mean makespan / lower bound (RIGID Table 1, MOLDABLE Table 1)"),
    "max_ratio": ("", "batch: largest ratio"),
    "mean_failures": ("", "batch: mean silent errors per scenario"),
    "mean_energy_kwh": ("kWh", "batch with power accounting: mean energy over the scenarios"),
    "mean_wasted_energy_kwh": ("kWh", "batch with power accounting: mean energy of the spoiled attempts over the scenarios"),
    "mean_bill": ("currency", "batch with power accounting: mean bill over the scenarios"),
    "tie_*": ("", "tie-break placement only: placements decided, ties, alarmed, all alarmed, changed from MFP (BGL-FAULT §5.3)"),
    "energy_kwh": ("kWh", "power accounting: the machine's energy over [0, makespan], integrated exactly over the events"),
    "busy_energy_kwh": ("kWh", "power accounting: energy of every attempt (allocated nodes x time x the job's watts)"),
    "idle_energy_kwh": (
        "kWh",
        "power accounting: energy of the node-time neither busy nor down (nor off or switching off), at the idle draw (a node finishing a boot its job's end left: at the boot draw)",
    ),
    "down_energy_kwh": ("kWh", "power accounting: energy of failed or repairing nodes (node_down_w)"),
    "off_energy_kwh": (
        "kWh",
        "power accounting with idle nodes switched off (idle_off_after): energy of the off nodes (node_off_w)",
    ),
    "off_node_hours": ("h", "power accounting with idle nodes switched off: node-hours off"),
    "boot_energy_kwh": (
        "kWh",
        "power accounting with idle nodes switched off: energy of the booting nodes (node_boot_w), part of the jobs' energy",
    ),
    "boot_node_hours": (
        "h",
        "power accounting with idle nodes switched off: node-hours booting (boot_time per node switched on)",
    ),
    "shutdown_energy_kwh": (
        "kWh",
        "power accounting with a switch-off time (shutdown_time): energy of the idle nodes switching off (node_shutdown_w)",
    ),
    "shutdown_node_hours": ("h", "power accounting with a switch-off time: node-hours of idle nodes switching off"),
    "wake_wait_energy_kwh": (
        "kWh",
        "power accounting with a switch-off time: energy of the nodes a job was given while they were switching off or "
        "off, before their boot (node_shutdown_w / node_off_w), part of the jobs' energy",
    ),
    "wake_wait_node_hours": (
        "h",
        "power accounting with a switch-off time: node-hours a job waited for its nodes to finish switching off",
    ),
    "wasted_energy_kwh": (
        "kWh",
        "power accounting: energy of the attempts that did not complete (killed, preempted, silent error)",
    ),
    "energy_per_job_kwh": ("kWh", "power accounting: energy_kwh / completed jobs"),
    "bill": ("currency", "power accounting: the energy priced by the tariff over time (price per kWh x kWh, exact)"),
    "wasted_bill": ("currency", "power accounting: what the wasted attempts cost"),
    "peak_power_kw": ("kW", "power accounting: the highest draw of the machine"),
    "mean_power_kw": ("kW", "power accounting: energy_kwh over the makespan"),
    "mean_price": ("currency per kWh", "power accounting: bill / energy_kwh"),
    "cap_kw": (
        "kW",
        "power accounting with a power cap (power_cap): its level, power_cap x N x busy_w; with power_cap_file, its lowest level",
    ),
    "hours_over_cap": ("h", "power accounting with a power cap: time the machine drew more than the cap (in its hours)"),
    "energy_over_cap_kwh": ("kWh", "power accounting with a power cap: the energy drawn above the cap's level"),
}

POWER_COLUMNS: dict[str, tuple[str, str]] = {
    "hour": ("h", "the simulated hour (0: the first hour after t = 0)"),
    "energy_kwh": ("kWh", "the machine's energy in that hour"),
    "mean_power_kw": ("kW", "its mean draw in that hour"),
    "price": ("currency per kWh", "the hour's mean price, weighted by energy"),
    "cost": ("currency", "what that hour's energy cost"),
}
"""``power.csv`` (power accounting only): one row per simulated hour, for power-over-time figures."""
"""``summary.json``'s ``summary`` (and the metric columns of a sweep's ``results.csv``): the keys a run has
depend on what its record holds (:func:`torus_sim.metrics.families.summarize_record`)."""


def describe(name: str, schema: dict[str, tuple[str, str]]) -> tuple[str, str] | None:
    """The (unit, meaning) of a column, a ``prefix_*`` entry covering a family; None when undocumented."""
    if name in schema:
        return schema[name]
    for key, value in schema.items():
        if key.endswith("*") and name.startswith(key[:-1]):
            return value
    return None


def shortest_float(value: float) -> str:
    """A float in its shortest text that reads back as the same float64 (``1460`` for 1460.0, ``nan``)."""
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


def float_texts(values: np.ndarray) -> list[str]:
    """:func:`shortest_float` of each value of a float64 ``(n,)`` array, NaN as an empty string.

    Whole numbers under 1e15 in magnitude (most times of a job table) are written as integers in one numpy
    call (their shortest text is the integer's: ``1460`` for 1460.0); -0.0, the rest and the infinities one
    by one.

    Args:
        values: float64 ``(n,)``, in any unit (written as they are).

    Returns:
        ``n`` strings, the text pandas' ``to_csv`` writes with ``float_format=shortest_float``.
    """
    with np.errstate(invalid="ignore"):
        whole = (np.abs(values) < 1e15) & (values == np.trunc(values)) & ~((values == 0) & np.signbit(values))
    if whole.all():
        return [str(value) for value in values.astype(np.int64).tolist()]  # ~25% quicker than numpy's astype(str)
    texts = np.empty(len(values), dtype=object)
    texts[whole] = [str(value) for value in values[whole].astype(np.int64).tolist()]
    rest = ~whole
    texts[rest] = [shortest_float(value) if value == value else "" for value in values[rest].tolist()]
    return texts.tolist()


CSV_ROWS = 10_000
"""Rows formatted at a time when a table is written as CSV (:func:`csv_writer`)."""


def csv_writer(name: str, table, rows: int = CSV_ROWS):
    """A function that writes a run's table as CSV for people to a binary handle, :data:`CSV_ROWS` rows at a time.

    Times to the millisecond, other numbers in their shortest exact form; the bytes are those of the
    whole table's ``to_csv`` (pandas formats row by row), without its text or a rounded copy of the
    table held whole (RICC's jobs.csv: 46 MB of text, twice, and a 75 MB copy).

    Args:
        name: the table's name (``jobs``: its columns documented in seconds are rounded to
            :data:`TIME_DECIMALS`; any other table, e.g. ``scenarios`` or Batsim's record, is not rounded).
        table: a pandas DataFrame, or a table given as pieces of rows (``columns``, ``dtypes``, ``len()`` and
            ``chunk(start, stop)`` -> DataFrame: :class:`~torus_sim.metrics.summary.JobTableRows`).
        rows: rows per piece (> 0).

    Returns:
        ``write(handle)``: writes the header and every row (no index column) as UTF-8.
    """
    schema = JOB_COLUMNS if name == "jobs" else {}
    seconds = [
        column
        for column in table.columns
        if (describe(str(column), schema) or ("",))[0] == "s" and table.dtypes[column].kind == "f"
    ]
    if callable(getattr(type(table), "arrays", None)):  # numeric columns in pieces: written without pandas
        return _arrays_writer(table, seconds, rows)
    piece = table.chunk if callable(getattr(type(table), "chunk", None)) else lambda start, stop: table.iloc[start:stop]

    def write(handle) -> None:
        for start in range(0, max(len(table), 1), rows):
            part = piece(start, start + rows)
            if seconds:
                part = part.assign(**{column: part[column].round(TIME_DECIMALS) for column in seconds})
            handle.write(part.to_csv(index=False, header=start == 0, float_format=shortest_float).encode("utf-8"))

    return write


def _arrays_writer(table, seconds: list[str], rows: int):
    """:func:`csv_writer` for a table of numeric columns given as pieces of numpy arrays (``arrays(start, stop)``).

    The bytes pandas' ``to_csv`` writes for the same columns (tests/test_disk_tables.py): integers as ``str``
    gives them, floats through :func:`shortest_float` (NaN as an empty field), booleans as ``True`` / ``False``,
    with pandas' settings (minimal quoting, a line feed ending each row): no such field needs quoting, so the
    rows are joined with commas (Python's :mod:`csv` writer writes the header, and a one-column table).
    """
    import csv
    import io

    names = list(table.columns)

    def text(name: str, values: np.ndarray) -> list[str]:
        if values.dtype.kind == "f":
            if name in seconds:
                values = values.round(TIME_DECIMALS)
            return float_texts(values)
        return [str(value) for value in values.tolist()]

    def write(handle) -> None:
        for start in range(0, max(len(table), 1), rows):
            part = table.arrays(start, start + rows)
            buffer = io.StringIO()
            writer = csv.writer(buffer, lineterminator="\n")
            if start == 0:
                writer.writerow(names)
            fields = zip(*(text(name, np.asarray(part[name])) for name in names), strict=True)
            if len(names) > 1:  # numbers, booleans and empty fields: nothing to quote, joined 3x faster than the writer
                lines = "\n".join(map(",".join, fields))
                if lines:
                    buffer.write(lines + "\n")
            else:  # one column: the writer quotes an empty field alone on its line ("")
                writer.writerows(fields)
            handle.write(buffer.getvalue().encode("utf-8"))

    return write


def csv_text(name: str, table) -> str:
    """A run's table as CSV text for people (:func:`csv_writer`'s bytes, decoded).

    Args:
        name: the table's name (see :func:`csv_writer`).
        table: a pandas DataFrame.

    Returns:
        The CSV text (no index column).
    """
    import io

    buffer = io.BytesIO()
    csv_writer(name, table)(buffer)
    return buffer.getvalue().decode("utf-8")


AGAINST_LOG_SUMMARY: dict[str, tuple[str, str]] = {
    "log.path": ("", "the log's file name"),
    "log.sha256": ("", "its SHA-256 (the bytes the run read)"),
    "log.machine_processors": ("processors", "the log's machine (header MaxProcs, else MaxNodes)"),
    "log.scheduler_notes": ("", "the header's notes that name its scheduler (CTC-SP2: uses the EASY scheduler)"),
    "log.time_zone": ("", "the header's TimeZoneString: the months' and dates' zone (UTC when absent)"),
    "jobs.log_jobs": (
        "",
        "job lines of the log the run covers (the whole log; for a prefix run, the lines up to its last job's)",
    ),
    "jobs.simulated": ("", "jobs the run completed (after cleaning)"),
    "jobs.compared": ("", "jobs both kept: simulated, and placed by the log"),
    "jobs.not_placed": (
        "",
        "log lines the log cannot place, by reason: wait unknown (-1), cancelled before start (status 5, no run time), run time unknown",
    ),
    "jobs.not_placed_simulated": ("", "of those, jobs the run simulated (left out of the comparison)"),
    "jobs.not_simulated": ("", "lines the log places that the run's cleaning left out"),
    "wait.simulated_mean": ("s", "mean wait of the compared jobs in the run: first start - submit"),
    "wait.logged_mean": ("s", "their mean logged wait (SWF field 3)"),
    "wait.difference_mean": ("s", "mean of simulated - logged wait, per job (the start difference: the same submit times)"),
    "wait.difference_median": ("s", "its median"),
    "wait.difference_mean_absolute": ("s", "mean of its absolute value"),
    "wait.within_1_min": ("fraction", "share of jobs whose simulated start is within 60 s of the logged one"),
    "wait.within_1_h": ("fraction", "share within 3,600 s"),
    "bounded_slowdown.simulated_mean": ("", "mean bounded slowdown of the compared jobs in the run (jobs.csv's)"),
    "bounded_slowdown.logged_mean": ("", "the same formula on the logged wait and run time"),
    "ks.statistic": ("", "two-sample Kolmogorov-Smirnov distance between the simulated and logged waits (scipy.stats.ks_2samp)"),
    "ks.p_value": ("", "its p-value"),
    "utilization.simulated_mean": ("fraction", "mean daily utilization by the compared jobs in the run (every attempt)"),
    "utilization.logged_mean": ("fraction", "the same in the log (its machine)"),
    "utilization.daily_difference_mean_absolute": ("fraction", "mean over the days of |simulated - logged| utilization"),
    "utilization.days": ("", "days compared, from the log's start"),
}
"""``against_log.json``'s ``summary`` (and ``summary.json``'s ``against_log``), dotted keys; ``torus-sim run --against-log``."""

AGAINST_LOG_TABLES: dict[str, tuple[str, str]] = {
    "wait_quantiles: quantile": ("", "0.1, 0.25, 0.5, 0.75, 0.9, 0.99"),
    "wait_quantiles: simulated_wait, logged_wait": ("s", "that quantile of each wait"),
    "by_size: size_class": ("", "the log's processors as a share of its machine P: (0, P/32] .. (P/2, P] (PV-EASY's groups)"),
    "by_month: month": ("", "calendar month of submission, YYYY-MM, in the log's time zone"),
    "by_size, by_month: jobs": ("", "compared jobs in the class or month"),
    "by_size, by_month: simulated_wait, logged_wait": ("s", "their mean waits"),
    "by_size, by_month: simulated_bsld, logged_bsld": ("", "their mean bounded slowdowns"),
    "by_day: day": ("", "whole days from the log's start (its UnixStartTime)"),
    "by_day: date": ("", "that day's date in the log's time zone"),
    "by_day: simulated_utilization, logged_utilization": (
        "fraction",
        "node-seconds busy that day over capacity x 86,400 s (the compared jobs)",
    ),
}
"""``against_log.json``'s tables (lists of rows)."""

INTERVAL_COLUMNS: dict[str, tuple[str, str]] = {
    "(the case's parameters)": ("", "name and the sweep's parameters other than the replicates"),
    "metric": ("", "a metric of results.csv"),
    "n": ("", "replicates (runs) with a value"),
    "mean": ("as the metric", "its mean over them"),
    "ci_low, ci_high": (
        "as the metric",
        "the 95% confidence interval of the mean: bootstrap over the runs (9,999 resamples, seed 0)",
    ),
    "ci_method": (
        "",
        "BCa (bias-corrected and accelerated), percentile (where BCa is undefined), constant (every run equal), none (one run)",
    ),
}
"""A sweep's ``intervals.csv`` (sweeps with replicates: job sets, seeds, or the file's ``replicates``)."""

PAIRED_COLUMNS: dict[str, tuple[str, str]] = {
    "a, b": ("", "two values of the compared parameter (the file's compare: the case name, or policy)"),
    "(the other parameters)": ("", "the values the pair shares"),
    "metric": ("", "a metric of results.csv"),
    "n": ("", "pairs of runs on the same replicate (seed, job set, window, log)"),
    "mean_a, mean_b": ("as the metric", "each case's mean over the pairs"),
    "difference": ("as the metric", "mean of B - A over the pairs"),
    "ci_low, ci_high": ("as the metric", "its 95% bootstrap confidence interval"),
    "ci_method": ("", "as in intervals.csv"),
    "wilcoxon": ("", "Wilcoxon's signed-rank statistic (the smaller rank sum; scipy.stats.wilcoxon)"),
    "p_value": ("", "its two-sided p-value (exact for small samples without ties; 1 when every difference is 0)"),
    "zeros": ("", "pairs without a difference"),
}
"""A sweep's ``paired.csv``."""


def _table(title: str, note: str, schema: dict[str, tuple[str, str]]) -> list[str]:
    lines = [f"## {title}", "", note, "", "| column | unit | meaning |", "|---|---|---|"]
    lines += [f"| `{name}` | {unit} | {meaning} |" for name, (unit, meaning) in schema.items()]
    return [*lines, ""]


def outputs_markdown() -> str:
    """docs/outputs.md: the three tables with a heading (the text this module's schema makes)."""
    lines = [
        "# What a run writes",
        "",
        "Made by `python -m torus_sim.outputs.output_columns > docs/outputs.md` from `torus_sim/outputs/output_columns.py`, the",
        "one description of the outputs (tests/test_output_columns.py checks that every column written is in it).",
        "Times in seconds unless the name says `_min` or `_h`; sizes in nodes on a cluster and in supernodes",
        "(midplanes) on a torus. `summary.json` also holds `config` (the scenario's fields: `torus_sim/experiments/scenario.py`)",
        "and `inputs` (each input's path, SHA-256, the registry entry that read it and its cleaning counts).",
        "",
    ]
    lines += _table(
        "jobs.csv",
        "One row per completed job. Times (unit s) are rounded to the millisecond; other numbers are written in their "
        "shortest exact form. `jobs.parquet` (`--parquet`) keeps every digit of every column.",
        JOB_COLUMNS,
    )
    lines += _table("scenarios.csv (batches)", "One row per failure scenario of a batch run.", SCENARIO_COLUMNS)
    lines += _table("power.csv (power accounting)", "One row per simulated hour, with `--power`.", POWER_COLUMNS)
    lines += _table(
        "summary.json: summary (and results.csv)",
        "The run's metrics; a run has the keys its record supports (fairness with `--fairness`, batch keys in a batch).",
        SUMMARY_METRICS,
    )
    lines += [
        "## results.csv (sweeps)",
        "",
        "One row per run: `name` and the scenario fields that vary between the runs, `failures_given` (the failure",
        "source as given, e.g. `bundled` or `synthetic:4000`; the metric `failures` is the count met), the metrics",
        "above, `wall_time` (s, on the machine that ran it) and `key` (the run's hash), then the scenario fields every run shares.",
        "",
    ]
    lines += _table(
        "intervals.csv (sweeps with replicates)",
        "One row per case and metric, where the sweep repeats each case over job sets, seeds or the file's "
        "`replicates` (`torus_sim/metrics/confidence.py`).",
        INTERVAL_COLUMNS,
    )
    lines += _table(
        "paired.csv (sweeps with replicates)",
        "One row per pair of cases that differ in the compared parameter alone, and metric; the runs are paired "
        "by replicate. `torus-sim compare RESULTS A B --metric M` prints the same for any two cases.",
        PAIRED_COLUMNS,
    )
    lines += _table(
        "against_log.json (`torus-sim run --against-log`)",
        "The run held against the schedule its SWF log records, over the jobs both kept "
        "(`torus_sim/metrics/against_log.py`); `summary` (also `against_log` in summary.json):",
        AGAINST_LOG_SUMMARY,
    )
    lines += _table(
        "against_log.json: tables",
        "`wait_quantiles`, `by_size`, `by_month` and `by_day` are lists of rows; `against_log.png` draws the waits' "
        "CDFs and the utilization per day.",
        AGAINST_LOG_TABLES,
    )
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":
    print(outputs_markdown(), end="")
