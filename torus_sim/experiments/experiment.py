"""Scenario files: a base scenario, a grid of runs, the figures to draw and the published values to compare.

One format for every paper and every platform::

    title = "BGL-FAULT Figs. 3-5: bounded slowdown and capacity vs number of failures"
    reference = "BGL-FAULT §7.1, Figs. 3-5"
    seeds = [0, 1]              # optional: every point runs with each seed (else the base seed)
    sets = 30                   # optional, batch workloads: job sets 0..29 (``job_set``) for every point
    output = "runs/fig3"        # optional: results folder (default torus-sim-results/<file stem>)

    [platform]                  # the base scenario, in the sections of torus_sim.experiments.scenario
    platform = "torus"
    [workload]
    workload = "../../../shared/data/swf/SDSC-SP2-1998-4.2-cln.swf.gz"
    [policy]
    policy = "balancing"

    [grid]                      # every combination of these values is one run (flat field names)
    failures = [0, 500, 1000]   # an integer N means "synthetic:N"
    confidence = [0.0, 0.1, 0.9]

    [[case]]                    # optional: fields that vary together, each crossed with the grid;
    name = "EASY-Last"          # ``name`` labels the case in the results
    policy = "FCFS-EASY"
    runtime_predictor = "last"

    [[figure]]                  # one PNG each: lines over a numeric x, grouped bars over a categorical one
    name = "fig3"
    x = "failures"
    series = "confidence"
    y = ["avg_bounded_slowdown"]
    where = { load_scale = 1.0 }
    table = "results"           # or "size_groups" (PV-EASY Figs. 2-3: blocked jobs by size)
    log_y = false               # log-scale y axes

    [[paper]]                   # optional: published values, written beside ours to comparison.csv
    case = "EASY"
    metric = "blocked_jobs"
    value = 3833

    replicates = ["seed"]       # optional: the parameters that repeat a case (default: job_set and seed where
                                # they take two values or more; a grid key such as workload for logs or windows)
    compare = "name"            # optional: the parameter whose values are compared run by run (default: name
                                # for named cases, else policy where it varies)

With replicates, the sweep also writes ``intervals.csv`` (every case's mean and 95% bootstrap confidence
interval of every metric over its replicates) and ``paired.csv`` (every two values of ``compare`` at the same
other parameters: the paired difference B - A with its interval and Wilcoxon's signed-rank test); its figures
draw the intervals as error bars (:mod:`torus_sim.metrics.confidence`).

Relative paths (a workload or failure log, ``refcode:`` and ``table:`` files, a job-power, price or power
cap CSV file) are resolved against the file's folder. Every key is checked: an unknown section or key,
or a value of the wrong type, is an error naming the file, the key and what was expected.
"""

from __future__ import annotations

import itertools
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from torus_sim.core.errors import ConfigurationError
from torus_sim.core.files import require_file
from torus_sim.experiments.scenario import INPUT_FILE_FIELDS, SECTIONS, Scenario, scenario_error
from torus_sim.inputs.datasets import is_reference
from torus_sim.outputs.figure_spec import FigureSpec

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["DEFAULT_MAX_RUNS", "Experiment", "FigureSpec", "file_fields_absolute", "file_fields_relative", "load_experiment"]

DEFAULT_MAX_RUNS = 10_000
"""A sweep of more runs than this is refused unless its file sets ``max_runs`` or the command says ``--yes``."""

FIELDS = {name for members in SECTIONS.values() for name in members} | {"scheduler"}
TOP_LEVEL = {
    "title",
    "reference",
    "seeds",
    "sets",
    "output",
    "max_runs",
    "grid",
    "case",
    "figure",
    "paper",
    "replicates",
    "compare",
    *SECTIONS,
}


