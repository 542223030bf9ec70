"""Registries of inputs (workload and failure sources, job powers, tariffs): a short text selects a source, or a file by its look.

An :class:`InputRegistry` is a :class:`~torus_sim.inputs.registry.Registry` whose specifications are texts such as
``rigid``, ``moldable:mix``, ``synthetic:4000:bursty``, an import path, or a file's path: a file is read by the
source whose ``suffixes`` end its name, else the first whose ``sniff(head)`` accepts its first 4 KiB
(decompressed), else the one that declares ``fallback = True``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from torus_sim.core.errors import ConfigurationError
from torus_sim.inputs.datasets import dataset, fetch, is_reference, is_under_prefix
from torus_sim.inputs.input_source import file_head
from torus_sim.inputs.parameters import call_with_parameters
from torus_sim.inputs.plugin_admission import is_import_path
from torus_sim.inputs.provenance import PluginInfo
from torus_sim.inputs.registry import Registry

__all__ = ["InputRegistry"]

T = TypeVar("T")


class InputRegistry(Registry[T]):
    """A registry of inputs selected by short texts or by a file's name and first bytes (see the module docstring).

    Args:
        kind: what the registry holds, for messages ("workload", "failure source", ...).
        group: the entry-point group installed packages add to, or None.
        base: the class every source must be an instance of, or None.
    """

    def __init__(self, kind: str, group: str | None = None, base: type | None = None) -> None:
        super().__init__(kind, group, base)
        self._selections: dict[str, tuple] = {}  # specifications already selected (select is pure per text)

    def register(self, name: str, factory: Callable[..., T]) -> None:  # noqa: D102
        super().register(name, factory)
        self._selections.clear()

    def alias(self, name: str, target: str, says: str) -> None:  # noqa: D102
        super().alias(name, target, says)
        self._selections.clear()

    def select(self, spec) -> tuple[Callable[..., T] | T, PluginInfo, str | None]:
        """The factory an input specification selects and the argument it carries.

        For registries of inputs (workload and failure sources), whose specifications are short texts:

        1. a name (``rigid``, ``none``, an installed plug-in's);
        2. ``name:argument`` where the name's factory declares ``takes_argument = True``
           (``moldable:mix``, ``synthetic:4000:bursty``, ``refcode:jobs.txt``);
        3. an import path ``package.module:Class``;
        4. a registered public file by name (``pwa:SDSC-SP2``: :mod:`torus_sim.inputs.datasets`), fetched into the cache
           (or found in the mirror ``TORUS_SIM_DATA``), then read as the file it is;
        5. a file: the factory whose ``suffixes`` end the file's name, else the first whose ``sniff(head)``
           accepts the file's first 4 KiB (decompressed), else the one that declares ``fallback = True``.

        Args:
            spec: the specification (or, from Python, a class, a factory or an instance).

        Returns:
            ``(factory, where it came from, argument)``: the argument is the text after ``name:``, the
            file's path for a file (the local copy's for a registered one), None otherwise.

        Raises:
            ConfigurationError: a name that needs an argument without one, an import path that does
                not select a factory of this kind, or a file no factory reads (naming the suffixes known).
            InputFileError: a registered file that cannot be fetched or does not match its hash.
        """
        if not isinstance(spec, str):
            factory, info = self.resolve(spec)
            return factory, info, None
        if spec in self:
            factory, info = self.resolve(spec)
            if getattr(factory, "takes_argument", False):
                raise ConfigurationError(
                    f"{self.kind} {spec!r} needs an argument: {spec}:{getattr(factory, 'argument_form', '...')}"
                )
            return factory, info, None
        name, separator, argument = spec.partition(":")
        if separator and name in self:
            factory, info = self.resolve(name)
            if getattr(factory, "takes_argument", False):
                return factory, info, argument
        if is_reference(spec):  # a registered public file by name (pwa:SDSC-SP2): its local copy, fetched and checked
            path = str(fetch(spec))
            return (*self._reader_of(path), path)
        if is_under_prefix(spec) and not Path(spec).exists():  # pwa:NOPE: a name of no registered file
            dataset(spec)  # raises, listing the known names
        if is_import_path(spec):
            factory, info = self.resolve(spec)
            return factory, info, None
        return (*self._reader_of(spec), spec)

    def selected(self, spec) -> tuple[Callable[..., T] | T, PluginInfo, str | None]:
        """:meth:`select`, remembered per text for the process (a sweep asks for the same spec thousands of times)."""
        if not isinstance(spec, str):
            return self.select(spec)
        found = self._selections.get(spec)
        if found is None:
            found = self._selections[spec] = self.select(spec)
        return found

    def build_selected(self, spec, params: dict | None = None) -> T:
        """A fresh extension from an input specification (:meth:`select`), its argument given to the constructor.

        The constructor gets ``params`` (checked against its signature) and ``argument`` (the text
        after ``name:``, or the file's path) when it names it; the result gets ``info`` (where it came
        from) and, when the constructor did not keep it, ``argument``.

        Raises:
            ConfigurationError: see :meth:`select` and :func:`call_with_parameters`; or the result is not
                an instance of the registry's base.
        """
        factory, info, argument = self.selected(spec)
        if self.base is not None and isinstance(factory, self.base):
            return factory
        offered = {"argument": argument} if argument is not None else {}
        made = call_with_parameters(factory, params or {}, offered, f"{self.kind} {info.name!r}")
        if self.base is not None and not isinstance(made, self.base):
            raise ConfigurationError(f"{self.kind} {info.name!r} made a {type(made).__name__}, not a {self.base.__name__}")
        made.info = info
        if argument is not None and getattr(made, "argument", None) is None:
            made.argument = argument
        return made

    def _reader_of(self, path: str) -> tuple[Callable[..., T], PluginInfo]:
        """The factory that reads the file ``path`` (by suffix, then by its first bytes, then the fallback)."""
        readers = [name for name in [*self._factories, *self.iter_plugins()] if self._reads_files(name)]
        lowered = path.lower()
        for name in readers:
            factory, info = self.resolve(name)
            if lowered.endswith(tuple(getattr(factory, "suffixes", ()))):
                return factory, info
        head = file_head(path)
        if head is not None:
            for name in readers:
                factory, info = self.resolve(name)
                if factory.sniff(head):
                    return factory, info
        for name in readers:
            factory, info = self.resolve(name)
            if getattr(factory, "fallback", False):
                return factory, info
        known = sorted({suffix for name in readers for suffix in getattr(self.resolve(name)[0], "suffixes", ())})
        raise ConfigurationError(
            f"unknown {self.kind} {path!r}: not a name ({', '.join(sorted(self._factories))}), and no reader knows the file "
            f"(suffixes {', '.join(known)})"
        )

    def _reads_files(self, name: str) -> bool:
        factory = self._factories.get(name)
        if factory is None:  # an installed plug-in: loaded to ask (only when a file is given)
            try:
                factory = self.resolve(name)[0]
            except ConfigurationError:
                return False
        return getattr(factory, "reads_file", False) is True and not getattr(factory, "takes_argument", False)
