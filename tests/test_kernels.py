"""The compiled reservation kernels on a fresh installation (issue 78 §6): a run that compiles them says so, and
``torus-sim compile`` compiles them ahead of time, so that the next run neither compiles nor says anything.

A fresh installation is stood for by an empty numba cache (``NUMBA_CACHE_DIR`` naming an empty folder), in
subprocesses: this process's kernels are compiled already.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytest.importorskip("numba")

CLI = "import sys; from torus_sim.interfaces.cli import main; sys.exit(main(sys.argv[1:]))"
CONSERVATIVE = ["run", "--platform", "cluster", "--policy", "conservative", "--max-jobs", "150", "--failures", "none"]


def _torus_sim(arguments, cache, cwd):
    environment = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    return subprocess.run(
        [sys.executable, "-c", CLI, *arguments], capture_output=True, text=True, env=environment, cwd=cwd, timeout=900
    )


def test_a_cold_run_says_it_compiles_a_warm_one_says_nothing_and_compile_fills_the_rest(tmp_path):
    cache = tmp_path / "numba"
    cold = _torus_sim([*CONSERVATIVE, "--out", str(tmp_path / "cold")], cache, tmp_path)
    assert cold.returncode == 0, cold.stderr
    assert "torus-sim: warning: compiling the reservation kernels" in cold.stderr and "torus-sim compile" in cold.stderr

    warm = _torus_sim([*CONSERVATIVE, "--out", str(tmp_path / "warm")], cache, tmp_path)
    assert warm.returncode == 0, warm.stderr
    assert "compiling" not in warm.stderr  # loaded from the cache: no compile, no word
    assert (tmp_path / "warm" / "jobs.csv").read_bytes() == (tmp_path / "cold" / "jobs.csv").read_bytes()

    compiled = _torus_sim(["compile"], cache, tmp_path)  # the torus's kernels and R-LIST-Q's are still missing
    assert compiled.returncode == 0, compiled.stderr
    assert compiled.stdout.startswith("compiled ") and "reservation kernels in" in compiled.stdout
    assert "kernels compile at their first use" not in compiled.stdout  # the warm-up reaches every kernel
    assert "warning" not in compiled.stderr

    again = _torus_sim(["compile"], cache, tmp_path)
    assert again.returncode == 0 and again.stdout.startswith("the kernels were compiled already")
