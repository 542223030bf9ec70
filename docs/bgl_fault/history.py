"""The "History on real failures" section of docs/bgl_fault/README.md: predictor scores and run results.

1. Scores every non-oracle predictor window by window (one week) on LANL system 20's failures as the
   scheduler sees them (mapped onto the 128 supernodes, laid over SDSC-SP2's submit span), with
   :func:`predictors.evaluation.score_predictor`; draws precision at k per week.
2. Tabulates the sweep of ``experiments/bgl_fault/history_lanl.toml`` from its results.csv.

Run from the repository root, after the sweep (see the experiment file):

    python docs/bgl_fault/history.py
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
from tables import markdown  # noqa: E402  (docs/bgl_fault/tables.py, beside this script)

from failure_logs.sources import load_failure_source  # noqa: E402
from predictors import PREDICTORS, HistoryPredictor  # noqa: E402
from predictors.evaluation import WEEK, score_predictor, summarize_scores  # noqa: E402
from torus_sim.experiments.runner import load_workload  # noqa: E402
from torus_sim.experiments.scenario import Scenario  # noqa: E402

HERE = Path(__file__).resolve().parent
SHARED = HERE.parents[2] / "shared" / "data"
LANL = SHARED / "failures" / "lanl" / "LA-UR-05-7318-failure-data-1996-2005.csv.xz"
SDSC = SHARED / "swf" / "SDSC-SP2-1998-4.2-cln.swf.gz"
DAY = 86400.0


def predictor_scores() -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    """Summary per predictor and the per-week tables, on the trace as the runs see it."""
    workload = load_workload(Scenario.make("docs", workload=str(SDSC)), 128)
    log = load_failure_source(str(LANL), 128, span=workload.span, lanl_system=20)
    candidates = {
        "history": HistoryPredictor(),
        **{f"recency, half-life {days} d": HistoryPredictor(half_life=days * DAY) for days in (7, 30, 90, 180)},
        "oracle a = 0.1": PREDICTORS.make("oracle-confidence", confidence=0.1),
    }
    weekly = {name: score_predictor(predictor, log, 128, WEEK, start=workload.span[0]) for name, predictor in candidates.items()}
    rows = [{"predictor": name, **summarize_scores(table, 128)} for name, table in weekly.items()]
    return pd.DataFrame(rows), weekly


def run_table() -> pd.DataFrame | None:
    """Mean, min and max over the seeds of each case and load in the sweep's results."""
    path = HERE / "history_lanl" / "results.csv"
    if not path.exists():
        return None
    table = pd.read_csv(path)
    columns = ["avg_bounded_slowdown", "avg_wait_time", "omega_util", "omega_lost", "job_kills"]
    grouped = table.groupby(["load_scale", "name"], sort=False)
    summary = grouped[columns].mean()
    summary["bsld_seed_spread"] = grouped["avg_bounded_slowdown"].max() - grouped["avg_bounded_slowdown"].min()
    return summary.reset_index()


def main() -> None:
    summary, weekly = predictor_scores()
    print(markdown(summary.set_index("predictor"), 3))
    figure, axis = plt.subplots(figsize=(8, 4))
    for name in ("history", "recency, half-life 90 d"):
        table = weekly[name]
        axis.plot(table["start"] / DAY, table["precision_at_k"].rolling(8, min_periods=1).mean(), label=name)
    base = weekly["history"]["failing"].rolling(8, min_periods=1).mean() / 128
    axis.plot(weekly["history"]["start"] / DAY, base, "k:", label="chance (share of supernodes failing)")
    axis.set_xlabel("day of the SDSC-SP2 log")
    axis.set_ylabel("precision at k (8-week mean)")
    axis.set_title("LANL system 20 on 128 supernodes: are the next week's failing supernodes the top-ranked?")
    axis.legend()
    figure.tight_layout()
    out = HERE / "history_lanl" / "predictor_precision_at_k.png"
    out.parent.mkdir(exist_ok=True)
    figure.savefig(out, dpi=110)
    print(f"\nwrote {out}\n")
    runs = run_table()
    if runs is not None:
        print(markdown(runs.set_index(["load_scale", "name"]), 4))


if __name__ == "__main__":
    main()
