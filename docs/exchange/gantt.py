"""The README's evalys Gantt chart: a real run written as Batsim's job record, drawn by evalys.

SDSC-SP2's first 150 jobs on the 4x4x8 torus with 40 synthetic failures (seed 0; all 40 inside the
prefix's span: ``--reduced-failures count``), Krevat's scheduler; ``torus-sim run ... --batsim`` writes
``batsim_jobs.csv``, kept beside this script, and evalys (``JobSet.from_csv(...).gantt()``) draws it.
Run from the repository root (needs evalys: ``pip install evalys``):

    python docs/exchange/gantt.py           # re-run, rewrite batsim_jobs.csv and the README's PNG
    python docs/exchange/gantt.py --check   # re-run and compare with the committed batsim_jobs.csv (exit 1 if not identical)
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

from torus_sim.interfaces.cli import main as torus_sim

HERE = Path(__file__).resolve().parent
SDSC = HERE.parents[2] / "shared" / "data" / "swf" / "SDSC-SP2-1998-4.2-cln.swf.gz"
RECORD = HERE / "batsim_jobs.csv"
COMMAND = ["run", "--workload", str(SDSC), "--max-jobs", "150", "--failures", "synthetic:40", "--reduced-failures", "count"]
"""The run drawn: 40 failures, 26 job kills, 22 migrations (Krevat's scheduler, seed 0)."""


def run(folder: Path) -> Path:
    """Run :data:`COMMAND` with the Batsim job record into ``folder``; returns the record's path."""
    assert torus_sim([*COMMAND, "--batsim", "--out", str(folder), "--no-progress"]) == 0
    return folder / "batsim_jobs.csv"


def draw(record: Path) -> Path:
    """Draw the record's Gantt chart with evalys into docs/images; returns the PNG path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    try:
        from evalys.jobset import JobSet
    except ImportError:  # not a dependency of torus-sim itself
        raise SystemExit("docs/exchange/gantt.py draws with evalys, which is not installed: pip install evalys") from None
    jobset = JobSet.from_csv(str(record))
    jobset.gantt(title="SDSC-SP2, first 150 jobs, 4x4x8 torus, 40 failures: evalys Gantt of torus-sim's batsim_jobs.csv")
    figure = plt.gcf()
    figure.set_size_inches(12, 5)
    axis = figure.axes[0]
    axis.set_xlabel("time (s)")
    axis.set_ylabel("supernode")
    out = HERE.parent / "images" / "evalys_gantt_sdsc.png"
    figure.savefig(out, dpi=90, bbox_inches="tight")
    return out


def check(record: Path) -> int:
    """Compare a fresh record with the committed one: 0 identical, 1 (with the first difference printed) not."""
    fresh, committed = record.read_text().splitlines(), RECORD.read_text().splitlines()
    if fresh == committed:
        return 0
    differing = [index for index, (a, b) in enumerate(zip(fresh, committed, strict=False)) if a != b]
    first = differing[0] if differing else min(len(fresh), len(committed))
    print(f"docs/exchange: batsim_jobs.csv line {first + 1} differs (now {len(fresh)} lines, committed {len(committed)})")
    print(
        f"docs/exchange: {len(differing) + abs(len(fresh) - len(committed))} of {len(committed)} lines of batsim_jobs.csv differ"
    )
    return 1


def main(argv: list[str] | None = None) -> int:
    """Re-run; with ``--check`` compare with the committed record, else rewrite it and redraw the chart."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the committed batsim_jobs.csv, draw nothing")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        record = run(Path(folder))
        if args.check:
            return check(record)
        shutil.copyfile(record, RECORD)
    print(f"wrote {RECORD} and {draw(RECORD)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
