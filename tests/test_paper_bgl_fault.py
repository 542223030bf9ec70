"""BGL-FAULT §7's published trends, on reduced SDSC-SP2 runs (53 runs, made at once on every core
by a module fixture).

Set-up (reduced from the paper's full two-year log, see docs/bgl_fault/ for the full runs): the first
8,000 jobs of SDSC-SP2 (90 days) on the 4x4x8 torus with backfilling and migration, synthetic
exponential failures scaled to the paper's rate per day: "1000 failures" over the two-year log is 124
failures over the 90 days, "4000" is 496. Each point is the mean over seeds 0, 1, 2, so one lucky
failure placement cannot decide a trend; a run without failures draws nothing at random (the same
schedule for every seed and either failure kind, checked when the set-up was reduced), so one run stands
for them. Tolerances are stated in each test.

One trend does not hold with independent failures (trend 1, strict xfail below): bounded slowdown
grows faster and faster. It does hold with bursty failures (``synthetic:N:bursty``: a fixed set of
bursts, more failures make bursts bigger), which is how scaling the count of a real trace while
keeping its timings behaves (BGL-FAULT §6.2, §7.1).
"""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor

import pytest

from torus_sim.experiments.runner import RunConfig, run

from .conftest import SHARED_DATA

SDSC = SHARED_DATA / "swf" / "SDSC-SP2-1998-4.2-cln.swf.gz"
JOBS = 8000
PER_1000 = 124  # failures over the 8,000-job span with the rate of 1000 failures over the whole log
SEEDS = (0, 1, 2)

pytestmark = pytest.mark.skipif(not SDSC.exists(), reason=f"needs the SDSC-SP2 log at {SDSC}")


KEYS = ("avg_bounded_slowdown", "omega_util", "omega_lost", "omega_unused")

