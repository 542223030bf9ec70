"""The ``torus-sim`` command line: one ``run`` and one ``sweep`` for every platform, workload and policy.

``torus-sim run`` with no arguments replays the bundled NASA iPSC/860 log with the bundled BG/L
RAS failures on the 4x4x8 torus under Krevat's scheduler, prints the summary, and writes
``jobs.csv`` and ``summary.json`` into ``--out``. ``torus-sim run FILE`` runs a scenario file;
options given next to it replace the file's values. ``torus-sim sweep FILE`` runs a file's grid on
any executor and draws its figures.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import typing
from pathlib import Path

from torus_sim import commands as small_commands
from torus_sim.errors import TorusSimError

__all__ = ["build_parser", "main"]


def _short_help(field: str) -> str | None:
    """The help of ``--workload`` / ``--failures``: the forms their registries know (built-ins and installed plug-ins)."""
    from torus_sim.extensions import input_registries

    registries = input_registries()
    if field not in registries:
        return None
    registry = registries[field][0]
    forms = []
    for name in registry.names():
        try:
            factory = registry.resolve(name)[0]
        except TorusSimError:
            continue
        if getattr(factory, "takes_argument", False):
            forms.append(f"{name}:{getattr(factory, 'argument_form', '...')}")
        elif getattr(factory, "reads_file", False):
            forms.append(f"a {name} file ({', '.join(getattr(factory, 'suffixes', ())) or 'by its content'})")
        else:
            forms.append(name)
    return " | ".join(forms) + " | an import path package.module:Class"


_NEGATED = {
    "backfill": "--no-backfill",
    "migration": "--no-migration",
    "fit_failures": "--no-fit-failures",
    "mira_io_drawers": "--no-mira-io-drawers",
    "mira_maintenance": "--no-mira-maintenance",
}
_ALIASES = {"policy": ["--scheduler"], "nodes": ["--processors"]}


def _value(text: str):
    """A command-line value as a scenario field gets it: a number when it reads as one."""
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def _duration(text: str) -> str:
    """A duration as Solara reads it (``90s``, ``2m``, ``1.5h``, ``1d``; seconds without a unit)."""
    import re

    if not re.fullmatch(r"\d+(\.\d+)?[smhd]?", text.strip()):
        raise argparse.ArgumentTypeError(f"expected a duration such as 90s, 2m or 1h, got {text!r}")
    return text.strip()


def _parameter(text: str) -> tuple[str, object]:
    """``key=value`` of ``--policy-param``: the value read as a TOML value (``3``, ``0.5``, ``true``, ``"x"``, ``[1, 2]``), else as text."""
    import tomllib

    key, sep, value = text.partition("=")
    key = key.strip()
    if not sep or not key.isidentifier():
        raise argparse.ArgumentTypeError(f"expected key=value with a Python name as key, got {text!r}")
    try:
        return key, tomllib.loads(f"value = {value.strip()}")["value"]
    except tomllib.TOMLDecodeError:
        return key, value


class _ParameterAction(argparse.Action):
    """Collect repeated ``--x-param key=value`` into one dict."""

    def __call__(self, parser, namespace, values, option_string=None):
        current = dict(getattr(namespace, self.dest, None) or {})
        key, value = values
        current[key] = value
        setattr(namespace, self.dest, current)


def _positive(text: str) -> int:
    """An integer >= 1 (argparse type)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {value}")
    return value


def _bounded(low: int, high: int):
    """An argparse type: an integer in ``low..high``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer from {low:,} to {high:,}, got {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"expected an integer from {low:,} to {high:,}, got {value:,}")
        return value

    return parse


def _fraction(text: str) -> float:
    """An argparse type: a number in [0, 1)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1), got {text!r}") from None
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1), got {value}")
    return value


def _tuple(text: str):
    return [_value(part) for part in text.replace("x", ",").split(",")]


