import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.reference import brute_force_free_partitions, mfp_after_by_groups, reservation_by_steps
from torus_sim.core.errors import ConfigurationError
from torus_sim.machine.partition_table import PartitionTable
from torus_sim.machine.partitions import (
    Partition,
    feasible_sizes,
    free_partitions_by_box_sums,
    mfp_by_box_sums,
    partition_count,
    partitions_of_size,
    round_up_to_feasible_size,
    shapes_of_size,
)
from torus_sim.machine.topology import BGL_NODE_TORUS, BGL_SUPERNODE_TORUS, Torus

SMALL_DIMS = [(4, 4, 8), (2, 3, 4), (1, 1, 6), (3, 3, 3), (2, 2, 2)]
_TABLES = {dims: PartitionTable(Torus(dims)) for dims in SMALL_DIMS}


def test_the_4x4x8_torus_has_9633_distinct_partitions():
    table = _TABLES[(4, 4, 8)]
    assert partition_count((4, 4, 8)) == 9633 == len(table.partitions)
    assert len({tuple(p.supernodes(BGL_SUPERNODE_TORUS)) for p in table.partitions}) == 9633


def test_a_box_spanning_a_whole_dimension_is_one_partition_whatever_its_base():
    whole = partitions_of_size(BGL_SUPERNODE_TORUS, 128)
    assert whole == [Partition((0, 0, 0), (4, 4, 8))]
    slabs = [p for p in partitions_of_size(BGL_SUPERNODE_TORUS, 16) if p.shape == (4, 4, 1)]
    assert [p.base for p in slabs] == [(0, 0, z) for z in range(8)]


def test_partition_wraps_around_the_torus():
    box = Partition((3, 0, 7), (2, 1, 2))
    torus = BGL_SUPERNODE_TORUS
    expected = sorted(torus.index(c) for c in [(3, 0, 7), (3, 0, 0), (0, 0, 7), (0, 0, 0)])
    assert box.supernodes(torus).tolist() == expected


def test_sizes_without_a_rectangular_shape_round_up_to_the_next_size_with_one():
    sizes = feasible_sizes((4, 4, 8))
    assert 11 not in sizes and 13 not in sizes and 17 not in sizes
    assert shapes_of_size((4, 4, 8), 11) == ()
    assert round_up_to_feasible_size((4, 4, 8), 11) == 12
    assert round_up_to_feasible_size((4, 4, 8), 13) == 14
    assert round_up_to_feasible_size((4, 4, 8), 127) == 128
    assert round_up_to_feasible_size((4, 4, 8), 12) == 12
    with pytest.raises(ConfigurationError):
        round_up_to_feasible_size((4, 4, 8), 129)


occupancies = st.sampled_from(SMALL_DIMS).flatmap(
    lambda dims: st.tuples(
        st.just(dims),
        st.lists(st.booleans(), min_size=dims[0] * dims[1] * dims[2], max_size=dims[0] * dims[1] * dims[2]),
        st.integers(min_value=1, max_value=dims[0] * dims[1] * dims[2]),
    )
)


@settings(max_examples=150, deadline=None)
@given(occupancies)
def test_table_and_box_sum_finders_match_brute_force_on_random_occupancies(case):
    dims, flags, size = case
    torus = Torus(dims)
    blocked = np.array(flags)
    table = _TABLES[dims]
    expected = brute_force_free_partitions(torus, blocked, size)
    by_table = {table.partitions[i] for i in table.free_ids_of_size(table.pack(blocked), size)}
    assert by_table == expected
    assert set(free_partitions_by_box_sums(torus, blocked, size)) == expected


@settings(max_examples=150, deadline=None)
@given(occupancies)
def test_mfp_is_the_largest_free_partition_found_by_brute_force(case):
    dims, flags, _ = case
    torus = Torus(dims)
    blocked = np.array(flags)
    expected = max((s for s in feasible_sizes(dims) if brute_force_free_partitions(torus, blocked, s)), default=0)
    table = _TABLES[dims]
    assert table.mfp(table.pack(blocked)) == expected
    assert mfp_by_box_sums(torus, blocked) == expected


