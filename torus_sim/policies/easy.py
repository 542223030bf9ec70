"""FCFS, EASY backfilling (FCFS or SJF candidates) and conservative backfilling, on a cluster or the torus.

The priority is the submission order (FCFS). Backfilling uses the run's runtime predictor through
the view: the user estimate for plain EASY, the Last Model for EASY-Last, the virtual predictor for
the comparisons of PV-EASY §5.2.2 (the walltime when the run has none). The requested time stays
the kill time.

On the torus "fits" means a free partition of the job's size (placed by the MFP heuristic or the
policy's placement), and EASY's reservation is a partition: a job that would still run at the head's
shadow time may start only where it leaves the head a free partition then, as Krevat's backfilling
does (BGL-FAULT §5.1). On a cluster it is the count of free nodes, and the same rule is EASY's
"extra nodes".

Jobs that end at the same instant: by default (``extra = "textbook"``, Lifka; Mu'alem and Feitelson
2001) every job predicted to end by the shadow time frees its nodes then, so the extra nodes count
them all; this is what CQSim does (job for job on CTC-SP2 and SDSC-SP2, docs/validation). With
``extra = "pv-easy"`` (the scenario's ``easy_extra``) a cluster releases them one at a time in
(predicted end, rank) order and counts the extra nodes at the first release that frees enough, as
PV-EASY's count-based code does (bit for bit the numbers of docs/pv_easy). FCFS-EASY on the torus is
Krevat's planner, which releases every job of the shadow instant at once under either reading.
"""

from __future__ import annotations

import numpy as np

from torus_sim.core.errors import ConfigurationError
from torus_sim.policies.backfilling import easy_pass, start_in_order
from torus_sim.policies.base import Policy, Reserve, Start
from torus_sim.policies.krevat import KrevatScheduler
from torus_sim.policies.reservations import compiled_count_profile, reservation_pass

EASY_EXTRA = ("textbook", "pv-easy")
"""Readings of EASY's extra nodes: every job predicted to end by the shadow time frees its nodes then
(textbook: Lifka; Mu'alem and Feitelson 2001; CQSim), or only the jobs up to the one that makes the head
fit (PV-EASY's count-based code)."""

DEFAULT_EASY_EXTRA = "textbook"
"""The reading FCFS-EASY and EASY-SJBF use unless told (the scenario's ``easy_extra``)."""

__all__ = ["ConservativePolicy", "EasyPolicy", "FcfsPolicy", "compiled_count_profile", "easy_pass", "start_in_order"]


class FcfsPolicy(Policy):
    """First come, first served, no backfilling: the baseline of PV-EASY §5 and of backfilling studies."""

    name = "FCFS"
    starts_head_when_it_fits = True

    def plan(self, view):
        """Start jobs in order while the first one fits."""
        return start_in_order(view, self.placement)


