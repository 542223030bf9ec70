"""The scheduling cycle (issue 77 §1): the pass asked by an event runs at most once per ``sched_min_interval``."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from torus_sim.core.errors import ConfigurationError
from torus_sim.core.job import Job
from torus_sim.engine.model import SchedulingModel
from torus_sim.experiments.runner import Scenario, build_model
from torus_sim.experiments.sweep import run_key
from torus_sim.inputs.workload.jobs import Workload
from torus_sim.inputs.workload.sources import BUNDLED_NASA_LOG
from torus_sim.policies.easy import EasyPolicy
from torus_sim.policies.rigid import ListPolicy


def _starts(jobs: list[Job], nodes: int, interval: float | None) -> dict[int, float]:
    model = SchedulingModel(Workload(jobs=jobs, source="hand-made"), EasyPolicy(), nodes, sched_min_interval=interval)
    return model.run().jobs.set_index("job_id")["started_at"].to_dict()


def test_a_pass_waits_for_the_cycle_and_a_free_machine_waits_for_the_pass():
    # A fills the machine at 0; B arrives at 10 (the pass asked comes at 60: B does not fit); A ends at 100 (the pass
    # comes at 120, 60 s after the last); C arrives at 500 on a free machine, long after the last pass: at once
    jobs = [Job(1, 0.0, runtime=100.0, walltime=100.0, size=4), Job(2, 10.0, runtime=10.0, walltime=10.0, size=4)]
    jobs.append(Job(3, 500.0, runtime=10.0, walltime=10.0, size=1))
    assert _starts(jobs, 4, None) == {1: 0.0, 2: 100.0, 3: 500.0}
    assert _starts(jobs, 4, 60.0) == {1: 0.0, 2: 120.0, 3: 500.0}


@settings(max_examples=60, deadline=None)
@given(
    submits=st.lists(st.integers(0, 400), min_size=1, max_size=25),
    sizes=st.lists(st.integers(1, 4), min_size=25, max_size=25),
    runtimes=st.lists(st.integers(1, 120), min_size=25, max_size=25),
    interval=st.sampled_from([5.0, 30.0, 90.0]),
)
def test_passes_are_at_least_the_interval_apart_and_no_job_starts_earlier_than_without_a_cycle(
    submits, sizes, runtimes, interval
):
    jobs = [
        Job(index + 1, float(at), runtime=float(runtimes[index]), walltime=float(runtimes[index]), size=sizes[index])
        for index, at in enumerate(sorted(submits))
    ]
    model = SchedulingModel(Workload(jobs=[job for job in jobs], source="drawn"), EasyPolicy(), 4, sched_min_interval=interval)
    record = model.run()
    times = record.capacity["time"].to_numpy()
    assert (times[1:] - times[:-1] >= interval - 1e-9).all()  # one row per pass
    starts = record.jobs.set_index("job_id")["started_at"]
    assert set(starts.round(9)) <= set(times.round(9))  # every start is a pass's
    assert len(starts) == len(jobs)


def test_the_cycle_is_a_scenario_field_that_leaves_earlier_keys_unset_and_changes_them_set():
    plain = Scenario(workload=str(BUNDLED_NASA_LOG), platform="cluster", policy="FCFS-EASY", max_jobs=300)
    cycled = plain.replace(sched_min_interval=60)
    assert run_key(plain) != run_key(cycled)
    assert plain.sched_min_interval is None  # off by default: every output of today stays as it is
    first, second = build_model(plain, {}).run(), build_model(cycled, {}).run()
    waits, cycled_waits = (
        first.jobs["started_at"] - first.jobs["submitted_at"],
        second.jobs["started_at"] - second.jobs["submitted_at"],
    )
    assert (cycled_waits == 0).mean() < (waits == 0).mean()  # jobs that found the machine free wait for the cycle
    with pytest.raises(ConfigurationError, match="sched_min_interval"):
        Scenario.make(workload="bundled", sched_min_interval=0)


def test_the_cycle_is_refused_with_a_pass_after_each_event_or_each_end():
    jobs = [Job(1, 0.0, runtime=1.0, walltime=1.0, size=1)]
    with pytest.raises(ConfigurationError, match="event_order"):
        SchedulingModel(Workload(jobs=jobs, source="one"), EasyPolicy(), 4, sched_min_interval=30.0, event_order="each-event")
    with pytest.raises(ConfigurationError, match="plans after each attempt end"):
        SchedulingModel(Workload(jobs=jobs, source="one", kind="batch"), ListPolicy(), 4, sched_min_interval=30.0)
    with pytest.raises(ConfigurationError, match="positive seconds"):
        SchedulingModel(Workload(jobs=jobs, source="one"), EasyPolicy(), 4, sched_min_interval=-1.0)
