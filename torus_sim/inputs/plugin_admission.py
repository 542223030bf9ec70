"""What a name from data may select, checked before anything is called: the admission of plug-ins.

A scenario, a sweep or machine file, a command-line option or the browser may name an extension by an
entry point or an import path ``package.module:Attribute``. What that name resolves to is admitted only
if it is a class of the registry's base, an instance of it, or a function its author marked with
:func:`factory_of`; anything else (``os:system``, ``builtins:exec``, ``pathlib:Path``) is refused with a
sentence, uncalled. Importing the named module does run its top-level code (as for any installed package);
a module that exits or raises while importing is a sentence too.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable

from torus_sim.core.errors import ConfigurationError
from torus_sim.inputs.untrusted import exits_refused, raised_briefly

__all__ = ["FACTORY_MARK", "admit", "factory_of", "import_object", "is_import_path", "object_path", "what_it_is"]


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


def what_it_is(obj) -> str:
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


def admit(obj, base: type | None, kind_name: str, spec: str, how: str) -> None:
    """Refuse, uncalled, what a name from data resolved to unless it is of this registry's kind.

    Admitted: a class that subclasses :attr:`base`, an instance of it, or a function marked with
    :func:`factory_of` for it (or a subclass). Without a base, any class or marked function.

    Args:
        obj: what the name resolved to (not yet called).
        base: the kind's base class, or None (any class or marked function).
        kind_name: the registry's kind, for the sentence ("policy", "placement", ...).
        spec: the name as given.
        how: how it was found (``import path``, ``entry point 'pkg.mod:Class'``).

    Raises:
        ConfigurationError: anything else (``os:system``, ``builtins:exec``, ``pathlib:Path``, ...).
    """
    if inspect.isclass(obj):
        if base is None or issubclass(obj, base):
            return
    elif base is not None and isinstance(obj, base):
        return
    elif inspect.isfunction(obj):
        marked = getattr(obj, FACTORY_MARK, None)
        if inspect.isclass(marked) and (base is None or issubclass(marked, base)):
            return
    kind = base.__name__ if base is not None else kind_name
    where = f"{base.__module__}.{base.__name__}" if base is not None else "the kind's base"
    if inspect.isclass(obj):
        raise ConfigurationError(
            f"{kind_name} {spec!r} is not a {kind}: {object_path(obj)} must subclass {where} (nothing was called)"
        )
    raise ConfigurationError(
        f"{kind_name} {spec!r} ({how}) is {what_it_is(obj)}, not a {kind}: a name in a scenario may only "
        f"select a class that subclasses {where} or a function marked @factory_of({kind}); nothing was called"
    )
