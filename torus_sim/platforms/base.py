"""The protocol every platform implements, so that the engine and the policies never ask which machine it is."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

__all__ = ["Platform", "interval_text"]


def interval_text(ids) -> str:
    """Node ids as Batsim's interval-set text: ``[0, 1, 2, 3, 7, 9, 10]`` -> ``"0-3 7 9-10"``.

    The format of ``procset.ProcSet``'s ``str`` (Batsim's ``allocated_resources``), computed with numpy:
    building a ProcSet one id at a time cost a third of a torus run's recording.

    Args:
        ids: node ids, int ``(n,)``, any order, no repeats.

    Returns:
        Maximal runs of consecutive ids, ascending, ``a-b`` or ``a`` each, separated by spaces ("" for none).
    """
    ids = np.sort(np.asarray(ids, dtype=np.int64))
    if not ids.size:
        return ""
    breaks = np.flatnonzero(np.diff(ids) != 1)
    starts = ids[np.concatenate(([0], breaks + 1))].tolist()
    ends = ids[np.concatenate((breaks, [ids.size - 1]))].tolist()
    return " ".join(str(a) if a == b else f"{a}-{b}" for a, b in zip(starts, ends, strict=True))


@runtime_checkable
class Platform(Protocol):
    """What the engine and a policy may ask of a machine, and the only way the engine changes one.

    A platform owns the occupancy; it never decides anything. An *allocation* is the platform's
    own handle for the nodes a job holds: a partition id on the torus; node ids (or a node count,
    when the cluster keeps no identities) on a cluster. A policy gets one from :meth:`find` (or the
    view's placement) and hands it to the engine in a Start action.

    Implementations: :class:`~torus_sim.platforms.torus.TorusPlatform` (contiguous rectangular
    partitions of supernodes) and :class:`~torus_sim.platforms.cluster.ClusterPlatform` (P nodes).

    Hooks an implementation provides:
        kind: ``"torus"`` or ``"cluster"``.
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
    """

    kind: str

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
