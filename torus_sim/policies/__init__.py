"""Scheduling policies: order and placement; a policy never advances time.

Key components:
    KrevatScheduler: FCFS + backfilling + migration (BGL-FAULT §5.1).
    PlacementPolicy, MfpPlacement: which free partition a job gets (the MFP heuristic).
"""

from torus_sim.policies.krevat import KrevatScheduler, Repack, Start
from torus_sim.policies.placement import PLACEMENTS, MfpPlacement, PlacementPolicy

__all__ = ["PLACEMENTS", "KrevatScheduler", "MfpPlacement", "PlacementPolicy", "Repack", "Start"]
