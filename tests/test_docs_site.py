"""The documentation site (issue 62): it builds strictly, its generated pages are current, the README is short."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_the_site_builds_strictly_with_every_internal_link_and_anchor_resolved(tmp_path):
    """``mkdocs build --strict``: a warning (a page linking a missing page or anchor, an API object mkdocstrings
    cannot resolve, a page outside the nav's files) fails it. External links are not fetched (no network here)."""
    pytest.importorskip("mkdocs", reason='the site needs the docs extra: pip install ".[docs]"')
    pytest.importorskip("mkdocstrings")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert done.returncode == 0, done.stderr[-4000:]
    api = (tmp_path / "site" / "reference" / "api" / "index.html").read_text(encoding="utf-8")
    for name in ("torus_sim.experiments.runner.run", "SchedulingView", "PolicyContext", "SchedulingEnv", "against_log"):
        assert name in api, name
    assert (tmp_path / "site" / "reference" / "cli" / "index.html").is_file()
    notebook = (tmp_path / "site" / "notebooks" / "quickstart" / "index.html").read_text(encoding="utf-8")
    assert "<img" in notebook and "mean_interval" in notebook  # rendered with its committed outputs


def test_the_cli_and_scenario_references_are_what_the_code_makes():
    done = subprocess.run([sys.executable, "docs/make_reference.py", "--check"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout
    cli = (ROOT / "docs" / "reference" / "cli.md").read_text(encoding="utf-8")
    from torus_sim.interfaces.commands import SUBCOMMANDS

    for command in SUBCOMMANDS:
        for name in command.NAMES:
            assert f"## torus-sim {name}" in cli, name


def test_the_readme_is_read_in_five_minutes_and_history_lives_in_the_changelog():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    assert readme.count("```bash") >= 3 and "pip install . && torus-sim run" in readme
    assert "## Unreleased" in (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    for line in readme.splitlines():  # no issue numbers in the prose: history is the changelog's
        assert "(issue " not in line and "issue #" not in line, line


def test_every_relative_link_of_the_readme_and_the_changelog_names_a_file_of_the_repository():
    import re

    for page in ("README.md", "CHANGELOG.md"):
        text = (ROOT / page).read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if target.startswith(("http://", "https://", "#")):
                continue
            assert (ROOT / target.split("#")[0]).exists(), f"{page} links {target}, which is not in the repository"


def test_the_glossary_has_an_entry_for_every_word_a_run_prints_and_the_readme_links_it_at_first_use():
    import re

    glossary = (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8")
    terms = re.findall(r'^<a id="([a-z0-9-]+)"></a>\*\*(.+)\*\*$', glossary, re.M)
    entries = re.findall(r"^(?:<a [^>]+></a>)?\*\*.+\*\*$", glossary, re.M)
    assert len(terms) == len(entries) >= 30  # every entry can be linked to
    words = " ".join(term for _, term in terms).lower()
    printed = [
        "offered load",
        "capacity utilized",
        "job kills",
        "work lost",
        "preventive checkpoints",
        "mbs",
        "wasted load",
        "blocked jobs",
        "reservation violations",
        "silent errors detected",
        "span t",
        "cleaning",
        "online",
        "oracle confidence",
        "against the log",
        "walltime",
        "bounded slowdown",
        "migration",
    ]
    missing = [word for word in printed if word not in words and word not in glossary.lower()]
    assert missing == []
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    prose = re.sub(r"```.*?```", "", readme, flags=re.S)
    for name in ("BGL-FAULT", "RIGID", "MOLDABLE", "PV-EASY", "CKPT-MIG"):
        first = re.search(rf"(?<![\w`\[-]){name}(?![\w`-])|\[{name}\]\(docs/glossary\.md#[a-z-]+\)", prose)
        assert first is not None and first.group().startswith("["), f"{name}'s first use in the README is not a glossary link"
