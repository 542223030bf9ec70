"""Prime time (issue 77 §1, time-of-day rules): long jobs wait for the end of the working day, in the log's local time."""

from __future__ import annotations

import datetime
import subprocess
import sys
from zoneinfo import ZoneInfo

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from torus_sim.core.errors import ConfigurationError
from torus_sim.core.job import Job
from torus_sim.engine.model import SchedulingModel
from torus_sim.engine.prime_time import LogClock, PrimeTime, PrimeTimeRule, parse_prime_time
from torus_sim.experiments.runner import Scenario, build_model
from torus_sim.experiments.sweep import run_key
from torus_sim.inputs.workload.jobs import Workload
from torus_sim.policies.catalog import ONLINE_POLICIES, POLICIES
from torus_sim.policies.easy import EasyPolicy
from torus_sim.policies.rigid import ListPolicy

CLUSTER_POLICIES = [name for name in ONLINE_POLICIES if name not in ("krevat", "balancing", "tiebreak")]

MONDAY = datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC).timestamp()  # the clock's zero: Monday 00:00 UTC
HOUR, DAY = 3600.0, 86_400.0
WEEKDAYS = parse_prime_time("MON-FRI 08:00-18:00")


def _job(job_id: int, at: float, runtime: float, size: int = 1) -> Job:
    return Job(job_id, at, runtime=runtime, walltime=runtime, size=size, user_id=1)


def _rule(max_walltime: float = HOUR, spill: float | None = None) -> PrimeTimeRule:
    return PrimeTimeRule(WEEKDAYS, LogClock(MONDAY), max_walltime, spill)


def _run(jobs, nodes: int, policy=None, **engine):
    model = SchedulingModel(Workload(jobs=jobs, source="hand-made"), policy or EasyPolicy(), nodes, **engine)
    return model, model.run().jobs.set_index("job_id")


def test_a_rule_reads_days_and_hours_and_a_bad_one_says_what_is_wrong():
    assert WEEKDAYS == (frozenset(range(5)), 480, 1080)
    assert WEEKDAYS.longest_gap() == (2 * 24 + 14) * HOUR  # Friday 18:00 to Monday 08:00
    assert parse_prime_time("ALL 00:00-24:00").longest_gap() == 0.0
    assert parse_prime_time("sat-mon 00:00-24:00") == (frozenset({5, 6, 0}), 0, 1440)
    assert parse_prime_time("MON,WED 09:00-17:30").days == frozenset({0, 2})
    assert parse_prime_time("ALL 08:00-20:00").days == frozenset(range(7))
    for bad, words in (
        ("MON-FRI", "expected days and hours"),
        ("XYZ 08:00-09:00", "'XYZ' is not a day"),
        ("MON 09:00-08:00", "start must come before its end"),
        ("MON 08:61-09:00", "08:61 is not a time of day"),
    ):
        with pytest.raises(ValueError, match=words):
            parse_prime_time(bad)


def test_prime_time_is_the_logs_wall_time_across_a_daylight_saving_change():
    # US/Pacific went to daylight time on Sunday 5 April 1998: Friday's 08:00 is 16:00 UTC, Monday's 15:00 UTC
    origin = datetime.datetime(1998, 4, 3, tzinfo=ZoneInfo("US/Pacific")).timestamp()  # Friday 3 April, midnight
    gate = PrimeTime(PrimeTimeRule(WEEKDAYS, LogClock(origin, "US/Pacific"), HOUR), lambda at: None)
    friday = gate.span(0.0)
    assert friday == (8 * HOUR, 18 * HOUR)
    monday = gate.span(friday[1])  # Friday 18:00: the next one is Monday's, 71 hours on (the clocks went forward)
    assert monday == (3 * DAY + 8 * HOUR - HOUR, 3 * DAY + 18 * HOUR - HOUR)
    assert gate.span(monday[0] + 60.0) == monday
    # a fixed offset (an SWF header's older TimeZone field): 08:00 at UTC-5 is 13:00 UTC
    assert PrimeTime(PrimeTimeRule(WEEKDAYS, LogClock(MONDAY, offset=-5 * HOUR), HOUR), print).span(0.0)[0] == 13 * HOUR
    with pytest.raises(ConfigurationError, match="'Mars/Olympus' is not in the time zone database"):
        LogClock(0.0, "Mars/Olympus")


