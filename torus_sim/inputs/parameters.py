"""An extension's constructor parameters, checked against its signature before it is called.

A scenario's ``[policy.params]`` (``--policy-param key=value``) and the other kinds' tables go to the
extension's constructor; :func:`bind_parameters` checks them first (an unknown name, a missing
required one, a value of the wrong type by the annotation, through pydantic) and adds the objects the
engine offers by parameter name (a policy's ``placement``, a source's ``argument``).
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from typing import Any

from torus_sim.core.errors import ConfigurationError
from torus_sim.inputs.untrusted import exits_refused, raised_briefly

__all__ = ["bind_parameters", "call_with_parameters"]


def _type_hints(factory) -> dict:
    target = factory.__init__ if inspect.isclass(factory) else factory
    try:
        return typing.get_type_hints(target)
    except Exception:  # noqa: BLE001 - an annotation that cannot be evaluated is simply not checked
        return {}


def bind_parameters(factory: Callable, params: dict, offered: dict, what: str) -> dict:
    """The keyword arguments to call ``factory`` with: the user's ``params`` checked against its signature, plus offered objects it names.

    Args:
        factory: a class or a function.
        params: the user's parameters (names -> values).
        offered: objects the engine offers by parameter name (given only when the signature names them
            and ``params`` does not).
        what: e.g. ``policy 'pkg.mod:MySjf'``, for messages.

    Returns:
        Keyword arguments (values converted to the annotated types where pydantic can).

    Raises:
        ConfigurationError: an unknown parameter, a missing required one, or a value of the wrong type.
    """
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):
        return dict(params)
    arguments = dict(params)
    parameters = signature.parameters
    open_keywords = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
    named = {name: p for name, p in parameters.items() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.POSITIONAL_ONLY)}
    unknown = [name for name in params if name not in named and not open_keywords]
    if unknown:
        takes = ", ".join(name for name in named if name not in offered) or "none"
        raise ConfigurationError(f"{what} has no parameter {unknown[0]!r} (its parameters: {takes})")
    hints = _type_hints(factory)
    for name, value in params.items():
        if name in hints and hints[name] is not Any:
            arguments[name] = _checked(value, hints[name], name, what)
    for name in named:
        if name in offered and name not in arguments:
            arguments[name] = offered[name]
    missing = [name for name, p in named.items() if p.default is inspect.Parameter.empty and name not in arguments]
    if missing:
        raise ConfigurationError(f"{what} needs parameter {missing[0]!r} (give it in its params table or with --*-param)")
    return arguments


def call_with_parameters(factory: Callable, params: dict, offered: dict, what: str):
    """Call ``factory`` with :func:`bind_parameters`'s arguments.

    Returns:
        What the factory returns.

    Raises:
        ConfigurationError: see :func:`bind_parameters`; or the factory raised or exited (its message kept).
        KeyboardInterrupt: Ctrl-C while it ran.
    """
    arguments = bind_parameters(factory, params, offered, what)
    try:
        with exits_refused(f"building {what}"):
            return factory(**arguments)
    except (ConfigurationError, KeyboardInterrupt):
        raise
    except BaseException as error:  # noqa: BLE001 - a plug-in's constructor failing (or exiting) becomes one sentence
        raise ConfigurationError(f"{what} could not be built: {raised_briefly(error)}") from None


STRICT_ANNOTATIONS = (bool, bool | None)
"""Parameter types checked without conversion: pydantic's lax mode reads ``"yes"``, ``1`` or ``"off"`` as a
bool, so a switch written as text or a number would silently mean something; it must be ``true`` / ``false``."""


def _checked(value, annotation, name: str, what: str):
    from pydantic import TypeAdapter, ValidationError

    try:
        adapter = TypeAdapter(annotation)
    except Exception:  # noqa: BLE001 - an annotation pydantic cannot check is not checked
        return value
    try:
        return adapter.validate_python(value, strict=annotation in STRICT_ANNOTATIONS)
    except ValidationError as error:
        problem = error.errors()[0]["msg"] if error.errors() else str(error)
        raise ConfigurationError(f"{what}: parameter {name!r} = {value!r}: {problem}") from None
