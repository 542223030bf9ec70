"""Where an extension came from: its origin, its package and version, and the SHA-256 of its source file.

:class:`PluginInfo` is what a run's manifest and header say of each extension (a built-in, an installed
plug-in's entry point, an import path, a Python object); the helpers read the installed distributions
and hash source files once per process.

References:
    Python Packaging User Guide, "Entry points specification"; ``importlib.metadata``.
"""

from __future__ import annotations

import hashlib
import inspect
from dataclasses import asdict, dataclass
from functools import lru_cache
from importlib import metadata

from torus_sim.inputs.plugin_admission import object_path

__all__ = [
    "BUILT_IN",
    "ENTRY_POINT",
    "IMPORT_PATH",
    "PYTHON_OBJECT",
    "PluginInfo",
    "distribution_of",
    "installed_entry_points",
    "source_sha256",
]

BUILT_IN = "built-in"
ENTRY_POINT = "entry point"
IMPORT_PATH = "import path"
PYTHON_OBJECT = "python object"


@dataclass(frozen=True)
class PluginInfo:
    """Where an extension came from, for the run's manifest and header.

    Attributes:
        kind: the registry's kind ("policy", "placement", ...).
        name: as the scenario gave it (a name or an import path).
        origin: ``built-in``, ``entry point``, ``import path`` or ``python object``.
        import_path: ``module:qualname`` of the class or factory.
        package: the installed distribution that provides it (None when not installed as one).
        version: that distribution's version.
        source_sha256: SHA-256 of the file that defines it (None when it has no source file).
        alias_of: the built-in's standard name when ``name`` is an older name kept for it (None otherwise).
    """

    kind: str
    name: str
    origin: str
    import_path: str
    package: str | None = None
    version: str | None = None
    source_sha256: str | None = None
    alias_of: str | None = None

    @property
    def plugin(self) -> bool:
        """Whether this is not one of torus-sim's own."""
        return self.origin != BUILT_IN

    def describe(self) -> str:
        """One line for a run's header: ``name (plug-in pkg 1.0, pkg.mod:Class, source sha256 1a2b..., by entry point)``."""
        if not self.plugin:
            return f"{self.name} (= {self.alias_of})" if self.alias_of else self.name
        label = self.name if self.origin == ENTRY_POINT else self.import_path.rpartition(":")[2]
        package = f"{self.package} {self.version}, " if self.package else ""
        digest = f", source sha256 {self.source_sha256[:12]}" if self.source_sha256 else ""
        return f"{label} (plug-in {package}{self.import_path}{digest}, by {self.origin})"

    def to_dict(self) -> dict:
        """JSON-ready fields."""
        return asdict(self)


@lru_cache(maxsize=256)
def _file_sha256(path: str) -> str | None:
    try:
        with open(path, "rb") as handle:
            return hashlib.sha256(handle.read()).hexdigest()
    except OSError:
        return None


def source_sha256(obj) -> str | None:
    """SHA-256 of the source file defining ``obj`` (a class or function; of an instance, its class), or None without one."""
    try:
        path = inspect.getsourcefile(obj if inspect.isclass(obj) or inspect.isroutine(obj) else type(obj))
    except TypeError:
        return None
    return _file_sha256(path) if path else None


@lru_cache(maxsize=1)
def _packages() -> dict:
    """Top-level module -> distributions (read once per process: scanning them costs ~0.1 s)."""
    return metadata.packages_distributions()


@lru_cache(maxsize=16)
def installed_entry_points(group: str) -> tuple:
    """The installed entry points of a group (read once per process)."""
    return tuple(metadata.entry_points(group=group))


def distribution_of(obj) -> tuple[str | None, str | None]:
    """(distribution name, version) that provides the module of ``obj``, or (None, None)."""
    top = object_path(obj).split(":")[0].split(".")[0]
    names = _packages().get(top, [])
    for name in names:
        try:
            return name, metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return None, None
