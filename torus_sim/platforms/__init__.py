"""Platforms: the machines jobs run on.

Key components:
    Platform: the protocol policies talk to (find, allocate, release, free_count, capacity).
    TorusPlatform: the BlueGene/L torus of supernodes with contiguous rectangular partitions.
    FlatPlatform: P identical processors.
"""

from torus_sim.platforms.base import Platform
from torus_sim.platforms.flat import FlatPlatform
from torus_sim.platforms.torus import NO_JOB, TorusPlatform

__all__ = ["NO_JOB", "FlatPlatform", "Platform", "TorusPlatform"]
