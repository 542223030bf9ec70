"""User pages hold today's facts: every measured figure quoted from the benchmark record, no history.

The record is benchmarks/figures.toml (python -m benchmarks.figures); the history (how each figure was
measured, on which machine and commit, every earlier value) is docs/benchmarks.md and CHANGELOG.md.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from benchmarks import figures

ROOT = Path(__file__).resolve().parents[1]


def test_every_quoted_figure_is_the_recorded_one_and_the_benchmarks_table_is_current():
    data = figures.record()
    assert figures.problems(data) == []
    quoted = {match["name"] for page in figures.pages() for match in figures.QUOTE.finditer(page.read_text(encoding="utf-8"))}
    assert {"main_job_wall", "ricc_peak", "import_mib", "sdsc_4000_wall", "cqsim_ratio"} <= quoted


def test_a_quote_that_differs_from_the_record_is_named():
    data = figures.record()
    data["figures"]["main_job_wall"] = "9.9 s"
    found = figures.problems(data)
    assert any("README.md: quotes main_job_wall as" in line and "'9.9 s'" in line for line in found)
    assert any("the sample run prints '1.4 s'" in line for line in found)
    assert any("the table is not the record's" in line for line in found)  # a row quotes main_job_wall too
    data = figures.record()
    data["rows"][0]["now"] = "changed"
    assert [line for line in figures.problems(data)] == [
        "docs/guide/benchmarks.md: the table is not the record's (python -m benchmarks.figures --write)"
    ]


HISTORY = [
    re.compile(r"\bissues?\s+#?\d+", re.I),  # an issue number
    re.compile(r"\bcommits?\s+[0-9a-f]{7,40}\b"),  # "commit 25c4b17"
    re.compile(r"\b20(?:2[5-9]|[3-9]\d)-\d\d-\d\d\b"),  # a date of the project's own history (a log's dates are data)
    re.compile(r"2-core|\bthis (?:project's )?(?:virtual )?machine\b", re.I),  # the machine that measured
]


def _commits(text: str) -> list[str]:
    """Tokens of 7-12 hex digits (a letter and a digit) that name a commit of this repository."""
    tokens = {
        token for token in re.findall(r"\b[0-9a-f]{7,12}\b", text) if re.search("[a-f]", token) and re.search("[0-9]", token)
    }
    named = []
    for token in sorted(tokens):
        done = subprocess.run(["git", "cat-file", "-e", f"{token}^{{commit}}"], cwd=ROOT, capture_output=True)
        if done.returncode == 0:
            named.append(token)
    return named


def test_user_pages_carry_no_issue_number_commit_date_or_machine():
    """History lives in CHANGELOG.md and the benchmark history (docs/benchmarks.md; docs/CHECKS.md records the checks)."""
    found = []
    git = (ROOT / ".git").exists()
    for page in figures.pages():
        text = page.read_text(encoding="utf-8")
        for number, line in enumerate(text.splitlines(), start=1):
            hits = [match.group() for pattern in HISTORY for match in pattern.finditer(line)]
            if git:
                hits += _commits(line)
            if hits:
                found.append(f"{page.relative_to(ROOT)}:{number}: {hits}")
    assert found == []
