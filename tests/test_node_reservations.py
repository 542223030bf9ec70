"""Reservations of part of the machine: by count or named nodes, killing their jobs or waiting for them."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from torus_sim.core.errors import ConfigurationError, ReservationFormatError
from torus_sim.core.job import Job
from torus_sim.engine.model import SchedulingModel
from torus_sim.engine.node_reservations import NodeReservation, checked_reservations
from torus_sim.experiments.runner import Scenario, build_model
from torus_sim.experiments.sweep import run_key
from torus_sim.inputs.node_reservations import parse_node_ids, read_reservations
from torus_sim.inputs.workload.jobs import Workload
from torus_sim.policies.catalog import ONLINE_POLICIES, POLICIES
from torus_sim.policies.easy import EasyPolicy
from torus_sim.policies.rigid import ListPolicy

CLUSTER_POLICIES = [name for name in ONLINE_POLICIES if name not in ("krevat", "balancing", "tiebreak")]


def _job(job_id: int, at: float, runtime: float, size: int = 1) -> Job:
    return Job(job_id, at, runtime=runtime, walltime=runtime, size=size, user_id=1)


def _run(jobs, nodes: int, reservations, policy=None, **engine):
    model = SchedulingModel(
        Workload(jobs=jobs, source="hand-made"), policy or EasyPolicy(), nodes, reservations=reservations, **engine
    )
    record = model.run()
    return model, record.jobs.set_index("job_id"), record.attempts


def _nodes(resources: str) -> set[int]:
    """Node ids from an attempt's resources (``"0-1 4"``)."""
    nodes: set[int] = set()
    for item in str(resources).replace(",", " ").split():
        first, _, last = item.partition("-")
        nodes.update(range(int(first), int(last or first) + 1))
    return nodes


def test_a_killing_count_reservation_evicts_the_job_started_last_and_gives_the_nodes_back_at_its_end():
    # 4 nodes; jobs 1 and 2 (2 nodes each, 1000 s) start at 0. A reservation of 2 nodes from 100 s to 500 s kills:
    # of the two jobs started at 0, the later id (job 2) is evicted, its 100 s on 2 nodes lost; it restarts when the
    # nodes come back at 500 s and ends at 1500 s. Held: 2 nodes for 400 s.
    jobs = [_job(1, 0, 1000, 2), _job(2, 0, 1000, 2)]
    model, table, attempts = _run(jobs, 4, [NodeReservation(100.0, 500.0, 2, kill=True)])
    assert table["started_at"].to_dict() == {1: 0.0, 2: 500.0}
    assert table["finished_at"].to_dict() == {1: 1000.0, 2: 1500.0}
    assert attempts[attempts["outcome"] == "killed"]["job_id"].tolist() == [2]
    assert model.counters["reservation_kills"] == 1 and model.counters["job_kills"] == 1
    assert model.counters["lost_work"] == pytest.approx(200.0)
    assert model.counters["node_hours_held_out"] == pytest.approx(800 / 3600)
    assert model.passes.held_nodes.held == []


def test_a_waiting_reservation_of_named_nodes_takes_them_as_their_jobs_end_and_easy_plans_their_return():
    # 4 nodes; nodes 2-3 reserved from 100 s to 1000 s, waiting. Job 1 (4 nodes, 0-300) runs on: the reservation
    # takes nodes 2 and 3 at its end. Job 2 (2 nodes, at 10) starts at 300 on nodes 0-1. Job 3 (3 nodes, at 20) is
    # EASY's head from then on: its reservation is at 1000 s (the named nodes' return); job 4 (1 node, 50 s, at 30)
    # cannot be backfilled while job 2 holds the two other nodes, and starts at job 2's end (400 s), ending before
    # 1000 s. Nothing is killed.
    jobs = [_job(1, 0, 300, 4), _job(2, 10, 100, 2), _job(3, 20, 50, 3), _job(4, 30, 50, 1)]
    model, table, attempts = _run(jobs, 4, [NodeReservation(100.0, 1000.0, nodes=(2, 3))])
    assert table["started_at"].to_dict() == {1: 0.0, 2: 300.0, 3: 1000.0, 4: 400.0}
    during = attempts[(attempts["started_at"] >= 100.0) & (attempts["started_at"] < 1000.0)]
    assert all(not _nodes(resources) & {2, 3} for resources in during["resources"])
    assert model.counters["job_kills"] == 0
    assert model.counters["node_hours_held_out"] == pytest.approx(2 * 700 / 3600)


