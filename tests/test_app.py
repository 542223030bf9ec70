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

import numpy as np
import pytest
import solara

from torus_sim.interfaces.viz import app
from torus_sim.interfaces.viz import charts as viz_charts

ARTIFACTS = Path(os.environ.get("TORUS_SIM_ARTIFACTS", Path(__file__).resolve().parent / "artifacts"))
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def stepped_model():
    model = app.VizTorusModel()
    for _ in range(6):
        model.step()
    return model


def vega_spec(component) -> dict:
    """The Vega-Lite specification a component sends to the browser."""
    _, rendered = solara.render(component, handle_error=False)
    return rendered.find(solara.widgets.VegaLite).widget.spec


def test_torus_view_sends_a_chart_that_changes_as_the_model_steps():
    model = app.VizTorusModel()
    before = vega_spec(app.TorusView(model))
    model.step()
    after = vega_spec(app.TorusView(model))
    assert before["$schema"].startswith("https://vega.github.io/schema/vega-lite/")
    assert before != after


def test_the_machine_outlines_exactly_the_supernodes_that_failed_during_the_step():
    import numpy as np

    from failure_logs.events import FailureLog

    from .conftest import make_workload, torus_model

    later = make_workload([(1, 7200.0, 10.0, 10.0, 1)])  # arrives after the first step: the torus stays empty
    model = torus_model(later, FailureLog(np.array([1800.0]), np.array([37]), np.array([np.nan])))
    assert isinstance(model, app.VizModel.__mro__[2])  # the one model class
    model.step()
    assert model.failed_this_step == [37]
    table, titles = viz_charts.node_table(model)
    assert [title for title, _, _ in titles] == [f"z = {z}" for z in range(8)]
    assert table.loc[table["stroke"] == viz_charts.FAILED_STROKE, "node"].tolist() == [37]
    x, y, z = model.platform.torus.coordinate(37)
    drawn = table.loc[37]
    assert (drawn["column"], drawn["row"]) == (z % 4 * 5 + y, z // 4 * 5.6 + x)  # 2 rows of 4 slices, gaps between
    assert len(table) == 128 and set(table["state"]) <= {"free", "busy", "down"}
    assert len({(c, r) for c, r in zip(table["column"], table["row"], strict=True)}) == 128  # every node its own place


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
    live = [viz_charts.spec(chart) for chart in viz_charts.live_charts(stepped_model)]
    titles = [panel["title"] for panel in live]
    assert titles == [
        "utilization (busy / N)",
        "queue length (jobs)",
        "avg bounded slowdown",
        "job kills by failures",
    ]
    assert all(panel["width"] == "container" for panel in live)  # each takes its cell's width
    rows = live[0]["datasets"][live[0]["data"]["name"]]
    assert len(rows) == stepped_model.steps + 1  # row 0 + one per step
    kills = live[3]["encoding"]["y"]["scale"]["domain"]
    assert kills[1] > kills[0]  # a flat series still gets a real range
    gantt = viz_charts.spec(viz_charts.gantt_chart(stepped_model))
    bars = next(iter(gantt["datasets"].values()))
    assert 0 < len(bars) <= 20 and all(bar["end_h"] >= bar["start_h"] for bar in bars)


def test_controls_cover_platform_workload_failures_policy_predictor_quality_load_and_seed():
    assert {
        "platform",
        "machine",
        "workload",
        "failures",
        "policy",
        "predictor",
        "confidence",
        "accuracy",
        "load_scale",
        "seed",
    } <= set(app.model_params)
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
    line = app.scenario_line(model)
    assert line == (
        "**Scenario:** torus 4x4x8 (bgl) · NASA-iPSC-1993-3.1-cln.swf.gz (18,239 jobs) · failures bundled (347) · "
        "policy balancing · predictor history · c = 1.2 · seed 3"
    )


def test_a_cluster_is_drawn_as_a_grid_of_nodes_with_failed_and_started_nodes_outlined():
    model = app.VizModel(platform="cluster", policy="PV-EASY", failures="synthetic:400")
    while not model.failed_this_step and model.running:
        model.step()
    assert model.platform.kind == "cluster" and model.platform.identities
    table, titles = viz_charts.node_table(model)
    rows, columns = model.platform.layout()
    assert titles == [] and len(table) == model.platform.capacity
    assert table["column"].max() < columns and table["row"].max() < rows
    red = table.loc[table["stroke"] == viz_charts.FAILED_STROKE, "node"].tolist()
    assert sorted(red) == sorted(set(model.failed_this_step)) and red
    row, column = divmod(model.failed_this_step[0], columns)
    assert (table.loc[model.failed_this_step[0], "row"], table.loc[model.failed_this_step[0], "column"]) == (row, column)
    assert app.queue_summary(model)[0].startswith("**t = ")
    busy = table[table["state"] == "busy"]
    assert (busy["job"].notna() & busy["size"].notna() & busy["walltime_h"].notna() & busy["attempts"].notna()).all()


def test_jump_to_an_hour_and_to_the_next_failure():
    model = app.VizModel()
    assert app.jump(model, until_hours=10) == 10 and model.now == 10 * 3600
    taken = app.jump(model, next_failure=True)
    assert taken >= 1 and model.failed_this_step
    assert model.now == model.failure_log.failed_at[model.failure_log.failed_at > 10 * 3600].min() // 3600 * 3600 + 3600


def test_the_controls_offer_what_runs_together_and_mark_a_pending_change():
    """Issue 44 sections 2-3: menus by platform (greedy is cluster-only), a node count, a pending change until Reset."""
    import ipyvuetify as v

    from torus_sim.interfaces.viz import controls as viz_controls

    chosen = viz_controls.ChosenControls()
    model = solara.reactive(app.VizModel(controls=chosen))
    _, rc = solara.render(viz_controls.ScenarioControls(model, chosen), handle_error=False)

    def menu(label: str):
        found = [select for select in rc.find(v.Select).widgets if select.label == label]
        return found[0] if found else None

    def pending() -> str:
        return " ".join(str(alert.children) for alert in rc.find(v.Alert).widgets)

    assert "greedy" not in menu("Policy").items and "krevat" in menu("Policy").items  # greedy declares clusters only
    assert menu("Machine (torus)") is not None and menu("Nodes (cluster)") is None and pending() == ""
    menu("Platform").v_model = "cluster"
    assert "greedy" in menu("Policy").items and menu("Machine (torus)") is None
    assert "Platform: cluster (running: torus)" in pending()
    menu("Policy").v_model = "greedy"
    menu("Nodes (cluster)").v_model = "256"
    assert chosen.values["policy"] == "greedy" and chosen.values["nodes"] == "256"
    model.value = app.VizModel(controls=chosen)  # what Mesa's Reset does with the fixed parameter
    assert model.value.platform.capacity == 256 and model.value.config.policy == "greedy" and model.value.notice == ""
    assert pending() == ""
    menu("Platform").v_model = "torus"  # greedy cannot run there: the menu falls back to the default, which runs on both
    assert chosen.values["policy"] == app.model_params["policy"]["value"] and "greedy" not in menu("Policy").items
    assert "Policy: krevat (running: greedy)" in pending() and menu("Predictor") is None  # Krevat's placement asks none
    menu("Policy").v_model = "balancing"
    assert menu("Predictor") is not None and menu("Confidence a (balancing)") is not None
    rc.close()
    assert viz_controls.pending_changes({"seed": " 3"}, {"seed": 3}) == []


def test_what_the_page_shows_is_about_the_model_it_runs():
    """Issue 44 sections 2-3: no message about an earlier model; failed nodes named once; the downtime control."""
    import ipyvuetify as v

    first = app.VizModel()
    box, rc = solara.render(app.JumpView(first), handle_error=False)

    def shown() -> list[str]:
        return [text for widget in rc.find(v.Html).widgets for text in widget.children if isinstance(text, str)]

    rc.find(v.Btn, children=["Next failure"]).widget.click()
    assert any(text.startswith(f"{first.steps} steps: t = ") and "failed node(s)" in text for text in shown()), shown()
    rc.render(app.JumpView(app.VizModel()))  # Mesa's Reset: a new model in the same component
    assert not any("steps: t = " in text for text in shown()), shown()  # it said 27 steps ... over Intrepid
    rc.close()

    model = app.VizModel()
    model.step_log.failed = [50, 51, 4, 5, 50, 4]
    assert app.failed_nodes_text(model) == "failed node(s) 4, 5, 50, 51 (6 events)"
    model.step_log.failed = []
    assert app.failed_nodes_text(model) == "no node failed"

    # "down 0" always with BGL-FAULT's transient failures; with a downtime the drawing shows down nodes
    held = app.VizModel(downtime="12 h")
    assert held.config.downtime == 43200.0 and held.notice == ""
    assert "failures bundled (347) · downtime 12 h · policy krevat" in app.scenario_line(held)
    down = []
    for _ in range(48):
        held.step()
        down += app.viz_charts.node_table(held)[0].query("state == 'down'")["detail"].tolist()
    assert down and all(text.startswith("down until t = ") for text in down)  # the tooltip: repair time, no job fields
    mira = app.VizModel(machine="mira", failures="bundled", downtime="log (the log's repair times; Mira has them)")
    assert mira.config.downtime == "log" and mira.notice == ""
    refused = app.VizModel(downtime="forever")
    assert refused.config.downtime == "transient" and "is not one of the choices offered" in refused.notice


def test_the_side_by_side_table_says_what_each_row_is_and_shows_no_nan():
    models = {policy: app.VizModel(policy=policy) for policy in ("krevat", "FCFS-EASY")}
    text = app.compare_markdown(app.compare_table(models))
    assert text.splitlines()[0] == "| metric | krevat | FCFS-EASY |" and "nan" not in text.lower()
    assert "| utilization (mean of the hourly samples so far) | – | – |" in text  # t = 0: nothing sampled yet
    for model in models.values():
        app.jump(model, until_hours=5)
    table = app.compare_table(models)
    samples = models["krevat"].datacollector.get_model_vars_dataframe()
    assert table.iloc[5]["krevat"] == round(float(samples.loc[samples["time"] > 0, "utilization"].mean()), 3)


def test_two_policies_side_by_side_meet_the_same_jobs_and_failures():
    models = {policy: app.VizModel(policy=policy) for policy in ("krevat", "FCFS-EASY")}
    for model in models.values():
        app.jump(model, until_hours=48)
    table = app.compare_table(models)
    assert list(table.columns) == ["metric", "krevat", "FCFS-EASY"] and list(table["metric"]) == list(app.COMPARED)
    first, second = models.values()
    assert first.now == second.now and len(first.failure_log) == len(second.failure_log)
    solara.render(app.ComparePage(), handle_error=False)


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


def _playwright():
    """Playwright's sync API, or a skip that says what to install; the screenshots' folder made."""
    if CHROMIUM is None:
        pytest.skip("no Chromium browser: install the Debian packages chromium and chromium-driver (.ci/run does)")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return pytest.importorskip("playwright.sync_api", reason="playwright is not installed: pip install '.[test]'")


def _charts_drawn(page, count: int) -> None:
    page.wait_for_function(f"document.querySelectorAll('.vega-embed canvas, .vega-embed svg').length >= {count}", timeout=60_000)


def test_browser_shows_the_torus_steps_it_and_shows_no_error(served_app):
    playwright = _playwright()
    with playwright.sync_playwright() as driver:
        browser = _browser(driver)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        failed_requests, console = [], []
        page.on("response", lambda response: failed_requests.append(response.url) if response.status >= 400 else None)
        page.on("console", lambda message: console.append((message.type, message.text)))
        page.goto(served_app, timeout=90_000)
        step = page.get_by_role("button", name="Step")
        step.wait_for(timeout=90_000)
        _charts_drawn(page, 6)  # the machine, four live plots, the recent jobs: drawn by the browser (Vega-Lite)
        machine = page.locator(".vega-embed").first
        before = machine.screenshot()
        for count in range(1, 4):
            step.click()
            page.get_by_text(f"Step: {count}").wait_for(timeout=60_000)
        page.wait_for_function("document.body.innerText.includes('t = 3.0 h')", timeout=60_000)
        page.wait_for_timeout(1500)  # the browser redraws the charts after the text
        after = machine.screenshot()
        page.screenshot(path=str(ARTIFACTS / "viz-torus.png"))
        visible = page.inner_text("body")
        # issue 44 section 2: the jump's message is about its model; after Reset it is gone (it said "27 steps: ...")
        page.get_by_role("button", name="Next failure").click()
        page.wait_for_function("/\\d+ steps: t = .*failed node/.test(document.body.innerText)", timeout=60_000)
        page.get_by_role("button", name="Reset").click()
        page.get_by_text("Step: 0").wait_for(timeout=60_000)
        page.wait_for_function("!/steps: t = /.test(document.body.innerText)", timeout=60_000)
        browser.close()
    assert before != after, "the torus picture did not change after three steps"
    assert "error in step" not in visible and "Traceback" not in visible and "Error" not in visible
    assert "t = 3.0 h" in visible and "Step: 3" in visible
    # the scenario line says what the model runs (VizModel's defaults)
    assert (
        "Scenario: torus 4x4x8 (bgl) · NASA-iPSC-1993-3.1-cln.swf.gz (18,239 jobs) · failures bundled (347) · policy krevat"
        in visible
    )
    assert failed_requests == []  # the charts' scripts are served offline, and no page asks for KaTeX (no 404)
    assert [text for kind, text in console if kind == "error"] == []
    # a spec naming a newer Vega-Lite than the one drawing it, or a chart with no extent: a warning at each redraw
    assert [text for kind, text in console if kind == "warning" and ("version" in text.lower() or "extent" in text)] == []


def test_the_cluster_drawing_is_inside_its_cell_and_the_side_by_side_view_steps_both_models(served_app):
    """Issue 31: every node inside the cell (bounding boxes) on a cluster; /compare steps two policies together."""
    playwright = _playwright()
    with playwright.sync_playwright() as driver:
        browser = _browser(driver)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(served_app, timeout=90_000)
        page.get_by_role("button", name="Step").wait_for(timeout=90_000)
        page.locator(".v-select", has_text="Platform").click()
        page.locator(".v-menu__content .v-list-item", has_text="cluster").first.click()
        page.get_by_text("Pending, applied at Reset: Platform: cluster (running: torus)").wait_for(timeout=60_000)
        pending_shown = page.inner_text("body")
        # Solara's busy bar (a Reset that builds a model for > 0.3 s) is drawn above the app bar, not under it
        bar_on_top = page.evaluate(
            """() => { const bar = document.querySelector('.v-application--wrap > .v-progress-linear');
                const header = document.querySelector('header.v-app-bar');
                return [bar.getBoundingClientRect().top, +getComputedStyle(bar).zIndex, +getComputedStyle(header).zIndex]; }"""
        )
        page.get_by_role("button", name="Reset").click()
        page.wait_for_function("document.body.innerText.includes('Scenario: cluster of 128 nodes')", timeout=60_000)
        page.wait_for_function("!document.body.innerText.includes('Pending, applied at Reset')", timeout=60_000)
        page.get_by_role("button", name="Step").click()
        page.get_by_text("Step: 1").wait_for(timeout=60_000)
        _charts_drawn(page, 6)
        page.wait_for_timeout(500)
        drawing = page.locator(".vega-embed").first.locator("canvas, svg").first.bounding_box()
        cell = page.locator(".vue-grid-item").first.bounding_box()
        page.screenshot(path=str(ARTIFACTS / "viz-cluster.png"))
        laptop = browser.new_page(viewport={"width": 1280, "height": 800})
        laptop.goto(served_app, timeout=90_000)
        laptop.get_by_role("button", name="Step").wait_for(timeout=90_000)
        _charts_drawn(laptop, 6)
        small = laptop.locator(".vega-embed").first.locator("canvas, svg").first.bounding_box()
        small_cell = laptop.locator(".vue-grid-item").first.bounding_box()
        compare = browser.new_page(viewport={"width": 1400, "height": 1000})
        compare.goto(served_app.rstrip("/") + "/compare", timeout=90_000)
        both = compare.get_by_role("button", name="Step both", exact=True)
        both.wait_for(timeout=90_000)
        _charts_drawn(compare, 2)
        for count in (1, 2):
            both.click()
            compare.get_by_text(f"(step {count})").wait_for(timeout=60_000)
        compare.get_by_role("button", name="Step both x 24").click()
        compare.get_by_text("(step 26)").wait_for(timeout=60_000)
        compare.wait_for_timeout(800)
        compare.screenshot(path=str(ARTIFACTS / "viz-compare.png"))
        text = compare.inner_text("body")
        titles = compare.locator(".vega-embed").count()
        laptop.screenshot(path=str(ARTIFACTS / "viz-laptop.png"))  # 1280x800: no badge over a chart title
        laptop_text = laptop.inner_text("body")
        # issue 44 section 2: a message about the previous pair does not stay; the step count starts again
        compare.get_by_role("button", name="Next failure").click()
        compare.get_by_text("steps to the next failure").wait_for(timeout=60_000)
        compare.locator(".v-select", has_text="Comparison").click()
        compare.locator(".v-menu__content .v-list-item", has_text="FCFS-EASY vs PV-EASY").first.click()
        compare.get_by_text("(step 0)").wait_for(timeout=60_000)
        after_change = compare.inner_text("body")
        browser.close()
    assert "steps to the next failure" not in after_change and "PV-EASY" in after_change
    assert bar_on_top[0] == 0 and bar_on_top[1] > bar_on_top[2], bar_on_top  # at the top, stacked above the app bar
    assert "Model Parameters" not in pending_shown  # Mesa's card is empty: our controls draw the scenario
    assert "This website runs on" not in laptop_text and "page 0" not in laptop_text.lower()
    for box, inside in ((drawing, cell), (small, small_cell)):
        assert box["x"] >= inside["x"] and box["x"] + box["width"] <= inside["x"] + inside["width"] + 1, (box, inside)
        assert box["y"] >= inside["y"] and box["y"] + box["height"] <= inside["y"] + inside["height"] + 1, (box, inside)
    assert "t = 26.0 h (step 26)" in text and titles == 2
    assert "krevat" in text and "balancing" in text and "average bounded slowdown" in text and "Traceback" not in text


def _browser(driver):
    return driver.chromium.launch(
        executable_path=CHROMIUM,
        headless=True,
        args=["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"],
    )


def test_each_browser_session_has_its_own_model_and_a_bad_seed_is_a_notice(served_app):
    """Issue 31: two tabs are two models (stepping one leaves the other at step 0); seed "abc" + Reset is refused in place."""
    playwright = _playwright()
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


def test_mira_is_drawn_as_16_slices_of_its_2x3_midplanes_with_its_own_failures():
    model = app.VizModel(machine="mira")
    assert model.config.machine == "mira" and "#mira" in model.failure_log.source and len(model.failure_log) > 0
    for _ in range(3):
        model.step()
    table, titles = viz_charts.node_table(model)
    assert len(table) == 96 and len(titles) == 16 and titles[0][0] == "C = 0, D = 0"
    assert len({(c, r) for c, r in zip(table["column"], table["row"], strict=True)}) == 96
    assert viz_charts.spec(viz_charts.machine_chart(model))["title"][0].startswith("torus 2x3x4x4")


def test_closed_sessions_free_their_models_and_the_server_does_not_grow():
    """Issue 44 section 1: ~19 MB per closed session stayed for good (Mesa's use_task hooks in Solara 1.58.2).

    A server runs in a child process (benchmarks/viz_memory.py, the 50-session benchmark's code) with a
    3 s cull timeout; Chromium opens and closes a warm-up session on each page (the simulation and the
    side-by-side comparison) and 4 more, alternating. After the cull no model is alive, no task hook is
    left and no kernel is open; resident memory grew less than 30 MB over the warm server (about 16 MB
    measured on each page alone; 45 MB before the fix).
    """
    import json

    _playwright()
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.viz_memory", "--sessions", "4", "--route", "both", "--json"],
        cwd=Path(__file__).resolve().parents[1],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, MALLOC_ARENA_MAX="2", _TORUS_SIM_ARENAS="1"),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["route"] == "both" and result["sessions"] == 4
    assert result["models_alive"] == 0 and result["stale_hooks"] == 0 and result["kernels_open"] == 0, result
    assert result["rss_end_mb"] - result["rss_warm_mb"] < 30, result


