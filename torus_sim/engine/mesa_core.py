"""Mesa's model, agents and discrete-event simulator, imported without the rest of Mesa.

``import mesa`` runs the package's ``__init__``, which imports every part of Mesa: the batch runner
and the data collector (pandas, tqdm), the spaces (scipy.spatial, networkx) and the experimental
modules. A run needs three of them: :class:`mesa.model.Model`, :class:`mesa.agent.Agent` and
:class:`mesa.experimental.devs.DEVSimulator` (with its ``EventList``), whose own imports are numpy and the
standard library.
Before the first job that was 128 MiB of imports for three modules (issue 61 §3).

This module registers the ``mesa`` and ``mesa.experimental`` packages with their ``__init__`` not yet
run and imports the three modules under them. The packages stay complete for everyone else: the first
time a name of the package is read (``mesa.DataCollector``, ``from mesa import batch_run``), the
package's ``__init__`` runs in the same module object, as ``import mesa`` would have run it. Importing
a submodule (``import mesa.visualization``) works as always. If Mesa is already imported, nothing is
done. Nothing here depends on Mesa's internals beyond its package layout (``mesa/agent.py``,
``mesa/model.py``, ``mesa/experimental/devs/``), which Mesa 3 documents as its public modules, and
``mesa.mesa_logging``'s two readers of the stack: while ``mesa.model`` is imported, an unnamed logger
is named after its caller's module from the calling frame, and ``method_logger`` reads the outer frames
without their source lines (Mesa reads the source of every frame of the stack for each), then Mesa's
function and module are put back.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys

__all__ = ["Agent", "DEVSimulator", "EventList", "Model", "Priority", "SimulationEvent"]


def _package_shell(name: str) -> None:
    """Register package ``name`` with its ``__init__`` deferred to the first read of a name it defines.

    Submodules import under the shell as under the package; the first attribute the shell lacks runs
    the package's ``__init__`` in the shell (so it becomes the package) and is then read from it.
    """
    if name in sys.modules:
        return
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        importlib.import_module(name)  # not a plain package: import it as usual
        return
    package = importlib.util.module_from_spec(spec)
    state = {"done": False}

    def complete(attribute: str):
        if attribute.startswith("__") or state["done"]:  # probes such as __file__ / __path__ before loading
            raise AttributeError(f"module {name!r} has no attribute {attribute!r}")
        state["done"] = True
        del package.__getattr__
        spec.loader.exec_module(package)
        return getattr(package, attribute)

    package.__getattr__ = complete
    sys.modules[name] = package
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(sys.modules[parent], child, package)


def _caller_module_logger(create):
    """Mesa's ``create_module_logger`` naming an unnamed logger after its caller's module from the calling frame.

    Mesa names it from ``inspect.stack()``, which reads the source of every frame on the stack: 40-70 ms
    of the README's main job, under the import chain of a run. The caller's ``__name__`` is the name
    ``inspect.getmodule`` finds there; the logger is the same ``logging`` object.
    """

    def create_module_logger(name=None):
        return create(sys._getframe(1).f_globals["__name__"] if name is None else name)

    return create_module_logger


class _SourcelessFrames:
    """``inspect`` as ``mesa.mesa_logging`` reads it while ``mesa.model`` is imported, without reading source files.

    ``method_logger`` (on ``Model.__init__``) names the decorated method's class from
    ``inspect.getouterframes(inspect.currentframe())[1][3]``: the calling frame's function name, read
    with the source lines of every frame of the import chain around it (another 10-20 ms of the
    README's main job). Here the outer frames are tuples of frame, file, line and function, with no
    source lines (``inspect.getouterframes`` with ``context=0`` would still look up each frame's
    module); every other name is ``inspect``'s.
    """

    def __getattr__(self, name: str):
        return getattr(inspect, name)

    @staticmethod
    def getouterframes(frame, context: int = 1) -> list[tuple]:
        frames = []
        while frame is not None:
            code = frame.f_code
            frames.append((frame, code.co_filename, frame.f_lineno, code.co_name, None, None))
            frame = frame.f_back
        return frames


_package_shell("mesa")
_package_shell("mesa.experimental")

from mesa.agent import Agent  # noqa: E402  (after the shells: these import no other part of Mesa)
from mesa.experimental.devs import DEVSimulator, Priority, SimulationEvent  # noqa: E402
from mesa.experimental.devs.eventlist import EventList  # noqa: E402

if "mesa.model" not in sys.modules:  # mesa.model names its logger at import: from its frame, not from the stack
    _logging = importlib.import_module("mesa.mesa_logging")  # not `from mesa import`: the shell's attribute runs Mesa's __init__
    _create, _inspect = _logging.create_module_logger, _logging.inspect
    _logging.create_module_logger, _logging.inspect = _caller_module_logger(_create), _SourcelessFrames()
    try:
        from mesa.model import Model
    finally:
        _logging.create_module_logger, _logging.inspect = _create, _inspect
else:
    from mesa.model import Model
