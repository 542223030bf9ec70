"""N-dimensional tori (1 to 6 dimensions, rings and meshes) and machine descriptions.

Every finder is checked against a reference that knows nothing of canonical bases: every
(base, extent) box of the torus, its cells by modular arithmetic, skipped where it would cross
the end of a mesh dimension, deduplicated as sets of supernodes.
"""

from functools import cache
from itertools import product

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.reference import brute_force_free_partitions, torus_graph
from torus_sim.core.errors import ConfigurationError
from torus_sim.machine.machines import MACHINES, load_machine, parse_torus_dims
from torus_sim.machine.partition_table import PartitionTable
from torus_sim.machine.partitions import (
    feasible_sizes,
    free_partitions_by_box_sums,
    mfp_by_box_sums,
    partition_count,
    round_up_to_feasible_size,
)
from torus_sim.machine.topology import BGL_SUPERNODE_TORUS, Torus


@cache
def every_box(torus: Torus) -> dict[frozenset, int]:
    """Every distinct box of the torus as its set of supernodes -> its size (the plain definition).

    Made once per torus (Mira's takes most of a second; the property test below asks 40 times); callers only read it.
    """
    boxes = {}
    strides = [int(np.prod(torus.dims[axis + 1 :])) for axis in range(len(torus.dims))]  # C order, as ravel_multi_index
    for base in product(*(range(d) for d in torus.dims)):
        for shape in product(*(range(1, d + 1) for d in torus.dims)):
            if torus.block_sizes is not None and int(np.prod(shape)) not in torus.block_sizes:
                continue
            if any(not w and b + e > d for b, e, d, w in zip(base, shape, torus.dims, torus.wraps, strict=True)):
                continue
            cells = frozenset(
                sum(((b + o) % d) * s for b, o, d, s in zip(base, offset, torus.dims, strides, strict=True))
                for offset in product(*(range(e) for e in shape))
            )
            boxes[cells] = len(cells)
    return boxes


tori = (
    st.integers(1, 4)
    .flatmap(
        lambda n: st.tuples(st.lists(st.integers(1, 4), min_size=n, max_size=n), st.lists(st.booleans(), min_size=n, max_size=n))
    )
    .map(lambda dims_wraps: Torus(tuple(dims_wraps[0]), tuple(dims_wraps[1])))
)

_TABLES: dict[Torus, PartitionTable] = {}


def table_of(torus: Torus) -> PartitionTable:
    if torus not in _TABLES:
        _TABLES[torus] = PartitionTable(torus)
    return _TABLES[torus]


@settings(max_examples=60, deadline=None)
@given(tori)
def test_the_table_holds_every_box_once_on_rings_and_meshes(torus):
    boxes = every_box(torus)
    table = table_of(torus)
    assert partition_count(torus) == len(table.partitions) == len(boxes)
    assert {frozenset(m.tolist()) for m in table.members} == set(boxes)
    assert set(feasible_sizes(torus)) == set(boxes.values())


@settings(max_examples=120, deadline=None)
@given(tori.flatmap(lambda t: st.tuples(st.just(t), st.lists(st.booleans(), min_size=t.size, max_size=t.size))))
def test_every_finder_and_the_mfp_match_the_plain_definition_on_random_occupancies(case):
    torus, flags = case
    blocked = np.array(flags, dtype=bool)
    free_boxes = {cells: size for cells, size in every_box(torus).items() if not any(blocked[list(cells)])}
    table = table_of(torus)
    words = table.pack(blocked)
    for size in feasible_sizes(torus):
        expected = {cells for cells, s in free_boxes.items() if s == size}
        brute = {frozenset(p.supernodes(torus).tolist()) for p in brute_force_free_partitions(torus, blocked, size)}
        sums = {frozenset(p.supernodes(torus).tolist()) for p in free_partitions_by_box_sums(torus, blocked, size)}
        by_table = {frozenset(table.members[i].tolist()) for i in table.free_ids_of_size(words, size)}
        assert brute == sums == by_table == expected
    mfp = max(free_boxes.values(), default=0)
    assert table.mfp(words) == mfp_by_box_sums(torus, blocked) == mfp


def test_mira_torus_has_3549_boxes_of_which_its_blocks_keep_the_allowed_sizes():
    plain = Torus((2, 3, 4, 4))
    assert partition_count(plain) == 3 * 7 * 13 * 13 == 3549
    mira = MACHINES["mira"].torus
    assert feasible_sizes(mira) == (1, 2, 4, 8, 16, 24, 32, 48, 64, 96)
    assert round_up_to_feasible_size(mira, 3) == 4 and round_up_to_feasible_size(mira, 17) == 24
    assert len(PartitionTable(mira).partitions) == partition_count(mira) == len(every_box(mira))
    assert MACHINES["mira"].nodes == 49_152 and MACHINES["intrepid"].nodes == 40_960