def test_with_a_price_the_page_plots_the_machines_power_exactly_and_offers_a_cap():
    """Issue 45 §6: the price control turns power accounting on; the live plots gain the power (the draw at each step,
    equal to the energy accounting's timeline there), the cap and the price; the cap menu shows with a price only."""
    from torus_sim.interfaces.viz import controls as viz_controls
    from torus_sim.metrics.energy import down_intervals, power_timeline

    assert "power_cap" not in viz_controls.shown_controls({"platform": "torus", "price": app.model_params["price"]["value"]})
    tou = "time of use: 0.05 per kWh, 3x on-peak 8-20"
    assert "power_cap" in viz_controls.shown_controls({"platform": "torus", "price": tou})
    model = app.VizModel(price=tou, power_cap="0.8 x the busy draw, on-peak (8-20)", policy="power-cap")
    assert model.notice == "" and model.config.power and model.config.power_cap == 0.8
    assert app.scenario_line(model).endswith("price tou:0.05:3:8-20 · cap 0.8 x the busy draw in hours 8-20")
    for _ in range(150):
        model.step()
    charts = viz_charts.live_charts(model)
    assert len(charts) == 5 and viz_charts.spec(charts[-1])["title"].startswith("power kW")
    series = model.datacollector.get_model_vars_dataframe()
    model.run()  # to the end: every attempt of the stepped hours is in the record
    record = model.record()
    attempts = record.attempts
    watts = attempts["job_id"].map(model.power.job_watts).to_numpy(float)
    down = down_intervals(record.failures, record.makespan)
    times, draw = power_timeline(attempts, watts, down, 128, model.power.node.idle_w, model.power.node.down_w)
    stepped = series[series["time"] > 0]  # row 0 is taken before the jobs of t = 0 start
    at = np.searchsorted(times, stepped["time"].to_numpy(), side="right") - 1
    assert np.allclose(draw[at] / 1000.0, stepped["power_kw"].to_numpy(), rtol=1e-12, atol=1e-9)
    assert stepped["power_kw"].max() > 716.8  # not only the idle machine
    plain = app.VizModel()
    assert "power_kw" not in plain.datacollector.get_model_vars_dataframe().columns  # nothing without a price


