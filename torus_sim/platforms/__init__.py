"""Platforms: the machines jobs run on.

Key components:
    TorusPlatform: the BlueGene/L torus of supernodes with contiguous rectangular partitions.
"""

from torus_sim.platforms.torus import NO_JOB, TorusPlatform

__all__ = ["NO_JOB", "TorusPlatform"]
