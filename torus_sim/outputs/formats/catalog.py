"""Output formats by name: what a run writes into its folder, besides its manifest (``summary.json``).

Every run writes ``jobs`` (``jobs.csv``, and ``scenarios.csv`` for a batch of several failure
scenarios); the others are asked for (``--batsim``, ``--swf``, ``--parquet``, or ``--format NAME`` for
any, a plug-in's included):

* ``batsim``: Batsim's job record, ``batsim_jobs.csv`` (evalys reads it; :mod:`torus_sim.outputs.formats.batsim`);
* ``swf``: the simulated schedule in SWF, ``schedule.swf`` (:mod:`torus_sim.outputs.formats.swf_schedule`);
* ``relogged``: the replayed SWF log with each job's wait and run time as the run gave them, ``relogged.swf``
  (:func:`torus_sim.outputs.formats.swf_schedule.relogged_log`);
* ``parquet``: every table of the run also as Parquet, with the manifest in its metadata
  (:mod:`torus_sim.outputs.formats.parquet`; needs pyarrow).

An installed package adds a format under the ``torus_sim.formats`` entry points, or a run names one
by import path (a subclass of :class:`OutputFormat`).

References:
    Batsim documentation ("Output files"); the Parallel Workloads Archive's SWF; Apache Parquet.
"""

from __future__ import annotations

import typing

from torus_sim.inputs.registry import Registry

if typing.TYPE_CHECKING:
    import pandas as pd

__all__ = ["ALWAYS", "FORMATS", "FORMAT_ENTRY_POINTS", "OutputFormat", "output_format"]


class OutputFormat:
    """Base class of output formats.

    Attributes a subclass sets:
        name: the registry name (and the ``--format`` value).
        description: what it writes, in a few words, for the help.

    Hooks a subclass overrides (both may return nothing):
        tables(result) -> ``{name: DataFrame}``: tables written as ``<name>.csv`` (and as Parquet when
            ``parquet`` is chosen too).
        files(result, tables) -> ``{file name: bytes}``: other files, given every table of the run.

    Raises:
        ConfigurationError or ValueError: from the hooks, when the result cannot give the format
            (a run made without its attempt table); nothing is written then.
    """

    name = "format"
    description = ""

    def tables(self, result) -> dict[str, pd.DataFrame]:
        """The tables this format adds to the run's folder (as CSV)."""
        return {}

    def files(self, result, tables: dict[str, pd.DataFrame]) -> dict[str, bytes]:
        """The other files this format writes, given every table of the run."""
        return {}


class JobsFormat(OutputFormat):
    """``jobs.csv``, a batch's ``scenarios.csv``, and ``power.csv`` when the run accounts for power.

    ``jobs.csv``: one row per job (:func:`torus_sim.metrics.summary.job_table`); ``power.csv``: one row
    per simulated hour (:mod:`torus_sim.metrics.energy`).
    """

    name = "jobs"
    description = "jobs.csv (and scenarios.csv for a batch); always written"

    def tables(self, result) -> dict[str, pd.DataFrame]:  # noqa: D102
        tables = {"jobs": result.job_rows()}  # written a piece at a time
        if result.rows_in("scenarios"):
            tables["scenarios"] = result.scenarios
        if result.rows_in("power"):
            tables["power"] = result.power  # power accounting: one row per simulated hour
        return tables


class BatsimFormat(OutputFormat):
    """Batsim's job record, ``batsim_jobs.csv`` (:func:`torus_sim.outputs.formats.batsim.batsim_jobs`)."""

    name = "batsim"
    description = "batsim_jobs.csv: Batsim's job record (evalys reads it)"

    def tables(self, result) -> dict[str, pd.DataFrame]:  # noqa: D102
        from torus_sim.outputs.formats.batsim import batsim_jobs, run_workload_name

        boots = getattr(result, "boot_change_j", None)
        return {"batsim_jobs": batsim_jobs(result.record, result.jobs, run_workload_name(result), boots)}


class SwfScheduleFormat(OutputFormat):
    """The simulated schedule as SWF, ``schedule.swf`` (:func:`torus_sim.outputs.formats.swf_schedule.schedule_swf`)."""

    name = "swf"
    description = "schedule.swf: the simulated schedule in SWF, one line per attempt"

    def files(self, result, tables: dict[str, pd.DataFrame]) -> dict[str, bytes]:  # noqa: D102
        from torus_sim.outputs.formats.swf_schedule import schedule_swf, swf_header

        return {"schedule.swf": schedule_swf(result.record, result.jobs, swf_header(result)).encode("utf-8")}


class RelogFormat(OutputFormat):
    """The replayed log as it ran under the run's settings, ``relogged.swf`` (:func:`~torus_sim.outputs.formats.swf_schedule.relogged_log`)."""

    name = "relogged"
    description = "relogged.swf: the replayed SWF log with each job's wait and run time as this run gave them"

    def files(self, result, tables: dict[str, pd.DataFrame]) -> dict[str, bytes]:  # noqa: D102
        from torus_sim.outputs.formats.swf_schedule import relogged_log

        return {"relogged.swf": relogged_log(result).encode("utf-8")}


class ParquetFormat(OutputFormat):
    """Every table of the run also as ``<name>.parquet``, with the manifest in the file's metadata."""

    name = "parquet"
    description = "every table also as .parquet with the manifest in its metadata (needs pyarrow)"

    def files(self, result, tables: dict[str, pd.DataFrame]) -> dict[str, bytes]:  # noqa: D102
        from torus_sim.outputs.formats.parquet import parquet_bytes

        manifest = result.manifest()
        return {f"{name}.parquet": parquet_bytes(table, manifest) for name, table in tables.items()}


FORMAT_ENTRY_POINTS = "torus_sim.formats"
"""The entry-point group installed packages add their output formats to."""

FORMATS: Registry[OutputFormat] = Registry("output format", FORMAT_ENTRY_POINTS, OutputFormat)
"""Output formats by name: the built-ins, installed plug-ins, import paths."""

for _format in (JobsFormat, BatsimFormat, SwfScheduleFormat, RelogFormat, ParquetFormat):
    FORMATS.register(_format.name, _format)

ALWAYS = ("jobs",)
"""The formats every run writes (the manifest ``summary.json`` besides)."""


def output_format(spec) -> OutputFormat:
    """The output format ``spec`` names (a built-in, an installed plug-in's, an import path).

    Raises:
        ConfigurationError: an unknown name, or a class that is not an OutputFormat.
    """
    return FORMATS.build(spec)
