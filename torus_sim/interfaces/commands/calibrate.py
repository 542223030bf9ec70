"""``torus-sim calibrate``: a site's production settings fitted on the first part of a log and judged on the rest.

Writes into ``--out``: ``study.db`` (Optuna's study: an interrupted calibration resumes from it), ``site.toml`` (the
fitted settings as scenario sections, a file ``torus-sim run`` reads), ``calibration.json`` and ``report.txt`` (the
first and the held-out part, the site as given and calibrated: overall, by size class and by month, the held-out part
also by users the first part saw and new ones), ``held_out_waits.png`` (the held-out waits' distributions) and
``waits_by_month.png`` (each month's mean wait, logged and under each site). See
:mod:`torus_sim.experiments.calibrate`.
"""

from __future__ import annotations

import json

__all__ = ["NAMES", "add_parser", "figure_png", "fitted_items", "main", "months_png", "report_text", "section_lines", "site_text"]

NAMES = ("calibrate",)
"""The subcommand's names."""

_OWN = ("train", "trials", "sampler_seed", "starts", "workers", "shakes", "objective")


def add_parser(commands) -> None:
    """Add ``calibrate``: a site scenario file or options, and its own options.

    ``--train``, ``--trials``, ``--sampler-seed``, ``--starts``, ``--workers``, ``--shakes``, ``--objective``, ``--out``.
    """
    from torus_sim.experiments.calibrate import OBJECTIVES
    from torus_sim.interfaces.commands.scenario_options import add_scenario_options

    parser = commands.add_parser(
        "calibrate",
        help="fit a site's production settings (cycle, per-user limit, multifactor priority, a backfill window the site "
        "gives) on the first part of a log, judge them on the rest",
        description="Fit the scheduling cycle, the per-user job limit, Slurm's multifactor priority and a backfill window "
        "the site gives (bf_window in [policy.params]) to the schedule an "
        "SWF log records, on its first part only (Optuna, seeded; the study in OUT/study.db resumes), then replay the "
        "whole log and judge the fit on the held-out part. Writes site.toml, calibration.json, report.txt, held_out_waits.png and waits_by_month.png.",
    )
    parser.add_argument(
        "file", nargs="?", default=None, help="the site as a scenario TOML file (without a grid); options replace its values"
    )
    parser.add_argument(
        "--out", default="torus-sim-calibration", help="folder for study.db, site.toml, calibration.json, report.txt"
    )
    parser.add_argument(
        "--train", type=float, default=0.5, help="share of the log's jobs (submission order) the fit sees (default 0.5)"
    )
    parser.add_argument(
        "--trials", type=int, default=20, help="finished trials wanted in the study, resumed ones counted (default 20)"
    )
    parser.add_argument("--sampler-seed", type=int, default=0, help="seed of Optuna's TPE sampler (default 0)")
    parser.add_argument(
        "--starts",
        type=int,
        default=1,
        help="sampler paths, each --trials trials of its own with the sampler seeded at the seed, the seed + 1, ...; the "
        "best first part of them all is the fit (default 1)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        help="trials at once on a local Dask cluster of this many processes (default 1: one after another, each trial "
        "drawn as an uninterrupted calibration draws it); needs torus-sim[distributed]",
    )
    parser.add_argument(
        "--shakes",
        type=int,
        default=0,
        help="also replay the site as given and the calibrated site this many times with every submit time moved by up "
        "to a second (input shaking, seeds 1..N) and report each figure's spread (default 0: not)",
    )
    parser.add_argument(
        "--objective",
        choices=tuple(OBJECTIVES),
        default="waits",
        help="what the trials minimise on the first part (default waits): "
        + "; ".join(f"{name}: {text}" for name, text in OBJECTIVES.items()).replace("%", "%%"),
    )
    add_scenario_options(parser)


def site_text(calibration) -> str:
    """The fitted settings as a scenario file's sections (``[cycle]``, ``[limits]``, ``[priority]``, ...).

    A fitted backfill window is written as ``[policy]`` with its ``[policy.params]``; two comment lines name the fit.
    """
    lines = [
        f"# fitted by torus-sim calibrate on the first {calibration.train_jobs:,} jobs of {calibration.log}",
        f"# ({calibration.trials} trials; objective {calibration.objective} on that part {calibration.train_objective:.4f})",
    ]
    if not calibration.fitted:
        lines.append("# no trial did better on that part than the site as given: it stands, nothing is fitted")
    return "\n".join(lines + section_lines(calibration.fitted)) + "\n"


NESTED = {"policy_params": "policy.params"}
"""Fitted settings that are tables of their own in a scenario file (``[policy.params]``: the policy's constructor's)."""


def section_lines(fitted: dict, skip: tuple[str, ...] = (), written: tuple[str, ...] = ()) -> list[str]:
    """Fitted settings as a scenario file's sections, each after a blank line.

    Args:
        fitted: scenario field -> value (:attr:`~torus_sim.experiments.calibrate.Calibration.fitted`); None values left
            out; a table (``policy_params``) written as its own ``[policy.params]`` section.
        skip: sections not written (the caller wrote them).
        written: sections whose header the caller wrote already (their fields are not repeated; their tables are).

    Returns:
        The lines (no trailing newline).
    """
    from torus_sim.experiments.scenario import SECTIONS

    lines: list[str] = []
    for section, members in SECTIONS.items():
        if section in skip:
            continue
        chosen = {name: fitted[name] for name in members if fitted.get(name) is not None}
        plain = {name: value for name, value in chosen.items() if name not in NESTED}
        if plain and section not in written:
            lines += ["", f"[{section}]"] + [f"{name} = {_toml(value)}" for name, value in plain.items()]
        for name in NESTED.keys() & chosen.keys():
            lines += ["", f"[{NESTED[name]}]"] + [f"{key} = {_toml(value)}" for key, value in chosen[name].items()]
    return lines


def _toml(value) -> str:
    """A TOML value: a bool or a string as JSON writes it (true, "text"), a number as Python does.

    A policy given from Python is written as its import path.
    """
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return repr(value)
    if not isinstance(value, (bool, str)):
        from torus_sim.policies.settings import extension_json

        value = extension_json(value)
    return json.dumps(value)


def fitted_items(fitted: dict) -> dict:
    """The fitted settings flat, for a line of text: the policy's parameters beside the scenario fields.

    The policy they are for (the site's) is left out.
    """
    flat = {name: value for name, value in fitted.items() if name not in NESTED and name != "policy"}
    for name in NESTED.keys() & fitted.keys():
        flat.update(fitted[name])
    return flat


def report_text(calibration) -> str:
    """The calibration's scores as a table: each part, the site as given and calibrated."""
    from torus_sim.experiments.calibrate import OBJECTIVES

    lines = [
        f"calibration of {calibration.log}: first {calibration.train_jobs:,} jobs fitted ({calibration.trials} trials), "
        "the rest held out",
        f"objective ({calibration.objective}): {OBJECTIVES[calibration.objective]}, on the first part only",
        f"sampler: {calibration.sampler}",
        *(
            f"  path seeded at {each['seed']}: best objective {each['best']:.4f} (trial {each['best_trial']} of {each['trials']})"
            for each in calibration.starts
        ),
        "fitted: "
        + ", ".join(
            f"{name} = {value:.4g}" if isinstance(value, float) else f"{name} = {value}"
            for name, value in fitted_items(calibration.fitted).items()
        ),
        "",
        f"{'part':<10} {'site':<11} {'jobs':>8} {'KS':>6} {'mean wait (s) sim / log':>26} {'error':>7} {'median sim / log':>18} {'<= 1 h':>7} {'|daily util|':>12} {'misplaced':>9}",
    ]
    labels = {"train": "fitted on", "test": "held out", "test, users seen": "  seen", "test, new users": "  new"}
    for part, label in labels.items():
        for name, parts in calibration.scores.items():
            if part not in parts:  # no held-out job of a new user
                continue
            score = parts[part]
            daily = (
                "" if score.daily_utilization_error != score.daily_utilization_error else f"{score.daily_utilization_error:.3f}"
            )
            misplaced = "" if score.misplaced_waiting != score.misplaced_waiting else f"{score.misplaced_waiting:.3f}"
            lines.append(
                f"{label:<10} {name:<11} {score.jobs:>8,} {score.ks:>6.3f} "
                f"{score.mean_wait:>12,.0f} / {score.logged_mean_wait:>11,.0f} {score.mean_error:>+7.1%} "
                f"{score.median_wait:>8,.0f} / {score.logged_median_wait:>7,.0f} {score.within_hour:>7.1%} {daily:>12} "
                f"{misplaced:>9}"
            )
    if any("test, new users" in parts for parts in calibration.scores.values()):
        lines.append("(seen, new: the held-out jobs of users who submitted a job of the first part, and of users who did not)")
    lines.append("(misplaced: the share of the part's logged waiting the replay put in another size class than the log did)")
    lines += _shaken_lines(calibration)
    lines += _group_lines(calibration)
    return "\n".join(lines) + "\n"


def _group_lines(calibration) -> list[str]:
    """Each part's mean waits by size class and by month: logged, each site's, and each site's share within an hour."""
    sites = [name for name in calibration.groups if calibration.groups[name]]
    if not sites:
        return []
    lines = []
    for by, title in (("size_class", "by size class (P: the log's processors)"), ("month", "by month of submission")):
        tables = {name: calibration.groups[name][by] for name in sites}
        first = tables[sites[0]]
        if not first:
            continue
        lines += ["", f"{title}: mean wait (s), logged and simulated; the share within 1 h of the logged wait"]
        lines.append(
            f"{'part':<10} {'group':<15} {'jobs':>8} {'logged':>10} " + " ".join(f"{name:>11} {'<= 1 h':>7}" for name in sites)
        )
        keyed = {name: {(row["part"], row["group"]): row for row in tables[name]} for name in sites}
        for row in first:  # the sites compare the same jobs, unless one skips the cancelled lines: a group it lacks is "-"
            cells = []
            for name in sites:
                other = keyed[name].get((row["part"], row["group"]))
                cells.append(f"{other['mean_wait']:>11,.0f} {other['within_hour']:>7.1%}" if other else f"{'-':>11} {'-':>7}")
            part = "held out" if row["part"] == "test" else "fitted on"
            lines.append(f"{part:<10} {row['group']:<15} {row['jobs']:>8,} {row['logged_mean_wait']:>10,.0f} " + " ".join(cells))
    return lines


def _shaken_lines(calibration) -> list[str]:
    """The shaken replays' spread (lowest to highest over the seeds) of each figure, or nothing without them."""
    from torus_sim.experiments.calibrate import SHAKE_SECONDS

    if not calibration.shaken:
        return []
    seeds = len(next(iter(calibration.shaken.values()))["train"])  # one score per seed, each site and part alike
    lines = ["", f"shaken: every submit time moved by up to {SHAKE_SECONDS:g} s, seeds 1-{seeds}; lowest to highest"]
    figures = (
        ("KS", "ks", ".3f"),
        ("error", "mean_error", "+.1%"),
        ("<= 1 h", "within_hour", ".1%"),
        ("|daily util|", "daily_utilization_error", ".3f"),
    )
    for part in ("train", "test"):
        for name, parts in calibration.shaken.items():
            spans = []
            for label, field, form in figures:
                values = [getattr(score, field) for score in parts[part]]
                values = sorted(value for value in values if value == value)  # NaN: not known
                if values:
                    spans.append(f"{label} {values[0]:{form}} to {values[-1]:{form}}")
            lines.append(f"{'held out' if part == 'test' else 'fitted on':<10} {name:<11} " + ", ".join(spans))
    return lines


def figure_png(calibration) -> bytes:
    """The held-out jobs' waits as distribution functions: logged, the site as given, calibrated (a PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    figure, axes = plt.subplots(figsize=(6.4, 4.0), layout="constrained")
    logged = None
    for name, waits in calibration.held_out.items():
        values = np.sort(waits["simulated_wait"].to_numpy(dtype=float))
        axes.step(np.maximum(values, 1.0), np.arange(1, len(values) + 1) / len(values), where="post", label=f"simulated, {name}")
        logged = waits["logged_wait"].to_numpy(dtype=float)
    if logged is not None:
        values = np.sort(logged)
        axes.step(
            np.maximum(values, 1.0), np.arange(1, len(values) + 1) / len(values), where="post", label="logged", color="black"
        )
    axes.set_xscale("log")
    axes.set_xlabel("wait (s; under 1 s drawn at 1 s)")
    axes.set_ylabel("share of the held-out jobs")
    return _png(figure, axes, f"{calibration.log}: the held-out jobs' waits")


def months_png(calibration) -> bytes | None:
    """Each month's mean wait, logged and under each site, the first and the held-out part marked (a PNG).

    Returns:
        The PNG's bytes, or None where the replays compared no job (no month to draw).
    """
    rows = {name: groups.get("month", []) for name, groups in calibration.groups.items()}
    first = next((table for table in rows.values() if table), None)
    if first is None:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = [(row["part"], row["group"]) for row in first]
    positions = range(len(keys))
    figure, axes = plt.subplots(figsize=(max(6.4, 0.28 * len(keys) + 2.0), 4.0), layout="constrained")
    axes.plot(positions, [row["logged_mean_wait"] / 3600.0 for row in first], color="black", marker="o", label="logged")
    for name, table in rows.items():
        keyed = {(row["part"], row["group"]): row["mean_wait"] / 3600.0 for row in table}
        axes.plot(positions, [keyed.get(key, float("nan")) for key in keys], marker=".", label=f"simulated, {name}")
    held_out = [index for index, (part, _) in enumerate(keys) if part == "test"]
    if held_out:
        axes.axvspan(held_out[0] - 0.5, len(keys) - 0.5, color="0.9", zorder=0, label="held out")
    step = max(1, len(keys) // 24)
    axes.set_xticks(list(positions)[::step], [group for _, group in keys][::step], rotation=60, fontsize=7)
    axes.set_ylabel("mean wait (hours)")
    return _png(figure, axes, f"{calibration.log}: mean wait by month of submission")


def _png(figure, axes, title: str) -> bytes:
    """A figure of the report, titled, with its legend, as PNG bytes (the figure closed)."""
    import io

    import matplotlib.pyplot as plt

    axes.set_title(title, fontsize=10)
    axes.legend(fontsize=8)
    out = io.BytesIO()
    figure.savefig(out, format="png", dpi=110)
    plt.close(figure)
    return out.getvalue()


def main(args) -> int:
    """``torus-sim calibrate``: fit, judge, write (exit 0; 130 after Ctrl-C with the finished trials kept; errors reach the caller).

    Raises:
        ConfigurationError: a site whose replay cannot be held against its log, a train share outside (0, 1).
    """
    from pathlib import Path

    from torus_sim.core.files import json_text, write_folder
    from torus_sim.experiments.calibrate import calibrate
    from torus_sim.interfaces.commands.scenario_options import scenario_from

    base = scenario_from(args, own=_OWN)
    out = Path(args.out)

    def progress(number, value, best) -> None:
        print(f"trial {number}: objective {value:.4f} (best {best:.4f})", flush=True)

    try:
        calibration = calibrate(
            base,
            out,
            train=args.train,
            trials=args.trials,
            seed=args.sampler_seed,
            progress=progress,
            workers=args.workers,
            shakes=args.shakes,
            objective_name=args.objective,
            starts=args.starts,
        )
    except KeyboardInterrupt:
        print(f"interrupted: the finished trials are kept in {out / 'study.db'}; run the same command to resume")
        return 130
    files = {
        "site.toml": site_text(calibration).encode(),
        "calibration.json": json_text(calibration.as_dict(), indent=2).encode(),
        "report.txt": report_text(calibration).encode(),
        "held_out_waits.png": figure_png(calibration),
    }
    months = months_png(calibration)
    if months is not None:
        files["waits_by_month.png"] = months
    write_folder(out, files, last="calibration.json")
    print(report_text(calibration), end="")
    print(f"wrote {', '.join(str(out / name) for name in files)}")
    return 0
