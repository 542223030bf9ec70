"""Prime time: long jobs wait for the night and the weekend (a time-of-day rule of production schedulers).

Many centres keep the working day for short jobs: PBS's scheduler splits the week into prime time and non-prime time
(its ``holidays`` file: ``weekday 0800 1730``) and starts a non-prime-time job only outside prime time; with
``backfill_prime`` it starts one only if it ends before prime time begins, give or take ``prime_spill``. Maui and
Moab do the same with standing reservations (``SRPERIOD DAY``, ``SRMAXTIME``) that keep nodes for short jobs during
the day. :class:`PrimeTime` does it for any online policy the way maintenance windows do
(:mod:`torus_sim.engine.maintenance`): before every scheduling pass, in prime time, the jobs whose requested time
(``walltime``) exceeds the longest a prime-time job may ask are held out of the queue the policy sees (a held job
waits: its wait counts), and a pass at the end of prime time lets them in. With a spill, outside prime time a long job
is also held if its requested time would reach more than the spill into the next prime time. Jobs already running
run on.

Prime time is a local time: the days and hours of the log's own clock (an SWF log's ``UnixStartTime`` and
``TimeZoneString``; daylight saving time included), so a replay's prime time falls where the machine's did.

References:
    PBS Professional Administrator's Guide, "Using Primetime and Holidays" (the ``holidays`` file,
    ``backfill_prime``, ``prime_spill``); Maui Scheduler Administrator's Guide §7.1.5 (standing reservations:
    ``SRPERIOD``, ``SRSTARTTIME``, ``SRENDTIME``, ``SRDAYS``, ``SRMAXTIME``).
"""

from __future__ import annotations

import datetime
import math
import re
from typing import NamedTuple
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from torus_sim.core.errors import ConfigurationError

__all__ = ["DAYS", "LogClock", "PrimeTime", "PrimeTimeRule", "PrimeTimeSpec", "parse_prime_time"]

DAYS = ("MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN")
"""The days a prime-time rule names, Monday first (Python's ``weekday()`` order)."""

_SPEC = re.compile(r"^\s*(?P<days>[A-Za-z,\-]+)\s+(?P<start>\d{1,2}:\d{2})\s*-\s*(?P<end>\d{1,2}:\d{2})\s*$")


class PrimeTimeSpec(NamedTuple):
    """The days and hours of prime time (:func:`parse_prime_time`).

    Attributes:
        days: the weekdays in prime time, 0 = Monday ... 6 = Sunday.
        start: prime time's start on each of those days, minutes after local midnight.
        end: its end, minutes after local midnight (after ``start``; 24:00 is midnight at the day's end).
    """

    days: frozenset[int]
    start: int
    end: int

    def longest_gap(self) -> float:
        """The longest time between two prime times of a week, seconds (0: prime time all week long)."""
        week = 7 * 1440
        spans = sorted((day * 1440 + self.start, day * 1440 + self.end) for day in self.days)
        gaps = [later[0] - earlier[1] for earlier, later in zip(spans, spans[1:], strict=False)]
        gaps.append(spans[0][0] + week - spans[-1][1])  # over the week's end
        return 60.0 * max(gaps)


def _minutes(text: str, spec: str) -> int:
    hours, minutes = (int(part) for part in text.split(":"))
    if minutes > 59 or hours > 24 or (hours == 24 and minutes):
        raise ValueError(f"prime time {spec!r}: {text} is not a time of day (HH:MM, 00:00 to 24:00)")
    return 60 * hours + minutes


def _days(text: str, spec: str) -> frozenset[int]:
    names = text.upper()
    if names == "ALL":
        return frozenset(range(7))
    days: set[int] = set()
    for part in names.split(","):
        ends = part.split("-")
        if len(ends) > 2 or not all(end in DAYS for end in ends):
            raise ValueError(f"prime time {spec!r}: {part!r} is not a day or a range of days ({', '.join(DAYS)}, ALL)")
        first, last = DAYS.index(ends[0]), DAYS.index(ends[-1])
        days.update((first + step) % 7 for step in range((last - first) % 7 + 1))  # FRI-MON wraps over the weekend
    return frozenset(days)


