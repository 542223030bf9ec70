"""The platform protocol (issue 76): what the engine and the policies ask a machine, answered alike by every kind.

The engine and the policies choose their paths from a platform's capabilities (``counts_fit``, ``counts_only``,
``tracks_nodes``, ``table``) and its answers (``fits_now``, ``mfp``, ``size_refusal``, ``allocation_text``,
``coordinate``), never from its kind's name (tests/test_architecture.py checks the source). These tests hold each
answer against the plain definition on the platforms' own occupancy.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from torus_sim.core.errors import ConfigurationError
from torus_sim.machine.partitions import feasible_sizes
from torus_sim.machine.platforms.base import Platform, interval_text
from torus_sim.machine.platforms.cluster import ClusterPlatform
from torus_sim.machine.platforms.kinds import partition_table
from torus_sim.machine.platforms.torus import TorusPlatform
from torus_sim.machine.topology import Torus

SMALL = Torus((2, 2, 4))


def _platforms():
    return [
        TorusPlatform(SMALL, partition_table(SMALL)),
        ClusterPlatform(16, identities=True),
        ClusterPlatform(16, identities=False),
    ]


@pytest.mark.parametrize("platform", _platforms(), ids=["torus", "cluster-ids", "cluster-counts"])
def test_every_built_in_platform_has_the_protocol_and_consistent_capabilities(platform):
    assert isinstance(platform, Platform)
    assert platform.counts_only == (platform.counts_fit and not platform.tracks_nodes)
    assert (platform.table is None) == platform.counts_fit  # a shape to respect, or any free nodes
    assert platform.node_word in ("supernode", "node")
    assert platform.mfp() == platform.capacity == platform.free_count()  # empty: everything free


def test_the_capabilities_tell_the_three_representations_apart():
    torus, ids, counts = _platforms()
    assert (torus.tracks_nodes, torus.counts_fit, torus.counts_only) == (True, False, False)
    assert (ids.tracks_nodes, ids.counts_fit, ids.counts_only) == (True, True, False)
    assert (counts.tracks_nodes, counts.counts_fit, counts.counts_only) == (False, True, True)
    assert torus.label == "torus 2x2x4" and ids.label == "cluster of 16 nodes"


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(feasible_sizes(SMALL.dims)), max_size=6), st.lists(st.integers(0, 15), max_size=3))
def test_a_torus_answers_fits_now_and_mfp_as_its_partitions_say(sizes, down):
    platform = TorusPlatform(SMALL, partition_table(SMALL))
    for node in down:
        platform.take_down(node, float("inf"))
    for job_id, size in enumerate(sizes):
        found = platform.find(size)
        if found is not None:
            platform.allocate(found, job_id)
    for size in range(1, SMALL.size + 2):
        assert platform.fits_now(size) == (platform.find(size) is not None)
    assert platform.mfp() == max((size for size in feasible_sizes(SMALL.dims) if platform.find(size) is not None), default=0)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 8), max_size=5), st.booleans())
def test_a_cluster_answers_fits_now_and_mfp_from_its_free_count(sizes, identities):
    platform = ClusterPlatform(16, identities=identities)
    for job_id, size in enumerate(sizes):
        found = platform.find(size)
        if found is not None:
            platform.allocate(found, job_id)
    for size in range(1, 18):
        assert platform.fits_now(size) == (platform.find(size) is not None)
    assert platform.mfp() == platform.free_count()


def test_allocation_text_is_the_members_interval_set_or_nothing_for_counts():
    torus, ids, counts = _platforms()
    partition = torus.find(8)
    assert torus.allocation_text(partition) == interval_text(torus.members(partition)) != ""
    assert torus.allocation_text(partition) is torus.allocation_text(partition)  # made once per partition id
    nodes = ids.find(5)
    assert ids.allocation_text(nodes) == "0-4"
    assert counts.allocation_text(counts.find(5)) == ""


def test_size_refusal_names_what_the_machine_cannot_give():
    torus, ids, _ = _platforms()
    assert torus.size_refusal(4) is None
    assert torus.size_refusal(SMALL.size + 1) == "which the torus (2, 2, 4) cannot give"
    unformable = next(size for size in range(1, SMALL.size) if torus.round_size(size) != size)
    assert torus.size_refusal(unformable) is not None
    assert ids.size_refusal(16) is None
    assert ids.size_refusal(17) == "which a cluster of 16 cannot give"


def test_coordinates_place_nodes_on_the_torus_or_the_drawing_grid():
    torus, ids, _ = _platforms()
    assert torus.coordinate(5) == SMALL.coordinate(5)
    assert ids.coordinate(5) == divmod(5, ids.layout()[1])


def test_the_engine_runs_on_any_object_with_the_protocol_and_refuses_anything_else():
    from failure_logs.events import FailureLog
    from torus_sim.core.job import Job
    from torus_sim.engine.model import SchedulingModel
    from torus_sim.inputs.workload.jobs import Workload
    from torus_sim.policies.easy import EasyPolicy

    class Racks(ClusterPlatform):
        """A plug-in's platform: the cluster's answers, its own class (not one the engine names)."""

    def workload():
        rows = [(1, 0.0, 100.0, 4), (2, 0.0, 50.0, 16), (3, 10.0, 30.0, 8)]
        return Workload(jobs=[Job(i, at, runtime=run, walltime=run, size=size) for i, at, run, size in rows], source="hand-made")

    record = SchedulingModel(workload(), EasyPolicy(), Racks(16, identities=False)).run()
    assert record.jobs.set_index("job_id")["started_at"].to_dict() == {1: 0.0, 2: 100.0, 3: 10.0}
    with pytest.raises(ConfigurationError, match="Platform protocol"):
        SchedulingModel(workload(), EasyPolicy(), object())
    log = FailureLog(np.array([5.0]), np.array([3]), np.array([np.nan]))
    with pytest.raises(ConfigurationError, match="need a platform with node identities"):
        SchedulingModel(workload(), EasyPolicy(), Racks(16, identities=False), log)
