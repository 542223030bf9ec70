"""The import paths modules had before the package was grouped into layers, kept working for users' code.

Until issue 76 §4 (2026-12-04) ``torus_sim`` held its modules loose (``torus_sim.topology``,
``torus_sim.scenario``, ``torus_sim.api``, ``torus_sim.workload.swf``, ...). They now live in a package
per layer or concept; :data:`MOVED` maps each former name to its home, and :class:`FormerPaths`, a
finder on ``sys.meta_path`` installed by ``torus_sim/__init__.py``, answers an import of a former name
(or of any module under a former package's name) with the module at its home: the same module object,
so a class has one identity whichever path imported it, and nothing is executed twice.
``torus_sim.api`` stays the documented name of the plug-in surface.

References:
    PEP 451 (module specs, ``find_spec`` / ``create_module`` / ``exec_module``).
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys

__all__ = ["MOVED", "FormerPaths", "install"]

MOVED = {
    "errors": "core.errors",
    "files": "core.files",
    "disk_tables": "core.disk_tables",
    "version": "core.version",
    "lazy_imports": "core.lazy_imports",
    "progress_bars": "core.progress_bars",
    "job": "core.job",
    "job_columns": "core.job_columns",
    "topology": "machine.topology",
    "partitions": "machine.partitions",
    "partition_table": "machine.partition_table",
    "machines": "machine.machines",
    "platforms": "machine.platforms",
    "registry": "inputs.registry",
    "input_registry": "inputs.input_registry",
    "plugin_admission": "inputs.plugin_admission",
    "untrusted": "inputs.untrusted",
    "provenance": "inputs.provenance",
    "datasets": "inputs.datasets",
    "parameters": "inputs.parameters",
    "input_source": "inputs.input_source",
    "workload": "inputs.workload",
    "energy": "inputs.energy",
    "guarded_extensions": "policies.guarded_extensions",
    "reports": "outputs.reports",
    "figures": "outputs.figures",
    "output_columns": "outputs.output_columns",
    "formats": "outputs.formats",
    "runner": "experiments.runner",
    "scenario": "experiments.scenario",
    "model_builder": "experiments.model_builder",
    "extensions": "experiments.extensions",
    "log_replay": "experiments.log_replay",
    "cli": "interfaces.cli",
    "commands": "interfaces.commands",
    "viz": "interfaces.viz",
    "api": "interfaces.api",
}
"""A former module or package name under ``torus_sim`` -> its home under ``torus_sim``. (The former
``torus_sim.inputs``, a run's inputs from its scenario, is :mod:`torus_sim.experiments.run_inputs`: its
name is the inputs layer's package now.)"""


def home_of(fullname: str) -> str | None:
    """The module a former name stands for (``torus_sim.workload.swf`` -> ``torus_sim.inputs.workload.swf``), or None."""
    package, _, rest = fullname.partition(".")
    if package != "torus_sim" or not rest:
        return None
    first, _, tail = rest.partition(".")
    home = MOVED.get(first)
    if home is None:
        return None
    return f"torus_sim.{home}" + (f".{tail}" if tail else "")


class _Alias:
    """Loads a former name as the module at its home (imported there first, then the same object)."""

    def __init__(self, home: str) -> None:
        self.home = home
        self.spec = None

    def create_module(self, spec):
        module = importlib.import_module(self.home)
        self.spec = module.__spec__
        return module

    def exec_module(self, module) -> None:
        module.__spec__ = self.spec  # the import system set the former name's spec on it: the home's stays


class FormerPaths:
    """A ``sys.meta_path`` finder: a former ``torus_sim`` module name is the module at its home (:data:`MOVED`).

    (The finder and its loader implement PEP 451's methods without importlib.abc's base classes: importing
    ``importlib.abc`` cost every ``import torus_sim`` 10 ms.)
    """

    def find_spec(self, fullname, path=None, target=None):
        """The spec of a former name (loaded as its home's module), or None for every other name."""
        home = home_of(fullname)
        if home is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _Alias(home))


def install() -> None:
    """Put one :class:`FormerPaths` first on ``sys.meta_path`` (again: nothing; idempotent)."""
    if not any(isinstance(finder, FormerPaths) for finder in sys.meta_path):
        sys.meta_path.insert(0, FormerPaths())
