"""The jobs started past each head (fairness columns, issue 32) against the plain filter they replace."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from torus_sim.engine.passed_jobs import PassedJobs


class _Job:
    def __init__(self, job_id: int, nodes: int) -> None:
        self.job_id = self.rank = job_id
        self.allocated_size = nodes


class _PlainFilter:
    """The engine's filter before issue 32: every job in the head's list looked at in every pass, stale ones dropped."""

    def __init__(self) -> None:
        self.last: dict[int, tuple[int, float]] = {}
        self.by_head: dict[int, dict[int, _Job]] = {}

    def passed(self, job, head_id: int, end: float) -> None:
        self.last[job.job_id] = (head_id, end)
        self.by_head.setdefault(head_id, {})[job.job_id] = job

    def counting(self, head, running: dict) -> list:
        by_head = self.by_head.get(head.job_id)
        if not by_head:
            return []
        passed = [
            job
            for job_id, job in by_head.items()
            if job_id in running and job.rank > head.rank and self.last[job_id][0] == head.job_id
        ]
        if len(passed) < len(by_head):
            self.by_head[head.job_id] = {job.job_id: job for job in passed}
        return passed


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(1, 64), min_size=3, max_size=8),
    st.lists(
        st.tuples(st.sampled_from(["pass", "stop", "complete", "restart", "look"]), st.integers(0, 99), st.integers(0, 99)),
        min_size=20,
        max_size=200,
    ),
)
def test_the_jobs_counted_for_a_head_are_the_plain_filters(sizes, moves):
    """Starts past any head (again past the same one, then past another), kills and restarts as the head, completions;
    at every look the jobs counted for a head and their node sum are the plain filter's."""
    jobs = [_Job(index, nodes) for index, nodes in enumerate(sizes)]
    kept, plain = PassedJobs(), _PlainFilter()
    running: dict[int, _Job] = {}
    done: set[int] = set()
    for what, first, second in moves:
        job, other = jobs[first % len(jobs)], jobs[second % len(jobs)]
        waiting = job.job_id not in running and job.job_id not in done
        if what == "pass" and waiting and other is not job and other.job_id not in running and other.job_id not in done:
            running[job.job_id] = job
            kept.passed(job, other.job_id, float(second))
            plain.passed(job, other.job_id, float(second))
        elif what in ("stop", "complete") and job.job_id in running:
            del running[job.job_id]
            kept.stopped(job)
            if what == "complete":
                done.add(job.job_id)
                kept.completed(job)
                plain.last.pop(job.job_id, None)
        elif what == "restart" and waiting:
            running[job.job_id] = job  # started as the head: no pass recorded
        elif what == "look" and waiting:
            counting, nodes = kept.counting(job, running)
            expected = plain.counting(job, running)
            assert sorted(counting) == sorted(passed.job_id for passed in expected)
            assert nodes == sum(passed.allocated_size for passed in expected)
            assert all(kept.last[job_id] == plain.last[job_id] for job_id in counting)
