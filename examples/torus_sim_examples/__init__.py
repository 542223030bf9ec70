"""Worked examples of torus-sim plug-ins (see docs/policies/README.md in torus-sim).

Key components:
    FirstFitSjfEasy: shortest-job-first with EASY backfilling and first-fit placement (torus and cluster).
    PluginFcfsEasy: FCFS-EASY written against the public API only; its job record equals the built-in's.
    AvoidFlagged: a fault-aware placement that keeps jobs off nodes a failure predictor flags.
    UserMedianRatio: a runtime predictor from the median accuracy of a user's last jobs.
    WeibullPerNode: a failure source: every node a Weibull renewal process (a machine's fitted model).
    LublinFeitelson: a workload generator: rigid jobs after Lublin and Feitelson (2003), simplified.
    SmallJobsPartition: a platform: a cluster whose small jobs have a partition of their own.
"""

from torus_sim_examples.avoid_flagged import AvoidFlagged
from torus_sim_examples.fcfs_easy import PluginFcfsEasy
from torus_sim_examples.lublin import LublinFeitelson
from torus_sim_examples.sjf_easy import FirstFit, FirstFitSjfEasy
from torus_sim_examples.small_jobs_partition import SmallJobsPartition
from torus_sim_examples.user_median import UserMedianRatio
from torus_sim_examples.weibull_failures import WeibullPerNode

__all__ = [
    "AvoidFlagged",
    "FirstFit",
    "FirstFitSjfEasy",
    "LublinFeitelson",
    "PluginFcfsEasy",
    "SmallJobsPartition",
    "UserMedianRatio",
    "WeibullPerNode",
]
