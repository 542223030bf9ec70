"""The power-capping policy (issue 45 §4): EASY backfilling inside a machine power cap, constant or in hours of the day."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from torus_sim.core.errors import ConfigurationError, InputFileError
from torus_sim.experiments.runner import Scenario, run
from torus_sim.metrics.energy import power_timeline
from torus_sim.policies.power_cap import HeadroomProfile

pytestmark = pytest.mark.filterwarnings("ignore:the offered load after cleaning")  # the hand-made traces' few jobs

SDSC = "../shared/data/swf/SDSC-SP2-1998-4.2-cln.swf.gz"
TORUS_POWER = {"power": True, "job_power": "uniform:5600:16800", "price": "tou:0.05:3"}


def _starts(result):
    return result.jobs.set_index("job_id")["started_at"]


@pytest.mark.parametrize(
    ("platform", "failures"),
    [
        ({}, "none"),
        ({}, "synthetic:4000:bursty"),
        ({"platform": "cluster", "nodes": 128, "job_power": "uniform:100:300"}, "synthetic:4000:bursty"),
    ],
    ids=["torus", "torus-bursty", "cluster-bursty"],
)
def test_a_cap_that_never_binds_gives_fcfs_easy_job_for_job(platform, failures):
    """With the cap 10 x the busy draw nothing is ever held by its watts: the schedule is FCFS-EASY's, start for start.

    SDSC-SP2's first 2,500 jobs (a busy log: long queues, many reservations and backfills) on BG/L's torus
    without and with 4,000 bursty failures, and on a 128-node cluster with them.
    """
    settings = {**TORUS_POWER, **platform, "workload": SDSC, "max_jobs": 2500, "failures": failures}
    easy = run(Scenario.make("easy", **settings, policy="FCFS-EASY"))
    capped = run(Scenario.make("capped", **settings, policy="power-cap", power_cap=10))
    assert (_starts(capped) == _starts(easy)).all()
    assert capped.summary["jobs"] == easy.summary["jobs"] == 2500


def _over_the_cap(result, cap_w: float, hours: tuple[float, float] | None = None) -> list[float]:
    """The times the machine's draw exceeds ``cap_w`` (within ``hours`` of the day) with more than one job running."""
    attempts = result.record.attempts
    watts = attempts["job_id"].map(result.jobs.set_index("job_id")["power_w"]).to_numpy(float)
    times, draw = power_timeline(attempts, watts, (np.empty(0), np.empty(0)), 128, 5600.0, 0.0)
    started = attempts["started_at"].to_numpy(float)
    ended = attempts["ended_at"].to_numpy(float)
    over = []
    for at, watts_then in zip(times, draw, strict=True):
        if watts_then <= cap_w + 1e-6:
            continue
        if hours is not None and not hours[0] <= (at / 3600.0) % 24 < hours[1]:
            continue
        if ((started <= at) & (ended > at)).sum() > 1:
            over.append(float(at))
    return over


def test_the_draw_stays_under_the_cap_unless_a_job_runs_alone_and_waits_grow_as_the_cap_falls():
    """NASA's first 3,000 jobs on BG/L (job power uniform 5.6-16.8 kW per midplane): at every instant the draw is
    under 0.8 x 128 x 11.2 kW, or one job runs alone (a job over the cap by itself starts on an idle machine);
    a cap of 0.8 makes jobs wait longer than a cap of 1.0, which waits longer than FCFS-EASY."""
    settings = {**TORUS_POWER, "max_jobs": 3000, "failures": "none"}
    waits = {}
    for cap in (1.0, 0.8):
        result = run(Scenario.make("cap", **settings, policy="power-cap", power_cap=cap))
        assert _over_the_cap(result, cap * 128 * 11200.0) == []
        assert result.summary["jobs"] == 3000
        # the summary's time over the cap is exactly the run time of the jobs over it by themselves (they run alone)
        jobs = result.jobs
        alone = jobs["partition_size"] * (jobs["power_w"] - 5600.0) > cap * 128 * 11200.0 - 128 * 5600.0
        assert result.summary["hours_over_cap"] * 3600.0 == pytest.approx(float(jobs.loc[alone, "runtime"].sum()))
        waits[cap] = result.summary["mean_wait"]
    easy = run(Scenario.make("easy", **settings, policy="FCFS-EASY"))
    assert easy.summary["mean_wait"] < waits[1.0] < waits[0.8]
    # the check itself sees a draw over the cap: FCFS-EASY's
    assert _over_the_cap(easy, 0.8 * 128 * 11200.0)


