"""The stable surface for your own scheduler: everything a plug-in policy, placement or predictor may use.

A plug-in imports from here and nowhere else in torus-sim; the built-in policies are written
against the same names. What is listed in ``__all__`` keeps its meaning across minor releases.

Key components:
    Policy: base class of scheduling policies; override :meth:`~Policy.plan` (and optionally
        ``queue_key``, ``attach``, ``observe_failure``, ``why_unsupported``).
    SchedulingView: what a policy reads at each pass: ``now``, ``queue``, ``running``, ``platform``,
        ``free_count()``, ``place(job)``, ``shadow(need, None)``, ``predicted_end(job)``,
        ``predicted_remaining(job)``, ``snapshot()``, ``open_sizes()``, ``rng``.
    Start, Preempt, Repack, Reserve: the actions a policy returns; the engine checks each before
        applying it (:class:`PolicyError` otherwise).
    start_in_order, easy_pass: the FCFS and EASY passes the built-ins are made of, to reuse.
    PlacementPolicy: which free partition (torus) or nodes (cluster) a job gets; override ``choose`` /
        ``choose_nodes``.
    FailurePredictor: failure probability per node over a window; override ``supernode_probabilities``.
    RuntimePredictor: what the scheduler believes a job's runtime is; override ``predict`` (and
        ``observe_end`` to learn).
    POLICIES, PLACEMENTS, PREDICTORS, RUNTIME_PREDICTORS: the registries (built-ins, installed
        plug-ins' entry points, import paths).

Inputs and outputs of your own (registries with the same machinery):
    WorkloadSource, TraceSource (SWF records: cleaning, c, offered load for free), SwfRecord,
        SwfTrace, WORKLOADS: a workload generator or reader (``--workload NAME``).
    FailureSource, GeneratedFailures, FailureLog, FAILURE_SOURCES: a failure log reader or a failure
        model drawn with the run's generator (``--failures NAME``).
    PlatformKind, PLATFORMS: a platform kind (``--platform NAME``); ClusterPlatform (P nodes) and
        PartitionedPlatform (disjoint partitions, each a cluster, with a router that puts each job in one: the engine
        plans each partition with its own instance of the policy) are what a kind's ``build`` may return.
    OutputFormat, FORMATS: an output format (``--format NAME``).
    JobPowerSource, JOB_POWER_SOURCES: each job's watts per node (``--job-power NAME``); Tariff,
        TARIFFS: the electricity price over time (``--price NAME``).

A policy's ``attach(context)`` gets a :class:`PolicyContext` (the run's ``jobs``, ``rng``, ``platform``,
``workload`` facts, ``failure_log``, ``power``, ``power_states``), never the engine.

Power: when the run accounts for power (``--power``), the context's ``power`` is a
:class:`PowerInputs` (``job_watts`` by job id, the ``node`` draws idle / busy / down,
the ``tariff``, ``clock_start_hour``, the run's power ``cap`` or None, and ``nodes``); else None. The
built-in ``power-window`` and ``power-cap`` policies plan with it. A policy that sets
``passes_at_price_changes`` gets a pass at each change of price while jobs wait; one that sets
``passes_at_own_times`` gets one at its ``next_pass_after(now)`` (a cap's hours or levels). With idle
nodes switched off (``idle_off_after``) ``context.power.switch_off`` is the rule and ``context.power_states``
each node's state (``off(now)``: the idle nodes off or switching off; ``switching_off(now)``;
``booting_idle(now)``: idle nodes finishing a boot their job ended before; ``state(node, now)``; read it,
never write it); a node agent's ``power_state`` says ``busy``, ``idle``,
``down``, ``switching off``, ``off`` or ``booting``.

What the engine checks (docs/policies/README.md has the whole contract):
    * Start: the job is waiting; the allocation is a partition id of the job's size (torus) or
      distinct node ids / a node count of its size (cluster), free now (no job on it), not down.
    * Preempt: the job is running. Repack: distinct running jobs onto allocations of their sizes,
      free once all their old allocations are released, disjoint. Reserve: a waiting job, not before now.
    * A pass that returns more than 4 x (waiting + running) + 64 actions, or leaves the first waiting
      job waiting although it fits and nothing runs, ends the run; so does any exception the policy raises.

References:
    BGL-FAULT §5 (Krevat's plan -> [Start | Repack]); PV-EASY §4; RIGID §4; MOLDABLE §4.
"""

from failure_logs.events import FailureLog
from failure_logs.sources import FAILURE_SOURCES, FailureSource
from failure_logs.synthetic import GeneratedFailures
from predictors.base import PREDICTORS, FailurePredictor
from predictors.runtime import RUNTIME_PREDICTORS, RuntimePredictor
from torus_sim.core.errors import ConfigurationError, PolicyError
from torus_sim.core.job import Job, JobState
from torus_sim.engine.view import SchedulingView
from torus_sim.inputs.energy.job_power import JOB_POWER_SOURCES, JobPowerSource
from torus_sim.inputs.energy.power_inputs import PowerInputs
from torus_sim.inputs.energy.tariffs import TARIFFS, Tariff
from torus_sim.inputs.plugin_admission import factory_of
from torus_sim.inputs.workload.sources import WORKLOADS, TraceSource, WorkloadSource
from torus_sim.inputs.workload.swf import SwfRecord, SwfTrace
from torus_sim.machine.platforms.cluster import ClusterPlatform
from torus_sim.machine.platforms.kinds import PLATFORMS, PlatformKind
from torus_sim.machine.platforms.partitioned import PartitionedPlatform
from torus_sim.outputs.formats.catalog import FORMATS, OutputFormat
from torus_sim.policies.backfilling import easy_pass, start_in_order
from torus_sim.policies.base import Policy, Preempt, Repack, Reserve, Start, fcfs_key
from torus_sim.policies.catalog import POLICIES
from torus_sim.policies.context import PolicyContext
from torus_sim.policies.placement import MFP, PLACEMENTS, PlacementPolicy

__all__ = [
    "FAILURE_SOURCES",
    "FORMATS",
    "JOB_POWER_SOURCES",
    "MFP",
    "PLACEMENTS",
    "PLATFORMS",
    "POLICIES",
    "PREDICTORS",
    "RUNTIME_PREDICTORS",
    "TARIFFS",
    "WORKLOADS",
    "ClusterPlatform",
    "ConfigurationError",
    "FailureLog",
    "FailurePredictor",
    "FailureSource",
    "GeneratedFailures",
    "Job",
    "JobPowerSource",
    "JobState",
    "OutputFormat",
    "PartitionedPlatform",
    "PlacementPolicy",
    "PlatformKind",
    "Policy",
    "PolicyContext",
    "PolicyError",
    "PowerInputs",
    "Preempt",
    "Repack",
    "Reserve",
    "RuntimePredictor",
    "SchedulingView",
    "Start",
    "SwfRecord",
    "SwfTrace",
    "Tariff",
    "TraceSource",
    "WorkloadSource",
    "easy_pass",
    "factory_of",
    "fcfs_key",
    "start_in_order",
]
