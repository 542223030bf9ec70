"""The browser view's cost per step (``python -m benchmarks.run --only viz``).

1. Server time per step, for the 4x4x8 torus, a 128-node cluster, a 1,024-node cluster and Mira's
   96-midplane torus: the model's step (one simulated hour) plus building the page's charts (the
   machine, four live plots, the recent jobs) as the Vega-Lite specifications sent to the browser;
   the median over 20 steps after 10 warm-up steps. Goal (issue 31): under 0.3 s for the first two,
   under 1 s for the others. Baseline in the same run: the model's step alone.
2. ``torus-sim viz``: seconds until the server answers its first HTTP request (goal: under 10 s).
3. With Chromium and Playwright present: seconds from a click on Step until the page shows the new
   step's time (median of 10 steps), and until the first page with its charts is drawn.
"""

from __future__ import annotations

import shutil
import socket
import statistics
import subprocess
import sys
import time
import urllib.request

__all__ = ["browser_steps", "server_steps", "startup"]

MACHINES = {
    "torus 4x4x8 (BG/L)": {},
    "cluster of 128 nodes": {"platform": "cluster"},
    "cluster of 1,024 nodes": {"platform": "cluster", "workload": "1024"},
    "torus 2x3x4x4 (Mira)": {"machine": "mira"},
}


def _model(fields: dict):
    from torus_sim.interfaces.viz.app import VizModel

    fields = dict(fields)
    if fields.pop("workload", None) == "1024":  # the NASA log on a cluster 8 times its size: 1,024 nodes drawn
        from torus_sim.experiments.runner import ConfiguredModel

        return ConfiguredModel(
            step_seconds=3600.0, node_identities=True, platform="cluster", nodes=1024, failures="synthetic:400"
        )
    return VizModel(**fields)


def server_steps() -> None:
    """Print the median server time per step (model + charts) and the model's step alone, per machine."""
    from torus_sim.interfaces.viz import charts as viz_charts

    for label, fields in MACHINES.items():
        model = _model(fields)
        for _ in range(10):
            model.step()
        stepped, total = [], []
        for _ in range(20):
            began = time.perf_counter()
            model.step()
            middle = time.perf_counter()
            charts = [viz_charts.machine_chart(model), *viz_charts.live_charts(model), viz_charts.gantt_chart(model)]
            for chart in charts:
                viz_charts.spec(chart)
            viz_charts.legend_html()
            ended = time.perf_counter()
            stepped.append(middle - began)
            total.append(ended - began)
        print(
            f"viz step, {label}: {statistics.median(total) * 1000:.0f} ms per step (model + charts); "
            f"the model's step alone {statistics.median(stepped) * 1000:.1f} ms"
        )


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _serve(port: int) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "torus_sim.interfaces.cli", "viz", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _wait(port: int, began: float) -> float:
    while time.perf_counter() - began < 120:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2):
                return time.perf_counter() - began
        except OSError:
            time.sleep(0.1)
    return float("inf")


def startup() -> None:
    """Print how long ``torus-sim viz`` takes to answer its first request."""
    port = _free_port()
    began = time.perf_counter()
    server = _serve(port)
    try:
        print(f"torus-sim viz answers after {_wait(port, began):.1f} s (goal < 10 s)")
    finally:
        server.terminate()
        server.wait(timeout=20)


def browser_steps() -> None:
    """Print the browser's time from Step to the new step on screen, and to the first drawn page (needs Chromium)."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        chromium = None
    if chromium is None:
        print("browser: skipped (no Chromium or Playwright)")
        return
    port = _free_port()
    server = _serve(port)
    try:
        _wait(port, time.perf_counter())
        with sync_playwright() as driver:
            browser = driver.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            began = time.perf_counter()
            page.goto(f"http://127.0.0.1:{port}/", timeout=90_000)
            page.wait_for_function("document.querySelectorAll('.vega-embed canvas').length >= 6", timeout=90_000)
            first = time.perf_counter() - began
            step = page.get_by_role("button", name="Step")
            times = []
            for count in range(1, 11):
                began = time.perf_counter()
                step.click()
                page.wait_for_function(f"document.body.innerText.includes('t = {count}.0 h')", timeout=60_000)
                times.append(time.perf_counter() - began)
            browser.close()
        print(
            f"browser (Chromium, 4x4x8 torus): first page with its charts {first:.1f} s; "
            f"Step to the new step shown {statistics.median(times) * 1000:.0f} ms (median of 10)"
        )
    finally:
        server.terminate()
        server.wait(timeout=20)
