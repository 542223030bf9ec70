"""The browser view's memory over many sessions (``python -m benchmarks.run --only viz-memory``).

A Solara server of ``torus_sim/interfaces/viz/app.py`` runs in this process (uvicorn in a thread, the cull timeout of
``torus-sim viz --cull-timeout`` set short) and headless Chromium opens ``--sessions`` sessions one after
another, each in a fresh browser context: load the page, press Step twice, close the tab. After the
cull period the run prints the process's resident memory at start, after one warm-up session (the
imports and caches every server pays once) and after all sessions, with the models still alive and the
stale task hooks left (both must be 0: issue 44 §1, :mod:`torus_sim.interfaces.viz.session`). Baseline in the
same run: the resident memory after the warm-up session. Goal: after 50 sessions, within 30 MB of it.

``python -m benchmarks.viz_memory --sessions 4 --route both --json`` prints the numbers as JSON for both
pages, one server, sessions alternated (tests/test_app.py).
Memory is that of this process, which also holds Playwright's client (a few MB, the same at every
reading). glibc's arenas are limited to 2 as ``torus-sim viz`` does (``MALLOC_ARENA_MAX``): set before
the run, so it holds only when this module is the program (the test runs it as one).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import socket
import sys
import threading
import time
import urllib.request
from pathlib import Path

__all__ = ["main", "measure_sessions"]

CULL_SECONDS = 3


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _alive_models() -> int:
    from torus_sim.engine.model import SchedulingModel

    gc.collect()
    return sum(1 for thing in gc.get_objects() if isinstance(thing, SchedulingModel))


def _stale_hooks() -> int:
    import solara.lifecycle

    return sum(1 for entry in solara.lifecycle._on_kernel_start_callbacks if entry.callpoint is None and entry.module is None)


def measure_sessions(sessions: int, route: str = "") -> dict:
    """Serve the app here, open and close ``sessions`` browser sessions, and read what is left after the cull.

    Args:
        sessions: sessions after the warm-up one(s).
        route: the page ("" for the simulation, "compare" for two policies side by side), or "both":
            one warm-up session on each, then the sessions alternate between them (one server).

    Returns:
        ``rss_start_mb``, ``rss_warm_mb``, ``rss_end_mb`` (resident memory, MiB), ``models_alive``,
        ``stale_hooks``, ``kernels_open`` and ``seconds``.

    Raises:
        RuntimeError: no Chromium, or the server did not answer within 90 s.
    """
    os.environ["SOLARA_APP"] = str(Path(__file__).resolve().parents[1] / "torus_sim" / "interfaces" / "viz" / "app.py")
    os.environ["SOLARA_KERNEL_CULL_TIMEOUT"] = f"{CULL_SECONDS}s"
    os.environ.setdefault("SOLARA_MODE", "production")
    import psutil
    import solara.server.kernel_context as kernel_context
    import solara.server.settings
    import solara.server.starlette
    import uvicorn
    from playwright.sync_api import sync_playwright

    from torus_sim.interfaces.viz.app import offline_vega_assets

    offline_vega_assets()
    solara.server.settings.kernel.cull_timeout = f"{CULL_SECONDS}s"
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise RuntimeError("no Chromium browser: install the Debian packages chromium and chromium-driver")
    process = psutil.Process()
    began = time.perf_counter()
    rss_start = process.memory_info().rss / 2**20
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(solara.server.starlette.app, host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    routes = ["", "compare"] if route == "both" else [route]
    url = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + 90
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2):
                break
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError("the solara server did not answer within 90 s") from None
            time.sleep(0.3)
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox", "--disable-gpu"])

        def one_session(page_route: str) -> None:
            context = browser.new_context(viewport={"width": 1280, "height": 800})
            page = context.new_page()
            page.goto(url + page_route, timeout=90_000)
            step = page.get_by_role("button", name="Step both" if page_route == "compare" else "Step", exact=True)
            step.wait_for(timeout=90_000)
            for _ in range(2):
                step.click()
                page.wait_for_timeout(700)
            context.close()

        for page_route in routes:
            one_session(page_route)
        time.sleep(CULL_SECONDS + 4)
        rss_warm = process.memory_info().rss / 2**20
        for index in range(sessions):
            one_session(routes[index % len(routes)])
        browser.close()
    time.sleep(CULL_SECONDS + 4)
    result = {
        "sessions": sessions,
        "route": route if route == "both" else "/" + route,
        "rss_start_mb": round(rss_start, 1),
        "rss_warm_mb": round(rss_warm, 1),
        "rss_end_mb": round(process.memory_info().rss / 2**20, 1),
        "models_alive": _alive_models(),
        "stale_hooks": _stale_hooks(),
        "kernels_open": len(kernel_context.contexts),
        "seconds": round(time.perf_counter() - began, 1),
    }
    server.should_exit = True
    return result


def main(argv: list[str] | None = None) -> int:
    """``python -m benchmarks.viz_memory [--sessions N] [--route compare|both] [--json]``: print the rows (or JSON)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--route", default="", choices=["", "compare", "both"], help="the page, or both pages alternated")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = measure_sessions(args.sessions, args.route)
    if args.json:
        print(json.dumps(result))
        return 0
    grown = result["rss_end_mb"] - result["rss_warm_mb"]
    print(f"\n== Browser view memory: {args.sessions} sessions on {result['route']} (goal: within 30 MB of the warm server) ==")
    print(f"  resident at start                 {result['rss_start_mb']:7.1f} MB")
    print(f"  after one session + cull (base)   {result['rss_warm_mb']:7.1f} MB")
    print(
        f"  after {args.sessions:3d} sessions + cull         {result['rss_end_mb']:7.1f} MB  ({grown:+.1f} MB, {result['rss_end_mb'] / result['rss_warm_mb']:.2f}x the base)"
    )
    print(
        f"  models alive {result['models_alive']}, stale task hooks {result['stale_hooks']}, kernels open {result['kernels_open']}  ({result['seconds']:.0f} s)"
    )
    return 0


if __name__ == "__main__":
    os.environ.setdefault("MALLOC_ARENA_MAX", "2")
    if os.environ.get("_TORUS_SIM_ARENAS") != "1":  # glibc reads MALLOC_ARENA_MAX at start: run again with it set
        os.environ["_TORUS_SIM_ARENAS"] = "1"
        os.execv(sys.executable, [sys.executable, "-m", "benchmarks.viz_memory", *sys.argv[1:]])
    sys.exit(main())
