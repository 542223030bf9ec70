"""Workload sources by name: where a run's jobs come from, chosen from the scenario's ``workload`` text.

A scenario names its workload in one of these forms, each parsed by the registry entry that owns it
(:meth:`torus_sim.registry.Registry.select`):

* a file: an SWF log (``.swf``, ``.swf.gz``, ...; any file no other reader claims) or a Batsim JSON
  workload (``.json``, ``.json.gz``, ...; or any file that starts with ``{``): :class:`SwfFile`,
  :class:`BatsimFile`;
* ``bundled``: the bundled NASA iPSC/860 log (:class:`BundledLog`);
* ``rigid``: RIGID §5.1's synthetic set (:class:`RigidSet`); ``moldable:<model>``: MOLDABLE §5.1's set
  under a speedup model (:class:`MoldableSet`); ``table:<path>``: a user's t_j(p) table
  (:class:`TimeTable`); ``refcode:<path>``: the RIGID reference code's job file (:class:`RefcodeFile`);
  ``steady-state``: CKPT-MIG's job sizes (:class:`SteadyState`);
* an installed package's entry point (group ``torus_sim.workloads``), or an import path
  ``package.module:Class`` to a subclass of :class:`WorkloadSource` (its constructor's parameters from
  ``[workload.params]`` / ``--workload-param key=value``).

A source is online (jobs submitted over time: :meth:`WorkloadSource.jobs` returns a
:class:`~torus_sim.workload.jobs.Workload`) or a batch (released at time 0: it returns
:class:`BatchJobs`). An online source that produces SWF records subclasses :class:`TraceSource` and
gets the cleaning rules, the load scale c, the offered load and the prefix (``max_jobs``) for free.

References:
    BGL-FAULT §6.2 (SWF logs, load scale c); PV-EASY §5.1; RIGID §5.1; MOLDABLE §5.1; CKPT-MIG;
    Feitelson, "Workload Modeling for Computer Systems Performance Evaluation" (2015): the SWF.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from functools import lru_cache
from importlib.resources import files
from pathlib import Path

import numpy as np

from torus_sim.errors import ConfigurationError, TorusSimError, WorkloadFormatError
from torus_sim.input_registry import InputRegistry
from torus_sim.input_source import InputSource
from torus_sim.workload.batch import RigidJobSet, generate_rigid_set, moldable_workload, rigid_workload
from torus_sim.workload.jobs import SWF_RULES, Workload, jobs_from_swf
from torus_sim.workload.swf import SwfTrace, read_swf

__all__ = [
    "select_workload",
    "source_forms",
    "BUNDLED_NASA_LOG",
    "WORKLOADS",
    "WORKLOAD_ENTRY_POINTS",
    "BatchJobs",
    "BatsimFile",
    "BundledLog",
    "MoldableSet",
    "RefcodeFile",
    "RigidSet",
    "SteadyState",
    "SwfFile",
    "TimeTable",
    "TraceSource",
    "WorkloadContext",
    "WorkloadSource",
    "declared_by_workload",
    "stable_hash",
    "workload_source",
]

BUNDLED_NASA_LOG = Path(str(files("torus_sim") / "data" / "NASA-iPSC-1993-3.1-cln.swf.gz"))
"""The bundled NASA iPSC/860 SWF log (see torus_sim/data/README.md for its attribution)."""


def stable_hash(text: str) -> int:
    """A hash of ``text`` that is the same in every process (Python's ``hash`` of a string is salted per process)."""
    import hashlib

    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")


@dataclass
class WorkloadContext:
    """What a source needs to know of the run besides its own argument.

    Attributes:
        scenario: the run's :class:`~torus_sim.scenario.Scenario` (read only): ``nodes``, ``jobs``,
            ``job_set``, ``seed``, ``load_scale``, ``offered_load``, ``max_jobs``, ``swf_rules``, ...
        platform: the run's platform kind (:class:`~torus_sim.platforms.kinds.PlatformKind`): its
            nodes, the sizes a job can occupy, its default cleaning rules.
        capacity: the platform's nodes when the caller knows them already; else the platform kind
            decides, from the scenario or the workload's own machine size.
    """

    scenario: object
    platform: object
    capacity: int | None = None

    def nodes(self, named: int | None) -> int:
        """The platform's nodes, given the machine size the workload names (or None).

        Raises:
            ConfigurationError: the platform kind cannot tell its size.
        """
        return self.capacity or self.platform.capacity(self.scenario, named)

    @property
    def round_size(self):
        """The platform's size rounding (``size -> occupied size``), or None."""
        return self.platform.round_size(self.scenario)

    @property
    def rules(self):
        """The SWF cleaning rules: the scenario's ``swf_rules``, else the platform kind's default."""
        return SWF_RULES[self.scenario.swf_rules or self.platform.default_rules]


@dataclass
class BatchJobs:
    """A batch source's jobs and what the silent-error draws need of them.

    Attributes:
        workload: the jobs, all submitted at 0 (``kind = "batch"``).
        rigid: the rigid job set (t_j, p_j; its areas weight RIGID's silent errors), or None.
        error_rate: an error rate λ the source itself names (the reference code's header), or None.
    """

    workload: Workload
    rigid: RigidJobSet | None = None
    error_rate: float | None = None


class WorkloadSource(InputSource):
    """Base class of workload sources.

    Attributes a subclass sets:
        name: its registry name (the scenario's ``workload``, or the part before ``:``).
        kind: ``online`` (jobs over time) or ``batch`` (released at 0).
        takes_argument: the specification is ``name:argument`` (``moldable:mix``); ``argument_form``
            says what the argument is, for messages.
        reads_file: it reads a file (the path, or its argument): a sweep reads it once before any run.
        suffixes: file-name endings it reads (a path is given to the source whose suffix matches).
        fallback: a path no source claims by suffix or content is given to it (the SWF reader).
        platforms: the platform kinds its jobs run on (None: every kind).

    Hooks a subclass overrides:
        jobs(context) -> Workload (online) or BatchJobs (batch).
        sniff(head) -> bool: whether a file's first 4 KiB look like this format (classmethod).
        silent_error_seed(seed, job_set, count, rate) -> list[int]: the seed of a moldable batch's
            drawn silent errors.
        declared_fields(argument) -> dict: scenario fields the input itself names (a job file's
            header), taken where a scenario leaves them out (classmethod; built-in sources only).

    Args:
        argument: the text after ``name:``, or a file's path (None for a plain name).
    """

    name = "workload"
    kind = "online"
    platforms: tuple[str, ...] | None = None
    platform_refusal = ""

    def check_platform(self, platform: str) -> None:
        """Raise ConfigurationError when the jobs cannot run on the platform kind ``platform``."""
        if self.platforms is not None and platform not in self.platforms:
            raise ConfigurationError(self.platform_refusal or f"workload {self.name} runs on {' and '.join(self.platforms)}")

    def jobs(self, context: WorkloadContext):
        """The run's jobs: a :class:`~torus_sim.workload.jobs.Workload` (online) or :class:`BatchJobs` (batch)."""
        raise NotImplementedError

    def silent_error_seed(self, seed: int, job_set: int, count: int, rate: float) -> list[int]:
        """The generator seed of a moldable batch's drawn silent errors (MOLDABLE §5.1's experiments)."""
        return [seed, job_set, count, round(rate * 1e12), 2]

    @classmethod
    def declared_fields(cls, argument: str | None) -> dict:
        """Scenario fields the input itself names, for a scenario that leaves them out ({} here).

        Args:
            argument: the text after ``name:`` or the file's path.

        Returns:
            ``{field: value}``; a value that is a :class:`ConfigurationError` is the sentence for a
            scenario that needs that field and does not give it (the input names nothing that can run).
            An input that cannot be read declares nothing: its run says why.
        """
        return {}


# -- online sources ------------------------------------------------------------------------------


class TraceSource(WorkloadSource):
    """An online source that produces SWF records: the cleaning rules, c, the offered load and the prefix apply.

    Override :meth:`trace`. The header's ``MaxProcs`` / ``MaxNodes`` is the machine's size (a cluster
    takes its node count from it when the scenario gives none); impossible values are warned about.

    References:
        BGL-FAULT §6.2 (the load scale c multiplies runtimes and walltimes); PV-EASY §5.1.
    """

    kind = "online"

    def trace(self, context: WorkloadContext) -> SwfTrace:
        """The SWF records of the workload (its header included)."""
        raise NotImplementedError

    def jobs(self, context: WorkloadContext) -> Workload:
        """The cleaned jobs (see :mod:`torus_sim.workload.jobs`), scaled by c or to the offered load asked.

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


def _check_header(trace: SwfTrace, scenario, platform) -> None:
    """Warn about SWF header values no machine has where they are not used, and drop an impossible start time.

    A ``MaxProcs`` / ``MaxNodes`` below 1 with ``nodes`` given (or on a platform that does not take its
    size from the workload) is ignored with a warning; an ``UnixStartTime`` outside
    :data:`UNIX_TIME_RANGE` is dropped from the header (it is copied into the outputs) with a warning.

    Raises:
        WorkloadFormatError: a header value that is not an integer.
    """
    for key in ("MaxProcs", "MaxNodes"):
        named = trace.header_int(key)
        if named is not None and named < 1 and (scenario.nodes or not platform.sizes_from_workload):
            warnings.warn(
                f"{trace.path}:{trace.header_lines.get(key, 0)}: header {key} = {named} is not a machine size; ignored "
                f"(the platform's size comes from {'--nodes' if scenario.nodes else f'the {platform.name}'})",
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
        return read_swf(self.argument)


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
        return read_swf(BUNDLED_NASA_LOG)


class BatsimFile(TraceSource):
    """A Batsim JSON workload, read as SWF records and cleaned by the same rules (:mod:`torus_sim.workload.batsim`)."""

    name = "batsim-json"
    reads_file = True
    suffixes = (".json", ".json.gz", ".json.xz", ".json.bz2")

    @classmethod
    def sniff(cls, head: bytes) -> bool:
        """A JSON workload is an object: its first character is ``{``."""
        return head.lstrip().startswith(b"{")

    def trace(self, context: WorkloadContext) -> SwfTrace:  # noqa: D102
        from torus_sim.workload.batsim import read_batsim_workload

        return read_batsim_workload(self.argument)


# -- batch sources -------------------------------------------------------------------------------


@lru_cache(maxsize=8)
def _generated_set(
    kind: str, model: str, jobs: int | None, job_set: int, seed: int, nodes: int, processor_range, runtime_range, round_size
):
    """The job set of a generated batch (cached: the runs of a sweep share their sets)."""
    if kind == "rigid":
        count = jobs or 100
        low, high = processor_range or (max(1, round(0.005 * nodes)), max(1, round(0.2 * nodes)))
        rigid = generate_rigid_set(np.random.default_rng([seed, job_set, count]), count, (low, high), tuple(runtime_range))
        source = f"RIGID §5.1 synthetic set {job_set} (n = {count}, seed {seed})"
        return rigid_workload(rigid, source, nodes, round_size), rigid
    from torus_sim.workload.speedup import SPEEDUP_MODELS, generate_speedup_model

    if model not in SPEEDUP_MODELS:
        raise ConfigurationError(f"unknown speedup model {model!r}; choose from {', '.join(SPEEDUP_MODELS)}")
    count = jobs or 500
    speedup = generate_speedup_model(model, count, np.random.default_rng([seed, job_set, count, SPEEDUP_MODELS.index(model)]))
    source = f"MOLDABLE §5.1 synthetic set {job_set} ({model}, n = {count}, seed {seed})"
    return moldable_workload(speedup.times(nodes), source), speedup


def _generated(context: WorkloadContext, kind: str, model: str, default_nodes: int):
    """``(nodes, workload, set)`` of a generated batch for the run (the platform's nodes, else the paper's P)."""
    scenario = context.scenario
    nodes = context.nodes(default_nodes)
    batch, made = _generated_set(
        kind,
        model,
        scenario.jobs,
        scenario.job_set,
        scenario.seed,
        nodes,
        scenario.processor_range,
        scenario.runtime_range,
        context.round_size,
    )
    return nodes, batch, made


class RigidSet(WorkloadSource):
    """RIGID §5.1's synthetic set: ``jobs`` jobs (100), p_j uniform in ``processor_range`` (0.5%-20% of P), t_j uniform in ``runtime_range``.

    References:
        RIGID §5.1 (n = 100, P = 10,000 by default).
    """

    name = "rigid"
    kind = "batch"

    def jobs(self, context: WorkloadContext) -> BatchJobs:  # noqa: D102
        nodes, batch, made = _generated(context, "rigid", "", 10000)
        made.check_fits(nodes)
        return BatchJobs(batch, made)


class MoldableSet(WorkloadSource):
    """MOLDABLE §5.1's set under a speedup model: ``moldable:roofline|communication|amdahl|mix-low-com|mix|power``.

    References:
        MOLDABLE §5.1 (n = 500, P = 7,500 by default; the six models).
    """

    name = "moldable"
    kind = "batch"
    takes_argument = True
    argument_form = "<model>"  # roofline, communication, amdahl, mix-low-com, mix, power
    platforms = ("cluster",)
    platform_refusal = "moldable jobs run on a cluster (any processor count); the torus offers only partition sizes"

    def jobs(self, context: WorkloadContext) -> BatchJobs:  # noqa: D102
        return BatchJobs(_generated(context, "moldable", self.argument, 7500)[1])


class TimeTable(MoldableSet):
    """A user's time table t_j(p), one job per line (``table:<path>``); ``monotonic`` checks it.

    References:
        MOLDABLE §3.1 (t_j(p) non-increasing, work non-decreasing: the monotonic model).
    """

    name = "table"
    argument_form = "<path>"  # a t_j(p) table
    reads_file = True

    @property
    def path(self) -> str:  # noqa: D102
        return self.argument

    def jobs(self, context: WorkloadContext) -> BatchJobs:  # noqa: D102
        from torus_sim.workload.speedup import read_time_table

        model = read_time_table(self.argument, context.scenario.monotonic)
        nodes = min(context.nodes(model.max_processors), model.max_processors)
        return BatchJobs(moldable_workload(model.times(nodes), f"table:{self.argument}"))

    def silent_error_seed(self, seed: int, job_set: int, count: int, rate: float) -> list[int]:
        """A table's draws are seeded by its path's stable hash (the same in every process)."""
        return [seed, job_set, count, 2, stable_hash(self.argument) % 1000]


class RefcodeFile(WorkloadSource):
    """The RIGID reference code's job file (``refcode:<path>``): its header's P and λ, one job per line.

    References:
        RIGID §5 (the published C++ code's input format).
    """

    name = "refcode"
    kind = "batch"
    takes_argument = True
    argument_form = "<path>"  # a reference-code job file
    reads_file = True

    @property
    def path(self) -> str:  # noqa: D102
        return self.argument

    def jobs(self, context: WorkloadContext) -> BatchJobs:  # noqa: D102
        from torus_sim.workload.refcode import read_rigid_jobs

        header, rigid = read_rigid_jobs(self.argument)
        nodes = context.nodes(header.processors)
        rigid.check_fits(nodes)
        batch = rigid_workload(rigid, f"refcode:{self.argument}", header.processors, context.round_size)
        return BatchJobs(batch, rigid, header.error_rate)

    @classmethod
    def declared_fields(cls, argument: str | None) -> dict:
        """The header's priority rule, V and the heuristic its flags select (``policy``).

        The reference code runs one heuristic, with the header's priority and V; a scenario that names
        none of them runs the same (an option given explicitly wins). Flags that select no RIGID
        heuristic (``batch = 1``) leave ``policy`` a sentence.
        """
        from torus_sim.workload.refcode import read_header

        try:
            header = read_header(argument)
        except (OSError, TorusSimError):
            return {}
        try:
            policy = header.heuristic()
        except ConfigurationError as error:
            policy = ConfigurationError(f"the job file's header names no heuristic to run ({error}); give --policy")
        return {"policy": policy, "priority": header.priority, "verification_time": header.verification_time}


class SteadyState(WorkloadSource):
    """CKPT-MIG's steady-state workload: ``jobs`` jobs (2,000) of the paper's sizes, all at 0.

    References:
        CKPT-MIG (the job-size distribution of the steady-state analysis).
    """

    name = "steady-state"
    kind = "batch"

    def jobs(self, context: WorkloadContext) -> BatchJobs:  # noqa: D102
        from torus_sim.workload.synthetic import steady_state_workload

        scenario = context.scenario
        nodes = context.nodes(None)
        largest = scenario.processor_range[1] if scenario.processor_range else None
        batch = steady_state_workload(
            scenario.jobs or 2000, nodes, np.random.default_rng([scenario.seed, scenario.job_set]), max_job_size=largest
        )
        return BatchJobs(batch)


WORKLOAD_ENTRY_POINTS = "torus_sim.workloads"
"""The entry-point group installed packages add their workload sources to."""

WORKLOADS: InputRegistry[WorkloadSource] = InputRegistry("workload", WORKLOAD_ENTRY_POINTS, WorkloadSource)
"""Workload sources by name: the built-ins below, installed plug-ins, import paths; files by suffix or content."""

for _source in (SwfFile, BatsimFile, BundledLog, RigidSet, MoldableSet, TimeTable, RefcodeFile, SteadyState):
    WORKLOADS.register(_source.name, _source)


def source_forms(kind: str | None = None) -> str:
    """The workload forms the registry knows (``rigid, moldable:<model>, ...``), of one kind (``online``, ``batch``) or all.

    For messages and help texts: a newcomer reads what can be given without a list kept by hand.
    """
    forms = []
    for name in WORKLOADS.builtin_names():
        factory = WORKLOADS.resolve(name)[0]
        if kind is not None and factory.kind != kind:
            continue
        if factory.takes_argument:
            forms.append(f"{name}:{factory.argument_form}")
        elif factory.reads_file:
            forms.append(f"a {name.upper() if len(name) <= 4 else name} file ({', '.join(factory.suffixes)})")
        else:
            forms.append(name)
    return ", ".join(forms)


def workload_source(spec, params: dict | None = None) -> WorkloadSource:
    """The source a scenario's ``workload`` names, built with its ``workload_params`` (one per process and spec).

    Args:
        spec: ``bundled``, a path, ``rigid``, ``moldable:mix``, an entry-point name, an import path,
            or (from Python) a source class or instance.
        params: the source's constructor parameters (checked against its signature).

    Returns:
        The source (``info`` says where it came from).

    Raises:
        ConfigurationError: an unknown name, a name that needs an argument, a class of the wrong kind,
            a parameter its constructor does not take.
    """
    return WORKLOADS.build_selected(spec, params)


def declared_by_workload(spec) -> dict:
    """The scenario fields a built-in workload's input names (:meth:`WorkloadSource.declared_fields`), or {}.

    Args:
        spec: the scenario's ``workload``.

    Returns:
        ``{field: value}``: a reference-code job file's header gives ``policy``, ``priority`` and
        ``verification_time``; every other built-in, a plug-in (never run while a scenario is
        checked) and a specification that selects nothing give {}.
    """
    if not isinstance(spec, str):
        return {}
    try:
        factory, info, argument = WORKLOADS.selected(spec)
    except (OSError, TorusSimError):
        return {}
    if info.plugin or not (isinstance(factory, type) and issubclass(factory, WorkloadSource)):
        return {}
    return factory.declared_fields(argument)


def select_workload(spec):
    """``(factory, where it came from, argument)`` a specification selects (:meth:`~torus_sim.registry.Registry.select`; cached per text)."""
    return WORKLOADS.selected(spec)
