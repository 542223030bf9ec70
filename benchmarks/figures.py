"""The benchmark record's figures, quoted by the user pages: write the benchmarks page's table, check every quote.

    python -m benchmarks.figures --check    # every quoted figure is the recorded one, the table is current (exit 1 if not)
    python -m benchmarks.figures --write    # rewrite the table of docs/guide/benchmarks.md from benchmarks/figures.toml

A page quotes a figure as ``VALUE<!-- figure NAME -->`` (the comment is invisible on the site and on GitHub);
the README's sample run quotes ``main_job_wall`` in the line the run prints. benchmarks/figures.toml keeps
each figure's latest value and the table's rows (``{name}`` stands for a figure); docs/benchmarks.md keeps
how each was measured, where and when, and every earlier value.
"""

from __future__ import annotations

import argparse
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RECORD = ROOT / "benchmarks" / "figures.toml"
TABLE_PAGE = ROOT / "docs" / "guide" / "benchmarks.md"
BEGIN, END = "<!-- figures: begin (python -m benchmarks.figures --write) -->", "<!-- figures: end -->"
QUOTE = re.compile(r"(?P<value>[^\s|(]*(?: [^\s|(<]+)?)<!-- figure (?P<name>[a-z0-9_]+) -->")
SAMPLE = re.compile(r"wrote torus-sim-results/jobs\.csv, torus-sim-results/summary\.json \((?P<value>[^)]+)\)")


def record() -> dict:
    """benchmarks/figures.toml as ``{"figures": {name: value}, "rows": [{benchmark, now, goal}]}``."""
    return tomllib.loads(RECORD.read_text(encoding="utf-8"))


def table(data: dict) -> str:
    """The benchmarks page's table (Markdown) from the record's rows, each ``{name}`` replaced by its figure."""
    lines = ["| benchmark | now | goal |", "|---|---|---|"]
    for row in data["rows"]:
        lines.append(f"| {row['benchmark']} | {row['now'].format(**data['figures'])} | {row['goal']} |")
    return "\n".join(lines)


def pages() -> list[Path]:
    """The user pages: README.md and docs/**/*.md, the benchmark history (docs/benchmarks.md) and docs/CHECKS.md aside."""
    history = {ROOT / "docs" / "benchmarks.md", ROOT / "docs" / "CHECKS.md"}
    return [ROOT / "README.md", *(page for page in sorted((ROOT / "docs").rglob("*.md")) if page not in history)]


def problems(data: dict) -> list[str]:
    """Every quote whose value is not the recorded one, every unknown name, and a stale table; empty when all agree."""
    figures = data["figures"]
    found = []
    for page in pages():
        text = page.read_text(encoding="utf-8")
        where = page.relative_to(ROOT)
        for match in QUOTE.finditer(text):
            name, value = match["name"], match["value"].strip()
            if name not in figures:
                found.append(f"{where}: quotes an unknown figure {name!r}")
            elif not value.endswith(figures[name]):
                found.append(f"{where}: quotes {name} as {value!r}, the record says {figures[name]!r}")
        if page.name == "README.md":
            for match in SAMPLE.finditer(text):
                if match["value"] != figures["main_job_wall"]:
                    found.append(
                        f"{where}: the sample run prints {match['value']!r}, the record says {figures['main_job_wall']!r}"
                    )
    page = TABLE_PAGE.read_text(encoding="utf-8")
    if BEGIN not in page or END not in page or page.split(BEGIN, 1)[1].split(END, 1)[0].strip() != table(data):
        found.append(f"{TABLE_PAGE.relative_to(ROOT)}: the table is not the record's (python -m benchmarks.figures --write)")
    return found


def write(data: dict) -> None:
    """Replace the table between the markers of docs/guide/benchmarks.md with :func:`table`."""
    page = TABLE_PAGE.read_text(encoding="utf-8")
    before, _, rest = page.partition(BEGIN)
    _, _, after = rest.partition(END)
    TABLE_PAGE.write_text(f"{before}{BEGIN}\n{table(data)}\n{END}{after}", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    """``--check`` (exit 1 and each problem on a line) or ``--write``; exit 0."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--check", action="store_true", help="compare every quote and the table with the record")
    action.add_argument("--write", action="store_true", help="rewrite the benchmarks page's table from the record")
    args = parser.parse_args(argv)
    data = record()
    if args.write:
        write(data)
        print(f"wrote the table of {TABLE_PAGE.relative_to(ROOT)}")
        return 0
    found = problems(data)
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
