"""Whole-process wall time and peak memory of the runs people start (``python -m benchmarks.run --only footprint``).

Issue 61's targets, each a ``torus-sim run`` in a fresh process, its wall time measured from outside and its
peak resident memory read by the process itself at its exit (VmHWM: every byte it held, imports included),
beside the same command on a baseline checkout in the same run (``--baseline PATH``):

* the README's main job (goal <= 1.5 s) and a 1,000-job run (<= 0.8 s);
* CTC-SP2 under FCFS-EASY in CQSim's mode (<= 150 MiB) and SDSC-SP2 under conservative backfilling in it;
* RICC-2010-2 (447,794 jobs) under FCFS-EASY on its 8,192 processors (<= 250 MiB);
* what a run has imported when its first job is about to run (<= 60 MiB), and whether a run with a
  progress bar starts a second process (multiprocessing's resource tracker, under the ``spawn`` start
  method: macOS's, Windows' and Python 3.14's default).

The logs are read from ``../shared/data`` (``TORUS_SIM_DATA`` may name another mirror). Each command
writes into a temporary folder; ``--no-progress`` keeps the terminal quiet except where the progress
bar is what is measured.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

__all__ = ["CASES", "first_job_probe", "footprint", "measure"]

DATA = Path(os.environ.get("TORUS_SIM_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data")

CASES = (
    ("README main job (torus-sim run)", [], None, 1.5),
    ("1,000-job run", ["--max-jobs", "1000"], None, 0.8),
    (
        "CTC-SP2 FCFS-EASY, CQSim mode",
        ["--platform", "cluster", "--workload", "swf/CTC-SP2-1996-3.1-cln.swf.gz", "--policy", "FCFS-EASY"]
        + ["--swf-rules", "cqsim", "--event-order", "each-event", "--failures", "none"],
        150,
        None,
    ),
    (
        "SDSC-SP2 conservative, CQSim mode",
        ["--platform", "cluster", "--workload", "swf/SDSC-SP2-1998-4.2-cln.swf.gz", "--policy", "conservative"]
        + ["--swf-rules", "cqsim", "--event-order", "each-event", "--failures", "none"],
        None,
        None,
    ),
    (
        "RICC-2010-2 FCFS-EASY (447,794 jobs)",
        ["--platform", "cluster", "--workload", "swf/RICC-2010-2.swf.gz", "--policy", "FCFS-EASY", "--failures", "none"],
        250,
        None,
    ),
)
"""(label, ``torus-sim run`` arguments with logs relative to the data folder, goal MiB or None, goal s or None)."""

_FIRST_JOB = """
import multiprocessing, sys
from torus_sim.engine import model as engine_model
def first_job(self, *args, **kwargs):
    with open("/proc/self/status") as status:
        peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM")) / 1024
    heavy = sorted(name for name in ("pandas", "scipy", "pyarrow", "matplotlib", "networkx", "mesa.datacollection") if name in sys.modules)
    print("PROBE", peak, ",".join(heavy) or "-", flush=True)
    print("MODULES", " ".join(name for name in sorted(sys.modules) if not name.startswith("__")), flush=True)
    raise SystemExit(0)
engine_model.SchedulingModel.run = first_job
from torus_sim.interfaces.cli import main
sys.exit(main(sys.argv[1:]))
"""

_TRACKER = """
import multiprocessing, multiprocessing.resource_tracker as tracker
multiprocessing.set_start_method("spawn")
from torus_sim.experiments.runner import Scenario, run
run(Scenario(max_jobs=300), progress=True)
print("PROBE", tracker._resource_tracker._pid is not None)
"""


def _environment(root: Path | None) -> dict:
    env = dict(os.environ)
    if root is not None:
        env["PYTHONPATH"] = str(root)
    return env


def measure(arguments: list[str], root: Path | None = None) -> tuple[float, float]:
    """Wall seconds and peak resident MiB of ``python -m torus_sim.interfaces.cli run ARGUMENTS`` in a fresh process.

    Args:
        arguments: the run's arguments (logs already absolute).
        root: another checkout whose code runs (its folder on ``PYTHONPATH`` and as the working folder), or None.

    Returns:
        ``(wall seconds, peak MiB)``: the child's VmHWM at its exit (:data:`_RUN`), its own and nothing else's.

    Raises:
        RuntimeError: the run failed (its last lines of error output).
    """
    with tempfile.TemporaryDirectory() as out:
        command = [sys.executable, "-c", _RUN, "run", *arguments, "--no-progress", "--out", out]
        began = time.perf_counter()
        child = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=root, env=_environment(root), text=True
        )
        errors = child.stderr.read()
        child.wait()
        wall = time.perf_counter() - began
    peaks = [line.split()[1] for line in errors.splitlines() if line.startswith(_PEAK)]
    if child.returncode != 0 or not peaks:
        raise RuntimeError(f"{' '.join(command[3:])} failed: {errors.strip()[-400:]}")
    return wall, int(peaks[-1]) / 1024


_PEAK = "TORUS_SIM_PEAK_KB"

_RUN = f"""
import atexit, sys