@dataclass
class Experiment:
    """A parsed scenario file.

    Attributes:
        path: the TOML file.
        title, reference: what it reproduces.
        base: the base scenario's fields (flat names).
        grid: field -> values (the runs are their cartesian product).
        cases: field sets that vary together (``name`` labels one); one empty case if none.
        seeds: seeds every point runs with (empty: the base seed).
        sets: job sets every point runs with (batch workloads; 0: none).
        figures: the figures to draw.
        paper: published values: ``{"case", "metric", "value"}`` each.
        output: the results folder the file asks for ("" : the command's default).
        max_runs: the most runs the file allows (None: :data:`DEFAULT_MAX_RUNS`).
        replicates: the parameters that repeat a case, as the file names them (empty: the default, see
            :attr:`replicate_columns`).
        compare: the parameter compared run by run, as the file names it ("": the default, see
            :attr:`compared_column`).
    """

    path: Path
    title: str
    reference: str
    base: dict
    grid: dict[str, list]
    figures: list[FigureSpec]
    cases: list[dict] = field(default_factory=lambda: [{}])
    seeds: list[int] = field(default_factory=list)
    sets: int = 0
    paper: list[dict] = field(default_factory=list)
    output: str = ""
    max_runs: int | None = None
    replicates: list[str] = field(default_factory=list)
    compare: str = ""

    @property
    def replicate_columns(self) -> list[str]:
        """The parameters over which a case is repeated and that take two values or more.

        The file's ``replicates`` where it names them; else ``job_set`` (two sets or more) and ``seed`` (two
        seeds or more). Empty: no interval to compute (one run per case).
        """
        if self.replicates:
            return [key for key in self.replicates if len(self.values_of(key)) > 1]
        found = ["job_set"] if self.sets > 1 else []
        return found + (["seed"] if len(set(self.seeds)) > 1 and "seed" not in self.grid else [])

    @property
    def compared_column(self) -> str:
        """The parameter whose values are compared run by run ("": none).

        The file's ``compare``; else ``name`` for named cases; else ``policy`` where it varies.
        """
        if self.compare:
            return self.compare
        if any("name" in case for case in self.cases):
            return "name"
        return "policy" if len(self.values_of("policy")) > 1 else ""

    def values_of(self, key: str) -> list:
        """The distinct values a parameter takes over the sweep's runs (its base value alone when it does not vary)."""
        if key == "seed" and self.seeds:
            return list(dict.fromkeys(self.seeds))
        if key == "job_set":
            return list(range(self.sets))
        values = [case[key] for case in self.cases if key in case] + list(self.grid.get(key, []))
        if any(key not in case for case in self.cases) and key not in self.grid and key in self.base:
            values.append(self.base[key])
        return list(dict.fromkeys(map(str, values)))

    @property
    def parameters(self) -> list[str]:
        """Columns that vary between runs: case keys, grid keys, then job_set and seed."""
        keys = list(dict.fromkeys(key for case in self.cases for key in case))
        keys += [key for key in self.grid if key not in keys]
        if self.sets:
            keys.append("job_set")
        return keys + (["seed"] if self.seeds and "seed" not in keys else [])

    def points(self) -> list[dict]:
        """Every case x grid combination x job set x seed, as dicts (the seed varies fastest)."""
        return list(self.iter_points())

    def iter_points(self):
        """The points of :meth:`points`, one at a time (a huge grid is never held whole to look at its first)."""
        names = list(self.grid)
        for case in self.cases:
            for values in itertools.product(*(self.grid[name] for name in names)):
                point = {**case, **dict(zip(names, values, strict=True))}
                for index in range(self.sets) if self.sets else [None]:
                    with_set = point if index is None else {**point, "job_set": index}
                    for seed in self.seeds or [None]:
                        yield with_set if seed is None else {**with_set, "seed": seed}

    def run_count(self) -> int:
        """How many runs :meth:`points` gives, counted without making them."""
        count = len(self.cases) * max(self.sets, 1) * max(len(self.seeds), 1)
        for values in self.grid.values():
            count *= len(values)
        return count

    def check_size(self, allow_more: bool = False) -> None:
        """Refuse a sweep of more runs than its ``max_runs`` (default :data:`DEFAULT_MAX_RUNS`) unless ``allow_more``.

        Raises:
            ConfigurationError: naming the count and how to allow it.
        """
        limit = self.max_runs or DEFAULT_MAX_RUNS
        count = self.run_count()
        if count > limit and not allow_more:
            raise ConfigurationError(
                f"{self.path}: the sweep has {count:,} runs, more than {limit:,}; set max_runs = {count} in the file "
                "or pass --yes to run them all"
            )

    def scenario(self, point: dict, **overrides) -> Scenario:
        """The scenario of one point.

        Args:
            point: the point's values (a case's ``name`` is a label, not a field).
            **overrides: fields that replace the file's (``max_jobs``, ``scenarios`` for a reduced run).

        Returns:
            The validated scenario (``failures`` given as an integer N becomes ``synthetic:N``).

        Raises:
            ConfigurationError: a value of the wrong type or out of its domain, naming the file and key.
        """
        values = {**self.base, **{key: value for key, value in point.items() if key != "name"}, **overrides}
        if isinstance(values.get("failures"), int):
            values["failures"] = f"synthetic:{values['failures']}"
        return Scenario.make(str(self.path), **values)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class _FigureShape(_Strict):
    """A ``[[figure]]`` entry's shape (its columns are checked against the runs' parameters afterwards)."""

    name: str
    x: str
    y: list[str] = Field(min_length=1)
    series: str = ""
    where: dict[str, Any] = Field(default_factory=dict)
    title: str = ""
    x_label: str | None = None
    table: Literal["results", "size_groups"] = "results"
    log_y: bool = False


