"""Slurm's multifactor job priority: the queue ordered by age, fair share and size, recomputed every period.

A production queue is not first come, first served. Slurm's ``priority/multifactor`` plugin gives each pending job

    priority = w_age x age + w_fairshare x fairshare + w_size x size

(+ w_queue x queue), each factor in [0, 1] (the QOS, association, nice and TRES factors need fields an SWF log does
not keep):

* age = min(now - submit, max_age) / max_age (``PriorityMaxAge``, 7 days by default); or, with ``age_from =
  "eligible"``, counted from when the job last entered the queue the policy sees: a job a per-user, group or queue
  limit holds gains no age while held, and starts again from 0 when let in (Maui's ``USESYSTEMQUEUETIME`` with
  ``JOBPRIOACCRUALPOLICY QUEUEPOLICY``, whose scheduler resets a job's system queue time at each iteration a
  throttling policy blocks it; LSF's ``INELIGIBLE`` limits);
* fairshare = 2^(-U / S) (Slurm's classic fair-share factor, ``PriorityDampeningFactor`` 1; over users, or over
  accounts, the log's groups, whose users share their usage), with U the user's
  share of all users' decayed usage (node-seconds, halved every ``PriorityDecayHalfLife``, 7 days by default) and
  S = 1 / (users seen so far), every user with the same shares: a user who used nothing gets 1, one who used their
  share 0.5, one who used much more nearly 0; or (``shares = "submitted"``) S = the user's share of the node-seconds
  requested (nodes x requested time) by the jobs submitted so far: shares as allocations that follow what each user
  asks of the machine (Slurm's association ``Fairshare=`` shares, Maui's ``FSTARGET`` per user), so a user is
  ranked by its recent usage against its own long-run demand, not against an equal split;
* size = the job's nodes / the machine's (``PriorityFavorSmall=NO``), or 1 - that (``YES``).
* queue = the tier of the job's queue (SWF field 15) over the highest tier (``PriorityWeightPartition`` with each
  partition's ``PriorityJobFactor``: a site's express queue above its normal one above standby).

Maui's fair-share windows are the alternative to the half-life (``fairshare_windows``): usage is counted in
windows of ``FSINTERVAL`` seconds, the last ``FSDEPTH`` of them, window i back weighted ``FSDECAY^i`` (the window
now at 1); the factor stays 2^(-U/S) over that usage.

Slurm recomputes the factors every ``PriorityCalcPeriod`` (5 minutes by default) and a job's at its submission;
:class:`Multifactor` does the same at the first pass at least ``calc_period`` after the last, and the queue (and
so every policy's head, backfill scan and reservations) follows the new order. Ties go to the earlier submission,
then the lower job id, as Slurm's; with every weight 0 the order is FCFS. Usage accrues while jobs run: the integral
of the nodes a user's jobs hold, each node-second decayed from when it was used (Slurm's decay thread adds it once
per period; here it is exact), and the factors are those of the last recomputation (or of a new user's first
submission) until the next.

References:
    Slurm's documentation, "Multifactor Priority Plugin" (the factors, their weights, PriorityMaxAge,
    PriorityDecayHalfLife, PriorityCalcPeriod, PriorityFavorSmall) and "Classic Fairshare Algorithm"
    (F = 2^(-U/S)); Jackson, Snell and Clement, "Core algorithms of the Maui scheduler", JSSPP 2001 (fair share
    over decayed usage); Maui Scheduler Administrator's Guide §6.3 (FSINTERVAL, FSDEPTH, FSDECAY) and
    Appendix F (USESYSTEMQUEUETIME, JOBPRIOACCRUALPOLICY); IBM Spectrum LSF, lsb.resources, the Limit section's
    ``INELIGIBLE`` parameter.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

from torus_sim.core.errors import ConfigurationError

__all__ = ["AGE_FROM", "SHARES", "Multifactor", "PriorityWeights", "WindowedUsage", "parse_fairshare_windows"]

DAY = 86400.0


@dataclass(frozen=True)
class PriorityWeights:
    """The multifactor priority's settings (Slurm's names in parentheses).

    Attributes:
        age: weight of the age factor (PriorityWeightAge), >= 0.
        fairshare: weight of the fair-share factor (PriorityWeightFairshare), >= 0.
        job_size: weight of the job-size factor (PriorityWeightJobSize), >= 0.
        max_age: seconds of waiting at which the age factor reaches 1 (PriorityMaxAge), > 0.
        half_life: seconds in which recorded usage halves (PriorityDecayHalfLife), > 0.
        calc_period: seconds between recomputations of the factors (PriorityCalcPeriod), > 0.
        favor_small: the size factor favours small jobs (PriorityFavorSmall=YES).
        queue: weight of the queue factor (PriorityWeightPartition: the job's queue tier over the highest), >= 0.
        fairshare_windows: Maui's fair-share windows ``(FSINTERVAL seconds > 0, FSDEPTH >= 1, FSDECAY in (0, 1])``
            instead of the half-life, or None.
        shares: the fair share's S: ``"equal"`` (1 / the owners seen so far) or ``"submitted"`` (the owner's share
            of the node-seconds requested by the jobs submitted so far).
        age_from: ``"submit"``: a job's age counts from its submission; ``"eligible"``: from when it last entered
            the queue the policy sees (a job a limit holds gains no age: :meth:`Multifactor.held`,
            :meth:`Multifactor.let_in`).
    """

    age: float = 0.0
    fairshare: float = 0.0
    job_size: float = 0.0
    max_age: float = 7 * DAY
    half_life: float = 7 * DAY
    calc_period: float = 300.0
    favor_small: bool = False
    queue: float = 0.0
    fairshare_windows: tuple[float, int, float] | None = None
    age_from: str = "submit"
    shares: str = "equal"

    def __post_init__(self) -> None:
        for name in ("age", "fairshare", "job_size", "queue"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < math.inf:
                raise ConfigurationError(f"priority_weight_{name} must be a number >= 0, got {value!r}")
        for name in ("max_age", "half_life", "calc_period"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
                raise ConfigurationError(f"priority_{name} must be positive seconds, got {value!r}")
        if self.shares not in SHARES:
            raise ConfigurationError(f"priority_fairshare_shares must be one of {', '.join(SHARES)}, got {self.shares!r}")
        if self.age_from not in AGE_FROM:
            raise ConfigurationError(f"priority_age_from must be one of {', '.join(AGE_FROM)}, got {self.age_from!r}")
        windows = self.fairshare_windows
        if windows is not None and (not isinstance(windows[1], int) or not _windows_in_range(*windows)):
            raise ConfigurationError(f"priority_fairshare_windows: {_WINDOWS_RANGE}, got {self.fairshare_windows!r}")


SHARES = ("equal", "submitted")
"""What each owner's share of the machine (the S of 2^(-U/S)) may be (:attr:`PriorityWeights.shares`)."""