def test_a_cap_held_in_hours_of_the_day_binds_only_then():
    """cap_hours 8-20: the draw stays under 0.7 x the busy draw from 8:00 to 20:00 (t = 0 at 0:00) and goes above it at night."""
    settings = {**TORUS_POWER, "max_jobs": 3000, "failures": "none"}
    result = run(Scenario.make("day", **settings, policy="power-cap", power_cap=0.7, power_cap_hours="8-20"))
    cap_w = 0.7 * 128 * 11200.0
    assert _over_the_cap(result, cap_w, (8.0, 20.0)) == []
    assert _over_the_cap(result, cap_w, (20.0, 24.0)) or _over_the_cap(result, cap_w, (0.0, 8.0))


def _cluster_run(tmp_path, rows, watts, **cap):
    """A 4-node cluster (100 W idle, 200 W busy per node: cap share x 800 W), jobs ``(id, submit, run, procs, request)``."""
    trace = tmp_path / "trace.swf"
    trace.write_text(
        "; MaxProcs: 4\n" + "".join(f"{j} {s} 0 {r} {p} -1 -1 {p} {q} -1 1 1 1 -1 1 -1 -1 -1\n" for j, s, r, p, q in rows)
    )
    power = tmp_path / "watts.csv"
    power.write_text("job_id,watts_per_node\n" + "".join(f"{job},{w}\n" for job, w in watts.items()))
    return run(
        Scenario.make(
            "held",
            workload=str(trace),
            platform="cluster",
            nodes=4,
            power=True,
            job_power=str(power),
            node_idle_w=100.0,
            node_busy_w=200.0,
            price="flat:0.1",
            clock_start_hour=12.0,
            policy="power-cap",
            **cap,
        )
    )


def test_the_first_blocked_job_keeps_its_watts_and_a_job_that_leaves_them_backfills(tmp_path):
    """Cap 0.875 x 800 W = 700 W. Job 1 (2 nodes at 200 W: +200 W, draw 600 W) runs 0-1,000 s. Job 2 (1 node at 300 W:
    +200 W) is held by its watts with a node free: reserved at 1,000 s (then 400 + 200 W, 100 W left). Job 3 (1 node at
    120 W: +20 W, 1,000 s) runs past the reservation and leaves job 2 its watts: it backfills at once. Job 4 (1 node at
    300 W: +200 W) fits no watts until job 2 has ended (1,100 s)."""
    rows = [(1, 0, 1000, 2, 1000), (2, 10, 100, 1, 100), (3, 20, 1000, 1, 1000), (4, 30, 100, 1, 100)]
    result = _cluster_run(tmp_path, rows, {1: 200, 2: 300, 3: 120, 4: 300}, power_cap=0.875)
    started = _starts(result)
    assert (started[1], started[2], started[3], started[4]) == (0.0, 1000.0, 20.0, 1100.0)


def test_a_backfill_that_would_take_the_watts_the_blocked_job_needs_waits(tmp_path):
    """Cap 700 W. Job 1 (1 node at 300 W: draw 600 W) runs 0-1,000 s. Job 2 (2 nodes at 250 W: +300 W) is reserved at
    1,000 s, where it leaves no watts. Job 3 (1 node at 150 W: +50 W, 5,000 s) fits now but would still run then: it
    waits (and starts after job 2, at 1,100 s); job 4 (the same, 500 s) ends by 1,000 s: it backfills at once."""
    rows = [(1, 0, 1000, 1, 1000), (2, 10, 100, 2, 100), (3, 20, 5000, 1, 5000), (4, 30, 500, 1, 500)]
    result = _cluster_run(tmp_path, rows, {1: 300, 2: 250, 3: 150, 4: 150}, power_cap=0.875)
    started = _starts(result)
    assert (started[1], started[2], started[3], started[4]) == (0.0, 1000.0, 1100.0, 30.0)


def test_a_job_held_by_the_cap_starts_when_the_cap_hours_end(tmp_path):
    """Cap 600 W in hours 12-14 on a clock starting at 12:00: job 2 (+400 W over job 1's 600 W) starts at 14:00
    (t = 7,200 s, a pass where the cap ends), not at job 1's end (100,000 s)."""
    rows = [(1, 0, 100_000, 1, 100_000), (2, 10, 100, 2, 100)]
    result = _cluster_run(tmp_path, rows, {1: 300, 2: 300}, power_cap=0.75, power_cap_hours="12-14")
    started = _starts(result)
    assert started[1] == 0.0
    assert started[2] == 7_200.0


