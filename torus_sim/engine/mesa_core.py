"""Mesa's model, agents and discrete-event simulator, imported without the rest of Mesa.

``import mesa`` runs the package's ``__init__``, which imports every part of Mesa: the batch runner
and the data collector (pandas, tqdm), the spaces (scipy.spatial, networkx) and the experimental
modules. A run needs three of them: :class:`mesa.model.Model`, :class:`mesa.agent.Agent` and
:class:`mesa.experimental.devs.DEVSimulator`, whose own imports are numpy and the standard library.
Before the first job that was 128 MiB of imports for three modules (issue 61 §3).

This module registers the ``mesa`` and ``mesa.experimental`` packages with their ``__init__`` not yet
run and imports the three modules under them. The packages stay complete for everyone else: the first
time a name of the package is read (``mesa.DataCollector``, ``from mesa import batch_run``), the
package's ``__init__`` runs in the same module object, as ``import mesa`` would have run it. Importing
a submodule (``import mesa.visualization``) works as always. If Mesa is already imported, nothing is
done. Nothing here depends on Mesa's internals beyond its package layout (``mesa/agent.py``,
``mesa/model.py``, ``mesa/experimental/devs/``), which Mesa 3 documents as its public modules.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys

__all__ = ["Agent", "DEVSimulator", "Model", "Priority", "SimulationEvent"]


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


_package_shell("mesa")
_package_shell("mesa.experimental")

from mesa.agent import Agent  # noqa: E402  (after the shells: these import no other part of Mesa)
from mesa.experimental.devs import DEVSimulator, Priority, SimulationEvent  # noqa: E402
from mesa.model import Model  # noqa: E402