AGE_FROM = ("submit", "eligible")
"""What a job's age may count from (:attr:`PriorityWeights.age_from`)."""

_WINDOWS_RANGE = "FSINTERVAL seconds > 0, FSDEPTH a whole number >= 1 and FSDECAY in (0, 1]"
"""What Maui's fair-share windows may be (the sentences of :class:`PriorityWeights` and :func:`parse_fairshare_windows`)."""


def _windows_in_range(interval: float, depth, decay: float) -> bool:
    """Whether ``(FSINTERVAL, FSDEPTH, FSDECAY)`` are in ``_WINDOWS_RANGE`` (FSDEPTH a whole number, int or float)."""
    return 0 < interval < math.inf and depth >= 1 and depth == int(depth) and 0 < decay <= 1


def parse_fairshare_windows(text: str) -> tuple[float, int, float]:
    """Read Maui's fair-share windows, ``"FSINTERVAL:FSDEPTH:FSDECAY"`` (``"86400:7:0.8"``: a day, a week of days, 0.8).

    Raises:
        ValueError: not three numbers, or values out of range (FSINTERVAL seconds > 0, FSDEPTH a whole number >= 1,
            FSDECAY in (0, 1]).
    """
    fields = text.split(":")
    try:
        interval, depth, decay = float(fields[0]), float(fields[1]), float(fields[2])
    except (ValueError, IndexError):
        raise ValueError(f"expected FSINTERVAL:FSDEPTH:FSDECAY (as 86400:7:0.8), got {text!r}") from None
    if len(fields) != 3 or not _windows_in_range(interval, depth, decay):
        raise ValueError(f"expected {_WINDOWS_RANGE} (as 86400:7:0.8), got {text!r}")
    return interval, int(depth), decay


