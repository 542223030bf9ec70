"""The synthetic experiments of RIGID §5.1 and MOLDABLE §5.1, from a TOML file to CSV + PNG.

File format::

    title = "..."
    reference = "RIGID §5.1, Fig. 5"
    kind = "rigid"              # or "moldable"
    sets = 30                   # job sets
    scenarios = 1000            # failure scenarios per set (the same ones for every heuristic)
    seed = 2020
    output = "results/rigid"    # optional, relative to the working directory
    [grid]                      # every combination runs
    processors = [10000]
    mean_failure_probability = [0.0, 0.3]                # rigid: q̄
    heuristic = ["R-LIST-0", "R-SHELFFILL-B"]            # rigid
    priority = ["LPT", "LA"]
    # moldable: model = ["mix"], algorithm = ["LPA", "BATCH"], jobs = [500], error_rate = [1e-7]
    [[figure]]                  # as torus-sim's sweep figures (x, series, y, where, title)

Every (set, grid point) gives one row: the mean and maximum over the scenarios of the makespan
normalized by the lower bound (L(f) for rigid, L'(J, f) for moldable), the mean makespan and the
mean number of failures. The paper's "expected ratio" is the mean over sets of ``mean_ratio``; its
"maximum ratio" the maximum of ``max_ratio``.
"""

from __future__ import annotations

import itertools
import json
import tomllib
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from torus_sim.errors import ConfigurationError
from torus_sim.experiments.scenario import FigureSpec
from torus_sim.files import atomic_write
from torus_sim.flat.bounds import moldable_lower_bound, rigid_lower_bound
from torus_sim.flat.jobs import generate_rigid_set
from torus_sim.flat.model import FlatModel
from torus_sim.flat.runs import MOLDABLE_ALGORITHMS, RIGID_HEURISTICS, moldable_allocation, moldable_policy, rigid_policy
from torus_sim.flat.scenarios import (
    draw_scenarios,
    error_rate_for_mean_probability,
    failure_probabilities_by_area,
    failure_probabilities_by_work,
)
from torus_sim.flat.speedup import SPEEDUP_MODELS, generate_speedup_model
from torus_sim.policies.moldable import AllotmentTables
from torus_sim.policies.rigid import PRIORITY_RULES

__all__ = ["FlatExperiment", "combine_results", "expected_ratio_table", "load_flat_experiment", "run_flat_experiment", "run_set"]

_GRID = {
    "rigid": {
        "processors": [10000],
        "mean_failure_probability": [0.3],
        "heuristic": ["R-LIST-0"],
        "priority": ["LPT"],
        "jobs": [100],
    },
    "moldable": {
        "processors": [7500],
        "error_rate": [1e-7],
        "model": ["mix"],
        "algorithm": ["LPA"],
        "priority": ["LPT"],
        "jobs": [500],
    },
}
_KNOWN = {"heuristic": RIGID_HEURISTICS, "algorithm": MOLDABLE_ALGORITHMS, "priority": PRIORITY_RULES, "model": SPEEDUP_MODELS}


@dataclass
class FlatExperiment:
    """A parsed flat experiment file (see the module docstring).

    Attributes:
        path: the TOML file.
        kind: "rigid" or "moldable".
        title, reference: what it reproduces.
        sets, scenarios: job sets, failure scenarios per set.
        seed: the master seed (set i uses the i-th child of ``numpy.random.SeedSequence(seed)``).
        grid: parameter -> values (the defaults of :data:`_GRID` filled in).
        figures: what to draw.
        output: results folder ("" for the default).
    """

    path: Path
    kind: str
    title: str
    reference: str
    sets: int
    scenarios: int
    seed: int
    grid: dict
    figures: list[FigureSpec] = field(default_factory=list)
    output: str = ""

    def points(self) -> list[dict]:
        """Every grid combination, as dicts."""
        keys = list(self.grid)
        return [dict(zip(keys, values, strict=True)) for values in itertools.product(*self.grid.values())]