def test_a_killing_reservation_of_a_named_node_evicts_the_job_on_it():
    # 4 nodes; job 1 (2 nodes) runs on nodes 0-1 from 0; node 0 is reserved from 100 s to 500 s, killing. Job 1 is
    # killed at 100 s; one node beside the reservation is not enough, so it restarts at 500 s (job 2 runs on 2-3).
    jobs = [_job(1, 0, 1000, 2), _job(2, 0, 1000, 2)]
    model, table, attempts = _run(jobs, 4, [NodeReservation(100.0, 500.0, nodes=(0,), kill=True)])
    killed = attempts[attempts["outcome"] == "killed"]
    assert killed["job_id"].tolist() == [1] and _nodes(killed["resources"].iloc[0]) == {0, 1}
    assert table["started_at"].to_dict() == {1: 500.0, 2: 0.0}
    assert model.counters["reservation_kills"] == 1


@settings(max_examples=40, deadline=None)
@given(
    submits=st.lists(st.integers(0, 400), min_size=1, max_size=16),
    sizes=st.lists(st.integers(1, 8), min_size=16, max_size=16),
    lengths=st.lists(st.integers(1, 60), min_size=16, max_size=16),
    named=st.booleans(),
    kill=st.booleans(),
    windows=st.lists(
        st.tuples(st.integers(0, 300), st.integers(1, 200), st.sets(st.integers(0, 7), min_size=1, max_size=4)),
        min_size=1,
        max_size=3,
    ),
    policy=st.sampled_from(CLUSTER_POLICIES),
)
def test_no_job_runs_on_reserved_nodes_under_any_cluster_policy(submits, sizes, lengths, named, kill, windows, policy):
    jobs = [_job(index + 1, at * 10.0, lengths[index] * 10.0, sizes[index]) for index, at in enumerate(sorted(submits))]
    reservations = [
        NodeReservation(start * 10.0, (start + length) * 10.0, 0 if named else len(nodes), tuple(nodes) if named else (), kill)
        for start, length, nodes in windows
    ]
    try:
        checked_reservations(reservations, 8)
    except ConfigurationError:
        assume(False)
    _, table, attempts = _run(jobs, 8, reservations, POLICIES.make(policy))
    assert len(table) == len(jobs) and table["finished_at"].notna().all()
    begun, ended = attempts["started_at"].to_numpy(), attempts["ended_at"].to_numpy()
    used = [_nodes(resources) for resources in attempts["resources"]]
    for reservation in reservations:
        start, end = reservation.start, reservation.end
        for index, nodes in enumerate(used):
            if named and nodes & set(reservation.nodes):
                assert not start <= begun[index] < end, (policy, reservation, attempts.iloc[index].to_dict())
                if kill:  # evicted at the start at the latest
                    assert not begun[index] < start < ended[index], (policy, reservation, attempts.iloc[index].to_dict())
        if not named:  # after its start (and its kills), the running jobs leave the reservations' nodes free
            instants = set(begun[(begun >= start) & (begun < end)].tolist()) | ({start} if kill else set())
            for at in instants:
                active = sum(other.count for other in reservations if other.start <= at < other.end)
                busy = sum(len(nodes) for index, nodes in enumerate(used) if begun[index] <= at < ended[index])
                assert busy + active <= 8, (policy, reservations, at, busy, active)


