"""The one policy interface: a policy reads a read-only view and returns actions.

Every scheduling policy of the project (Krevat's FCFS + backfilling + migration with its placements,
FCFS / EASY / conservative / PV-EASY, R-LIST and R-SHELF, LIST with a moldable allocation,
BATCH-LIST) subclasses :class:`Policy`. At each scheduling pass the engine calls
:meth:`Policy.plan` with a :class:`~torus_sim.engine.view.SchedulingView` and applies the actions it returns,
in order:

* :class:`Start`: start a waiting job now on an allocation the platform gave (a partition id on the
  torus; node ids or a node count on a cluster);
* :class:`Preempt`: take a running job's nodes back; it returns to the queue at its priority;
* :class:`Repack`: migrate running jobs to new allocations (Krevat's migration);
* :class:`Reserve`: note the reservation a policy gives the blocked head (for the record and the
  fairness checks; it changes nothing in the schedule).

``plan`` may return a list (everything planned on a scratch copy, as Krevat does) or be a generator:
the engine applies each action as it is yielded, so the live view shows its effect before the next
one (as the online policies are written: start, then look again). A policy never changes the
engine's state, never advances time and never touches the platform; its own bookkeeping (a cache,
the current shelf, BATCH-LIST's batch) is its business.

Each policy declares what it supports (:attr:`Policy.platforms`, :attr:`Policy.workloads`,
:attr:`Policy.moldable`); :meth:`Policy.check_supports` refuses anything else with a sentence.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, NamedTuple

from torus_sim.core.errors import ConfigurationError
from torus_sim.core.job import fcfs_key

if TYPE_CHECKING:
    from torus_sim.core.job import Job
    from torus_sim.policies.context import PolicyView

__all__ = ["Policy", "Preempt", "Repack", "Reserve", "Start", "check_declarations", "fcfs_key"]


class Start(NamedTuple):
    """Start a queued job now.

    Attributes:
        job: the job (QUEUED).
        allocation: the platform's handle for the nodes (partition id, node ids or a node count).
        size: moldable jobs: the processors p of this attempt (rigid: None).
        runtime: moldable jobs: t_j(p), seconds (rigid: None, the job's runtime).
    """

    job: Job
    allocation: object
    size: int | None = None
    runtime: float | None = None


class Preempt(NamedTuple):
    """Take a running job's nodes back now; it waits again at its priority (PV-EASY §4.2)."""

    job: Job


class Repack(NamedTuple):
    """Migrate running jobs: each ``(job, new allocation)``; all old allocations are released first."""

    moves: tuple


class Reserve(NamedTuple):
    """The reservation (seconds) a policy gives a waiting job, usually the blocked head."""

    job: Job
    at: float


class Policy:
    """Base class of scheduling policies.

    Attributes a subclass sets:
        name: the policy's name as scenario files give it.
        platforms: platform kinds it runs on (``"torus"``, ``"cluster"``).
        workloads: workload kinds it runs (``"online"``: arrivals over time; ``"batch"``: released at 0).
        moldable: whether it chooses the processors of moldable jobs (rigid jobs are always fine
            unless ``rigid`` is False).
        pass_after_each_end: run a pass after every attempt end, one at a time, as RIGID Alg. 1's
            "whenever a job completes" (otherwise one pass per instant, after every event of it).
        starts_head_when_it_fits: the engine checks after each pass that the first waiting job
            does not fit (true of every policy that serves the head first).
        needs_node_identities: its placement tells nodes apart (fault-aware placement on a cluster).
        queue_by_size: the wait queue keeps per-size lists (:meth:`~torus_sim.engine.wait_queue.WaitQueue.of_size`).
        queue_columns: the wait queue keeps numpy columns of sizes and predicted remaining times
            (:meth:`~torus_sim.engine.wait_queue.WaitQueue.keep_columns`): ``"queue"`` in queue order while the
            queue is long, ``"shortest"`` also in SJF order, ``"always"`` in queue order at every length (a pass
            that reads every waiting job at every pass: conservative backfilling's, on every platform); None:
            none (the count cluster's passes of EASY and PV-EASY read them too, and check the platform).
        size_index: on the torus, the wait queue keeps each size's jobs searchable by remaining time
            (:meth:`~torus_sim.engine.wait_queue.WaitQueue.keep_size_index`): ``"walltime"`` or
            ``"predicted"`` (the run's predictions); None: none. Only with the default (FCFS) queue key.
        shadow_load: it asks :meth:`~torus_sim.engine.view.SchedulingView.held_above` (PV-EASY): on a count
            cluster the engine keeps the running jobs' sizes by rank for it.
        passes_at_price_changes: with power accounting, a pass that leaves jobs waiting is followed by
            one at the tariff's next price change (a policy that holds jobs for cheaper hours).
        passes_at_own_times: a pass that leaves jobs waiting is followed by one at
            :meth:`next_pass_after` (a policy whose own limits change over time: a power cap's schedule).

    Hooks a subclass overrides:
        plan(view) -> iterable of actions (required).
        queue_key(job): the wait queue's order (FCFS by default), a key unique to the job (end it
            with the job id or rank); evaluated when a job is queued.
        attach(context): called once before any event with the run's
            :class:`~torus_sim.policies.context.PolicyContext` (its jobs, generator, platform, workload facts,
            failure log, power inputs), never the engine; a policy that draws random numbers or precomputes
            keys does it here.
        observe_failure(at, node): a fail-stop failure happened (for predictors that learn).
        why_unsupported(platform, workload): a sentence when the combination cannot run, else None.
        settings(): its settings in a few words for the run's header.
        next_pass_after(now): with ``passes_at_own_times``, the time (seconds) of the next pass it wants
            while jobs wait, or None.
    """

    name = "policy"
    platforms: tuple[str, ...] = ("torus", "cluster")
    workloads: tuple[str, ...] = ("online", "batch")
    moldable = False
    rigid = True
    pass_after_each_end = False
    starts_head_when_it_fits = False
    needs_node_identities = False
    queue_by_size = False
    queue_columns: str | None = None
    shadow_load = False
    passes_at_price_changes = False
    passes_at_own_times = False
    size_index: str | None = None
    placement = None

    def queue_key(self, job: Job):
        """Sort key of a waiting job (smaller = served first): FCFS (:func:`fcfs_key`)."""
        return fcfs_key(job)

    def attach(self, context) -> None:
        """Receive the run's context (jobs, ``rng``, ``failure_log``, ``platform``, ...) once, before any event.

        Args:
            context: the :class:`~torus_sim.policies.context.PolicyContext` of the run.

        A built-in placement that declares ``uses_power_states`` (:class:`~torus_sim.policies.warm_placement.WarmPlacement`)
        gets the run's switched-off node states (``context.power_states``, None without switching off).
        """
        if self.placement is not None:
            self.placement.attach(context.failure_log, context.rng, context.platform.capacity)
            if getattr(self.placement, "uses_power_states", False) is True:
                self.placement.power_states = context.power_states

    def observe_failure(self, at: float, node: int) -> None:
        """A fail-stop failure of ``node`` at ``at`` seconds (passed on to the placement's predictor)."""
        if self.placement is not None:
            self.placement.observe_failure(at, node)

    def next_pass_after(self, now: float) -> float | None:
        """The time (seconds, > ``now``) of the next pass this policy wants while jobs wait, or None.

        Read only when ``passes_at_own_times`` (after a pass that leaves jobs waiting).
        """
        return None

    def plan(self, view: PolicyView) -> Iterable:
        """The actions of one scheduling pass, in the order to apply them."""
        raise NotImplementedError

    def settings(self) -> str:
        """The policy's own settings in a few words for a run's header (``backfill on, migration off``), or ""."""
        return ""

    def why_unsupported(self, platform, workload) -> str | None:
        """Why this policy cannot run on ``platform`` with ``workload``, or None when it can."""
        if platform.kind not in self.platforms:
            return f"{self.name} runs on {' and '.join(self.platforms)} platforms, not on a {platform.kind}"
        if workload.kind not in self.workloads:
            return f"{self.name} schedules {' and '.join(self.workloads)} workloads, not a {workload.kind} one"
        moldable = workload.times is not None  # a moldable workload carries its jobs' time tables
        if moldable and not self.moldable:
            return f"{self.name} schedules rigid jobs; this workload has moldable jobs (choose LPA, MINTIME, MINAREA or BATCH)"
        if not moldable and not self.rigid:
            return f"{self.name} chooses allocations for moldable jobs; this workload has rigid jobs"
        return None

    def check_supports(self, platform, workload) -> None:
        """Raise ConfigurationError with :meth:`why_unsupported`'s sentence, if any."""
        reason = self.why_unsupported(platform, workload)
        if reason:
            raise ConfigurationError(reason)


_DECLARED_NAMES = {"platforms": ("torus", "cluster"), "workloads": ("online", "batch")}
_DECLARED_FLAGS = (
    "moldable",
    "rigid",
    "pass_after_each_end",
    "starts_head_when_it_fits",
    "needs_node_identities",
    "queue_by_size",
    "shadow_load",
    "passes_at_price_changes",
    "passes_at_own_times",
)
_DECLARED_CHOICES = {"queue_columns": (None, "queue", "shortest", "always"), "size_index": (None, "walltime", "predicted")}


def check_declarations(policy) -> None:
    """Raise ConfigurationError when a policy's declarations are not in the form the engine reads.

    ``platforms`` and ``workloads`` are tuples (lists, sets) of names (``"torus"``, ``"cluster"``;
    ``"online"``, ``"batch"``); the flags are booleans; ``queue_columns`` and ``size_index`` are one of
    their documented values; ``plan`` is callable. Checked before anything runs, so a plug-in with
    ``platforms = 5`` gets a sentence instead of a traceback in the middle of the engine.

    Args:
        policy: a :class:`Policy` (or anything given as one).

    Raises:
        ConfigurationError: the first declaration out of form, named with what was expected and what came.
    """
    name = getattr(policy, "name", None)
    label = name if isinstance(name, str) else type(policy).__name__
    if not isinstance(policy, Policy):
        raise ConfigurationError(f"policy {label!r} is a {type(policy).__name__}, not a torus_sim Policy")
    if not isinstance(name, str) or not name:
        raise ConfigurationError(f"policy {label!r} declares name = {name!r}; a policy's name is non-empty text")
    for attribute, known in _DECLARED_NAMES.items():
        value = getattr(policy, attribute, None)
        if (
            isinstance(value, str)
            or not isinstance(value, (tuple, list, set, frozenset))
            or not all(isinstance(item, str) for item in value)
        ):
            raise ConfigurationError(
                f"policy {label!r} declares {attribute} = {value!r}; expected a tuple of names such as {known!r}"
            )
    for attribute in _DECLARED_FLAGS:
        value = getattr(policy, attribute, None)
        if not isinstance(value, bool):
            raise ConfigurationError(f"policy {label!r} declares {attribute} = {value!r}; expected True or False")
    for attribute, choices in _DECLARED_CHOICES.items():
        value = getattr(policy, attribute, None)
        if value not in choices:
            raise ConfigurationError(f"policy {label!r} declares {attribute} = {value!r}; expected one of {choices!r}")
    if not callable(getattr(policy, "plan", None)):
        raise ConfigurationError(f"policy {label!r} has no callable plan(view)")
