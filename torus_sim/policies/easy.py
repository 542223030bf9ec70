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

Jobs that end at the same instant: on a cluster they are released one at a time in (predicted end,
rank) order and the shadow time is the first release that frees enough nodes, the extra nodes being
counted there, as PV-EASY's count-based code does (bit for bit the numbers of docs/pv_easy); on the
torus every job ending at the shadow instant is released at once (Krevat's planner), which can leave
more room for backfilling at that instant.
"""

from __future__ import annotations

from torus_sim.errors import ConfigurationError
from torus_sim.policies.availability import availability_profile
from torus_sim.policies.backfilling import easy_pass, start_in_order
from torus_sim.policies.base import Policy, Reserve, Start
from torus_sim.policies.krevat import KrevatScheduler

__all__ = ["ConservativePolicy", "EasyPolicy", "FcfsPolicy", "easy_pass", "start_in_order"]


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
        order: ``fcfs`` (FCFS-EASY) or ``sjf`` (SJF-EASY) candidates.
        placement: which partition / nodes a job gets (MFP / lowest free ids when None).

    Raises:
        ConfigurationError: an unknown order.

    References:
        Lifka (EASY); Mu'alem and Feitelson, IEEE TPDS 12(6), 2001; PV-EASY §3, §5.2.2.
    """

    starts_head_when_it_fits = True

    def __init__(self, order: str = "fcfs", placement=None) -> None:
        if order not in ("fcfs", "sjf"):
            raise ConfigurationError(f"EASY candidate order must be 'fcfs' or 'sjf', got {order!r}")
        self.order = order
        self.placement = placement
        self.name = "SJF-EASY" if order == "sjf" else "FCFS-EASY"

    def plan(self, view):
        """Start in order, then reserve for the head and backfill.

        On the torus with FCFS candidates the pass is Krevat's torus planner without migration, fed
        with the run's runtime predictions: the same EASY rules, with per-size candidate lists that
        keep a pass short when failures make the queue long.
        """
        if self.order == "fcfs" and view.platform.kind == "torus":
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
        return easy_pass(self, view, self.order, self.placement)

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
    torus a reservation is a partition free over the job's whole predicted window.

    References:
        Mu'alem and Feitelson, IEEE TPDS 12(6), 2001; RIGID §4.1 (m = |Q|).
    """

    name = "conservative"
    starts_head_when_it_fits = True

    def __init__(self, placement=None) -> None:
        self.placement = placement

    def plan(self, view):
        """Reserve for every waiting job; start those whose reservation is now."""
        now = view.now
        profile = availability_profile(view, [(view.predicted_end(job), job) for job in view.running.values()], self.placement)
        cluster = view.platform.kind == "cluster"
        starting = []
        for position, job in enumerate(view.queue.jobs()):
            duration = max(view.predicted_remaining(job), 1e-9)
            start_at, where = profile.earliest(job.partition_size, duration)
            profile.reserve(start_at, duration, job.partition_size, where)
            if position == 0:
                yield Reserve(job, start_at)
            if start_at <= now:
                starting.append((job, where))
        for job, where in starting:
            yield Start(job, view.place(job, placement=self.placement) if cluster else where)
