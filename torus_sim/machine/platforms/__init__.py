"""Platforms: the machines jobs run on.

Key components:
    Platform: the protocol the engine and the policies talk to.
    TorusPlatform: the BlueGene/L torus of supernodes with contiguous rectangular partitions.
    ClusterPlatform: P nodes with identities (the flat machine of P identical processors).
    TorusOccupancy, ClusterOccupancy: planning copies of an occupancy (reservations, backfilling).
"""

from torus_sim.machine.platforms.base import Platform
from torus_sim.machine.platforms.cluster import ClusterOccupancy, ClusterPlatform
from torus_sim.machine.platforms.torus import NO_JOB, TorusOccupancy, TorusPlatform

__all__ = ["NO_JOB", "ClusterOccupancy", "ClusterPlatform", "Platform", "TorusOccupancy", "TorusPlatform"]
