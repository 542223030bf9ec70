"""``torus-sim flat ...``: the flat-platform commands (RIGID and MOLDABLE).

Subcommands:
    rigid JOBS FAILURES     run a reference-code job file under its failure scenarios
    moldable                draw a moldable job set and scenarios, run one algorithm
    generate-rigid          write a RIGID §5.1 job set and scenarios in the reference code's formats
    experiment FILE         run a flat experiment file (CSV + PNG)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from torus_sim.errors import TorusSimError

__all__ = ["add_flat_parser", "run_flat_command"]


def add_flat_parser(commands) -> None:
    """Add the ``flat`` command and its subcommands to the top-level parser's subparsers."""
    from torus_sim.flat.runs import MOLDABLE_ALGORITHMS, RIGID_HEURISTICS
    from torus_sim.flat.speedup import SPEEDUP_MODELS
    from torus_sim.policies.rigid import PRIORITY_RULES

    flat = commands.add_parser("flat", help="P identical processors: resilient rigid and moldable batch scheduling")
    sub = flat.add_subparsers(dest="flat_command", required=True)

    rigid = sub.add_parser(
        "rigid",
        help="run a reference-code job file under its failure scenarios",
        description="Prints one line per scenario: makespan, L(f), failures (full precision).",
    )
    rigid.add_argument("jobs", help="job file: header 'lambda P V priority batch naive shelf', then 'TaskN rgd <t> <p>'")
    rigid.add_argument("failures", help="failure file: one line per scenario, one integer per job")
    rigid.add_argument("--scenarios", type=int, default=None, help="scenarios to run (default: every line)")
    rigid.add_argument("--heuristic", choices=RIGID_HEURISTICS, default=None, help="default: the header's flags")
    rigid.add_argument("--priority", choices=PRIORITY_RULES, default=None, help="default: the header's priority")
    rigid.add_argument("--processors", type=int, default=None, help="P (default: the header's)")
    rigid.add_argument("--seed", type=int, default=0, help="seed of the RANDOM priority")

    moldable = sub.add_parser("moldable", help="draw a MOLDABLE §5.1 job set and scenarios and run one algorithm")
    moldable.add_argument("--model", choices=SPEEDUP_MODELS, default="mix")
    moldable.add_argument("--table", default=None, help="a file of execution times t_j(1..P) per job instead of a drawn model")
    moldable.add_argument("--monotonic", action="store_true", help="check the --table against the monotonic model")
    moldable.add_argument("--algorithm", choices=MOLDABLE_ALGORITHMS, default="LPA")
    moldable.add_argument("--priority", choices=PRIORITY_RULES, default="LPT")
    moldable.add_argument("--jobs", type=int, default=500, help="n")
    moldable.add_argument("--processors", type=int, default=7500, help="P")
    moldable.add_argument("--error-rate", type=float, default=1e-7, help="λ per second of work")
    moldable.add_argument("--scenarios", type=int, default=10)
    moldable.add_argument("--verification-time", type=float, default=0.0, help="V seconds per attempt")
    moldable.add_argument("--seed", type=int, default=0)

    generate = sub.add_parser(
        "generate-rigid", help="write a RIGID §5.1 job set and its scenarios in the reference code's formats"
    )
    generate.add_argument("out", help="folder for jobs.txt and failures.txt")
    generate.add_argument("--jobs", type=int, default=100)
    generate.add_argument("--processors", type=int, default=10000)
    generate.add_argument("--mean-failure-probability", type=float, default=0.3, help="q̄")
    generate.add_argument("--scenarios", type=int, default=1000)
    generate.add_argument("--priority", choices=PRIORITY_RULES, default="LPT")
    generate.add_argument("--seed", type=int, default=0)

    summarize = sub.add_parser(
        "summarize", help="expected and maximum ratios over several results.csv (e.g. MOLDABLE Table 1 over every setting)"
    )
    summarize.add_argument("results", nargs="+", help="results.csv files of flat experiments")
    summarize.add_argument("--by", nargs="+", default=["algorithm", "model"], help="columns to group on")
    summarize.add_argument("--out", default=None, help="write the summary to this CSV")

    experiment = sub.add_parser("experiment", help="run a flat experiment file (experiments/rigid, experiments/moldable)")
    experiment.add_argument("file")
    experiment.add_argument("--workers", type=int, default=1, help="processes")
    experiment.add_argument("--sets", type=int, default=None, help="override the number of job sets")
    experiment.add_argument("--scenarios", type=int, default=None, help="override the scenarios per set")
    experiment.add_argument(
        "--out", default=None, help="results folder (default: the file's output, or torus-sim-results/<stem>)"
    )
    experiment.add_argument("--replot", action="store_true", help="redraw from the stored results.csv")
    experiment.add_argument("--no-progress", dest="progress", action="store_false")