@settings(max_examples=80, deadline=None)
@given(occupancies)
def test_mfp_after_placing_each_candidate_matches_a_recount(case):
    dims, flags, size = case
    table = _TABLES[dims]
    blocked = np.array(flags)
    words = table.pack(blocked)
    candidates = table.free_ids_of_size(words, size)
    after = table.mfp_after(candidates, words)
    for pid, value in zip(candidates, after, strict=True):
        placed = blocked.copy()
        placed[table.members[pid]] = True
        assert value == table.mfp(table.pack(placed))


def test_empty_4x4x8_torus_mfp_is_128_and_one_busy_supernode_leaves_112():
    table = _TABLES[(4, 4, 8)]
    blocked = np.zeros(128, dtype=bool)
    assert table.mfp(table.pack(blocked)) == 128
    blocked[0] = True
    assert table.mfp(table.pack(blocked)) == 112  # a 4x4x7 box avoids one z-plane


def test_full_bgl_node_torus_answers_a_free_partition_query():
    blocked = np.zeros(BGL_NODE_TORUS.size, dtype=bool)
    blocked[BGL_NODE_TORUS.index((5, 6, 7))] = True
    halves = free_partitions_by_box_sums(BGL_NODE_TORUS, blocked, 32 * 32 * 32)
    assert Partition((0, 0, 8), (32, 32, 32)) in halves
    z_halves = [p for p in halves if p.shape == (32, 32, 32)]
    assert [p.base[2] for p in z_halves] == list(range(8, 40))  # windows of 32 z-planes avoiding z = 7
    node = BGL_NODE_TORUS.index((5, 6, 7))
    assert all(node not in p.supernodes(BGL_NODE_TORUS) for p in halves)
    with pytest.raises(ConfigurationError):
        PartitionTable(BGL_NODE_TORUS)


@settings(max_examples=60, deadline=None)
@given(
    dims=st.sampled_from([(4, 4, 8), (2, 2, 2), (1, 1, 5), (3, 2, 4)]),
    occupancy=st.floats(0.0, 1.0),
    seed=st.integers(0, 2**32 - 1),
)
def test_the_memoized_bitset_mfp_after_equals_the_group_by_group_reference(bgl_table, dims, occupancy, seed):
    table = _table_for(bgl_table, dims)
    blocked = np.random.default_rng(seed).random(table.torus.size) < occupancy
    words = table.pack(blocked)
    for size in sorted(set(table.sizes.tolist())):
        candidates = table.free_ids_of_size(words, size)
        expected = mfp_after_by_groups(table, candidates, words)
        np.testing.assert_array_equal(table.mfp_after(candidates, words), expected)
        np.testing.assert_array_equal(table.mfp_after(candidates, words), expected)  # from the memo
        if len(candidates):
            assert table._mfp_choice(candidates, words) == int(np.argmax(expected))
            assert table.mfp_choice(candidates, words) == int(np.argmax(expected)) == table.mfp_choice(candidates, words)
        flags = table.free_flags(words)
        free = np.flatnonzero(flags)
        np.testing.assert_array_equal(candidates, free[table.sizes[free] == size])
        assert not candidates.flags.writeable and not flags.flags.writeable  # memoized answers cannot be changed


