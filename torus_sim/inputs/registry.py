"""Selection of extension points by name: built-ins, installed packages' entry points, import paths.

One :class:`Registry` per kind of extension (scheduling policies, placements, failure predictors,
runtime predictors, platforms, machines, output formats; the inputs' are :class:`~torus_sim.inputs.input_registry.InputRegistry`).
What a name may select is checked by :mod:`torus_sim.inputs.plugin_admission`; where it came from is
:mod:`torus_sim.inputs.provenance`'s :class:`~torus_sim.inputs.provenance.PluginInfo`. A scenario names an extension in one of three ways, tried in this order:

1. a built-in name (``krevat``, ``mfp``, ``history``, ...), registered by the module that defines it;
2. the name of an entry point of an installed package, in the registry's group
   (``torus_sim.policies``, ``torus_sim.placements``, ``torus_sim.predictors``,
   ``torus_sim.runtime_predictors``): ``[project.entry-points."torus_sim.policies"] my-sjf = "pkg.mod:MySjf"``;
3. an import path ``package.module:Attribute``.

What a name from data may resolve to (an entry point or an import path, i.e. anything a scenario,
sweep or machine file, a command-line option or the browser could give) is checked *before anything
is called*: a class that subclasses the registry's base (``Policy``, ``PlacementPolicy``,
``FailurePredictor``, ``RuntimePredictor``), an instance of that base, or a function its author
marked with :func:`factory_of` (``@factory_of(Policy)``). Anything else (``os:system``,
``subprocess:run``, ``builtins:exec``, ``shutil:rmtree``, ``pathlib:Path``) is refused with a sentence,
uncalled. Naming a module does import it (its top-level code runs, as for any installed package); a
module that exits or raises while importing is a sentence too.

From Python a class, a factory or an instance may be given directly (your own code: no marker needed).

A factory's constructor parameters come from the scenario's ``*_params`` table (``[policy.params]``,
``--policy-param key=value``) and are checked against its signature before the call: an unknown
name, a missing required one or a value of the wrong type (by the annotation, through pydantic) is a
sentence naming it. Besides those, the engine offers some objects by parameter name (a policy's
``placement``, a placement's ``predictor``, a runtime predictor's ``rng``) and the scenario fields a
factory declares it reads (``from_scenario = {parameter: field}``, :func:`torus_sim.experiments.extensions.scenario_fields`):
a factory gets one only when its signature names it. The whole scenario is offered only to a plug-in that
still names ``scenario``, with a warning (deprecated).

References:
    pluggy / pytest (plug-ins found through ``importlib.metadata`` entry points under one group);
    Python Packaging User Guide, "Entry points specification".
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from importlib import metadata
from typing import Generic, TypeVar

from torus_sim.core.errors import ConfigurationError
from torus_sim.inputs.parameters import bind_parameters, call_with_parameters
from torus_sim.inputs.plugin_admission import admit, factory_of, import_object, is_import_path, object_path
from torus_sim.inputs.provenance import (
    BUILT_IN,
    ENTRY_POINT,
    IMPORT_PATH,
    PYTHON_OBJECT,
    PluginInfo,
    distribution_of,
    installed_entry_points,
    source_sha256,
)
from torus_sim.inputs.untrusted import exits_refused, raised_briefly

__all__ = [
    "PluginInfo",
    "Registry",
    "bind_parameters",
    "call_with_parameters",
    "factory_of",
    "import_object",
    "is_import_path",
    "object_path",
]

T = TypeVar("T")


class Registry(Generic[T]):
    """Factories of one kind of extension, by name: built-ins, entry points, import paths.

    Args:
        kind: what the registry holds, for messages ("policy", "placement", ...).
        group: the entry-point group installed packages add to (``torus_sim.policies``), or None.
        base: the class every extension must be an instance of (checked after the factory runs), or None.
    """

    def __init__(self, kind: str, group: str | None = None, base: type | None = None) -> None:
        self.kind = kind
        self.group = group
        self.base = base
        self._factories: dict[str, Callable[..., T]] = {}
        self._aliases: dict[str, tuple[str, str]] = {}  # older name -> (standard name, what it is)

    # -- registration --------------------------------------------------------------------

    def register(self, name: str, factory: Callable[..., T]) -> None:
        """Make ``factory`` selectable as ``name`` (replacing an earlier one of that name)."""
        self._factories[name] = factory

    def alias(self, name: str, target: str, says: str) -> None:
        """Keep ``name`` selectable for the built-in ``target`` (an older or a paper's name for it).

        Args:
            name: the other name (``SJF-EASY``).
            target: a registered built-in's name (``EASY-SJBF``).
            says: one sentence on which it is (the README's policy table and the guide show it; the run's header
                shows ``name (= target)``).

        Raises:
            KeyError: ``target`` is not registered.
        """
        if target not in self._factories:
            raise KeyError(f"{self.kind} alias {name!r} names {target!r}, which is not registered")
        self._aliases[name] = (target, says)

    def aliases(self) -> dict[str, tuple[str, str]]:
        """``{other name: (standard name, what it is)}`` of every alias."""
        return dict(self._aliases)

    def is_builtin(self, spec) -> bool:
        """Whether ``spec`` is the name of a built-in or an alias of one."""
        return isinstance(spec, str) and (spec in self._factories or spec in self._aliases)

    def builtin_names(self) -> list[str]:
        """Names registered in code (the built-ins and any registered at run time), in registration order."""
        return list(self._factories)

    def entry_points(self) -> dict[str, metadata.EntryPoint]:
        """The installed packages' entry points of this registry's group, by name (none loaded; read once per process)."""
        if self.group is None:
            return {}
        return {point.name: point for point in installed_entry_points(self.group)}

    def names(self) -> list[str]:
        """Every selectable name: the built-ins, then the installed plug-ins', sorted within each."""
        builtin = sorted(self._factories)
        return builtin + sorted(name for name in self.entry_points() if name not in self._factories)

    def __contains__(self, name: str) -> bool:
        return name in self._factories or name in self._aliases or name in self.entry_points()

    # -- look-up -------------------------------------------------------------------------

    def resolve(self, spec) -> tuple[Callable[..., T] | T, PluginInfo]:
        """The factory (or instance) that ``spec`` names and where it came from.

        Args:
            spec: a built-in name, an entry-point name, an import path ``package.module:Attribute``, or
                (from Python) a class, a factory or an instance.

        Raises:
            ConfigurationError: nothing of that name, or an import path that does not import.
        """
        if not isinstance(spec, str):
            package, version = distribution_of(spec)
            return spec, PluginInfo(
                self.kind, object_path(spec), PYTHON_OBJECT, object_path(spec), package, version, source_sha256(spec)
            )
        if spec in self._factories:
            factory = self._factories[spec]
            return factory, PluginInfo(self.kind, spec, BUILT_IN, object_path(factory))
        if spec in self._aliases:
            target = self._aliases[spec][0]
            factory = self._factories[target]
            return factory, PluginInfo(self.kind, spec, BUILT_IN, object_path(factory), alias_of=target)
        points = self.entry_points()
        if spec in points:
            point = points[spec]
            try:
                with exits_refused(f"loading entry point {point.value!r}"):
                    factory = point.load()
            except KeyboardInterrupt:
                raise
            except BaseException as error:  # noqa: BLE001 - a broken plug-in (sys.exit at import too) becomes one sentence
                raise ConfigurationError(
                    f"cannot load {self.kind} {spec!r} (entry point {point.value!r} of group {self.group}): {raised_briefly(error)}"
                ) from None
            admit(factory, self.base, self.kind, spec, f"entry point {point.value!r}")
            dist = getattr(point, "dist", None)
            return factory, PluginInfo(
                self.kind,
                spec,
                ENTRY_POINT,
                point.value,
                dist.name if dist else None,
                dist.version if dist else None,
                source_sha256(factory),
            )
        if is_import_path(spec):
            factory = import_object(spec, self.kind)
            admit(factory, self.base, self.kind, spec, "import path")
            package, version = distribution_of(factory)
            return factory, PluginInfo(self.kind, spec, IMPORT_PATH, spec, package, version, source_sha256(factory))
        raise ConfigurationError(self.unknown_message(spec))

    def unknown_message(self, spec: str) -> str:
        """The sentence for a name nothing answers to."""
        plugins = sorted(name for name in self.entry_points() if name not in self._factories)
        installed = f"; installed plug-ins: {', '.join(plugins)}" if plugins else ""
        others = f" (also {', '.join(f'{a} = {t}' for a, (t, _) in sorted(self._aliases.items()))})" if self._aliases else ""
        return (
            f"unknown {self.kind} {spec!r}; choose from {', '.join(sorted(self._factories))}{others}{installed}, "
            "or give an import path package.module:Class"
        )

    def check(self, spec, params: dict | None = None, offered: Iterable[str] = ()) -> None:
        """Raise ConfigurationError when ``spec`` names nothing or ``params`` do not suit its constructor.

        Args:
            spec: see :meth:`resolve` (a plug-in is imported, not built).
            params: the user's constructor parameters, checked by name and annotated type.
            offered: names of the objects the engine will offer (see :meth:`build`).
        """
        factory, info = self.resolve(spec)
        if self.base is not None and isinstance(factory, self.base):
            if params:
                raise ConfigurationError(
                    f"{self.kind} {info.name!r} was given as an instance: it takes no parameters (got {sorted(params)})"
                )
            return
        if self.base is not None and inspect.isclass(factory) and not issubclass(factory, self.base):
            raise ConfigurationError(
                f"{self.kind} {info.name!r} is not a {self.base.__name__}: "
                f"{object_path(factory)} must subclass {self.base.__module__}.{self.base.__name__}"
            )
        if callable(factory):
            bind_parameters(factory, params or {}, dict.fromkeys(offered), f"{self.kind} {info.name!r}")

    def build(self, spec, params: dict | None = None, offered: dict | None = None) -> T:
        """A fresh extension from ``spec`` with ``params`` checked against its signature.

        Args:
            spec: see :meth:`resolve`.
            params: the user's constructor parameters.
            offered: objects the engine offers by parameter name (see the module docstring).

        Returns:
            The extension (an instance given from Python is returned as it is).

        Raises:
            ConfigurationError: see :meth:`resolve` and :func:`call_with_parameters`; or the result is not
                an instance of the registry's base class.
        """
        factory, info = self.resolve(spec)
        what = f"{self.kind} {info.name!r}"
        if self.base is not None and isinstance(factory, self.base):
            if params:
                raise ConfigurationError(f"{what} was given as an instance: it takes no parameters (got {sorted(params)})")
            return factory
        if not callable(factory):
            raise ConfigurationError(f"{what} is neither a class nor a factory (got {type(factory).__name__})")
        if self.base is not None and inspect.isclass(factory) and not issubclass(factory, self.base):
            raise ConfigurationError(
                f"{what} is not a {self.base.__name__}: {object_path(factory)} must subclass {self.base.__module__}.{self.base.__name__}"
            )
        made = call_with_parameters(factory, params or {}, offered or {}, what)
        if self.base is not None and not isinstance(made, self.base):
            raise ConfigurationError(f"{what} made a {type(made).__name__}, not a {self.base.__name__}")
        return made

    def make(self, name: str, **kwargs) -> T:
        """Build the extension registered as ``name`` with ``kwargs`` (no signature filtering).

        Raises:
            ConfigurationError: no extension has that name.
        """
        factory, _ = self.resolve(name)
        return factory(**kwargs)

    def info(self, spec) -> PluginInfo:
        """Where ``spec`` comes from (see :class:`PluginInfo`)."""
        return self.resolve(spec)[1]

    def iter_plugins(self) -> Iterable[str]:
        """Names of installed plug-ins (entry points) not shadowed by a built-in."""
        return (name for name in self.entry_points() if name not in self._factories)
