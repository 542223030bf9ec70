"""The scheduling policies by name: the built-ins registered here, plug-ins from entry points or import paths.

:data:`POLICIES` is the one registry the runner asks (``POLICIES.build(name, params, offered)``).
A built-in's factory reads its settings from the scenario (``backfill``, ``priority``, ...); a
plug-in's constructor gets its ``[policy.params]`` and, where its signature names them, the
objects the engine offers: ``placement`` (the placement the scenario chose, or None for the
policy's default) and ``scenario`` (the whole run's configuration, read only).

References:
    BGL-FAULT §5 (Krevat, balancing, tie-break); PV-EASY §4 (FCFS, EASY, conservative, PV-EASY);
    RIGID §4 (R-LIST, R-SHELF); MOLDABLE §4 (LPA, MINTIME, MINAREA, BATCH).
"""

from __future__ import annotations

from torus_sim.inputs.registry import Registry
from torus_sim.policies.base import Policy
from torus_sim.policies.easy import DEFAULT_EASY_EXTRA, ConservativePolicy, EasyPolicy, FcfsPolicy
from torus_sim.policies.krevat import KrevatScheduler
from torus_sim.policies.moldable import ALLOCATIONS, AllocationListPolicy, AllotmentTables, BatchListPolicy
from torus_sim.policies.placement import MfpPlacement
from torus_sim.policies.power_aware import PowerWindowPolicy
from torus_sim.policies.power_cap import PowerCapPolicy
from torus_sim.policies.priority import PriorityPolicy
from torus_sim.policies.pv_easy import PvEasyPolicy
from torus_sim.policies.rigid import ListPolicy, ShelfPolicy

__all__ = [
    "BATCH_POLICIES",
    "BUILTIN_POLICIES",
    "MOLDABLE_POLICIES",
    "ONLINE_POLICIES",
    "POLICIES",
    "POLICY_ENTRY_POINTS",
    "RIGID_POLICIES",
]

POLICY_ENTRY_POINTS = "torus_sim.policies"
"""The entry-point group installed packages add their policies to."""

POLICIES: Registry[Policy] = Registry("policy", POLICY_ENTRY_POINTS, Policy)
"""Scheduling policies by name (built-ins below, installed plug-ins, import paths)."""

ONLINE_POLICIES = ("krevat", "balancing", "tiebreak", "FCFS", "FCFS-EASY", "EASY-SJBF", "conservative", "PV-EASY", "greedy")
"""Policies for jobs submitted over time (they run batches too): Krevat's (BGL-FAULT §5.1) with MFP,
balancing or tie-break placement (§5.2), the online policies of PV-EASY §5, and the greedy priority
orders RLScheduler compares with (FCFS, SJF, WFP3, UNICEP, F1; :mod:`torus_sim.policies.priority`)."""

RIGID_POLICIES = ("R-LIST-0", "R-LIST-1", "R-LIST-Q", "R-SHELF-B", "R-SHELF-NB", "R-SHELFFILL-B", "R-SHELFFILL-NB")
"""The seven rigid heuristics of RIGID §5.1."""

MOLDABLE_POLICIES = ("LPA", "BATCH", "MINTIME", "MINAREA")
"""The four moldable algorithms of MOLDABLE §5.1 (LPA = LPA-LIST, BATCH = BATCH-LIST)."""

BATCH_POLICIES = RIGID_POLICIES + MOLDABLE_POLICIES
BUILTIN_POLICIES = ONLINE_POLICIES + BATCH_POLICIES
"""Every built-in policy name; the registry (:data:`torus_sim.policies.catalog.POLICIES`) adds installed plug-ins."""


def _krevat(placement=None, backfill: bool = True, migration: bool = True, migration_cost: float = 0.0) -> Policy:
    return KrevatScheduler(placement or MfpPlacement(), backfill, migration, migration_cost)


_KREVAT_FIELDS = {"backfill": "backfill", "migration": "migration", "migration_cost": "migration_cost"}
_krevat.from_scenario = _KREVAT_FIELDS  # the scenario fields a factory reads, by parameter (offered by the wiring)


def _fault_aware(name: str):
    """Krevat's scheduler with BGL-FAULT §5.2's placement ``name`` (balancing or tie-break) unless told otherwise."""

    def factory(placement=None, backfill: bool = True, migration: bool = True, migration_cost: float = 0.0) -> Policy:
        policy = _krevat(placement, backfill, migration, migration_cost)
        policy.name = name
        return policy

    factory.default_placement = name  # the placement a run builds for it when the scenario names none
    factory.from_scenario = _KREVAT_FIELDS
    return factory