@settings(max_examples=40, deadline=None)
@given(
    down_share=st.floats(0.0, 0.3),
    seed=st.integers(0, 2**32 - 1),
    repacks=st.integers(1, 6),
)
def test_krevat_repacks_from_its_trie_equal_placing_every_job_again(bgl_table, down_share, seed, repacks):
    # The trie replays known (prefix, size) steps; it must give the partitions a fresh placement gives,
    # whether it hits, misses, or is emptied, for related size sequences (one job more or fewer).
    from types import SimpleNamespace

    import torus_sim.policies.krevat as krevat
    from torus_sim.policies.placement import PlacementPolicy

    rng = np.random.default_rng(seed)
    down = rng.random(bgl_table.torus.size) < down_share
    sizes = list(rng.choice([1, 2, 4, 8, 16, 32], size=rng.integers(1, 30)))
    remembering, plain = krevat.KrevatScheduler(), krevat.KrevatScheduler()
    for _ in range(repacks):
        jobs = [SimpleNamespace(partition_size=int(size)) for size in [sizes[0], *sorted(sizes[1:], reverse=True)]]
        placed = PlacementPolicy.place_in_order(plain.placement, bgl_table, jobs, bgl_table.pack(down), 0.0)
        expected = placed if len(placed) == len(jobs) else None  # the generic loop: pack, count, choose
        assert remembering._place_in_order_memo(bgl_table, jobs, down, 0.0) == expected
        assert remembering._place_in_order_memo(bgl_table, jobs, down, 0.0) == expected  # all from the trie
        if rng.random() < 0.5 and len(sizes) > 1:
            sizes.pop(int(rng.integers(1, len(sizes))))
        else:
            sizes.append(int(rng.choice([1, 2, 4, 8])))
        if rng.random() < 0.2:
            remembering._repack_trie.clear()
            remembering._repack_roots.clear()


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), jobs=st.integers(0, 40), head_size=st.sampled_from([1, 2, 4, 8, 16, 32, 64, 128]))
def test_krevat_reservation_on_int_occupancy_equals_releasing_instant_by_instant(bgl_table, seed, jobs, head_size):
    from types import SimpleNamespace

    from torus_sim.policies.krevat import KrevatScheduler

    rng = np.random.default_rng(seed)
    now = 1000.0
    blocked = rng.random(bgl_table.torus.size) < 0.05  # spares / down with no known repair: never released
    repairs = []
    for supernode in np.flatnonzero(~blocked)[: int(rng.integers(0, 4))]:
        blocked[supernode] = True
        repairs.append((float(rng.choice([now - 5, now + 50, now + 300, now + 300])), int(supernode)))
    allocation, expected_end = {}, {}
    for index in range(jobs):
        candidates = bgl_table.free_ids_of_size(bgl_table.pack(blocked), int(rng.choice([1, 2, 4, 8, 16])))
        if not len(candidates):
            continue
        job = index  # the allocation maps jobs (any hashable) to partition ids
        allocation[job] = int(candidates[rng.integers(len(candidates))])
        expected_end[job] = now + float(rng.choice([0, 10, 50, 300, 300, 1e4]))
        blocked[bgl_table.members[allocation[job]]] = True
    head = SimpleNamespace(partition_size=head_size)
    scheduler = KrevatScheduler()
    arguments = (allocation, expected_end, sorted(repairs), now)
    occupied = bgl_table.occupied_of(bgl_table.pack(blocked))
    at, shadow = scheduler._reservation(bgl_table, head, occupied, *arguments)
    expected_at, expected_shadow = reservation_by_steps(bgl_table, head, blocked, *arguments)
    assert at == expected_at
    np.testing.assert_array_equal(bgl_table.words_of(shadow), bgl_table.pack(expected_shadow))
    again_at, again_shadow = scheduler._reservation(bgl_table, head, occupied, *arguments)  # has_free from the memo
    assert again_at == expected_at and again_shadow == shadow


THREE_TORI = st.sampled_from([(4, 4, 8), (2, 3, 4), (1, 1, 6)])  # BG/L's, an uneven one, a ring


def _table_for(bgl_table, dims):
    return bgl_table if dims == (4, 4, 8) else PartitionTable(Torus(dims))


