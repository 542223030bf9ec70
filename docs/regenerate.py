"""Every documented result, the command that makes it, and a check that the current code still makes it.

    python docs/regenerate.py --list                 # what is documented, how it is made, when it was last checked
    python docs/regenerate.py --check --cheap        # re-run the cheap ones (CI) and compare with what is committed
    python docs/regenerate.py --check                # all of them (about 2 hours on 2 cores)
    python docs/regenerate.py --check NAME ...       # some of them (names from --list)
    python docs/regenerate.py --write NAME ...       # regenerate them in place (a deliberate change: its own commit)
    ... --record                                     # also write the date, commit and outcome into docs/CHECKS.md

A sweep's results folder is checked with ``torus-sim sweep FILE --out FOLDER --check`` (every metric of
every table, identical as written: runs are deterministic for their seeds). Run from the repository
root, where ``../shared/data`` holds the logs; the sweep files name them relative to themselves.
Results that come from a script rather than a sweep are listed with how they are made and why they are
not compared yet (``checked_by``).
"""

from __future__ import annotations

import argparse
import datetime
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHECKS = ROOT / "docs" / "CHECKS.md"


@dataclass(frozen=True)
class Documented:
    """One documented result.

    Attributes:
        name: a short name (``cross/cluster_lanl_ctc``).
        sweep: the sweep file (None: made by a script, see ``made_by``).
        args: options of ``torus-sim sweep`` besides ``--out`` (reductions: ``--sets``, ``--scenarios``).
        out: the committed results folder.
        cheap: checked on every CI run (well under a minute on 2 cores).
        made_by: the command, for a result made by a script.
        checked_by: for a script's result, how it is checked (or why it is not yet).
        script: a script that re-makes the result and, given ``--check``, compares it with ``out`` the way
            a sweep does (exit 0 identical, 1 with lines starting with ``out``); empty when it cannot.
    """

    name: str
    sweep: str | None = None
    args: tuple = ()
    out: str = ""
    cheap: bool = False
    made_by: str = ""
    checked_by: str = ""
    script: str = ""

    def command(self, check: bool) -> list[str]:
        """The ``torus-sim sweep`` command line, or the script's (``--check`` when checking)."""
        if self.script:
            return [sys.executable, self.script, *(["--check"] if check else [])]
        line = ["torus-sim", "sweep", self.sweep, *self.args, "--executor", "process", "--workers", "2"]
        return [*line, "--out", self.out, "--no-progress", *(["--check"] if check else [])]


def _sweep(folder: str, name: str, *args: str, out: str | None = None, cheap: bool = False) -> Documented:
    return Documented(f"{folder}/{name}", f"experiments/{folder}/{name}.toml", args, out or f"docs/{folder}/{name}", cheap)


