"""The command line's start-up (``python -m benchmarks.run --only startup``).

Seconds from launch to exit of ``torus-sim --help``, ``torus-sim run --help`` and an argument error
(``torus-sim run --no-such-option``, exit 2), each the median of 7 launches in fresh processes. Baseline
in the same run: the interpreter alone (``python -c pass``) and the import of the libraries a run
needs (pandas, Mesa, scipy: what every command imported before issue 44). Goal (issue 44 §5): under
0.5 s for ``--help`` and for argument errors on this 2-core machine, quiet.
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import time

__all__ = ["LAUNCHES", "command_line_startup", "launch_seconds"]

LAUNCHES = {
    "torus-sim --help": ["--help"],
    "torus-sim run --help": ["run", "--help"],
    "argument error (exit 2)": ["run", "--no-such-option"],
}


def launch_seconds(command: list[str], repeats: int = 7) -> float:
    """The median wall time of ``repeats`` launches of ``command`` (a list of arguments) to its exit, seconds."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def command_line_startup(repeats: int = 7) -> dict[str, float]:
    """Print and return the start-up rows: each launch's median seconds and its ratio to the interpreter alone."""
    entry = shutil.which("torus-sim")
    program = [entry] if entry else [sys.executable, "-m", "torus_sim.interfaces.cli"]
    floor = launch_seconds([sys.executable, "-c", "pass"], repeats)
    libraries = launch_seconds([sys.executable, "-c", "import pandas, mesa, scipy.spatial"], repeats)
    print(f"\n== Command-line start-up (median of {repeats} launches; goal < 0.5 s) ==")
    print(f"  {'python -c pass (baseline)':32s} {floor:6.2f} s")
    print(f"  {'import pandas, mesa, scipy':32s} {libraries:6.2f} s  ({libraries / floor:4.1f}x the interpreter)")
    rows = {}
    for label, arguments in LAUNCHES.items():
        seconds = launch_seconds(program + arguments, repeats)
        rows[label] = seconds
        verdict = "ok" if seconds < 0.5 else "over the 0.5 s goal"
        print(f"  {label:32s} {seconds:6.2f} s  ({seconds / floor:4.1f}x the interpreter; {verdict})")
    return rows
