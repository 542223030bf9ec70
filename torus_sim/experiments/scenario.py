"""Experiment files: a base configuration, a parameter grid, and the figures to draw.

An experiment is a TOML file::

    title = "BGL-FAULT Figs. 3-5: bounded slowdown and utilization vs number of failures"
    reference = "BGL-FAULT §7.1, Figs. 3-5"

    [base]                      # RunConfig fields shared by every run
    workload = "../../../shared/data/swf/SDSC-SP2-1998-4.2-cln.swf.gz"
    scheduler = "balancing"

    [grid]                      # every combination of these values is one run
    failures = [0, 500, 1000]   # an integer N means "synthetic:N"
    confidence = [0.0, 0.1, 0.9]

    seeds = [0, 1]              # optional: every point runs with each seed (else the base seed)
    output = "runs/fig3"        # optional: results folder (default torus-sim-results/<file stem>)

    [[case]]                    # optional: parameter sets that vary together, each crossed with the grid
    workload = "../../../shared/data/swf/NASA-iPSC-1993-3.1-cln.swf.gz"
    failures = 126

    [[figure]]                  # one PNG each
    name = "fig3"
    x = "failures"
    series = "confidence"
    y = ["avg_bounded_slowdown"]
    where = { load_scale = 1.0 }

Relative paths (``workload``, a failure-log path) are resolved against the file's folder.
"""

from __future__ import annotations

import itertools
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path

from torus_sim.errors import ConfigurationError
from torus_sim.runner import RunConfig

__all__ = ["Experiment", "FigureSpec", "load_experiment"]

_CONFIG_FIELDS = {field.name for field in fields(RunConfig)}


@dataclass(frozen=True)
class FigureSpec:
    """One figure drawn from an experiment's results.

    Attributes:
        name: file stem of the PNG.
        x: grid parameter on the x axis.
        series: grid parameter drawn as one line per value (or "" for one line).
        y: summary metrics, one panel each.
        where: fixed values of other parameters selecting the rows.
        title: figure title.
        x_label: x-axis label.
    """

    name: str
    x: str
    series: str
    y: tuple[str, ...]
    where: dict
    title: str = ""
    x_label: str = ""


@dataclass
class Experiment:
    """A parsed experiment file.

    Attributes:
        path: the TOML file.
        title: what it reproduces.
        reference: the paper's section and figures.
        base: RunConfig fields common to all runs.
        grid: parameter -> list of values (the runs are their cartesian product).
        figures: the figures to draw.
        cases: parameter sets that vary together; each is crossed with the grid (one empty case if none).
        seeds: seeds every point runs with (empty: the base configuration's seed).
        output: the results folder the file asks for ("" : the command's default).
    """

    path: Path
    title: str
    reference: str
    base: dict
    grid: dict[str, list]
    figures: list[FigureSpec]
    cases: list[dict] = field(default_factory=lambda: [{}])
    seeds: list[int] = field(default_factory=list)
    output: str = ""

    @property
    def parameters(self) -> list[str]:
        """Names of the parameters that vary between runs: case keys, then grid keys."""
        keys = list(dict.fromkeys(key for case in self.cases for key in case))
        keys += [key for key in self.grid if key not in keys]
        return keys + (["seed"] if self.seeds and "seed" not in keys else [])

    def points(self) -> list[dict]:
        """Every case x every combination of grid values x every seed (the seed varies fastest)."""
        names = list(self.grid)
        combos = [dict(zip(names, values, strict=True)) for values in itertools.product(*(self.grid[name] for name in names))]
        points = [{**case, **combo} for case in self.cases for combo in combos]
        return [{**point, "seed": seed} for point in points for seed in self.seeds] if self.seeds else points

    def config(self, point: dict, **overrides) -> RunConfig:
        """The RunConfig of one grid point.

        Args:
            point: grid values of the run.
            **overrides: RunConfig fields that replace the file's (e.g. ``max_jobs`` for a reduced run).

        Returns:
            The configuration (``failures`` given as an integer N becomes ``synthetic:N``).
        """
        values = {**self.base, **point, **overrides}
        if isinstance(values.get("failures"), int):
            values["failures"] = f"synthetic:{values['failures']}"
        if "torus_dims" in values:
            values["torus_dims"] = tuple(values["torus_dims"])
        return RunConfig(**values)


def _resolve(value, folder: Path):
    if isinstance(value, str) and value not in ("none", "bundled") and not value.startswith("synthetic:"):
        candidate = Path(value)
        return str(candidate if candidate.is_absolute() else (folder / candidate).resolve())
    return value


def load_experiment(path: str | Path) -> Experiment:
    """Read and check an experiment file.

    Args:
        path: the TOML file.

    Returns:
        The experiment.

    Raises:
        ConfigurationError: invalid TOML, an unknown RunConfig field, an empty grid value list,
            or a figure naming a parameter that is neither in the grid nor fixed.
    """
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as error:
        raise ConfigurationError(f"{path}: not valid TOML: {error}") from None
    if data.get("kind") in ("rigid", "moldable"):
        raise ConfigurationError(f"{path}: a flat-platform experiment; run it with: torus-sim flat experiment {path}")
    if data.get("kind") == "online":
        raise ConfigurationError(f"{path}: an online experiment; run it with: torus-sim online experiment {path}")
    base = dict(data.get("base", {}))
    grid = {key: list(values) if isinstance(values, list) else [values] for key, values in data.get("grid", {}).items()}
    cases = [dict(case) for case in data.get("case", [])] or [{}]
    for key in [*base, *grid, *(key for case in cases for key in case)]:
        if key not in _CONFIG_FIELDS:
            raise ConfigurationError(f"{path}: unknown run parameter {key!r}; known: {sorted(_CONFIG_FIELDS)}")
    for key, values in grid.items():
        if not values:
            raise ConfigurationError(f"{path}: grid parameter {key!r} has no values")
    for key in ("workload", "failures"):
        if key in base:
            base[key] = _resolve(base[key], path.parent)
        if key in grid:
            grid[key] = [_resolve(value, path.parent) for value in grid[key]]
        for case in cases:
            if key in case:
                case[key] = _resolve(case[key], path.parent)
    figures = []
    for raw in data.get("figure", []):
        spec = FigureSpec(
            name=raw["name"],
            x=raw["x"],
            series=raw.get("series", ""),
            y=tuple(raw["y"]),
            where={
                key: _resolve(value, path.parent) if key in ("workload", "failures") else value
                for key, value in raw.get("where", {}).items()
            },
            title=raw.get("title", ""),
            x_label=raw.get("x_label", raw["x"]),
        )
        known = set(grid) | set(base) | {key for case in cases for key in case} | ({"seed"} if data.get("seeds") else set())
        for key in [spec.x, spec.series, *spec.where]:
            if key and key not in known:
                raise ConfigurationError(f"{path}: figure {spec.name!r} names {key!r}, which is not a run parameter of this file")
        figures.append(spec)
    seeds = data.get("seeds", [])
    if not isinstance(seeds, list) or not all(isinstance(seed, int) for seed in seeds):
        raise ConfigurationError(f"{path}: seeds must be a list of integers, got {seeds!r}")
    output = data.get("output", "")
    if not isinstance(output, str):
        raise ConfigurationError(f"{path}: output must be a folder name, got {output!r}")
    return Experiment(path, data.get("title", path.stem), data.get("reference", ""), base, grid, figures, cases, seeds, output)
