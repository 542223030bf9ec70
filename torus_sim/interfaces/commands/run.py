"""``torus-sim run``: one run of any platform, workload, failures and policy, from options or a scenario file.

With no arguments it replays the bundled NASA iPSC/860 log with the bundled BG/L RAS failures on the 4x4x8
torus under Krevat's scheduler, prints the run's header and summary, and writes ``jobs.csv`` and
``summary.json`` into ``--out``; ``torus-sim run FILE`` runs a scenario file, options given next to it
replacing the file's values.
"""

from __future__ import annotations

import time
from pathlib import Path

from torus_sim.interfaces.commands.scenario_options import add_scenario_options, scenario_from

__all__ = ["NAMES", "add_parser", "main"]

NAMES = ("run",)
"""The subcommand's names."""


def add_parser(commands) -> None:
    """Add ``run`` and its options (every scenario field, by section) to the subcommands."""
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
        help="also this output format (a registry name: batsim, swf, relogged, parquet, an installed plug-in's, or an import path); repeat for each",
    )
    run_parser.add_argument(
        "--against-log",
        action="store_true",
        help="also compare the schedule with the one the SWF log records (its real waits): against_log.json and .png",
    )
    run_parser.add_argument(
        "--no-progress", dest="progress", action="store_false", help="no progress bar (it shows only on a terminal, after 2 s)"
    )
    add_scenario_options(run_parser)


def _counts_text(counts: dict | None) -> str:
    """Cleaning counts as words: ``size rounded up 56, walltime from runtime 200`` (``nothing`` when empty)."""
    if not counts:
        return "nothing"
    return ", ".join(
        f"{name.replace('_', ' ')} {f'{value:,}' if isinstance(value, int) else value}" for name, value in counts.items()
    )


def main(args) -> int:
    """``torus-sim run [FILE]``: one run, its header and summary printed, its results written (exit 0; errors reach the caller)."""
    from torus_sim.core.files import check_output_folder
    from torus_sim.experiments.runner import run
    from torus_sim.machine.platforms.kinds import platform_kind
    from torus_sim.outputs.formats.catalog import output_format
    from torus_sim.outputs.reports import format_against_log, format_summary, write_results

    scenario = scenario_from(args)
    if args.against_log:
        from torus_sim.experiments.log_replay import against_log, check_against_log

        check_against_log(scenario)  # before the simulation
    for name in args.format:  # an unknown format is refused before the simulation
        output_format(name)
    check_output_folder(args.out)  # before the simulation, not after it
    began = time.perf_counter()
    result = run(scenario, progress=args.progress)
    comparison = against_log(result) if args.against_log else None
    paths = write_results(
        args.out, result, batsim=args.batsim, swf=args.swf, parquet=args.parquet, formats=args.format, against_log=comparison
    )
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
    production = _production_text(scenario)
    if production:
        print(f"site      {production}")
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
    print(format_summary(result.summary, platform_kind(scenario.platform).node_word(scenario.platform_fields())))
    if result.rows_in("scenarios") > 1:
        print()
        print(result.scenarios.to_string(index=False, float_format=lambda value: f"{value:.6f}"))
    if comparison is not None:
        print()
        print(format_against_log(comparison))
    print()
    print(f"wrote {', '.join(str(path) for path in paths.values())} ({time.perf_counter() - began:.1f} s)")
    return 0


def _describe(info: dict) -> str:
    from torus_sim.inputs.provenance import PluginInfo

    return PluginInfo(**info).describe()


