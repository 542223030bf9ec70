"""The quick-start notebook runs from its first cell to its last and prints what the site shows."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _execute_module():
    spec = importlib.util.spec_from_file_location("notebooks_execute", ROOT / "docs" / "notebooks" / "execute.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_quick_start_notebook_runs_and_prints_what_is_committed():
    pytest.importorskip("nbclient", reason='the notebook needs the test extra: pip install ".[test]"')
    pytest.importorskip("ipykernel")
    execute = _execute_module()
    path = ROOT / "docs" / "notebooks" / "quickstart.ipynb"
    fresh = execute.execute(path)
    outputs = execute.texts(fresh)
    printed = "".join(text for cell in outputs for text in cell)
    assert "wrote runs/quickstart/jobs.csv, runs/quickstart/summary.json" in printed  # the run, read back with pandas
    assert "18,239 jobs" in printed and "<figure>" in printed
    assert "balancing" in printed and "krevat" in printed and "Wilcoxon signed-rank p" in printed
    import nbformat

    committed = execute.texts(nbformat.read(path, as_version=4))
    assert outputs == committed  # the page shows what the code prints today