def test_an_idle_machine_holds_a_job_until_the_cap_hours_end(tmp_path):
    """Cap 600 W in hours 12-14 (t = 0 at 12:00): job 1 alone draws 400 + 2 x 200 = 800 W, over the cap though nothing
    runs; the cap ends at t = 7,200 s and it starts then (the engine's pass at the cap's end, with no other event left:
    no stall). Job 2 (1 node at 150 W: 450 W, 50 s) ends long before job 1's reservation: it backfills at once."""
    rows = [(1, 0, 100, 2, 100), (2, 10, 50, 1, 50)]
    result = _cluster_run(tmp_path, rows, {1: 300, 2: 150}, power_cap=0.75, power_cap_hours="12-14")
    started = _starts(result)
    assert started[1] == 7_200.0
    assert started[2] == 10.0
    assert result.summary["hours_over_cap"] == 0.0


def test_a_job_over_the_cap_by_itself_runs_alone_after_the_others(tmp_path):
    """Cap 600 W. Job 2 draws 4 x 400 W = 1,600 W even alone: it is reserved at the running job's predicted end
    (1,000 s) and starts then on the idle machine; job 3 (ends by then) backfills; job 4 (would run past it) waits
    until job 2 is done (1,100 s)."""
    rows = [(1, 0, 1000, 1, 1000), (2, 10, 100, 4, 100), (3, 20, 500, 1, 500), (4, 30, 5000, 1, 5000)]
    result = _cluster_run(tmp_path, rows, {1: 200, 2: 400, 3: 150, 4: 150}, power_cap=0.75)
    started = _starts(result)
    assert started[2] == 1000.0
    assert started[3] == 20.0
    assert started[4] == 1100.0
    # the summary sees it: 100 s at 400 + 4 x 300 = 1,600 W, 1,000 W above the cap
    assert result.summary["cap_kw"] == pytest.approx(0.6)
    assert result.summary["hours_over_cap"] == pytest.approx(100.0 / 3600.0)
    assert result.summary["energy_over_cap_kwh"] == pytest.approx(1000.0 * 100.0 / 3.6e6)


def test_the_policy_refuses_a_run_without_power_or_a_cap_a_cap_below_the_idle_draw_and_bad_hours():
    with pytest.raises(ConfigurationError, match="needs power accounting"):
        run(Scenario.make("no power", max_jobs=20, policy="power-cap"))
    with pytest.raises(ConfigurationError, match="needs a power cap"):
        run(Scenario.make("no cap", max_jobs=20, policy="power-cap", power=True))
    with pytest.raises(ConfigurationError, match="not above the idle draw"):
        run(Scenario.make("low", max_jobs=20, policy="power-cap", power=True, power_cap=0.5))
    with pytest.raises(ConfigurationError, match="power_cap"):
        Scenario.make("bad", max_jobs=20, policy="power-cap", power=True, power_cap="high")
    with pytest.raises(ConfigurationError, match="power_cap_hours"):
        Scenario.make("bad", max_jobs=20, policy="power-cap", power=True, power_cap=0.8, power_cap_hours="25-3")


def test_the_headroom_profile_is_the_cap_less_the_predicted_draw_at_every_step():
    """Draw 1,000 W now; jobs ending at 50 s (-300 W) and 200 s (-200 W); a cap of 900 W in force from 100 s to 300 s."""

    def cap_levels(times):
        times = np.asarray(times, dtype=float)
        return np.where((times >= 100.0) & (times < 300.0), 900.0, math.inf)

    profile = HeadroomProfile(0.0, 1000.0, [(50.0, 300.0), (200.0, 200.0)], cap_levels, [100.0, 300.0])
    assert profile.dates == [0.0, 50.0, 100.0, 200.0, 300.0]
    assert profile.free == [math.inf, math.inf, 200.0, 400.0, math.inf]
    assert profile.fits(0.0, 150.0, 150.0) and not profile.fits(0.0, 250.0, 150.0)
    assert profile.earliest(250.0, 150.0) == (200.0, None)
    profile.reserve(200.0, 50.0, 300.0)
    assert profile.free[profile.dates.index(200.0)] == 100.0


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 500), st.integers(-300, 300)), max_size=12),
    st.lists(st.tuples(st.integers(0, 600), st.integers(-50, 400), st.integers(0, 700)), max_size=4),
    st.integers(-100, 600),
    st.integers(0, 800),
)
def test_fits_now_is_the_scan_of_fits_from_now(releases, reservations, need, duration):
    """HeadroomProfile.fits_now (a running minimum and one bisection) answers as AvailabilityProfile.fits from now,
    before and after reservations."""

    def cap_levels(times):
        times = np.asarray(times, dtype=float)
        return np.where(np.mod(times, 400.0) < 200.0, 1000.0, math.inf)

    profile = HeadroomProfile(0.0, 800.0, [(float(at), float(w)) for at, w in releases], cap_levels, [200.0, 400.0, 600.0])
    for start, watts, length in [(0, 0, 0), *reservations]:
        profile.reserve(float(start), float(length), float(watts))
        assert profile.fits_now(float(need), float(duration)) == profile.fits(0.0, float(need), float(duration))


