"""A 10-million-job run on this machine, both forms issue 61 §1 asks for: an SWF log on disk and the Lublin model.

The benchmark writes the log (``python -m benchmarks.ten_million``, into ``--folder``, by default
``benchmarks/.cache``): RICC-2010-2's 447,794 job lines 23 times over (10,299,262 lines), copy k's job ids
and preceding-job ids moved by k x the log's largest id and its submit times by k x (its last submit + one
day), its header once. Then it runs ``torus-sim run`` on it (FCFS-EASY on RICC's 8,192 processors, no
failures) in a fresh process, on this checkout and, with ``--baseline PATH``, on another, and prints the
wall time and the process's own peak memory (VmHWM at its exit), with RICC's whole-log run beside it for
the "linear in the jobs" ratio (issue 61's targets: <= 400 MiB, <= 25x RICC's wall).

The other form is the built-in Lublin-Feitelson generator (``--workload lublin --workload-param
jobs=10299262``, the same number of jobs, seed 0), FCFS-EASY on a cluster of 8,192 nodes, its jobs made 65,536
at a time. ``--only swf`` or ``--only lublin`` runs one form. The SWF form takes ~19 minutes on this 2-core
machine (357 MiB at 4da8ecc) and writes its record (~3.5 GB) and its cleaned jobs to the temporary folder.
"""

from __future__ import annotations

import argparse
import gzip
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.footprint import _PEAK, _RUN

__all__ = ["COPIES", "LUBLIN_JOBS", "measure", "write_log"]

RICC = Path(__file__).resolve().parents[2] / "shared" / "data" / "swf" / "RICC-2010-2.swf.gz"
COPIES = 23
"""Copies of RICC-2010-2 end to end: 23 x 447,794 = 10,299,262 job lines."""
LUBLIN_JOBS = 10_299_262
"""Jobs of the Lublin-Feitelson form: as many as the SWF form's lines."""
DAY = 86_400


def write_log(path: Path, source: Path = RICC, copies: int = COPIES) -> int:
    """Write ``copies`` copies of the SWF log ``source`` end to end into ``path`` (gzip); returns the job lines written.

    Copy k's job ids (field 1) and preceding-job ids (field 17, where positive) are moved by k x the largest
    job id, its submit times (field 2) by k x (the last submit + one day); the header is the source's, once.
    """
    header, lines = [], []
    with gzip.open(source, "rt") as handle:
        for line in handle:
            if line.startswith(";"):
                header.append(line)
            elif line.strip():
                lines.append(line)
    rows = [line.split() for line in lines]
    largest = max(int(row[0]) for row in rows)
    shift = max(float(row[1]) for row in rows) + DAY
    written = 0
    with gzip.open(path, "wt", compresslevel=1) as out:
        out.writelines(header)
        out.write(f"; torus-sim benchmark: {source.name} x {copies}, ids + k x {largest}, submits + k x {shift:.0f} s\n")
        for copy in range(copies):
            ids, seconds = copy * largest, copy * shift
            for row in rows:
                fields = list(row)
                fields[0] = str(int(row[0]) + ids)
                fields[1] = f"{float(row[1]) + seconds:.0f}"
                if int(row[16]) > 0:
                    fields[16] = str(int(row[16]) + ids)
                out.write(" ".join(fields) + "\n")
            written += len(rows)
    return written


def measure(log: Path | str, root: Path | None = None) -> tuple[float, float]:
    """Wall seconds and peak MiB (the process's own VmHWM) of FCFS-EASY on ``log`` on RICC's 8,192 processors.

    ``log``: an SWF file, or ``lublin`` for the Lublin-Feitelson model with :data:`COPIES` x RICC's job count.
    """
    environment = dict(os.environ)
    if root is not None:
        environment["PYTHONPATH"] = str(root) + os.pathsep + environment.get("PYTHONPATH", "")
    with tempfile.TemporaryDirectory() as out:
        command = [sys.executable, "-c", _RUN, "run", "--platform", "cluster", "--policy", "FCFS-EASY"]
        if log == "lublin":
            command += ["--nodes", "8192", "--workload", "lublin", "--workload-param", f"jobs={LUBLIN_JOBS}"]
        else:
            command += ["--workload", str(log)]
        command += ["--failures", "none", "--no-progress", "--out", out]
        began = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, cwd=root, env=environment, check=False)
        wall = time.perf_counter() - began
    peaks = [line.split()[1] for line in done.stderr.splitlines() if line.startswith(_PEAK)]
    if done.returncode != 0 or not peaks:
        raise RuntimeError(f"the run failed: {done.stderr.strip()[-600:]}")
    return wall, int(peaks[-1]) / 1024


def main() -> None:
    """Write the log (once) and print this checkout's (and a baseline's) wall and peak on it and on RICC."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--folder", type=Path, default=Path(__file__).resolve().parent / ".cache")
    parser.add_argument("--baseline", type=Path, default=None, help="another checkout measured beside this one")
    parser.add_argument("--only", choices=("swf", "lublin"), default=None, help="one form only")
    args = parser.parse_args()
    args.folder.mkdir(parents=True, exist_ok=True)
    log = args.folder / f"RICC-2010-2-x{COPIES}.swf.gz"
    if args.only != "lublin" and not log.exists():
        began = time.perf_counter()
        partial = log.with_suffix(".part")
        lines = write_log(partial)
        partial.rename(log)
        print(
            f"wrote {log.name}: {lines:,} job lines, {log.stat().st_size / 2**20:,.0f} MiB, {time.perf_counter() - began:.0f} s"
        )
    forms = [(f"RICC-2010-2 x{COPIES}", log), (f"Lublin {LUBLIN_JOBS:,} jobs", "lublin")]
    forms = [(name, form) for name, form in forms if args.only is None or (form == "lublin") == (args.only == "lublin")]
    for label, root in (("this", None), ("baseline", args.baseline)):
        if label == "baseline" and root is None:
            continue
        ricc_wall, ricc_peak = measure(RICC, root)
        print(f"{label:8s} RICC-2010-2 once FCFS-EASY: {ricc_wall:,.1f} s, {ricc_peak:,.0f} MiB", flush=True)
        for name, form in forms:
            wall, peak = measure(form, root)
            print(
                f"{label:8s} {name} FCFS-EASY: {wall:,.0f} s, {peak:,.0f} MiB (goal <= 400 MiB); "
                f"{wall / ricc_wall:.1f}x RICC's wall (goal <= 25x)",
                flush=True,
            )


if __name__ == "__main__":
    main()