def test_long_jobs_wait_for_the_end_of_prime_time_and_short_ones_start():
    # one node each, 4 nodes, prime time on weekdays 08:00-18:00 UTC, jobs asking over an hour held through it:
    # job 1 (2 h) submitted Monday 09:00 starts at 18:00; job 2 (30 min) at 09:00 at once; job 3 (2 h) submitted
    # Monday 17:00 also waits for 18:00; job 4 (2 h) on Saturday 10:00 starts at once; job 5 (2 h) at 07:00 starts (it
    # runs into prime time: without a spill only the start is ruled)
    jobs = [
        _job(5, 7 * HOUR, 2 * HOUR),
        _job(1, 9 * HOUR, 2 * HOUR),
        _job(2, 9 * HOUR, HOUR / 2),
        _job(3, 17 * HOUR, 2 * HOUR),
        _job(4, 5 * DAY + 10 * HOUR, 2 * HOUR),
    ]
    model, table = _run(jobs, 4, prime_time=_rule())
    assert table["started_at"].to_dict() == {
        5: 7 * HOUR,
        1: 18 * HOUR,
        2: 9 * HOUR,
        3: 18 * HOUR,
        4: 5 * DAY + 10 * HOUR,
    }
    assert model.scheduler.prime_time.held_ever == 2 and model.scheduler.prime_time.held == 0
    assert model.counters["jobs_held_for_prime_time"] == 2


def test_with_a_spill_a_long_job_starts_only_if_it_ends_that_soon_into_prime_time():
    # spill of 30 min: job 1 (2 h) at Tuesday 05:00 ends at 07:00: starts; job 2 (2 h) at 07:00 would end at 09:00,
    # an hour into prime time: held until Tuesday 18:00; job 3 (2 h) at 06:45 ends at 08:45, 45 min in: held; job 4
    # (2 h) at 06:30 ends at 08:30: starts; a short job (30 min) at 07:50 starts
    tuesday = DAY
    jobs = [
        _job(1, tuesday + 5 * HOUR, 2 * HOUR),
        _job(4, tuesday + 6.5 * HOUR, 2 * HOUR),
        _job(3, tuesday + 6.75 * HOUR, 2 * HOUR),
        _job(2, tuesday + 7 * HOUR, 2 * HOUR),
        _job(5, tuesday + 7 * HOUR + 50 * 60, HOUR / 2),
    ]
    _, table = _run(jobs, 8, prime_time=_rule(spill=HOUR / 2))
    assert (table["started_at"] - tuesday).to_dict() == {
        1: 5 * HOUR,
        4: 6.5 * HOUR,
        3: 18 * HOUR,
        2: 18 * HOUR,
        5: 7 * HOUR + 50 * 60,
    }


@settings(max_examples=30, deadline=None)
@given(
    submits=st.lists(st.integers(0, 14 * 24), min_size=1, max_size=20),
    sizes=st.lists(st.integers(1, 8), min_size=20, max_size=20),
    hours=st.lists(st.integers(1, 12), min_size=20, max_size=20),
    spill=st.sampled_from([None, 0.0, 2 * HOUR]),
    policy=st.sampled_from(CLUSTER_POLICIES),
)
def test_no_long_job_starts_in_prime_time_under_any_cluster_policy(submits, sizes, hours, spill, policy):
    jobs = [_job(index + 1, at * HOUR, hours[index] * HOUR, sizes[index]) for index, at in enumerate(sorted(submits))]
    rule = _rule(max_walltime=3 * HOUR, spill=spill)
    _, table = _run(jobs, 8, POLICIES.make(policy), prime_time=rule)
    assert len(table) == len(jobs) and table["finished_at"].notna().all()
    starts = pd.to_datetime(MONDAY + table["started_at"], unit="s", utc=True)
    in_prime = (starts.dt.weekday < 5) & (starts.dt.hour >= 8) & (starts.dt.hour < 18)
    long = table["walltime"] > 3 * HOUR
    assert not (in_prime & long).any()
    if spill is not None:  # a long job's requested time ends at most the spill into the next prime time
        gate = PrimeTime(rule, lambda at: None)
        for job_id in table.index[long]:
            start = table.loc[job_id, "started_at"]
            next_prime = gate.span(start)[0]
            assert start + table.loc[job_id, "walltime"] <= next_prime + spill + 1e-6


