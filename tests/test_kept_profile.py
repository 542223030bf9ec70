"""ProfileKeeper's guards (issue 40 §2): the kept torus profile stands for a fresh one only when nothing but arrivals changed.

Each guard is checked alone on a hand-made view: the kept profile is taken when nothing changed, and refused
(None, and dropped) when time reached its next breakpoint, the waiting jobs changed, a running job's predicted
end or the blocked supernodes changed, or a predictor changed its mind about a waiting job.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from torus_sim.policies.availability import PartitionProfile
from torus_sim.policies.kept_profile import ProfileKeeper


class _View:
    """What ProfileKeeper reads: now, the running jobs' predicted ends, the platform's blocked supernodes and repairs."""

    def __init__(self, now=100.0):
        self.now = now
        self.running = {1: SimpleNamespace(rank=1, job_id=1)}
        self.ends = {1: 500.0}
        self.remaining = {}
        self.blocked = np.zeros(8, dtype=bool)
        self.platform = SimpleNamespace(blocked=lambda: self.blocked, repairs_ahead=lambda: [])

    def predicted_end(self, job):
        return self.ends[job.job_id]

    def predicted_remaining(self, job):
        return self.remaining[job.job_id]


def _kept(view, waiting, table):
    keeper = ProfileKeeper()
    blocked = np.zeros(table.torus.size, dtype=bool)
    blocked[:3] = True
    profile = PartitionProfile(view.now, table, blocked, [(500.0, 0b1), (900.0, 0b110)])
    keeper.keep(view, profile, waiting, 500.0, [])
    return keeper, profile


def test_the_kept_profile_stands_while_only_jobs_arrive_and_is_moved_to_now(bgl_table):
    view = _View()
    waiting = [SimpleNamespace(job_id=10), SimpleNamespace(job_id=11)]
    view.remaining = {10: 300.0, 11: 50.0, 12: 70.0}
    keeper, profile = _kept(view, waiting, bgl_table)
    view.now = 150.0
    kept = keeper.take(view, [*waiting, SimpleNamespace(job_id=12)])  # an arrival after them
    assert kept is not None and kept.profile is profile and profile.dates == [150.0, 500.0, 900.0] and kept.head_at == 500.0
    if profile._steps is not None:  # the compiled search's copy moved too: a window from now ends at 150 + duration
        assert profile._steps.dates[:3].tolist() == [150.0, 500.0, 900.0]
    assert keeper.take(view, waiting) is None  # taken once: the next pass keeps it again or builds afresh


def test_each_guard_refuses_the_kept_profile(bgl_table):
    waiting = [SimpleNamespace(job_id=10), SimpleNamespace(job_id=11)]

    def changed(change):
        view = _View()
        view.remaining = {10: 300.0, 11: 50.0}
        keeper, _ = _kept(view, waiting, bgl_table)
        jobs = change(view)
        return keeper.take(view, jobs if jobs is not None else waiting)

    assert changed(lambda view: None) is not None  # nothing changed: it stands
    assert changed(lambda view: setattr(view, "now", 500.0)) is None  # time reached the next breakpoint
    assert changed(lambda view: [waiting[1], waiting[0]]) is None  # the waiting jobs' order changed
    assert changed(lambda view: [waiting[0]]) is None  # a waiting job left (started or killed elsewhere)
    assert changed(lambda view: view.ends.update({1: 450.0})) is None  # a running job's predicted end moved
    assert changed(lambda view: view.blocked.__setitem__(3, True)) is None  # a supernode went down
    assert changed(lambda view: view.remaining.update({11: 60.0})) is None  # a predictor changed its mind


def test_a_pass_whose_started_job_is_released_elsewhere_keeps_nothing(bgl_table):
    """keep() refuses when a started job's predicted end is not the window its reservation was made for."""
    view = _View()
    started = SimpleNamespace(rank=2, job_id=2)
    view.running[2] = started
    view.ends[2] = 100.0 + 250.0
    keeper = ProfileKeeper()
    blocked = np.zeros(bgl_table.torus.size, dtype=bool)
    blocked[0] = True
    keeper.keep(view, PartitionProfile(100.0, bgl_table, blocked, [(350.0, 0b1)]), [], None, [(started, 200.0)])
    assert keeper.take(view, []) is None
    keeper.keep(view, PartitionProfile(100.0, bgl_table, blocked, [(350.0, 0b1)]), [], None, [(started, 250.0)])
    assert keeper.take(view, []) is not None