class WindowedUsage:
    """Each owner's usage in Maui's fair-share windows: node-seconds per window, the last FSDEPTH of them weighted.

    Args:
        interval: FSINTERVAL, seconds (> 0): window k is ``[k * interval, (k + 1) * interval)`` of the run's clock.
        depth: FSDEPTH (>= 1): the windows counted, the current one included.
        decay: FSDECAY in (0, 1]: window i back (the current one i = 0) weighs ``decay ** i``.

    References:
        Maui Scheduler Administrator's Guide §6.3 (fair share: FSINTERVAL, FSDEPTH, FSDECAY).
    """

    def __init__(self, interval: float, depth: int, decay: float) -> None:
        self.interval, self.depth, self.decay = interval, depth, decay
        self._used: dict[int, dict[int, float]] = defaultdict(dict)  # owner -> window -> node-seconds
        self._totals: dict[int, float] = defaultdict(float)  # window -> every owner's node-seconds
        self._pruned = -1  # the window the last prune was at

    def add(self, owner: int, nodes: int, since: float, now: float) -> None:
        """``nodes`` held by ``owner`` from ``since`` to ``now`` (seconds), split over the windows they cross."""
        used = self._used[owner]
        interval = self.interval
        start = since
        while start < now:
            window = int(start // interval)
            end = min(now, (window + 1) * interval)
            used[window] = used.get(window, 0.0) + nodes * (end - start)
            self._totals[window] += nodes * (end - start)
            start = end

    def usage(self, owner: int, now: float) -> float:
        """``owner``'s weighted usage at ``now``: the sum over the last ``depth`` windows of ``decay ** i`` x node-seconds."""
        used = self._used.get(owner)
        if not used:
            return 0.0
        current = int(now // self.interval)
        return sum(used.get(current - back, 0.0) * self.decay**back for back in range(self.depth))

    def total(self, now: float) -> float:
        """Every owner's weighted usage at ``now`` (the sum of :meth:`usage` over the owners)."""
        current = int(now // self.interval)
        return sum(self._totals.get(current - back, 0.0) * self.decay**back for back in range(self.depth))

    def prune(self, now: float) -> None:
        """Forget the windows no longer counted at ``now`` (once per window)."""
        current = int(now // self.interval)
        if current == self._pruned:
            return
        self._pruned = current
        oldest = current - self.depth + 1
        for used in self._used.values():
            for window in [window for window in used if window < oldest]:
                del used[window]
        for window in [window for window in self._totals if window < oldest]:
            del self._totals[window]


class Multifactor:
    """The run's job priorities: each user's decayed usage, the factors, the queue's key.

    Usage is kept scaled to a reference time t0 (a user's usage at t is ``scaled x 2^(-(t - t0) / half_life)``), so
    decaying every user's usage costs nothing and a user's share of the total is the ratio of scaled values; t0
    moves forward when the scale grows large. Usage accrues exactly (the integral of the held nodes, decayed).

    Args:
        weights: the :class:`PriorityWeights`.
        capacity: the machine's nodes (the size factor's denominator).
        queue_factors: job id -> queue factor in [0, 1] (``weights.queue``), or None.
        accounts: user -> account (the log's group): the fair share over accounts, whose users share its usage
            (Slurm's fair share by account, Maui's group fair share); None: over users.

    Attributes:
        recomputed: recomputations of the factors so far.
    """

    def __init__(self, weights: PriorityWeights, capacity: int, queue_factors=None, accounts=None) -> None:
        if weights.queue and queue_factors is None:
            raise ConfigurationError("priority_weight_queue needs each job's queue factor (priority_queue_tiers and an SWF log)")
        self.weights = weights
        self.capacity = capacity
        self._queue_factors = queue_factors or {}
        self._accounts = accounts  # user -> the account (group) whose usage is shared, or None: each user its own
        self._rate = math.log(2.0) / weights.half_life
        self._t0 = 0.0  # the scale's reference time
        self._scaled: dict[int, float] = defaultdict(float)  # user -> usage scaled to t0
        self._total = 0.0  # their sum
        self._nodes: dict[int, int] = defaultdict(int)  # user -> nodes its running jobs hold now
        self._since: dict[int, float] = {}  # user -> when its usage was last accrued
        self._running: dict[int, tuple[int, int]] = {}  # running job id -> (user, nodes)
        self._waiting: dict[int, int] = defaultdict(int)  # user -> its jobs waiting now
        self._active: set[int] = set()  # users with running jobs
        self._queued: set[int] = set()  # users with waiting jobs
        self._factor: dict[int, float] = {}  # user -> fair-share factor since the last recomputation (or its submission)
        self._users: set[int] = set()
        self._terms: dict[int, tuple[float, float, int]] = {}  # waiting job id -> (size term, queue term, owner)
        self._at = -math.inf  # the last recomputation
        self.recomputed = 0
        # age_from "eligible": waiting job id -> when its age starts (inf while a limit holds it); a job not in it
        # ages from its submission
        self._age_start: dict[int, float] | None = {} if weights.age_from == "eligible" else None
        # shares "submitted": owner -> node-seconds requested by its jobs so far (each job once, at its first entry)
        self._asked: dict[int, float] | None = defaultdict(float) if weights.shares == "submitted" else None
        self._asked_total = 0.0
        windows = weights.fairshare_windows
        self._windows = None if windows is None else WindowedUsage(*windows)  # Maui's windows instead of the half-life

    def _fair_share(self, user: int) -> float:
        factor = self._factor.get(user)
        if factor is None:
            total = self._total
            if total > 0:  # with the windows, only after a recomputation (its time is the windows' now)
                used = self._scaled.get(user, 0.0) if self._windows is None else self._windows.usage(user, self._at)
                asked = 0.0 if self._asked is None else self._asked.get(user, 0.0)
                if asked > 0.0:  # S: the owner's share of the node-seconds asked so far
                    factor = 2.0 ** (-(used / total) / (asked / self._asked_total))
                else:
                    factor = 2.0 ** (-(used / total) * len(self._users))
            else:
                factor = 1.0
            self._factor[user] = factor
        return factor

    def key(self, job) -> tuple[float, float, int]:
        """The queue's key of ``job`` (smaller first): minus its priority as of the last recomputation, then submit, id.

        A job's size and queue terms and its owner do not change while it waits: they are computed at its first key
        and kept until it starts (:meth:`terms`); a queue reordered at every recomputation asks each waiting job's key
        again (:meth:`keys`, the same arithmetic).

        Args:
            job: a waiting job, or one entering the queue.

        Returns:
            tuple: ``(-priority, submitted_at in seconds, job_id)``.
        """
        return self.keys((job,))[0]

    def keys(self, jobs) -> list[tuple[float, float, int]]:
        """The keys of ``jobs`` (:meth:`key` of each), in their order: a reorder's, all at once, the weights read once.

        Args:
            jobs: waiting jobs.

        Returns:
            list: one key per job.
        """
        weights = self.weights
        w_age, w_fairshare, max_age = weights.age, weights.fairshare, weights.max_age
        at, kept, factors, keyed = self._at, self._terms, self._factor, []
        append = keyed.append
        aged = w_age * max_age / max_age  # the age term at the maximum age, as w_age x age / max_age makes it
        # every term is >= 0 and a term whose weight is 0 is 0.0, which adds nothing: the sums are the same bits
        # as with each term added only where its weight is not 0
        starts = self._age_start
        for job in jobs:
            terms = kept.get(job.job_id)
            if terms is None:
                terms = self.terms(job)
            submitted = job.submitted_at
            age = at - submitted if starts is None else at - starts.get(job.job_id, submitted)
            priority = w_age * age / max_age if 0.0 < age < max_age else 0.0 if age <= 0.0 else aged
            if w_fairshare:
                factor = factors.get(terms[2])
                priority += w_fairshare * (factor if factor is not None else self._fair_share(terms[2]))
            append((-(priority + terms[0] + terms[1]), submitted, job.job_id))
        return keyed

    def ageless_key(self, job) -> tuple[float, float, int]:
        """``job``'s place among its own user's waiting jobs without the age: minus its size and queue terms, submit, id.

        With ``age_from = "eligible"`` a job a limit holds has no age to rank it by: the limits let a user's jobs in in
        this order (the user's jobs share the fair-share factor), which does not change while they wait.

        Args:
            job: a waiting job.

        Returns:
            tuple: ``(-(w_size x size + w_queue x queue), submitted_at in seconds, job_id)``.
        """
        terms = self._terms.get(job.job_id)
        if terms is None:
            terms = self.terms(job)
        return (-(terms[0] + terms[1]), job.submitted_at, job.job_id)

    def terms(self, job) -> tuple[float, float, int]:
        """``job``'s weighted size term, weighted queue term and owner (whose usage its fair share reads), kept while it waits.

        Args:
            job: a job in the queue or entering it.

        Returns:
            tuple: ``(w_size x size factor, w_queue x queue factor, owner)``; the terms are 0.0 where their weight is.
        """
        weights = self.weights
        terms = (
            self._size_term(job) if weights.job_size else 0.0,
            self._queue_term(job) if weights.queue else 0.0,
            self._owner(job.user_id),
        )
        self._terms[job.job_id] = terms
        return terms

    @property
    def reorders_a_users_jobs(self) -> bool:
        """Whether one user's waiting jobs change order as they age (a size or a queue weight beside the age's)."""
        return bool(self.weights.job_size or self.weights.queue)

    @property
    def ages_from_eligibility(self) -> bool:
        """Whether a job's age counts from when it last entered the queue (``age_from = "eligible"``)."""
        return self._age_start is not None

    def held(self, job) -> None:
        """A limit took ``job`` out of the queue: with ``age_from = "eligible"`` it gains no age until let in again."""
        if self._age_start is not None:
            self._age_start[job.job_id] = math.inf

    def let_in(self, job, now: float) -> None:
        """A limit let ``job`` into the queue at ``now`` (seconds): with ``age_from = "eligible"`` its age counts from now."""
        if self._age_start is not None:
            self._age_start[job.job_id] = now

    def _size_term(self, job) -> float:
        weights = self.weights
        share = job.partition_size / self.capacity
        share = share if share < 1.0 else 1.0
        return weights.job_size * (1.0 - share if weights.favor_small else share)

    def _queue_term(self, job) -> float:
        return self.weights.queue * self._queue_factors.get(job.job_id, 0.0)

    def _owner(self, user: int) -> int:
        """Whose usage ``user``'s jobs share: the user, or its account (a user the map does not name: its own)."""
        if self._accounts is None:
            return user
        account = self._accounts.get(user)
        return -2 - user if account is None else account

    def user_phase(self, job) -> tuple[int, tuple]:
        """Where ``job`` stands among its own user's waiting jobs, as of the last recomputation.

        One user's jobs share the fair-share factor, so their order is that of w_age x age + w_size x size (+ w_queue
        x queue) alone.
        That order is fixed within each of three phases of a job's wait: a job submitted since the last
        recomputation (age 0; phase 0) and a job at the maximum age (the age factor 1; phase 2) go by size, then
        submission; a job in between (phase 1) by w_size x size - w_age x submit / max_age, which orders the phase's
        jobs as their priorities do at every recomputation (each gains the same age). So a user's waiting jobs are
        kept in three fixed orders, merged by :meth:`key` when they are read, and moved from phase to phase at a
        recomputation (:class:`~torus_sim.engine.limits.UserLimits`), instead of sorting them all again.

        Args:
            job: a waiting job.

        Returns:
            tuple: ``(phase, key)``: the phase (0, 1 or 2) and the job's key within it (smaller first).
        """
        weights = self.weights
        terms = self._terms.get(job.job_id)
        if terms is None:
            terms = self.terms(job)
        size = terms[0]
        if weights.queue:
            size += terms[1]
        if weights.age:
            age = self._at - job.submitted_at
            if age < weights.max_age:
                if age > 0.0:
                    return 1, (weights.age * job.submitted_at / weights.max_age - size, job.submitted_at, job.job_id)
                return 0, (-size, job.submitted_at, job.job_id)
        return 2, (-size, job.submitted_at, job.job_id)

    def waiting(self, job) -> None:
        """A job entered the queue: its user counts among the users that share the machine."""
        owner = self._owner(job.user_id)
        self._users.add(owner)
        self._waiting[owner] += 1
        self._queued.add(owner)
        if self._asked is not None and not job.attempts:  # its first entry: what it asks counts once
            requested = job.walltime if 0.0 < job.walltime < math.inf else job.runtime
            self._asked[owner] += job.partition_size * requested
            self._asked_total += job.partition_size * requested

    def _accrue(self, user: int, now: float) -> None:
        since = self._since.get(user)
        nodes = self._nodes[user]
        if since is not None and nodes and now > since:
            if self._windows is not None:
                self._windows.add(user, nodes, since, now)
            else:
                rate, t0 = self._rate, self._t0
                used = nodes * (math.exp(rate * (now - t0)) - math.exp(rate * (since - t0))) / rate  # decayed, scaled
                self._scaled[user] += used
                self._total += used
        self._since[user] = now

    def started(self, job, nodes: int, now: float) -> None:
        """A job started holding ``nodes`` nodes at ``now`` (seconds): its user's usage grows while it runs."""
        user = self._owner(job.user_id)
        self._terms.pop(job.job_id, None)
        if self._age_start is not None:  # back in the queue after a kill or a preemption, it ages from its submission
            self._age_start.pop(job.job_id, None)
        self._waiting[user] -= 1
        if not self._waiting[user]:
            self._queued.discard(user)
        self._accrue(user, now)
        self._nodes[user] += nodes
        self._active.add(user)
        self._running[job.job_id] = (user, nodes)

    def stopped(self, job_id: int, now: float) -> None:
        """A running job stopped at ``now`` (ended, killed or preempted): its usage up to now is its user's."""
        user, nodes = self._running.pop(job_id)
        self._accrue(user, now)
        self._nodes[user] -= nodes
        if not self._nodes[user]:
            self._active.discard(user)

    def due(self, now: float) -> bool:
        """Whether the factors are due for recomputation at ``now`` (a calc period since the last)."""
        return now >= self._at + self.weights.calc_period

    def recompute(self, now: float) -> None:
        """Accrue the running jobs' usage to ``now`` and make the fair-share factors of the users with waiting jobs."""
        if self._rate * (now - self._t0) > 300.0:  # move the reference time forward before the scale overflows
            shrink = math.exp(-self._rate * (now - self._t0))
            for user in self._scaled:
                self._scaled[user] *= shrink
            self._total *= shrink
            self._t0 = now
        for user in self._active:
            self._accrue(user, now)
        if self._windows is not None:  # the weighted usage of the windows counted now is the fair share's usage
            self._windows.prune(now)
            self._total = self._windows.total(now)
        self._at = now
        self._factor = {}
        if self.weights.fairshare:
            for user in self._queued:
                self._fair_share(user)
        self.recomputed += 1
