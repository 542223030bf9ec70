"""Site replays: calibrated against textbook (``--only sites``), dependencies kept against not (``--only dependencies``).

Issue 77's cost target: a replay with a log's production settings (``torus-sim run experiments/sites/LOG.toml``: the
cycle, the multifactor priority, the per-user limit, maintenance windows, the effective size) takes at most twice
the textbook replay of the same log (``torus-sim run --platform cluster --workload pwa:LOG --failures none --policy
FCFS-EASY``). Both are whole processes (:func:`benchmarks.footprint.measure`: the wall time from outside, imports
and the log's reading included), alternated, the median of ``repeats`` each, for the three logs with fitted
settings (RICC's site is its textbook set-up). With ``--baseline PATH`` the other checkout's site replays run in
the same loop (this checkout's site files: a baseline's engine must read them), and the ratio to them is printed.

:func:`dependency_replays` times each log's site replay with ``--dependencies 1200`` against the same replay without.

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


DEPENDENCY_LOGS = (*LOGS, "RICC")
"""The logs whose dependency-preserving replays are measured (every log with a site file in the data mirror)."""


def dependency_replays(repeats: int = 3, within: float = 1200.0) -> list[dict]:
    """Print and return one row per log: its site replay with dependencies kept against the site replay as written.

    Both whole processes (:func:`benchmarks.footprint.measure`), alternated, the median of ``repeats`` each; the peak
    memory is the larger over the runs (``dependencies = within`` reads the log's own schedule and holds each job's
    dependency: the memory grows with the log).

    Args:
        repeats: runs of each command.
        within: the longest think time kept as a dependency, seconds.

    Returns:
        ``[{"log", "site_s", "dependent_s", "ratio", "site_mib", "dependent_mib"}, ...]``.
    """
    rows = []
    print(f"Dependency-preserving replays against the site replay (whole processes, median of {repeats}):")
    for log in DEPENDENCY_LOGS:
        site = [str(SITES / f"{log}.toml")]
        runs: dict[str, list[tuple[float, float]]] = {"site": [], "dependent": []}
        for _ in range(repeats):
            runs["site"].append(measure(site))
            runs["dependent"].append(measure([*site, "--dependencies", f"{within:g}"]))
        row = {"log": log}
        for name, measured in runs.items():
            row[f"{name}_s"] = statistics.median(wall for wall, _ in measured)
            row[f"{name}_mib"] = max(peak for _, peak in measured)
        row["ratio"] = row["dependent_s"] / row["site_s"]
        rows.append(row)
        print(
            f"  {log:<9} site {row['site_s']:.2f} s, {row['site_mib']:.1f} MiB; with dependencies "
            f"{row['dependent_s']:.2f} s ({row['ratio']:.2f}x), {row['dependent_mib']:.1f} MiB",
            flush=True,
        )
    return rows
