"""Online workload sources: an SWF log, the bundled NASA iPSC/860 log, a Batsim JSON workload.

Each produces SWF records (:class:`TraceSource`) and so gets the cleaning rules, the load scale c, the offered
load and the prefix (``max_jobs``); the header's machine size and start time are checked and warned about.

References:
    BGL-FAULT §6.2 (SWF logs, load scale c); PV-EASY §5.1; Feitelson, "Workload Modeling for Computer Systems
    Performance Evaluation" (2015): the SWF; Batsim's "Workloads" documentation.
"""

from __future__ import annotations

import math
import warnings
from importlib.resources import files
from pathlib import Path

import numpy as np

from torus_sim.core.errors import ConfigurationError, WorkloadFormatError
from torus_sim.inputs.workload.jobs import CLEANING_FIELDS, Workload, jobs_from_swf
from torus_sim.inputs.workload.source_api import WorkloadContext, WorkloadSource
from torus_sim.inputs.workload.swf import SwfTrace, read_swf, trace_table

__all__ = ["BUNDLED_NASA_LOG", "UNIX_TIME_RANGE", "BatsimFile", "BundledLog", "LublinModel", "SwfFile", "TraceSource"]

BUNDLED_NASA_LOG = Path(str(files("torus_sim.inputs") / "data" / "NASA-iPSC-1993-3.1-cln.swf.gz"))
"""The bundled NASA iPSC/860 SWF log (see torus_sim/inputs/data/README.md for its attribution)."""


class TraceSource(WorkloadSource):
    """An online source that produces SWF records: the cleaning rules, c, the offered load and the prefix apply.

    Override :meth:`trace`. The header's ``MaxProcs`` / ``MaxNodes`` is the machine's size (a cluster
    takes its node count from it when the scenario gives none); impossible values are warned about.

    References:
        BGL-FAULT §6.2 (the load scale c multiplies runtimes and walltimes); PV-EASY §5.1.
    """

    kind = "online"
    from_scenario = ("nodes", "offered_load", "load_scale", "max_jobs", "swf_rules", "cancelled", "failed", "kill_at_walltime")

    def trace(self, context: WorkloadContext) -> SwfTrace:
        """The SWF records of the workload (its header included)."""
        raise NotImplementedError

    def jobs(self, context: WorkloadContext) -> Workload:
        """The cleaned jobs (see :mod:`torus_sim.inputs.workload.jobs`), scaled by c or to the offered load asked.

        Raises:
            WorkloadFormatError: a header machine size below 1 where the size is taken from it.
            ConfigurationError: an offered load that needs a c outside [1e-6, 1e6], or no span to scale.
        """
        scenario, platform = context.scenario, context.platform
        trace = self.trace(context)
        path = trace.path
        _check_header(trace, scenario, platform)
        named = trace.header_int("MaxProcs") or trace.header_int("MaxNodes")
        if named is not None and named < 1 and not scenario.nodes and platform.sizes_from_workload:
            key = "MaxProcs" if trace.header_int("MaxProcs") is not None else "MaxNodes"
            raise WorkloadFormatError(
                path, trace.header_lines.get(key, 0), f"header {key!r} must be a positive machine size, got {named}"
            )
        capacity = context.nodes(named)
        round_size, rules = context.round_size, context.rules
        if scenario.offered_load is None:
            workload = jobs_from_swf(trace, capacity, round_size, scenario.load_scale, scenario.max_jobs, rules)
        else:
            unscaled = jobs_from_swf(trace, capacity, round_size, 1.0, scenario.max_jobs, rules).offered_load(capacity)
            if not unscaled:
                raise ConfigurationError(
                    f"{path}: the workload has no offered load to scale (its jobs are submitted at one instant)"
                )
            # the offered load is linear in c (c multiplies every runtime): c = wanted / load at c = 1 (BGL-FAULT §6.2)
            load_scale = scenario.offered_load / unscaled
            if not (math.isfinite(load_scale) and 1e-6 <= load_scale <= 1e6):
                raise ConfigurationError(
                    f"offered load {scenario.offered_load:g} needs c = {load_scale:.3g} on {path} (offered load {unscaled:.3g} "
                    "at c = 1); c must lie in [1e-6, 1e6]"
                )
            workload = jobs_from_swf(trace, capacity, round_size, load_scale, scenario.max_jobs, rules)
        if context.log_fields:  # the run reads these from the log too: the trace read for the jobs holds them
            workload.log = trace
        if workload.impossible:
            what = ", ".join(
                f"{count:,} with a {reason}" if reason != "no processors" else f"{count:,} with no processors"
                for reason, count in workload.impossible.items()
            )
            total = sum(workload.impossible.values())
            warnings.warn(
                f"{path}: {f'{total:,} job was' if total == 1 else f'{total:,} jobs were'} skipped for impossible values "
                f"({what}), not for an unknown one (SWF's -1); counted under skipped_* in the cleaning",
                stacklevel=3,
            )
        return workload


UNIX_TIME_RANGE = (0, 10**10)
"""The header ``UnixStartTime`` values read as a time (seconds since 1970, before the year 2286)."""


