"""PV-EASY's experiments on a real trace, from a TOML file to CSV + PNG.

File format::

    title = "..."
    reference = "PV-EASY §5.2, Tables 4-5"
    workload = "../../../shared/data/swf/CTC-SP2-1996-3.1-cln.swf.gz"   # relative to the file
    processors = 430
    seeds = [0]                 # one replay per run and seed (the virtual predictor draws from it)
    [[run]]                     # one per scheduler configuration
    name = "PV-EASY"
    policy = "PV-EASY"          # FCFS, FCFS-EASY, SJF-EASY, conservative, PV-EASY
    predictor = "last"          # estimate, last, exact, virtual:x
    preemption = "kill"         # kill, checkpoint, suspend
    time_cost = 60              # seconds per checkpoint / restart / resume
    [[figure]]                  # bars: y metrics per x value, one bar per series value
    name = "mbs"
    x = "name"
    y = ["mbs", "mwbs"]
    table = "results"           # or "size_groups" (blocked jobs by size, Figs. 2-3)

Outputs in the results folder: ``results.csv`` (one row per run and seed: the run's fields and
every summary metric), ``size_groups.csv`` (MBS / MWBS of blocked jobs per size group),
``comparison.csv`` (our number beside the paper's where the paper prints one for the trace), one
PNG per figure, and ``runs/<key>.json`` per finished replay (so an interrupted experiment resumes).
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from predictors.runtime import make_runtime_predictor
from torus_sim.errors import ConfigurationError
from torus_sim.files import atomic_write
from torus_sim.online.jobs import load_online_workload
from torus_sim.online.metrics import size_group_table
from torus_sim.online.model import PREEMPTION_MODES, Preemption
from torus_sim.online.runs import ONLINE_POLICIES, run_online

__all__ = ["PAPER_CTC", "OnlineExperiment", "compare_with_paper", "draw_bars", "load_online_experiment", "run_online_experiment"]

PAPER_CTC = {
    ("EASY", "blocked_jobs"): 3833,
    ("EASY", "delayed_jobs"): 736,
    ("EASY", "mean_delay_min"): 80.05,
    ("EASY", "max_delay_h"): 14.81,
    ("EASY-Last", "violations"): 92,
    ("EASY-Last", "violation_mean_parallelism"): 147.78,
    ("EASY-Last", "mean_dtr_min"): 100.19,
    ("EASY-Last", "mean_si"): 4.78,
    ("EASY-Last", "max_dtr_h"): 15.13,
    ("EASY-Last", "max_si"): 137.60,
    ("PV-EASY", "total_load"): 0.686166,
    ("PV-EASY", "wasted_load"): 0.0248,
    ("PV-EASY", "preempted_jobs"): 10172,
    ("PV-EASY", "preempted_rate"): 0.1317,
    ("PV-EASY", "mkt"): 1.72,
    ("PV-EASY", "mean_rtw"): 0.3895,
    ("CP-PV-EASY-60", "preempted_jobs"): 9621,
    ("CP-PV-EASY-120", "preempted_jobs"): 9998,
    ("CP-PV-EASY-180", "preempted_jobs"): 10499,
    ("CP-PV-EASY-60", "mkt"): 1.680,
    ("CP-PV-EASY-120", "mkt"): 1.705,
    ("CP-PV-EASY-180", "mkt"): 1.696,
    ("CP-PV-EASY-60", "wasted_load"): 0.0170,
    ("CP-PV-EASY-120", "wasted_load"): 0.0275,
    ("CP-PV-EASY-180", "wasted_load"): 0.0380,
    ("VM-PV-EASY-60", "preempted_jobs"): 10489,
    ("VM-PV-EASY-120", "preempted_jobs"): 10486,
    ("VM-PV-EASY-180", "preempted_jobs"): 10442,
    ("VM-PV-EASY-60", "mkt"): 1.640,
    ("VM-PV-EASY-120", "mkt"): 1.649,
    ("VM-PV-EASY-180", "mkt"): 1.6494,
    ("VM-PV-EASY-60", "wasted_load"): 0.0333,
    ("VM-PV-EASY-120", "wasted_load"): 0.0332,
    ("VM-PV-EASY-180", "wasted_load"): 0.0339,
}
"""CTC values printed by PV-EASY: Tables 1, 2, 4, 5, 6, 7, 8, 9, 10, 11 (run name, metric) -> value."""

_RUN_FIELDS = {"name", "policy", "predictor", "preemption", "time_cost", "checkpoint_interval", "slowdown"}


@dataclass
class FigureBars:
    """A bar figure: ``y`` metrics (one panel each) per ``x`` value, one bar per ``series`` value."""

    name: str
    x: str
    y: tuple[str, ...]
    series: str = ""
    table: str = "results"
    title: str = ""


@dataclass
class OnlineExperiment:
    """A parsed online experiment file (see the module docstring)."""

    path: Path
    title: str
    reference: str
    workload: Path
    processors: int | None
    seeds: list[int]
    runs: list[dict]
    figures: list[FigureBars] = field(default_factory=list)
    output: str = ""


def load_online_experiment(path: str | Path) -> OnlineExperiment:
    """Read and check an online experiment file.

    Raises:
        ConfigurationError: invalid TOML, no runs, an unknown run field, policy, predictor or
            preemption mode, duplicate run names, or a figure without name / x / y.
    """
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as error:
        raise ConfigurationError(f"{path}: not valid TOML: {error}") from None
    if data.get("kind") != "online":
        raise ConfigurationError(f"{path}: kind must be 'online'")
    runs = [dict(run) for run in data.get("run", [])]
    if not runs:
        raise ConfigurationError(f"{path}: no [[run]]")
    names = set()
    for run in runs:
        unknown = set(run) - _RUN_FIELDS
        if unknown:
            raise ConfigurationError(f"{path}: unknown run field(s) {sorted(unknown)}; known: {sorted(_RUN_FIELDS)}")
        run.setdefault("predictor", "estimate")
        run.setdefault("preemption", "kill")
        run.setdefault("time_cost", 60.0)
        run.setdefault("name", f"{run.get('policy')}/{run['predictor']}")
        if run.get("policy") not in ONLINE_POLICIES:
            raise ConfigurationError(
                f"{path}: run {run['name']!r}: unknown policy {run.get('policy')!r}; choose from {ONLINE_POLICIES}"
            )
        if run["preemption"] not in PREEMPTION_MODES:
            raise ConfigurationError(f"{path}: run {run['name']!r}: preemption must be one of {PREEMPTION_MODES}")
        make_runtime_predictor(run["predictor"], None)  # raises on an unknown name
        if run["name"] in names:
            raise ConfigurationError(f"{path}: two runs are named {run['name']!r}")
        names.add(run["name"])
    figures = []
    for raw in data.get("figure", []):
        if not {"name", "x", "y"} <= set(raw):
            raise ConfigurationError(f"{path}: a figure needs name, x and y")
        figures.append(
            FigureBars(
                raw["name"], raw["x"], tuple(raw["y"]), raw.get("series", ""), raw.get("table", "results"), raw.get("title", "")
            )
        )
    workload = Path(data.get("workload", ""))
    if not workload.is_absolute():
        workload = (path.parent / workload).resolve()
    seeds = data.get("seeds", [0])
    if not isinstance(seeds, list) or not all(isinstance(seed, int) for seed in seeds) or not seeds:
        raise ConfigurationError(f"{path}: seeds must be a non-empty list of integers")
    return OnlineExperiment(
        path,
        data.get("title", path.stem),
        data.get("reference", ""),
        workload,
        data.get("processors"),
        seeds,
        runs,
        figures,
        data.get("output", ""),
    )


def _replay(workload_path: str, processors: int | None, max_jobs: int | None, run: dict, seed: int) -> dict:
    workload = load_online_workload(workload_path, processors, max_jobs)
    preemption = Preemption(
        run["preemption"],
        float(run.get("checkpoint_interval", 3600.0)),
        float(run["time_cost"]),
        float(run.get("slowdown", 0.05)),
    )
    result = run_online(workload, run["policy"], run["predictor"], preemption, seed)
    model_jobs = result.jobs
    summary = {**run, **result.summary, "seed": seed, "processors": workload.processors, "cleaning": dict(workload.counts)}
    groups = size_group_table(model_jobs, workload.processors)
    return {"summary": summary, "size_groups": groups.to_dict("records")}


def run_online_experiment(
    experiment: OnlineExperiment, out: str | Path, workers: int = 1, max_jobs: int | None = None, progress: bool = True
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Run every (run, seed) of an experiment, storing each replay as it finishes.

    Args:
        experiment: the parsed file.
        out: results folder.
        workers: processes.
        max_jobs: replay only the first jobs (slices for tests).
        progress: show a tqdm bar.

    Returns:
        (results: one row per run and seed; size groups: one row per run, seed and group).
    """
    from tqdm import tqdm

    folder = Path(out) / "runs"
    folder.mkdir(parents=True, exist_ok=True)
    tasks = []
    for run in experiment.runs:
        for seed in experiment.seeds:
            key = hashlib.sha256(
                json.dumps([str(experiment.workload), experiment.processors, max_jobs, run, seed], sort_keys=True).encode()
            ).hexdigest()[:16]
            tasks.append((key, run, seed))
    stored: dict[str, dict] = {}
    todo = []
    for key, run, seed in tasks:
        path = folder / f"{key}.json"
        if path.exists():
            stored[key] = json.loads(path.read_text())
        else:
            todo.append((key, run, seed))

    def keep(key: str, found: dict) -> None:
        atomic_write(folder / f"{key}.json", lambda handle: json.dump(found, handle, default=float))
        stored[key] = found

    bar = tqdm(total=len(tasks), initial=len(tasks) - len(todo), disable=not progress, unit="run", desc=experiment.path.stem)
    arguments = (str(experiment.workload), experiment.processors, max_jobs)
    if workers <= 1:
        for key, run, seed in todo:
            keep(key, _replay(*arguments, run, seed))
            bar.update()
    else:
        with ProcessPoolExecutor(workers) as pool:
            futures = {key: pool.submit(_replay, *arguments, run, seed) for key, run, seed in todo}
            for key, future in futures.items():
                keep(key, future.result())
                bar.update()
    bar.close()
    results, groups = [], []
    for key, run, seed in tasks:
        found = stored[key]
        summary = {k: v for k, v in found["summary"].items() if k != "cleaning"}
        results.append(summary)
        groups += [{"name": run["name"], "seed": seed, **row} for row in found["size_groups"]]
    return pd.DataFrame(results), pd.DataFrame(groups)


def compare_with_paper(results: pd.DataFrame, paper: dict = PAPER_CTC) -> pd.DataFrame:
    """Our value (mean over seeds) beside the paper's, for every (run name, metric) both have.

    Returns:
        Columns run, metric, ours, paper, difference (relative, ours / paper - 1).
    """
    means = results.groupby("name").mean(numeric_only=True)
    rows = []
    for (name, metric), value in paper.items():
        if name in means.index and metric in means.columns:
            ours = float(means.loc[name, metric])
            rows.append(
                {
                    "run": name,
                    "metric": metric,
                    "ours": ours,
                    "paper": value,
                    "difference": ours / value - 1 if value else float("nan"),
                }
            )
    return pd.DataFrame(rows, columns=["run", "metric", "ours", "paper", "difference"])


def draw_bars(table: pd.DataFrame, spec: FigureBars, path: str | Path) -> Path:
    """Draw a bar figure of an online experiment (mean over seeds); see :func:`torus_sim.figures.draw_bars`."""
    from torus_sim.figures import draw_bars as draw

    return draw(table, spec.x, spec.y, spec.series, spec.title or spec.name, path)
