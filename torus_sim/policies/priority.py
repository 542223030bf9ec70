"""Greedy priority scheduling: the field's priority functions as queue orders, as RLScheduler runs them.

:class:`PriorityPolicy` picks the waiting job with the best score of its ``order`` and commits to it:
it starts when it fits; until then nothing else starts (``backfill="none"``) or RLScheduler's
backfilling starts others around it (``backfill="rlscheduler"``). After a start the next job is
picked at the same instant. This is the scheduling loop of RLScheduler's simulator (Zhang et al.,
SC'20, §4 and its public code DIR-LAB/deep-batch-scheduler, ``HPCSimPickJobs.py``:
``schedule_curr_sequence_reset``), on the same engine as every other policy here.

Orders (:data:`ORDERS`; smaller score first, the job's rank breaking ties), with s the submit time
(the log's clock), r the requested time (walltime), n the size and w the time waited:

* ``fcfs``: s.
* ``sjf``: (r, s), shortest requested time first.
* ``wfp3``: -(w / r)^3 x n (Tang et al., "Fault-aware, utility-based job scheduling on Blue Gene/P
  systems", CLUSTER'09 / IPDPS'09: WFP3).
* ``unicep``: -w / (log2(n) x r) (Tang et al., ibid.: UNICEP).
* ``f1``: log10(r) x n + 870 x log10(s) (Carastan-Santos & de Camargo, "Obtaining dynamic scheduling
  policies with simulation and machine learning", SC'17: F1).

A requested time or submit time that is not positive counts as 0.1 s in F1's logarithms (as RLScheduler's
F1); a requested time of 0 counts as 0.1 s in WFP3's and UNICEP's ratios (RLScheduler's would divide by
zero), a negative one (an unknown requested time of a job whose runtime is unknown too, under the
``rlscheduler`` SWF rules) as it is.

``wait``: ``actual`` (w = now - s, the published definitions) or ``rlscheduler``: w = -1 - s, what
RLScheduler's code computes (``job.scheduled_time - job.submit_time`` with ``scheduled_time`` still
-1 for a waiting job), so that its published WFP3 and UNICEP columns can be reproduced (docs/rl).

``backfill="rlscheduler"`` (``moveforward_for_resources_backfill_greedy``): when the committed job does
not fit, its shadow time is the predicted end (start + requested time) of the running job whose
nodes, with the free ones, first cover it, computed once; at that pass and at every later one until
it starts, the other waiting jobs are scanned in FCFS order and each that fits and has
now + r < shadow starts. There is no extra-nodes rule (EASY's second condition), so it differs from
FCFS-EASY.

References:
    Zhang et al., SC'20 (RLScheduler); Tang et al. 2009 (WFP3, UNICEP); Carastan-Santos & de Camargo,
    SC'17 (F1); Lifka 1995 and Mu'alem & Feitelson, IEEE TPDS 2001 (EASY, for the difference).
"""

from __future__ import annotations

import numpy as np

from torus_sim.core.errors import ConfigurationError
from torus_sim.policies.backfilling import backfill_around
from torus_sim.policies.base import Policy, Start

__all__ = ["BACKFILLING", "ORDERS", "WAIT_READINGS", "PriorityPolicy"]

ORDERS = ("fcfs", "sjf", "wfp3", "unicep", "f1")
"""The queue orders :class:`PriorityPolicy` offers."""

WAIT_READINGS = ("actual", "rlscheduler")
"""How WFP3 and UNICEP read the time waited: the real one, or RLScheduler's code's -1 - s."""

BACKFILLING = ("none", "rlscheduler", "easy")
"""No backfilling; RLScheduler's (shadow of the committed job, FCFS candidates, no extra nodes); or EASY's
around the committed job (FCFS candidates that end by its shadow time or leave it its nodes then)."""

_TINY = 0.1


def _positive(value: float) -> float:
    return value if value > 0 else _TINY


