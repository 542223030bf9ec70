"""Run the benchmarks of another checkout beside this one's, in the same run, and print the ratios.

``python -m benchmarks.run --baseline PATH`` runs, section by section, ``python -m benchmarks.run
--only SECTION`` of the checkout at PATH (in its own process, with PATH first on ``sys.path``) and
then this checkout's same section, and prints both outputs and, at the end, the ratio of every
figure both print (this checkout / the baseline: above 1 is slower). A refactor that must not slow
anything down is checked against the commit before it this way, on the same machine at the same time.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

__all__ = ["FIGURES", "figures_of", "run_section"]

FIGURES = {
    "replay": [
        ("SDSC-SP2 replay, Krevat (s)", r"wall time\s+([\d.]+) s"),
        ("same replay, balancing (s)", r"same replay: ([\d.]+) s"),
    ],
    "partitions": [("slowest partition query (µs)", r"slowest table query ([\d.]+) µs")],
    "sweep": [("Dask sweep, 2 workers (s)", r"2 workers ([\d.]+) s")],
    "rigid": [("RIGID 30 x 100, R-LIST-0 (s)", r"^\s+([\d.]+) s for [\d,]+ attempts")],
    "moldable": [
        ("MOLDABLE LPA (s)", r"LPA LPT.*\n\s+([\d.]+) s for"),
        ("MOLDABLE BATCH (s)", r"BATCH LPT.*\n\s+([\d.]+) s for"),
        ("MOLDABLE MINTIME (s)", r"MINTIME LPT.*\n\s+([\d.]+) s for"),
    ],
    "online": [("CTC FCFS-EASY (s)", r"FCFS-EASY\s+([\d.]+) s"), ("CTC PV-EASY (s)", r"PV-EASY\s+([\d.]+) s")],
}
"""Per section: (label, regular expression whose group is the figure) of the lines both versions print."""


def run_section(checkout: Path, section: str, extra: list[str]) -> str:
    """The output of one benchmark section of a checkout, run in its own process."""
    environment = {**os.environ, "PYTHONPATH": str(checkout)}
    command = [sys.executable, "-m", "benchmarks.run", "--only", section, *extra]
    done = subprocess.run(command, cwd=checkout, env=environment, capture_output=True, text=True)
    return done.stdout + (done.stderr if done.returncode else "")


def figures_of(section: str, output: str) -> dict[str, float]:
    """The figures of a section's output (label -> value)."""
    found = {}
    for label, pattern in FIGURES.get(section, []):
        match = re.search(pattern, output, re.MULTILINE)
        if match:
            found[label] = float(match.group(1))
    return found


def compare(baseline: Path, sections: list[str], extra: list[str]) -> None:
    """Run every section on the baseline and on this checkout, print both and the ratios."""
    here = Path(__file__).resolve().parents[1]
    rows = []
    for section in sections:
        before = run_section(baseline, section, extra)
        after = run_section(here, section, extra)
        print(f"== {section}: baseline {baseline}\n{before}\n== {section}: this checkout\n{after}", flush=True)
        old, new = figures_of(section, before), figures_of(section, after)
        rows += [(label, old[label], new[label]) for label in old if label in new]
    print("\nfigure | baseline | this checkout | ratio (>1: slower)")
    for label, old, new in rows:
        print(f"{label} | {old:g} | {new:g} | {new / old:.2f}")
