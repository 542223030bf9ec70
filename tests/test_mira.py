"""Mira's FATAL RAS events (LogAider), its midplane map from the repair reservations, and runs on its torus."""

import gzip
import re
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from failure_logs.mira import (
    BUNDLED_MIRA_EVENTS,
    MIRA_DIMS,
    derive_midplane_map,
    io_drawer_rack,
    read_maintenance,
    read_mira,
    read_reservations,
)
from failure_logs.sources import load_failure_source
from torus_sim.core.errors import ConfigurationError, FailureLogFormatError
from torus_sim.experiments.runner import RunConfig, run

from .conftest import SHARED_DATA


@pytest.fixture(scope="module")
def reservations():
    return read_reservations()


@pytest.fixture(scope="module")
def mira_log():
    return read_mira()


def test_every_event_is_a_failure_or_counted_by_why_not(mira_log):
    counts = mira_log.counts
    assert counts["events"] == 1384 and counts["member_records"] == 27184
    placed = counts["midplane"] + counts["rack_level"] + counts["io_drawer"]
    assert placed + counts["no_location"] + counts["unknown_location"] == 1384
    assert (counts["midplane"], counts["rack_level"], counts["io_drawer"], counts["no_location"]) == (1181, 16, 160, 24)
    assert counts["maintenance_periods"] == 161
    assert len(mira_log) == counts["midplane"] + 2 * (counts["rack_level"] + counts["io_drawer"]) + 96 * 161
    assert set(np.unique(mira_log.supernodes)) == set(range(96))


def test_the_midplane_map_is_a_bijection_by_majority_vote(reservations):
    midplane_map = derive_midplane_map(reservations)
    assert len(midplane_map.coordinates) == 96 == len(set(midplane_map.coordinates.values()))
    assert all(0 <= c < d for coordinate in midplane_map.coordinates.values() for c, d in zip(coordinate, MIRA_DIMS, strict=True))
    contested = [name for name, votes in midplane_map.votes.items() if len(votes) > 1]
    assert len(contested) == 18 and midplane_map.minority == 23
    # last-one-wins would have taken a minority coordinate for some midplanes: the vote is what makes the map
    last = {}
    for reservation in reservations:
        named = re.match(r"hw\.(R[0-9A-F]{2}-M[01])", reservation.name)
        if named and len(reservation.blocks) == 1 and reservation.blocks[0].endswith("-512"):
            last[named.group(1)] = next(iter(reservation.midplanes))
    assert sum(last[name] != midplane_map.coordinates[name] for name in last) > 0
    assert midplane_map.coordinates["R00-M0"] == (0, 0, 0, 0)


def test_the_io_drawer_rule_agrees_with_every_drawer_the_reservations_name(reservations):
    midplane_map = derive_midplane_map(reservations)
    rack_of = {coordinate: name[:3] for name, coordinate in midplane_map.coordinates.items()}
    votes: dict[str, Counter] = {}
    for reservation in reservations:
        drawer = re.match(r"hw\.(Q[0-9A-F][GH]-I[0-7])", reservation.name)
        racks = {rack_of[c] for c in reservation.midplanes}
        if drawer and len(racks) == 1:
            votes.setdefault(drawer.group(1), Counter())[racks.pop()] += 1
    assert len(votes) == 21
    assert all(counter.most_common(1)[0][0] == io_drawer_rack(drawer) for drawer, counter in votes.items())
    assert io_drawer_rack("Q0H-I4-J03") == "R0C" and io_drawer_rack("Q2G-I7") == "R27" and io_drawer_rack("R00-M0") is None


def test_io_drawer_events_and_maintenance_can_be_left_out(mira_log):
    plain = read_mira(io_drawers=False, include_maintenance=False)
    assert plain.counts["io_drawer_ignored"] == 160 and "maintenance_periods" not in plain.counts
    assert len(plain) == len(mira_log) - 2 * 160 - 96 * 161