def parse_prime_time(spec: str) -> PrimeTimeSpec:
    """Read a prime-time rule: days, then the hours, in the log's local time.

    ``"MON-FRI 08:00-18:00"`` (weekdays from 8 to 6), ``"MON,WED 09:00-17:30"``, ``"ALL 08:00-20:00"``; day names
    in English, any case; a range may wrap (``SAT-MON``).

    Args:
        spec: the rule.

    Returns:
        The :class:`PrimeTimeSpec`.

    Raises:
        ValueError: a rule that is not days and ``HH:MM-HH:MM`` with the start before the end (a sentence naming it).
    """
    match = _SPEC.match(spec)
    if match is None:
        raise ValueError(f'prime time {spec!r}: expected days and hours, as "MON-FRI 08:00-18:00"')
    start, end = _minutes(match["start"], spec), _minutes(match["end"], spec)
    if start >= end:
        raise ValueError(f"prime time {spec!r}: its start must come before its end on the same day")
    return PrimeTimeSpec(_days(match["days"], spec), start, end)


class LogClock:
    """The workload's clock (seconds from the log's start) as the local time of the machine that ran it.

    Args:
        origin: the clock's zero as a Unix time, seconds (an SWF log's ``UnixStartTime``).
        zone: an IANA time zone name (the log's ``TimeZoneString``, e.g. ``"US/Pacific"``), or None.
        offset: a fixed offset from UTC, seconds (the log's older ``TimeZone`` field), used when ``zone`` is None;
            None and no zone: UTC.

    Raises:
        ConfigurationError: a time zone name the time zone database does not know.
    """

    def __init__(self, origin: float, zone: str | None = None, offset: float | None = None) -> None:
        self.origin = float(origin)
        if zone is not None:
            try:
                self.zone: datetime.tzinfo = ZoneInfo(zone)
            except (ZoneInfoNotFoundError, ValueError):
                raise ConfigurationError(f"the log's time zone {zone!r} is not in the time zone database") from None
        else:
            self.zone = datetime.timezone(datetime.timedelta(seconds=offset or 0.0))
        self.name = zone or ("UTC" if not offset else f"UTC{offset / 3600.0:+g} h")

    def local(self, at: float) -> datetime.datetime:
        """The local date and time at ``at`` seconds of the workload's clock."""
        return datetime.datetime.fromtimestamp(self.origin + at, self.zone)

    def at(self, day: datetime.date, minutes: int) -> float:
        """The workload's clock, seconds, at the local wall time ``minutes`` after midnight of ``day``.

        1,440 minutes is the next midnight; on a daylight-saving change 08:00 stays 08:00.
        """
        day += datetime.timedelta(days=minutes // 1440)
        minutes %= 1440
        moment = datetime.datetime(day.year, day.month, day.day, minutes // 60, minutes % 60, tzinfo=self.zone)
        return moment.timestamp() - self.origin


class PrimeTimeRule(NamedTuple):
    """A run's prime-time rule, as the scenario gives it (the engine makes the :class:`PrimeTime` gate from it).

    Attributes:
        spec: the days and hours (:class:`PrimeTimeSpec`).
        clock: the log's local clock (:class:`LogClock`).
        max_walltime: the longest requested time a job may have to start in prime time, seconds.
        spill: outside prime time, how far a long job's requested time may reach into the next prime time, seconds;
            None: as far as it asks (only its start is kept out of prime time).
    """

    spec: PrimeTimeSpec
    clock: LogClock
    max_walltime: float
    spill: float | None = None

    def describe(self, text: str) -> str:
        """``prime time MON-FRI 08:00-18:00 (US/Pacific): jobs over 14,400 s wait``, for the run's header."""
        spill = "" if self.spill is None else f", ending at most {self.spill:,.0f} s into it"
        return f"prime time {text} ({self.clock.name}): jobs asking over {self.max_walltime:,.0f} s start outside it{spill}"


class PrimeTime:
    """The prime-time gate: long jobs held out of the queue in prime time (and, with a spill, just before it).

    Args:
        rule: the :class:`PrimeTimeRule`.
        request_pass_at: ``at -> None``: asks the engine for a scheduling pass at a later time (prime time's end,
            where the held jobs are let in again).
        longest: the longest requested time of any job of the run, seconds: each must fit some time outside prime time
            (with the spill), or it could never start.

    Raises:
        ConfigurationError: a maximum that is not positive seconds, a spill below 0, or a rule under which the longest
            job could never start (prime time all week long; a spill too short for the longest time outside it).

    Attributes:
        held_ever: times a job was held (a job held at several passes of one prime time counts once for it).
    """

    def __init__(self, rule: PrimeTimeRule, request_pass_at, longest: float = 0.0) -> None:
        if not (0 < rule.max_walltime < math.inf):
            raise ConfigurationError(f"prime_time_max_walltime must be positive seconds, got {rule.max_walltime!r}")
        if rule.spill is not None and not (0 <= rule.spill < math.inf):
            raise ConfigurationError(f"prime_time_spill must be seconds >= 0, got {rule.spill!r}")
        if longest > rule.max_walltime:  # a long job must fit outside prime time, or it waits forever
            gap = rule.spec.longest_gap()
            if gap == 0.0:
                raise ConfigurationError(
                    f"prime time covers the whole week: a job asking more than prime_time_max_walltime "
                    f"({rule.max_walltime:,.0f} s; this workload has one of {longest:,.0f} s) could never start"
                )
            if rule.spill is not None and longest > gap + rule.spill:
                raise ConfigurationError(
                    f"prime_time_spill: a job of {longest:,.0f} s could never start: the longest time outside prime "
                    f"time is {gap:,.0f} s, plus the spill {rule.spill:,.0f} s"
                )
        self.rule = rule
        self._request_pass_at = request_pass_at
        self._held: dict[int, object] = {}  # job id -> job held out of the queue now
        self._span: tuple[float, float] | None = None  # the prime time now or next: (start, end), the workload's clock
        self._since = math.inf  # the earliest time it was found for: it holds from there to its end
        self._counted: set[int] = set()  # jobs already counted in held_ever for this span
        self._asked = math.inf  # the end of the prime time the held jobs wait for (a pass is asked there)
        self.held_ever = 0

    @property
    def held(self) -> int:
        """Jobs held out of the queue now."""
        return len(self._held)

    def span(self, now: float) -> tuple[float, float]:
        """The prime time that holds ``now`` or comes next: ``(start, end)``, seconds of the workload's clock."""
        if self._span is not None and self._since <= now < self._span[1]:
            return self._span
        spec, clock = self.rule.spec, self.rule.clock
        day = clock.local(now).date()
        for _ in range(8):
            if day.weekday() in spec.days:
                start, end = clock.at(day, spec.start), clock.at(day, spec.end)
                if end > now:
                    if self._span != (start, end):
                        self._counted.clear()
                    self._span, self._since = (start, end), now
                    return self._span
            day += datetime.timedelta(days=1)
        raise AssertionError("a prime-time rule names at least one day of the week")  # pragma: no cover

    def restore(self, queue, now: float) -> None:
        """Put the jobs held at the last pass back in ``queue`` (before the other gates and the policy look at it).

        They come back at every pass, as a maintenance window's do: the per-user limits before this gate see every
        waiting job in the queue (a job they hold is theirs, one they let in this gate holds again while the rule
        holds it). A job held in a prime time (or before it, for the spill) is held again until its end: the rule
        only tightens until then.

        Args:
            queue: the :class:`~torus_sim.engine.wait_queue.WaitQueue`.
            now: the pass's time, seconds (unused: kept for the gates' common call).
        """
        if self._held:
            for job in self._held.values():
                queue.add(job)
            self._held.clear()

    def bound(self, now: float) -> float:
        """The requested time above which :meth:`hold` holds a job at ``now``, seconds.

        The rule's maximum in prime time; before it, with a spill, the larger of that and the time to the spill's end;
        otherwise inf (none).

        Args:
            now: the pass's time, seconds.

        Returns:
            float: seconds of requested time, or inf (PBS's prime time with ``prime_spill``).
        """
        start, _ = self.span(now)
        rule = self.rule
        if start <= now:
            return rule.max_walltime
        if rule.spill is None:
            return math.inf
        return max(rule.max_walltime, start + rule.spill - now)

    def hold(self, queue, now: float) -> None:
        """Hold out of ``queue`` the jobs that may not start now: in prime time, those asking more than the rule allows.

        Args:
            queue: the :class:`~torus_sim.engine.wait_queue.WaitQueue`.
            now: the pass's time, seconds.
        """
        if not len(queue):
            return
        limit = self.bound(now)
        if limit == math.inf:
            return
        end = self.span(now)[1]
        held = [job for job in queue if not job.walltime <= limit]
        if not held:
            return
        for job in held:
            queue.remove(job)
            self._held[job.job_id] = job
            if job.job_id not in self._counted:
                self._counted.add(job.job_id)
                self.held_ever += 1
        if self._asked != end:  # the held jobs come back when prime time ends (a pass there)
            self._asked = end
            self._request_pass_at(end)