@settings(max_examples=80, deadline=None)
@given(
    dims=THREE_TORI,
    occupancy=st.floats(0.0, 1.0),
    seed=st.integers(0, 2**32 - 1),
)
def test_mfp_choice_is_the_first_best_of_the_reference_for_any_candidate_set(bgl_table, dims, occupancy, seed):
    table, rng = _table_for(bgl_table, dims), np.random.default_rng(seed)
    words = table.pack(rng.random(table.torus.size) < occupancy)
    count = len(table.partitions)
    candidates = np.sort(rng.choice(count, size=int(rng.integers(1, min(count, 300) + 1)), replace=False))
    candidates = rng.permutation(candidates) if rng.random() < 0.5 else candidates  # any order, any sizes
    expected = mfp_after_by_groups(table, candidates, words)
    assert table._mfp_choice(candidates, words) == int(np.argmax(expected))


@settings(max_examples=60, deadline=None)
@given(dims=THREE_TORI, occupancy=st.floats(0.0, 1.0), seed=st.integers(0, 2**32 - 1))
def test_int_occupancy_round_trips_and_has_free_agrees_with_the_free_partition_finder(bgl_table, dims, occupancy, seed):
    table, rng = _table_for(bgl_table, dims), np.random.default_rng(seed)
    blocked = rng.random(table.torus.size) < occupancy
    words = table.pack(blocked)
    occupied = table.occupied_of(words)
    assert occupied == sum(1 << int(node) for node in np.flatnonzero(blocked))
    np.testing.assert_array_equal(table.words_of(occupied), words)
    for partition_id in rng.choice(len(table.partitions), size=20):
        assert table.mask_ints[partition_id] == sum(1 << int(node) for node in table.members[partition_id])
    for size in [*sorted(set(table.sizes.tolist())), table.torus.size + 1]:
        expected = bool(len(table.free_ids_of_size(words, size)))
        assert table.has_free(occupied, size) == expected == table.has_free(occupied, size)  # the second from the memo
    with pytest.raises(OverflowError):
        table.words_of(1 << (64 * table.words))


@settings(max_examples=60, deadline=None)
@given(dims=THREE_TORI, seed=st.integers(0, 2**32 - 1))
def test_disjoint_from_any_equals_the_pairwise_overlap_reference(bgl_table, dims, seed):
    table, rng = _table_for(bgl_table, dims), np.random.default_rng(seed)
    count = len(table.partitions)
    ids = rng.choice(count, size=int(rng.integers(1, min(count, 200) + 1)), replace=False)
    others = rng.choice(count, size=int(rng.integers(1, min(count, 200) + 1)), replace=False)
    expected_disjoint = ~table.overlaps(ids, others).all(axis=1)
    np.testing.assert_array_equal(table.disjoint_from_any(ids, others), expected_disjoint)
    again = table.disjoint_from_any(ids.copy(), others.copy())  # equal lists, new arrays: from the memo
    np.testing.assert_array_equal(again, expected_disjoint)
    assert not again.flags.writeable
    words = table.pack(rng.random(table.torus.size) < rng.random())
    expected = {size for size in set(table.sizes.tolist()) if len(table.free_ids_of_size(words, size))}
    assert table.open_sizes(words) == expected == table.open_sizes(words)  # the second from the memo