def test_repairs_come_from_the_reservations_and_are_never_before_the_failure(mira_log):
    known = ~np.isnan(mira_log.repair_at)
    assert mira_log.counts["repair_from_reservation"] > 800
    assert np.all(mira_log.repair_at[known] >= mira_log.failed_at[known])
    periods = read_maintenance()
    assert len(periods) == 161 and all(end >= start for start, end in periods)


def test_the_spec_and_a_path_read_the_same_log(tmp_path):
    by_name = load_failure_source("mira", 96)
    copy = tmp_path / "allEvents.txt-0.5.cor.gz"
    copy.write_bytes(BUNDLED_MIRA_EVENTS.read_bytes())
    by_path = load_failure_source(str(copy), 96)
    assert np.array_equal(by_name.failed_at, by_path.failed_at) and np.array_equal(by_name.supernodes, by_path.supernodes)
    shared = SHARED_DATA / "failures" / "mira" / "allEvents.txt-0.5.cor"
    if shared.exists():  # the published file, uncompressed, with its reservations and maintenance beside it
        published = load_failure_source(str(shared), 96)
        assert np.array_equal(published.failed_at, by_name.failed_at)


def test_a_platform_that_is_not_mira_is_refused():
    with pytest.raises(ConfigurationError, match="use --machine mira"):
        read_mira(n_supernodes=128)


def _events_text(lines: list[str], count: int) -> str:
    return "\n".join([f"#count={count}", *lines]) + "\n"


GOOD_EVENT = (
    "event 28364 00040106 13626301 FATAL BQC MC 2013-04-10;18:53:22.687239 2013-04-10;18:53:22.687239 2 RMNJ R20-M0-N02-J14 0"
)
GOOD_MEMBER = "\t0.5489389 22585 00040106 13631216 FATAL BQC MC 2013-04-11;01:01:01.112052 2013-04-11;01:01:01.112052 1 RMNJ R19-M0-N02-J18 0"


@pytest.mark.parametrize(
    ("text", "line", "what"),
    [
        (_events_text([GOOD_EVENT, GOOD_EVENT.replace("2013-04-10;18", "2013-13-10;18", 1)], 2), 3, "unreadable start time"),
        (_events_text([GOOD_EVENT, "\tnot-a-score" + GOOD_MEMBER[10:]], 1), 3, "similarity score"),
        (_events_text([GOOD_EVENT, "event 1 2 3"], 2), 3, "expected 12 or 13 fields"),
        (_events_text([GOOD_EVENT.replace(" 2 RMNJ", " two RMNJ")], 1), 2, "record count"),
        (_events_text([GOOD_EVENT, "something else"], 1), 3, "expected an 'event' line"),
        (_events_text([GOOD_EVENT, GOOD_MEMBER], 5), 3, "truncated: the first line announces 5 events"),
        ("event without a count line\n", 1, "#count="),
        ("", 1, "empty"),
    ],
)
def test_a_malformed_event_file_names_the_file_and_line(tmp_path, text, line, what):
    path = tmp_path / "allEvents.txt-0.5.cor"
    path.write_text(text)
    with pytest.raises(FailureLogFormatError, match=re.escape(f"{path}:{line}:") + ".*" + re.escape(what)):
        read_mira(path)


def test_a_small_file_in_the_published_layout_reads(tmp_path):
    path = tmp_path / "allEvents.txt-0.5.cor"
    drawer = (
        "event 22194 00062001 13217458 FATAL Block MMCS 2013-04-02;22:40:36.223930 2013-04-02;22:40:53.867908 4 QIJ Q0H-I1-J05 0"
    )
    null = "event 1981 000400A5 13602246 FATAL Card MC 2013-04-09;21:18:37.842564 2013-04-09;21:22:15.319164 2 NULL  0"
    path.write_text(_events_text([drawer, GOOD_EVENT, GOOD_MEMBER, null], 3))
    log = read_mira(path, maintenance=None)
    assert len(log) == 3 and log.counts["no_location"] == 1 and log.counts["member_records"] == 1
    racks = derive_midplane_map(read_reservations())
    assert set(log.supernodes.tolist()) == {racks.index("R09-M0"), racks.index("R09-M1"), racks.index("R20-M0")}