def test_a_cap_file_of_the_on_peak_hours_gives_the_daily_hours_schedule_start_for_start(tmp_path):
    """A ``power_cap_file`` whose levels are 0.8 from 8:00 and 10 (never binding) from 20:00, each day of the run,
    gives the schedule and the cap measures of ``power_cap = 0.8`` in hours 8-20 (NASA's first 3,000 jobs on BG/L)."""
    days = 40
    lines = ["time,share", "0,10"] + [
        f"{day * 86400 + hour * 3600},{share}" for day in range(days) for hour, share in ((8, 0.8), (20, 10))
    ]
    caps = tmp_path / "caps.csv"
    caps.write_text("\n".join(lines) + "\n")
    settings = {**TORUS_POWER, "max_jobs": 3000, "failures": "none", "policy": "power-cap"}
    hours = run(Scenario.make("hours", **settings, power_cap=0.8, power_cap_hours="8-20"))
    filed = run(Scenario.make("file", **settings, power_cap_file=str(caps)))
    assert hours.record.makespan < days * 86400
    assert (_starts(filed) == _starts(hours)).all()
    for key in ("cap_kw", "hours_over_cap", "energy_over_cap_kwh", "bill"):
        assert filed.summary[key] == pytest.approx(hours.summary[key], rel=1e-12)
    assert (
        hours.summary["avg_bounded_slowdown"]
        > run(Scenario.make("easy", **{**settings, "policy": "FCFS-EASY"})).summary["avg_bounded_slowdown"]
    )


def test_a_job_held_by_a_cap_file_starts_at_a_level_three_days_ahead(tmp_path):
    """4 nodes (100 W idle, 200 W busy): the file caps the machine at 0.6 x 800 W until day 3, then 1.0. The 4-node
    job at 200 W per node adds 400 W, over the first level's 80 W of headroom: held on an idle machine (no other
    event) until day 3, the next level being past the two days of the hours' look-ahead."""
    caps = tmp_path / "caps.csv"
    caps.write_text("time,share\n0,0.6\n259200,1.0\n")
    result = _cluster_run(tmp_path, [(1, 0, 1000, 4, 4 * 86400)], {1: 200}, power_cap_file=str(caps))
    assert result.jobs.set_index("job_id")["started_at"].to_dict() == {1: 259200.0}
    assert result.summary["hours_over_cap"] == 0.0 and result.summary["cap_kw"] == pytest.approx(0.48)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("time,share\n0,0.8\n0,0.9\n", r"caps.csv:3: .*times must increase"),
        ("time,share\n0,0.8\n3600,0\n", r"caps.csv:3: .*a cap's share must be > 0"),
        ("time,level\n0,0.8\n", r"caps.csv:1: .*expected the header time,share"),
        ("time,share\n0,abc\n", r"caps.csv:2: .*expected two finite numbers"),
        ("time,share\n", r"the power cap file is empty"),
    ],
)
def test_a_malformed_cap_file_names_its_line(tmp_path, text, match):
    caps = tmp_path / "caps.csv"
    caps.write_text(text)
    with pytest.raises(InputFileError, match=match):  # PairFileError is an InputFileError too
        run(Scenario.make("x", **TORUS_POWER, max_jobs=20, policy="power-cap", power_cap_file=str(caps)))


def test_a_share_and_a_cap_file_together_are_refused():
    with pytest.raises(ConfigurationError, match="power_cap_file, not both"):
        Scenario.make("x", **TORUS_POWER, power_cap=0.8, power_cap_file="caps.csv")
