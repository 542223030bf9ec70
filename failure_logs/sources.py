"""Choosing a failure source from a short specification (as the CLI and scenario files give it).

Specifications:

* ``none``: no failures.
* ``bundled``: the bundled BG/L RAS sample (``failure_logs/data/BGL_2k.log``).
* ``mira``: Mira's FATAL events, maintenance periods and repair reservations (bundled, see
  :mod:`failure_logs.mira`).
* ``synthetic:N`` or ``synthetic:N:weibull`` (or ``:exponential``): N independent failures drawn
  by the model's generator over the workload's span (BGL-FAULT §6.2); ``synthetic:N:bursty``: N
  failures clustered in a fixed set of bursts (:func:`failure_logs.synthetic.generate_burst_failures`).
* a path: a Loghub BG/L RAS log (``*.log``), the LANL CSV (``*.csv``, ``*.csv.xz``, ``*.csv.gz``), or a
  Failure Trace Archive ``event_trace`` table (``*.tab``, ``*.tab.gz``, ``*.tab.xz``, ``*.tab.bz2``), or
  LogAider's Mira event file (``*.cor``, ``*.cor.gz``, ...: the reservations and maintenance periods are
  read from ``total-reservation.txt[.gz]`` and ``maintenance_periods.txt`` beside it when there,
  else the bundled ones).
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from failure_logs.bgl_ras import read_bgl_ras
from failure_logs.events import FailureLog
from failure_logs.fta import read_fta
from failure_logs.lanl import read_lanl
from failure_logs.mira import BUNDLED_MIRA_MAINTENANCE, BUNDLED_MIRA_RESERVATIONS, read_mira
from failure_logs.synthetic import SyntheticFailures
from failure_logs.transform import fit_to_span
from torus_sim.errors import ConfigurationError
from torus_sim.files import require_file

__all__ = ["BUNDLED_BGL_RAS", "load_failure_source"]

BUNDLED_BGL_RAS = Path(str(files("failure_logs") / "data" / "BGL_2k.log"))
"""The bundled BG/L RAS sample (see failure_logs/data/README.md for its attribution)."""


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
) -> FailureLog | SyntheticFailures | None:
    """Resolve a failure specification.

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
    if spec == "none":
        return None
    if spec.startswith("synthetic:"):
        parts = spec.split(":")
        try:
            count = int(parts[1])
        except (IndexError, ValueError):
            raise ConfigurationError(f"expected synthetic:N[:exponential|weibull|bursty], got {spec!r}") from None
        if len(parts) > 3:
            raise ConfigurationError(f"expected synthetic:N[:exponential|weibull|bursty], got {spec!r}")
        return SyntheticFailures(count, parts[2] if len(parts) == 3 else synthetic_model)
    if spec == "mira":
        log = read_mira(n_supernodes=n_supernodes, io_drawers=mira_io_drawers, include_maintenance=mira_maintenance)
        return fit_to_span(log, *span) if span is not None else log
    path = require_file(BUNDLED_BGL_RAS if spec == "bundled" else Path(spec), "failure log")
    name = path.name.lower()
    if name.endswith((".cor", ".cor.gz", ".cor.xz", ".cor.bz2")):
        log = read_mira(
            path,
            n_supernodes,
            _beside(path, ("total-reservation.txt", "total-reservation.txt.gz"), BUNDLED_MIRA_RESERVATIONS),
            _beside(path, ("maintenance_periods.txt", "maintenance_periods.txt.gz"), BUNDLED_MIRA_MAINTENANCE),
            io_drawers=mira_io_drawers,
            include_maintenance=mira_maintenance,
        )
    elif name.endswith(".log"):
        log = read_bgl_ras(path)
    elif name.endswith((".csv", ".csv.xz", ".csv.gz")):
        log = read_lanl(path, system=lanl_system, n_supernodes=n_supernodes)
    elif name.endswith((".tab", ".tab.gz", ".tab.xz", ".tab.bz2")):
        log = read_fta(path, n_supernodes, system=fta_system, platform=fta_platform, nodes=fta_nodes)
    else:
        raise ConfigurationError(
            f"unknown failure-log type for {path} (expected a BG/L RAS .log, a LANL .csv[.xz|.gz], an FTA .tab[.gz|.xz|.bz2] "
            "or a Mira .cor[.gz])"
        )
    log.check_fits(n_supernodes)
    return fit_to_span(log, *span) if span is not None else log


def _beside(path: Path, names: tuple[str, ...], fallback: Path) -> Path:
    """The first of ``names`` in the folder of ``path``, else ``fallback``."""
    for name in names:
        if (path.parent / name).is_file():
            return path.parent / name
    return fallback
