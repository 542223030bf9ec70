"""Hand-computed scenarios: a few jobs, at most a few failures, exact times and metrics."""

import numpy as np
import pytest

from failure_logs.events import FailureLog
from torus_sim.engine import EventPriority
from torus_sim.metrics import summarize
from torus_sim.policies.krevat import KrevatScheduler

from .conftest import make_workload, ring, torus_model


def failures(*rows):
    """FailureLog from (time, supernode[, repair_at]) rows."""
    times = [row[0] for row in rows]
    nodes = [row[1] for row in rows]
    repairs = [row[2] if len(row) > 2 else np.nan for row in rows]
    return FailureLog(np.array(times, dtype=float), np.array(nodes), np.array(repairs, dtype=float))


def trace(record):
    """(job_id, started_at, finished_at, kills) of every job, by job id."""
    table = record.jobs.sort_values("job_id")
    return [(int(r.job_id), r.started_at, r.finished_at, int(r.kills)) for r in table.itertuples()]


def test_fcfs_second_job_waits_for_the_whole_machine_and_metrics_follow():
    workload = make_workload([(1, 0, 100, 100, 128), (2, 10, 50, 50, 1)])
    record = torus_model(workload).run()
    assert trace(record) == [(1, 0, 100, 0), (2, 100, 150, 0)]
    summary = summarize(record)
    assert summary["avg_wait_time"] == pytest.approx((0 + 90) / 2)
    assert summary["avg_response_time"] == pytest.approx((100 + 140) / 2)
    assert summary["avg_bounded_slowdown"] == pytest.approx((1 + 140 / 50) / 2)
    assert summary["makespan"] == 150
    assert summary["omega_util"] == pytest.approx((128 * 100 + 1 * 50) / (150 * 128))
    assert summary["omega_unused"] == pytest.approx(127 * 50 / (150 * 128))
    assert summary["omega_lost"] == pytest.approx(0, abs=1e-12)


def test_backfilled_job_ends_before_the_head_reservation_and_a_long_one_waits():
    rows = [(1, 0, 100, 100, 64), (2, 1, 10, 10, 128), (3, 2, 50, 50, 32), (4, 3, 200, 200, 32)]
    record = torus_model(make_workload(rows)).run()
    # J2 (whole machine) reserves t=100; J3 ends at 52 < 100 so it backfills; J4 would delay J2.
    assert trace(record) == [(1, 0, 100, 0), (2, 100, 110, 0), (3, 2, 52, 0), (4, 110, 310, 0)]


def test_without_backfilling_later_jobs_wait_behind_the_head():
    rows = [(1, 0, 100, 100, 64), (2, 1, 10, 10, 128), (3, 2, 50, 50, 32), (4, 3, 200, 200, 32)]
    record = torus_model(make_workload(rows), scheduler=KrevatScheduler(backfill=False)).run()
    assert trace(record) == [(1, 0, 100, 0), (2, 100, 110, 0), (3, 110, 160, 0), (4, 110, 310, 0)]


def test_backfilling_uses_the_geometry_a_long_job_may_start_where_it_leaves_the_head_a_box():
    # J2 needs 96 = 4x4x6 at t=100. J3 (32, long) may start now only as a 4x4x2 slab beside J1's
    # half, so that a 96-box stays free for J2 at its reservation.
    rows = [(1, 0, 100, 100, 64), (2, 1, 10, 10, 96), (3, 2, 500, 500, 32)]
    model = torus_model(make_workload(rows))
    record = model.run()
    assert trace(record) == [(1, 0, 100, 0), (2, 100, 110, 0), (3, 2, 502, 0)]


def test_failed_job_restarts_from_scratch_at_its_fcfs_position_when_the_failure_is_transient():
    workload = make_workload([(1, 0, 100, 100, 128)])
    model = torus_model(workload, failures((40, 5), (200, 7)))
    record = model.run()
    assert trace(record) == [(1, 40, 140, 1)]
    assert record.jobs["lost_work"].tolist() == [40 * 128]
    summary = summarize(record)
    assert summary["job_kills"] == 1 and summary["failures"] == 1  # the t=200 failure lies after the last job
    assert summary["avg_bounded_slowdown"] == pytest.approx(1.4)
    assert summary["omega_util"] == pytest.approx(100 / 140)
    assert summary["omega_unused"] == pytest.approx(0)
    assert summary["omega_lost"] == pytest.approx(40 / 140)
    assert record.failures[["time", "node", "killed_job"]].values.tolist() == [[40, 5, 1]]
    assert model.counters["events_after_last_job"] == 1
    assert model.node_agents[5].failed_at == [40] and model.node_agents[5].jobs_killed == [1]