class EasyPolicy(Policy):
    """EASY backfilling: a reservation for the first blocked job, backfill what does not delay it.

    Args:
        order: the backfill candidates' order: ``fcfs`` (FCFS-EASY: queue order) or ``sjf`` (EASY-SJBF:
            shortest predicted remaining time first, rank breaking ties; PV-EASY §5.2.2 calls it SJF-EASY).
            The queue, and so the head that gets the reservation, is in FCFS order either way.
        placement: which partition / nodes a job gets (MFP / lowest free ids when None).
        extra: ``textbook`` (every job predicted to end by the shadow time counts toward the extra
            nodes) or ``pv-easy`` (only those up to the one that makes the head fit).
        bf_interval: seconds: the reservation and the backfill scan run at the first pass at least this long
            after the last one that ran them; the passes between only start jobs in order (Slurm's
            ``bf_interval``: its backfill scheduler runs on a timer, its main scheduler at events; here the
            backfill waits for a pass, so for an event). None: at every pass (the textbook EASY).
        bf_max_job_test: the backfill scan tests at most this many waiting jobs after the head, in its
            order (Slurm's ``bf_max_job_test``). None: every waiting job. Clusters only.
        bf_window: seconds: a head whose shadow time is further ahead than this gets no reservation, and every
            job that fits now is backfilled (Slurm's ``bf_window``, there in minutes: no job is planned beyond
            it). None: no window. Clusters only.
        bf_resolution: seconds: the shadow time rounds up to a multiple of this on the run's clock (Slurm's
            ``bf_resolution``: job ends kept in blocks of that many seconds), so a candidate ending in the head's
            last block is backfilled and may delay the head by less than a block. None: exact times. Clusters only.

    Raises:
        ConfigurationError: an unknown order or reading of the extra nodes; a ``bf_interval``, ``bf_window`` or
            ``bf_resolution`` that is not positive seconds or a ``bf_max_job_test`` below 1.

    References:
        Lifka (EASY); Mu'alem and Feitelson, IEEE TPDS 12(6), 2001; Tsafrir, Etsion and Feitelson,
        IEEE TPDS 18(6), 2007 (EASY-SJBF); PV-EASY §3, §5.2.2.
    """

    starts_head_when_it_fits = True

    def __init__(
        self,
        order: str = "fcfs",
        placement=None,
        extra: str = DEFAULT_EASY_EXTRA,
        bf_interval: float | None = None,
        bf_max_job_test: int | None = None,
        bf_window: float | None = None,
        bf_resolution: float | None = None,
    ) -> None:
        if order not in ("fcfs", "sjf"):
            raise ConfigurationError(f"EASY candidate order must be 'fcfs' or 'sjf', got {order!r}")
        if extra not in EASY_EXTRA:
            raise ConfigurationError(f"EASY's extra nodes are 'textbook' or 'pv-easy', got {extra!r}")
        for name, value, unset in (
            ("bf_interval", bf_interval, "every pass"),
            ("bf_window", bf_window, "no window"),
            ("bf_resolution", bf_resolution, "exact times"),
        ):
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < np.inf):
                raise ConfigurationError(f"{name} must be positive seconds (or unset: {unset}), got {value!r}")
        if bf_max_job_test is not None and (
            isinstance(bf_max_job_test, bool) or not isinstance(bf_max_job_test, int) or bf_max_job_test < 1
        ):
            raise ConfigurationError(f"bf_max_job_test must be an integer >= 1 (or unset: every job), got {bf_max_job_test!r}")
        self.order = order
        self.placement = placement
        self.extra = extra
        self.bf_interval = None if bf_interval is None else float(bf_interval)
        self.bf_max_job_test = bf_max_job_test
        self.bf_window = None if bf_window is None else float(bf_window)
        self.bf_resolution = None if bf_resolution is None else float(bf_resolution)
        self._last_backfill = -np.inf
        self.name = "EASY-SJBF" if order == "sjf" else "FCFS-EASY"

    def settings(self) -> str:
        """The reading of the extra nodes and Slurm's backfill settings, when they are not the defaults."""
        parts = [] if self.extra == DEFAULT_EASY_EXTRA else [f"extra nodes: {self.extra}"]
        if self.bf_interval is not None:
            parts.append(f"backfill every {self.bf_interval:g} s")
        if self.bf_max_job_test is not None:
            parts.append(f"at most {self.bf_max_job_test:,} jobs tested")
        if self.bf_window is not None:
            parts.append(f"reservations within {self.bf_window:g} s")
        if self.bf_resolution is not None:
            parts.append(f"times in blocks of {self.bf_resolution:g} s")
        return ", ".join(parts)

    def why_unsupported(self, platform, workload) -> str | None:
        """Slurm's ``bf_max_job_test``, ``bf_window`` and ``bf_resolution`` are for clusters (the torus planner is Krevat's)."""
        for name in ("bf_max_job_test", "bf_window", "bf_resolution"):
            if getattr(self, name) is not None and platform.table is not None:
                return f"{name} applies to clusters (the torus planner scans each partition size's jobs)"
        return super().why_unsupported(platform, workload)

    def plan(self, view):
        """Start in order, then reserve for the head and backfill.

        On the torus with FCFS candidates the pass is Krevat's torus planner without migration, fed
        with the run's runtime predictions: the same EASY rules, with per-size candidate lists that
        keep a pass short when failures make the queue long.
        """
        if self.bf_interval is not None:
            if view.now < self._last_backfill + self.bf_interval:
                return start_in_order(view, self.placement)  # the main scheduler's pass: in order only
            self._last_backfill = view.now
        if self.order == "fcfs" and view.platform.table is not None:
            planner = self._torus_planner()
            actions = planner.plan_torus(
                view.now,
                view.queue,
                list(view.running.values()),
                view.platform,
                view.predicted_end,
                view.predicted_remaining,
            )
            if planner.reservation is not None:
                actions.append(Reserve(planner._reserved_job, planner.reservation[1]))
            return actions
        return easy_pass(
            self,
            view,
            self.order,
            self.placement,
            together=self.extra == "textbook",
            max_tested=self.bf_max_job_test,
            window=self.bf_window,
            resolution=self.bf_resolution,
        )

    def _torus_planner(self):
        if getattr(self, "_planner", None) is None:
            self._planner = KrevatScheduler(self.placement, backfill=True, migration=False)
        return self._planner

    @property
    def size_index(self) -> str | None:
        """The torus planner searches each size's jobs by the run's predicted remaining times (FCFS candidates)."""
        return "predicted" if self.order == "fcfs" else None

    @property
    def queue_columns(self) -> str:
        """The backfill scan on a count cluster reads the queue's columns (SJF: in SJF order too)."""
        return "shortest" if self.order == "sjf" else "queue"

    @property
    def queue_by_size(self) -> bool:
        """The torus planner reads the queue's per-size lists."""
        return self.order == "fcfs"


