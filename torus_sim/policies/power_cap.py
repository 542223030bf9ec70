"""Power capping: EASY backfilling inside a machine power cap, constant or held in hours of the day.

A job starts only where the machine's predicted draw stays under the cap over its whole predicted
run: nodes and watts are two resources, and EASY's rules hold for both. Each pass starts jobs in
queue order while the first one fits (a free partition or enough nodes, and watts under the cap);
the first job that does not fit gets a reservation at the earliest time both its nodes and its watts
are free over its predicted window (the running jobs' predicted ends give back nodes and watts, the
cap's schedule changes the watts); a later job starts now only where its nodes and watts stay free
of that reservation (on a cluster EASY's "extra nodes", on the torus a partition that leaves the
head's, as conservative backfilling reserves it; the watts the same way).

The draw is N x idle_w plus each running job's allocated nodes x (its watts per node - idle_w)
(:func:`~torus_sim.policies.power_aware.machine_draw`; down nodes at the idle draw). The cap is the
run's (:class:`~torus_sim.inputs.energy.caps.PowerCap`): ``power_cap`` x the machine's busy draw N x busy_w;
with ``power_cap_hours`` (``START-END`` on the run's clock, ``clock_start_hour``) it holds only in those
hours of every day and there is none outside them (a demand-response window), and the engine runs a
pass where the cap begins or ends while jobs wait. The summary measures every policy against the same
cap (``hours_over_cap``, ``energy_over_cap_kwh``).

A job that no time within the cap's schedule holds under it (it draws more than the cap by itself,
or runs longer than the hours without a cap) runs alone: as the first waiting job it is reserved at
the time the running jobs are predicted to be all done, backfilled jobs must end by then, and it
starts on the idle machine. Any other job waits for its watts, on an idle machine too (a cap held in
hours of the day: the pass where the cap ends starts it).

References:
    Lifka (EASY); Mu'alem and Feitelson, IEEE TPDS 12(6), 2001 (backfilling with reservations);
    SC'13 (Yang et al.) and JSSPP'13 (Zhou et al.) §1 (a power budget over hours of the day on Blue
    Gene). EASY with the cap as a second resource is the rule of power-capped batch schedulers (e.g.
    Bodas et al., "Simple power-aware scheduler to limit power consumption by HPC system within a
    budget", E2SC 2014).
"""

from __future__ import annotations

import bisect
import itertools
import math

import numpy as np

from torus_sim.core.errors import ConfigurationError
from torus_sim.inputs.energy.daily_hours import DAY
from torus_sim.policies.availability import MIN_DURATION, AvailabilityProfile, availability_profile, window_end
from torus_sim.policies.base import Policy, Reserve, Start
from torus_sim.policies.power_draw import added_draw, machine_draw, on_peak, run_power

__all__ = ["HeadroomProfile", "PowerCapPolicy"]

WATT_SLACK = 1e-6
"""Watts of rounding a job may exceed the headroom by (sums of watts in floating point)."""


class HeadroomProfile(AvailabilityProfile):
    """Watts left under the cap over time from now on: cap(t) - predicted draw(t), a step function.

    Args:
        now: the current time, seconds.
        draw: the machine's draw now, watts.
        releases: ``(end_at, watts)`` of every running job: its predicted end and what its end takes
            off the draw.
        cap_levels: the cap in force from each of an array of times on, watts (inf: none),
            ``cap_levels(times) -> float array``.
        cap_changes: times after ``now`` where the cap may change, seconds.

    Attributes:
        dates: ascending breakpoints, seconds; ``dates[0] == now``.
        free: watts left from ``dates[i]`` to ``dates[i + 1]`` (the last one to infinity); inf without a cap.
    """

    value_type = float

    def __init__(self, now: float, draw: float, releases, cap_levels, cap_changes) -> None:
        soon = math.nextafter(now, math.inf)
        falls: dict[float, float] = {}
        for end_at, watts in releases:
            at = max(end_at, soon)
            falls[at] = falls.get(at, 0.0) + watts
        self.dates = sorted({now, *falls, *(at for at in cap_changes if at > now)})
        self.free = []
        for at, cap in zip(self.dates, cap_levels(self.dates).tolist(), strict=True):
            draw -= falls.get(at, 0.0)
            self.free.append(cap - draw)
        self._lowest = None  # lowest[i]: min(free[0..i]), made when asked, dropped by a reservation

    def fits_now(self, need: float, duration: float) -> bool:
        """:meth:`fits` from ``dates[0]`` (the same answer) by the running minimum of the steps: one bisection."""
        if self._lowest is None:
            self._lowest = list(itertools.accumulate(self.free, min))
        last = bisect.bisect_left(self.dates, window_end(self.dates[0], duration)) - 1
        return self._lowest[last] >= need

    def reserve(self, start_at: float, duration: float, need: float, where=None) -> None:  # noqa: D102
        super().reserve(start_at, duration, need, where)
        self._lowest = None


