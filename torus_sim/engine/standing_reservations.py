"""Standing reservations: part of the machine held on the same days and hours every week (a time-of-day rule).

A centre often keeps nodes out of the batch queue at set hours: for interactive work and tests during the working
day, for a course every Tuesday morning. Maui calls it a standing reservation (``SRCFG[name] PERIOD=DAY
DAYS=MON,TUE,WED,THU,FRI STARTTIME=08:00:00 ENDTIME=18:00:00 TASKCOUNT=32``; the older ``SRDAYS``,
``SRSTARTTIME``, ``SRENDTIME``, ``SRTASKCOUNT``), Slurm a recurring reservation (``flags=daily`` or ``weekday``).
The batch log does not record it, only the hours in which its jobs ran on fewer nodes.

``standing_reservations = "MON-FRI 08:00-18:00 32"`` holds 32 nodes on each weekday from 8 to 6 of the log's local
time (its header's ``UnixStartTime`` and ``TimeZoneString``, daylight saving time included, as prime time reads it:
:mod:`torus_sim.engine.prime_time`); several rules are separated by ``;``. Each day's hours become one count
reservation that waits (:class:`~torus_sim.engine.node_reservations.NodeReservation`): it takes free nodes at its
start and each further node as its job ends, and gives them back at its end, a return every policy's planning knows.
The days run from the log's first submission to its last.

References:
    Maui Scheduler Administrator's Guide §7.1.5 (standing reservations: ``SRDAYS``, ``SRSTARTTIME``,
    ``SRENDTIME``, ``SRTASKCOUNT``; ``SRCFG``); Slurm's documentation, "Advanced Resource Reservation Guide"
    (``flags=daily``, ``flags=weekday``, ``nodecnt=``); issue 77 §1 (time-of-day and day-of-week rules).
"""

from __future__ import annotations

import datetime
from typing import NamedTuple

from torus_sim.engine.prime_time import LogClock, PrimeTimeSpec, parse_prime_time

__all__ = ["StandingReservation", "parse_standing_reservations", "standing_reservation_days"]


class StandingReservation(NamedTuple):
    """One rule: nodes held on some days between two times of day.

    Attributes:
        spec: the days and hours (:class:`~torus_sim.engine.prime_time.PrimeTimeSpec`: weekdays, minutes after local
            midnight).
        count: the nodes held (processors of a cluster, supernodes of a torus), >= 1.
        text: the rule as written, for the sentences.
    """

    spec: PrimeTimeSpec
    count: int
    text: str


def parse_standing_reservations(text: str) -> tuple[StandingReservation, ...]:
    """Read standing reservations: ``"MON-FRI 08:00-18:00 32"``, several separated by ``;``.

    Each rule is days (``MON-FRI``, ``MON,WED``, ``SAT-SUN``, ``ALL``), hours ``HH:MM-HH:MM`` (start before end, on one
    day) and a node count.

    Args:
        text: the rules.

    Returns:
        The rules, in the order given.

    Raises:
        ValueError: a rule without its three parts, days or hours that do not parse, or a count that is not a whole
            number >= 1 (a sentence naming the rule).
    """
    rules = []
    for rule in text.split(";"):
        rule = rule.strip()
        days_hours, _, count = rule.rpartition(" ")
        if not days_hours.strip() or not count.isdigit() or int(count) < 1:
            raise ValueError(
                f'standing reservation {rule!r}: expected days, hours and a node count >= 1, as "MON-FRI 08:00-18:00 32"'
            )
        try:
            spec = parse_prime_time(days_hours)
        except ValueError as error:
            raise ValueError(str(error).replace("prime time", "standing reservation", 1)) from None
        rules.append(StandingReservation(spec, int(count), rule))
    return tuple(rules)


def standing_reservation_days(rules, clock: LogClock, first: float, last: float) -> tuple[tuple, ...]:
    """Each day's reservation of each rule, from the local day of ``first`` to that of ``last``.

    Args:
        rules: the :class:`StandingReservation` rules (:func:`parse_standing_reservations`).
        clock: the log's local clock (:class:`~torus_sim.engine.prime_time.LogClock`).
        first: the workload's first submission, seconds of its clock.
        last: its last submission, seconds.

    Returns:
        One ``(start, end, count, (), False, origin)`` tuple per day a rule names, in time order (the fields of
        :class:`~torus_sim.engine.node_reservations.NodeReservation`: seconds, a count that waits), cut to start no
        earlier than 0; ``origin`` names the rule and the local date.
    """
    if last < first:
        return ()
    held = []
    day, end_day = clock.local(first).date(), clock.local(last).date()
    while day <= end_day:
        for rule in rules:
            if day.weekday() in rule.spec.days:
                start, end = clock.at(day, rule.spec.start), clock.at(day, rule.spec.end)
                if end > 0:
                    held.append((max(start, 0.0), end, rule.count, (), False, f"standing reservation {rule.text} on {day}"))
        day += datetime.timedelta(days=1)
    held.sort(key=lambda row: (row[0], row[1]))
    return tuple(held)
