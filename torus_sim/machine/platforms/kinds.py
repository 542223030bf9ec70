"""Platform kinds by name: what ``platform = "torus"`` or ``"cluster"`` means for a scenario.

A platform kind turns a scenario's platform fields into what the engine runs on, and answers the
questions the rest of the run asks of the platform: how many nodes it has (the cluster's from
``nodes`` or the workload's machine size, the torus's from its machine or dims), which sizes a job can
occupy (a torus rounds up to a size with a box shape), which SWF cleaning rules are its default, which
failures it meets when the scenario names none, and how the run's manifest describes it.

Built-ins: ``torus`` (:class:`TorusKind`), ``cluster`` (:class:`ClusterKind`), ``heterogeneous``
(:class:`~torus_sim.machine.platforms.heterogeneous.HeterogeneousKind`, its own module) and ``partitions``
(:class:`~torus_sim.machine.platforms.queue_partitions.QueuePartitionsKind`: a cluster split by the log's queues); an installed package
adds its own under the ``torus_sim.platforms`` entry points, or a scenario names one by import path
(a subclass of :class:`PlatformKind` whose ``build`` returns an object with the platform protocol of
:mod:`torus_sim.machine.platforms.base`).

References:
    BGL-FAULT §3 (the torus of supernodes, partitions), §6.2 (the 128-node logs on the torus);
    PV-EASY §5.1 (a cluster of P processors).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache, partial

from torus_sim.core.errors import ConfigurationError
from torus_sim.inputs.registry import Registry
from torus_sim.machine.partition_table import PartitionTable
from torus_sim.machine.partitions import round_up_to_feasible_size
from torus_sim.machine.platforms.base import PlatformKind
from torus_sim.machine.platforms.cluster import MAX_NODES, ClusterPlatform
from torus_sim.machine.platforms.heterogeneous import HeterogeneousKind
from torus_sim.machine.platforms.queue_partitions import QueuePartitionsKind
from torus_sim.machine.platforms.torus import TorusPlatform
from torus_sim.machine.topology import Torus

DEFAULT_MACHINE = "bgl"
"""The machine of a torus scenario that names none (its ``torus_dims`` default to BG/L's 4x4x8)."""

__all__ = [
    "PLATFORMS",
    "PLATFORM_ENTRY_POINTS",
    "ClusterKind",
    "HeterogeneousKind",
    "PlatformKind",
    "QueuePartitionsKind",
    "TorusKind",
    "partition_table",
    "platform_kind",
]


@lru_cache(maxsize=8)
def partition_table(torus: Torus | tuple[int, ...]) -> PartitionTable:
    """The partition table of a torus, built once per process and torus (every run of a sweep shares it).

    Args:
        torus: the torus, or its dims (every dimension a ring, every box allowed).

    Returns:
        The :class:`~torus_sim.machine.partition_table.PartitionTable` (read only: never changed by a run).
    """
    return PartitionTable(torus if isinstance(torus, Torus) else Torus(tuple(torus)))


@lru_cache(maxsize=64)
def _rounding(torus: Torus) -> Callable[[int], int]:
    """``size -> the size a job occupies`` on a torus: one function per torus (cache keys of generated sets stay equal)."""
    return partial(round_up_to_feasible_size, torus)


class TorusKind(PlatformKind):
    """The torus of supernodes (midplanes): BG/L's 4x4x8, a machine description's, or ``torus_dims``.

    References:
        BGL-FAULT §3.1-3.3; ALCF machine pages for Intrepid and Mira (:mod:`torus_sim.machine.machines`).
    """

    name = "torus"
    default_rules = "bgl-fault"
    sizes_from_workload = False
    from_scenario = ("torus", "machine")

    def capacity(self, fields, named: int | None) -> int:  # noqa: D102
        return fields.torus.size

    def round_size(self, fields) -> Callable[[int], int]:  # noqa: D102
        return _rounding(fields.torus)

    def build(self, fields, nodes: int, node_identities: bool = False) -> TorusPlatform:  # noqa: D102
        torus = fields.torus
        return TorusPlatform(torus, partition_table(torus))

    def describe(self, platform, fields) -> dict:  # noqa: D102
        return {"kind": platform.kind, "nodes": platform.capacity, "torus": platform.torus.label, "machine": fields.machine}

    def machine(self, fields):
        """The scenario's machine (BG/L's by default): its midplanes are the nodes."""
        from torus_sim.machine.machines import load_machine

        return load_machine(fields.machine or DEFAULT_MACHINE)

    def default_failures(self, fields) -> str:
        """The machine's own log (BG/L: the bundled RAS sample; Mira: its events; others: none)."""
        return self.machine(fields).failures

    def node_word(self, fields) -> str:
        """``supernode`` on BG/L (BGL-FAULT's word), ``midplane`` on a later machine's torus (Mira's, Intrepid's)."""
        return "midplane" if fields.machine not in (None, "", DEFAULT_MACHINE) else "supernode"

    def header(self, described: dict) -> str:
        """``torus 4x4x8 of 128 supernodes`` (BG/L's word, BGL-FAULT §2), ``torus 2x3x4x4 of 96 midplanes (machine mira)``."""
        machine = f" (machine {described['machine']})" if described.get("machine") else ""
        unit = "midplanes" if described.get("machine") not in (None, "", DEFAULT_MACHINE) else "supernodes"
        return f"torus {described['torus']} of {described['nodes']:,} {unit}{machine}"

    def label(self, platform, fields) -> str:
        """``torus 4x4x8 (bgl)``: the torus and its machine (BG/L's when the scenario names none)."""
        return f"torus {platform.torus.label} ({fields.machine or DEFAULT_MACHINE})"


class ClusterKind(PlatformKind):
    """A cluster of P nodes: counts only, or node identities when something in the run tells nodes apart.

    References:
        PV-EASY §5.1; RIGID §3.1 and MOLDABLE §3.1 (P identical processors).
    """

    name = "cluster"
    default_rules = "pv-easy"
    sizes_from_workload = True
    from_scenario = ("nodes",)

    def capacity(self, fields, named: int | None) -> int:  # noqa: D102
        nodes = fields.nodes or named
        if not nodes:
            raise ConfigurationError("a cluster needs its number of nodes: give nodes (the workload names none)")
        if nodes > MAX_NODES:
            raise ConfigurationError(
                f"the workload names a machine of {nodes:,} processors (its MaxProcs / nb_res); at most {MAX_NODES:,} are "
                "simulated: give nodes"
            )
        return nodes

    def build(self, fields, nodes: int, node_identities: bool = False):
        """A node count (the engine keeps identities only when the run needs them), or identities when asked (drawing)."""
        return ClusterPlatform(nodes, identities=True) if node_identities else nodes


PLATFORM_ENTRY_POINTS = "torus_sim.platforms"
"""The entry-point group installed packages add their platform kinds to."""

PLATFORMS: Registry[PlatformKind] = Registry("platform", PLATFORM_ENTRY_POINTS, PlatformKind)
"""Platform kinds by name (``torus``, ``cluster``), installed plug-ins, import paths."""

PLATFORMS.register("torus", TorusKind)
PLATFORMS.register("cluster", ClusterKind)


PLATFORMS.register("heterogeneous", HeterogeneousKind)
PLATFORMS.register("partitions", QueuePartitionsKind)


@lru_cache(maxsize=32)
def platform_kind(name) -> PlatformKind:
    """The platform kind a scenario's ``platform`` names (one instance per name and process).

    Raises:
        ConfigurationError: no such kind (with the names there are), or an import path that is not a PlatformKind.
    """
    return PLATFORMS.build(name)
