"""Selection of extension points by name: built-ins, installed packages' entry points, import paths.

One :class:`Registry` per kind of extension (scheduling policies, placements, failure predictors,
runtime predictors). A scenario names an extension in one of three ways, tried in this order:

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
``placement``, a placement's ``predictor``, a runtime predictor's ``rng``, the ``scenario``): a
factory gets one only when its signature names it.

References:
    pluggy / pytest (plug-ins found through ``importlib.metadata`` entry points under one group);
    Python Packaging User Guide, "Entry points specification".
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from functools import lru_cache
from importlib import metadata
from typing import Generic, TypeVar

from torus_sim.errors import ConfigurationError
from torus_sim.input_source import file_head
from torus_sim.parameters import bind_parameters, call_with_parameters
from torus_sim.untrusted import exits_refused, raised_briefly

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


def is_import_path(spec: str) -> bool:
    """Whether ``spec`` reads as ``package.module:Attribute`` (a colon after a dotted module name)."""
    module, sep, attribute = spec.partition(":")
    return (
        bool(sep)
        and bool(attribute)
        and all(part.isidentifier() for part in module.split("."))
        and all(part.isidentifier() for part in attribute.split("."))
    )


FACTORY_MARK = "__torus_sim_factory_of__"
"""The attribute :func:`factory_of` sets on a function: the base class of what it makes."""


def factory_of(base: type) -> Callable[[Callable], Callable]:
    """Mark a function as a factory of ``base`` instances, so that a scenario may name it.

    A scenario (or an entry point) may name a class of the registry's base, or a function marked
    so; a name that resolves to anything else is refused before it is called. The registry still
    checks what the function returns.

    Args:
        base: the kind's base class (``Policy``, ``PlacementPolicy``, ``FailurePredictor``,
            ``RuntimePredictor``).

    Returns:
        A decorator that returns the function unchanged but marked.

    Example:
        ``@factory_of(Policy)`` above ``def make_policy(threshold: float = 0.5) -> Policy: ...``

    References:
        docs/policies/README.md, "What a scenario file can do".
    """
    if not inspect.isclass(base):
        raise TypeError(f"factory_of takes the base class of what the function makes, got {base!r}")

    def mark(function: Callable) -> Callable:
        setattr(function, FACTORY_MARK, base)
        return function

    return mark


def import_object(spec: str, kind: str = "extension"):
    """The object an import path ``package.module:Attribute`` names (the module is imported; nothing is called).

    Args:
        spec: the import path (the attribute may be dotted: ``mod:Outer.Inner``).
        kind: what it is for, for messages.

    Returns:
        The object.

    Raises:
        ConfigurationError: the module cannot be imported (with Python's reason, a ``sys.exit`` or an
            ``os._exit`` of its top-level code included) or has no such attribute.
        KeyboardInterrupt: Ctrl-C during the import.
    """
    module_name, _, attribute = spec.partition(":")
    try:
        with exits_refused(f"importing {module_name!r}"):
            obj = importlib.import_module(module_name)
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # noqa: BLE001 - any import failure of user code (SystemExit too) becomes one sentence
        raise ConfigurationError(
            f"cannot import {kind} {spec!r}: importing {module_name!r} failed: {raised_briefly(error)}"
        ) from None
    for part in attribute.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ConfigurationError(f"cannot import {kind} {spec!r}: {module_name!r} has no attribute {attribute!r}") from None
    return obj


def _what_it_is(obj) -> str:
    """``a builtin function``, ``the class pathlib.Path``, ``an int``: for the refusal sentence."""
    if inspect.isclass(obj):
        return f"the class {obj.__module__}.{obj.__qualname__}"
    if inspect.ismodule(obj):
        return f"the module {obj.__name__}"
    if inspect.isbuiltin(obj):
        return f"the built-in function {getattr(obj, '__module__', None) or 'builtins'}.{obj.__name__}"
    if inspect.isroutine(obj):
        return f"the function {getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', '?')}"
    name = type(obj).__name__
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"


def object_path(obj) -> str:
    """``module:qualname`` of a class or function (of an instance: of its class)."""
    target = obj if inspect.isclass(obj) or inspect.isroutine(obj) else type(obj)
    return f"{getattr(target, '__module__', '?')}:{getattr(target, '__qualname__', type(target).__name__)}"


@lru_cache(maxsize=256)
def _file_sha256(path: str) -> str | None:
    try:
        with open(path, "rb") as handle:
            return hashlib.sha256(handle.read()).hexdigest()
    except OSError:
        return None


def _source_sha256(obj) -> str | None:
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
def _entry_points(group: str) -> tuple:
    """The installed entry points of a group (read once per process)."""
    return tuple(metadata.entry_points(group=group))


def _distribution_of(obj) -> tuple[str | None, str | None]:
    """(distribution name, version) that provides the module of ``obj``, or (None, None)."""
    top = object_path(obj).split(":")[0].split(".")[0]
    names = _packages().get(top, [])
    for name in names:
        try:
            return name, metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return None, None


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
        self._selections: dict[str, tuple] = {}  # input specifications already selected (select is pure per text)

    # -- registration --------------------------------------------------------------------

    def register(self, name: str, factory: Callable[..., T]) -> None:
        """Make ``factory`` selectable as ``name`` (replacing an earlier one of that name)."""
        self._factories[name] = factory
        self._selections.clear()

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
        self._selections.clear()

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
        return {point.name: point for point in _entry_points(self.group)}

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
            package, version = _distribution_of(spec)
            return spec, PluginInfo(
                self.kind, object_path(spec), PYTHON_OBJECT, object_path(spec), package, version, _source_sha256(spec)
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
            self._admit(factory, spec, f"entry point {point.value!r}")
            dist = getattr(point, "dist", None)
            return factory, PluginInfo(
                self.kind,
                spec,
                ENTRY_POINT,
                point.value,
                dist.name if dist else None,
                dist.version if dist else None,
                _source_sha256(factory),
            )
        if is_import_path(spec):
            factory = import_object(spec, self.kind)
            self._admit(factory, spec, "import path")
            package, version = _distribution_of(factory)
            return factory, PluginInfo(self.kind, spec, IMPORT_PATH, spec, package, version, _source_sha256(factory))
        raise ConfigurationError(self.unknown_message(spec))

    def _admit(self, obj, spec: str, how: str) -> None:
        """Refuse, uncalled, what a name from data resolved to unless it is of this registry's kind.

        Admitted: a class that subclasses :attr:`base`, an instance of it, or a function marked with
        :func:`factory_of` for it (or a subclass). Without a base, any class or marked function.

        Raises:
            ConfigurationError: anything else (``os:system``, ``builtins:exec``, ``pathlib:Path``, ...).
        """
        base = self.base
        if inspect.isclass(obj):
            if base is None or issubclass(obj, base):
                return
        elif base is not None and isinstance(obj, base):
            return
        elif inspect.isfunction(obj):
            marked = getattr(obj, FACTORY_MARK, None)
            if inspect.isclass(marked) and (base is None or issubclass(marked, base)):
                return
        kind = base.__name__ if base is not None else self.kind
        where = f"{base.__module__}.{base.__name__}" if base is not None else "the kind's base"
        if inspect.isclass(obj):
            raise ConfigurationError(
                f"{self.kind} {spec!r} is not a {kind}: {object_path(obj)} must subclass {where} (nothing was called)"
            )
        raise ConfigurationError(
            f"{self.kind} {spec!r} ({how}) is {_what_it_is(obj)}, not a {kind}: a name in a scenario may only "
            f"select a class that subclasses {where} or a function marked @factory_of({kind}); nothing was called"
        )

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

    def select(self, spec) -> tuple[Callable[..., T] | T, PluginInfo, str | None]:
        """The factory an input specification selects and the argument it carries.

        For registries of inputs (workload and failure sources), whose specifications are short texts:

        1. a name (``rigid``, ``none``, an installed plug-in's);
        2. ``name:argument`` where the name's factory declares ``takes_argument = True``
           (``moldable:mix``, ``synthetic:4000:bursty``, ``refcode:jobs.txt``);
        3. an import path ``package.module:Class``;
        4. a file: the factory whose ``suffixes`` end the file's name, else the first whose ``sniff(head)``
           accepts the file's first 4 KiB (decompressed), else the one that declares ``fallback = True``.

        Args:
            spec: the specification (or, from Python, a class, a factory or an instance).

        Returns:
            ``(factory, where it came from, argument)``: the argument is the text after ``name:``, the
            file's path for a file, None otherwise.

        Raises:
            ConfigurationError: a name that needs an argument without one, an import path that does
                not select a factory of this kind, or a file no factory reads (naming the suffixes known).
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

    def iter_plugins(self) -> Iterable[str]:
        """Names of installed plug-ins (entry points) not shadowed by a built-in."""
        return (name for name in self.entry_points() if name not in self._factories)