class _PaperShape(_Strict):
    """A ``[[paper]]`` entry: a published value."""

    case: str
    metric: str
    value: int | float


class _SweepFileShape(_Strict):
    """The top level of a scenario file: what each key holds (the sections' fields are the scenario's to check)."""

    model_config = ConfigDict(extra="allow", strict=True)  # sections; unknown keys are named by _check_keys

    title: str = ""
    reference: str = ""
    seeds: list[int] = Field(default_factory=list)
    sets: int = Field(0, ge=0)
    output: str = ""
    max_runs: int | None = Field(None, ge=1)
    grid: dict[str, Any] = Field(default_factory=dict)
    case: list[dict[str, Any]] = Field(default_factory=list)
    figure: list[_FigureShape] = Field(default_factory=list)
    paper: list[_PaperShape] = Field(default_factory=list)
    replicates: list[str] = Field(default_factory=list)
    compare: str = ""


_EXPECTED = {
    "dict_type": "a table of keys",
    "model_type": "a table of keys",
    "list_type": "a list (an array of tables [[...]] for case, figure and paper)",
    "string_type": "text",
    "int_type": "an integer",
    "bool_type": "true or false",
}


def _check_shape(path: Path, data: dict) -> None:
    """Refuse a file whose top-level keys hold the wrong kind of value, naming the file, the key and the form expected."""
    try:
        _SweepFileShape.model_validate(data)
    except ValidationError as error:
        problems = []
        for problem in error.errors():
            where = ".".join(str(part) for part in problem["loc"])
            if problem["type"] in _EXPECTED:
                problems.append(f"{where}: expected {_EXPECTED[problem['type']]}, got {problem.get('input')!r}")
            else:
                problems.append(f"{where}: {problem['msg']} (got {problem.get('input')!r})")
        raise ConfigurationError(f"{path}: " + "; ".join(problems)) from None


def _resolve(value, folder: Path, field: str = "workload"):
    """A file the field names, relative to the scenario file's folder (asked of the field's registry).

    A name (``rigid``, ``none``, an installed plug-in's), an import path or an argument that is no file
    (``moldable:mix``, ``synthetic:500``) stays as it is; a file, or the file argument of an entry that
    reads one (``table:<path>``, ``refcode:<path>``), is made absolute.
    """
    if not isinstance(value, str) or is_reference(value):  # a registered file by name: the same on every machine
        return value
    selected = _file_argument(value, field)
    if selected is None:
        return value
    prefix, path = selected
    candidate = Path(path)
    return prefix + str(candidate if candidate.is_absolute() else (folder / candidate).resolve())


def file_fields_relative(table: pd.DataFrame, folder: Path) -> pd.DataFrame:
    """``table`` with every absolute input file it names written relative to ``folder`` (the scenario file's).

    A results table names the inputs each run read (``workload``, ``failures``, ...); resolved, they
    are absolute paths of the machine that ran them. Written relative to the scenario file's folder
    (as the file itself names them) the committed tables are the same on every checkout.
    :func:`file_fields_absolute` reads them back. A value is a path only by its text (absolute, or
    ``name:`` followed by an absolute path, as ``table:/data/t.txt``): no registry is asked.

    Args:
        table: a results table (one row per run, the scenario fields among its columns).
        folder: the scenario file's folder.

    Returns:
        A copy; names that are not files (``bundled``, ``synthetic:500``) and relative paths unchanged.
    """
    return _map_file_fields(table, lambda path: os.path.relpath(path, folder) if Path(path).is_absolute() else None)


def file_fields_absolute(table: pd.DataFrame, folder: Path) -> pd.DataFrame:
    """``table`` (a results table read back) with the input files it names relative to ``folder`` made absolute again.

    The inverse of :func:`file_fields_relative` (a figure's ``where`` names files as the loaded file
    does: absolute). A value read from the table is only compared with the files there (a relative
    path, or ``name:`` and one, that names an existing file under ``folder``): nothing it names is
    opened, imported or looked up in a registry. A table written with absolute paths is returned as it is.

    Args:
        table: a results table read back from CSV.
        folder: the scenario file's folder.

    Returns:
        A copy.
    """

    def absolute(path: str) -> str | None:
        if Path(path).is_absolute():
            return None
        candidate = (folder / path).resolve()
        return str(candidate) if candidate.is_file() else None

    return _map_file_fields(table, absolute)