class PowerCapPolicy(Policy):
    """EASY backfilling that keeps the machine's predicted draw under the run's power cap (module docstring).

    The cap is the run's (``power_cap``, ``power_cap_hours``: :class:`~torus_sim.inputs.energy.caps.PowerCap`),
    the one the summary measures every policy against (``hours_over_cap``).

    Args:
        placement: which nodes a job gets (MFP on a torus, lowest free ids on a cluster when None).

    Raises:
        ConfigurationError: at the run's start, a run without power accounting or without a cap, or a
            cap not above the idle draw.

    References:
        Module docstring (EASY; Mu'alem and Feitelson 2001; SC'13, JSSPP'13; Bodas et al. 2014).
    """

    name = "power-cap"
    workloads = ("online",)
    passes_at_own_times = True

    def __init__(self, placement=None) -> None:
        self.placement = placement
        self._power = None
        self._cap = None
        self._nodes = 0
        self._longest = 0.0  # the workload's longest walltime, seconds: how far ahead the cap's schedule is read

    def settings(self) -> str:
        """The cap in words (a run's header)."""
        if self._cap is None:
            return "EASY inside the run's power cap"
        return f"{self._cap.describe(self._nodes, self._power.node.busy_w)}, EASY inside the cap"

    def attach(self, context) -> None:
        """Take the run's power inputs and cap; refuse a run without them, a cap not above the idle draw or a boot draw.

        With idle nodes switched off the cap holds still: an off node draws at most the idle draw (checked
        when the inputs are read) and a booting one its job's watts, which the headroom counts from the start.
        """
        super().attach(context)
        self._power = run_power(context, "power-cap")
        self._cap = self._power.cap
        if self._cap is None:
            raise ConfigurationError(
                "power-cap needs a power cap: set power_cap (--power-cap SHARE of the machine's busy draw) or power_cap_file"
            )
        self._nodes = context.platform.capacity
        self._longest = max((job.walltime for job in context.jobs), default=0.0)
        node = self._power.node
        switch_off = self._power.switch_off
        if switch_off is not None and switch_off.boot_w is not None:
            raise ConfigurationError(
                "power-cap with a boot draw (node_boot_w): the cap's headroom counts a booting node at its job's watts; "
                "leave node_boot_w unset"
            )
        if switch_off is not None and switch_off.shutdown_s > 0:
            raise ConfigurationError(
                "power-cap with a switch-off time (shutdown_time): the cap's headroom counts the nodes a job waits for "
                "at its job's watts and a node switching off as idle; leave shutdown_time unset"
            )
        if self._cap.share * node.busy_w <= node.idle_w:
            raise ConfigurationError(
                f"power-cap: the cap {self._cap.share:g} x {node.busy_w:,.0f} W per node is not above the idle draw "
                f"({node.idle_w:,.0f} W): nothing could start under it; give a larger power_cap"
            )

    def cap_levels(self, times) -> np.ndarray:
        """The cap in force from each of ``times`` (seconds) on, watts (inf outside its hours)."""
        return self._cap.at(times, self._nodes, self._power.node.busy_w, self._power.clock_start_hour)

    def cap_changes(self, start: float, end: float) -> np.ndarray:
        """Times strictly between ``start`` and ``end`` (seconds) where the cap may change, ascending."""
        return self._cap.breakpoints(start, end, self._power.clock_start_hour)

    def next_pass_after(self, now: float) -> float | None:
        """Where the cap next begins, ends or changes level (seconds), for the pass there; None for a cap at every hour."""
        return self._cap.next_change(now, self._power.clock_start_hour)

    def plan(self, view):
        """Start in order while the first job fits under the cap, reserve for the first that does not, backfill.

        The nodes follow EASY's pass (:func:`~torus_sim.policies.backfilling.easy_pass`: ``view.place``,
        and ``keep_room`` at the shadow time for a job predicted to run past it); the watts follow the
        :class:`HeadroomProfile`, in which the first blocked job's watts are reserved over its window.
        """
        jobs = view.queue.jobs()
        if not jobs:
            return
        now, power = view.now, self._power
        running = list(view.running.values())
        ends = [(view.predicted_end(job), job) for job in running]
        remaining = view.predicted_remaining
        last_end = max([now] + [end_at for end_at, _ in ends])
        horizon = max(last_end, now + self._longest) + 2 * DAY  # past every waiting job's window and a day
        changes = self.cap_changes(now, horizon).tolist()
        headroom = HeadroomProfile(
            now,
            machine_draw(power, self._nodes, running),
            [(end_at, added_draw(power, job, job.allocated_size)) for end_at, job in ends],
            self.cap_levels,
            changes,
        )
        busy = bool(running)
        position = 0
        for position, job in enumerate(jobs):  # noqa: B007 - start in order while the first job fits (position: after)
            duration, watts = max(remaining(job), MIN_DURATION), added_draw(power, job, job.partition_size)
            if not headroom.fits_now(watts - WATT_SLACK, duration) and (
                busy or not self._shadow(view, job, duration, watts, headroom)[1]
            ):
                break  # it waits for watts; on an idle machine only a job that no time under the cap holds runs anyway
            where = view.place(job, placement=self.placement)
            if where is None:
                break
            yield Start(job, where)
            headroom.reserve(now, duration, watts)
            busy, last_end = True, max(last_end, now + duration)
        else:
            return
        head, head_duration = jobs[position], max(remaining(jobs[position]), MIN_DURATION)
        need, head_watts = head.partition_size, added_draw(power, head, head.partition_size)
        shadow_at, alone = self._shadow(view, head, head_duration, head_watts, headroom)
        if alone:  # never under the cap: it runs alone once all that runs is done
            shadow_at = last_end
        else:
            headroom.reserve(shadow_at, head_duration, head_watts)
        yield Reserve(head, shadow_at)
        occupancy = self._occupancy_at(view, shadow_at)
        free = view.free_count()
        job_watts, busy_w, idle_w = power.job_watts, power.node.busy_w, power.node.idle_w
        for job in jobs[position + 1 :]:
            if free == 0:
                break
            size = job.partition_size
            if size > free:
                continue
            watts = size * (job_watts.get(job.job_id, busy_w) - idle_w)  # added_draw, inline: the scan's hot line
            if watts - WATT_SLACK > headroom.free[0]:
                continue  # not even now (the profile's first step)
            duration = max(remaining(job), MIN_DURATION)
            if not headroom.fits_now(watts - WATT_SLACK, duration):
                continue
            if now + duration <= shadow_at:
                where = view.place(job, placement=self.placement)
            elif alone:
                continue
            else:
                where = view.place(job, keep_room=(occupancy, need), placement=self.placement)
                if where is not None:
                    occupancy.occupy(where)
            if where is None:
                continue
            yield Start(job, where)
            headroom.reserve(now, duration, watts)
            free = view.free_count()

    def _shadow(self, view, head, duration: float, watts: float, headroom: HeadroomProfile) -> tuple[float, bool]:
        """The blocked first job's reservation: the earliest time its nodes and its watts stay free for ``duration``.

        Its nodes from the availability profile of the running jobs' predicted ends (a partition on the
        torus), its watts from ``headroom``.

        Returns:
            (time in seconds, False); (inf, False) when its nodes are never free (EASY's shadow at
            infinity); (inf, True) when its nodes are but its watts never fit under the cap within the
            schedule (it will run alone).
        """
        nodes = availability_profile(view, [(view.predicted_end(job), job) for job in view.running.values()], self.placement)
        earliest, _ = nodes.earliest(head.partition_size, duration)
        if math.isinf(earliest):
            return math.inf, False
        times = sorted({*nodes.dates, *headroom.dates})
        for at in times[bisect.bisect_left(times, earliest) :]:
            if headroom.fits(at, watts - WATT_SLACK, duration) and nodes.room_at(at, head.partition_size, duration)[0]:
                return at, False
        return math.inf, True

    @staticmethod
    def _occupancy_at(view, at: float):
        """The planning occupancy at ``at``: running jobs predicted to end by then and repairs due by then freed."""
        occupancy = view.snapshot()
        if math.isinf(at):
            return occupancy
        for job in view.running.values():
            if view.predicted_end(job) <= at:
                occupancy.vacate(job)
        for repair_at, node in view.platform.repairs_ahead():
            if repair_at <= at:
                occupancy.vacate_node(node)
        return occupancy


