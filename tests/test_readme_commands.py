"""Every README command that needs no ``../shared`` data runs as written, with the installed command, in an empty folder.

The guide's rule (and issue 44's "done when"): a command the README shows works from an installed
package in any directory. The runs are taken from the README itself, so an edited command is the one
tested. Left out, each for a stated reason: commands on ``../shared/data`` (resolve from the repository
root only, as the README says), placeholders (``FILE``, ``tcp://host:8786``), the two set-up commands (CI
runs them), ``torus-sim viz`` (a server: tests/test_app.py), ``torus-sim sweep`` / ``figure`` on the
repository's own files, ``python -m benchmarks.run`` (the repository root), the reinforcement-learning
training (1.2 minutes: tests/test_rl_baselines.py runs it smaller) and the plug-in block (tests/test_plugins.py).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def readme_runs() -> list[str]:
    """The README's bash snippets that run here: whole blocks with a here-document, else single ``torus-sim run`` lines."""
    text = README.read_text()
    snippets = []
    for block in re.findall(r"```bash\n(.*?)```", text, re.S):
        block = re.sub(r"\\\n\s*", " ", block)  # continuation lines joined
        if "<<'" in block:
            if "../shared" in block or "my_sjf" in block:
                continue
            commands = [line for line in block.splitlines() if line.startswith("torus-sim")]
            if commands and all(line.startswith("torus-sim run") for line in commands):
                snippets.append(block)
            continue
        for line in block.splitlines():
            command = line.split("  #")[0].strip()
            if command.startswith("torus-sim run") and "../shared" not in command and "FILE" not in command:
                snippets.append(command)
            elif command.startswith("python -m torus_sim.rl.baselines"):  # 4 s: the held-back baselines table
                snippets.append(command.replace("python", sys.executable, 1))
    return snippets


def test_the_readme_runs_that_need_no_shared_data_work_in_an_empty_folder(tmp_path):
    if shutil.which("torus-sim") is None:
        pytest.skip("the torus-sim command is not on PATH (install the package)")
    snippets = readme_runs()
    assert len(snippets) >= 7, snippets  # the tour, the platforms, a scenario file, Mira, the formats
    for snippet in snippets:
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", snippet], cwd=tmp_path, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, f"{snippet}\n{done.stderr[-2000:]}"
        assert "Traceback" not in done.stderr, snippet
    assert (tmp_path / "runs" / "nasa-c1.2" / "summary.json").exists()
    assert (tmp_path / "runs" / "easy-on-torus" / "summary.json").exists()
    assert (tmp_path / "torus-sim-results" / "jobs.csv").exists()
    assert any("torus_sim.rl.baselines" in snippet for snippet in snippets)