def test_a_logs_prime_time_falls_on_its_local_days_and_the_torus_takes_it():
    # SDSC-SP2 (US/Pacific) on the torus: no job asking over 2 h starts on a weekday between 08:00 and 18:00 Pacific
    plain = Scenario.make(workload="pwa:SDSC-SP2", max_jobs=1500, failures="none")
    ruled = plain.replace(prime_time="MON-FRI 08:00-18:00", prime_time_max_walltime=7200.0)
    assert run_key(plain) != run_key(ruled)
    model = build_model(ruled)
    table = model.run().jobs
    origin = 893466664  # the log's UnixStartTime
    starts = pd.to_datetime(origin + table["started_at"], unit="s", utc=True).dt.tz_convert("US/Pacific")
    in_prime = (starts.dt.weekday < 5) & (starts.dt.hour >= 8) & (starts.dt.hour < 18)
    assert not (in_prime & (table["walltime"] > 7200.0)).any()
    assert model.counters["jobs_held_for_prime_time"] > 0
    free = build_model(plain).run().jobs
    free_starts = pd.to_datetime(origin + free["started_at"], unit="s", utc=True).dt.tz_convert("US/Pacific")
    free_prime = (free_starts.dt.weekday < 5) & (free_starts.dt.hour >= 8) & (free_starts.dt.hour < 18)
    assert (free_prime & (free["walltime"] > 7200.0)).any()  # the rule changed something


def test_bad_prime_time_settings_are_one_sentence():
    with pytest.raises(ConfigurationError, match="expected days and hours"):
        Scenario.make(prime_time="weekdays")
    with pytest.raises(ConfigurationError, match="prime_time needs prime_time_max_walltime"):
        build_model(Scenario.make(workload="pwa:SDSC-SP2", max_jobs=50, prime_time="MON-FRI 08:00-18:00"))
    with pytest.raises(ConfigurationError, match="need prime_time"):
        build_model(Scenario.make(workload="pwa:SDSC-SP2", max_jobs=50, prime_time_spill=60.0))
    with pytest.raises(ConfigurationError, match="run it at c = 1"):
        build_model(
            Scenario.make(
                workload="pwa:SDSC-SP2", max_jobs=50, load_scale=1.5, prime_time="ALL 08:00-09:00", prime_time_max_walltime=60.0
            )
        )
    with pytest.raises(ConfigurationError, match="prime_time: .* plans after each attempt end"):
        _run([_job(1, 0, 10)], 4, ListPolicy(), prime_time=_rule())
    with pytest.raises(ConfigurationError, match="prime_time_max_walltime must be positive"):
        _run([_job(1, 0, 10)], 4, prime_time=_rule(max_walltime=0.0))
    # a rule under which a job could never start would keep the engine asking for passes forever: refused
    always = PrimeTimeRule(parse_prime_time("ALL 00:00-24:00"), LogClock(MONDAY), HOUR)
    with pytest.raises(ConfigurationError, match="covers the whole week"):
        _run([_job(1, 0, 2 * HOUR)], 4, prime_time=always)
    assert _run([_job(1, 0, HOUR / 2)], 4, prime_time=always)[1].loc[1, "started_at"] == 0.0  # short jobs run
    nights = PrimeTimeRule(parse_prime_time("ALL 06:00-24:00"), LogClock(MONDAY), HOUR, spill=HOUR)  # 6 h outside
    with pytest.raises(ConfigurationError, match="longest time outside prime time is 21,600 s, plus the spill 3,600 s"):
        _run([_job(1, 0, 8 * HOUR)], 4, prime_time=nights)
    assert _run([_job(1, 0, 7 * HOUR)], 4, prime_time=nights)[1].loc[1, "started_at"] == 0.0  # 00:00 + 7 h = 07:00


def test_the_cli_refuses_a_bad_rule_in_one_sentence_and_writes_nothing(tmp_path):
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "torus_sim.interfaces.cli", "run", "--prime-time", "MON-FRI 8-18", "--out", str(out)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "expected days and hours" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not out.exists()
