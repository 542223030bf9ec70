"""Deprecated alias (one release): :func:`run_set` moved to :mod:`torus_sim.experiments.batch`."""

import warnings

from torus_sim.experiments.batch import run_set

__all__ = ["run_set"]

warnings.warn(
    "torus_sim.flat.experiments is deprecated: import run_set from torus_sim.experiments.batch", DeprecationWarning, stacklevel=2
)
