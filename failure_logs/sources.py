"""Failure sources by name: what a scenario's ``failures`` text means, each form parsed by the entry that owns it.

Specifications (:meth:`torus_sim.inputs.input_registry.InputRegistry.select`):

* ``none``: no failures (:class:`NoFailures`).
* ``bundled``: the bundled BG/L RAS sample (``failure_logs/data/BGL_2k.log``, :class:`BundledRas`).
* ``mira``: Mira's FATAL events, maintenance periods and repair reservations (bundled, see
  :mod:`failure_logs.mira`; :class:`MiraEvents`).
* ``synthetic:N`` or ``synthetic:N:weibull`` (or ``:exponential``): N independent failures drawn by the
  model's generator over the workload's span (BGL-FAULT §6.2); ``synthetic:N:bursty``: N failures
  clustered in a fixed set of bursts (:func:`failure_logs.synthetic.generate_burst_failures`);
  :class:`Synthetic`.
* ``mtbf``: exponential failures of every node at the per-node MTBF ``node_mtbf`` (CKPT-MIG's model,
  :class:`Mtbf`).
* a file, by its name's ending or, failing that, its first bytes: a Loghub BG/L RAS log (``.log``,
  :class:`BglRasFile`), the LANL CSV (``.csv``, ``.csv.xz``, ``.csv.gz``, :class:`LanlFile`), a Failure
  Trace Archive ``event_trace`` table (``.tab[.gz|.xz|.bz2]``, :class:`FtaFile`), or LogAider's Mira
  event file (``.cor[.gz]``, :class:`MiraFile`: the reservations and maintenance periods are read from
  ``total-reservation.txt[.gz]`` and ``maintenance_periods.txt`` beside it when there, else the
  bundled ones).
* an installed package's entry point (group ``torus_sim.failure_sources``), or an import path
  ``package.module:Class`` to a subclass of :class:`FailureSource` (its parameters from
  ``[failures.params]`` / ``--failures-param key=value``): a fitted model of your machine, correlated
  failures.

References:
    BGL-FAULT §6.2 (a real log fitted onto the workload's span; synthetic failures); CKPT-MIG
    (exponential failures per node); the sources of each log in ../shared/data/SOURCES.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from types import SimpleNamespace

from failure_logs.bgl_ras import read_bgl_ras
from failure_logs.events import FailureLog
from failure_logs.fta import read_fta
from failure_logs.lanl import read_lanl
from failure_logs.mira import BUNDLED_MIRA_MAINTENANCE, BUNDLED_MIRA_RESERVATIONS, read_mira
from failure_logs.synthetic import GeneratedFailures, SyntheticFailures
from failure_logs.transform import fit_to_span
from torus_sim.core.errors import ConfigurationError
from torus_sim.core.files import require_file
from torus_sim.inputs.input_registry import InputRegistry
from torus_sim.inputs.input_source import InputSource
from torus_sim.inputs.plugin_admission import is_import_path

__all__ = [
    "select_failure_source",
    "BUNDLED_BGL_RAS",
    "FAILURE_SOURCES",
    "FAILURE_SOURCE_ENTRY_POINTS",
    "BglRasFile",
    "BundledRas",
    "FailureContext",
    "FailureSource",
    "FtaFile",
    "LanlFile",
    "MiraEvents",
    "MiraFile",
    "Mtbf",
    "NoFailures",
    "Synthetic",
    "failure_source",
    "load_failure_source",
]

BUNDLED_BGL_RAS = Path(str(files("failure_logs") / "data" / "BGL_2k.log"))
"""The bundled BG/L RAS sample (see failure_logs/data/README.md for its attribution)."""


@dataclass
class FailureContext:
    """What a failure source needs to know of the run besides its own argument.

    Attributes:
        settings: the scenario fields the source declares it reads (its ``from_scenario``: ``lanl_system``,
            ``synthetic_model``, ``fta_system``, ``fta_platform``, ``fta_nodes``, ``mira_io_drawers``,
            ``mira_maintenance``, ``node_mtbf``), read-only; any object with those attributes from Python.
        capacity: nodes (supernodes) of the platform.
        horizon: ``(start, end)`` seconds generated failures span (the submissions; a batch's run).
    """

    settings: object
    capacity: int
    horizon: tuple[float, float] = (0.0, 1.0)


class FailureSource(InputSource):
    """Base class of failure sources.

    Attributes a subclass sets:
        name: its registry name (the scenario's ``failures``, or the part before ``:``).
        takes_argument, argument_form: the specification is ``name:argument`` (``synthetic:4000``).
        reads_file: it reads a file (a sweep reads it once before any run).
        suffixes: file-name endings it reads; ``sniff(head)`` claims a file by its first bytes.
        default_timing: how its log meets the workload when the scenario does not say: ``fit`` (its
            first..last failure laid over the workload, BGL-FAULT §6.2) or ``window`` (its own rate).
        places_itself: its generated failures already span what they should (``mtbf``): the run does
            not lay them over the workload again.
        generated: it gives failures drawn by the run's generator (a request, not a log).
        from_scenario: the scenario fields it reads, a tuple of names (``context.settings`` holds exactly those).

    Hooks a subclass overrides:
        load(context) -> FailureLog, GeneratedFailures (drawn by the run's generator) or None.

    Args:
        argument: the text after ``name:``, or a file's path (None for a plain name).
    """

    name = "failures"
    from_scenario: tuple[str, ...] | None = None
    default_timing = "fit"
    places_itself = False
    generated = False

    def load(self, context: FailureContext) -> FailureLog | GeneratedFailures | None:
        """The failures: a log (times in seconds since its own epoch), a request drawn by the run's generator, or None."""
        raise NotImplementedError


class NoFailures(FailureSource):
    """``none``: no fail-stop failure."""

    name = "none"
    from_scenario = ()

    def load(self, context: FailureContext) -> None:  # noqa: D102
        return None


class _LogFile(FailureSource):
    """A failure log in a file: read, then checked against the platform's nodes."""

    reads_file = True

    def read(self, path: Path, context: FailureContext) -> FailureLog:
        """The log of the file (the reader's own checks)."""
        raise NotImplementedError

    def load(self, context: FailureContext) -> FailureLog:  # noqa: D102
        log = self.read(require_file(self.path, "failure log"), context)
        log.check_fits(context.capacity)
        return log


class BglRasFile(_LogFile):
    """A Loghub BG/L RAS log (``.log``): FATAL events at their midplane (:func:`failure_logs.bgl_ras.read_bgl_ras`)."""

    name = "bgl-ras"
    from_scenario = ()
    suffixes = (".log",)
    _LINE = re.compile(rb"^\S+ \d{9,10} \d{4}\.\d\d\.\d\d ")

    @classmethod
    def sniff(cls, head: bytes) -> bool:
        """A RAS line: alert flag, epoch seconds, date ``2005.06.03``."""
        return bool(cls._LINE.match(head.lstrip()))

    def read(self, path: Path, context: FailureContext) -> FailureLog:  # noqa: D102
        return read_bgl_ras(path)


class BundledRas(BglRasFile):
    """``bundled``: the bundled BG/L RAS sample (BGL-FAULT's set-up on the BG/L torus)."""

    name = "bundled"
    from_scenario = ()
    reads_file = False
    suffixes = ()

    @classmethod
    def sniff(cls, head: bytes) -> bool:  # noqa: D102
        return False

    @property
    def path(self) -> str:  # noqa: D102
        return str(BUNDLED_BGL_RAS)


class LanlFile(_LogFile):
    """The LANL failure data (``.csv[.xz|.gz]``): one system's failures with their repairs (:func:`failure_logs.lanl.read_lanl`)."""

    name = "lanl-csv"
    from_scenario = ("lanl_system",)
    suffixes = (".csv", ".csv.xz", ".csv.gz")

    @classmethod
    def sniff(cls, head: bytes) -> bool:
        """The LANL table's header starts with ``System,machine type``."""
        return head.lstrip().startswith(b"System,machine type")

    def read(self, path: Path, context: FailureContext) -> FailureLog:  # noqa: D102
        return read_lanl(path, system=context.settings.lanl_system, n_supernodes=context.capacity)


class FtaFile(_LogFile):
    """A Failure Trace Archive ``event_trace`` table (``.tab[.gz|.xz|.bz2]``): down intervals (:func:`failure_logs.fta.read_fta`)."""

    name = "fta-table"
    from_scenario = ("fta_system", "fta_platform", "fta_nodes")
    suffixes = (".tab", ".tab.gz", ".tab.xz", ".tab.bz2")

    @classmethod
    def sniff(cls, head: bytes) -> bool:
        """The FTA table's header names ``event_id`` and ``event_type``, tab-separated."""
        first = head.lstrip().split(b"\n", 1)[0]
        return b"event_id" in first and b"event_type" in first

    def read(self, path: Path, context: FailureContext) -> FailureLog:  # noqa: D102
        settings = context.settings
        return read_fta(
            path, context.capacity, system=settings.fta_system, platform=settings.fta_platform, nodes=settings.fta_nodes
        )


class MiraFile(_LogFile):
    """LogAider's Mira event file (``.cor[.gz]``), with the reservations and maintenance beside it (:func:`failure_logs.mira.read_mira`)."""

    name = "mira-cor"
    from_scenario = ("mira_io_drawers", "mira_maintenance")
    suffixes = (".cor", ".cor.gz", ".cor.xz", ".cor.bz2")
    default_timing = "window"

    @classmethod
    def sniff(cls, head: bytes) -> bool:
        """LogAider's file opens with ``#count=<events>``."""
        return head.lstrip().startswith(b"#count=")

    def read(self, path: Path, context: FailureContext) -> FailureLog:  # noqa: D102
        settings = context.settings
        return read_mira(
            path,
            context.capacity,
            _beside(path, ("total-reservation.txt", "total-reservation.txt.gz"), BUNDLED_MIRA_RESERVATIONS),
            _beside(path, ("maintenance_periods.txt", "maintenance_periods.txt.gz"), BUNDLED_MIRA_MAINTENANCE),
            io_drawers=settings.mira_io_drawers,
            include_maintenance=settings.mira_maintenance,
        )


class MiraEvents(FailureSource):
    """``mira``: Mira's bundled FATAL events, maintenance periods and repair reservations (the machine ``mira``'s own)."""

    name = "mira"
    from_scenario = ("mira_io_drawers", "mira_maintenance")
    default_timing = "window"

    def load(self, context: FailureContext) -> FailureLog:  # noqa: D102
        settings = context.settings
        return read_mira(
            n_supernodes=context.capacity, io_drawers=settings.mira_io_drawers, include_maintenance=settings.mira_maintenance
        )


class Synthetic(FailureSource):
    """``synthetic:N[:exponential|weibull|bursty]``: N failures drawn by the run's generator (BGL-FAULT §6.2).

    The distribution is the specification's third part, else the scenario's ``synthetic_model``.
    """

    name = "synthetic"
    from_scenario = ("synthetic_model",)
    generated = True
    takes_argument = True
    argument_form = "N[:exponential|weibull|bursty]"

    def load(self, context: FailureContext) -> SyntheticFailures:  # noqa: D102
        parts = (self.argument or "").split(":")
        spec = f"synthetic:{self.argument}"
        try:
            count = int(parts[0])
        except ValueError:
            raise ConfigurationError(f"expected synthetic:N[:exponential|weibull|bursty], got {spec!r}") from None
        if len(parts) > 2:
            raise ConfigurationError(f"expected synthetic:N[:exponential|weibull|bursty], got {spec!r}")
        return SyntheticFailures(count, parts[1] if len(parts) == 2 else context.settings.synthetic_model)


class Mtbf(FailureSource):
    """``mtbf``: exponential failures of every node at the per-node MTBF ``node_mtbf`` over the run's horizon (CKPT-MIG).

    References:
        CKPT-MIG (a platform of N nodes of MTBF μ fails every μ / N).
    """

    name = "mtbf"
    from_scenario = ("node_mtbf",)
    places_itself = True
    generated = True

    def load(self, context: FailureContext) -> SyntheticFailures:  # noqa: D102
        mtbf = context.settings.node_mtbf
        if mtbf is None:
            raise ConfigurationError("failures = mtbf needs the per-node MTBF node_mtbf (seconds)")
        start, end = context.horizon
        count = round(context.capacity * (end - start) / mtbf)
        check_synthetic_count(count, context.capacity, context.horizon, f"failures = mtbf with node_mtbf {mtbf:g} s")
        return SyntheticFailures(count, "exponential", span=context.horizon)


MAX_SYNTHETIC_FAILURES = 1_000_000
"""The most synthetic failures one run draws, whatever the span (a run of 10^6 failures takes minutes)."""


def check_synthetic_count(count: int, capacity: int, span: tuple[float, float], spec: str) -> None:
    """Refuse more synthetic failures than one per node per hour of the span, or than :data:`MAX_SYNTHETIC_FAILURES`.

    Args:
        count: failures asked for.
        capacity: the platform's nodes.
        span: ``(start, end)`` seconds the failures are drawn over.
        spec: what asked for them, for the message.

    Raises:
        ConfigurationError: too many (at least 1,000 are always allowed).
    """
    hours = max((span[1] - span[0]) / 3600.0, 1.0)
    limit = min(MAX_SYNTHETIC_FAILURES, max(1000, int(capacity * hours)))
    if count > limit:
        raise ConfigurationError(
            f"{spec} asks {count:,} failures; at most {limit:,} are drawn here (one per node per hour of the "
            f"{hours:,.0f}-hour span on {capacity:,} nodes, and never more than {MAX_SYNTHETIC_FAILURES:,})"
        )


def _beside(path: Path, names: tuple[str, ...], fallback: Path) -> Path:
    """The first of ``names`` in the folder of ``path``, else ``fallback``."""
    for name in names:
        if (path.parent / name).is_file():
            return path.parent / name
    return fallback


FAILURE_SOURCE_ENTRY_POINTS = "torus_sim.failure_sources"
"""The entry-point group installed packages add their failure sources to."""

FAILURE_SOURCES: InputRegistry[FailureSource] = InputRegistry("failure source", FAILURE_SOURCE_ENTRY_POINTS, FailureSource)
"""Failure sources by name: the built-ins below, installed plug-ins, import paths; files by suffix or content."""

for _source in (NoFailures, BundledRas, MiraEvents, Synthetic, Mtbf, BglRasFile, LanlFile, FtaFile, MiraFile):
    FAILURE_SOURCES.register(_source.name, _source)


def failure_source(spec, params: dict | None = None) -> FailureSource:
    """The source a scenario's ``failures`` names, built with its ``failures_params`` (a fresh one each time).

    Raises:
        ConfigurationError: an unknown name or file type, a name that needs an argument, a class of
            the wrong kind, a parameter its constructor does not take.
        FileNotFoundError: a file that is not there and that no name or suffix explains.
    """
    select_failure_source(spec)  # the sentence for a spec no entry reads
    return FAILURE_SOURCES.build_selected(spec, params)


def select_failure_source(spec):
    """``(factory, where it came from, argument)`` a specification selects (:meth:`~torus_sim.inputs.input_registry.InputRegistry.select`; cached per text).

    Raises:
        ConfigurationError: no entry reads it (naming the file types there are).
        FileNotFoundError: a file that is not there and that no name or suffix explains.
    """
    try:
        return FAILURE_SOURCES.selected(spec)
    except ConfigurationError as error:
        if not isinstance(spec, str):
            raise
        if not Path(spec).exists() and not is_import_path(spec):
            raise FileNotFoundError(f"failure log file not found: {spec}") from None
        if ":" in spec or Path(spec).suffix == "":
            raise
        raise ConfigurationError(
            f"unknown failure-log type for {spec} (expected a BG/L RAS .log, a LANL .csv[.xz|.gz], an FTA "
            f".tab[.gz|.xz|.bz2] or a Mira .cor[.gz], or a file whose first line is one of theirs): {error}"
        ) from None


def load_failure_source(
    spec: str,
    n_supernodes: int,
    span: tuple[float, float] | None = None,
    lanl_system: int = 20,
    synthetic_model: str = "exponential",
    fta_system: str | None = None,
    fta_platform: int | None = None,
    fta_nodes: int | None = None,
    mira_io_drawers: bool = True,
    mira_maintenance: bool = True,
) -> FailureLog | GeneratedFailures | None:
    """Resolve a failure specification outside a run (the settings as keywords; a scenario's run uses :func:`failure_source`).

    Args:
        spec: see the module docstring.
        n_supernodes: supernodes of the platform.
        span: ``(start, end)`` seconds to fit a real log onto (BGL-FAULT §6.2); the log's own
            times when None.
        lanl_system: the LANL system to read.
        synthetic_model: the distribution of ``synthetic:N`` when the spec names none.
        fta_system: an FTA table's system (``node_name`` prefix), all when None (see
            :func:`failure_logs.fta.read_fta`).
        fta_platform: an FTA table's ``platform_id``, all when None.
        fta_nodes: the FTA system's node count (largest node number + 1 when None).
        mira_io_drawers: Mira: an I/O drawer's event takes down its rack's midplanes.
        mira_maintenance: Mira: maintenance periods as whole-machine downtime.

    Returns:
        A failure log, a synthetic-failure request, or None for ``none``.

    Raises:
        ConfigurationError: a malformed ``synthetic:`` spec or an unknown file type.
        FileNotFoundError: the path does not exist.
        InputFileError: the path is a directory, or a truncated or corrupt compressed file.
        FailureLogFormatError: a malformed line in the file.
    """
    settings = SimpleNamespace(
        lanl_system=lanl_system,
        synthetic_model=synthetic_model,
        fta_system=fta_system,
        fta_platform=fta_platform,
        fta_nodes=fta_nodes,
        mira_io_drawers=mira_io_drawers,
        mira_maintenance=mira_maintenance,
        node_mtbf=None,
    )
    failures = failure_source(spec).load(FailureContext(settings, n_supernodes))
    if isinstance(failures, FailureLog) and span is not None:
        return fit_to_span(failures, *span)
    return failures
