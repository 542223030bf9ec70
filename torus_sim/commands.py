"""The command line's smaller commands: ``figure``, ``summarize``, ``generate-rigid``, ``ckpt-tables``, ``viz`` and the removed ones.

:mod:`torus_sim.cli` parses the command line and runs ``run`` and ``sweep``; each function here
takes the parsed arguments and returns the exit code (0, or 2 with one sentence on standard error).
"""

from __future__ import annotations

import sys
from pathlib import Path

from torus_sim.errors import TorusSimError

__all__ = ["NEW_FORMS", "ckpt_tables", "figure", "generate_rigid", "removed", "summarize", "viz"]


def figure(args) -> int:
    """``torus-sim figure NAME``: redraw one figure of a scenario file from stored sweep results (exit 0, or 2 with a sentence)."""
    import pandas as pd

    from torus_sim.experiments import load_experiment
    from torus_sim.figures import draw_figure

    for path in sorted(Path(args.experiments).glob("**/*.toml")):
        try:
            experiment = load_experiment(path)
        except TorusSimError:
            continue  # a broken file defines no figure
        for spec in experiment.figures:
            if spec.name == args.name:
                folder = Path(args.results) if args.results else Path("torus-sim-results") / path.stem
                source = folder / ("results.csv" if spec.table == "results" else f"{spec.table}.csv")
                if not source.exists():
                    print(f"torus-sim: error: no results at {source}; run: torus-sim sweep {path}", file=sys.stderr)
                    return 2
                target = Path(args.out)
                target.mkdir(parents=True, exist_ok=True)
                print(f"wrote {draw_figure(pd.read_csv(source), spec, target / f'{spec.name}.png')}")
                return 0
    print(f"torus-sim: error: no scenario file under {args.experiments} defines a figure named {args.name!r}", file=sys.stderr)
    return 2


def summarize(args) -> int:
    """``torus-sim summarize RESULTS.csv...``: the expected and maximum ratios of batch experiments, grouped (exit 0 or 2).

    Raises:
        InputFileError: a results file that is binary, not CSV or empty.
    """
    import pandas as pd

    from torus_sim.experiments import combine_results, expected_ratio_table
    from torus_sim.files import atomic_write

    table = combine_results([_results_table(path) for path in args.results])
    missing = [column for column in args.by if column not in table]
    if missing:
        print(f"torus-sim: error: no column {missing} in the results", file=sys.stderr)
        return 2
    summary = expected_ratio_table(table, args.by)
    settings = [column for column in ("jobs", "nodes", "error_rate", "mean_failure_probability") if column in table]
    counts = table.drop_duplicates([*args.by, *settings]).groupby(args.by, sort=False).size()
    summary["settings"] = counts.reindex(
        pd.MultiIndex.from_frame(summary[args.by]) if len(args.by) > 1 else summary[args.by[0]]
    ).to_numpy()
    print(summary.to_string(index=False, float_format=lambda value: f"{value:.4f}"))
    if args.out:
        atomic_write(args.out, lambda handle: summary.to_csv(handle, index=False, float_format="%.6g"))
        print(f"wrote {args.out}")
    return 0


def _results_table(path: str):
    """A sweep's results CSV, or InputFileError naming the file (binary data, not CSV, empty)."""
    import io

    import pandas as pd

    from torus_sim.errors import InputFileError
    from torus_sim.files import input_text

    text = input_text(path, "results CSV")
    try:
        return pd.read_csv(io.StringIO(text))
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as error:
        raise InputFileError(
            path, f"is not a results CSV table ({str(error).splitlines()[0] if str(error) else 'empty'})"
        ) from None


def generate_rigid(args) -> int:
    """``torus-sim generate-rigid OUT``: a RIGID §5.1 job set and its failure scenarios in the reference code's formats.

    Raises:
        InputFileError: an output folder that cannot take the files.
    """
    import numpy as np

    from failure_logs.silent import draw_scenarios, error_rate_for_mean_probability, failure_probabilities_by_area
    from torus_sim.files import check_output_folder
    from torus_sim.workload.batch import generate_rigid_set
    from torus_sim.workload.refcode import RefcodeHeader, write_failure_scenarios, write_rigid_jobs

    check_output_folder(args.out, ("jobs.txt", "failures.txt"))
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