class BudgetBackfill(PowerCapPolicy):
    """EASY backfilling inside an on-peak power budget: what runs behind the power-window policy's window.

    The "cap" is ``budget`` x N x busy_w wherever the price is on-peak (above the lowest price of the
    next 24 hours, :func:`~torus_sim.policies.power_draw.on_peak`) and none off-peak; the pass is
    :meth:`PowerCapPolicy.plan`'s. Made and attached by :class:`~torus_sim.policies.power_aware.PowerWindowPolicy`
    (``backfill = true``); not registered on its own.

    Args:
        budget: the on-peak budget as a share of the machine's busy draw.
        placement: the window policy's placement.
    """

    name = "power-window backfill"

    def __init__(self, budget: float, placement=None) -> None:
        super().__init__(placement)
        self.budget = budget

    def attach(self, context) -> None:
        """Take the run's power inputs (the window policy has checked them and attached the shared placement)."""
        self._power = run_power(context, "power-window")
        self._nodes = context.platform.capacity
        self._longest = max((job.walltime for job in context.jobs), default=0.0)

    def cap_levels(self, times) -> np.ndarray:
        """The budget (watts) where the price is on-peak, inf off-peak.

        Whether a time is on-peak changes only at a price change or 24 hours before one (the look-ahead's
        end crosses it): it is asked at those marks and once between each two, and each time takes the
        answer of its mark (if it is one) or of the span it falls in.
        """
        times = np.asarray(times, dtype=float)
        if not len(times):
            return times
        level = self.budget * self._nodes * self._power.node.busy_w
        tariff, clock = self._power.tariff, self._power.clock_start_hour
        first, last = float(times.min()), float(times.max()) + 1.0
        marks = np.concatenate([[first], self.cap_changes(first, last)])
        inside = (marks + np.append(marks[1:], last)) / 2.0  # a time strictly between each mark and the next
        at_mark = np.array([on_peak(tariff, mark, clock) for mark in marks.tolist()])
        between = np.array([on_peak(tariff, mid, clock) for mid in inside.tolist()])
        index = np.searchsorted(marks, times, side="right") - 1
        peak = np.where(marks[index] == times, at_mark[index], between[index])
        return np.where(peak, level, math.inf)

    def cap_changes(self, start: float, end: float) -> np.ndarray:
        """Where on-peak may begin or end between ``start`` and ``end``: the price changes and 24 hours before each."""
        changes = self._power.tariff.breakpoints(start, end + DAY, self._power.clock_start_hour)
        marks = np.unique(np.concatenate([changes, changes - DAY]))
        return marks[(marks > start) & (marks < end)]