def _peak():  # the process's own high-water mark (VmHWM: its memory since exec, imports included)
    with open("/proc/self/status") as status:
        print("{_PEAK}", next(line.split()[1] for line in status if line.startswith("VmHWM")), file=sys.stderr)

atexit.register(_peak)
try:
    from torus_sim.interfaces.cli import command
except ImportError:  # a checkout from before the installed command had a function of its own
    from torus_sim.interfaces.cli import main

    def command():
        return main(sys.argv[1:])
sys.exit(command())
"""
"""``torus-sim`` (the installed command's function, ``command``) with its peak resident memory printed at exit. The child's ``ru_maxrss`` from
``os.wait4`` is not its own: Linux carries the forking parent's high-water mark over into the child (``fork``
copies it, ``exec`` keeps the larger), so every run read at least this benchmark's own 159 MiB."""


_IMPORTS = """
import importlib, sys
for name in sys.stdin.read().split():
    try:
        importlib.import_module(name)
    except Exception:
        pass
with open("/proc/self/status") as status:
    print("PROBE", next(int(line.split()[1]) for line in status if line.startswith("VmHWM")) / 1024)
"""


def _probe(source: str, arguments: list[str], root: Path | None, given: str = "") -> list[str]:
    with tempfile.TemporaryDirectory() as out:
        extra = [*arguments, "--out", out] if arguments else []
        done = subprocess.run(
            [sys.executable, "-c", source, *extra],
            capture_output=True,
            text=True,
            cwd=root,
            env=_environment(root),
            check=False,
            input=given,
        )
    lines = {
        line.split(" ", 1)[0]: line.split()[1:] for line in done.stdout.splitlines() if line.startswith(("PROBE", "MODULES"))
    }
    if "PROBE" not in lines:
        raise RuntimeError(f"the probe printed nothing: {done.stderr.strip()[-400:]}")
    return lines["PROBE"] + ([" ".join(lines["MODULES"])] if "MODULES" in lines else [])


def first_job_probe(root: Path | None = None) -> tuple[float, str, float]:
    """The README's main job when its first job is about to run: peak MiB, table libraries imported, imports' own MiB.

    The last is the peak of a fresh process that imports the same modules and nothing else.
    """
    peak, heavy, modules = _probe(_FIRST_JOB, ["run", "--no-progress"], root)
    (imports,) = _probe(_IMPORTS, [], root, modules)
    return float(peak), heavy, float(imports)


def tracker_started(root: Path | None = None) -> bool:
    """Whether a run with a progress bar started multiprocessing's resource tracker (a second process) under ``spawn``."""
    return _probe(_TRACKER, [], root)[0] == "True"


def _absolute(arguments: list[str]) -> list[str]:
    return [str(DATA / argument) if argument.startswith("swf/") else argument for argument in arguments]


def footprint(baseline: Path | None = None, repeats: int = 3) -> list[dict]:
    """Print and return one row per case: this checkout's wall and peak (the median of ``repeats`` for runs under 10 s), the baseline's, ratios.

    Args:
        baseline: another checkout measured the same way in the same run (alternated with this one), or None.
        repeats: runs of each short case per checkout (the median is printed); long ones run once.
    """
    import statistics

    rows = []
    print("\n== Footprint: whole process, torus-sim run (issue 61) ==")
    roots = [("this", None)] + ([("baseline", baseline)] if baseline is not None else [])
    for label, arguments, goal_mib, goal_s in CASES:
        arguments = _absolute(arguments)
        found = {}
        for name, root in roots:
            walls, peaks = [], []
            for _ in range(repeats):
                wall, peak = measure(arguments, root)
                walls.append(wall)
                peaks.append(peak)
                if wall > 10:
                    break
            found[name] = (statistics.median(walls), statistics.median(peaks))
        wall, peak = found["this"]
        goals = " ".join(
            part for part in (f"goal <= {goal_mib} MiB" if goal_mib else "", f"<= {goal_s} s" if goal_s else "") if part
        )
        line = f"  {label:40s} {wall:7.2f} s {peak:7.0f} MiB"
        if "baseline" in found:
            base_wall, base_peak = found["baseline"]
            line += f"   baseline {base_wall:7.2f} s {base_peak:7.0f} MiB   ratio {wall / base_wall:4.2f}x time {peak / base_peak:4.2f}x memory"
        print(line + (f"   ({goals})" if goals else ""), flush=True)
        rows.append({"case": label, "wall_s": wall, "peak_mib": peak, **({"baseline": found["baseline"]} if baseline else {})})
    for name, root in roots:
        peak, heavy, imports = first_job_probe(root)
        started = tracker_started(root)
        print(
            f"  {name:8s} README main job at its first job: {peak:5.0f} MiB peak, of which its imports {imports:5.0f} MiB "
            f"(goal <= 60); table libraries imported: {heavy}; second process under spawn: {'yes' if started else 'no'}",
            flush=True,
        )
        rows.append({"case": f"first job ({name})", "peak_mib": peak, "imports_mib": imports, "heavy": heavy, "tracker": started})
    return rows


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", type=Path, default=None, help="another checkout measured beside this one")
    parser.add_argument("--repeats", type=int, default=3)
    parsed = parser.parse_args()
    footprint(parsed.baseline.resolve() if parsed.baseline else None, parsed.repeats)