def _map_file_fields(table: pd.DataFrame, convert) -> pd.DataFrame:
    """A copy of ``table`` with each input-file column's paths converted (``convert(path)``: the new path, or None: kept).

    A value is tried whole, then as ``prefix:path`` (the text after the first ``:``).
    """
    table = table.copy()
    for name in (*INPUT_FILE_FIELDS, "failures_given"):  # failures_given: the failures spec as each run got it
        if name not in table.columns:
            continue
        converted: dict = {}
        for value in table[name].dropna().unique():
            if not isinstance(value, str):
                continue
            whole = convert(value)
            if whole is not None:
                converted[value] = whole
                continue
            prefix, separator, path = value.partition(":")
            tail = convert(path) if separator and path else None
            if tail is not None:
                converted[value] = f"{prefix}:{tail}"
        table[name] = table[name].map(lambda value, converted=converted: converted.get(value, value))
    return table


def _file_argument(value: str, field: str) -> tuple[str, str] | None:
    """``(prefix, path)`` when ``value`` names a file for ``field``'s registry (``("table:", "t.txt")``), else None."""
    from failure_logs.silent import DRAWN, NO_SILENT_ERRORS
    from torus_sim.experiments.extensions import input_registries

    if field in ("power_cap_file", "reservations"):
        return ("", value)
    if field in ("maintenance", "effective_size"):  # inferred from the log, or a file of windows or spans
        return None if value == "inferred" else ("", value)
    if field in ("job_power", "price"):  # a name with arguments (uniform:50:300, tou:0.05:3) or a CSV file
        return ("", value) if value.lower().endswith(".csv") else None
    registries = input_registries()
    if field not in registries:  # silent errors: none, drawn, or a file
        return None if value in (NO_SILENT_ERRORS, DRAWN) else ("", value)
    registry, select = registries[field]
    try:
        factory, _, argument = select(value)
    except (ConfigurationError, FileNotFoundError):
        return ("", value)  # not a name: a file that is not there (yet); the run says so
    if argument is None or not getattr(factory, "reads_file", False):
        return None
    if getattr(factory, "takes_argument", False):
        return value[: len(value) - len(argument)], argument
    return "", value


def _check_keys(path: Path, where: str, keys, allowed: set) -> None:
    unknown = sorted(set(keys) - allowed)
    if unknown:
        raise ConfigurationError(f"{path}: unknown key(s) {unknown} in {where}; known: {sorted(allowed)}")


