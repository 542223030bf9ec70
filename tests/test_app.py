"""The browser visualization: component tests with solara.render, and an end-to-end test in Chromium."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import ipywidgets
import pytest
import solara

from torus_sim import app

ARTIFACTS = Path(os.environ.get("TORUS_SIM_ARTIFACTS", Path(__file__).resolve().parent / "artifacts"))
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def stepped_model():
    model = app.VizTorusModel()
    for _ in range(6):
        model.step()
    return model


def image_bytes(component) -> bytes:
    _, rendered = solara.render(component, handle_error=False)
    return rendered.find(ipywidgets.Image).widget.value


def test_torus_view_renders_an_image_that_changes_as_the_model_steps():
    model = app.VizTorusModel()
    before = image_bytes(app.TorusView(model))
    model.step()
    after = image_bytes(app.TorusView(model))
    assert before[:4] == after[:4] == b"\x89PNG"
    assert before != after


def test_torus_picture_outlines_exactly_the_supernodes_that_failed_during_the_step():
    import numpy as np

    from failure_logs.events import FailureLog

    from .conftest import make_workload, torus_model

    later = make_workload([(1, 7200.0, 10.0, 10.0, 1)])  # arrives after the first step: the torus stays empty
    model = torus_model(later, FailureLog(np.array([1800.0]), np.array([37]), np.array([np.nan])))
    assert isinstance(model, app.VizModel.__mro__[2])  # the one model class
    model.step()
    assert model.failed_this_step == [37]
    figure = app.draw_torus(model)
    assert [axis.get_title() for axis in figure.axes] == [f"z = {z}" for z in range(8)]
    red = [
        (z, patch) for z, axis in enumerate(figure.axes) for patch in axis.patches if patch.get_edgecolor()[:3] == (1.0, 0.0, 0.0)
    ]
    x, y, z = model.platform.torus.coordinate(37)
    assert len(red) == 1 and red[0][0] == z and red[0][1].get_xy() == (y - 0.45, x - 0.45)


def test_queue_view_names_the_head_job_and_its_reservation():
    model = app.VizTorusModel(failures="synthetic:2000")
    while len(model.scheduler.queue) < 2 and model.running:
        model.step()
    head = model.scheduler.queue.head
    lines = app.queue_summary(model)
    assert lines[0].startswith(f"**t = {model.now / 3600:,.1f} h**")
    assert f"Head job **{head.job_id}**: size {head.size}" in lines[1]
    assert "reservation at t = " in lines[1] or "starts at the next pass" in lines[1] or "waits for repairs" in lines[1]
    solara.render(app.QueueView(model), handle_error=False)  # the component renders without error


def test_live_plots_and_recent_jobs_draw_from_the_record(stepped_model):
    live = app.draw_live_plots(stepped_model)
    assert [axis.get_title() for axis in live.axes] == ["utilization", "queue length", "avg bounded slowdown", "job kills"]
    assert len(live.axes[0].lines[0].get_xdata()) == stepped_model.steps + 1  # row 0 + one per step
    assert app.draw_recent_jobs(stepped_model).axes[0].patches


def test_controls_cover_platform_workload_failures_policy_predictor_quality_load_and_seed():
    assert {"platform", "workload", "failures", "policy", "predictor", "confidence", "accuracy", "load_scale", "seed"} <= set(
        app.model_params
    )
    assert set(app.model_params["policy"]["values"]) >= {
        "krevat",
        "balancing",
        "tiebreak",
        "FCFS-EASY",
        "PV-EASY",
        "conservative",
    }
    model = app.VizModel(policy="balancing", predictor="history", confidence=0.5, load_scale=1.2, seed="3")
    assert model.config.predictor == "history" and model.config.seed == 3 and model.config.load_scale == 1.2


def test_a_cluster_is_drawn_as_a_grid_of_nodes_with_failed_and_started_nodes_outlined():
    model = app.VizModel(platform="cluster", policy="PV-EASY", failures="synthetic:400")
    while not model.failed_this_step and model.running:
        model.step()
    figure = app.draw_machine(model)
    assert model.platform.kind == "cluster" and model.platform.identities
    rows, columns = model.platform.layout()
    assert figure.axes[0].images[0].get_array().shape == (rows, columns, 3)
    red = [patch for patch in figure.axes[0].patches if patch.get_edgecolor()[:3] == (1.0, 0.0, 0.0)]
    assert len(red) == len(set(model.failed_this_step)) > 0
    row, column = divmod(model.failed_this_step[0], columns)
    assert (column - 0.45, row - 0.45) in [patch.get_xy() for patch in red]
    assert app.queue_summary(model)[0].startswith("**t = ")
    assert app.draw_live_plots(model).axes and app.draw_recent_jobs(model).axes


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def served_app():
    port = free_port()
    log = open(ARTIFACTS.parent / ".solara-test.log", "w") if ARTIFACTS.parent.exists() else subprocess.DEVNULL
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "solara",
            "run",
            str(Path(app.__file__)),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--no-open",
            "--production",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    break
        except OSError:
            time.sleep(0.5)
    else:
        server.kill()
        pytest.fail("the solara server did not answer within 90 s")
    yield url
    server.terminate()
    server.wait(timeout=20)


def test_browser_shows_the_torus_steps_it_and_shows_no_error(served_app):
    if CHROMIUM is None:
        pytest.skip("no Chromium browser: install the Debian packages chromium and chromium-driver (.ci/run does)")
    playwright = pytest.importorskip("playwright.sync_api", reason="playwright is not installed: pip install '.[test]'")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with playwright.sync_playwright() as driver:
        browser = driver.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                "--disable-quic",
            ],
        )
        page = browser.new_page(viewport={"width": 1400, "height": 1300})
        page.goto(served_app, timeout=90_000)
        step = page.get_by_role("button", name="Step")
        step.wait_for(timeout=90_000)
        images = page.locator("img.widget-image")
        page.wait_for_function("document.querySelectorAll('img.widget-image').length >= 3", timeout=60_000)  # torus, plots, Gantt
        torus_before, plots_before = images.nth(0).screenshot(), images.nth(1).screenshot()
        for count in range(1, 4):
            step.click()
            page.get_by_text(f"Step: {count}").wait_for(timeout=60_000)
        page.wait_for_timeout(1500)
        torus_after, plots_after = images.nth(0).screenshot(), images.nth(1).screenshot()
        page.screenshot(path=str(ARTIFACTS / "viz.png"), full_page=True)
        visible = page.inner_text("body")
        browser.close()
    assert torus_before != torus_after, "the torus picture did not change after three steps"
    assert plots_before != plots_after, "the live plots did not change after three steps"
    assert "error in step" not in visible and "Traceback" not in visible and "Error" not in visible
    assert "t = 3.0 h" in visible and "Step: 3" in visible


def _browser(driver):
    return driver.chromium.launch(
        executable_path=CHROMIUM,
        headless=True,
        args=["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"],
    )


def test_each_browser_session_has_its_own_model_and_a_bad_seed_is_a_notice(served_app):
    """Issue 31: two tabs are two models (stepping one leaves the other at step 0); seed "abc" + Reset is refused in place."""
    if CHROMIUM is None:
        pytest.skip("no Chromium browser: install the Debian packages chromium and chromium-driver (.ci/run does)")
    playwright = pytest.importorskip("playwright.sync_api", reason="playwright is not installed: pip install '.[test]'")
    with playwright.sync_playwright() as driver:
        browser = _browser(driver)
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        first, second = context.new_page(), context.new_page()
        for page in (first, second):
            page.goto(served_app, timeout=90_000)
            page.get_by_role("button", name="Step").wait_for(timeout=90_000)
        for count in range(1, 4):
            first.get_by_role("button", name="Step").click()
            first.get_by_text(f"Step: {count}").wait_for(timeout=60_000)
        second.wait_for_timeout(1000)
        assert "Step: 0" in second.inner_text("body") and "t = 0.0 h" in second.inner_text("body")
        third = context.new_page()  # a session opened after another one stepped starts at step 0 too
        third.goto(served_app, timeout=90_000)
        third.get_by_role("button", name="Step").wait_for(timeout=90_000)
        assert "Step: 0" in third.inner_text("body")
        seed = second.get_by_label("Seed")
        seed.fill("abc")
        seed.press("Enter")
        second.get_by_role("button", name="Reset").click()
        second.get_by_text("is not a whole number >= 0: seed 0 is used").wait_for(timeout=60_000)
        text = second.inner_text("body")
        browser.close()
    assert "Traceback" not in text and "ValueError" not in text