class ConservativePolicy(Policy):
    """Conservative backfilling: every waiting job gets a reservation, in priority order, on the predicted profile.

    A job starts when its reservation is now; reservations are recomputed at every pass. On the
    torus a reservation is a partition free over the job's whole predicted window. On a cluster the
    pass runs in compiled code over the queue's and the running jobs' numpy columns
    (:mod:`torus_sim.policies.count_reservations`: the same reservations, start for start; with node
    identities the profile counts nodes too, down nodes coming back at their known repair times, and
    the placement picks the nodes of each job that starts).

    References:
        Mu'alem and Feitelson, IEEE TPDS 12(6), 2001; RIGID §4.1 (m = |Q|).
    """

    name = "conservative"
    starts_head_when_it_fits = True

    def __init__(self, placement=None) -> None:
        self.placement = placement
        self._pass = None  # the platform's reservation pass (reservations.reservation_pass), made at the first pass
        self._platform = None  # the platform it was made for

    @property
    def queue_columns(self) -> str:
        """On a cluster (counts or node ids) and on the torus every pass reads every waiting job's size and predicted run time as columns: kept at any length."""
        return "always"

    def plan(self, view):
        """Reserve for every waiting job on the platform's profile; start those whose reservation is now."""
        if not view.queue:
            return ()
        if self._pass is None or self._platform is not view.platform:
            self._pass, self._platform = reservation_pass(view.platform, "predicted", self.placement), view.platform
        queue = view.queue
        columns = queue.columns
        if columns is not None:  # the sizes and predicted remaining times taken as each job entered the queue
            jobs, sizes, durations = columns.jobs, columns.sizes, columns.remaining
        else:
            jobs = queue.jobs()
            remaining = view.remaining_estimator()
            sizes = np.fromiter((job.partition_size for job in jobs), dtype=np.int64, count=len(jobs))
            durations = np.fromiter((remaining(job) for job in jobs), dtype=np.float64, count=len(jobs))
        reserved = self._pass.reserve(view, jobs, sizes, durations)
        reservation = Reserve(jobs[0], reserved.head_at)
        if not reserved.starting:  # nothing starts: nothing to apply first
            self._pass.started(view)
            return (reservation,)
        wheres = reserved.wheres
        if not reserved.after and wheres[0] is not None:  # every allocation known, nothing kept: one list
            return [reservation, *map(Start, [jobs[position] for position in reserved.starting], wheres)]
        # the jobs named before any start is applied (the queue's columns change as each start is)
        starting = [(jobs[position], where) for position, where in zip(reserved.starting, reserved.wheres, strict=True)]
        return self._started(view, reservation, starting)

    def _started(self, view, reservation, starting: list):
        """The head's reservation, then a Start for each job due now (on the profile's partition, or the nodes the placement picks once the earlier starts are applied)."""
        yield reservation
        for job, where in starting:
            yield Start(job, view.place(job, placement=self.placement) if where is None else where)
        self._pass.started(view)
