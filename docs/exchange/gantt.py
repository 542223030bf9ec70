"""The README's evalys Gantt chart: a real run written as Batsim's job record, drawn by evalys.

SDSC-SP2's first 150 jobs on the 4x4x8 torus with 40 synthetic failures (seed 0), Krevat's
scheduler; ``torus-sim run ... --batsim`` writes ``batsim_jobs.csv`` and evalys
(``JobSet.from_csv(...).gantt()``) draws it. Run from the repository root (needs evalys:
``pip install evalys``):

    python docs/exchange/gantt.py
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

try:
    from evalys.jobset import JobSet
except ImportError:  # not a dependency of torus-sim itself
    raise SystemExit("docs/exchange/gantt.py draws with evalys, which is not installed: pip install evalys") from None

from torus_sim.cli import main  # noqa: E402

HERE = Path(__file__).resolve().parent
SDSC = HERE.parents[2] / "shared" / "data" / "swf" / "SDSC-SP2-1998-4.2-cln.swf.gz"


def draw() -> Path:
    """Run, write the job record, draw its Gantt chart with evalys; returns the PNG path."""
    with tempfile.TemporaryDirectory() as folder:
        command = ["run", "--workload", str(SDSC), "--max-jobs", "150", "--failures", "synthetic:40"]
        assert main([*command, "--batsim", "--out", folder, "--no-progress"]) == 0
        jobset = JobSet.from_csv(str(Path(folder) / "batsim_jobs.csv"))
    jobset.gantt(title="SDSC-SP2, first 150 jobs, 4x4x8 torus, 40 failures: evalys Gantt of torus-sim's batsim_jobs.csv")
    figure = plt.gcf()
    figure.set_size_inches(12, 5)
    axis = figure.axes[0]
    axis.set_xlabel("time (s)")
    axis.set_ylabel("supernode")
    out = HERE.parent / "images" / "evalys_gantt_sdsc.png"
    figure.savefig(out, dpi=90, bbox_inches="tight")
    return out


if __name__ == "__main__":
    print(f"wrote {draw()}")
