"""Calling code torus-sim does not trust: what it raised, in a few words, and exits refused while it runs.

The foundation of the plug-in guard (the engine's :mod:`torus_sim.engine.guard` and the wrappers of
:mod:`torus_sim.policies.guarded_extensions` build on it); the registry uses it while it imports a plug-in's module
or builds a plug-in:

* :func:`raised_text`: an exception from plug-in code as the end of a sentence, with the plug-in's own line;
* :func:`exits_refused`: ``os._exit`` raises :class:`ExitCalled` in the thread that runs guarded code;
* :class:`ExtensionFailure`: a nested extension (a placement, a failure predictor) failed;
* :class:`PassTimeout`: the wall-clock limit of a pass ran out (raised into the running thread);
* :func:`is_builtin_extension`, :func:`extension_name`: whether an extension is torus-sim's own, and its name.

References:
    docs/policies/README.md, "What a plug-in may do, and what happens when it misbehaves".
"""

from __future__ import annotations

import os
import threading
from contextlib import contextmanager
from pathlib import Path

__all__ = [
    "ExitCalled",
    "ExtensionFailure",
    "PassTimeout",
    "exits_refused",
    "extension_name",
    "is_builtin_extension",
    "raised_briefly",
    "raised_text",
]

_OWN_PACKAGES = frozenset({"torus_sim", "predictors", "agents", "failure_logs"})
_OWN_FOLDERS = tuple(str(Path(__file__).resolve().parents[2] / package) + os.sep for package in sorted(_OWN_PACKAGES))


def is_builtin_extension(obj) -> bool:
    """Whether ``obj`` (an extension instance) is one of torus-sim's own classes, not a plug-in's (nor a plug-in's guarded wrapper)."""
    if getattr(type(obj), "guards_plugin", False):
        return False
    module = getattr(type(obj), "__module__", "") or ""
    return module.split(".")[0] in _OWN_PACKAGES


def extension_name(obj) -> str:
    """An extension's name for messages: its ``name`` when that is text and its own, else its class's name.

    A plug-in that inherits the base class's placeholder (``name = "base"`` of ``FailurePredictor``)
    is named by its class (``WrongShape``), so that the message says which plug-in failed.
    """
    name = getattr(obj, "name", None)
    if not isinstance(name, str) or not name:
        return type(obj).__name__
    if not is_builtin_extension(obj) and "name" not in getattr(obj, "__dict__", {}):
        defining = next((klass for klass in type(obj).__mro__ if "name" in vars(klass)), None)
        if defining is not None and defining.__module__.split(".")[0] in _OWN_PACKAGES:
            return type(obj).__name__
    return name


class ExtensionFailure(Exception):
    """A nested extension (a placement, a failure predictor) failed inside the code that called it.

    Raised by the guarded wrappers of :mod:`torus_sim.policies.guarded_extensions`; the engine's guard turns it
    into the PolicyError that names the nested extension rather than the policy that called it.

    Args:
        kind: ``placement`` or ``failure predictor``.
        reason: what happened (``choose raised ValueError: ...``, ``supernode_probabilities returned ...``).
    """

    def __init__(self, kind: str, reason: str) -> None:
        self.kind = kind
        self.reason = reason
        super().__init__(f"{kind}: {reason}")


class ExitCalled(BaseException):
    """``os._exit(code)`` was called by extension code while it was guarded (see :func:`exits_refused`).

    Args:
        code: the exit code it asked for.
        where: what was running (``importing 'my_module'``, ``the run``).
    """

    def __init__(self, code, where: str) -> None:
        self.code = code
        self.where = where
        super().__init__(f"called os._exit({code!r})")


class PassTimeout(BaseException):
    """A scheduling pass ran longer than its wall-clock limit (raised into the running thread by :class:`PassWatchdog`).

    A ``BaseException``, so that a plug-in's ``except Exception`` does not swallow it.
    """


def raised_text(error: BaseException) -> str:
    """What extension code raised, as the end of a sentence: ``raised ZeroDivisionError: oops (at my_policies.py:6)``.

    Args:
        error: the exception (``SystemExit`` and :class:`ExitCalled` read as the call they were).

    Returns:
        The words, with the innermost frame of the code that raised it.
    """
    import traceback

    frames = traceback.extract_tb(error.__traceback__)
    theirs = [frame for frame in frames if not frame.filename.startswith(_OWN_FOLDERS)]  # the plug-in's own line
    frame = (theirs or frames)[-1] if frames else None
    where = f" (at {frame.filename}:{frame.lineno})" if frame is not None else ""
    if isinstance(error, ExitCalled):
        return f"{error}{where}; a plug-in ends a run by raising an exception"
    if isinstance(error, SystemExit):
        return f"called sys.exit({error.code!r}){where}; a plug-in ends a run by raising an exception"
    return f"raised {type(error).__name__}: {error}{where}"


def raised_briefly(error: BaseException) -> str:
    """What a plug-in's module or constructor raised, in a few words: ``ValueError: bad``, ``it called sys.exit(3)``."""
    if isinstance(error, ExitCalled):
        return f"it {error}"
    if isinstance(error, SystemExit):
        return f"it called sys.exit({error.code!r})"
    return f"{type(error).__name__}: {error}"


# -- os._exit ----------------------------------------------------------------------------------

_exit_lock = threading.Lock()
_exit_guarded: dict[int, str] = {}  # thread ident -> what runs guarded in it
_real_exit = os._exit
_exit_pid: int | None = None


def _refusing_exit(code) -> None:
    """``os._exit`` while guarded code runs: raise :class:`ExitCalled` in that thread; elsewhere exit as asked."""
    where = _exit_guarded.get(threading.get_ident())
    if where is not None and os.getpid() == _exit_pid:
        raise ExitCalled(code, where)
    _real_exit(code)


@contextmanager
def exits_refused(where: str):
    """Within the block, ``os._exit`` called from this thread raises :class:`ExitCalled` instead of ending the process.

    ``os._exit`` is replaced while any thread is in such a block and restored after the last one
    leaves; other threads and forked children exit as usual. Only calls made through the ``os``
    module (``os._exit(0)``) or bound while the block runs (``from os import _exit`` at a plug-in's
    import) are caught; a C extension's ``_exit`` is not.

    Args:
        where: what runs (for the message): ``importing 'my_module'``, ``the run``.
    """
    global _exit_pid
    ident = threading.get_ident()
    with _exit_lock:
        previous = _exit_guarded.get(ident)
        _exit_guarded[ident] = where
        if os._exit is not _refusing_exit:
            _exit_pid = os.getpid()
            os._exit = _refusing_exit
    try:
        yield
    finally:
        with _exit_lock:
            if previous is None:
                _exit_guarded.pop(ident, None)
            else:
                _exit_guarded[ident] = previous
            if not _exit_guarded and os._exit is _refusing_exit:
                os._exit = _real_exit
