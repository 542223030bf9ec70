"""ProfileKeeper's guards (issues 40 §2, 61 §2): a kept torus profile stands for a fresh one only when nothing changed it.

Each guard is checked alone on a hand-made view: the kept profile is taken when nothing changed, and refused
(None, and dropped) when the waiting jobs changed, a running job's end or the blocked supernodes changed, a
repair moved, or a predictor changed its mind about a waiting job. Conservative backfilling's keeper
(``across_breakpoints=False``) also refuses once time reaches the profile's next breakpoint; R-LIST-Q's goes on
past it when the jobs that ended did so where the profile released them, and the reservations due now start.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from torus_sim.policies.availability import PartitionProfile
from torus_sim.policies.kept_profile import ProfileKeeper, due_positions


class _View:
    """What ProfileKeeper reads: now, the running jobs' ends, the platform's blocked supernodes, repairs and table."""

    def __init__(self, table, now=100.0):
        self.now = now
        self.running = {1: SimpleNamespace(rank=1, job_id=1)}
        self.ends = {1: 500.0}
        self.remaining = {}
        self.blocked = np.zeros(table.torus.size, dtype=bool)
        self.blocked[:3] = True  # supernode 0: job 1 until 500; 1 and 2: down until 900
        self.repairs = [(900.0, 1), (900.0, 2)]
        self.platform = SimpleNamespace(blocked=lambda: self.blocked, repairs_ahead=lambda: list(self.repairs), table=table)

    def predicted_end(self, job):
        return self.ends[job.job_id]

    def predicted_remaining(self, job):
        return self.remaining[job.job_id]


def _profile(view, table):
    return PartitionProfile(view.now, table, view.blocked, [(500.0, 0b1), (900.0, 0b110)])


def _kept(view, waiting, table, across=False, starts=None, wheres=None):
    keeper = ProfileKeeper(across_breakpoints=across)
    profile = _profile(view, table)
    starts = starts or [500.0, 900.0][: len(waiting)]
    wheres = wheres or [None] * len(waiting)
    lengths = [view.remaining[job.job_id] for job in waiting]
    keeper.keep(view, profile, waiting, starts, wheres, lengths, due_positions(starts, view.now))
    return keeper, profile


def test_the_kept_profile_stands_while_only_jobs_arrive_and_is_moved_to_now(bgl_table):
    view = _View(bgl_table)
    waiting = [SimpleNamespace(job_id=10), SimpleNamespace(job_id=11)]
    view.remaining = {10: 300.0, 11: 50.0, 12: 70.0}
    keeper, profile = _kept(view, waiting, bgl_table)
    view.now = 150.0
    kept = keeper.take(view, [*waiting, SimpleNamespace(job_id=12)])  # an arrival after them
    assert kept is not None and kept.profile is profile and profile.dates == [150.0, 500.0, 900.0] and kept.starts[0] == 500.0
    if profile._steps is not None:  # the compiled search's copy moved too: a window from now ends at 150 + duration
        assert profile._steps.dates[:3].tolist() == [150.0, 500.0, 900.0]
    assert keeper.take(view, waiting) is None  # taken once: the next pass keeps it again or builds afresh


def test_each_guard_refuses_the_kept_profile(bgl_table):
    waiting = [SimpleNamespace(job_id=10), SimpleNamespace(job_id=11)]

    def changed(change, across=False):
        view = _View(bgl_table)
        view.remaining = {10: 300.0, 11: 50.0}
        keeper, _ = _kept(view, waiting, bgl_table, across)
        jobs = change(view)
        return keeper.take(view, jobs if jobs is not None else waiting)

    assert changed(lambda view: None) is not None  # nothing changed: it stands
    assert changed(lambda view: setattr(view, "now", 500.0)) is None  # time reached the next breakpoint
    assert changed(lambda view: [waiting[1], waiting[0]]) is None  # the waiting jobs' order changed
    assert changed(lambda view: [SimpleNamespace(job_id=12), *waiting]) is None  # a job entered before every kept one
    assert changed(lambda view: view.ends.update({1: 450.0})) is None  # a running job's end moved
    assert changed(lambda view: view.blocked.__setitem__(3, True)) is None  # a supernode went down
    assert changed(lambda view: view.repairs.append((950.0, 3))) is None  # ... with a known repair
    assert changed(lambda view: view.repairs.__setitem__(0, (800.0, 1))) is None  # a repair moved
    assert changed(lambda view: view.remaining.update({11: 60.0})) is None  # a predictor changed its mind
    assert changed(lambda view: None, across=True) is not None


def _ended(view, at):
    """The view once job 1 ended at ``at`` (its end) and time is ``at``."""
    view.now = at
    del view.running[1]
    view.blocked[0] = False


def test_across_breakpoints_the_profile_stands_after_an_end_where_it_released_the_job(bgl_table):
    # R-LIST-Q's keeper: job 1 ended at 500, where the profile released it; the steps before 500 are dropped
    waiting = [SimpleNamespace(job_id=10)]
    view = _View(bgl_table)
    view.remaining = {10: 300.0}
    keeper, profile = _kept(view, waiting, bgl_table, across=True, starts=[900.0])
    _ended(view, 500.0)
    kept = keeper.take(view, waiting)
    assert kept is not None and profile.dates == [500.0, 900.0] and profile.occupied[0] == 0b110
    view = _View(bgl_table)
    view.remaining = {10: 300.0}
    keeper, _ = _kept(view, waiting, bgl_table, across=True, starts=[900.0])
    _ended(view, 600.0)  # a pass at 600 with none at 500: the profile would have passed an end with no pass ...
    assert keeper.take(view, waiting) is not None  # ... which changes nothing when it ended where it was released
    view = _View(bgl_table)
    view.remaining = {10: 300.0}
    keeper, _ = _kept(view, waiting, bgl_table, across=True, starts=[900.0])
    view.now = 600.0  # job 1 still runs after its end: killed and restarted, or its end moved
    assert keeper.take(view, waiting) is None
    view = _View(bgl_table)
    view.remaining = {10: 300.0}
    keeper, _ = _kept(view, waiting, bgl_table, across=True, starts=[400.0])
    _ended(view, 500.0)  # a reservation at 400 came due with no pass
    assert keeper.take(view, waiting) is None


def test_a_reservation_due_now_must_find_its_partition_free(bgl_table):
    # job 10 reserved at 500 on partition p (free then): at 500 it starts in this pass, p must be free
    masks = bgl_table.mask_ints
    where = next(pid for pid, mask in enumerate(masks) if mask & 0b111 == 0 and bgl_table.sizes[pid] == 1)
    waiting = [SimpleNamespace(job_id=10)]
    for down, expected in ((False, True), (True, False)):
        view = _View(bgl_table)
        view.remaining = {10: 300.0}
        keeper = ProfileKeeper(across_breakpoints=True)
        profile = _profile(view, bgl_table)
        profile.reserve(500.0, 300.0, 1, where)
        keeper.keep(view, profile, waiting, [500.0], [where], [300.0], [])
        _ended(view, 500.0)
        if down:
            view.blocked[masks[where].bit_length() - 1] = True  # its supernode went down (with no known repair)
        kept = keeper.take(view, waiting)
        assert (kept is not None) is expected
        if expected:
            assert kept.starts == [500.0] and kept.wheres == [where]


def test_a_pass_whose_started_job_is_released_elsewhere_keeps_nothing(bgl_table):
    """keep() refuses when a started job's end is not the window its reservation was made for."""
    view = _View(bgl_table)
    started = SimpleNamespace(rank=2, job_id=2)
    view.running[2] = started
    view.ends[2] = 100.0 + 250.0
    keeper = ProfileKeeper()
    keeper.keep(view, _profile(view, bgl_table), [started], [100.0], [None], [200.0], [0])
    assert keeper.take(view, []) is None
    keeper.keep(view, _profile(view, bgl_table), [started], [100.0], [None], [250.0], [0])
    assert keeper.take(view, []) is not None