DOCUMENTED = (
    # not cheap (1.5 min of CPU): docs/guide/running.md's command is its "balancing a=0.1" run, and
    # tests/test_readme_commands.py checks that run's jobs and kills
    _sweep("cross", "cluster_lanl_ctc"),
    _sweep("cross", "torus_policies_sdsc"),
    _sweep("cross", "heterogeneous_ricc"),  # 3 min: RICC's first 20,000 jobs on three machines (docs/guide/machines.md)
    _sweep("validation", "policies_across_logs"),
    *(
        _sweep("bgl_fault", name)
        for name in (
            "accuracy",
            "accuracy_bursty",
            "accuracy_rate1000",
            "confidence",
            "confidence_bursty",
            "confidence_rate1000",
            "failures_sdsc",
            "failures_sdsc_bursty",
            "history_lanl",
        )
    ),
    # not cheap: three of its four runs are run on every CI run by tests/test_golden.py (PV-EASY, pinned job for job)
    # and tests/test_paper_pv_easy.py (EASY and EASY-Last against the paper's Table 1)
    _sweep("pv_easy", "ctc_fairness_prediction"),
    _sweep("pv_easy", "ctc_checkpoint"),
    _sweep("pv_easy", "ctc_suspend", cheap=True),  # four runs of CTC-SP2 in 40 s of CPU: the sweep's check on every CI run
    _sweep("pv_easy", "ctc_virtual_predictor"),
    _sweep("mira", "policies_real_failures", out="docs/mira/real_failures"),
    _sweep("mira", "policies_poisson", out="docs/mira/poisson"),
    _sweep("energy", "bgl_wasted_energy"),
    _sweep("energy", "power_window_bgl"),
    _sweep("energy", "power_cap_bgl"),
    _sweep("energy", "power_mira"),
    _sweep("energy", "power_cluster_ctc"),
    _sweep("energy", "switch_off_bgl"),
    _sweep("energy", "switch_off_mira"),
    _sweep("energy", "switch_off_cluster_ctc"),
    # --rtol 1e-9: docs/moldable's summary.csv files were written with 11 significant digits, today's with 10
    # (table1_vs_jobs: 95 of 4,080 values, e.g. 1.4808667224 -> 1.480866723)
    _sweep("moldable", "table1", "--rtol", "1e-9"),
    _sweep("moldable", "table1_vs_processors", "--sets", "5", "--scenarios", "20", "--rtol", "1e-9"),
    _sweep("moldable", "table1_vs_jobs", "--sets", "5", "--scenarios", "20", "--rtol", "1e-9"),
    _sweep("moldable", "table1_vs_error_rate", "--sets", "3", "--scenarios", "10", "--rtol", "1e-9"),
    # --rtol 1e-9: docs/rigid's summary.csv (the mean over sets) was written by the flat runner, which met the
    # sets in another order; the same means summed in today's order differ in the 10th significant digit
    # (15 of fig4's 15,960 values, all in summary.csv; results.csv identical)
    _sweep("rigid", "fig4_shelves", "--sets", "10", "--scenarios", "20", "--rtol", "1e-9", out="docs/rigid/fig4"),
    _sweep("rigid", "fig5_heuristics_vs_qbar", "--sets", "10", "--scenarios", "10", "--rtol", "1e-9", out="docs/rigid/fig5"),
    _sweep("rigid", "fig6_heuristics_vs_P", "--sets", "5", "--scenarios", "10", "--rtol", "1e-9", out="docs/rigid/fig6"),
    Documented(
        "validation/cqsim",
        made_by="python docs/validation/cqsim.py",
        checked_by="tests/test_cqsim.py checks the 100% rows on every CI run; the other rows are not compared yet",
    ),
    Documented(
        "validation/cycle",
        out="docs/validation",
        made_by="python docs/validation/cycle.py",
        checked_by="cycle.csv row for row (CTC-SP2 under seven intervals, SDSC-SP2 under two)",
        script="docs/validation/cycle.py",
    ),
    Documented(
        "validation/real_machine",
        out="docs/validation",
        made_by="python docs/validation/real_machine.py",
        checked_by="real_machine.csv row for row (four logs: fitted on the first half, judged on the second, the ablation)",
        script="docs/validation/real_machine.py",
    ),
    Documented(
        "validation/shaking",
        out="docs/validation",
        made_by="python docs/validation/shaking.py",
        checked_by="shaking.csv row for row (four logs' sites, each unshaken and shaken by 1 s and 60 s under three seeds)",
        script="docs/validation/shaking.py",
    ),
    Documented(
        "validation/dependencies",
        out="docs/validation",
        made_by="python docs/validation/dependencies.py",
        checked_by="dependencies.csv row for row (four logs' sites, as written and with dependencies of 600, 1,200 and 3,600 s)",
        script="docs/validation/dependencies.py",
    ),
    Documented(
        "validation/objectives",
        out="docs/validation",
        made_by="python docs/validation/objectives.py",
        checked_by="objectives.csv row for row (four logs' sites replayed, and fitted for the aims and for the sizes on the first half, judged on the held-out half)",
        script="docs/validation/objectives.py",
    ),
    Documented(
        "validation/new_users",
        out="docs/validation",
        made_by="python docs/validation/new_users.py",
        checked_by="new_users.csv row for row (four logs' textbook replays and sites, the held-out half by users seen and new)",
        script="docs/validation/new_users.py",
    ),
    Documented(
        "validation/node_seconds",
        out="docs/validation",
        made_by="python docs/validation/node_seconds.py",
        checked_by="node_seconds.csv row for row (each log's heaviest held-out user's processor-seconds left; HPC2N's site under three limits)",
        script="docs/validation/node_seconds.py",
    ),
    Documented(
        "validation/eligible_age",
        out="docs/validation",
        made_by="python docs/validation/eligible_age.py",
        checked_by="eligible_age.csv row for row (three logs' sites with a job's age counted from submission and from eligibility; HPC2N's at its logged cap)",
        script="docs/validation/eligible_age.py",
    ),
    Documented(
        "validation/shares",
        out="docs/validation",
        made_by="python docs/validation/shares.py",
        checked_by="shares.csv row for row (three logs' sites with equal and asked fair-share shares, and each log fitted with asked shares)",
        script="docs/validation/shares.py",
    ),
    Documented(
        "validation/starved",
        out="docs/validation",
        made_by="python docs/validation/starved.py",
        checked_by="starved.csv row for row (four logs' textbook replays and sites without and with the starved spans, and each log fitted with them)",
        script="docs/validation/starved.py",
    ),
    Documented(
        "validation/seeds",
        out="docs/validation",
        made_by="python docs/validation/seeds.py",
        checked_by="seeds.csv row for row (three logs fitted again with the sampler seeded at 1, judged on the held-out half)",
        script="docs/validation/seeds.py",
    ),
    Documented(
        "validation/recovery",
        out="docs/validation",
        made_by="python docs/validation/recovery.py",
        checked_by="recovery.csv row for row (three logs relogged by their sites, calibrated on the first half, judged on the second)",
        script="docs/validation/recovery.py",
    ),
    Documented(
        "validation/against_log",
        out="docs/validation",
        made_by="python docs/validation/against_log.py",
        checked_by="against_log.csv line for line and the page's table (every log in ../shared/data under four policies)",
        script="docs/validation/against_log.py",
    ),
    Documented(
        "bgl_fault/tables",
        made_by="python docs/bgl_fault/tables.py",
        checked_by="prints tables from the sweeps' results.csv (checked above)",
    ),
    Documented(
        "bgl_fault/history",
        made_by="python docs/bgl_fault/history.py",
        checked_by="reads history_lanl's results.csv (checked above)",
    ),
    Documented(
        "mira/study",
        out="docs/mira",
        made_by="python docs/mira/study.py",
        checked_by="failures_per_week.csv (the figure's data) and midplane_map.csv line for line, the results tables' rows in README.md",
        script="docs/mira/study.py",
        cheap=True,
    ),
    Documented("rl", made_by="see docs/rl/README.md", checked_by="not compared yet: training draws from torch's random streams"),
    Documented(
        "exchange/gantt",
        out="docs/exchange",
        made_by="python docs/exchange/gantt.py",
        checked_by="the run's batsim_jobs.csv, line for line, against the committed one; the PNG is drawn from it",
        script="docs/exchange/gantt.py",
        cheap=True,
    ),
    Documented(
        "ckpt_migration", made_by="torus-sim ckpt-tables; torus-sim ckpt-compare", checked_by="tests/test_paper_ckpt_migration.py"
    ),
)