def _production_text(scenario) -> str:
    """The production semantics a run uses, in a few words ("" for none: the textbook loop)."""
    parts = []
    if scenario.sched_min_interval is not None:
        parts.append(f"a pass at most every {scenario.sched_min_interval:g} s")
    if scenario.dispatch_latency is not None:
        parts.append(f"jobs reach the queue {scenario.dispatch_latency:g} s after their submission")
    limits = [
        f"{value:,} {what} per {who}"
        for who in ("user", "group", "queue")
        for value, what in (
            (getattr(scenario, f"max_jobs_per_{who}"), "running jobs"),
            (getattr(scenario, f"max_nodes_per_{who}"), "nodes"),
        )
        if value is not None
    ]
    if limits:
        parts.append("at most " + " and ".join(limits))
    weights = [
        (name, value)
        for name, value in (
            ("age", scenario.priority_weight_age),
            ("fair share", scenario.priority_weight_fairshare),
            ("size", scenario.priority_weight_job_size),
            ("queue", scenario.priority_weight_queue),
        )
        if value is not None
    ]
    if weights:
        by = ", fair share by group" if scenario.priority_fairshare_by == "group" else ""
        if scenario.priority_fairshare_windows is not None:  # Maui's windows instead of the half-life
            by += f", fair-share windows {scenario.priority_fairshare_windows}"
        parts.append("multifactor priority (" + ", ".join(f"{name} {value:.3g}" for name, value in weights) + by + ")")
    if scenario.cancelled != "run":
        parts.append("cancelled lines skipped")
    if scenario.failed != "run":
        parts.append("failed lines skipped")
    if scenario.shake is not None:
        parts.append(f"submit times shaken by up to {scenario.shake:g} s (seed {scenario.seed})")
    if scenario.dependencies is not None:
        parts.append(f"jobs submitted after the job they waited for (think times up to {scenario.dependencies:g} s)")
    if scenario.kill_at_walltime is not None:
        parts.append("jobs killed at their requested time" if scenario.kill_at_walltime else "jobs run past their requested time")
    if scenario.maintenance == "inferred":
        length = scenario.maintenance_min_length or 3600.0
        parts.append(f"maintenance windows inferred from the log (idle {length:g} s or longer while jobs waited)")
    elif scenario.maintenance is not None:
        parts.append(f"maintenance windows from {Path(scenario.maintenance).name}")
    if scenario.effective_size == "inferred":
        period = scenario.effective_size_period or 2_592_000.0
        parts.append(f"effective machine size inferred from the log (each {period:g} s's peak of busy processors)")
    elif scenario.effective_size is not None:
        parts.append(f"effective machine size from {Path(scenario.effective_size).name}")
    elif scenario.effective_size_share is not None:
        parts.append(f"effective machine size {scenario.effective_size_share:.4g} of the processors (at least the largest job)")
    if scenario.effective_size_starved:
        from torus_sim.inputs.workload.logged import STARVED_MIN_IDLE, STARVED_MIN_LENGTH

        length = scenario.effective_size_starved_min_length or STARVED_MIN_LENGTH
        idle = scenario.effective_size_starved_min_idle or STARVED_MIN_IDLE
        parts.append(
            f"capacity lost inferred from the log (spans of {length:g} s or longer in which its oldest waiting job fitted "
            f"the idle processors, at least {idle:g} of the machine idle)"
        )
    if scenario.reservations is not None:
        parts.append(f"reservations of part of the machine from {Path(scenario.reservations).name}")
    if scenario.standing_reservations is not None:
        parts.append(f"standing reservations {scenario.standing_reservations}, log's local time")
    if scenario.prime_time is not None:
        spill = "" if scenario.prime_time_spill is None else f" (ending at most {scenario.prime_time_spill:g} s into it)"
        parts.append(
            f"prime time {scenario.prime_time}, log's local time: jobs asking over "
            f"{scenario.prime_time_max_walltime or 0:g} s start outside it{spill}"
        )
    return "; ".join(parts)


def _policy_line(inputs: dict) -> str:
    """The policy as it ran: its name, and for a plug-in where it came from (package, version, import path, source hash)."""
    info = inputs["extensions"]["policy"]
    if info.get("alias_of"):
        return _describe(info)
    return _describe(info) if info["origin"] != "built-in" else inputs["policy"]
