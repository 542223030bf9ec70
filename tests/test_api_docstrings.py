"""The API reference's docstrings: Sphinx roles rewritten into links, a constant default shown as its value (docs/api_docstrings.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def extension():
    pytest.importorskip("griffe", reason='the site needs the docs extra: pip install ".[docs]"')
    spec = importlib.util.spec_from_file_location("api_docstrings", ROOT / "docs" / "api_docstrings.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def loaded(extension):
    import griffe

    return griffe.load(
        "torus_sim.metrics.confidence",
        search_paths=[str(ROOT)],
        extensions=griffe.load_extensions(extension.ApiDocstrings()),
    )


def test_roles_become_optional_autorefs_with_sphinx_titles(extension, loaded):
    obj = loaded["mean_interval"]
    text = extension.rewrite(
        "See :class:`~torus_sim.experiments.scenario.Scenario`, :func:`torus_sim.experiments.runner.run`, :meth:`lower`, "
        ":data:`CONFIDENCE` and :class:`the view <torus_sim.engine.view.SchedulingView>`.",
        obj,
    )
    assert '<autoref identifier="torus_sim.experiments.scenario.Scenario" optional><code>Scenario</code></autoref>' in text
    assert (
        '<autoref identifier="torus_sim.experiments.runner.run" optional><code>torus_sim.experiments.runner.run()</code></autoref>'
        in text
    )
    assert '<autoref identifier="torus_sim.metrics.confidence.CONFIDENCE" optional><code>CONFIDENCE</code></autoref>' in text
    assert "<code>the view</code>" in text and ":class:" not in text and ":data:" not in text


def test_a_default_named_by_a_constant_shows_its_value(loaded):
    parameters = {parameter.name: str(parameter.default) for parameter in loaded["mean_interval"].parameters}
    assert parameters["confidence"] == "0.95" and parameters["resamples"] == "9999" and parameters["seed"] == "0"


def test_no_role_is_left_raw_in_a_loaded_docstring(loaded):
    for name in ("mean_interval", "paired_difference", "Interval"):
        assert ":class:`" not in loaded[name].docstring.value and ":func:`" not in loaded[name].docstring.value