@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(alphabet="event RMNJQI0123456789-;:.\t ", max_size=80), max_size=6))
def test_fuzzed_event_files_are_read_or_refused_with_a_line(tmp_path_factory, lines):
    path = tmp_path_factory.mktemp("fuzz") / "allEvents.txt-0.5.cor"
    path.write_text(_events_text(lines, len(lines)))
    try:
        read_mira(path, maintenance=None)
    except FailureLogFormatError as error:
        assert f"{path}:" in str(error)


def test_a_compressed_truncated_event_file_is_a_sentence(tmp_path):
    from torus_sim.core.errors import InputFileError

    path = tmp_path / "allEvents.txt-0.5.cor.gz"
    whole = gzip.compress(gzip.decompress(BUNDLED_MIRA_EVENTS.read_bytes()))
    path.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(InputFileError):
        read_mira(path)


@pytest.mark.parametrize("policy", ["krevat", "balancing", "tiebreak", "FCFS-EASY", "conservative", "PV-EASY"])
def test_a_mira_run_with_its_failures_runs_every_torus_policy(policy):
    result = run(RunConfig(machine="mira", policy=policy, max_jobs=1500))
    assert result.inputs["platform"] == {"kind": "torus", "nodes": 96, "torus": "2x3x4x4", "machine": "mira"}
    assert result.summary["jobs"] == 1500 and result.inputs["failures"]["count"] > 0
    assert "|window=+0s" in result.inputs["failures"]["source"]


def test_the_window_keeps_the_real_rate_and_the_offset_moves_it():
    common = dict(
        machine="mira", failures="mira", mira_maintenance=False, max_jobs=500, policy="FCFS-EASY", reduced_failures="rate"
    )
    first = run(RunConfig(**common))
    later = run(RunConfig(**common, failure_offset=3e7))
    log = read_mira(include_maintenance=False)
    assert first.inputs["failures"]["count"] != later.inputs["failures"]["count"] or first.summary != later.summary
    # the first window holds the log's failures of its first (prefix-span) seconds, not more
    from torus_sim.experiments.runner import load_workload

    span = load_workload(RunConfig(machine="mira", max_jobs=500)).span
    assert first.inputs["failures"]["count"] == int((log.failed_at <= log.failed_at[0] + span[1] - span[0]).sum())


def test_the_mira_study_files_name_the_bundled_log_not_a_path():
    from pathlib import Path

    from torus_sim.experiments import load_experiment

    folder = Path(__file__).resolve().parents[1] / "experiments" / "mira"
    real = load_experiment(folder / "policies_real_failures.toml")
    scenarios = [real.scenario(point) for point in real.points()]
    assert len(scenarios) == 16 and {s.failures for s in scenarios} == {"mira"}
    assert {s.machine for s in scenarios} == {"mira"} and {s.timing for s in scenarios} == {"window"}
    poisson = load_experiment(folder / "policies_poisson.toml")
    assert {poisson.scenario(point).failures for point in poisson.points()} == {"synthetic:650"}


def test_a_mira_run_counts_its_lost_work_in_midplanes_and_bgl_in_supernodes(tmp_path, capsys):
    """Issue 78: the summary names the torus's nodes as its machine does (the header already said midplanes)."""
    from torus_sim.interfaces.cli import main as cli

    for machine, word in (("mira", "midplane"), ("bgl", "supernode")):
        assert cli(["run", "--machine", machine, "--max-jobs", "30", "--failures", "none", "--out", str(tmp_path / machine)]) == 0
        printed = capsys.readouterr().out
        assert f"work lost ({word}-s)" in printed and ("supernode" not in printed.split("jobs completed")[1]) == (
            machine == "mira"
        )
