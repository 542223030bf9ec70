"""Jobs started past each head, for the fairness columns: kept per head so a pass does not walk them all.

PV-EASY §3.2 asks, after every pass, whether the first waiting job (the head) could have started had
the jobs backfilled past it not been running. On RICC-2010-2 a head can wait for days while
thousands of one-processor jobs pass it, and listing them again at every pass was the largest cost
of an online pass after the backfill scan itself. Here each head keeps the jobs that count for it
(running, of lower priority, and whose last passed head it is) with their node sum, and only the
jobs whose state changed since the head's last pass (a start past a head, a stop) are looked at again.

A job counts for head ``h`` when it is in ``h``'s list, is running, has a greater rank than ``h`` and
``h`` is the last head it passed; a job that no longer counts when ``h``'s pass looks at it leaves
the list (it can count again only by passing ``h`` again), as the plain filter did.

References:
    PV-EASY §3.1 (the head's readiness), §3.2 and Fig. 1c (backfilled jobs that delay the head).
"""

from __future__ import annotations

__all__ = ["PassedJobs"]

_NONE = (None, None)


class PassedJobs:
    """For each head (by job id), the running jobs started past it, with their node sum.

    Attributes:
        last: job id -> ``(head id, predicted end at the start)``: the last head the job passed and
            when the scheduler expected it to end then (seconds).
    """

    __slots__ = ("_counting", "_members", "_suspects", "_sums", "last")

    def __init__(self) -> None:
        self.last: dict[int, tuple[int, float]] = {}
        self._members: dict[int, dict[int, object]] = {}  # head id -> jobs started past it (some stale until its pass)
        self._counting: dict[int, dict[int, tuple[object, int]]] = {}  # head id -> job id -> (job, nodes) that count
        self._sums: dict[int, int] = {}  # head id -> nodes of the jobs that count
        self._suspects: dict[int, dict[int, object]] = {}  # head id -> jobs to look at again at its next pass

    def _suspect(self, head_id: int, job) -> None:
        self._suspects.setdefault(head_id, {})[job.job_id] = job

    def passed(self, job, head_id: int, predicted_end: float) -> None:
        """``job`` started past the head ``head_id``, expected to end at ``predicted_end`` (seconds)."""
        job_id = job.job_id  # it stopped running before (stopped() named it to the head it passed before)
        self.last[job_id] = (head_id, predicted_end)
        self._members.setdefault(head_id, {})[job_id] = job
        self._suspect(head_id, job)

    def stopped(self, job) -> None:
        """``job`` left the running set (an end, a kill, a preemption)."""
        entry = self.last.get(job.job_id)
        if entry is not None and entry[0] in self._members:  # a completed head's lists are gone for good
            self._suspect(entry[0], job)

    def completed(self, job) -> None:
        """``job`` completed: it never counts again (after :meth:`stopped`), and is never a head again.

        What it kept as a head (the jobs that passed it) is dropped: the lists follow the queue and the
        running set, not the log (a RICC replay kept ~35k completed jobs alive through them).
        """
        job_id = job.job_id
        self.last.pop(job_id, None)
        for kept in (self._members, self._counting, self._sums, self._suspects):
            kept.pop(job_id, None)

    def counting(self, head, running: dict) -> tuple[dict[int, tuple[object, int]], int]:
        """The jobs that count for ``head`` now, and their nodes.

        Args:
            head: the first waiting job.
            running: the running jobs by job id.

        Returns:
            (job id -> (job, nodes), total nodes); the dict is this object's own: read it before
            the next call. Its order is not the plain filter's (the columns only sum or vacate them).
        """
        head_id = head.job_id
        counting = self._counting.get(head_id)
        if counting is None:
            counting = self._counting[head_id] = {}
        total = self._sums.get(head_id, 0)
        suspects = self._suspects.pop(head_id, None)
        if suspects:
            members = self._members.get(head_id, {})
            rank, last = head.rank, self.last
            for job_id, job in suspects.items():
                kept = counting.pop(job_id, None)
                if kept is not None:
                    total -= kept[1]
                if job_id in members and job_id in running and job.rank > rank and last.get(job_id, _NONE)[0] == head_id:
                    nodes = job.allocated_size
                    counting[job_id] = (job, nodes)
                    total += nodes
                else:
                    members.pop(job_id, None)
            self._sums[head_id] = total
        return counting, total