def test_a_killed_job_keeps_its_fcfs_position_ahead_of_later_arrivals():
    rows = [(1, 0, 100, 100, 128), (2, 50, 10, 10, 128)]
    record = torus_model(make_workload(rows), failures((40, 0))).run()
    assert trace(record) == [(1, 40, 140, 1), (2, 140, 150, 0)]


def test_downtime_keeps_the_supernode_down_and_a_short_job_backfills_before_the_repair():
    rows = [(1, 0, 100, 100, 128), (2, 45, 10, 10, 64)]
    model = torus_model(make_workload(rows), failures((40, 5)), downtime=30.0)
    record = model.run()
    # J1 is killed at 40; supernode 5 is down until 70, which is J1's reservation; J2 ends by 55.
    assert trace(record) == [(1, 70, 170, 1), (2, 45, 55, 0)]
    assert model.node_agents[5].downtime == 30.0


def test_log_downtime_uses_the_repair_time_of_the_failure_log():
    model = torus_model(make_workload([(1, 0, 100, 100, 128)]), failures((40, 5, 55)), downtime="log")
    assert trace(model.run()) == [(1, 55, 155, 1)]


def test_same_instant_failure_runs_before_job_end_so_the_job_is_killed():
    assert EventPriority.REPAIR < EventPriority.FAILURE < EventPriority.JOB_END < EventPriority.ARRIVAL < EventPriority.SCHEDULE
    record = torus_model(make_workload([(1, 0, 100, 100, 128)]), failures((100, 0))).run()
    assert trace(record) == [(1, 100, 200, 1)]


def migration_workload():
    # Ring of 4: A, B, C, D take one supernode each; B and D end at 10 leaving two holes
    # {1} and {3}: E (size 2) fits only if A and C move together.
    rows = [(1, 0, 100, 100, 1), (2, 0, 10, 10, 1), (3, 0, 100, 100, 1), (4, 0, 10, 10, 1), (5, 5, 50, 50, 2)]
    return make_workload(rows, dims=(1, 1, 4))


def test_migration_compacts_the_torus_so_the_head_starts_at_once():
    model = torus_model(migration_workload(), torus=ring(4))
    record = model.run()
    assert trace(record) == [(1, 0, 100, 0), (2, 0, 10, 0), (3, 0, 100, 0), (4, 0, 10, 0), (5, 10, 60, 0)]
    assert model.counters["migrations"] == 2 and model.counters["repacks"] == 1


def test_migration_cost_delays_the_moved_jobs():
    model = torus_model(migration_workload(), scheduler=KrevatScheduler(migration_cost=5.0), torus=ring(4))
    record = model.run()
    assert trace(record) == [(1, 0, 105, 0), (2, 0, 10, 0), (3, 0, 105, 0), (4, 0, 10, 0), (5, 10, 60, 0)]


def test_without_migration_the_head_waits_for_a_contiguous_box():
    model = torus_model(migration_workload(), scheduler=KrevatScheduler(migration=False), torus=ring(4))
    assert trace(model.run())[-1] == (5, 100, 150, 0)


def test_every_scheduled_event_fires_or_is_accounted_for():
    rows = [(i, i * 7.0, 30.0 + i, 40.0 + i, 1 + (i * 13) % 64) for i in range(1, 40)]
    model = torus_model(make_workload(rows), failures((20, 3), (50, 64), (51, 64), (90, 100)), downtime=15.0)
    model.run()
    counters = model.counters
    assert (
        counters["events_scheduled"] == counters["events_run"] + counters["events_cancelled"] + counters["events_after_last_job"]
    )
    assert counters["failures"] == 4
    assert counters["job_starts"] == 39 + counters["job_kills"]


def test_same_seed_gives_identical_results_and_another_seed_other_synthetic_failures():
    from failure_logs.synthetic import SyntheticFailures

    rows = [(i, i * 50.0, 300.0 + 17 * i, 400.0 + 17 * i, 1 + (i * 29) % 100) for i in range(1, 80)]
    runs = [torus_model(make_workload(rows), SyntheticFailures(40), seed=seed).run() for seed in (1, 1, 2)]
    assert runs[0].jobs.equals(runs[1].jobs) and runs[0].failures.equals(runs[1].failures)
    assert not runs[0].failures.equals(runs[2].failures)
