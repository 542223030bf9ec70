"""The browser view under several visitors at once (``python -m benchmarks.viz_soak``).

``torus-sim viz`` serves the page as a user starts it (its own process, ``--cull-timeout 3s``) and headless
Chromium opens ``--sessions`` sessions at once, each in its own browser context; they step in turn (each a
Step press, round after round) for ``--minutes``, then close. The run reports:

- each page's load: from the request to its six charts drawn (goal <= 3 s);
- the browsers' console: errors, and version warnings (a spec naming another Vega-Lite than the one drawing
  it), by text; failed requests (a 404: goal none of any);
- the server's resident memory (its processes together) when it first answers, after one warm-up session
  stepping as long as the soak's (what every server pays once: the modules a run imports as it meets failures,
  kills and migrations, the caches of partitions and charts) and the cull (the baseline, in the same run), and
  after each round of sessions closed and culled (goal: within 20 MB of the baseline).

``--json`` prints the numbers as JSON. :mod:`benchmarks.viz_memory` counts the models left alive (0) with the
server in its own process; here the server is measured apart from the browser's client.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from collections import Counter

from benchmarks.viz import _free_port, _wait
from benchmarks.viz_memory import CULL_SECONDS

__all__ = ["main", "soak"]

CHARTS = 6
"""Charts the simulation page draws (the machine, four live plots, the recent jobs)."""


def soak(sessions: int = 3, minutes: float = 6.0, rounds: int = 1) -> dict:
    """Serve the app, hold ``sessions`` sessions stepping at once for ``minutes``, close them, read what is left; ``rounds`` times.

    Returns:
        ``load_seconds`` (each session's page load), ``steps``, ``console_errors`` and ``version_warnings``
        (text -> count), ``other_warnings`` (text -> count), ``failed_requests`` (URL -> count), ``rss_warm_mb``,
        ``rss_end_mb``, ``grown_mb`` (the server's processes), ``seconds``.

    Raises:
        RuntimeError: no Chromium, or ``torus-sim viz`` did not answer within 120 s.
    """
    import subprocess

    import psutil
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise RuntimeError("no Chromium browser: install the Debian packages chromium and chromium-driver")
    began = time.perf_counter()
    port = _free_port()
    served = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from torus_sim.interfaces.cli import main; sys.exit(main())",
            "viz",
            "--port",
            str(port),
        ]
        + ["--cull-timeout", f"{CULL_SECONDS}s"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )

    def resident_mb() -> float:
        processes = [psutil.Process(served.pid), *psutil.Process(served.pid).children(recursive=True)]
        return sum(process.memory_info().rss for process in processes) / 2**20

    url = f"http://127.0.0.1:{port}/"
    if _wait(port, time.perf_counter()) == float("inf"):
        served.kill()
        raise RuntimeError("torus-sim viz did not answer within 120 s")
    rss_start = resident_mb()
    errors, versions, warnings, failed = Counter(), Counter(), Counter(), Counter()

    def listen(page) -> None:
        def console(message) -> None:
            text = message.text[:200]
            if message.type == "error":
                errors[text] += 1
            elif message.type == "warning" and "version" in text.lower():
                versions[text] += 1
            elif message.type == "warning":
                warnings[text] += 1

        page.on("console", console)
        page.on("response", lambda response: failed.update([response.url]) if response.status >= 400 else None)

    loads, steps = [], 0
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox", "--disable-gpu"])

        def open_session():
            context = browser.new_context(viewport={"width": 1280, "height": 800})
            page = context.new_page()
            listen(page)
            start = time.perf_counter()
            page.goto(url, timeout=90_000)
            page.wait_for_function(
                f"document.querySelectorAll('.vega-embed canvas, .vega-embed svg').length >= {CHARTS}", timeout=90_000
            )
            return context, page, time.perf_counter() - start

        warm, page, _ = open_session()  # the imports and caches every server pays once: a session as long as one of the soak's
        until = time.monotonic() + minutes * 60
        while time.monotonic() < until:
            page.get_by_role("button", name="Step", exact=True).click()
            page.wait_for_timeout(150)
        warm.close()
        time.sleep(CULL_SECONDS + 4)
        rss_warm = resident_mb()
        after_rounds = []
        for _ in range(rounds):
            opened = []
            for _ in range(sessions):
                context, page, seconds = open_session()
                opened.append((context, page))
                loads.append(round(seconds, 2))
            until = time.monotonic() + minutes * 60
            while time.monotonic() < until:
                for _, page in opened:
                    page.get_by_role("button", name="Step", exact=True).click()
                    steps += 1
                opened[-1][1].wait_for_timeout(400)
            for context, _ in opened:
                context.close()
            time.sleep(CULL_SECONDS + 4)
            after_rounds.append(round(resident_mb() - rss_warm, 1))
        browser.close()
    rss_end = resident_mb()
    result = {
        "sessions": sessions,
        "minutes": minutes,
        "load_seconds": loads,
        "steps": steps,
        "console_errors": dict(errors),
        "version_warnings": dict(versions),
        "other_warnings": dict(warnings),
        "failed_requests": dict(failed),
        "rss_start_mb": round(rss_start, 1),
        "rss_warm_mb": round(rss_warm, 1),
        "rss_end_mb": round(rss_end, 1),
        "grown_mb": round(rss_end - rss_warm, 1),
        "grown_after_each_round_mb": after_rounds,
        "seconds": round(time.perf_counter() - began, 1),
    }
    served.terminate()
    served.wait(timeout=30)
    return result


def main(argv: list[str] | None = None) -> int:
    """``python -m benchmarks.viz_soak [--sessions N] [--minutes M] [--json]``: print the report (or JSON); exit 0."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=3)
    parser.add_argument("--minutes", type=float, default=6.0)
    parser.add_argument("--rounds", type=int, default=1, help="open, step and close the sessions this many times")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = soak(args.sessions, args.minutes, args.rounds)
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"\n== Browser view, {args.sessions} sessions stepping at once for {args.minutes:g} min ==")
    print(f"  page loads (goal <= 3 s)             {', '.join(f'{value:.1f} s' for value in result['load_seconds'])}")
    print(f"  steps                                {result['steps']:,}")
    print(f"  console errors (goal 0)              {sum(result['console_errors'].values())}  {result['console_errors'] or ''}")
    print(
        f"  version warnings (goal 0)            {sum(result['version_warnings'].values())}  {result['version_warnings'] or ''}"
    )
    print(f"  failed requests (goal 0)             {sum(result['failed_requests'].values())}  {result['failed_requests'] or ''}")
    print(f"  other warnings                       {result['other_warnings'] or 0}")
    print(f"  memory when the server answers       {result['rss_start_mb']:7.1f} MB")
    print(f"  after one warm-up session + cull     {result['rss_warm_mb']:7.1f} MB (the baseline)")
    print(
        f"  after the sessions closed + cull     {result['rss_end_mb']:7.1f} MB ({result['grown_mb']:+.1f} MB; goal within 20 MB)"
    )
    rounds = ", ".join(f"{value:+.1f} MB" for value in result["grown_after_each_round_mb"])
    print(f"  growth after each round              {rounds}")
    print(f"  ({result['seconds']:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
