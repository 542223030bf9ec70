"""The protocol every platform implements, so that a policy never asks which machine it runs on."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

__all__ = ["Platform"]


@runtime_checkable
class Platform(Protocol):
    """What a scheduling policy may ask of a machine, and the only way it changes one.

    A platform owns the occupancy; it never decides anything. An *allocation* is the platform's
    own handle for the resources a job holds: a partition id on the torus, a processor count on
    the flat machine. A policy gets one from :meth:`find` and hands it back to :meth:`allocate`
    and :meth:`release`.

    Implementations: :class:`~torus_sim.platforms.torus.TorusPlatform` (contiguous rectangular
    partitions of supernodes) and :class:`~torus_sim.platforms.flat.FlatPlatform` (P identical
    processors).

    Hooks an implementation provides:
        capacity: total processors (flat) or supernodes (torus).
        free_count(): how many of them are free now.
        find(size): an allocation of ``size`` that is free now, or None ("can this job start now?").
        allocate(allocation, job_id): give it to a job; raises SimulationError when not free.
        release(allocation, job_id): take it back; raises SimulationError when the job does not hold it.
    """

    @property
    def capacity(self) -> int:  # noqa: D102
        ...

    def free_count(self) -> int:  # noqa: D102
        ...

    def find(self, size: int) -> object | None:  # noqa: D102
        ...

    def allocate(self, allocation, job_id: int) -> None:  # noqa: D102
        ...

    def release(self, allocation, job_id: int) -> None:  # noqa: D102
        ...
