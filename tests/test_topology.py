import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.reference import torus_graph
from torus_sim.core.errors import ConfigurationError
from torus_sim.machine.topology import BGL_NODE_TORUS, BGL_SUPERNODE_TORUS, Torus


def test_bgl_supernode_torus_has_128_supernodes_of_the_4x4x8_shape():
    assert BGL_SUPERNODE_TORUS.dims == (4, 4, 8)
    assert BGL_SUPERNODE_TORUS.size == 128


def test_full_bgl_node_torus_is_constructible_with_65536_nodes():
    assert BGL_NODE_TORUS.size == 65536
    assert BGL_NODE_TORUS.coordinate(65535) == (31, 31, 63)


def test_index_and_coordinate_are_inverse_and_wrap_around():
    torus = BGL_SUPERNODE_TORUS
    for index in range(torus.size):
        assert torus.index(torus.coordinate(index)) == index
    assert torus.index((4, -1, 8)) == torus.index((0, 3, 0))


def test_every_supernode_has_six_neighbours_on_the_4x4x8_torus_including_wrap_links():
    torus = BGL_SUPERNODE_TORUS
    corner = torus.index((0, 0, 0))
    assert torus.neighbours(corner) == sorted(
        torus.index(c) for c in [(1, 0, 0), (3, 0, 0), (0, 1, 0), (0, 3, 0), (0, 0, 1), (0, 0, 7)]
    )
    graph = torus_graph(torus)
    assert graph.number_of_nodes() == 128
    assert all(sorted(graph.neighbors(n)) == torus.neighbours(n) for n in range(torus.size))


def test_coordinate_outside_the_torus_raises():
    with pytest.raises(IndexError):
        BGL_SUPERNODE_TORUS.coordinate(128)


@pytest.mark.parametrize("dims", [(0, 4, 8), (), (2,) * 7, (4, -1, 8), (4, True, 8), (4.0, 4, 8)])
def test_bad_dimensions_are_refused(dims):
    with pytest.raises(ConfigurationError):
        Torus(dims)


def test_torus_platform_refuses_a_busy_or_down_partition_and_a_release_by_another_job(bgl_table):
    from torus_sim.core.errors import SimulationError
    from torus_sim.machine.platforms.torus import TorusPlatform

    platform = TorusPlatform(table=bgl_table)
    box = bgl_table.free_ids_of_size(bgl_table.pack(platform.blocked()), 8)
    first, overlapping = int(box[0]), next(int(p) for p in box[1:] if bgl_table.overlaps([int(box[0])], [int(p)])[0, 0])
    platform.allocate(first, 1)
    with pytest.raises(SimulationError, match="not free for job 2"):
        platform.allocate(overlapping, 2)  # one supernode busy
    with pytest.raises(SimulationError, match="not held by job 2"):
        platform.release(first, 2)
    platform.release(first, 1)
    platform.take_down(int(bgl_table.members[overlapping][-1]), 100.0)
    with pytest.raises(SimulationError, match="not free for job 3"):
        platform.allocate(overlapping, 3)  # one supernode down
    assert not np.count_nonzero(platform.job_at != -1)  # the refused allocations left nothing behind


def test_torus_repairs_ahead_follow_failures_and_repairs_not_allocations(bgl_table):
    """The cached repair list is rebuilt on a downtime change only, and is then the plain sort of the down supernodes."""
    from torus_sim.machine.platforms.torus import TorusPlatform

    platform = TorusPlatform(table=bgl_table)
    assert platform.repairs_ahead() == []
    platform.take_down(5, 300.0)
    platform.take_down(9, 100.0)
    platform.take_down(7, np.inf)  # unknown repair time: not a known repair
    assert platform.repairs_ahead() == [(100.0, 9), (300.0, 5)]
    box = int(bgl_table.free_ids_of_size(bgl_table.pack(platform.blocked()), 4)[0])
    platform.allocate(box, 1)
    platform.release(box, 1)
    assert platform.repairs_ahead() == [(100.0, 9), (300.0, 5)]
    platform.take_down(9, 400.0)  # a later failure extends the downtime
    assert platform.repairs_ahead() == [(300.0, 5), (400.0, 9)]
    assert not platform.repair(9, 399.0)
    assert platform.repair(5, 300.0)
    assert platform.repairs_ahead() == [(400.0, 9)]
    listed = platform.repairs_ahead()
    listed.clear()  # a copy: the caller may change it
    assert platform.repairs_ahead() == [(400.0, 9)]


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), spares=st.sampled_from([0, 0, 4, 16]))
def test_torus_occupancy_int_follows_allocations_releases_failures_repairs_and_spares(bgl_table, seed, spares):
    """TorusPlatform.occupied (kept by |, &~) is always the packed busy | down | spare array; free_count its complement."""
    from torus_sim.machine.platforms.torus import TorusPlatform

    rng = np.random.default_rng(seed)
    platform = TorusPlatform(table=bgl_table)
    platform.reserve_spares(spares)
    running: dict[int, int] = {}
    for step in range(60):
        action = rng.integers(4)
        if action == 0:
            ids = bgl_table.free_ids_of_size(bgl_table.pack(platform.busy | platform.down), int(rng.choice([1, 2, 4, 8])))
            if len(ids):
                running[step] = int(rng.choice(ids))  # may lie on spares: a migration's target
                platform.allocate(running[step], step)
        elif action == 1 and running:
            job_id = int(rng.choice(list(running)))
            platform.release(running.pop(job_id), job_id)
        elif action == 2:
            node = int(rng.integers(bgl_table.torus.size))
            if platform.job_on(node) == -1:
                platform.take_down(node, float(rng.choice([50.0, np.inf])))
        else:
            platform.repair(int(rng.integers(bgl_table.torus.size)), float(rng.choice([0.0, 100.0])))
        blocked = platform.busy | platform.down | platform.spare
        assert platform.occupied() == bgl_table.occupied_of(bgl_table.pack(blocked))
        np.testing.assert_array_equal(platform.blocked(), blocked)
        assert platform.free_count() == bgl_table.torus.size - int(np.count_nonzero(blocked))