def run_flat_command(args: argparse.Namespace) -> int:
    """Run a ``flat`` subcommand; 0 on success, 2 on bad input (reason on stderr)."""
    try:
        return {
            "rigid": _rigid,
            "moldable": _moldable,
            "generate-rigid": _generate,
            "experiment": _experiment,
            "summarize": _summarize,
        }[args.flat_command](args)
    except (TorusSimError, FileNotFoundError) as error:
        print(f"torus-sim: error: {error}", file=sys.stderr)
        return 2


def _rigid(args) -> int:
    from torus_sim.flat.bounds import rigid_lower_bound
    from torus_sim.flat.runs import run_rigid
    from torus_sim.workload.refcode import read_failure_scenarios, read_rigid_jobs

    header, jobs = read_rigid_jobs(args.jobs)
    failures = read_failure_scenarios(args.failures, len(jobs), args.scenarios)
    heuristic = args.heuristic or header.heuristic()
    priority = args.priority or header.priority
    total = args.processors or header.processors
    bounds = rigid_lower_bound(jobs.runtimes, jobs.processors, failures, total, header.verification_time)
    ratios = _print_scenarios(
        failures,
        bounds,
        lambda index, scenario: run_rigid(jobs, total, scenario, heuristic, priority, header.verification_time, args.seed),
    )
    print(
        f"# {heuristic} {priority} P = {total}: {len(ratios)} scenarios, mean makespan / L(f) = {np.mean(ratios):.6f}, "
        f"max {np.max(ratios):.6f}",
        file=sys.stderr,
    )
    return 0


def _print_scenarios(failures: np.ndarray, bounds: np.ndarray, run_one) -> list[float]:
    """Run ``run_one(index, scenario)`` per scenario, print ``makespan bound failures`` at full precision; the ratios."""
    ratios = []
    for index, (scenario, bound) in enumerate(zip(failures, bounds, strict=True)):
        makespan = run_one(index, scenario).makespan
        ratios.append(makespan / bound)
        print(f"{makespan!r} {float(bound)!r} {int(scenario.sum())}")
    return ratios


def _moldable(args) -> int:
    from torus_sim.flat.bounds import moldable_lower_bound
    from torus_sim.flat.runs import moldable_allocation, run_moldable
    from torus_sim.flat.scenarios import draw_scenarios, failure_probabilities_by_work
    from torus_sim.flat.speedup import generate_speedup_model, read_time_table
    from torus_sim.policies.moldable import AllotmentTables

    rng = np.random.default_rng(args.seed)
    model = read_time_table(args.table, args.monotonic) if args.table else generate_speedup_model(args.model, args.jobs, rng)
    processors = min(args.processors, model.max_processors) if args.table else args.processors
    times = model.times(processors)
    failures = draw_scenarios(failure_probabilities_by_work(model.work, args.error_rate), args.scenarios, rng)
    bounds = moldable_lower_bound(times, failures)
    tables = AllotmentTables(times) if args.algorithm == "BATCH" else None
    allocation = None if args.algorithm == "BATCH" else moldable_allocation(args.algorithm, times)  # once, not per scenario
    ratios = _print_scenarios(
        failures,
        bounds,
        lambda index, scenario: run_moldable(
            times, scenario, args.algorithm, args.priority, args.verification_time, index, tables, allocation=allocation
        ),
    )
    print(
        f"# {args.algorithm} {args.priority} {args.table or args.model} n = {len(model)} P = {processors} λ = {args.error_rate}: "
        f"mean makespan / L' = {np.mean(ratios):.4f}, max {np.max(ratios):.4f}",
        file=sys.stderr,
    )
    return 0


