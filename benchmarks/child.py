"""Code shared by the replays that run in a child process of their own (``python -c``).

The child's source is a string (it may run another checkout's code, so it cannot import from this
``benchmarks`` package); :data:`CHILD_PRELUDE` is the part every child starts with.
"""

from __future__ import annotations

CHILD_PRELUDE = """
import json, resource, sys, time
def peak_mib():
    # VmHWM: this process's own peak (ru_maxrss survives exec and can be the forking parent's)
    try:
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmHWM")) / 1024
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
from torus_sim.experiments.runner import Scenario, build_model
"""
"""Imports and ``peak_mib()``: the child's peak resident memory in MiB."""