def _add_scenario_options(parser: argparse.ArgumentParser) -> None:
    """One option per scenario field (``--load-scale``, ``--no-backfill``, ...); defaults stay the scenario's."""
    from torus_sim.scenario import SECTIONS, Scenario

    for section, members in SECTIONS.items():
        group = parser.add_argument_group(f"[{section}]")
        for name in members:
            info = Scenario.model_fields[name]
            help_text = (_short_help(name) or info.description or "").replace("%", "%%")  # argparse formats help with %
            default = info.default
            if name in _NEGATED:
                group.add_argument(_NEGATED[name], dest=name, action="store_false", default=argparse.SUPPRESS, help=help_text)
                continue
            if name == "fairness":
                group.add_argument(
                    "--fairness", dest=name, action=argparse.BooleanOptionalAction, default=argparse.SUPPRESS, help=help_text
                )
                continue
            if name.endswith("_params"):
                flag = "--" + name[: -len("s")].replace("_", "-")
                group.add_argument(
                    flag,
                    dest=name,
                    type=_parameter,
                    action=_ParameterAction,
                    metavar="KEY=VALUE",
                    default=argparse.SUPPRESS,
                    help=help_text + " (repeat for each; the value read as TOML, else as text)",
                )
                continue
            if name in ("monotonic", "bound_verification", "power"):
                flag = "--" + name.replace("_", "-")
                group.add_argument(flag, dest=name, action="store_true", default=argparse.SUPPRESS, help=help_text)
                continue
            flags = ["--" + name.replace("_", "-"), *_ALIASES.get(name, [])]
            annotation = str(info.annotation)
            kind = str if name == "torus_dims" else _tuple if "tuple" in annotation else _value  # 2x3x4x4, 4x4x8m
            choices = None
            origin = typing.get_origin(info.annotation)
            if origin is typing.Literal:
                choices = list(typing.get_args(info.annotation))
            shown = f" (default: {default})".replace("%", "%%") if default is not None else ""
            group.add_argument(*flags, dest=name, type=kind, choices=choices, default=argparse.SUPPRESS, help=help_text + shown)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``torus-sim``."""
    from torus_sim.scenario import Scenario

    parser = argparse.ArgumentParser(
        prog="torus-sim", description="Job scheduling on failure-prone machines: the BlueGene/L torus and clusters."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    run_parser = commands.add_parser(
        "run", help="one run: any platform, workload, failures and policy (options or a scenario file)"
    )
    run_parser.add_argument(
        "file", nargs="?", default=None, help="a scenario TOML file (without a grid); options replace its values"
    )
    run_parser.add_argument("--out", default="torus-sim-results", help="folder for jobs.csv and summary.json (and scenarios.csv)")
    formats = run_parser.add_argument_group("output formats (besides jobs.csv and summary.json)")
    formats.add_argument(
        "--batsim", action="store_true", help="also batsim_jobs.csv: Batsim's job record, one row per attempt (evalys reads it)"
    )
    formats.add_argument(
        "--swf", action="store_true", help="also schedule.swf: the simulated schedule in SWF, one line per attempt"
    )
    formats.add_argument(
        "--parquet", action="store_true", help="also every table as .parquet with the manifest in its metadata (needs pyarrow)"
    )
    formats.add_argument(
        "--format",
        action="append",
        default=[],
        metavar="NAME",
        help="also this output format (a registry name: batsim, swf, parquet, an installed plug-in's, or an import path); repeat for each",
    )
    run_parser.add_argument(
        "--no-progress", dest="progress", action="store_false", help="no progress bar (it shows only on a terminal, after 2 s)"
    )
    _add_scenario_options(run_parser)

    for name in ("sweep", "experiment"):
        sweep_parser = commands.add_parser(
            name,
            help="run a scenario file (a grid of runs x sets x seeds) and draw its figures"
            + (" (alias of sweep)" if name == "experiment" else ""),
        )
        sweep_parser.add_argument("file", help="scenario TOML file (see experiments/)")
        sweep_parser.add_argument(
            "--out", default=None, help="results folder (default: the file's output, or torus-sim-results/<file stem>)"
        )
        sweep_parser.add_argument(
            "--executor", choices=["serial", "process", "dask"], default="serial", help="where the runs execute (default: serial)"
        )
        sweep_parser.add_argument(
            "--workers", type=int, default=2, help="worker processes (process executor, local Dask cluster; default: 2)"
        )
        sweep_parser.add_argument(
            "--scheduler-address", default=None, help="Dask scheduler tcp://host:port (a real cluster) instead of a local one"
        )
        sweep_parser.add_argument(
            "--max-jobs", type=_positive, default=None, help="use only the first N jobs of each workload (reduced runs)"
        )
        sweep_parser.add_argument(
            "--sets", type=_positive, default=None, help="run only the first N job sets (reduced batch experiments)"
        )
        sweep_parser.add_argument(
            "--scenarios", type=_positive, default=None, help="failure scenarios per batch run (reduced batch experiments)"
        )
        sweep_parser.add_argument(
            "--yes", action="store_true", help="run a sweep larger than its max_runs (default limit 10,000 runs)"
        )
        sweep_parser.add_argument("--replot", action="store_true", help="only redraw the figures from an existing results.csv")
        sweep_parser.add_argument(
            "--check",
            action="store_true",
            help="re-run into a scratch folder and compare every result with the results folder's (exit 1 if any differs)",
        )
        sweep_parser.add_argument(
            "--rtol", type=float, default=0.0, help="--check: relative tolerance on numbers (default 0: identical as written)"
        )
        sweep_parser.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bar")
        sweep_parser.add_argument(
            "--parquet", action="store_true", help="also results.parquet (and each table) with the file's title in its metadata"
        )

    viz_parser = commands.add_parser(
        "viz", help="open the browser visualization (Mesa SolaraViz)", formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    viz_parser.add_argument("--host", default="127.0.0.1", help="address to serve on")
    viz_parser.add_argument("--port", type=int, default=8765, help="port to serve on")
    viz_parser.add_argument(
        "--cull-timeout",
        default="2m",
        type=_duration,
        help="how long a closed tab's session is kept before its model is freed, e.g. 90s, 2m, 1h (Solara's own default: 24h)",
    )

    tables_parser = commands.add_parser(
        "ckpt-tables", help="print the CKPT-MIG slides' tables, recomputed (checkpointing vs migration)"
    )
    tables_parser.add_argument(
        "--table", choices=["today", "2011", "2015", "yield", "capped", "all"], default="all", help="which table"
    )
    compare_parser = commands.add_parser(
        "ckpt-compare", help="simulated vs analytic yields of periodic / preventive checkpointing and preventive migration"
    )
    compare_parser.add_argument("--jobs", type=int, default=2000, help="jobs of the steady-state synthetic workload")
    compare_parser.add_argument("--seed", type=int, default=1, help="seed")

    figure_parser = commands.add_parser("figure", help="redraw one paper figure from stored sweep results")
    figure_parser.add_argument("name", help="figure name as in a scenario file, e.g. fig3_bsld_vs_failures")
    figure_parser.add_argument(
        "--experiments", default="experiments", help="folder searched for the scenario file that defines the figure"
    )
    figure_parser.add_argument(
        "--results", default=None, help="folder holding results.csv (default: torus-sim-results/<file stem>)"
    )
    figure_parser.add_argument(
        "--out", default="torus-sim-results/figures", help="folder for the PNG (default: torus-sim-results/figures)"
    )

    summarize = commands.add_parser(
        "summarize", help="expected and maximum ratios over batch results.csv files (e.g. MOLDABLE Table 1 over every setting)"
    )
    summarize.add_argument("results", nargs="+", help="results.csv files of batch experiments")
    summarize.add_argument("--by", nargs="+", default=["policy", "workload"], help="columns to group on")
    summarize.add_argument("--out", default=None, help="write the summary to this CSV")

    generate = commands.add_parser(
        "generate-rigid", help="write a RIGID §5.1 job set and its failure scenarios in the reference code's formats"
    )
    generate.add_argument("out", help="folder for jobs.txt and failures.txt")
    generate.add_argument("--jobs", type=_bounded(1, 10**6), default=100, help="n, 1 to 1,000,000")
    generate.add_argument("--processors", type=_bounded(1, 2**22), default=10000, help="P, 1 to 4,194,304")
    generate.add_argument("--mean-failure-probability", type=_fraction, default=0.3, help="q̄, in [0, 1)")
    generate.add_argument("--scenarios", type=_bounded(1, 10**6), default=1000, help="failure scenarios, 1 to 1,000,000")
    priorities = list(typing.get_args(Scenario.model_fields["priority"].annotation))  # RIGID §4's rules
    generate.add_argument("--priority", choices=priorities, default=priorities[0])
    generate.add_argument("--seed", type=_bounded(0, 2**63 - 1), default=0)

    for old in ("flat", "online"):
        alias = commands.add_parser(old, help=f"removed in 0.2: prints the equivalent {'run / sweep'} command", add_help=False)
        alias.add_argument("rest", nargs=argparse.REMAINDER)
    return parser


def _line_buffered(stream) -> None:
    """Flush ``stream`` at each line even when it is a file or a pipe (no-op where it cannot be reconfigured)."""
    try:
        stream.reconfigure(line_buffering=True)
    except (AttributeError, ValueError, OSError):
        pass


def main(argv: list[str] | None = None) -> int:
    """Run the command line.

    Returns:
        0 on success, 2 on bad input or configuration, on an extension that failed or on an output that
        could not be written (with the reason on stderr, never a traceback), 130 on Ctrl-C (one line;
        a run writes nothing, a sweep keeps the runs it finished).
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    import warnings

    warnings.formatwarning = _warning_line  # one line each: "torus-sim: warning: ...", no source line
    _line_buffered(sys.stdout)  # a run's header reaches a log file or a pipe when printed, not at exit
    if argv and argv[0] in ("flat", "online"):  # removed commands: whatever follows, even --help, gets the new form
        return small_commands.removed(argparse.Namespace(command=argv[0], rest=argv[1:]))
    args = build_parser().parse_args(argv)
    try:
        if args.command == "run":
            return _run(args)
        if args.command in ("sweep", "experiment"):
            return _sweep(args)
        if args.command == "figure":
            return small_commands.figure(args)
        if args.command == "summarize":
            return small_commands.summarize(args)
        if args.command == "generate-rigid":
            return small_commands.generate_rigid(args)
        if args.command == "viz":
            return small_commands.viz(args)
        if args.command == "ckpt-tables":
            return small_commands.ckpt_tables(args)
        if args.command == "ckpt-compare":
            from torus_sim.experiments.ckpt_yields import compare_yields

            table = compare_yields(n_jobs=args.jobs, seed=args.seed)
            print(table.to_string(index=False, float_format=lambda value: f"{value:.4f}"))
            return 0
    except (TorusSimError, FileNotFoundError, IsADirectoryError, PermissionError) as error:
        print(f"torus-sim: error: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader of the output went away (``| head``): stop without a traceback
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except OSError as error:  # a full disk, a quota, a read-only file system, a link loop: one sentence
        print(f"torus-sim: error: {_os_error_text(error, args.command == 'run')}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C (or a plug-in raising KeyboardInterrupt): one line, the shell's 130
        kept = "nothing was written" if args.command == "run" else "finished runs are kept: the same command resumes"
        print(f"torus-sim: interrupted (Ctrl-C): {kept}", file=sys.stderr)
        return 130
    return 0


def _os_error_text(error: OSError, whole: bool) -> str:
    """An operating-system error as one sentence: ``runs/out/.jobs.csv.x1.tmp: No space left on device; nothing was written``.

    Args:
        error: the error.
        whole: the command writes all or nothing (``run``), so the sentence can say nothing was written.
    """
    reason = error.strerror or str(error)
    where = f"{error.filename}: " if error.filename is not None else ""
    return f"{where}{reason}" + ("; nothing was written" if whole else "")


def _warning_line(message, category, filename, lineno, line=None) -> str:
    """A warning as the command line shows it: one line, no file, no source."""
    return f"torus-sim: warning: {message}\n"


def _scenario_from(args):
    """The run's scenario: the file's (if any) with the options given on the command line on top."""
    from torus_sim.experiments import load_experiment
    from torus_sim.scenario import Scenario

    given = {
        key: value
        for key, value in vars(args).items()
        if key not in ("command", "file", "out", "batsim", "swf", "parquet", "format", "progress")
    }
    if args.file is None:
        return Scenario.make("the command line", **given)
    experiment = load_experiment(args.file)
    for name in [key for key in given if key.endswith("_params")]:  # --x-param adds to the file's table
        given[name] = {**experiment.base.get(name, {}), **given[name]}
    if experiment.run_count() > 1:
        raise TorusSimError(f"{args.file} has a grid of {experiment.run_count():,} runs: run it with torus-sim sweep {args.file}")
    point = next(experiment.iter_points(), {})
    return experiment.scenario(point, **given)


def _counts_text(counts: dict | None) -> str:
    """Cleaning counts as words: ``size rounded up 56, walltime from runtime 200`` (``nothing`` when empty)."""
    if not counts:
        return "nothing"
    return ", ".join(
        f"{name.replace('_', ' ')} {f'{value:,}' if isinstance(value, int) else value}" for name, value in counts.items()
    )


def _run(args) -> int:
    from torus_sim.files import check_output_folder
    from torus_sim.formats.catalog import output_format
    from torus_sim.platforms.kinds import platform_kind
    from torus_sim.reports import format_summary, write_results
    from torus_sim.runner import run

    scenario = _scenario_from(args)
    for name in args.format:  # an unknown format is refused before the simulation
        output_format(name)
    check_output_folder(args.out)  # before the simulation, not after it
    began = time.perf_counter()
    result = run(scenario, progress=args.progress)
    paths = write_results(args.out, result, batsim=args.batsim, swf=args.swf, parquet=args.parquet, formats=args.format)
    workload = result.inputs["workload"]
    failures = result.inputs["failures"]
    platform = result.inputs["platform"]
    first = f"the first {workload['jobs']:,} jobs" if scenario.max_jobs else f"{workload['jobs']:,} jobs"
    load = (
        f"; offered load {workload['offered_load']:.3f} at c = {workload['load_scale']:.4g}"
        if workload.get("offered_load")
        else ""
    )
    print(f"workload  {workload['path']}  ({first}, {workload['kind']}; cleaning {_counts_text(workload['cleaning'])}{load})")
    print(f"platform  {platform_kind(scenario.platform).header(platform)}")
    read = (failures.get("source") or "").split("|")[0]  # the file read (#system=N kept), without the fitting spec
    if not read or read == failures["spec"]:
        named = failures["spec"]
    else:
        named = read if read.startswith(failures["spec"]) else f"{failures['spec']}: {read}"
    print(
        f"failures  {named}  ({failures['count']:,} fail-stop"
        + (f"; {failures['timing']}" if failures.get("timing") else "")
        + f"); silent errors {result.inputs['silent_errors']}"
    )
    settings = f", {result.inputs['policy_settings']}" if result.inputs.get("policy_settings") else ""
    used = result.inputs["extensions"].get("predictor") is not None  # None: the placement asks no predictor
    predictor = f" (predictor {result.inputs['predictor']})" if used else ""
    runtime = f", runtime predictor {scenario.runtime_predictor}" if scenario.runtime_predictor else ""
    c = workload.get("load_scale", scenario.load_scale)
    scale = f"; c = {c:.4g}" if workload["kind"] != "batch" else ""  # c scales arrival times: no meaning for a batch
    print(f"policy    {_policy_line(result.inputs)}{predictor}{settings}{runtime}{scale}; seed {scenario.seed}")
    declared = workload.get("declared") or {}
    if declared:
        ran = ", ".join(
            f"{name} {item['ran']} "
            + ("(the header's)" if item["ran"] == item["declared"] else f"(given; the header's: {item['declared']})")
            for name, item in declared.items()
        )
        print(f"header    ran {ran}")
    power = result.inputs.get("power")
    if power:
        node = power["node"]
        print(
            f"power     {node['unit']} idle {node['idle_w']:,.0f} W, busy {node['busy_w']:,.0f} W, down {node['down_w']:,.0f} W "
            f"(busy: {power['sources']['busy']}; idle: {power['sources']['idle']}); jobs: {power['job_power']}; "
            f"price: {power['tariff']}; t = 0 at {scenario.clock_start_hour:g}:00"
            + (f"; {power['cap']}" if power.get("cap") else "")
            + (f"; {power['switch_off']['description']}" if power.get("switch_off") else "")
        )
    for kind in ("placement", "predictor", "runtime_predictor"):
        info = result.inputs["extensions"].get(kind)
        if info and info["origin"] != "built-in":
            print(f"{kind.replace('_', ' '):9s} {_describe(info)}")
    print()
    print(format_summary(result.summary, platform["kind"]))
    if not result.scenarios.empty and len(result.scenarios) > 1:
        print()
        print(result.scenarios.to_string(index=False, float_format=lambda value: f"{value:.6f}"))
    print()
    print(f"wrote {', '.join(str(path) for path in paths.values())} ({time.perf_counter() - began:.1f} s)")
    return 0


def _describe(info: dict) -> str:
    from torus_sim.registry import PluginInfo

    return PluginInfo(**info).describe()


def _policy_line(inputs: dict) -> str:
    """The policy as it ran: its name, and for a plug-in where it came from (package, version, import path, source hash)."""
    info = inputs["extensions"]["policy"]
    if info.get("alias_of"):
        return _describe(info)
    return _describe(info) if info["origin"] != "built-in" else inputs["policy"]


def _sweep(args) -> int:
    import pandas as pd

    from torus_sim.experiments import load_experiment, run_experiment, write_experiment
    from torus_sim.experiments.experiment import file_fields_absolute
    from torus_sim.files import check_output_folder

    experiment = load_experiment(args.file)
    out = Path(args.out or experiment.output or Path("torus-sim-results") / experiment.path.stem)
    check_output_folder(out, ("results.csv",))
    if args.replot:  # the tables name input files relative to the scenario file; its figures' filters, absolute
        folder = experiment.path.parent
        table = file_fields_absolute(pd.read_csv(out / "results.csv"), folder)
        tables = {
            name: file_fields_absolute(pd.read_csv(out / f"{name}.csv"), folder)
            for name in ("size_groups", "summary", "comparison")
            if (out / f"{name}.csv").exists()
        }
        for path in write_experiment(experiment, table, out, tables)[1:]:
            print(f"wrote {path}")
        return 0
    if args.sets is not None:
        experiment.sets = min(args.sets, experiment.sets) if experiment.sets else args.sets
    experiment.check_size(args.yes)
    overrides = {key: getattr(args, key) for key in ("max_jobs", "scenarios") if getattr(args, key)}
    if args.check:
        return _check_sweep(experiment, out, args, overrides)
    reference = f" ({experiment.reference})" if experiment.reference else ""
    table = run_experiment(
        experiment,
        args.executor,
        args.workers,
        out,
        args.scheduler_address,
        progress=args.progress,
        on_checked=lambda: print(
            f"{experiment.title}{reference}: {experiment.run_count():,} runs on {args.executor}", file=sys.stderr
        ),
        **overrides,
    )
    for path in write_experiment(experiment, table, out, parquet=args.parquet):
        print(f"wrote {path}")
    return 0


def _check_sweep(experiment, out: Path, args, overrides: dict) -> int:
    """``sweep --check``: the runs again, in a scratch folder, compared with ``out``'s tables."""
    import tempfile

    from torus_sim.experiments import run_experiment, write_experiment
    from torus_sim.experiments.check import compare_tables

    if not (out / "results.csv").exists():
        print(f"torus-sim: error: --check compares with {out / 'results.csv'}, which does not exist", file=sys.stderr)
        return 2
    announce = f"{experiment.title}: {experiment.run_count():,} runs on {args.executor}, compared with {out}"
    with tempfile.TemporaryDirectory(prefix="torus-sim-check-") as scratch:
        fresh = Path(scratch)
        table = run_experiment(
            experiment,
            args.executor,
            args.workers,
            fresh / "runs",
            args.scheduler_address,
            progress=args.progress,
            on_checked=lambda: print(announce, file=sys.stderr),
            **overrides,
        )
        write_experiment(experiment, table, fresh)
        report = compare_tables(out, fresh, args.rtol)
    cells = sum(report.compared.values())
    for problem in report.problems:
        print(f"{out}: {problem}")
    for table_name, row, column, old, new in report.differences[:20]:
        print(f"{out}: {table_name}.csv {row} {column}: committed {old!r}, now {new!r}")
    if len(report.differences) > 20:
        print(f"{out}: ... {len(report.differences) - 20} more differences")
    if report.identical:
        print(f"{out}: identical ({cells:,} values in {', '.join(f'{name}.csv' for name in report.compared)})")
        return 0
    print(f"{out}: {len(report.differences):,} of {cells:,} values differ")
    return 1


if __name__ == "__main__":
    sys.exit(main())