def _check_header(trace: SwfTrace, fields, platform) -> None:
    """Warn about SWF header values no machine has where they are not used, and drop an impossible start time.

    A ``MaxProcs`` / ``MaxNodes`` below 1 with ``nodes`` given (or on a platform that does not take its
    size from the workload) is ignored with a warning; an ``UnixStartTime`` outside
    :data:`UNIX_TIME_RANGE` is dropped from the header (it is copied into the outputs) with a warning.

    Raises:
        WorkloadFormatError: a header value that is not an integer.
    """
    for key in ("MaxProcs", "MaxNodes"):
        named = trace.header_int(key)
        if named is not None and named < 1 and (fields.nodes or not platform.sizes_from_workload):
            warnings.warn(
                f"{trace.path}:{trace.header_lines.get(key, 0)}: header {key} = {named} is not a machine size; ignored "
                f"(the platform's size comes from {'--nodes' if fields.nodes else f'the {platform.name}'})",
                stacklevel=4,
            )
    start = trace.header_int("UnixStartTime")
    if start is not None and not UNIX_TIME_RANGE[0] <= start < UNIX_TIME_RANGE[1]:
        warnings.warn(
            f"{trace.path}:{trace.header_lines.get('UnixStartTime', 0)}: header UnixStartTime = {start} is not a time "
            "between 1970 and 2286; ignored (not copied into the outputs)",
            stacklevel=4,
        )
        trace.header.pop("UnixStartTime", None)


def _fields(context: WorkloadContext) -> tuple[str, ...]:
    """The SWF fields the cleaning reads (the status too where cancelled or failed lines are skipped: rules 11 and 12) and the run's log fields."""
    skipping = "skip" in (context.rules.cancelled, context.rules.failed)
    fields = (*CLEANING_FIELDS, "status") if skipping else CLEANING_FIELDS
    return tuple(dict.fromkeys((*fields, *context.log_fields))) if context.log_fields else fields


class SwfFile(TraceSource):
    """A Standard Workload Format log (plain or compressed): the Parallel Workloads Archive's logs.

    References:
        Feitelson et al., the Parallel Workloads Archive's SWF definition (18 fields per job line).
    """

    name = "swf-file"
    reads_file = True
    suffixes = (".swf", ".swf.gz", ".swf.xz", ".swf.bz2")
    fallback = True  # any file no other reader claims (a log saved as .txt, .log, ...)

    @classmethod
    def sniff(cls, head: bytes) -> bool:
        """An SWF file starts with ``;`` header comments or with a job line of numbers."""
        text = head.lstrip()
        return text.startswith(b";") or text[:1].isdigit()

    def trace(self, context: WorkloadContext) -> SwfTrace:  # noqa: D102
        return read_swf(self.argument, _fields(context))


class BundledLog(SwfFile):
    """The bundled NASA iPSC/860 log (``workload = "bundled"``, the default): the real input every install has."""

    name = "bundled"
    reads_file = False  # known good: a sweep does not read it ahead
    suffixes = ()
    fallback = False

    @classmethod
    def sniff(cls, head: bytes) -> bool:  # noqa: D102
        return False

    @property
    def path(self) -> str:  # noqa: D102
        return str(BUNDLED_NASA_LOG)

    def trace(self, context: WorkloadContext) -> SwfTrace:  # noqa: D102
        return read_swf(BUNDLED_NASA_LOG, _fields(context))


class LublinModel(TraceSource):
    """Lublin and Feitelson's model of rigid jobs (``workload = "lublin"``) on the platform's nodes.

    Generated :data:`~torus_sim.inputs.workload.lublin.CHUNK_JOBS` at a time from the scenario's seed
    (:func:`~torus_sim.inputs.workload.lublin.lublin_chunks`), then cleaned like a log (the requested time is unknown:
    the walltime is the run time). Workload parameters: ``jobs`` (any count; else the scenario's ``jobs``, else
    10,000), ``typed`` (default true: batch and interactive jobs with their own parameters; false: the whole
    sample's fit).

    References:
        Lublin and Feitelson, JPDC 63(11), 2003.
    """

    name = "lublin"
    from_scenario = (*TraceSource.from_scenario, "jobs", "seed")

    def __init__(self, typed: bool = True, jobs: int | None = None) -> None:
        super().__init__()
        if not isinstance(typed, bool):
            raise ConfigurationError(f"lublin's typed must be true or false, got {typed!r}")
        if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
            raise ConfigurationError(f"lublin's jobs must be a whole number >= 1, got {jobs!r}")
        self.typed, self.job_count = typed, jobs

    def trace(self, context: WorkloadContext) -> SwfTrace:  # noqa: D102
        from torus_sim.inputs.workload.lublin import lublin_chunks

        scenario = context.scenario
        processors = context.nodes(None)
        jobs = self.job_count or scenario.jobs or 10_000
        kind = "typed" if self.typed else "typeless"
        header = {
            "Version": "2.2",
            "Computer": f"Lublin-Feitelson model ({kind}), {processors} processors",
            "MaxJobs": str(jobs),
            "MaxProcs": str(processors),
            "Note": f"generated by torus-sim, seed {scenario.seed}",
        }
        stored = trace_table(CLEANING_FIELDS)  # chunk by chunk: a long one goes to disk as it is made
        for chunk in lublin_chunks(jobs, processors, scenario.seed, self.typed):
            lines = np.arange(len(stored) + 1, len(stored) + len(chunk) + 1)
            stored.extend({**{name: chunk[:, index] for index, name in enumerate(CLEANING_FIELDS)}, "line": lines})
        return SwfTrace(Path(f"lublin:{kind}"), "", header, fields=CLEANING_FIELDS, stored=stored)


class BatsimFile(TraceSource):
    """A Batsim JSON workload, read as SWF records and cleaned by the same rules (:mod:`torus_sim.inputs.workload.batsim`)."""

    name = "batsim-json"
    reads_file = True
    suffixes = (".json", ".json.gz", ".json.xz", ".json.bz2")

    @classmethod
    def sniff(cls, head: bytes) -> bool:
        """A JSON workload is an object: its first character is ``{``."""
        return head.lstrip().startswith(b"{")

    def trace(self, context: WorkloadContext) -> SwfTrace:  # noqa: D102
        from torus_sim.inputs.workload.batsim import read_batsim_workload

        return read_batsim_workload(self.argument)