def _fcfs(placement=None) -> Policy:
    policy = FcfsPolicy()
    policy.placement = placement
    return policy


def _easy(order: str):
    def factory(
        placement=None,
        easy_extra: str = DEFAULT_EASY_EXTRA,
        bf_interval: float | None = None,
        bf_max_job_test: int | None = None,
        bf_window: float | None = None,
        bf_resolution: float | None = None,
    ) -> Policy:
        return EasyPolicy(
            order,
            placement,
            easy_extra,
            bf_interval=bf_interval,
            bf_max_job_test=bf_max_job_test,
            bf_window=bf_window,
            bf_resolution=bf_resolution,
        )

    factory.from_scenario = {"easy_extra": "easy_extra"}
    return factory


def _list(m: int):
    def factory(priority: str, placement=None) -> Policy:
        policy = ListPolicy(m, priority)
        policy.placement = placement
        return policy

    factory.from_scenario = {"priority": "priority"}
    return factory


def _shelf(blocking: bool, fill: bool):
    def factory(priority: str, placement=None) -> Policy:
        policy = ShelfPolicy(blocking, fill, priority)
        policy.placement = placement
        return policy

    factory.from_scenario = {"priority": "priority"}
    return factory


def _learned(agent, risk_predictor=None, backfill: str | None = None) -> Policy:
    from torus_sim.policies.learned import LearnedPolicy  # numpy and the agent file only when asked for

    return LearnedPolicy(agent, risk_predictor, backfill)


def _batch(priority: str, epsilon: float, allotment: str, area_slack: float, placement=None, tables=None, batch=None) -> Policy:
    if tables is None and batch is not None and batch.workload.times is not None:  # the job set's tables, made once
        tables = batch.shared("tables", lambda: AllotmentTables(batch.workload.times))
    policy = BatchListPolicy(tables, priority, epsilon, allotment, area_slack)
    policy.placement = placement
    return policy


_batch.from_scenario = {"priority": "priority", "epsilon": "epsilon", "allotment": "allotment", "area_slack": "area_slack"}


def _allocation_list(name: str):
    def factory(priority: str, placement=None, allocation=None, batch=None) -> Policy:
        if allocation is None and batch is not None and batch.workload.times is not None:  # the job set's, made once
            allocation = batch.shared(("allocation", name), lambda: ALLOCATIONS[name](batch.workload.times))
        policy = AllocationListPolicy(name, priority, allocation)
        policy.placement = placement
        return policy

    factory.from_scenario = {"priority": "priority"}
    return factory


POLICIES.register("krevat", _krevat)
for _name in ("balancing", "tiebreak"):
    POLICIES.register(_name, _fault_aware(_name))
POLICIES.register("FCFS", _fcfs)
POLICIES.register("FCFS-EASY", _easy("fcfs"))
POLICIES.register("EASY-SJBF", _easy("sjf"))
POLICIES.alias(
    "SJF-EASY",
    "EASY-SJBF",
    "PV-EASY §5.2.2's name for EASY with the FCFS queue and the shortest job backfilled first (EASY-SJBF, "
    "Tsafrir et al., IEEE TPDS 2007); the queue itself is not ordered shortest first",
)
POLICIES.register("conservative", lambda placement=None: ConservativePolicy(placement))
POLICIES.register("PV-EASY", lambda placement=None: PvEasyPolicy(placement))
POLICIES.register("greedy", PriorityPolicy)
POLICIES.register("power-window", PowerWindowPolicy)  # needs power accounting (power = true): not in ONLINE_POLICIES' menus
POLICIES.register("power-cap", PowerCapPolicy)  # the same
POLICIES.register("learned", _learned)
for _suffix, _m in (("0", 0), ("1", 1), ("Q", -1)):
    POLICIES.register(f"R-LIST-{_suffix}", _list(_m))
for _name, _blocking, _fill in (
    ("R-SHELF-B", True, False),
    ("R-SHELF-NB", False, False),
    ("R-SHELFFILL-B", True, True),
    ("R-SHELFFILL-NB", False, True),
):
    POLICIES.register(_name, _shelf(_blocking, _fill))
POLICIES.register("BATCH", _batch)
for _name in ("LPA", "MINTIME", "MINAREA"):
    POLICIES.register(_name, _allocation_list(_name))