def test_reservation_files_and_their_mistakes_are_one_sentence(tmp_path):
    good = tmp_path / "rsv.csv"
    good.write_text("start,end,nodes,on_running\n# a rack's maintenance\n0,100,ids=0-3;8,kill\n50,200,2\n")
    assert read_reservations(good) == (
        (0.0, 100.0, 0, (0, 1, 2, 3, 8), True, "rsv.csv:3"),
        (50.0, 200.0, 2, (), False, "rsv.csv:4"),
    )
    assert parse_node_ids("5;1-2") == (5, 1, 2)
    bad = tmp_path / "bad.csv"
    for line, sentence in (
        ("0,100", "start,end,nodes"),
        ("100,50,2", "0 <= start < end"),
        ("0,100,2.5", "whole count >= 1"),
        ("0,100,0", "whole count >= 1"),
        ("0,100,ids=3-1", "ends below its start"),
        ("0,100,ids=a", "not a node id"),
        ("0,100,2,evict", "wait or kill"),
    ):
        bad.write_text(f"0,10,1\n{line}\n")
        with pytest.raises(ReservationFormatError, match=rf"bad.csv:2: .*{sentence}"):
            read_reservations(bad)
    job = [_job(1, 0, 10)]
    with pytest.raises(ConfigurationError, match=r"reservations overlap on the same nodes: nodes 1-2 from 0 s to 100 s \(a\)"):
        _run(job, 4, [NodeReservation(0, 100, nodes=(1, 2), origin="a"), NodeReservation(50, 60, nodes=(2,), origin="b")])
    with pytest.raises(ConfigurationError, match="hold 5 nodes at 50 s, more than the machine's 4"):
        _run(job, 4, [NodeReservation(0, 100, 3), NodeReservation(50, 60, 2)])
    with pytest.raises(ConfigurationError, match="names node 4; the machine's nodes are 0-3"):
        _run(job, 4, [NodeReservation(0, 100, nodes=(4,))])
    with pytest.raises(ConfigurationError, match="reservations: .* plans after each attempt end"):
        _run(job, 4, [NodeReservation(0, 10, 2)], ListPolicy())
    _run(job, 4, [NodeReservation(0, 100, nodes=(1, 2)), NodeReservation(100, 200, nodes=(2,))])  # one after the other


def test_a_replay_with_a_reservation_file_and_the_cli_refusing_a_bad_one(tmp_path):
    rsv = tmp_path / "rsv.csv"
    rsv.write_text("600000,650000,ids=0-31,kill\n700000,790000,64\n")
    plain = Scenario.make(workload="pwa:SDSC-SP2", max_jobs=600, platform="cluster", policy="FCFS-EASY", failures="none")
    reserved = plain.replace(reservations=str(rsv))
    assert run_key(plain) != run_key(reserved)
    model = build_model(reserved)
    waits = model.run().jobs
    assert model.counters["reservation_kills"] > 0 and model.counters["node_hours_held_out"] > 0
    free = build_model(plain).run().jobs
    assert (waits["first_started_at"] - waits["submitted_at"]).mean() > (free["first_started_at"] - free["submitted_at"]).mean()
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "torus_sim.interfaces.cli", "run", "--workload", "pwa:SDSC-SP2", "--max-jobs", "600",
         "--platform", "cluster", "--failures", "none", "--reservations", str(rsv), "--out", str(out)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    manifest = json.loads((out / "summary.json").read_text())
    assert manifest["inputs"]["reservations"]["reservations"] == 2 and manifest["summary"]["reservation_kills"] > 0
    rsv.with_name("torus.csv").write_text("600000,650000,ids=0-15,kill\n700000,790000,32\n")  # BG/L's supernodes
    torus = build_model(plain.replace(platform="torus", reservations=str(rsv.with_name("torus.csv"))))
    attempts = torus.run().attempts
    assert torus.counters["reservation_kills"] > 0
    begun, ended = attempts["started_at"].to_numpy(), attempts["ended_at"].to_numpy()
    for index, resources in enumerate(attempts["resources"]):
        if _nodes(resources) & set(range(16)):  # no partition on the named supernodes runs into the window
            assert ended[index] <= 600000.0 or begun[index] >= 650000.0, attempts.iloc[index].to_dict()
    rsv.write_text("0,100,ids=0-3\n50,60,ids=3\n")
    bad_out = tmp_path / "bad-out"
    done = subprocess.run(
        [sys.executable, "-m", "torus_sim.interfaces.cli", "run", "--platform", "cluster", "--reservations", str(rsv), "--out", str(bad_out)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "overlap on the same nodes" in done.stderr and "rsv.csv:1" in done.stderr and "rsv.csv:2" in done.stderr
    assert not bad_out.exists()
