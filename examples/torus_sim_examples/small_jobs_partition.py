"""A platform plug-in: a cluster plus a partition of its own for small jobs (a site that bought nodes for short jobs).

``--platform example-small-jobs-partition --nodes P`` (or the log's MaxProcs): the ``large`` partition has the P
nodes, the ``small`` partition P // 8 more (at least one); a job of at most a quarter of the small partition runs
there, any other on the large one (every job of the log fits it). Each partition is planned by its own instance of the run's policy (the engine's partitioned
platform, :class:`torus_sim.api.PartitionedPlatform`), so a backlog of large jobs never holds a small one back.
Written against ``torus_sim.api`` only: no engine or policy file knows it.
"""

from __future__ import annotations

from torus_sim.api import ClusterPlatform, ConfigurationError, PartitionedPlatform, PlatformKind


class SmallJobsPartition(PlatformKind):
    """``small`` (P // 8 nodes, at least 1) for jobs of at most a quarter of it, ``large`` (P nodes) for the others.

    References:
        Slurm's partitions (``slurm.conf``: PartitionName, Nodes, MaxNodes) as many centres set one for short jobs.
    """

    name = "example-small-jobs-partition"
    default_rules = "pv-easy"
    sizes_from_workload = True
    from_scenario = ("nodes",)

    def capacity(self, fields, named: int | None) -> int:
        """P + P // 8 (at least one small node): P is the scenario's ``nodes``, else the workload's machine size."""
        nodes = fields.nodes or named
        if not nodes:
            raise ConfigurationError("example-small-jobs-partition needs the machine's nodes: give nodes")
        return int(nodes) + max(1, int(nodes) // 8)

    def build(self, fields, nodes: int, node_identities: bool = False) -> PartitionedPlatform:
        """The two partitions (``small`` first, then ``large``) and the router by size."""
        large = int(fields.nodes or 0) or (nodes * 8 + 8) // 9  # P back from P + P // 8 when the log named it
        while large + max(1, large // 8) > nodes:
            large -= 1
        small = nodes - large
        largest_small = max(1, small // 4)

        def route(job) -> tuple[int, int]:
            if job.size <= largest_small:
                return 0, job.size
            if job.size > large:
                raise ConfigurationError(f"job {job.job_id} asks {job.size} nodes; the large partition has {large}")
            return 1, job.size

        parts = [ClusterPlatform(small, identities=True), ClusterPlatform(large, identities=True)]
        return PartitionedPlatform(["small", "large"], parts, route, kind=self.name)
