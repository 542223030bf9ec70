"""RLScheduler's protocol (issue 43 §4): its windows, its heuristics, job for job against its own simulator's outputs."""

from __future__ import annotations

import csv
import hashlib
from pathlib import Path

import pytest

from torus_sim.core.errors import ConfigurationError
from torus_sim.core.job import Job
from torus_sim.engine.model import SchedulingModel
from torus_sim.inputs.workload.jobs import Workload
from torus_sim.policies.easy import EasyPolicy
from torus_sim.policies.priority import PriorityPolicy
from torus_sim.rl.rlscheduler import HEURISTICS, PUBLISHED, TRACES, _workload, run_window, window_starts

from .conftest import SHARED_DATA

PEER = Path(__file__).parent / "peers" / "rlscheduler" / "schedules.csv"
ROWS = list(csv.DictReader(PEER.open()))


def _digest(table) -> str:
    starts = sorted(zip(table["job_id"].astype(int).tolist(), table["first_started_at"].tolist(), strict=True))
    return hashlib.sha256("\n".join(f"{job_id}:{float(start)!r}" for job_id, start in starts).encode()).hexdigest()


def test_the_legacy_gym_generator_draws_rlschedulers_windows():
    for trace in TRACES:
        peer = [
            int(row["window_start"])
            for row in ROWS
            if row["trace"] == trace and row["heuristic"] == "FCFS" and row["backfilling"] == "0"
        ]
        assert window_starts(59_705) == peer == [1981, 2756, 4299, 8850, 3316, 2714, 5228, 7762, 4022, 7085]


@pytest.mark.parametrize("trace", list(TRACES))
def test_every_start_of_every_window_equals_rlschedulers_and_the_table_is_the_published_one(trace):
    path = SHARED_DATA / "swf" / TRACES[trace]
    if not path.exists():
        pytest.skip(f"needs {path}")
    scenario, workload, nodes = _workload(str(path))
    rows = [row for row in ROWS if row["trace"] == trace]
    assert len(rows) == 100
    means: dict[tuple[bool, str], list[float]] = {}
    for row in rows:
        backfill = row["backfilling"] == "1"
        mean, table = run_window(scenario, workload, nodes, int(row["window_start"]), row["heuristic"].lower(), backfill)
        assert len(table) == int(row["jobs"])
        assert _digest(table) == row["starts_sha256"], row  # every job of the window starts at the same second
        assert mean == pytest.approx(float(row["mean_bounded_slowdown"]), rel=1e-12)
        means.setdefault((backfill, row["heuristic"]), []).append(mean)
    for backfill in (False, True):
        ours = [round(sum(means[(backfill, name)]) / 10, 2) for name in HEURISTICS]
        assert tuple(ours) == PUBLISHED[(trace, backfill)]


def _model(rows, nodes, policy, event_order="each-event-submissions-first"):
    """Jobs (id, submit, runtime, walltime, size) on a count cluster; the finished record's first starts by id."""
    jobs = [Job(job_id, submit, runtime, walltime, size) for job_id, submit, runtime, walltime, size in rows]
    workload = Workload(jobs, "hand-made", kind="online")
    record = SchedulingModel(workload, policy, nodes, None, event_order=event_order).run()
    return dict(zip(record.jobs["job_id"].tolist(), record.jobs["first_started_at"].tolist(), strict=True))


def test_a_committed_job_is_not_overtaken_by_a_better_scored_arrival():
    # B (4 nodes) is picked while A runs; C, shorter, arrives later: SJF still waits for B (RLScheduler's loop)
    rows = [(1, 0.0, 100.0, 100.0, 4), (2, 1.0, 1000.0, 1000.0, 4), (3, 2.0, 10.0, 10.0, 1)]
    assert _model(rows, 4, PriorityPolicy("sjf")) == {1: 0.0, 2: 100.0, 3: 1100.0}


def test_rlschedulers_backfilling_has_no_extra_nodes_rule_unlike_easy():
    # A holds 6 of 8 nodes until 100; B (4) is blocked with shadow 100, where 4 nodes are extra.
    # C (1 node, 10 s) ends before the shadow: backfilled at 2. D (2 nodes, 1000 s, fits once C ends at 12)
    # does not end before it: RLScheduler waits for B, EASY starts D at 12 on the extra nodes.
    rows = [(1, 0.0, 100.0, 100.0, 6), (2, 1.0, 50.0, 50.0, 4), (3, 2.0, 10.0, 10.0, 1), (4, 3.0, 1000.0, 1000.0, 2)]
    assert _model(rows, 8, PriorityPolicy("fcfs", "rlscheduler")) == {1: 0.0, 2: 100.0, 3: 2.0, 4: 100.0}
    easy = _model(rows, 8, EasyPolicy("fcfs"), event_order="instant")
    assert easy[3] == 2.0 and easy[4] == 12.0
    assert _model(rows, 8, PriorityPolicy("fcfs")) == {1: 0.0, 2: 100.0, 3: 100.0, 4: 100.0}


def test_submissions_first_lets_an_arrival_backfill_before_an_end_at_the_same_instant():
    # A (4 of 5 nodes) ends at 50 (requested 100) when C (1 node, 10 s) arrives; B (5 nodes) is committed
    rows = [(1, 0.0, 50.0, 100.0, 4), (2, 10.0, 100.0, 100.0, 5), (3, 50.0, 10.0, 10.0, 1)]
    policy = lambda: PriorityPolicy("fcfs", "rlscheduler")  # noqa: E731
    assert _model(rows, 5, policy()) == {1: 0.0, 2: 60.0, 3: 50.0}  # C backfilled first, B after it
    assert _model(rows, 5, policy(), event_order="each-event") == {1: 0.0, 2: 50.0, 3: 150.0}


def test_wfp3_and_unicep_read_the_wait_as_published_or_as_rlschedulers_code_does():
    job = Job(7, 1000.0, 50.0, 100.0, 8)
    now = 1300.0  # waited 300 s
    assert PriorityPolicy("wfp3").score(job, now) == pytest.approx(-((300 / 100) ** 3) * 8)
    assert PriorityPolicy("wfp3", wait="rlscheduler").score(job, now) == pytest.approx(-((-1001 / 100) ** 3) * 8)
    assert PriorityPolicy("unicep").score(job, now) == pytest.approx(-300 / (3 * 100))
    assert PriorityPolicy("f1").score(job, now) == pytest.approx(2 * 8 + 870 * 3)


def test_bad_settings_and_platforms_are_sentences():
    with pytest.raises(ConfigurationError, match="order must be one of fcfs, sjf, wfp3, unicep, f1"):
        PriorityPolicy("f2")
    with pytest.raises(ConfigurationError, match="backfill must be one of none, rlscheduler, easy"):
        PriorityPolicy("fcfs", backfill="conservative")
    with pytest.raises(ConfigurationError, match="runs on cluster platforms, not on a torus"):
        SchedulingModel(Workload([Job(1, 0.0, 1.0, 1.0, 1)], "one", kind="online"), PriorityPolicy(), None)