def test_the_switch_off_control_shows_with_a_price_and_the_drawing_marks_off_nodes():
    """Issue 45 §1 in the browser: the *Switch idle nodes off* control shows with a price only; its choice switches
    idle midplanes off (the scenario's idle_off_after / boot_time), the drawing marks them (state ``off``, its own
    colour, a tooltip) and the legend names them; a value the menu does not offer is refused with a notice."""
    from torus_sim.interfaces.viz import controls as viz_controls

    tou = "time of use: 0.05 per kWh, 3x on-peak 8-20"
    assert "switch_off" not in viz_controls.shown_controls({"platform": "torus", "price": app.model_params["price"]["value"]})
    assert "switch_off" in viz_controls.shown_controls({"platform": "torus", "price": tou})
    model = app.VizModel(price=tou, switch_off="after 10 min idle (boot 5 min)")
    assert model.notice == "" and model.config.idle_off_after == 600 and model.config.boot_time == 300
    assert app.scenario_line(model).endswith("idle nodes off after 600 s, boot 300 s")
    for _ in range(30):  # NASA's machine empties for the first time at t = 6 h
        model.step()
        if model.power_states.off(model.now).any():
            break
    table, _ = viz_charts.node_table(model)
    off = table[table["state"] == "off"]
    assert len(off) > 0 and set(off["fill"]) == {viz_charts.OFF}
    assert off["detail"].str.startswith("switched off").all()
    assert set(off["node"]) == {agent.index for agent in model.node_agents if agent.power_state == "off"}
    assert viz_charts.spec(viz_charts.machine_chart(model))["title"][0].endswith(f"off {len(off)}")
    assert "switched off" in viz_charts.legend_html(True) and "switched off" not in viz_charts.legend_html()
    crafted = app.VizModel(price=tou, switch_off="after 1 s")
    assert "is not one of the choices offered" in crafted.notice and crafted.config.idle_off_after is None
    assert app.VizModel(switch_off="at once (boot 5 min)").config.idle_off_after is None  # no price: no power accounting


