"""Every command the README and the documentation site show runs as written, with the installed command.

The guide's rule: a command the docs show works from an installed package. The commands are taken from the
pages themselves (README.md and every page under docs/), so an edited command is the one tested. They run in a
scratch folder that holds copies of the repository's ``docs``, ``experiments`` and ``examples`` (a command naming
``docs/rl/weights.json`` finds it; what it writes stays in the scratch folder), with the field's logs by name
served from the mirror ``TORUS_SIM_DATA`` (tests/conftest.py points it at ../shared/data).

Run here: every ``torus-sim run`` line and here-document block, ``torus-sim data``, ``torus-sim compare``,
``torus-sim summarize``, ``torus-sim compile``, ``torus-sim convert`` and ``torus-sim calibrate`` (with the commands after
each in its block, which read what it wrote), ``torus-sim ckpt-tables`` / ``ckpt-compare``, ``torus-sim figure`` on shipped results and
the RL baselines table. Left out, each for a stated reason: placeholders (``FILE``, ``tcp://host:8786``,
``my-sweep.toml``); ``pip install`` (CI runs the README's two set-up commands); ``torus-sim viz`` (a server:
tests/test_app.py); ``torus-sim sweep`` (minutes to hours each: ``docs/regenerate.py --check`` re-runs the
documented ones, the cheap ones in tests/test_regenerate.py); ``python -m benchmarks.*`` (benchmarks, not tests);
``python docs/*.py`` scripts (the regenerate checks run them); the reinforcement-learning training
(``torus_sim.rl.train`` / ``sb3``: minutes; tests/test_rl_baselines.py trains smaller); ``python -m
torus_sim.rl.rlscheduler`` (tests/test_rlscheduler.py checks its table); ``mkdocs`` (tests/test_docs_site.py);
``cd`` into a folder (the sweeps that follow it are left out as above).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
RUN_PREFIXES = (
    "torus-sim run",
    "torus-sim data",
    "torus-sim compare",
    "torus-sim summarize",
    "torus-sim ckpt-",
    "torus-sim figure",
    "torus-sim compile",
    "torus-sim convert",
    "torus-sim calibrate",
)
PLACEHOLDERS = ("FILE", "tcp://host", "my-sweep", "my_package", "PATH")


def _commands(text: str) -> list[str]:
    """A page's bash snippets that run here: whole blocks with a here-document, else single lines of the kinds above."""
    snippets = []
    for block in re.findall(r"```bash\n(.*?)```", text, re.S):
        block = re.sub(r"\\\n\s*", " ", block)  # continuation lines joined
        if "<<'" in block:
            if "my_sjf" in block:  # the plug-in block: tests/test_plugins.py
                continue
            commands = [line for line in block.splitlines() if line.startswith("torus-sim")]
            if commands and all(line.startswith("torus-sim run") for line in commands):
                snippets.append(block)
            continue
        chain = []  # after a convert or a calibrate, the block's commands read what it wrote: one snippet, in order
        for line in block.splitlines():
            command = line.split("  #")[0].strip()
            if not command.startswith(RUN_PREFIXES) or any(mark in command for mark in PLACEHOLDERS):
                continue
            if chain or command.startswith(("torus-sim convert", "torus-sim calibrate")):
                chain.append(command)
                continue
            snippets.append(command)
        if chain:
            snippets.append(" && ".join(chain))
        for line in block.splitlines():
            command = line.split("  #")[0].strip()
            if command.startswith("python -m torus_sim.rl.baselines"):  # seconds: the held-back baselines table
                snippets.append(command.replace("python", sys.executable, 1))
    return snippets


def doc_commands() -> list[tuple[str, str]]:
    """``(page, command)`` for every command the pages show that runs here, each once.

    Two commands that differ only in their ``--out`` folder (the README's tour and a guide page showing the same run)
    are the same run: the first page's is kept.
    """
    found: dict[str, tuple[str, str]] = {}
    for page in PAGES:
        for command in _commands(page.read_text(encoding="utf-8")):
            same = re.sub(r"\s+", " ", re.sub(r"\s--out\s+\S+", "", command)).strip()
            found.setdefault(same, (str(page.relative_to(ROOT)), command))
    return list(found.values())


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """Every command run once, two at a time (the machine's two cores), in one scratch folder: ``command -> process``."""
    if shutil.which("torus-sim") is None:
        pytest.skip("the torus-sim command is not on PATH (install the package)")
    folder = tmp_path_factory.mktemp("doc-commands")
    for name in ("docs", "experiments", "examples"):  # copies: what a command writes there stays in the scratch folder
        shutil.copytree(ROOT / name, folder / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "build"))

    def run(command: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            ["bash", "-euo", "pipefail", "-c", command], cwd=folder, capture_output=True, text=True, timeout=600
        )

    commands = [command for _, command in doc_commands()]
    with ThreadPoolExecutor(2) as pool:
        return dict(zip(commands, pool.map(run, commands), strict=True))


def test_the_pages_show_the_commands_this_test_runs():
    commands = doc_commands()
    pages = {page for page, _ in commands}
    assert len(commands) >= 25, commands
    assert {"README.md", "docs/guide/running.md", "docs/data.md", "docs/policies/README.md"} <= pages
    readme = [command for page, command in commands if page == "README.md"]
    assert sum("pwa:" in command for command in readme) >= 1  # a tour command on a fetched log


@pytest.mark.parametrize(("page", "command"), doc_commands(), ids=lambda value: value[:60] if isinstance(value, str) else value)
def test_every_command_a_page_shows_runs_as_written(finished, page, command):
    done = finished[command]
    assert done.returncode == 0, f"{page}: {command}\n{done.stderr[-2000:]}"
    assert "Traceback" not in done.stderr, f"{page}: {command}"


def test_the_balancing_run_on_ctc_with_lanl_completes_with_the_documented_kills(finished):
    """docs/guide/running.md's BGL-FAULT on a cluster: the run that failed at t = 8,152,969 s (issue 40, section 1).

    Its numbers are the documented sweep's (experiments/cross/cluster_lanl_ctc.toml, case "balancing a=0.1",
    docs/cross/cluster_lanl_ctc/results.csv: 77,222 jobs, 551 kills), compared here from the page's own run; the whole
    table is compared by ``python docs/regenerate.py --check``.
    """
    command = next(command for command in finished if "--confidence 0.1 --downtime log" in command)
    printed = dict(
        (label.strip(), value) for label, value in re.findall(r"^(\D+?)\s{2,}([\d,.]+)$", finished[command].stdout, re.M)
    )
    assert printed["jobs completed"] == "77,222" and printed["job kills"] == "551", printed
