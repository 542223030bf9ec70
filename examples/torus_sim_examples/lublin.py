"""Example 6: a workload generator of your own: a (simplified) Lublin-Feitelson model of rigid jobs.

A generator that produces SWF records subclasses :class:`torus_sim.api.TraceSource`: the cleaning
rules, the load scale c, ``--offered-load`` and ``--max-jobs`` then apply to it as to a real log.

    torus-sim run --workload example-lublin --workload-param jobs=5000 --platform cluster --nodes 128

References:
    Lublin and Feitelson, "The workload on parallel supercomputers: modeling the characteristics of
    rigid jobs", JPDC 63(11), 2003: serial jobs, sizes log-uniform with a preference for powers of
    two, runtimes log-hyper-gamma with a size-dependent mix. This example keeps those three features
    with round parameters, and arrivals at a rate that gives the offered load asked for; it is not a
    calibrated reproduction of the paper's model (its daily cycle is left out).
"""

from pathlib import Path

import numpy as np
from torus_sim.api import SwfRecord, SwfTrace, TraceSource


class LublinFeitelson(TraceSource):
    """Rigid jobs after Lublin and Feitelson (2003), simplified, on a machine of ``nodes`` processors.

    Args:
        jobs: how many jobs, >= 1.
        nodes: the machine's processors (the SWF header's ``MaxProcs``), >= 1.
        load: the offered load the arrival rate aims at, > 0.
        serial: the share of serial (one-processor) jobs, in [0, 1].

    Raises:
        ValueError: an argument out of its range.
    """

    name = "example-lublin"
    from_scenario = (*TraceSource.from_scenario, "seed")  # the scenario fields it reads: TraceSource's and the seed

    def __init__(self, jobs: int = 2000, nodes: int = 128, load: float = 0.7, serial: float = 0.24) -> None:
        super().__init__()
        if jobs < 1 or nodes < 1 or not load > 0 or not 0 <= serial <= 1:
            raise ValueError(f"jobs and nodes >= 1, load > 0 and serial in [0, 1]; got {jobs}, {nodes}, {load}, {serial}")
        self.job_count, self.nodes, self.load, self.serial = jobs, nodes, load, serial

    def trace(self, context) -> SwfTrace:
        """The jobs as SWF records, drawn from the run's seed (``--seed``: another workload)."""
        rng = np.random.default_rng([context.scenario.seed, 2003])
        count, top = self.job_count, np.log2(self.nodes)
        log_size = rng.uniform(1.0, max(top, 1.0), count)
        sizes = np.where(rng.random(count) < 0.75, 2.0 ** np.round(log_size), np.round(2.0**log_size))
        sizes = np.where(rng.random(count) < self.serial, 1, np.clip(sizes, 1, self.nodes)).astype(int)
        short = rng.random(count) < 0.4 + 0.3 * (1.0 - np.log2(sizes) / max(top, 1.0))  # small jobs are short more often
        log_runtime = np.where(short, rng.gamma(4.2, 0.94, count), rng.gamma(312.0, 0.03, count))
        runtimes = np.maximum(1.0, np.round(np.exp(log_runtime)))
        walltimes = np.ceil(runtimes * rng.uniform(1.0, 5.0, count) / 300.0) * 300.0  # users overestimate, in 5-minute steps
        mean_gap = float(np.sum(sizes * runtimes)) / (self.load * self.nodes * count)
        submits = np.round(np.cumsum(rng.gamma(2.0, mean_gap / 2.0, count)))
        users = rng.integers(1, 50, count)
        records = [
            SwfRecord(
                i + 1, float(s), -1.0, float(r), int(p), -1.0, -1.0, int(p), float(w), -1.0, 1, int(u), -1, -1, -1, -1, -1, -1.0
            )
            for i, (s, r, p, w, u) in enumerate(zip(submits, runtimes, sizes, walltimes, users, strict=True))
        ]
        header = {
            "MaxNodes": str(self.nodes),
            "MaxProcs": str(self.nodes),
            "Note": "torus-sim example: simplified Lublin-Feitelson 2003",
        }
        name = f"example-lublin(jobs={self.job_count},nodes={self.nodes},load={self.load:g},seed={context.scenario.seed})"
        return SwfTrace.from_records(Path(name), "", header, records)
