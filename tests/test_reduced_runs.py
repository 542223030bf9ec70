"""A reduced run (``max_jobs``) keeps the whole run's failure rate, not its failure count."""

import numpy as np

from failure_logs.bgl_ras import read_bgl_ras
from failure_logs.sources import BUNDLED_BGL_RAS
from failure_logs.transform import fit_to_span
from torus_sim.experiments.runner import RunConfig, load_workload, run


def test_a_prefix_meets_the_fitted_whole_logs_failures_of_its_own_span():
    whole = load_workload(RunConfig()).span
    prefix = load_workload(RunConfig(max_jobs=300)).span
    fitted = fit_to_span(read_bgl_ras(BUNDLED_BGL_RAS), *whole)
    expected = fitted.failed_at[(fitted.failed_at >= prefix[0]) & (fitted.failed_at <= prefix[1])]
    result = run(RunConfig(max_jobs=300))
    assert result.inputs["failures"]["count"] == len(expected) < 347
    # failures per day of the prefix are the whole run's over the same days (here: the very same failures)
    rate_whole = len(fitted) / ((whole[1] - whole[0]) / 86400)
    assert len(expected) / ((prefix[1] - prefix[0]) / 86400) < 3 * rate_whole


def test_synthetic_failures_of_a_prefix_are_its_share_of_n_over_the_whole_span():
    n = 4000
    whole = load_workload(RunConfig()).span
    prefix = load_workload(RunConfig(max_jobs=3000)).span
    share = (prefix[1] - prefix[0]) / (whole[1] - whole[0])
    counts = []
    for seed in range(4):
        result = run(RunConfig(max_jobs=3000, failures=f"synthetic:{n}", seed=seed, policy="FCFS-EASY"))
        counts.append(result.summary["failures"])
    # a binomial share of n: the mean of four seeds within 4 standard errors of n * share
    expected = n * share
    assert abs(np.mean(counts) - expected) < 4 * np.sqrt(expected * (1 - share) / len(counts)), (counts, expected)


def test_a_figure_of_reduced_runs_says_which_failure_count_its_x_axis_is():
    import pandas as pd

    from torus_sim.experiments.experiment import FigureSpec
    from torus_sim.outputs.figures import _x_label

    spec = FigureSpec(
        name="f", x="failures", series="", y=("avg_bounded_slowdown",), where={}, title="t", x_label="Number of failures"
    )
    reduced = pd.DataFrame({"failures": [0, 100], "max_jobs": [500, 500], "reduced_failures": ["rate", "rate"]})
    assert _x_label(reduced, spec) == "Number of failures (over the whole log; each reduced run meets its share)"
    squeezed = reduced.assign(reduced_failures="count")
    assert _x_label(squeezed, spec) == "Number of failures (all inside each reduced run)"
    assert _x_label(reduced.assign(max_jobs=None), spec) == "Number of failures"