# every (failures, scheduler, a, load_scale, kind) the tests below average over SEEDS
COMBOS = (
    [(n * PER_1000 // 2, "krevat", 0.0, 1.0, "exponential") for n in (0, 1, 2, 4, 8)]
    + [(n * PER_1000 // 2, "krevat", 0.0, 1.0, "bursty") for n in (0, 1, 4, 8)]
    + [(PER_1000, "balancing", a, 1.0, "exponential") for a in (0.0, 0.1, 0.9)]
    + [(PER_1000, "balancing", a, 1.2, "exponential") for a in (0.0, 0.1)]
    + [(4 * PER_1000, "balancing", a, 1.2, "exponential") for a in (0.0, 0.9)]
    + [(4 * PER_1000, "tiebreak", 0.9, 1.2, "exponential")]
)
ZERO_ACCURACY = (PER_1000, "tiebreak", 0.0, 1.0, "exponential", SEEDS[0])  # one run: compared run for run
_SUMMARIES: dict[tuple, dict] = {}


def _key(failures: int, scheduler: str, a: float, load_scale: float, kind: str, seed: int) -> tuple:
    """The run that stands for these arguments: without failures, one run for every seed and kind."""
    if failures == 0:
        return (0, scheduler, a, load_scale, "exponential", SEEDS[0])
    return (failures, scheduler, a, load_scale, kind, seed)


def one_summary(failures: int, scheduler: str, a: float, load_scale: float, kind: str, seed: int) -> dict:
    """The metrics of one reduced run."""
    parameter = {"balancing": {"confidence": a}, "tiebreak": {"accuracy": a}}.get(scheduler, {})
    config = RunConfig(
        workload=str(SDSC),
        max_jobs=JOBS,
        failures=f"synthetic:{failures}:{kind}",
        reduced_failures="count",  # the counts above are already the prefix's share (PER_1000)
        scheduler=scheduler,
        load_scale=load_scale,
        seed=seed,
        **parameter,
    )
    summary = run(config).summary
    return {key: summary[key] for key in KEYS}


def _one_summary(arguments: tuple) -> dict:
    return one_summary(*arguments)


@pytest.fixture(scope="module", autouse=True)
def runs_on_every_core():
    """Run every (combination, seed) of the module at once on the machine's cores (the same runs)."""
    todo = list(dict.fromkeys([*(_key(*combo, seed) for combo in COMBOS for seed in SEEDS), ZERO_ACCURACY]))
    with ProcessPoolExecutor(max_workers=min(len(todo), os.cpu_count() or 1)) as pool:
        _SUMMARIES.update(zip(todo, pool.map(_one_summary, todo), strict=True))
    yield


def mean_summary(
    failures: int, scheduler: str = "krevat", a: float = 0.0, load_scale: float = 1.0, kind: str = "exponential"
) -> dict:
    """Summary metrics averaged over SEEDS (runs made by the module fixture; any other run here)."""
    summaries = []
    for seed in SEEDS:
        arguments = _key(failures, scheduler, a, load_scale, kind, seed)
        if arguments not in _SUMMARIES:
            _SUMMARIES[arguments] = one_summary(*arguments)
        summaries.append(_SUMMARIES[arguments])
    return {key: sum(s[key] for s in summaries) / len(summaries) for key in KEYS}


def bsld(*args, **kwargs) -> float:
    return mean_summary(*args, **kwargs)["avg_bounded_slowdown"]


def test_paper_failures_raise_bounded_slowdown_without_prediction():
    # BGL-FAULT §7.1: "As failures are introduced, system performance drops quickly".
    curve = [bsld(n * PER_1000 // 2) for n in (0, 1, 2, 4, 8)]  # 0, 500, 1000, 2000, 4000 failures
    assert all(later > earlier for earlier, later in zip(curve, curve[1:], strict=False)), curve
    assert curve[2] > 1.5 * curve[0], curve  # "about one failure in four days ... nearly a 70% increase" (§1)


@pytest.mark.xfail(
    strict=True,
    reason=(
        "Not reproduced with independent (Poisson) failures: mean bounded slowdown over seeds 0-2 is about "
        "28, 40, 57, 164, 413 at 0/500/1000/2000/4000-equivalent failures, rising faster and faster. "
        "BGL-FAULT attributes the levelling off to its trace's simultaneous multi-node failures (§7.1)."
    ),
)
def test_paper_bounded_slowdown_levels_off_as_failures_grow():
    # BGL-FAULT §7.1: "eventually reaching a point beyond which further increase in failure rate
    # would have little additional effect". Levelling off: the second half of the failure range adds
    # less slowdown than the first half.
    zero, half, full = bsld(0), bsld(2 * PER_1000), bsld(4 * PER_1000)
    assert full - half < half - zero


def test_paper_bounded_slowdown_rises_quickly_then_levels_off_with_bursty_failures():
    # BGL-FAULT §7.1: "As failures are introduced, system performance drops quickly, eventually reaching a
    # point beyond which further increase in failure rate would have little additional effect. This failure
    # traces contain many instances of multiple failure events, simultaneously reported from different nodes."
    # Measured (mean of seeds 0-2): about 28, 37, 36, 37, 42 at 0/500/1000/2000/4000-equivalent failures.
    zero, first, half, full = (bsld(n * PER_1000 // 2, kind="bursty") for n in (0, 1, 4, 8))
    assert first > 1.15 * zero, (zero, first, half, full)  # drops quickly: the first 500 cost over 15%
    assert full - half < half - zero, (zero, first, half, full)  # the second half adds less than the first


def test_paper_low_confidence_already_gives_most_of_the_improvement():
    # BGL-FAULT §7.1: "if there are on an average 1 failure per four days (corresponding to 1000 failure
    # rate) even with a 10% prediction confidence ... our balancing algorithm leads to improvements up to
    # 50%. However with the increase in prediction confidence level (from 10% to 90%) the rate of returns
    # are comparatively low".
    none, low, high = (bsld(PER_1000, "balancing", a) for a in (0.0, 0.1, 0.9))
    gain_low, gain_high = none - low, none - high
    assert gain_low > 0.2 * none, (none, low, high)  # a sizeable gain at a = 0.1 (measured: about 38%)
    assert gain_low > 0.5 * gain_high, (none, low, high)  # "most of the improvement"
    assert gain_high - gain_low < gain_low, (none, low, high)  # 0.1 -> 0.9 adds comparatively little


def test_paper_higher_load_raises_bounded_slowdown():
    # BGL-FAULT §7.2 / Fig. 4: c = 1.2 gives higher bounded slowdown than c = 1.0 ("significant changes
    # in system performance, when we increased the standard load by 20%", §6.2).
    for a in (0.0, 0.1):
        assert bsld(PER_1000, "balancing", a, load_scale=1.2) > 1.5 * bsld(PER_1000, "balancing", a)


def test_paper_confidence_converts_lost_capacity_into_utilized_capacity_at_high_load():
    # BGL-FAULT §7.2: "For systems with high load, as the confidence of the balancing scheduler increases,
    # more and more wasted work is converted to useful work."
    none = mean_summary(4 * PER_1000, "balancing", 0.0, load_scale=1.2)
    high = mean_summary(4 * PER_1000, "balancing", 0.9, load_scale=1.2)
    assert high["omega_util"] > none["omega_util"] + 0.01, (none, high)
    assert high["omega_lost"] < none["omega_lost"] - 0.01, (none, high)


def test_paper_tiebreak_gains_less_useful_work_than_balancing():
    # BGL-FAULT §7.3: "due to the aggressiveness of the tie-breaking algorithm, the improvements in useful
    # work through the use of tie-breaking algorithm are not as significant as compared to the balancing
    # algorithm improvements". Compared at high load (c = 1.2), 4000-equivalent failures, a = 0.9.
    none = mean_summary(4 * PER_1000, "balancing", 0.0, load_scale=1.2)["omega_util"]
    balancing = mean_summary(4 * PER_1000, "balancing", 0.9, load_scale=1.2)["omega_util"]
    tiebreak = mean_summary(4 * PER_1000, "tiebreak", 0.9, load_scale=1.2)["omega_util"]
    assert 0 < tiebreak - none < balancing - none, (none, tiebreak, balancing)


def test_paper_zero_confidence_and_zero_accuracy_are_krevats_scheduler():
    # BGL-FAULT Fig. 3 caption: "a = 0.0 (no prediction)". Every seed's balancing run is Krevat's run; tie-breaking
    # with accuracy 0 is compared on the first seed's run (equal values, not only equal means).
    assert mean_summary(PER_1000, "balancing", 0.0) == mean_summary(PER_1000)
    for seed in SEEDS:
        assert (
            _SUMMARIES[_key(PER_1000, "balancing", 0.0, 1.0, "exponential", seed)]
            == _SUMMARIES[_key(PER_1000, "krevat", 0.0, 1.0, "exponential", seed)]
        )
    assert _SUMMARIES[ZERO_ACCURACY] == _SUMMARIES[_key(PER_1000, "krevat", 0.0, 1.0, "exponential", SEEDS[0])]


def test_tiebreak_diagnostics_say_how_rarely_the_alarm_decides():
    # BGL-FAULT §7.3 reports 60-70% lower bounded slowdown on SDSC; ours is far less (docs/bgl_fault).
    # The counts say why: ties among MFP-best partitions are common, but an alarm touches a candidate
    # in few placements and changes Krevat's choice in fewer still (measured: 12,668 placements, 9,189
    # ties, 2,248 alarmed, 844 changed). Asking the alarm about every partition of the size first
    # (tie_candidates = "all") changes more choices and leaves fewer placements where all candidates ring.
    counts = {}
    for candidates in ("best-mfp", "all"):
        config = RunConfig(
            workload=str(SDSC),
            max_jobs=JOBS,
            failures=f"synthetic:{PER_1000}",
            reduced_failures="count",
            scheduler="tiebreak",
            accuracy=1.0,
            tie_candidates=candidates,
        )
        counts[candidates] = {key: value for key, value in run(config).summary.items() if key.startswith("tie_")}
    best = counts["best-mfp"]
    assert best["tie_placements"] >= JOBS and best["tie_ties"] > 0.5 * best["tie_placements"]
    assert best["tie_changed"] <= best["tie_alarmed"] < 0.25 * best["tie_placements"]
    assert best["tie_changed"] < 0.1 * best["tie_placements"]
    assert counts["all"]["tie_changed"] > best["tie_changed"] and counts["all"]["tie_all_alarmed"] < best["tie_all_alarmed"]
