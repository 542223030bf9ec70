"""torus-sim in CQSim's mode beside CQSim itself, whole processes (``python -m benchmarks.cqsim --cqsim PATH``).

Issue 61's goal: EASY and conservative backfilling in CQSim's mode (``--swf-rules cqsim --event-order
each-event``) in at most 0.10x CQSim's wall time on CTC-SP2 and SDSC-SP2. CQSim's own time moves from one
session to the next (42.4 s on CTC-SP2 when the issue was filed, 60.1 s later on the same machine with the
same output), so both are measured here, one after the other, and the ratio is read between them.

CQSim is not part of torus-sim: ``PATH`` is a checkout of SPEAR-UIC/CQSim (commit d8bdbb0) prepared as
``../shared/peers/cqsim/README.md`` says (``debug_lvl = 0`` in ``src/Config/config_sys.set``; the EASY
backfill tests a candidate with its requested time; the header parser reads the first number of CTC's
``MaxNodes`` line). The logs are written into its ``data/InputFiles`` (requested processors, field 8, from
the allocated ones, field 5, where <= 0, as the peers' files were made) and it runs as
``python cqsim.py -j LOG -n LOG -b 1|2 -R 1000000 -o NAME`` from ``src``. Its EASY schedules are compared with the
peers' files: a different one means the checkout is not prepared as they were, and the line says so.

torus-sim runs through :func:`benchmarks.footprint.measure` (the installed command's function in a fresh
process; ``--baseline PATH`` runs another checkout the same way). The logs are read from ``../shared/data``
(``TORUS_SIM_DATA`` may name another mirror).
"""

from __future__ import annotations

import gzip
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.footprint import DATA, measure

__all__ = ["CASES", "compare", "cqsim_input", "cqsim_run"]

PEERS = DATA.parent / "peers" / "cqsim"

CASES = (
    ("CTC-SP2-1996-3.1-cln", "FCFS-EASY", 1),
    ("SDSC-SP2-1998-4.2-cln", "FCFS-EASY", 1),
    ("CTC-SP2-1996-3.1-cln", "conservative", 2),
    ("SDSC-SP2-1998-4.2-cln", "conservative", 2),
)
"""(log, torus-sim policy, CQSim's ``-b``: 1 EASY, 2 conservative)."""

GOAL = 0.10
"""torus-sim's wall over CQSim's (issue 61)."""


def cqsim_input(cqsim: Path, log: str) -> str:
    """Write ``log`` into CQSim's input folder as CQSim reads it (once); return the file's name there.

    Field 8 (requested processors, the only one CQSim reads) is set from field 5 (allocated) where it is <= 0.
    """
    name = f"{log}.swf"
    target = cqsim / "data" / "InputFiles" / name
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        with gzip.open(DATA / "swf" / f"{log}.swf.gz", "rt") as source, open(target, "w") as out:
            for line in source:
                fields = line.split()
                if fields and not line.startswith(";") and float(fields[7]) <= 0:
                    fields[7] = fields[4]
                    line = " ".join(fields) + "\n"
                out.write(line)
    for folder in ("Fmt", "Results", "Debug"):
        (cqsim / "data" / folder).mkdir(parents=True, exist_ok=True)
    return name


def cqsim_run(cqsim: Path, log: str, backfill: int) -> tuple[float, Path]:
    """CQSim's wall seconds on ``log`` with backfilling ``backfill`` (1 EASY, 2 conservative), and its job file.

    Raises:
        RuntimeError: CQSim failed (its last lines of output).
    """
    name = cqsim_input(cqsim, log)
    output = log.replace(".", "_")  # CQSim names its outputs after the input up to its first dot otherwise
    command = [sys.executable, "cqsim.py", "-j", name, "-n", name, "-b", str(backfill), "-R", "1000000", "-o", output]
    began = time.perf_counter()
    done = subprocess.run(command, cwd=cqsim / "src", capture_output=True, text=True, check=False)
    wall = time.perf_counter() - began
    if done.returncode != 0:
        raise RuntimeError(f"CQSim failed on {log}: {(done.stdout + done.stderr).strip()[-400:]}")
    return wall, cqsim / "data" / "Results" / f"{output}.rst"


def _same_as_peers(log: str, produced: Path) -> str:
    peers = PEERS / f"{log}.easy.rst.gz"
    if not peers.exists():
        return ""
    with gzip.open(peers, "rb") as expected:
        same = expected.read() == produced.read_bytes()
    return (
        "; CQSim's schedule = the peers' file"
        if same
        else "; CQSim's schedule differs from the peers' file: not prepared as they were"
    )


def compare(cqsim: Path, baseline: Path | None = None, repeats: int = 3) -> list[dict]:
    """Print and return one row per case: CQSim's wall, torus-sim's (median of ``repeats``), the ratio, the goal.

    Args:
        cqsim: the prepared CQSim checkout.
        baseline: another torus-sim checkout measured the same way (its wall and ratio printed too), or None.
        repeats: torus-sim runs per case and checkout (CQSim runs once: a minute or two each).
    """
    rows = []
    print("\n== CQSim's mode beside CQSim (issue 61: <= 0.10x) ==")
    for log, policy, backfill in CASES:
        arguments = ["--platform", "cluster", "--workload", str(DATA / "swf" / f"{log}.swf.gz"), "--policy", policy]
        arguments += ["--swf-rules", "cqsim", "--event-order", "each-event", "--failures", "none"]
        theirs, produced = cqsim_run(cqsim, log, backfill)
        ours = statistics.median(measure(arguments)[0] for _ in range(repeats))
        ratio = ours / theirs
        label = "-".join(log.split("-")[:2])
        line = f"  {label:8s} {policy:13s} CQSim {theirs:7.1f} s   torus-sim {ours:6.2f} s   {ratio:.3f}x"
        line += f" (goal <= {GOAL:.2f}x: {'met' if ratio <= GOAL else 'not met'})"
        row = {"log": log, "policy": policy, "cqsim_s": theirs, "torus_sim_s": ours, "ratio": ratio}
        if baseline is not None:
            before = statistics.median(measure(arguments, baseline)[0] for _ in range(repeats))
            line += f"   baseline {before:6.2f} s ({before / theirs:.3f}x)"
            row["baseline_s"] = before
        print(line + (_same_as_peers(log, produced) if backfill == 1 else ""), flush=True)
        rows.append(row)
    return rows


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cqsim", type=Path, required=True, help="a prepared checkout of SPEAR-UIC/CQSim")
    parser.add_argument("--baseline", type=Path, default=None, help="another torus-sim checkout measured beside this one")
    parser.add_argument("--repeats", type=int, default=3)
    parsed = parser.parse_args()
    compare(parsed.cqsim.resolve(), parsed.baseline.resolve() if parsed.baseline else None, parsed.repeats)
