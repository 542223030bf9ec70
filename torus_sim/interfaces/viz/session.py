"""What a browser session of the view holds, and how it is freed when Solara closes the session.

A view people leave open for weeks on a shared host must not grow with every visitor (issue 44 §1).
Solara closes a session's virtual kernel once its tab has been gone for the cull timeout (``torus-sim
viz --cull-timeout``); what the session held must then be collectable. Two things kept it alive in
Solara 1.58.2 with Mesa 3.3.1's SolaraViz (found with a gc-referrer walk on a live server):

* Mesa's ``ModelController`` calls ``solara.lab.use_task`` at each mount. Solara wraps each task in a
  ``Singleton`` whose constructor registers a reset hook in the process-wide list
  ``solara.lifecycle._on_kernel_start_callbacks`` and drops the hook's cleanup, so the list pins the
  task, its closure, the session's model reactive and the model (~15 MB on the 4x4x8 torus) forever;
  every later session start also calls each stale hook. Solara fixed this upstream (widgetti/solara
  pull request 1180, released after 1.58.2, the newest version solara-assets serves offline).
* The model's reactive lives in a shared store, not in the kernel's own state.

:func:`use_session_release` undoes both when the session's page unmounts at kernel close: it empties
the session's model (:func:`release_model`) and removes, through the cleanup Solara itself returns,
the hooks that were registered during a render and that no live session uses
(:func:`drop_stale_task_hooks`). ``benchmarks/viz_memory.py`` measures the server's memory over 50
sessions; tests/test_app.py proves the models freed.
"""

from __future__ import annotations

import functools
import gc
import typing

import solara
import solara.server.kernel_context

__all__ = ["drop_stale_task_hooks", "release_model", "return_free_memory", "use_session_release"]


def release_model(model: typing.Any) -> None:
    """Empty a closed session's model: its agents leave Mesa's registries and its attributes are dropped.

    Args:
        model: a :class:`torus_sim.interfaces.viz.app.VizModel` (or any Mesa model), or None.

    After the call the object is an empty shell: whatever still refers to it (a closure Solara keeps)
    holds a few hundred bytes instead of the engine's state, the record and the charts.
    """
    if model is None:
        return
    remove = getattr(model, "remove_all_agents", None)
    if callable(remove):
        try:
            remove()
        except Exception:  # noqa: BLE001  (a half-built model: its attributes are dropped below all the same)
            pass
    vars(model).clear()


def _hook_storage_key(entry) -> str | None:
    """The kernel-store key of the ``Singleton`` a lifecycle hook resets, or None for any other hook."""
    for cell in entry.callback.__closure__ or ():
        try:
            owner = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        storage = getattr(owner, "_storage", None)
        key = getattr(storage, "storage_key", None)
        if isinstance(key, str):
            return key
    return None


def drop_stale_task_hooks(closing: typing.Any = None) -> int:
    """Remove the lifecycle hooks that a render registered and that no live session uses.

    A hook registered at import time names its module (``callpoint``); one registered during a
    render (Solara's ``use_task``) names none. Such a hook is dropped when its task's value is in no
    live kernel other than ``closing``, by calling the cleanup Solara returned for it.

    Args:
        closing: the kernel context being closed (its values do not count as live), or None.

    Returns:
        The number of hooks removed.
    """
    import solara.lifecycle
    import solara.server.kernel_context as kernel_context

    used = set()
    for context in list(kernel_context.contexts.values()):
        if context is not closing and not context.closed_event.is_set():
            used.update(context.user_dicts.keys())
    removed = 0
    for entry in list(solara.lifecycle._on_kernel_start_callbacks):
        if entry.callpoint is not None or entry.module is not None:
            continue
        key = _hook_storage_key(entry)
        if key is None or key in used:
            continue
        try:
            entry.cleanup()
        except ValueError:  # removed meanwhile by another closing session
            continue
        removed += 1
    return removed


@functools.cache
def _malloc_trim():
    """The C library's ``malloc_trim`` (glibc), looked up once (``find_library`` runs a subprocess), or None elsewhere."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    if not name:
        return None
    try:
        return ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None


def return_free_memory() -> bool:
    """Hand the C allocator's free pages back to the system (glibc's ``malloc_trim``), where there is one.

    The engine's arrays and a session's charts are freed when the session closes, but glibc keeps the
    freed pages in its arenas (one per thread that allocated; Solara runs each session's work in
    threads), so the server's resident memory would not show the release. Elsewhere a no-op.

    Returns:
        True when memory was trimmed.
    """
    trim = _malloc_trim()
    return bool(trim(0)) if trim is not None else False


def use_session_release(models: typing.Callable[[], typing.Iterable[typing.Any]]) -> None:
    """Free what this session holds when its page unmounts (the kernel's close): its models and stale task hooks.

    Args:
        models: returns the session's models at close (a page's current ones: Mesa's Reset and a
            change of pair replace them).
    """

    def mount():
        def unmount():
            try:
                closing = solara.server.kernel_context.get_current_context()
            except Exception:  # noqa: BLE001  (no current context: every kernel's values count as live)
                closing = None
            for model in list(models()):
                release_model(model)
            drop_stale_task_hooks(closing)
            gc.collect()
            return_free_memory()

        return unmount

    solara.use_effect(mount, dependencies=[])
