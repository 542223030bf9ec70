"""Maintenance windows: the whole machine reserved from a start to an end; no job starts that would run into one.

Production machines stop for maintenance, and their schedulers drain before it: Slurm's maintenance reservation
(``scontrol create reservation flags=maint,ignore_jobs nodes=ALL``) lets no job start whose time limit would reach
into the window, so the running jobs end before it and the machine is empty when it begins; Maui's and Moab's
standing and administrative reservations do the same. :class:`MaintenanceWindows` does that for any policy: before
every scheduling pass the jobs whose requested time (``walltime``) would reach into the next window are held out of
the queue the policy sees (a held job waits: its wait counts), all of them while a window lasts, and a pass at the
window's end lets them in again. A job that runs past its requested time (a log's run time may exceed it) runs on
into the window: the window waits for it, as a drained machine does. Jobs the policy cannot see cannot be started
by it, so every online policy (FCFS, EASY, conservative, PV-EASY, greedy, the torus's) composes with the windows
unchanged.

References:
    Slurm's documentation, "Advanced Resource Reservation Guide" (maintenance reservations: MAINT, IGNORE_JOBS;
    jobs whose time limit would overlap a reservation are not started); Maui Scheduler Administrator's Guide §7.1
    (administrative reservations).
"""

from __future__ import annotations

import bisect
import math

import numpy as np

from torus_sim.core.errors import ConfigurationError

__all__ = ["MaintenanceWindows", "merged_windows"]


def merged_windows(windows) -> np.ndarray:
    """Windows as a sorted float ``(W, 2)`` array of ``(start, end)``, overlapping or touching ones merged.

    Args:
        windows: ``(start, end)`` pairs, seconds (any order).

    Returns:
        float64 ``(W, 2)``.

    Raises:
        ConfigurationError: a window that is not two finite numbers with start < end.
    """
    array = np.asarray(windows, dtype=np.float64).reshape(-1, 2) if len(windows) else np.empty((0, 2))
    if not np.isfinite(array).all() or np.any(array[:, 0] >= array[:, 1]):
        raise ConfigurationError("a maintenance window needs a finite start before its end")
    array = array[np.argsort(array[:, 0], kind="stable")]
    merged: list[list[float]] = []
    for start, end in array:
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return np.array(merged, dtype=np.float64).reshape(-1, 2)


class MaintenanceWindows:
    """The run's maintenance windows and the jobs held out of the queue before and during them.

    Args:
        windows: ``(start, end)`` pairs in seconds of the run's clock (the workload's submit times), any order;
            overlapping ones are merged.
        request_pass_at: ``at -> None``: asks the engine for a scheduling pass at a later time (a window's end,
            where the held jobs are let in again).
        longest: the longest requested time of any job of the run, seconds: passes further than that from the next
            window look at no job.
        drain: no job starts whose requested time reaches into the next window (a planned maintenance: the machine
            is empty when it begins); False: jobs are held only while a window lasts, and jobs running at its start
            run on (an outage the scheduler did not see coming).

    Attributes:
        windows: float64 ``(W, 2)``, the merged windows.
        drains: whether the machine is drained before each window (``drain``).
        held_ever: times a job was held before or during a window (a job held at several passes counts once per
            window).
        held: jobs held now.
    """

    def __init__(self, windows, request_pass_at, longest: float, drain: bool = True) -> None:
        self.windows = merged_windows(windows)
        self._starts = self.windows[:, 0].tolist()
        self._ends = self.windows[:, 1].tolist()
        self._request_pass_at = request_pass_at
        self._held: dict[int, object] = {}  # job id -> job held out of the queue now
        self._held_for = 0  # the window they are held for
        self._counted: set[tuple[int, int]] = set()  # (window, job id) pairs already counted in held_ever
        self._asked: set[int] = set()  # windows whose end has a pass asked for
        self._longest = longest if drain else 0.0
        self.drains = drain
        self.held_ever = 0

    @property
    def held(self) -> int:
        """Jobs held out of the queue now."""
        return len(self._held)

    def restore(self, queue, now: float) -> None:
        """Put the held jobs back in ``queue`` once the window they were held for has ended (before the other gates look).

        Until then a held job stays held: the time left before the window only shrinks, so every job held at one pass
        would be held again at the next. The per-user limits ask :meth:`holds` and :meth:`release` of a job they
        take back meanwhile (it is theirs to hold).

        Args:
            queue: the :class:`~torus_sim.engine.wait_queue.WaitQueue`.
            now: the pass's time, seconds.
        """
        if self._held and now >= self._ends[self._held_for]:
            for job in self._held.values():
                queue.add(job)
            self._held.clear()

    def holds(self, job) -> bool:
        """Whether ``job`` (a waiting job) is held out of the queue by a window now."""
        return job.job_id in self._held

    def release(self, job) -> None:
        """Forget a held job: the per-user limits hold it now (it comes back through them, not at the window's end).

        Args:
            job: a job this gate holds (:meth:`holds`).

        Raises:
            KeyError: the gate does not hold it.
        """
        del self._held[job.job_id]

    def bound(self, now: float) -> float:
        """The requested time above which :meth:`hold` holds a job at ``now``, seconds.

        Before a drained window that the longest job could reach, the time left before it; during a window -inf (every
        job); otherwise inf (none). The per-user limits let a job over it in without a slot (:mod:`torus_sim.engine.limits`).

        Args:
            now: the pass's time, seconds.

        Returns:
            float: seconds of requested time, -inf or inf (Slurm's maintenance reservation: a job whose time limit
            would reach into it does not start).
        """
        index = bisect.bisect_right(self._ends, now)
        if index == len(self._ends):
            return math.inf
        room = self._starts[index] - now
        if room <= 0:
            return -math.inf
        return math.inf if self._longest <= room else room

    def hold(self, queue, now: float) -> None:
        """Hold out of ``queue`` the jobs whose requested time reaches into the next window (every job during one).

        Args:
            queue: the :class:`~torus_sim.engine.wait_queue.WaitQueue`.
            now: the pass's time, seconds.
        """
        if not len(queue):
            return
        bound = self.bound(now)
        if bound == math.inf:  # most passes are further from a window than any job runs: nothing to look at
            return
        index = bisect.bisect_right(self._ends, now)  # the first window not over by now: the one held for
        held = [job for job in queue if not job.walltime <= bound]  # every job during the window (bound -inf)
        if not held:
            return
        self._held_for = index
        for job in held:
            queue.remove(job)
            self._held[job.job_id] = job
            if (index, job.job_id) not in self._counted:
                self._counted.add((index, job.job_id))
                self.held_ever += 1
        if index not in self._asked:  # the held jobs come back at the window's end (a pass there)
            self._asked.add(index)
            self._request_pass_at(self._ends[index])

    def hours(self) -> float:
        """The windows' total length, hours."""
        return float(np.sum(self.windows[:, 1] - self.windows[:, 0])) / 3600.0 if len(self.windows) else 0.0
