"""Standing reservations (issue 77 §1, time-of-day and day-of-week rules): nodes held on the same days and hours every
week of the log's local time, by count, each taken as its job ends (Maui's SRDAYS / SRSTARTTIME / SRENDTIME /
SRTASKCOUNT)."""

from __future__ import annotations

import datetime

import pytest

from torus_sim.engine.prime_time import LogClock
from torus_sim.engine.standing_reservations import parse_standing_reservations, standing_reservation_days
from torus_sim.experiments.runner import run
from torus_sim.experiments.scenario import Scenario
from torus_sim.interfaces.cli import main

MONDAY = 1704085200  # 2024-01-01 00:00 US/Eastern, a Monday
HOUR = 3600.0


def _log(path, rows, machine: int = 4):
    """An SWF log starting Monday 2024-01-01 at midnight in US/Eastern: (submit, runtime, processors) rows."""
    lines = [f"; UnixStartTime: {MONDAY}", "; TimeZoneString: US/Eastern", f"; MaxProcs: {machine}"]
    for number, (submit, runtime, processors) in enumerate(rows, start=1):
        fields = [number, submit, 0, runtime, processors, -1, -1, processors, runtime, -1, 1, 1, 1, 1, -1, -1, -1, -1]
        lines.append(" ".join(str(int(value)) for value in fields))
    path.write_text("\n".join(lines) + "\n")
    return path


def test_rules_are_read_and_a_bad_one_is_a_sentence():
    (weekdays,) = parse_standing_reservations("MON-FRI 08:00-18:00 32")
    assert weekdays.spec.days == frozenset(range(5)) and (weekdays.spec.start, weekdays.spec.end, weekdays.count) == (
        480,
        1080,
        32,
    )
    assert [rule.count for rule in parse_standing_reservations("MON 08:00-12:00 4; SAT-SUN 00:00-24:00 2")] == [4, 2]
    for bad, said in (
        ("MON-FRI 08:00-18:00", "expected days, hours and a node count"),
        ("MON-FRI 08:00-18:00 0", "node count >= 1"),
        ("MON-FRI 18:00-08:00 4", "its start must come before its end"),
        ("MOON 08:00-18:00 4", "'MOON' is not a day"),
    ):
        with pytest.raises(ValueError, match=said):
            parse_standing_reservations(bad)
    with pytest.raises(ValueError, match="standing_reservations"):
        Scenario(standing_reservations="MON-FRI 08:00-18:00")


def test_each_named_day_is_one_reservation_in_the_logs_local_time():
    rules = parse_standing_reservations("MON,WED 08:00-18:00 3")
    clock = LogClock(MONDAY, "US/Eastern")
    days = standing_reservation_days(rules, clock, 0.0, 9 * 24 * HOUR)  # Monday 1 January to Wednesday 10 January
    assert [(start / HOUR, end / HOUR, count) for start, end, count, *_ in days] == [
        (8.0, 18.0, 3),  # Monday
        (2 * 24 + 8.0, 2 * 24 + 18.0, 3),  # Wednesday
        (7 * 24 + 8.0, 7 * 24 + 18.0, 3),  # the next Monday
        (9 * 24 + 8.0, 9 * 24 + 18.0, 3),  # the next Wednesday: the day of the last submission
    ]
    assert days[0][3:5] == ((), False) and days[0][5] == "standing reservation MON,WED 08:00-18:00 3 on 2024-01-01"
    spring = LogClock(datetime.datetime(2024, 3, 10, tzinfo=datetime.UTC).timestamp() + 5 * HOUR, "US/Eastern")
    (sunday,) = standing_reservation_days(parse_standing_reservations("SUN 08:00-18:00 1"), spring, 0.0, HOUR)
    assert sunday[0] == 7 * HOUR and sunday[1] == 17 * HOUR  # 10 March 2024: clocks went forward at 02:00


def test_a_job_waits_for_the_reservations_end_and_a_short_one_backfills(tmp_path):
    """Four processors; 3 held on Mondays 08:00-18:00. Job 1 (2 processors, 07:00-09:00) runs on; the reservation
    takes 2 free processors at 08:00 and the third at 09:00. Job 2 (2 processors, submitted 08:30) waits to 18:00;
    job 3 (1 processor, 1 h, submitted 10:00) backfills on the one left."""
    log = _log(tmp_path / "week.swf", [(7 * HOUR, 2 * HOUR, 2), (8.5 * HOUR, HOUR, 2), (10 * HOUR, HOUR, 1)])
    base = Scenario(workload=str(log), platform="cluster", failures="none", policy="FCFS-EASY")
    plain = run(base).jobs.set_index("job_id")["wait_time"].to_dict()
    assert plain == {1: 0.0, 2: 0.0, 3: 0.0}  # without it, two processors stay free for job 2
    jobs = run(base.replace(standing_reservations="MON 08:00-18:00 3")).jobs.set_index("job_id")
    assert jobs["wait_time"].to_dict() == {1: 0.0, 2: 18 * HOUR - 8.5 * HOUR, 3: 0.0}
    assert run(base.replace(standing_reservations="TUE 08:00-18:00 3")).jobs.set_index("job_id")["wait_time"].to_dict() == plain


def test_a_count_above_the_machine_or_a_log_without_a_date_is_one_sentence(tmp_path, capsys):
    log = _log(tmp_path / "week.swf", [(7 * HOUR, 2 * HOUR, 2)])
    arguments = ["run", "--workload", str(log), "--platform", "cluster", "--failures", "none", "--policy", "FCFS-EASY"]
    code = main([*arguments, "--standing-reservations", "MON 08:00-18:00 5", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2 and "'MON 08:00-18:00 5' holds 5 nodes, more than the machine's 4" in err and not (tmp_path / "o").exists()
    undated = tmp_path / "undated.swf"
    undated.write_text("\n".join(line for line in log.read_text().splitlines() if "UnixStartTime" not in line) + "\n")
    code = main(
        [
            *arguments[:2],
            str(undated),
            *arguments[3:],
            "--standing-reservations",
            "MON 08:00-18:00 1",
            "--out",
            str(tmp_path / "o"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and "standing_reservations needs the log's start as a date: undated.swf has no UnixStartTime" in err


@pytest.mark.parametrize("policy", ["krevat", "FCFS-EASY"])
def test_the_torus_and_the_cluster_hold_the_same_days(policy):
    """The bundled NASA log (US/Pacific) on the default torus and on a cluster: supernodes or processors held each
    weekday; the jobs wait longer and the held node time is counted."""
    platform = "torus" if policy == "krevat" else "cluster"
    base = Scenario(platform=platform, failures="none", policy=policy, max_jobs=400)
    plain = run(base)
    held = run(base.replace(standing_reservations="MON-FRI 08:00-18:00 32"))
    assert held.summary["avg_wait_time"] > plain.summary["avg_wait_time"]
    assert held.summary["node_hours_held_out"] > 0 and "node_hours_held_out" not in plain.summary