def load_flat_experiment(path: str | Path) -> FlatExperiment:
    """Read and check a flat experiment file.

    Raises:
        ConfigurationError: invalid TOML, unknown kind or parameter, an unknown heuristic /
            algorithm / priority / model name, counts < 1, or a figure naming an unknown column.
    """
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as error:
        raise ConfigurationError(f"{path}: not valid TOML: {error}") from None
    kind = data.get("kind")
    if kind not in _GRID:
        raise ConfigurationError(f"{path}: kind must be 'rigid' or 'moldable', got {kind!r}")
    grid = {key: list(values) for key, values in _GRID[kind].items()}
    for key, values in data.get("grid", {}).items():
        if key not in grid:
            raise ConfigurationError(f"{path}: unknown {kind} parameter {key!r}; known: {sorted(grid)}")
        values = values if isinstance(values, list) else [values]
        if not values:
            raise ConfigurationError(f"{path}: grid parameter {key!r} has no values")
        for value in values:
            if key in _KNOWN and value not in _KNOWN[key]:
                raise ConfigurationError(f"{path}: unknown {key} {value!r}; choose from {', '.join(_KNOWN[key])}")
        grid[key] = values
    counts = {name: data.get(name, default) for name, default in (("sets", 30), ("scenarios", 100), ("seed", 0))}
    if not all(isinstance(value, int) for value in counts.values()) or counts["sets"] < 1 or counts["scenarios"] < 1:
        raise ConfigurationError(f"{path}: sets and scenarios must be integers >= 1 and seed an integer, got {counts}")
    figures = []
    for raw in data.get("figure", []):
        spec = FigureSpec(
            raw["name"],
            raw["x"],
            raw.get("series", ""),
            tuple(raw.get("y", ["mean_ratio"])),
            dict(raw.get("where", {})),
            raw.get("title", ""),
            raw.get("x_label", raw["x"]),
        )
        for key in [spec.x, spec.series, *spec.where]:
            if key and key not in grid:
                raise ConfigurationError(f"{path}: figure {spec.name!r} names {key!r}, which is not a grid parameter")
        figures.append(spec)
    return FlatExperiment(
        path,
        kind,
        data.get("title", path.stem),
        data.get("reference", ""),
        counts["sets"],
        counts["scenarios"],
        counts["seed"],
        grid,
        figures,
        data.get("output", ""),
    )


def run_set(kind: str, grid: dict, scenarios: int, seed: int, set_index: int) -> list[dict]:
    """All rows of one job set: every grid point on the same job set and the same scenarios.

    Args:
        kind: "rigid" or "moldable".
        grid: parameter -> values.
        scenarios: failure scenarios to draw.
        seed: the experiment's seed.
        set_index: which set (0-based).

    Returns:
        One dict per grid point (grid values, set, mean_ratio, max_ratio, mean_makespan,
        mean_lower_bound, mean_failures).
    """
    rows = []
    if kind == "rigid":
        for count in grid["jobs"]:
            jobs = generate_rigid_set(np.random.default_rng([seed, set_index, count]), count)
            for total, mean_probability in itertools.product(grid["processors"], grid["mean_failure_probability"]):
                jobs.check_fits(total)
                rate = error_rate_for_mean_probability(jobs.areas, mean_probability)
                rng = np.random.default_rng([seed, set_index, count, round(mean_probability * 1e6), 1])
                failures = draw_scenarios(failure_probabilities_by_area(jobs.areas, rate), scenarios, rng)
                bounds = rigid_lower_bound(jobs.runtimes, jobs.processors, failures, total)
                for heuristic, priority in itertools.product(grid["heuristic"], grid["priority"]):
                    makespans = _makespans(total, failures, partial(rigid_policy, heuristic, jobs, priority))
                    rows.append(
                        _row(
                            dict(
                                jobs=count,
                                processors=total,
                                mean_failure_probability=mean_probability,
                                error_rate=rate,
                                heuristic=heuristic,
                                priority=priority,
                            ),
                            set_index,
                            makespans,
                            bounds,
                            failures,
                        )
                    )
        return rows
    for count, name in itertools.product(grid["jobs"], grid["model"]):
        model = generate_speedup_model(name, count, np.random.default_rng([seed, set_index, count, SPEEDUP_MODELS.index(name)]))
        for total in grid["processors"]:
            times = model.times(total)
            tables = AllotmentTables(times) if "BATCH" in grid["algorithm"] else None
            allocations = {name: moldable_allocation(name, times) for name in grid["algorithm"] if name != "BATCH"}
            for rate in grid["error_rate"]:
                rng = np.random.default_rng([seed, set_index, count, round(rate * 1e12), 2])
                failures = draw_scenarios(failure_probabilities_by_work(model.work, rate), scenarios, rng)
                bounds = moldable_lower_bound(times, failures)
                for algorithm, priority in itertools.product(grid["algorithm"], grid["priority"]):
                    makespans = _makespans(
                        total, failures, partial(moldable_policy, algorithm, times, priority, tables, allocations.get(algorithm))
                    )
                    rows.append(
                        _row(
                            dict(
                                jobs=count, processors=total, error_rate=rate, model=name, algorithm=algorithm, priority=priority
                            ),
                            set_index,
                            makespans,
                            bounds,
                            failures,
                        )
                    )
    return rows


def _makespans(processors: int, failures: np.ndarray, make_policy) -> np.ndarray:
    """Makespan (seconds) of a fresh policy from ``make_policy()`` under each scenario (row) of ``failures``; seed = row."""
    return np.array(
        [
            FlatModel(processors, scenario, make_policy(), seed=index, record_attempts=False).run().makespan
            for index, scenario in enumerate(failures)
        ]
    )


