"""A calibrated replay against the textbook replay of the same log (``python -m benchmarks.run --only sites``).

Issue 77's cost target: a replay with a log's production settings (``torus-sim run experiments/sites/LOG.toml``: the
cycle, the multifactor priority, the per-user limit, maintenance windows, the effective size) takes at most twice
the textbook replay of the same log (``torus-sim run --platform cluster --workload pwa:LOG --failures none --policy
FCFS-EASY``). Both are whole processes (:func:`benchmarks.footprint.measure`: the wall time from outside, imports
and the log's reading included), alternated, the median of ``repeats`` each, for the three logs with fitted
settings (RICC's site is its textbook set-up). With ``--baseline PATH`` the other checkout's site replays run in
the same loop (this checkout's site files: a baseline's engine must read them), and the ratio to them is printed.

The logs are read from the data mirror (``TORUS_SIM_DATA``, else ``../shared/data``) by their ``pwa:`` names.
"""

from __future__ import annotations

import statistics
from pathlib import Path

from benchmarks.footprint import measure

__all__ = ["LOGS", "site_replays"]

LOGS = ("CTC-SP2", "SDSC-SP2", "HPC2N")
"""The logs whose site files hold fitted settings."""

SITES = Path(__file__).resolve().parents[1] / "experiments" / "sites"


def _textbook(log: str) -> list[str]:
    return ["--platform", "cluster", "--workload", f"pwa:{log}", "--failures", "none", "--policy", "FCFS-EASY"]


def site_replays(baseline: Path | None = None, repeats: int = 2) -> list[dict]:
    """Print and return one row per log: the site replay's and the textbook replay's wall seconds, and their ratio.

    Args:
        baseline: another checkout whose site replays run in the same loop (alternated), or None.
        repeats: runs of each command (the median is printed).

    Returns:
        ``[{"log", "site_s", "textbook_s", "ratio", "baseline_s"}, ...]`` (``baseline_s`` None without a baseline).
    """
    rows = []
    print(f"Site replays against the textbook replay of the same log (whole processes, median of {repeats}; goal <= 2x):")
    for log in LOGS:
        site = [str(SITES / f"{log}.toml")]
        times: dict[str, list[float]] = {"site": [], "textbook": [], "baseline": []}
        for _ in range(repeats):
            times["site"].append(measure(site)[0])
            times["textbook"].append(measure(_textbook(log))[0])
            if baseline is not None:
                times["baseline"].append(measure(site, baseline)[0])
        site_s, textbook_s = statistics.median(times["site"]), statistics.median(times["textbook"])
        baseline_s = statistics.median(times["baseline"]) if baseline is not None else None
        row = {"log": log, "site_s": site_s, "textbook_s": textbook_s, "ratio": site_s / textbook_s, "baseline_s": baseline_s}
        rows.append(row)
        line = f"  {log:<9} site {site_s:.2f} s, textbook {textbook_s:.2f} s: {row['ratio']:.2f}x"
        if baseline_s is not None:
            line += f"; the baseline's site {baseline_s:.2f} s (this checkout / baseline {site_s / baseline_s:.2f})"
        print(line, flush=True)
    return rows