NEW_FORMS = {
    "flat rigid": "torus-sim run --platform cluster --workload refcode:JOBS --silent-errors FAILURES --policy R-LIST-0 --priority LPT",
    "flat moldable": "torus-sim run --platform cluster --nodes 7500 --workload moldable:mix --error-rate 1e-7 --scenarios 10 --policy LPA",
    "flat generate-rigid": "torus-sim generate-rigid OUT --scenarios 1000",
    "flat experiment": "torus-sim sweep FILE --executor process --workers 2",
    "flat summarize": "torus-sim summarize RESULTS.csv... --by policy workload",
    "online run": "torus-sim run --platform cluster --nodes 128 --policy PV-EASY --runtime-predictor last (the bundled NASA iPSC/860 log; --workload FILE.swf for yours)",
    "online experiment": "torus-sim sweep FILE --executor process --workers 2",
}


def removed(args) -> int:
    """A command removed in 0.2 (``flat``, ``online``): the command that replaces it, and exit code 2."""
    sub = args.rest[0] if args.rest and not args.rest[0].startswith("-") else ""
    new = NEW_FORMS.get(f"{args.command} {sub}", "torus-sim run --help / torus-sim sweep --help")
    print(
        f"torus-sim {' '.join([args.command, sub]).strip()} was replaced by the one engine's commands; use: {new}",
        file=sys.stderr,
    )
    return 2


def ckpt_tables(args) -> int:
    """``torus-sim ckpt-tables``: CKPT-MIG's analytic tables (exit 0)."""
    from torus_sim.analytic.tables import capped_table, scenario_table, yield_table

    chosen = ["today", "2011", "2015", "yield", "capped"] if args.table == "all" else [args.table]
    blocks = []
    for name in chosen:
        if name == "yield":
            blocks += ["Numerical results: yield rho/N for scenario 2015", yield_table("month"), yield_table("year")]
        elif name == "capped":
            blocks += ["Yield rho/N for scenario 2015 and capped job sizes", capped_table("month"), capped_table("year")]
        else:
            blocks.append(scenario_table(name))
    print("\n\n".join(blocks))
    return 0


def viz(args) -> int:
    """``torus-sim viz``: serve the browser view (exit code of the server; 2 with a sentence when the port is taken).

    The port is checked before anything starts; a closed tab's session is freed after ``--cull-timeout``
    (:mod:`torus_sim.viz_session`); Solara's check for a newer version is off (offline machines, a pinned version).
    """
    import os
    import socket
    import subprocess

    try:
        with socket.create_server((args.host, args.port)):
            pass
    except OSError as error:
        print(
            f"torus-sim viz: error: cannot serve on {args.host}:{args.port} ({error.strerror or error}); choose another --port",
            file=sys.stderr,
        )
        return 2
    from torus_sim import app as _  # noqa: F401  (fail here, with a clear traceback, if the app cannot load)

    app_path = Path(__file__).with_name("app.py")
    print(
        f"torus-sim viz: serving http://{args.host}:{args.port} (Ctrl-C to stop); "
        f"a closed tab's session is freed after {args.cull_timeout} (--cull-timeout)"
    )
    if args.host not in ("localhost", "127.0.0.1", "::1"):
        print(
            f"torus-sim viz: warning: --host {args.host} makes the page reachable by others on the network "
            "(anyone who reaches it can run simulations on this machine; the controls accept only the choices shown)"
        )
    environment = dict(os.environ, SOLARA_KERNEL_CULL_TIMEOUT=str(args.cull_timeout))
    environment.setdefault("MALLOC_ARENA_MAX", "2")  # glibc: freed session memory returns instead of staying per thread
    command = [sys.executable, "-m", "solara", "run", str(app_path), "--host", args.host, "--port", str(args.port), "--no-open"]
    command.append("--no-check-version")  # offline machines; the version is pinned on purpose
    try:
        return subprocess.call(command, env=environment)
    except KeyboardInterrupt:
        return 0