def _row(point: dict, set_index: int, makespans: np.ndarray, bounds: np.ndarray, failures: np.ndarray) -> dict:
    ratios = makespans / bounds
    return {
        **point,
        "set": set_index,
        "mean_ratio": float(ratios.mean()),
        "max_ratio": float(ratios.max()),
        "mean_makespan": float(makespans.mean()),
        "mean_lower_bound": float(bounds.mean()),
        "mean_failures": float(failures.sum(axis=1).mean()),
        "scenarios": len(makespans),
    }


def run_flat_experiment(
    experiment: FlatExperiment,
    out: str | Path,
    workers: int = 1,
    progress: bool = True,
    sets: int | None = None,
    scenarios: int | None = None,
) -> pd.DataFrame:
    """Run every set of an experiment (in ``workers`` processes), storing each set as it finishes.

    Each set's rows are written atomically to ``out/sets/<i>.json``, keyed by the experiment's
    parameters, so an interrupted run resumes with the sets it has not done.

    Args:
        experiment: the parsed file.
        out: results folder.
        workers: processes (1 runs in this process).
        progress: show a tqdm bar.
        sets: override the file's number of job sets (smaller runs).
        scenarios: override the file's scenarios per set.

    Returns:
        One row per (set, grid point).
    """
    from tqdm import tqdm

    sets = sets or experiment.sets
    scenarios = scenarios or experiment.scenarios
    folder = Path(out) / "sets"
    folder.mkdir(parents=True, exist_ok=True)
    signature = json.dumps(
        {"kind": experiment.kind, "grid": experiment.grid, "scenarios": scenarios, "seed": experiment.seed}, sort_keys=True
    )
    rows: list[dict] = []
    todo = []
    for index in range(sets):
        stored = folder / f"{index}.json"
        if stored.exists():
            data = json.loads(stored.read_text())
            if data.get("signature") == signature:
                rows += data["rows"]
                continue
        todo.append(index)

    def keep(index: int, found: list[dict]) -> None:
        atomic_write(folder / f"{index}.json", lambda handle: json.dump({"signature": signature, "rows": found}, handle))
        rows.extend(found)

    bar = tqdm(total=sets, initial=sets - len(todo), disable=not progress, unit="set", desc=experiment.path.stem)
    if workers <= 1:
        for index in todo:
            keep(index, run_set(experiment.kind, experiment.grid, scenarios, experiment.seed, index))
            bar.update()
    else:
        with ProcessPoolExecutor(workers) as pool:
            futures = {
                index: pool.submit(run_set, experiment.kind, experiment.grid, scenarios, experiment.seed, index) for index in todo
            }
            for index, future in futures.items():
                keep(index, future.result())
                bar.update()
    bar.close()
    table = pd.DataFrame(rows)
    return table.sort_values([column for column in ("set", *experiment.grid) if column in table]).reset_index(drop=True)


def expected_ratio_table(table: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """The papers' summary: expected ratio (mean over sets of the per-set mean) and maximum ratio.

    Args:
        table: rows of :func:`run_flat_experiment`.
        by: the columns to group on (e.g. ``["algorithm", "model"]`` for MOLDABLE Table 1).

    Returns:
        Columns ``by`` + expected, maximum, sets.

    References:
        MOLDABLE §5.1 "Evaluation Methodology" and Table 1; RIGID §5.1.
    """
    grouped = table.groupby(by, sort=False)
    return pd.DataFrame(
        {"expected": grouped["mean_ratio"].mean(), "maximum": grouped["max_ratio"].max(), "sets": grouped["set"].nunique()}
    ).reset_index()


def combine_results(tables: list[pd.DataFrame]) -> pd.DataFrame:
    """Rows of several experiments as one table, each (grid point, set) once.

    The ``table1_vs_*`` files share their default setting (P = 7500, n = 500, λ = 1e-7); combined,
    it counts once, so :func:`expected_ratio_table` over the result is the mean over the whole set
    of experiments, as MOLDABLE Table 1 summarizes it.

    Raises:
        ConfigurationError: no table, or tables without the result columns.
    """
    if not tables:
        raise ConfigurationError("no results to combine")
    table = pd.concat(tables, ignore_index=True)
    if not {"set", "mean_ratio", "max_ratio"} <= set(table.columns):
        raise ConfigurationError("these are not flat experiment results (set, mean_ratio, max_ratio missing)")
    keys = [
        column
        for column in (
            "kind",
            "model",
            "algorithm",
            "heuristic",
            "priority",
            "jobs",
            "processors",
            "error_rate",
            "mean_failure_probability",
            "set",
        )
        if column in table.columns
    ]
    return table.drop_duplicates(subset=keys).reset_index(drop=True)