def _commit() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _recorded() -> dict[str, str]:
    """The last recorded line of each result in docs/CHECKS.md, by name."""
    if not CHECKS.exists():
        return {}
    rows = {}
    for line in CHECKS.read_text().splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if line.startswith("| ") and len(cells) >= 5 and cells[0] not in ("result", "---"):
            rows[cells[0].strip("`")] = line
    return rows


def _record(outcomes: dict[str, tuple[str, float]]) -> None:
    rows = _recorded()
    today, commit = datetime.date.today().isoformat(), _commit()
    for name, (outcome, seconds) in outcomes.items():
        rows[name] = f"| `{name}` | {today} | {commit} | {outcome} | {seconds / 60:.1f} min |"
    lines = [
        "# When each documented result was last checked",
        "",
        "Written by `python docs/regenerate.py --check --record` (2 cores; the minutes are that machine's",
        "and say nothing about the results). `identical`: every value of every table as committed.",
        "",
        "| result | checked on | commit | outcome | wall time |",
        "|---|---|---|---|---|",
    ]
    order = [entry.name for entry in DOCUMENTED]
    lines += [rows[name] for name in sorted(rows, key=lambda name: order.index(name) if name in order else len(order))]
    CHECKS.write_text("\n".join(lines) + "\n")


def main(argv: list[str] | None = None) -> int:
    """Run the chosen checks (or regenerations); exit 1 if any result differs."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="results to check (default: all; see --list)")
    parser.add_argument("--list", action="store_true", help="list every documented result and how it is made")
    parser.add_argument("--check", action="store_true", help="re-run and compare with what is committed")
    parser.add_argument("--write", action="store_true", help="re-run and overwrite the committed results")
    parser.add_argument("--cheap", action="store_true", help="only the cheap ones (CI)")
    parser.add_argument("--record", action="store_true", help="write the outcomes into docs/CHECKS.md")
    args = parser.parse_args(argv)
    known = {entry.name: entry for entry in DOCUMENTED}
    unknown = [name for name in args.names if name not in known]
    if unknown:
        print(f"regenerate: unknown result {', '.join(unknown)} (see --list)", file=sys.stderr)
        return 2
    chosen = [known[name] for name in args.names] if args.names else list(DOCUMENTED)
    if args.cheap:
        chosen = [entry for entry in chosen if entry.cheap]
    if args.list or not (args.check or args.write):
        recorded = _recorded()
        for entry in chosen:
            how = " ".join(entry.command(check=False)) if entry.sweep else f"{entry.made_by} ({entry.checked_by})"
            if entry.script:
                how = f"python {entry.script} ({entry.checked_by})"
            last = recorded.get(entry.name, "never checked")
            print(f"{entry.name}{' [cheap]' if entry.cheap else ''}\n    {how}\n    last: {last}")
        return 0
    outcomes: dict[str, tuple[str, float]] = {}
    worst = 0
    for entry in chosen:
        if entry.sweep is None and not entry.script:
            continue
        began = time.perf_counter()
        if args.write and entry.sweep is not None:  # the stored runs would be resumed: made by the code before the change
            shutil.rmtree(ROOT / entry.out / "runs", ignore_errors=True)
        line = entry.command(check=args.check)
        beside = Path(sys.executable).parent / "torus-sim"  # this interpreter's environment's, when not on PATH
        if entry.sweep is not None and beside.exists():
            line = [str(beside), *line[1:]]
        done = subprocess.run(line, cwd=ROOT, capture_output=True, text=True)
        seconds = time.perf_counter() - began
        report = [line for line in done.stdout.splitlines() if line.startswith(entry.out)]
        if done.returncode == 0:
            outcome = "identical" if args.check else "rewritten"
        elif done.returncode == 1 and report:
            outcome = report[-1].removeprefix(f"{entry.out}: ")
        else:
            outcome = f"error: {(done.stderr.strip().splitlines() or ['exit ' + str(done.returncode)])[-1]}"
        worst = max(worst, 1 if done.returncode else 0)
        outcomes[entry.name] = (outcome, seconds)
        print(f"{entry.name}: {outcome} ({seconds:.0f} s)", flush=True)
        for line in report[:-1][:10]:
            print(f"    {line}")
    if args.record and args.check:
        _record(outcomes)
    return worst


if __name__ == "__main__":
    raise SystemExit(main())
