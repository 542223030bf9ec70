"""The protocol every platform implements, so that the engine and the policies never ask which machine it is."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

import numpy as np

__all__ = ["Platform", "PlatformKind", "interval_text"]


def interval_text(ids) -> str:
    """Node ids as Batsim's interval-set text: ``[0, 1, 2, 3, 7, 9, 10]`` -> ``"0-3 7 9-10"``.

    The format of ``procset.ProcSet``'s ``str`` (Batsim's ``allocated_resources``). A job's few ids are walked in
    Python (numpy's per-call cost dominated: 15-25 us against 1-3 us for up to 16 ids), a large set with numpy;
    building a ProcSet one id at a time cost a third of a torus run's recording.

    Args:
        ids: node ids, int ``(n,)``, any order, no repeats.

    Returns:
        Maximal runs of consecutive ids, ascending, ``a-b`` or ``a`` each, separated by spaces ("" for none).
    """
    ids = np.asarray(ids, dtype=np.int64)
    if ids.size <= _WALKED:
        values = sorted(ids.tolist())
        if not values:
            return ""
        runs = []
        start = previous = values[0]
        for value in values[1:]:
            if value != previous + 1:
                runs.append(str(start) if start == previous else f"{start}-{previous}")
                start = value
            previous = value
        runs.append(str(start) if start == previous else f"{start}-{previous}")
        return " ".join(runs)
    ids = np.sort(ids)
    breaks = np.flatnonzero(np.diff(ids) != 1)
    starts = ids[np.concatenate(([0], breaks + 1))].tolist()
    ends = ids[np.concatenate((breaks, [ids.size - 1]))].tolist()
    return " ".join(str(a) if a == b else f"{a}-{b}" for a, b in zip(starts, ends, strict=True))


_WALKED = 64  # up to this many ids, the Python walk is the quicker (measured: 9.7 us against 25.8 us for 60 scattered ids)


@runtime_checkable
class Platform(Protocol):
    """What the engine and a policy may ask of a machine, and the only way the engine changes one.

    A platform owns the occupancy; it never decides anything. An *allocation* is the platform's
    own handle for the nodes a job holds: a partition id on the torus; node ids (or a node count,
    when the cluster keeps no identities) on a cluster. A policy gets one from :meth:`find` (or the
    view's placement) and hands it to the engine in a Start action.

    Implementations: :class:`~torus_sim.machine.platforms.torus.TorusPlatform` (contiguous rectangular
    partitions of supernodes) and :class:`~torus_sim.machine.platforms.cluster.ClusterPlatform` (P nodes).

    The engine and the policies ask a platform what it can do, never which kind it is (a test checks that
    no ``kind ==`` test and no ``identities`` check stands outside :mod:`torus_sim.machine.platforms`): the
    capabilities below choose their paths.

    Hooks an implementation provides:
        kind: the platform kind's registry name (``"torus"``, ``"cluster"``), for the manifest only.
        tracks_nodes: every node has an identity: which job it runs, whether it is down, its agent
            (failures, repairs and fault-aware placement need this); False for a cluster of counts.
        counts_fit: a job fits now exactly when its size is at most :meth:`free_count` (any free nodes
            make an allocation: a homogeneous cluster); False where the shape matters (a torus).
        counts_only: allocations are node counts (``counts_fit`` and not ``tracks_nodes``).
        table: the :class:`~torus_sim.machine.partition_table.PartitionTable` whose partition ids are the
            allocations (the torus), or None (its planners then use :meth:`find` and :meth:`snapshot`).
        node_word: what a node is called in messages and reports (``"supernode"``, ``"node"``).
        label: the machine in a few words (``torus 4x4x8``, ``cluster of 128 nodes``).
        capacity: total nodes (supernodes on the torus).
        free_count(): nodes free now (neither busy, down nor spare).
        round_size(size): the nodes a job of ``size`` occupies (a partition size on the torus).
        find(size): an allocation of ``size`` free now, or None ("can this job start now, and where?").
        size_of(allocation), members(allocation): its node count and node ids.
        snapshot(): a planning copy of the occupancy (``fits``, ``vacate``, ``occupy``).
        allocate(allocation, job_id), release(allocation, job_id): the engine's changes; raise
            SimulationError when the nodes are not free / not held by that job.
        job_on(node), take_down(node, until), repair(node, at), repairs_ahead(): fail-stop failures.
        neighbours(node): the nodes a burst of failures spreads to.
        fits_now(size): whether a job of ``size`` can start now (``find(size) is not None``, quicker).
        mfp(): the size of the largest allocation free now (BGL-FAULT §5.1's maximal free partition).
        size_refusal(size): why no job of ``size`` can ever run on the machine, or None.
        allocation_text(allocation): its node ids as Batsim's interval-set text ("" without identities).
        coordinate(node): where the node is drawn: its torus coordinate, or (row, column) of a grid.

    What a capability promises besides: a platform with ``counts_fit`` keeps ``free`` (its free count as an
    attribute, read on the hot paths) and, with ``tracks_nodes``, ``free_nodes()`` (ids, ascending); one with a
    ``table`` answers ``words()`` (its blocked supernodes packed for the table), ``occupied()`` (the same as an
    int) and ``held_bits(allocation)``, and its allocations are the table's partition ids.
    """

    kind: str
    tracks_nodes: bool
    counts_fit: bool
    counts_only: bool
    table: object | None
    node_word: str

    @property
    def label(self) -> str:  # noqa: D102
        ...

    @property
    def capacity(self) -> int:  # noqa: D102
        ...

    def free_count(self) -> int:  # noqa: D102
        ...

    def round_size(self, size: int) -> int:  # noqa: D102
        ...

    def find(self, size: int) -> object | None:  # noqa: D102
        ...

    def size_of(self, allocation) -> int:  # noqa: D102
        ...

    def snapshot(self):  # noqa: D102
        ...

    def allocate(self, allocation, job_id: int) -> None:  # noqa: D102
        ...

    def release(self, allocation, job_id: int) -> None:  # noqa: D102
        ...

    def repairs_ahead(self) -> list[tuple[float, int]]:  # noqa: D102
        ...

    def fits_now(self, size: int) -> bool:  # noqa: D102
        ...

    def mfp(self) -> int:  # noqa: D102
        ...

    def size_refusal(self, size: int) -> str | None:  # noqa: D102
        ...

    def allocation_text(self, allocation) -> str:  # noqa: D102
        ...

    def coordinate(self, node: int) -> tuple[int, ...]:  # noqa: D102
        ...


class PlatformKind:
    """Base class of platform kinds.

    Attributes a subclass sets:
        name: the scenario's ``platform`` value.
        default_rules: the SWF cleaning rules of the kind (``bgl-fault`` or ``pv-easy``,
            :data:`~torus_sim.inputs.workload.jobs.SWF_RULES`) when the scenario names none.
        sizes_from_workload: without ``nodes``, its size is the workload's machine size (SWF
            ``MaxProcs``): a cluster's is, a torus's never (its machine or dims give it).

    ``from_scenario``: the scenario fields (or derived values) the kind reads, a tuple of names; each hook's
    ``fields`` holds exactly those (:class:`~torus_sim.experiments.scenario.ScenarioFields`), never the whole scenario.

    Hooks a subclass overrides:
        capacity(fields, named) -> int: the platform's nodes.
        round_size(fields) -> callable or None: a job's size -> the size it occupies.
        build(fields, nodes, node_identities) -> the platform (or a node count) the engine takes.
        describe(platform, fields) -> dict: the manifest's platform entry (``kind``, ``nodes``, ...).
        default_failures(fields) -> str: the failure source a run on it meets when the scenario names none.
        node_word(fields) -> str: what its nodes are called in the printed summary (``node``).
        job_fields(fields) -> tuple: the SWF fields (besides ``job_id``) its platform reads of each job (the
            heterogeneous cluster's requested memory); when not empty, ``build`` is called with ``jobs``, the replayed
            log's trace of those fields.
    """

    name = "platform"
    default_rules = "pv-easy"
    sizes_from_workload = True
    from_scenario: tuple[str, ...] | None = None

    def capacity(self, fields, named: int | None) -> int:
        """Nodes of the platform (supernodes on a torus).

        Args:
            fields: the scenario fields the kind declares (``from_scenario``).
            named: the machine size the workload names (SWF ``MaxProcs``, a job file's P), or None.

        Raises:
            ConfigurationError: the size cannot be told or is beyond what is simulated.
        """
        raise NotImplementedError

    def round_size(self, fields) -> Callable[[int], int] | None:
        """The size a job of ``size`` nodes occupies, as a function, or None when every size is one."""
        return None

    def build(self, fields, nodes: int, node_identities: bool = False):
        """What the engine runs on (a platform object, or a node count for a cluster that keeps counts)."""
        raise NotImplementedError

    def job_fields(self, fields) -> tuple[str, ...]:
        """The SWF fields its platform reads of each job (none by default)."""
        return ()

    def describe(self, platform, fields) -> dict:
        """The run manifest's platform entry: ``kind`` and ``nodes`` at least."""
        return {"kind": platform.kind, "nodes": platform.capacity}

    def machine(self, fields):
        """The :class:`~torus_sim.machine.machines.Machine` whose figures (power) the platform's nodes have, or None (plain nodes)."""
        return None

    def default_failures(self, fields) -> str:
        """The failure source of a run on this platform whose fields names none (``none`` by default)."""
        return "none"

    def node_word(self, fields) -> str:
        """What the platform's nodes are called in the printed summary: ``node``."""
        return "node"

    def header(self, described: dict) -> str:
        """The run header's platform line from :meth:`describe`'s entry: ``cluster of 128 nodes``."""
        return f"{described['kind']} of {described['nodes']:,} nodes"

    def label(self, platform, fields) -> str:
        """A short label for the browser's scenario line: ``cluster of 128 nodes``."""
        return f"{platform.kind} of {platform.capacity:,} nodes"