def test_the_switch_off_control_offers_a_switch_off_time_and_the_drawing_marks_nodes_switching_off():
    """Issue 45 §1 in the browser: the choice with a switch-off time sets the scenario's shutdown_time; a node
    still switching off is drawn in its own colour (state ``switching off``, not ``off``), the agents agree,
    the title counts it and the legend names it only for such a run."""
    tou = "time of use: 0.05 per kWh, 3x on-peak 8-20"
    model = app.VizModel(price=tou, switch_off="after 10 min idle (switch-off 5 min, boot 5 min)")
    assert model.notice == "" and model.config.shutdown_time == 300 and model.config.idle_off_after == 600
    assert app.scenario_line(model).endswith("idle nodes off after 600 s, boot 300 s, switch-off 300 s")
    seen = set()
    for _ in range(400):
        model.step()
        table, _ = viz_charts.node_table(model)
        switching = table[table["state"] == "switching off"]
        if len(switching):
            seen.add("switching")
            assert set(switching["fill"]) == {viz_charts.SWITCHING_OFF}
            assert switching["detail"].str.startswith("switching off").all()
            agents = {agent.index for agent in model.node_agents if agent.power_state == "switching off"}
            assert set(switching["node"]) == agents
            assert viz_charts.spec(viz_charts.machine_chart(model))["title"][0].endswith(f"switching off {len(switching)}")
        if (table["state"] == "off").any():
            seen.add("off")
        if seen == {"switching", "off"}:
            break
    assert seen == {"switching", "off"}
    assert "switching off" in viz_charts.legend_html(True, True) and "switching off" not in viz_charts.legend_html(True)
    plain = app.VizModel(price=tou, switch_off="after 10 min idle (boot 5 min)")
    assert plain.config.shutdown_time is None
