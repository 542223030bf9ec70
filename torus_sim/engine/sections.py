"""The scenario's sections the engine reads: the cycle, the limits, the priority, maintenance, the effective size, prime time, the run.

``[cycle]``, ``[limits]``, ``[priority]``, ``[maintenance]``, ``[effective_size]``, ``[reservations]``,
``[prime_time]``, ``[run]``:
production semantics (a scheduling cycle, per-user limits, Slurm's multifactor priority, maintenance windows, the
machine's effective size over time, reservations of part of the machine, prime time; :mod:`torus_sim.engine.limits`, :mod:`torus_sim.engine.multifactor`,
:mod:`torus_sim.engine.maintenance`, :mod:`torus_sim.engine.effective_size`, :mod:`torus_sim.engine.node_reservations`,
:mod:`torus_sim.engine.prime_time`) and how the
run goes (its seed, the order of events, the wall-clock limit of a pass). Parts of
:class:`torus_sim.experiments.scenario.Scenario` (pydantic models of their own, mixed into the scenario with the other
parts' sections): their fields keep their flat names in scenario files, sweep grids and options.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, Field, field_validator

from torus_sim.engine.guard import DEFAULT_PLAN_TIMEOUT
from torus_sim.engine.multifactor import parse_fairshare_windows
from torus_sim.engine.prime_time import parse_prime_time
from torus_sim.engine.standing_reservations import parse_standing_reservations
from torus_sim.inputs.workload.queues import parse_queue_tiers

__all__ = [
    "CycleSection",
    "EffectiveSizeSection",
    "ReservationsSection",
    "LimitsSection",
    "MaintenanceSection",
    "PrimeTimeSection",
    "PrioritySection",
    "RunSection",
]


class CycleSection(BaseModel):
    """The ``[cycle]`` section: the pass at most once per interval (Slurm's ``sched_min_interval``), a dispatch latency."""

    SECTION: ClassVar[str] = "cycle"

    sched_min_interval: float | None = Field(
        None,
        gt=0,
        le=1e9,
        description="seconds: the scheduling pass asked by an event runs at least this long after the last one (Slurm's "
        "sched_min_interval, there in microseconds; production schedulers dispatch in cycles of about 10-60 s); "
        "unset: at the instant of the event",
    )
    dispatch_latency: float | None = Field(
        None,
        gt=0,
        le=1e9,
        description="seconds from a job's submission to its entry into the wait queue (a production scheduler's "
        "dispatch delay: LoadLeveler's negotiator cycle, a Slurm job's EligibleTime); its wait counts from its "
        "submission; unset: at once",
    )


class LimitsSection(BaseModel):
    """The ``[limits]`` section: a user's, a group's and a queue's running jobs and nodes (Slurm's, Maui's limits)."""

    SECTION: ClassVar[str] = "limits"

    max_jobs_per_user: int | None = Field(
        None,
        ge=1,
        le=10**9,
        description="running jobs one user may have at once; a job over it waits held (Slurm's MaxJobs, Maui's MAXJOB "
        "per user); a job a maintenance window or prime time keeps from starting takes no slot; unset: no limit",
    )
    max_nodes_per_user: int | None = Field(
        None,
        ge=1,
        le=10**9,
        description="nodes (a cluster's processors, a torus's supernodes) one user's running jobs may hold at once; a "
        "job over it waits held, a larger job runs alone (Slurm's MaxTRESPerUser, Maui's MAXPROC); unset: no limit",
    )
    max_node_seconds_per_user: float | None = Field(
        None,
        gt=0,
        le=1e15,
        description="node-seconds (a cluster's processor-seconds) one user's running jobs may have left at once, each "
        "counting its nodes times its requested time left; a job over it waits held, a longer one runs alone (Maui's "
        "MAXPS, Slurm's GrpTRESRunMins of a user's association, there in cpu-minutes); unset: no limit",
    )
    max_jobs_per_group: int | None = Field(
        None,
        ge=1,
        le=10**9,
        description="running jobs one group (the SWF log's group, field 13; each user in the group of their first job) "
        "may have at once; a job over it waits held (Slurm's GrpJobs of an account, Maui's MAXJOB per GROUP); unset: "
        "no limit",
    )
    max_nodes_per_group: int | None = Field(
        None,
        ge=1,
        le=10**9,
        description="nodes one group's running jobs may hold at once; a job over it waits held, a larger job runs alone "
        "(Slurm's GrpTRES of an account, Maui's MAXPROC per GROUP); unset: no limit",
    )
    max_jobs_per_queue: int | None = Field(
        None,
        ge=1,
        le=10**9,
        description="running jobs one queue (the SWF log's queue, field 15) may have at once; a job over it waits held "
        "(Slurm's GrpJobs of a QOS or a partition, Maui's MAXJOB per CLASS); unset: no limit",
    )
    max_nodes_per_queue: int | None = Field(
        None,
        ge=1,
        le=10**9,
        description="nodes one queue's running jobs may hold at once; a job over it waits held, a larger job runs alone "
        "(Slurm's GrpTRES of a QOS, Maui's MAXPROC per CLASS); unset: no limit",
    )


class PrioritySection(BaseModel):
    """The ``[priority]`` section: Slurm's multifactor job priority (unset weights: the policy's own order).

    Raises:
        ValueError: (pydantic's) queue tiers that do not parse.
    """

    SECTION: ClassVar[str] = "priority"

    priority_weight_age: float | None = Field(
        None,
        ge=0,
        le=1e9,
        description="weight of the age factor (Slurm's PriorityWeightAge); any weight set: the queue in "
        "Slurm's multifactor order",
    )
    priority_weight_fairshare: float | None = Field(
        None, ge=0, le=1e9, description="weight of the fair-share factor 2^(-U/S) over users (PriorityWeightFairshare)"
    )
    priority_weight_job_size: float | None = Field(
        None, ge=0, le=1e9, description="weight of the job-size factor, nodes / machine (PriorityWeightJobSize)"
    )
    priority_max_age: float = Field(
        7 * 86400.0, gt=0, le=1e10, description="seconds of waiting at which the age factor reaches 1 (PriorityMaxAge)"
    )
    priority_decay_half_life: float = Field(
        7 * 86400.0, gt=0, le=1e10, description="seconds in which recorded usage halves (PriorityDecayHalfLife)"
    )
    priority_fairshare_windows: str | None = Field(
        None,
        min_length=1,
        description="Maui's fair-share windows instead of the half-life, FSINTERVAL:FSDEPTH:FSDECAY (86400:7:0.8: the "
        "usage of the last 7 days, day i back weighted 0.8^i); the factor stays 2^(-U/S); unset: the half-life",
    )
    priority_calc_period: float = Field(
        300.0, gt=0, le=1e9, description="seconds between recomputations of the priorities (PriorityCalcPeriod)"
    )
    priority_favor_small: bool = Field(
        strict=True, default=False, description="the size factor favours small jobs (PriorityFavorSmall=YES)"
    )
    priority_fairshare_by: Literal["user", "group"] = Field(
        "user",
        description="the fair share over users, or over the log's groups (SWF field 13; each user in the group of "
        "their first job), whose users share its usage (Slurm's fair share by account, Maui's group fair share)",
    )
    priority_fairshare_shares: Literal["equal", "submitted"] = Field(
        "equal",
        description='each owner\'s share of the machine in the fair share 2^(-U/S): "equal" (S = 1 / the owners seen so '
        'far) or "submitted" (S = the owner\'s share of the node-seconds, nodes x requested time, its jobs asked so far: '
        "allocations that follow each user's demand, as Slurm's association Fairshare= shares or Maui's FSTARGET)",
    )
    priority_age_from: Literal["submit", "eligible"] = Field(
        "submit",
        description='what a job\'s age counts from: its submission ("submit"), or ("eligible") the last time it entered '
        "the queue the policy sees, so a job a per-user, group or queue limit holds gains no age while held and a "
        "user's jobs are let in in the order of their priorities without the age (Maui's USESYSTEMQUEUETIME with "
        "JOBPRIOACCRUALPOLICY QUEUEPOLICY, LSF's INELIGIBLE limits); needs a priority weight and a limit",
    )
    priority_weight_queue: float | None = Field(
        None,
        ge=0,
        le=1e9,
        description="weight of the queue factor, the tier of the job's SWF queue (field 15) over the highest tier "
        "(Slurm's PriorityWeightPartition with each partition's PriorityJobFactor); needs priority_queue_tiers",
    )
    priority_queue_tiers: str | None = Field(
        None,
        min_length=1,
        description='each SWF queue number\'s tier, "QUEUE:TIER,..." (tiers >= 0, e.g. "1:4,2:3,3:2,4:1" for '
        "express, high, normal, low); a queue not listed has tier 0; without priority_weight_queue, no queue factor",
    )

    preempt_by_tier: bool | None = Field(
        None,
        strict=True,
        description="a waiting job of a higher queue tier (priority_queue_tiers) that does not fit preempts running jobs "
        "of lower tiers, the lowest tier and the latest started first, and starts on their nodes; what they keep is "
        "the preemption mode's (kill: requeued, their work lost) (Slurm's preempt/partition_prio); clusters; unset: none",
    )

    @field_validator("priority_fairshare_windows")
    @classmethod
    def _fairshare_windows(cls, value):
        if value is not None:
            parse_fairshare_windows(value)  # a ValueError names what is wrong
        return value

    @field_validator("priority_queue_tiers")
    @classmethod
    def _queue_tiers(cls, value):
        if value is not None:
            parse_queue_tiers(value)  # a ValueError names what is wrong
        return value


class MaintenanceSection(BaseModel):
    """The ``[maintenance]`` section: whole-machine windows, from a file or inferred from the log (Slurm's reservations)."""

    SECTION: ClassVar[str] = "maintenance"

    maintenance: str | None = Field(
        None,
        min_length=1,
        description='whole-machine maintenance windows: "inferred" (the spans in which the replayed SWF log ran '
        "nothing while jobs waited) or a file of start,end lines (seconds of the workload's clock); no job starts "
        "whose requested time reaches into a window (Slurm's maintenance reservation); unset: none",
    )
    maintenance_drain: bool | None = Field(
        None,
        strict=True,
        description="true: no job starts whose requested time reaches into a window (a planned maintenance, the "
        "machine empty when it begins); false: jobs are held only while a window lasts and running jobs run on (an "
        "outage); unset: true for a file, false for inferred windows (the spans a log shows idle were mostly not "
        "drained for: docs/validation/real_machine.md)",
    )
    maintenance_min_length: float | None = Field(
        None,
        gt=0,
        le=1e9,
        description='seconds: the shortest idle span of the log taken as a window (maintenance = "inferred"); unset: 3600',
    )


class EffectiveSizeSection(BaseModel):
    """The ``[effective_size]`` section: spans in which only part of the machine was usable (a log's MaxProcs is not always)."""

    SECTION: ClassVar[str] = "effective_size"

    effective_size: str | None = Field(
        None,
        min_length=1,
        description="the machine's effective size over time: \"inferred\" (each period's peak of busy processors in the "
        "replayed SWF log's schedule, where below the machine) or a file of start,end,nodes lines (seconds of the "
        "workload's clock, the nodes usable from start to end); the other nodes are held out, none killed (a Slurm "
        "reservation of a node count); unset: the whole machine all along",
    )
    effective_size_period: float | None = Field(
        None,
        gt=0,
        le=1e9,
        description='seconds: the periods an inferred effective size is read over (effective_size = "inferred"); '
        "unset: 2592000 (30 days)",
    )
    effective_size_share: float | None = Field(
        None,
        gt=0,
        le=1,
        description="the whole run on this share of a cluster's processors (rounded down, never below the largest job's "
        "size): the others held out, none killed; a constant effective size, as torus-sim calibrate fits it; not with "
        "effective_size; unset: the whole machine",
    )
    effective_size_starved: bool | None = Field(
        None,
        strict=True,
        description="true: besides any other effective size, the spans of the replayed SWF log's schedule in which its "
        "oldest waiting job fitted the idle processors yet waited (a share of the machine idle throughout, for an hour "
        "or more unless set), each at the most processors busy in it: capacity lost to what the log does not record "
        "(down or drained nodes, interactive use); where two readings say, the smaller; unset: none",
    )
    effective_size_starved_min_length: float | None = Field(
        None,
        gt=0,
        le=1e9,
        description="seconds: the shortest starved span kept (effective_size_starved = true); unset: 3600",
    )
    effective_size_starved_min_idle: float | None = Field(
        None,
        gt=0,
        lt=1,
        description="the least share of the machine idle throughout a starved span (effective_size_starved = true); unset: 0.05",
    )


class ReservationsSection(BaseModel):
    """The ``[reservations]`` section: part of the machine reserved from a start to an end, by count or by name (Slurm's reservations)."""

    SECTION: ClassVar[str] = "reservations"

    reservations: str | None = Field(
        None,
        min_length=1,
        description="a file of reservations of part of the machine, one start,end,nodes[,on_running] per line "
        "(seconds of the workload's clock; a node count or named nodes as ids=0-12;40; wait: the reservation takes "
        "a node when its job ends, kill: the jobs on its nodes at its start are killed and requeued); unset: none",
    )
    standing_reservations: str | None = Field(
        None,
        min_length=1,
        description='nodes held on the same days and hours every week, as "MON-FRI 08:00-18:00 32" (several separated '
        "by ;), in the log's local time (its UnixStartTime and TimeZoneString): each day a count reservation that "
        "takes each node as its job ends (Maui's standing reservations, Slurm's daily reservations); unset: none",
    )

    @field_validator("standing_reservations")
    @classmethod
    def _standing(cls, value):
        if value is not None:
            parse_standing_reservations(value)  # a sentence naming the rule
        return value


class PrimeTimeSection(BaseModel):
    """The ``[prime_time]`` section: long jobs start outside the working day (PBS's prime time, Maui's standing reservations)."""

    SECTION: ClassVar[str] = "prime_time"

    prime_time: str | None = Field(
        None,
        min_length=1,
        description="the days and hours of prime time in the log's local time (its UnixStartTime and TimeZoneString), "
        'as "MON-FRI 08:00-18:00": a job asking more than prime_time_max_walltime waits held through it (PBS\'s '
        "prime time, Maui's standing reservations); unset: none",
    )
    prime_time_max_walltime: float | None = Field(
        None,
        gt=0,
        le=1e9,
        description="seconds: the longest requested time a job may have to start in prime time (needed with prime_time)",
    )
    prime_time_spill: float | None = Field(
        None,
        ge=0,
        le=1e9,
        description="seconds: outside prime time a long job starts only if its requested time ends at most this long "
        "into the next prime time (PBS's backfill_prime with prime_spill); unset: only its start is kept out of prime time",
    )

    @field_validator("prime_time")
    @classmethod
    def _prime_time_rule(cls, value):
        if value is not None:
            parse_prime_time(value)  # a ValueError names what is wrong
        return value


class RunSection(BaseModel):
    """The ``[run]`` section: the run's seed, the order in which the scheduler meets events, a pass's wall-clock limit."""

    SECTION: ClassVar[str] = "run"

    seed: int = Field(
        0, ge=0, lt=2**63, description="seed of the run's generator, >= 0 (a batch: the master seed of sets and scenarios)"
    )
    event_order: Literal["instant", "each-event", "each-event-submissions-first"] = Field(
        "instant",
        description="when the scheduler runs: once per instant after all its events, or after each job end and each "
        "submission (each-event: CQSim's order, ends before submissions, each in turn; each-event-submissions-first: "
        "RLScheduler's, submissions before ends)",
    )
    plan_timeout: float = Field(
        DEFAULT_PLAN_TIMEOUT,
        gt=0,
        le=1e9,
        description="wall-clock seconds one scheduling pass may take before the run is stopped (a plan that never returns)",
    )
