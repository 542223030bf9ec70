"""Workload input: Standard Workload Format traces and the jobs built from them.

Key components:
    read_swf: the SWF reader (plain or gzip, 18 fields, header).
    jobs_from_swf: the documented cleaning rules, load scale c, size rounding.
    Workload: the jobs of a run with their provenance.
"""

from torus_sim.inputs.workload.jobs import Workload, jobs_from_swf
from torus_sim.inputs.workload.swf import SWF_FIELDS, SwfRecord, SwfTrace, read_swf

__all__ = ["SWF_FIELDS", "SwfRecord", "SwfTrace", "Workload", "jobs_from_swf", "read_swf"]
