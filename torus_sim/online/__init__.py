"""Online scheduling on the flat platform: SWF jobs arriving over time, EASY variants and PV-EASY.

Key components:
    load_online_workload: SWF -> jobs for P processors (cleaning rules counted).
    OnlineModel: the Mesa engine (arrivals, ends, one pass per instant, preemption modes).
    run_online: one replay by policy and predictor name.
    online_summary: MBS, MWBS, load, waste, preemptions, strict fairness, reservation violations.

The policies live in :mod:`torus_sim.policies.easy` and :mod:`torus_sim.policies.pv_easy`; the
runtime predictors in :mod:`predictors.runtime`.
"""

from torus_sim.online.jobs import OnlineJob, OnlineWorkload, load_online_workload
from torus_sim.online.metrics import job_table, online_summary, size_group_table
from torus_sim.online.model import OnlineModel, Preemption
from torus_sim.online.runs import ONLINE_POLICIES, OnlineResult, run_online

__all__ = [
    "ONLINE_POLICIES",
    "OnlineJob",
    "OnlineModel",
    "OnlineResult",
    "OnlineWorkload",
    "Preemption",
    "job_table",
    "load_online_workload",
    "online_summary",
    "run_online",
    "size_group_table",
]