@settings(max_examples=40, deadline=None)
@given(st.lists(st.booleans(), min_size=96, max_size=96), st.sampled_from([1, 2, 4, 8, 16, 24, 32, 48, 64, 96]))
def test_free_blocks_of_mira_match_the_plain_definition(flags, size):
    mira = MACHINES["mira"].torus
    blocked = np.array(flags, dtype=bool)
    expected = {c for c, s in every_box(mira).items() if s == size and not any(blocked[list(c)])}
    table = table_of(mira)
    assert {frozenset(table.members[i].tolist()) for i in table.free_ids_of_size(table.pack(blocked), size)} == expected
    assert {frozenset(p.supernodes(mira).tolist()) for p in free_partitions_by_box_sums(mira, blocked, size)} == expected


def test_a_mesh_dimension_has_no_wrap_around_box_or_link():
    ring, mesh = Torus((4,)), Torus((4,), (False,))
    assert partition_count(ring) == 13 and partition_count(mesh) == 10
    assert ring.neighbours(0) == [1, 3] and mesh.neighbours(0) == [1]
    assert torus_graph(mesh).number_of_edges() == 3 and torus_graph(ring).number_of_edges() == 4
    assert Torus((4, 4, 8), (True, True, False)).label == "4x4x8m"


def test_bgl_is_unchanged_by_the_generalisation():
    assert partition_count(BGL_SUPERNODE_TORUS) == 9633
    assert BGL_SUPERNODE_TORUS.wraps == (True, True, True) and BGL_SUPERNODE_TORUS.label == "4x4x8"
    assert MACHINES["bgl"].torus == BGL_SUPERNODE_TORUS


def test_a_6d_torus_and_its_neighbours():
    torus = Torus((2, 2, 2, 2, 2, 3))
    assert torus.size == 96 and torus.coordinate(95) == (1, 1, 1, 1, 1, 2)
    assert torus.index(torus.coordinate(37)) == 37
    assert len(torus.neighbours(0)) == 7  # one neighbour along each of the five 2-rings, two along the 3-ring


@pytest.mark.parametrize(
    ("text", "dims", "wraps"),
    [("4x4x8", (4, 4, 8), (True,) * 3), ("2x3x4x4", (2, 3, 4, 4), (True,) * 4), ("4x4x8m", (4, 4, 8), (True, True, False))],
)
def test_torus_dims_text(text, dims, wraps):
    assert parse_torus_dims(text) == (dims, wraps)


@pytest.mark.parametrize("text", ["", "4xx8", "0x4", "2x2x2x2x2x2x2", "4x-1", "axb"])
def test_bad_torus_dims_text_is_one_sentence(text):
    with pytest.raises(ConfigurationError, match="torus dims"):
        parse_torus_dims(text)


def test_a_machine_description_file_is_read_and_checked(tmp_path):
    good = tmp_path / "mine.toml"
    good.write_text('name = "mine"\ndims = [2, 4]\nwraps = [true, false]\nblock_sizes = [1, 2, 4, 8]\n[sources]\ndims = "me"\n')
    machine = load_machine(str(good))
    assert machine.torus.dims == (2, 4) and machine.torus.wraps == (True, False) and feasible_sizes(machine.torus) == (1, 2, 4, 8)
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "bad"\ndims = [2, "x"]\n')
    with pytest.raises(ConfigurationError, match=r"bad.toml: dims.1"):
        load_machine(str(bad))
    too_big = tmp_path / "big.toml"
    too_big.write_text('name = "big"\ndims = [2, 2]\nblock_sizes = [1, 8]\n')
    with pytest.raises(ConfigurationError, match="big.toml: block sizes"):
        load_machine(str(too_big))
    with pytest.raises(ConfigurationError, match="unknown machine 'bluegene'"):
        load_machine("bluegene")
    with pytest.raises(ConfigurationError, match="does not exist"):
        load_machine(str(tmp_path / "none.toml"))


def test_a_scenario_takes_dims_as_text_or_a_machine_and_refuses_both_when_they_disagree():
    from torus_sim.experiments.scenario import Scenario

    assert Scenario(torus_dims="2x3x4x4").torus.dims == (2, 3, 4, 4)
    assert Scenario(torus_dims="4x4x8m").torus.wraps == (True, True, False)
    assert Scenario(machine="mira").torus == MACHINES["mira"].torus
    assert Scenario(machine="mira", torus_dims=(2, 3, 4, 4)).torus == MACHINES["mira"].torus
    with pytest.raises(ConfigurationError, match="machine mira is a 2x3x4x4 torus"):
        Scenario.make(machine="mira", torus_dims=(4, 4, 8))
    with pytest.raises(ConfigurationError, match="torus dims"):
        Scenario.make(torus_dims="4xx8")
    with pytest.raises(ConfigurationError, match="unknown machine"):
        Scenario.make(machine="bluegene")


def test_a_run_on_a_mesh_torus_places_every_job_in_a_box_that_does_not_wrap_along_the_mesh():
    from torus_sim.experiments.runner import RunConfig, build_model

    model = build_model(RunConfig(torus_dims="4x4x8m", max_jobs=400, failures="synthetic:40"))
    model.run()
    table = model.platform.table
    assert all(p.base[2] + p.shape[2] <= 8 for p in table.partitions)
    assert len(model.table("jobs")) == 400