def test_a_job_started_behind_a_waiting_one_is_kept_only_if_it_ends_before_that_one_starts(bgl_table):
    """R-LIST-Q's keeper: a fresh pass reserves the waiting job with the started one in its profile; the same
    search only when the two do not meet in time. Conservative's refuses any start behind a waiting job."""
    for across, ends_at, expected in ((True, 400.0, True), (True, 600.0, False), (False, 400.0, False)):
        view = _View(bgl_table)
        started = SimpleNamespace(rank=2, job_id=2)
        waiting = SimpleNamespace(rank=3, job_id=3)
        view.running[2] = started
        view.ends[2] = ends_at
        view.remaining = {3: 100.0}
        keeper = ProfileKeeper(across_breakpoints=across)
        starts = [500.0, 100.0]
        assert due_positions(starts, view.now) == [1]
        keeper.keep(view, _profile(view, bgl_table), [waiting, started], starts, [None, None], [100.0, ends_at - 100.0], [1])
        assert (keeper.take(view, [waiting]) is not None) is expected, (across, ends_at)


def _free_partition(table, size, taken):
    return next(pid for pid, mask in enumerate(table.mask_ints) if mask & taken == 0 and table.sizes[pid] == size)


def test_a_job_entering_among_the_kept_ones_undoes_the_reservations_from_there_on(bgl_table):
    """R-LIST-Q's queue in priority order: an arrival ahead of a kept job. The jobs before it keep their
    reservations, the later ones' are undone: the profile is the one made by the first reservations alone."""
    first = _free_partition(bgl_table, 2, 0b111)
    second = _free_partition(bgl_table, 4, 0b111 | bgl_table.mask_ints[first])
    waiting = [SimpleNamespace(job_id=10), SimpleNamespace(job_id=11)]
    for compiled in (True, False):
        view = _View(bgl_table)
        view.remaining = {10: 300.0, 11: 50.0}
        keeper = ProfileKeeper(across_breakpoints=True)
        profile = _profile(view, bgl_table)
        if not compiled:
            profile._steps = None  # the Python profile (numba missing)
        alone = _profile(view, bgl_table)
        profile.reserve(500.0, 300.0, 2, first)
        alone.reserve(500.0, 300.0, 2, first)
        profile.reserve(200.0, 50.0, 4, second)
        keeper.keep(view, profile, waiting, [500.0, 200.0], [first, second], [300.0, 50.0], [])
        view.now = 150.0
        kept = keeper.take(view, [waiting[0], SimpleNamespace(job_id=12), waiting[1]])
        assert kept is not None and kept.waiting == waiting[:1] and kept.starts == [500.0] and kept.wheres == [first]
        alone.move_to(150.0)
        steps = dict(zip(profile.dates, profile.occupied, strict=True))
        assert [steps.get(date, None) for date in alone.dates] == alone.occupied  # the same taken supernodes ...
        taken_at = [alone.occupied[max(i for i, d in enumerate(alone.dates) if d <= date)] for date in profile.dates]
        assert profile.occupied == taken_at  # ... at every date (a step split at 200 and 250 holds what was there)
        assert profile.earliest(4, 50.0) == alone.earliest(4, 50.0)
