"""The compiled reservation kernels' cache: which are not compiled yet for this installation, a notice while they compile.

Conservative backfilling and R-LIST-Q keep their reservation profiles in numba-compiled kernels
(:mod:`~torus_sim.policies.count_reservations` on a cluster, :mod:`~torus_sim.policies.partition_steps` on a
torus). numba compiles a kernel at its first call and keeps the machine code in its cache (``cache=True``: the
package's ``__pycache__``, or ``NUMBA_CACHE_DIR``); every later process loads it. A fresh installation (a CI job,
a Dask worker's image, a notebook server) therefore pays the compilation once: ten to thirty seconds on two cores,
where a warm run of the same jobs takes one or two. :func:`watch` has numba tell us when it really compiles one of
these kernels (its ``numba:compile`` event, which a kernel loaded from the cache does not raise), and the first such
compile of a process is announced as a warning the command line prints (``torus-sim: warning: compiling ...``);
``torus-sim compile`` (:mod:`torus_sim.interfaces.commands.compile`) compiles them all ahead of time, and
:func:`cold_kernels` tells which are still missing from the cache.

References:
    numba's documentation, "Notes on caching" (the cache's location, its invalidation by the source file's stamp),
    and ``numba.core.event`` (the compile event).
"""

from __future__ import annotations

import warnings
from types import ModuleType

__all__ = ["CompileNotice", "KERNEL_MODULES", "cold_kernels", "watch"]

KERNEL_MODULES = ("torus_sim.policies.count_reservations", "torus_sim.policies.partition_steps")
"""The modules whose kernels are compiled (imported only where numba is installed)."""

_WATCHING: list = []  # the listener once registered (one per process)


class CompileNotice(UserWarning):
    """A run is compiling reservation kernels (once per installation): it takes longer than the next one will."""


def cold_kernels(module: ModuleType) -> list[str]:
    """The names of ``module``'s cached kernels that have nothing in numba's cache yet (or only for an older source).

    Args:
        module: a module of :data:`KERNEL_MODULES`.

    Returns:
        Kernel names, in the module's order; [] where numba's cache cannot be read.
    """
    cold = []
    for name, value in vars(module).items():
        cache = getattr(value, "_cache", None)
        if cache is None or not hasattr(value, "py_func") or getattr(value, "signatures", None):
            continue  # not a cached dispatcher, or already compiled or loaded in this process
        try:
            index = cache._cache_file._load_index()  # {} when absent or made for another version of the source
        except Exception:  # noqa: BLE001 - numba's private cache API: where it changed, say nothing rather than fail
            continue
        if not index:
            cold.append(name)
    return cold


def watch() -> None:
    """Warn at the first real compile of a kernel of :data:`KERNEL_MODULES` in this process (a no-op after the first call).

    The warning is raised from numba's ``numba:compile`` event as the compile starts, so a run says what it is doing
    before the seconds it takes; kernels loaded from the cache raise no event and no warning. Where numba's event API
    is missing, nothing is announced.
    """
    if _WATCHING:
        return
    try:
        from numba.core import event
    except ImportError:
        _WATCHING.append(None)
        return

    class _FirstCompile(event.Listener):
        def __init__(self) -> None:
            self.said = False

        def on_start(self, happening) -> None:
            if self.said:
                return
            dispatcher = (happening.data or {}).get("dispatcher")
            module = getattr(getattr(dispatcher, "py_func", None), "__module__", "")
            if module in KERNEL_MODULES:
                self.said = True
                warnings.warn(
                    CompileNotice(
                        "compiling the reservation kernels for this installation: once, seconds to a minute; later runs "
                        "load them (torus-sim compile does it ahead of time)"
                    ),
                    stacklevel=2,
                )

        def on_end(self, happening) -> None:
            pass

    listener = _FirstCompile()
    event.register("numba:compile", listener)
    _WATCHING.append(listener)