def _generate(args) -> int:
    from torus_sim.flat.jobs import generate_rigid_set
    from torus_sim.flat.scenarios import draw_scenarios, error_rate_for_mean_probability, failure_probabilities_by_area
    from torus_sim.workload.refcode import RefcodeHeader, write_failure_scenarios, write_rigid_jobs

    rng = np.random.default_rng(args.seed)
    jobs = generate_rigid_set(rng, args.jobs)
    jobs.check_fits(args.processors)
    rate = error_rate_for_mean_probability(jobs.areas, args.mean_failure_probability)
    failures = draw_scenarios(failure_probabilities_by_area(jobs.areas, rate), args.scenarios, rng)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    print(f"wrote {write_rigid_jobs(out / 'jobs.txt', RefcodeHeader(rate, args.processors, 0.0, args.priority), jobs)}")
    print(f"wrote {write_failure_scenarios(out / 'failures.txt', failures)}")
    return 0


def _experiment(args) -> int:
    import pandas as pd

    from torus_sim.figures import draw_figure
    from torus_sim.files import atomic_write
    from torus_sim.flat.experiments import expected_ratio_table, load_flat_experiment, run_flat_experiment

    experiment = load_flat_experiment(args.file)
    out = Path(args.out or experiment.output or Path("torus-sim-results") / experiment.path.stem)
    results = out / "results.csv"
    if args.replot:
        table = pd.read_csv(results)
    else:
        print(
            f"{experiment.title} ({experiment.reference}): {args.sets or experiment.sets} sets x "
            f"{args.scenarios or experiment.scenarios} scenarios x {len(experiment.points())} grid points",
            file=sys.stderr,
        )
        table = run_flat_experiment(experiment, out, args.workers, args.progress, args.sets, args.scenarios)
        atomic_write(results, lambda handle: table.to_csv(handle, index=False, float_format="%.10g"))
    varied = [key for key, values in experiment.grid.items() if len(values) > 1]
    summary = expected_ratio_table(table, varied or ["priority"])
    atomic_write(out / "summary.csv", lambda handle: summary.to_csv(handle, index=False, float_format="%.6g"))
    print(summary.to_string(index=False, float_format=lambda value: f"{value:.4f}"))
    for spec in experiment.figures:
        print(f"wrote {draw_figure(table, spec, out / f'{spec.name}.png')}")
    print(f"results: {results} and {out / 'summary.csv'}")
    return 0


def _summarize(args) -> int:
    import pandas as pd

    from torus_sim.files import atomic_write
    from torus_sim.flat.experiments import combine_results, expected_ratio_table

    table = combine_results([pd.read_csv(path) for path in args.results])
    missing = [column for column in args.by if column not in table.columns]
    if missing:
        print(f"torus-sim: error: no column {missing} in the results", file=sys.stderr)
        return 2
    summary = expected_ratio_table(table, args.by)
    settings = [column for column in ("jobs", "processors", "error_rate", "mean_failure_probability") if column in table]
    counts = table.drop_duplicates([*args.by, *settings]).groupby(args.by, sort=False).size()
    summary["settings"] = counts.reindex(
        pd.MultiIndex.from_frame(summary[args.by]) if len(args.by) > 1 else summary[args.by[0]]
    ).to_numpy()
    print(summary.to_string(index=False, float_format=lambda value: f"{value:.4f}"))
    if args.out:
        atomic_write(args.out, lambda handle: summary.to_csv(handle, index=False, float_format="%.6g"))
        print(f"wrote {args.out}")
    return 0