@settings(max_examples=60, deadline=None)
@given(
    dims=THREE_TORI,
    occupancy=st.floats(0.0, 0.6),
    seed=st.integers(0, 2**32 - 1),
)
def test_mfp_place_in_order_on_kept_free_bits_equals_packing_each_occupancy_again(bgl_table, dims, occupancy, seed):
    # The MFP placement keeps the free partitions' bits up to date (free & disjoint_row) instead of
    # packing each occupancy and counting its free partitions again: the same partitions, the same stop.
    from types import SimpleNamespace

    from torus_sim.policies.placement import MfpPlacement, PlacementPolicy

    table, rng = _table_for(bgl_table, dims), np.random.default_rng(seed)
    blocked = rng.random(table.torus.size) < occupancy
    words = table.pack(blocked)
    sizes = rng.choice(sorted(set(table.sizes.tolist())), size=int(rng.integers(1, 25)))
    jobs = [SimpleNamespace(partition_size=int(size)) for size in sizes]
    placement = MfpPlacement()
    fast = placement.place_in_order(table, jobs, words, 0.0)
    assert fast == PlacementPolicy.place_in_order(placement, table, jobs, words, 0.0)
    scratch = blocked.copy()
    for job, partition_id in zip(jobs, fast, strict=False):
        free = table.free_bits(table.pack(scratch))
        candidates = table.free_ids_of_size(table.pack(scratch), job.partition_size)
        np.testing.assert_array_equal(table.free_ids_in(free, job.partition_size), candidates)
        assert partition_id == int(candidates[int(np.argmax(mfp_after_by_groups(table, candidates, table.pack(scratch))))])
        scratch[table.members[partition_id]] = True
        np.testing.assert_array_equal(free & table.disjoint_row(partition_id), table.free_bits(table.pack(scratch)))
    if len(fast) < len(jobs):
        assert not len(table.free_ids_of_size(table.pack(scratch), jobs[len(fast)].partition_size))


@pytest.mark.parametrize("dims", [(4, 4, 8), (2, 3, 4, 4), (1, 1, 8), (3, 5, 2)])
def test_the_table_lists_each_partitions_supernodes_as_the_partition_does(dims):
    # the table computes its members one shape at a time (issue 61: 0.39 s -> 0.03 s on the 4x4x8 torus);
    # each must be the partition's own box, ascending, whatever the base's wrap-around
    torus = Torus(dims)
    table = PartitionTable(torus)
    assert len(table.members) == len(table.partitions) > 0
    for partition, members in zip(table.partitions, table.members, strict=True):
        expected = partition.supernodes(torus)
        assert members.dtype == expected.dtype and np.array_equal(members, expected)


@pytest.mark.parametrize("dims", [(4, 4, 8), (2, 3, 4, 4), (1, 1, 8), (3, 5, 2)])
def test_the_disjointness_bits_are_the_complement_of_the_pairwise_overlaps(bgl_table, dims):
    # built from the boxes' intervals along each dimension (0.42 s pairwise, 0.1-0.3 s by holders, ~0.02 s): the bits of
    # ~overlaps(p, q) for every pair, padding clear, a partition never disjoint from itself
    from torus_sim.machine.partition_table import _pack_bits

    table = _table_for(bgl_table, dims)
    every = np.arange(len(table.partitions))
    expected = np.concatenate(
        [_pack_bits(~table.overlaps(every[start : start + 128], every)) for start in range(0, len(every), 128)]
    )
    bits = table._disjoint_bits()
    assert bits.dtype == np.uint64 and np.array_equal(bits, expected)
    assert not bits.flags.writeable
    # what the engine reads, made from the bitsets by dimension without the whole table: rows and columns
    fresh = PartitionTable(Torus(dims))
    some = every[:: max(1, len(every) // 50)]
    assert np.array_equal(np.array([fresh.disjoint_row(int(p)) for p in some]), expected[some])
    assert np.array_equal(fresh._disjoint_rows(some), expected[some])
    for k in range(expected.shape[1]):
        column = fresh._disjoint_column(k)
        assert np.array_equal(column, expected[:, k]) and not column.flags.writeable
    assert fresh._disjoint is None  # the whole table was never made for them


def test_the_disjointness_bits_on_a_torus_with_mesh_dimensions():
    # the product rule (disjoint along some dimension) holds for intervals that do not wrap: a mesh's boxes
    from torus_sim.machine.partition_table import _pack_bits

    table = PartitionTable(Torus((3, 4, 4), wraps=(True, False, False)))
    every = np.arange(len(table.partitions))
    expected = np.concatenate(
        [_pack_bits(~table.overlaps(every[start : start + 128], every)) for start in range(0, len(every), 128)]
    )
    assert np.array_equal(table._disjoint_bits(), expected)
    assert not np.array_equal(expected, PartitionTable(Torus((3, 4, 4)))._disjoint_bits())  # rings: other boxes
