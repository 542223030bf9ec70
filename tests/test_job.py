import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from torus_sim.core.errors import JobStateError
from torus_sim.core.job import Job, JobState
from torus_sim.engine.progress import CheckpointProgress
from torus_sim.engine.wait_queue import WaitQueue


def test_job_life_cycle_transitions_are_guarded_and_name_the_current_state():
    job = Job(7, submitted_at=0, runtime=100, walltime=120, size=4)
    with pytest.raises(JobStateError, match="job 7 cannot start: it is PENDING"):
        job.start(0, allocation=1)
    job.arrive()
    job.start(10, allocation=1)
    assert job.estimated_end(50) == 130 and job.remaining_runtime(50) == 60
    with pytest.raises(JobStateError, match="it is RUNNING"):
        job.arrive()
    assert job.kill(50) == 40 * 4
    assert job.state is JobState.QUEUED and job.kills == 1
    job.start(60, allocation=2)
    job.migrate(80, allocation=3, cost=5)
    # 20 s of work done by t = 80; the move costs 5 s before the remaining 80 s of work
    assert job.remaining_runtime(80) == 80 and job.end_at() == 165 and job.migrations == 1 and job.started_at == 60
    job.finish(165)
    assert job.state is JobState.COMPLETED
    with pytest.raises(JobStateError):
        job.kill(170)


def test_estimated_end_of_an_overdue_job_is_now():
    job = Job(1, 0, runtime=100, walltime=50, size=1)
    job.arrive()
    job.start(0, 0)
    assert job.estimated_end(70) == 70


def test_wait_queue_keeps_fcfs_order_by_size_and_the_total_demand():
    queue = WaitQueue()
    jobs = [Job(i, submitted_at=t, runtime=1, walltime=1, size=s) for i, t, s in [(1, 5, 2), (2, 1, 4), (3, 3, 2), (4, 3, 1)]]
    for job in jobs:
        queue.add(job)
    assert [job.job_id for job in queue] == [2, 3, 4, 1]
    assert [job.job_id for job in queue.of_size(2)] == [3, 1]
    assert queue.sizes() == [1, 2, 4] and queue.demand == 9 and queue.head.job_id == 2
    queue.remove(jobs[2])
    assert [job.job_id for job in queue] == [2, 4, 1] and queue.demand == 7
    with pytest.raises(Exception, match="not in the wait queue"):
        queue.remove(jobs[2])


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_wait_queue_least_walltime_per_size_follows_adds_bulk_adds_and_removes(seed):
    """least_walltime(s) is the plain minimum over of_size(s) (inf when none waits) after every change."""
    rng = np.random.default_rng(seed)
    queue = WaitQueue()
    walltimes = [float(w) for w in rng.choice([10.0, 50.0, 50.0, 300.0, 3600.0], size=40)]
    jobs = [
        Job(i, float(rng.integers(0, 20)), runtime=1, walltime=walltimes[i], size=int(rng.choice([1, 2, 4]))) for i in range(40)
    ]
    waiting: list[Job] = []
    first = jobs[:10]
    queue.extend(first)  # the bulk path: the queue is empty and 8 jobs or more come at once
    waiting.extend(first)
    for job in jobs[10:]:
        if waiting and rng.random() < 0.4:
            leaving = waiting.pop(int(rng.integers(len(waiting))))
            queue.remove(leaving)
        queue.add(job)
        waiting.append(job)
        for size in (1, 2, 4, 8):
            same = [waiting_job.walltime for waiting_job in waiting if waiting_job.partition_size == size]
            assert queue.least_walltime(size) == (min(same) if same else math.inf)
            assert sorted(job.walltime for job in queue.of_size(size)) == sorted(same)


def test_periodic_checkpoints_bound_the_lost_work_and_add_their_cost_to_the_run():
    job = Job(1, 0, runtime=100, walltime=100, size=2)
    job.checkpoint_interval, job.checkpoint_cost = 30.0, 2.0
    job.arrive()
    job.start(0, 0, recovery=5.0)  # nothing saved yet: no recovery
    assert job.end_at() == 100 + 3 * 2  # checkpoints after 30, 60 and 90 s of work
    # t = 70: two cycles of 32 s done (60 s of work saved), 6 s into the third
    assert job.progress(70) == 66 and job._saved(70) == 60
    assert job.kill(70) == (66 - 60) * 2
    assert job.saved_work == 60
    job.start(80, 1, recovery=5.0)  # restarts from the checkpoint, paying R = 5 s
    assert job.progress(85) == 60 and job.progress(95) == 70
    assert job.end_at() == 80 + 5 + 40 + 1 * 2  # one checkpoint (after 30 s) before the last 10 s


def test_a_preventive_checkpoint_before_a_predicted_failure_saves_the_work_up_to_it():
    job = Job(1, 0, runtime=100, walltime=100, size=1)
    job.arrive()
    job.start(0, 0)
    assert job.kill(50, preventive_checkpoint=3.0) == 3.0  # only the work during the checkpoint is lost
    assert job.saved_work == 47
    job.start(60, 1, recovery=4.0)
    assert job.end_at() == 60 + 4 + 53


RUNNING_JOB = {  # a started job: start time, restart overhead, saved work, walltime, time since start (seconds)
    "started": st.floats(0, 1e6),
    "overhead": st.sampled_from([0.0, 30.0]),
    "saved": st.floats(0, 500),
    "walltime": st.floats(600, 5e4),
    "elapsed": st.floats(0, 1e5),
}


def running_job(started, overhead, saved, walltime, interval=None, cost=0.0) -> Job:
    """A 4-node job of 500 s run time started at ``started`` with ``saved`` work and a restart ``overhead`` (seconds)."""
    job = Job(1, 0.0, 500.0, walltime, 4)
    job.arrive()
    job.saved_work = saved
    job.checkpoint_interval, job.checkpoint_cost = interval, cost
    job.start(started, allocation=4, size=4, recovery=overhead)
    return job


@settings(max_examples=200, deadline=None)
@given(**RUNNING_JOB, prediction=st.one_of(st.none(), st.floats(1, 1e5)))
def test_predicted_end_without_checkpoints_is_the_jobs_own_estimate(started, overhead, saved, walltime, prediction, elapsed):
    # CheckpointProgress.predicted_end inlines Job.estimated_end for jobs without checkpoint costs:
    # the same number, bit for bit, as the job's own estimate (prediction first, walltime when past it)
    job = running_job(started, overhead, saved, walltime)
    job.prediction = prediction
    now = started + elapsed
    if prediction is None or prediction >= walltime:
        expected = job.estimated_end(now)
    else:
        expected = job.estimated_end(-math.inf, prediction)
        if expected <= now:
            expected = job.estimated_end(now)
    assert CheckpointProgress().predicted_end(job, now) == expected


@settings(max_examples=200, deadline=None)
@given(**RUNNING_JOB, interval=st.one_of(st.none(), st.floats(50, 5e3)))
def test_krevats_walltime_ends_are_the_jobs_own_estimates_bit_for_bit(started, overhead, saved, walltime, elapsed, interval):
    from torus_sim.policies.krevat import walltime_ends

    job = running_job(started, overhead, saved, walltime, interval, 0.0 if interval is None else 20.0)
    now = started + elapsed
    assert walltime_ends([job], now)[job] == job.estimated_end(now)
