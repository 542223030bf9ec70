"""Flat platforms: batches of rigid or moldable jobs hit by silent errors, on P identical processors.

Key components:
    FlatModel: the Mesa engine (DEVS clock, one event per attempt end, silent-error detection).
    RigidJobSet, generate_rigid_set: rigid jobs (t_j, p_j) and RIGID §5.1's synthetic sets.
    speedup models: roofline, communication, Amdahl, mix, power, monotonic and arbitrary tables.
    draw_scenarios: failure scenarios f (geometric f_j from q_j).
    rigid_lower_bound, moldable_lower_bound: L(f) and L'(J, f) for normalization.
    run_rigid, run_moldable: one run by heuristic name.

The policies live in :mod:`torus_sim.policies.rigid` and :mod:`torus_sim.policies.moldable`.
"""

from torus_sim.flat.bounds import moldable_lower_bound, rigid_lower_bound
from torus_sim.flat.jobs import RigidJobSet, generate_rigid_set
from torus_sim.flat.model import FlatModel, FlatPolicy, FlatRunResult
from torus_sim.flat.runs import MOLDABLE_ALGORITHMS, RIGID_HEURISTICS, run_moldable, run_rigid
from torus_sim.flat.scenarios import (
    draw_scenarios,
    error_rate_for_mean_probability,
    failure_probabilities_by_area,
    failure_probabilities_by_work,
)
from torus_sim.flat.speedup import SPEEDUP_MODELS, generate_speedup_model

__all__ = [
    "MOLDABLE_ALGORITHMS",
    "RIGID_HEURISTICS",
    "SPEEDUP_MODELS",
    "FlatModel",
    "FlatPolicy",
    "FlatRunResult",
    "RigidJobSet",
    "draw_scenarios",
    "error_rate_for_mean_probability",
    "failure_probabilities_by_area",
    "failure_probabilities_by_work",
    "generate_rigid_set",
    "generate_speedup_model",
    "moldable_lower_bound",
    "rigid_lower_bound",
    "run_moldable",
    "run_rigid",
]