def load_experiment(path: str | Path) -> Experiment:
    """Read and check a scenario file.

    Args:
        path: the TOML file.

    Returns:
        The experiment.

    Raises:
        ConfigurationError: invalid TOML, an unknown section or key, a value of the wrong type (every
            point is validated), an empty grid value list, or a figure naming an unknown column.
        FileNotFoundError: the file does not exist.
        InputFileError: the path is a directory.
    """
    path = require_file(path, "scenario")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise ConfigurationError(f"{path}: not valid TOML: {error}") from None
    except RecursionError:
        raise ConfigurationError(f"{path}: not valid TOML: nested too deeply") from None
    except UnicodeDecodeError:
        raise ConfigurationError(f"{path}: not a text (TOML) file") from None
    _check_keys(path, "the file", data, TOP_LEVEL)
    _check_shape(path, data)
    base: dict = {}
    for section, members in SECTIONS.items():
        values = data.get(section, {})
        if not isinstance(values, dict):
            raise ConfigurationError(f"{path}: [{section}] must be a table of keys, got {values!r}")
        values = dict(values)
        nested = {
            "policy": ("params", "policy_params"),
            "predictors": ("params", "predictor_params"),
            "workload": ("params", "workload_params"),
            "failures": ("params", "failures_params"),
        }.get(section)
        if nested and nested[0] in values:  # [policy.params] is the policy's constructor parameters
            given, before = values.pop(nested[0]), values.get(nested[1], {})
            if not isinstance(given, dict) or not isinstance(before, dict):
                raise ConfigurationError(
                    f"{path}: [{section}] params must be a table of constructor parameters "
                    f"([{section}.params] with key = value lines), got {given if not isinstance(given, dict) else before!r}"
                )
            values[nested[1]] = {**before, **given}
        _check_keys(path, f"[{section}]", values, set(members) | ({"scheduler"} if section == "policy" else set()))
        base.update(values)
    grid = {key: list(values) if isinstance(values, list) else [values] for key, values in data.get("grid", {}).items()}
    cases = [dict(case) for case in data.get("case", [])] or [{}]
    _check_keys(path, "[grid]", grid, FIELDS)
    for case in cases:
        _check_keys(path, "a [[case]]", case, FIELDS | {"name"})
    for key, values in grid.items():
        if not values:
            raise ConfigurationError(f"{path}: grid parameter {key!r} has no values")
    for key in INPUT_FILE_FIELDS:
        if key in base:
            base[key] = _resolve(base[key], path.parent, key)
        if key in grid:
            grid[key] = [_resolve(value, path.parent, key) for value in grid[key]]
        for case in cases:
            if key in case:
                case[key] = _resolve(case[key], path.parent, key)
    seeds = data.get("seeds", [])
    if not isinstance(seeds, list) or not all(isinstance(seed, int) and not isinstance(seed, bool) for seed in seeds):
        raise ConfigurationError(f"{path}: seeds must be a list of integers, got {seeds!r}")
    if "seeds" in data and not seeds:
        raise ConfigurationError(f"{path}: seeds = [] lists no seed; leave seeds out to run every point once with the base seed")
    sets = data.get("sets", 0)
    if not isinstance(sets, int) or sets < 0:
        raise ConfigurationError(f"{path}: sets must be an integer >= 0, got {sets!r}")
    output = data.get("output", "")
    if not isinstance(output, str):
        raise ConfigurationError(f"{path}: output must be a folder name, got {output!r}")
    names = [case.get("name") for case in cases if "name" in case]
    if len(names) != len(set(names)):
        raise ConfigurationError(f"{path}: two cases have the same name")
    experiment = Experiment(
        path, data.get("title", path.stem), data.get("reference", ""), base, grid, [], cases, seeds, sets, [], output
    )
    experiment.max_runs = data.get("max_runs")
    parameters = set(experiment.parameters) | {"seed", "job_set"}
    for key in data.get("replicates", []):
        if key not in parameters or key == "name":
            raise ConfigurationError(
                f"{path}: replicates names {key!r}, which is not a parameter that repeats a case here "
                f"(the file's: {', '.join(sorted(parameters - {'name'}))})"
            )
    experiment.replicates = list(data.get("replicates", []))
    compare = data.get("compare", "")
    if compare and (compare not in set(experiment.parameters) or compare in experiment.replicates):
        raise ConfigurationError(
            f"{path}: compare names {compare!r}, which is not a parameter that varies between cases here "
            f"(the file's: {', '.join(key for key in experiment.parameters if key not in experiment.replicates)})"
        )
    experiment.compare = compare
    for point in [next(experiment.iter_points(), {})] + [{**case} for case in cases]:
        try:
            experiment.scenario(point)
        except ValidationError as error:  # pragma: no cover - Scenario.make wraps these
            raise scenario_error(error, str(path)) from None
    columns = set(grid) | set(base) | {key for case in cases for key in case} | {"seed", "job_set", "size_group"}
    for raw in data.get("figure", []):
        if not {"name", "x", "y"} <= set(raw):
            raise ConfigurationError(f"{path}: a [[figure]] needs name, x and y")
        _check_keys(
            path, f"figure {raw['name']!r}", raw, {"name", "x", "series", "y", "where", "title", "x_label", "table", "log_y"}
        )
        spec = FigureSpec(
            name=raw["name"],
            x=raw["x"],
            series=raw.get("series", ""),
            y=tuple(raw["y"]),
            where={
                key: _resolve(value, path.parent, key) if key in INPUT_FILE_FIELDS else value
                for key, value in raw.get("where", {}).items()
            },
            title=raw.get("title", ""),
            x_label=raw.get("x_label", raw["x"]),
            table=raw.get("table", "results"),
            log_y=bool(raw.get("log_y", False)),
        )
        if spec.table not in ("results", "size_groups"):
            raise ConfigurationError(f"{path}: figure {spec.name!r}: table must be results or size_groups")
        for key in [spec.x, spec.series, *spec.where]:
            if key and key not in columns:
                raise ConfigurationError(f"{path}: figure {spec.name!r} names {key!r}, which is not a run parameter of this file")
        experiment.figures.append(spec)
    for raw in data.get("paper", []):
        if set(raw) != {"case", "metric", "value"} or not isinstance(raw["value"], (int, float)):
            raise ConfigurationError(f"{path}: a [[paper]] entry needs case, metric and a numeric value, got {raw!r}")
        experiment.paper.append(dict(raw))
    return experiment