class PriorityPolicy(Policy):
    """Commit to the best-scored waiting job, start it when it fits; optionally backfill around it.

    Args:
        order: one of :data:`ORDERS`.
        backfill: one of :data:`BACKFILLING`.
        wait: one of :data:`WAIT_READINGS` (only WFP3 and UNICEP read it).
        placement: which nodes a job gets (lowest free ids when None).

    Raises:
        ConfigurationError: an order, backfilling or wait reading not offered (the choices named).

    References:
        See the module docstring.
    """

    platforms = ("cluster",)
    workloads = ("online",)

    def __init__(self, order: str = "fcfs", backfill: str = "none", wait: str = "actual", placement=None) -> None:
        for what, value, choices in (
            ("order", order, ORDERS),
            ("backfill", backfill, BACKFILLING),
            ("wait", wait, WAIT_READINGS),
        ):
            if not isinstance(value, str) or value not in choices:
                raise ConfigurationError(f"greedy policy: {what} must be one of {', '.join(choices)}; got {value!r}")
        self.order, self.backfill, self.wait = order, backfill, wait
        self.placement = placement
        self.name = f"greedy-{order}" + ("-bf" if backfill != "none" else "")
        self._committed = None  # the job picked and not started yet
        self._shadow: tuple | None = None  # (job, its shadow time) while it is blocked (backfill="rlscheduler")

    def settings(self) -> str:
        """Order, backfilling and wait reading in words (a run's header)."""
        reading = f", wait read as {self.wait}" if self.order in ("wfp3", "unicep") else ""
        return f"order {self.order}, backfilling {self.backfill}{reading}"

    def score(self, job, now: float):
        """The job's score at ``now`` (smaller first), without the rank tie-break.

        Args:
            job: a waiting job (submit time and walltime in seconds, size in nodes).
            now: the time, seconds (WFP3 and UNICEP read the wait from it when ``wait="actual"``).

        Returns:
            A float, or a (walltime, submit time) pair for ``sjf`` (module docstring's formulas).
        """
        order = self.order
        if order == "fcfs":
            return job.submitted_at
        if order == "sjf":
            return (job.walltime, job.submitted_at)
        if order == "f1":
            return float(np.log10(_positive(job.walltime)) * job.size + 870 * np.log10(_positive(job.submitted_at)))
        r = job.walltime if job.walltime != 0 else _TINY
        waited = now - job.submitted_at if self.wait == "actual" else -1.0 - job.submitted_at
        if order == "wfp3":
            return float(-np.power(waited / r, 3) * job.size)
        return float(-(waited + 1e-15) / (np.log2(job.size + 1e-15) * r))

    def plan(self, view):
        """Start the committed job while it fits, committing to the next best at the same instant; else backfill."""
        now = view.now
        queue = view.queue
        while True:
            job = self._committed
            if job is None or job not in queue:  # started, or held out of the queue (a per-user limit)
                if not queue:
                    self._committed = None
                    return
                job = min(queue, key=lambda waiting: (self.score(waiting, now), waiting.rank))
                self._committed, self._shadow = job, None
            allocation = view.place(job, placement=self.placement)
            if allocation is None:
                break
            self._committed = None
            yield Start(job, allocation)
        yield from self.backfill_around(view, job)

    def backfill_around(self, view, head):
        """This policy's backfilling around the blocked ``head`` (module docstring; none: nothing).

        Also what :class:`~torus_sim.rl.env.SchedulingEnv` runs around an agent's pick that does not fit.

        Yields:
            :class:`Start` actions, each applied by the engine before the next is looked at.
        """
        if self.backfill == "easy":
            yield from backfill_around(view, head, [job for job in view.queue.jobs() if job is not head], self.placement)
        elif self.backfill == "rlscheduler":
            yield from self._rlscheduler_backfill(view, head)

    def _rlscheduler_backfill(self, view, head):
        """RLScheduler's backfilling around the blocked ``head`` (module docstring)."""
        now = view.now
        if self._shadow is None or self._shadow[0] is not head:
            free = view.free_count()
            shadow = now
            for end, size in sorted(
                ((job.started_at + job.walltime, job.allocated_size) for job in view.running.values()), key=lambda pair: pair[0]
            ):
                free += size
                shadow = end
                if free >= head.size:
                    break
            self._shadow = (head, shadow)
        shadow = self._shadow[1]
        for job in view.queue.jobs():  # FCFS order (submit time, then job id), copied: starts change the queue
            if job is head or not now + job.walltime < shadow:
                continue
            allocation = view.place(job, placement=self.placement)
            if allocation is not None:
                yield Start(job, allocation)
