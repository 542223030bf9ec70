"""Idle nodes switched off and booted again (issue 45 §1): the engine's off / boot intervals and their energy."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from torus_sim.core.errors import ConfigurationError
from torus_sim.experiments.runner import Scenario, build_model, run
from torus_sim.metrics.energy import JOULES_PER_KWH, account_energy, down_intervals, power_timeline, state_changes

pytestmark = pytest.mark.filterwarnings("ignore:the offered load after cleaning")  # the hand-made traces' few jobs

SDSC = "../shared/data/swf/SDSC-SP2-1998-4.2-cln.swf.gz"
POWER = {"power": True, "job_power": "uniform:5600:16800", "price": "tou:0.05:3"}


def _cluster(tmp_path, rows, node_ids: bool = False, failures=None, **settings):
    """A 4-node cluster (100 W idle, 200 W busy), jobs ``(id, submit, run, procs)``, FCFS-EASY, flat price 0.1.

    With ``node_ids`` the cluster keeps node identities (the attempts' ``resources`` name their nodes; node agents)
    and the result is a namespace of ``model``, ``record`` and the energy ``summary``; ``failures`` (with
    ``node_ids``): ``(time, node, repaired at)`` rows, the log's repair times (down at 0 W).
    """
    trace = tmp_path / "trace.swf"
    trace.write_text(
        "; MaxProcs: 4\n" + "".join(f"{j} {s} 0 {r} {p} -1 -1 {p} {r} -1 1 1 1 -1 1 -1 -1 -1\n" for j, s, r, p in rows)
    )
    fields = {
        "workload": str(trace),
        "platform": "cluster",
        "nodes": 4,
        "power": True,
        "node_idle_w": 100.0,
        "node_busy_w": 200.0,
        "price": "flat:0.1",
        "policy": "FCFS-EASY",
        **settings,
    }
    if not node_ids:
        return run(Scenario.make("switch-off", **fields))
    from types import SimpleNamespace

    from torus_sim.experiments.runner import ConfiguredModel

    if failures:
        from failure_logs.events import FailureLog

        log = FailureLog(*(np.array(column, dtype=float) for column in zip(*failures, strict=True)))
        log = FailureLog(log.failed_at, log.supernodes.astype(np.int64), log.repair_at)
        model = build_model(Scenario.make("switch-off", **fields, downtime="log"), {"failures": log})
    else:
        model = ConfiguredModel(node_identities=True, **fields)
    model.run()
    record = model.record()
    power = model.power
    watts = record.attempts["job_id"].map(power.job_watts).to_numpy(float)
    summary = account_energy(record, watts, power.node, power.tariff, switch_off=power.switch_off).summary
    return SimpleNamespace(model=model, record=record, summary=summary)


def test_a_hand_made_run_boots_the_nodes_that_were_off_and_its_energy_is_the_hand_sum(tmp_path):
    """Off after 100 s idle at 10 W, boot 50 s at 300 W. Job 1 (2 nodes, t = 0-1,000) finds the machine on; job 2
    (2 nodes at t = 500, 200 s) gets nodes 2-3, off since t = 100: it boots and ends at 750; job 3 (4 nodes at
    1,050, 100 s) gets nodes 0-1 (idle 50 s: on) and 2-3 (off since 850): it boots and ends at 1,200.

    Off: 2 x 400 + 2 x 200 = 1,200 node-s at 10 W; boots: 2 x 2 x 50 s at 300 W; jobs: 400,000 + 2 x 250 x 200
    + 4 x 150 x 200 J, the booting nodes at 300 W instead of 200 (+ 2 x 10,000 J); idle: 500 node-s at 100 W.
    """
    result = _cluster(
        tmp_path,
        [(1, 0, 1000, 2), (2, 500, 200, 2), (3, 1050, 100, 4)],
        idle_off_after=100.0,
        boot_time=50.0,
        node_off_w=10.0,
        node_boot_w=300.0,
    )
    jobs = result.jobs.set_index("job_id")
    assert jobs["started_at"].to_dict() == {1: 0.0, 2: 500.0, 3: 1050.0}
    assert jobs["finished_at"].to_dict() == {1: 1000.0, 2: 750.0, 3: 1200.0}
    states = result.record.power_states
    assert sorted(map(tuple, states.loc[states["state"] == "off", ["node", "start", "end"]].to_numpy().tolist())) == [
        (0, 1300.0, math.inf),
        (1, 1300.0, math.inf),
        (2, 100.0, 500.0),
        (2, 850.0, 1050.0),
        (2, 1300.0, math.inf),
        (3, 100.0, 500.0),
        (3, 850.0, 1050.0),
        (3, 1300.0, math.inf),
    ]
    boots = states[states["state"] == "boot"]
    assert sorted(zip(boots["node"], boots["start"], boots["job_id"], strict=True)) == [
        (2, 500.0, 2),
        (2, 1050.0, 3),
        (3, 500.0, 2),
        (3, 1050.0, 3),
    ]
    summary = result.summary
    joules = {"off": 1200 * 10.0, "boot": 4 * 50 * 300.0, "jobs": 400_000 + 110_000 + 130_000.0, "idle": 500 * 100.0}
    assert summary["off_energy_kwh"] == pytest.approx(joules["off"] / JOULES_PER_KWH, rel=1e-12)
    assert summary["boot_energy_kwh"] == pytest.approx(joules["boot"] / JOULES_PER_KWH, rel=1e-12)
    assert summary["busy_energy_kwh"] == pytest.approx(joules["jobs"] / JOULES_PER_KWH, rel=1e-12)
    assert summary["idle_energy_kwh"] == pytest.approx(joules["idle"] / JOULES_PER_KWH, rel=1e-12)
    total = joules["off"] + joules["jobs"] + joules["idle"]
    assert summary["energy_kwh"] == pytest.approx(total / JOULES_PER_KWH, rel=1e-12)
    assert summary["bill"] == pytest.approx(0.1 * total / JOULES_PER_KWH, rel=1e-12)
    assert summary["off_node_hours"] == pytest.approx(1200 / 3600) and summary["boot_node_hours"] == pytest.approx(200 / 3600)
    assert jobs.loc[[2, 3], "energy_kwh"].tolist() == pytest.approx([110_000 / JOULES_PER_KWH, 130_000 / JOULES_PER_KWH])
    # Batsim's record: the boots' 300 W too
    assert _batsim_joules(result) == pytest.approx({"1": 400_000.0, "2": 110_000.0, "3": 130_000.0}, rel=1e-12)


def _batsim_joules(result) -> dict:
    """Each job's ``consumed_energy`` (joules) in the run's Batsim job record, by job id (text)."""
    from torus_sim.outputs.formats.catalog import BatsimFormat

    return BatsimFormat().tables(result)["batsim_jobs"].set_index("job_id")["consumed_energy"].to_dict()


def test_a_switch_off_with_a_time_makes_a_job_wait_for_it_and_its_energy_is_the_hand_sum(tmp_path):
    """Off after 100 s idle, switching off for 60 s at 40 W, off at 10 W, boots of 50 s at 300 W. Job 1 (nodes 0-1,
    t = 0-1,000); job 2 (2 nodes at 500, 200 s) gets nodes 2-3, off since 160: it boots at once, ends at 750;
    nodes 2-3 start switching off at 850; job 3 (2 nodes at 880, 100 s) gets them halfway: it waits 30 s for the
    switch-off to end, boots 50 s, works 100 s and ends at 1,060.

    Per node 2-3: idle 0-100 and 750-850 (100 W), switching off 100-160 and 850-910 (40 W: 30 s of it held by
    job 3), off 160-500 (10 W), booting 500-550 and 910-960 (300 W), busy 550-750 and 960-1,060 (200 W): 118,200 J
    each. Nodes 0-1: busy 0-1,000, idle 1,000-1,060: 206,000 J each. Job 3: 2 x 180 s x 200 W + 2 x 30 s x
    (40 - 200) W + 2 x 50 s x (300 - 200) W = 72,400 J.
    """
    result = _cluster(
        tmp_path,
        [(1, 0, 1000, 2), (2, 500, 200, 2), (3, 880, 100, 2)],
        idle_off_after=100.0,
        shutdown_time=60.0,
        node_shutdown_w=40.0,
        boot_time=50.0,
        node_off_w=10.0,
        node_boot_w=300.0,
    )
    jobs = result.jobs.set_index("job_id")
    assert jobs["started_at"].to_dict() == {1: 0.0, 2: 500.0, 3: 880.0}
    assert jobs["finished_at"].to_dict() == {1: 1000.0, 2: 750.0, 3: 1060.0}
    states = result.record.power_states
    rows = states.loc[states["start"] < 1060.0, ["node", "state", "start", "end", "job_id"]]
    assert sorted(map(tuple, rows.to_numpy().tolist())) == [
        (node, state, start, end, job)
        for node in (2, 3)
        for state, start, end, job in sorted(
            [
                ("shutdown", 100.0, 160.0, -1),
                ("off", 160.0, 500.0, -1),
                ("boot", 500.0, 550.0, 2),
                ("shutdown", 850.0, 880.0, -1),
                ("shutdown", 880.0, 910.0, 3),
                ("boot", 910.0, 960.0, 3),
            ]
        )
    ]
    summary = result.summary
    kwh = {
        "energy_kwh": 2 * 118_200 + 2 * 206_000,
        "busy_energy_kwh": 400_000 + 110_000 + 72_400,
        "idle_energy_kwh": 520 * 100,
        "off_energy_kwh": 680 * 10,
        "shutdown_energy_kwh": 180 * 40,
        "boot_energy_kwh": 200 * 300,
        "wake_wait_energy_kwh": 60 * 40,
    }
    assert {key: summary[key] for key in kwh} == pytest.approx({k: v / JOULES_PER_KWH for k, v in kwh.items()}, rel=1e-12)
    hours = {"off_node_hours": 680, "shutdown_node_hours": 180, "boot_node_hours": 200, "wake_wait_node_hours": 60}
    assert {key: summary[key] for key in hours} == pytest.approx({k: v / 3600 for k, v in hours.items()}, rel=1e-12)
    assert jobs["energy_kwh"].tolist() == pytest.approx([v / JOULES_PER_KWH for v in (400_000, 110_000, 72_400)])
    assert _batsim_joules(result) == pytest.approx({"1": 400_000.0, "2": 110_000.0, "3": 72_400.0}, rel=1e-12)


def _killed_during_boot(tmp_path, step_seconds: float = 3600.0):
    """The engine of the hand-made run below: job 2 killed 20 s into its boot (node 3 fails at 520, back at 600)."""
    from failure_logs.events import FailureLog
    from torus_sim.engine import SchedulingModel
    from torus_sim.experiments.runner import model_arguments

    trace = tmp_path / "trace.swf"
    rows = [(1, 0, 1000, 2), (2, 500, 200, 2), (3, 530, 40, 1)]
    trace.write_text(
        "; MaxProcs: 4\n" + "".join(f"{j} {s} 0 {r} {p} -1 -1 {p} {r} -1 1 1 1 -1 1 -1 -1 -1\n" for j, s, r, p in rows)
    )
    scenario = Scenario.make(
        "kill-during-boot",
        workload=str(trace),
        platform="cluster",
        nodes=4,
        power=True,
        node_idle_w=100.0,
        node_busy_w=200.0,
        price="flat:0.1",
        policy="FCFS-EASY",
        idle_off_after=100.0,
        boot_time=50.0,
        node_off_w=10.0,
        node_boot_w=300.0,
        downtime="log",
    )
    log = FailureLog(np.array([520.0]), np.array([3]), np.array([600.0]))
    arguments, keywords = model_arguments(scenario, {"failures": log})
    return SchedulingModel(*arguments, step_seconds=step_seconds, **keywords)


def test_an_idle_node_finishing_a_boot_is_booting_for_its_agent_the_drawing_and_the_draw(tmp_path):
    """The hand-made run at t = 525: node 2 finishes job 2's boot unheld (its agent says booting, the browser draws it
    booting in its own colour, the reporter's draw counts it at the boot draw); at t = 535 job 3 holds it booting."""
    from torus_sim.interfaces.viz import charts as viz_charts

    model = _killed_during_boot(tmp_path, step_seconds=5.0)
    while model.now < 525.0:
        model.step()
    assert model.now == 525.0
    assert [agent.power_state for agent in model.node_agents][2] == "booting"
    table, _ = viz_charts.node_table(model)
    assert table.loc[2, ["state", "fill"]].tolist() == ["booting", viz_charts.BOOTING]
    assert table.loc[2, "detail"].startswith("booting (idle)")
    assert set(table.loc[table["state"] == "booting", "node"]) == {2}
    change = model.power_states.draw_change_w(model.now, 100.0, model.power.job_watts, 200.0)
    assert change == pytest.approx(300.0 - 100.0)  # node 2 at the boot draw instead of idle
    while model.now < 535.0:
        model.step()
    table, _ = viz_charts.node_table(model)
    assert table.loc[2, "state"] == "busy" and model.node_agents[2].power_state == "booting"


def test_a_job_killed_during_its_boot_leaves_the_boot_to_finish_and_the_next_job_waits_for_it(tmp_path):
    """Off after 100 s idle at 10 W, boots of 50 s at 300 W, a failure of node 3 at t = 520 (repaired at 600).
    Job 1 (nodes 0-1, t = 0-1,000). Job 2 (2 nodes at 500, 200 s) gets nodes 2-3, off since 100: they boot from
    500; the failure kills it at 520. Node 2 finishes its boot unheld (520-530), then job 3 (1 node at 530, 40 s,
    backfilled before job 2's restart at the repair) is given it: it waits the 20 s left of that boot, no boot of
    its own, and works 550-590. Job 2 restarts at 600 on nodes 2-3, both on (node 2 idle 10 s, node 3 just
    repaired): no boot, ends at 800. Before, a kill gave its nodes back on at once: job 3 would have ended at 570.

    Energy to t = 1,000 (down at 0 W): nodes 0-1 200,000 J each; node 2: idle 0-100 and 590-600 and 800-900
    (21,000 J at 100 W), off 100-500 and 900-1,000 (5,000 J), booting 500-550 (15,000 J: 20 s job 2's, 10 s
    unheld, 20 s job 3's), busy 550-590 and 600-800 (48,000 J): 89,000 J; node 3: idle 0-100 and 800-900, off
    100-500 and 900-1,000, booting 500-520, down 520-600, busy 600-800: 71,000 J. Idle energy 420 node-s x 100 W
    + 10 s x (300 - 100) W of the unheld boot = 44,000 J; busy (the attempts) 400,000 + 12,000 (job 2's killed
    attempt, its boot at 300 W) + 80,000 + 14,000 (job 3: 60 s at 200 W and 20 s x 100 W more booting) = 506,000 J.
    """
    model = _killed_during_boot(tmp_path)
    model.run()
    record = model.record()
    attempts = record.attempts.sort_values("started_at")
    assert attempts[["job_id", "attempt", "started_at", "ended_at", "outcome", "resources"]].to_numpy().tolist() == [
        [1, 1, 0.0, 1000.0, "completed", "0-1"],
        [2, 1, 500.0, 520.0, "killed", "2-3"],
        [3, 1, 530.0, 590.0, "completed", "2"],
        [2, 2, 600.0, 800.0, "completed", "2-3"],
    ]
    states = record.power_states
    closed = states.loc[states["end"] < 1000.0, ["node", "state", "start", "end", "job_id"]]
    assert sorted(map(tuple, closed.to_numpy().tolist())) == [
        (2, "boot", 500.0, 550.0, 2),
        (2, "boot", 520.0, 530.0, -1),
        (2, "boot", 530.0, 550.0, 3),
        (2, "off", 100.0, 500.0, -1),
        (3, "boot", 500.0, 550.0, 2),
        (3, "off", 100.0, 500.0, -1),
    ]
    watts = record.attempts["job_id"].map(model.power.job_watts).to_numpy(float)
    summary = account_energy(record, watts, model.power.node, model.power.tariff, switch_off=model.power.switch_off).summary
    joules = {
        "energy_kwh": 560_000,
        "busy_energy_kwh": 506_000,
        "idle_energy_kwh": 44_000,
        "down_energy_kwh": 0,
        "off_energy_kwh": 10_000,
        "boot_energy_kwh": 70 * 300,
        "wasted_energy_kwh": 12_000,
    }
    assert {key: summary[key] for key in joules} == pytest.approx({k: v / JOULES_PER_KWH for k, v in joules.items()}, rel=1e-12)
    parts = ["busy_energy_kwh", "idle_energy_kwh", "down_energy_kwh", "off_energy_kwh"]
    assert sum(summary[key] for key in parts) == pytest.approx(summary["energy_kwh"], rel=1e-12)


def _off_and_boots_from_the_record(record, after: float, boot: float):
    """Each node's off intervals and boots derived from the attempt and failure tables alone (not the engine's rows).

    A node is occupied while an attempt holds it (its ``resources``) or it is down (merged down intervals); every
    gap between occupations longer than ``after`` is off from its start + ``after``, and the attempt that ends the
    gap (if one does) booted the node, which is on ``boot`` seconds later even when that attempt ended before
    (killed): until then it is not idle, and an attempt given it meanwhile holds the rest of that boot (a boot row
    of its own, no new boot) unless a failure cut the boot short.

    Returns:
        ``(off, boots, overhead)``: ``{(node, start, end)}``, ``{(node, boot row start, job, attempt)}`` and
        ``{(job, attempt): seconds before its work started}`` (0 when it booted nothing).
    """
    occupied: dict[int, list[tuple[float, float, tuple | None]]] = {}
    for row in record.attempts.itertuples():
        for node in _nodes_in(row.resources):
            occupied.setdefault(node, []).append((row.started_at, row.ended_at, (row.job_id, row.attempt)))
    failures = record.failures.loc[record.failures["down_until"] > record.failures["time"]].sort_values(["node", "time"])
    for node, group in failures.groupby("node"):
        merged: list[list[float]] = []
        for time, until in zip(group["time"], group["down_until"], strict=True):
            if merged and time <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], until)
            else:
                merged.append([time, until])
        occupied.setdefault(int(node), []).extend((start, end, None) for start, end in merged)
    off, boots, overhead = set(), set(), {}
    for node in range(record.capacity_total):
        free_from, booted_until = 0.0, -np.inf
        for start, end, attempt in sorted(occupied.get(node, []), key=lambda item: (item[0], item[1])):
            idle_from = max(free_from, booted_until)
            if start < booted_until:  # still booting for an earlier attempt that ended
                if attempt is None:  # down: the boot ends at the failure
                    booted_until = -np.inf
                else:
                    boots.add((node, start, *attempt))
                    overhead[attempt] = max(overhead.get(attempt, 0.0), booted_until - start)
            elif start - idle_from > after:
                off.add((node, idle_from + after, start))
                if attempt is not None:
                    boots.add((node, start, *attempt))
                    overhead[attempt] = max(overhead.get(attempt, 0.0), boot)
                    booted_until = start + boot
            free_from = max(free_from, end)
    return off, boots, overhead


@pytest.mark.parametrize(
    "platform",
    [{}, {"platform": "cluster", "nodes": 128, "job_power": "uniform:100:300"}],
    ids=["torus", "cluster"],
)
def test_the_engines_off_intervals_and_boots_are_those_the_attempts_and_failures_imply(platform):
    """SDSC-SP2's first 1,500 jobs with 2,000 bursty failures (repairs of an hour), FCFS-EASY, off after 10 min, boots
    of 5 min: the engine's off intervals and boots equal those derived from the record's attempts and failures, and
    every completed attempt lasts its run time plus the boot exactly when it booted a node."""
    settings = {**POWER, **platform, "workload": SDSC, "max_jobs": 1500, "failures": "synthetic:2000:bursty"}
    result = run(Scenario.make("off", **settings, policy="FCFS-EASY", downtime=3600, idle_off_after=600, boot_time=300))
    record = result.record
    states = record.power_states
    closed = states[np.isfinite(states["end"])]
    engine_off = {
        (int(n), float(s), float(e)) for n, s, e in closed.loc[closed["state"] == "off", ["node", "start", "end"]].to_numpy()
    }
    boot_rows = closed.loc[closed["state"] == "boot", ["node", "start", "job_id", "attempt"]]
    engine_boots = {(int(n), float(s), int(j), int(a)) for n, s, j, a in boot_rows.to_numpy() if j >= 0}
    ended = {
        (node, row.ended_at)
        for row in record.attempts[record.attempts["outcome"] != "completed"].itertuples()
        for node in _nodes_in(row.resources)
    }
    unheld = {(int(n), float(s)) for n, s, j, _ in boot_rows.to_numpy() if j < 0}
    assert unheld and unheld <= ended  # a boot goes on unheld only from the end of an attempt that did not complete
    derived_off, derived_boots, overhead = _off_and_boots_from_the_record(record, 600.0, 300.0)
    boot_starts = {(node, start) for node, start, _, _ in engine_boots}
    assert len(engine_boots) > 100 and any((node, end) not in boot_starts for node, _, end in engine_off)  # failures end some
    assert engine_off == derived_off
    assert engine_boots == derived_boots
    assert 0.0 < min(overhead.values()) < 300.0  # some attempt was given a node still booting for a killed one
    done = record.attempts[record.attempts["outcome"] == "completed"]
    runtime = result.jobs.set_index("job_id")["runtime"]
    expected = done["job_id"].map(runtime).to_numpy() + np.array(
        [overhead.get((job, attempt), 0.0) for job, attempt in zip(done["job_id"], done["attempt"], strict=True)]
    )
    assert np.allclose((done["ended_at"] - done["started_at"]).to_numpy(), expected, rtol=0, atol=1e-6)
    summary = result.summary
    parts = ["busy_energy_kwh", "idle_energy_kwh", "down_energy_kwh", "off_energy_kwh"]
    assert sum(summary[key] for key in parts) == pytest.approx(summary["energy_kwh"], rel=1e-9)


@pytest.mark.parametrize(
    ("policy", "failures"),
    [("krevat", None), ("FCFS-EASY", "synthetic:2000:bursty")],
    ids=["krevat-migration-ras", "easy-bursty"],
)
def test_nodes_never_off_or_off_at_the_idle_draw_with_no_boot_change_neither_schedule_nor_energy(policy, failures):
    """Golden guard of the engine's hooks: with nodes off only after the whole span, or off at once but at the idle
    draw with boots of 0 s, the schedule is the one without switching off, start for start, and so is every energy
    figure (BG/L's torus, SDSC-SP2's first 1,500 jobs; Krevat's migrations with the bundled RAS failures)."""
    settings = {**POWER, "workload": SDSC, "max_jobs": 1500, "failures": failures, "policy": policy}
    plain = run(Scenario.make("plain", **settings))
    never = run(Scenario.make("never", **settings, idle_off_after=1e12, boot_time=600))
    at_idle = run(Scenario.make("at-idle", **settings, idle_off_after=0, node_off_w=5600))
    columns = ["job_id", "started_at", "finished_at", "energy_kwh"]
    for other in (never, at_idle):
        pd.testing.assert_frame_equal(other.jobs[columns], plain.jobs[columns], check_exact=False, rtol=1e-12)
        for key in ("energy_kwh", "bill", "wasted_energy_kwh", "peak_power_kw"):
            assert other.summary[key] == pytest.approx(plain.summary[key], rel=1e-12)
    assert never.summary["off_node_hours"] == 0.0
    assert at_idle.summary["off_node_hours"] > 1000 and at_idle.summary["boot_node_hours"] == 0.0


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    jobs=st.lists(st.tuples(st.integers(0, 3000), st.integers(1, 900), st.integers(1, 4)), min_size=1, max_size=12),
    after=st.sampled_from([0.0, 30.0, 400.0]),
    boot=st.sampled_from([0.0, 45.0]),
    boot_w=st.sampled_from([None, 350.0]),
    shutdown=st.sampled_from([0.0, 20.0, 250.0]),
    failures=st.lists(st.tuples(st.integers(1, 3000), st.integers(0, 3), st.integers(1, 600)), max_size=3),
)
def test_energy_equals_a_per_second_sum_over_every_nodes_state(tmp_path, jobs, after, boot, boot_w, shutdown, failures):
    """Random 4-node runs (integer times), with up to 3 failures (repairs of 1-600 s: kills during boots and
    switch-off waits): the accounting's energy equals summing, second by second and node by node, the draw of the
    state the record gives it: running (its job's 200 W, or the boot draw while booting, until its attempt ends),
    switching off (40 W, an idle node's or one a job waits for), off (10 W), booting after its job ended (the
    boot draw, or idle's 100 W when none is set), down (0 W), idle (100 W); and the summary's parts add up to it."""
    rows = [(index + 1, submit, runtime, procs) for index, (submit, runtime, procs) in enumerate(sorted(jobs))]
    settings = {"shutdown_time": shutdown, "node_shutdown_w": 40.0} if shutdown else {}
    down = [(time, node, time + length) for time, node, length in sorted(failures)]
    result = _cluster(
        tmp_path,
        rows,
        node_ids=True,
        failures=down,
        idle_off_after=after,
        boot_time=boot,
        node_off_w=10.0,
        node_boot_w=boot_w,
        **settings,
    )
    record = result.record
    horizon = int(round(max(record.attempts["ended_at"].max(), record.makespan)))
    draw = np.full((4, horizon), 100.0)
    for row in record.attempts.itertuples():
        for node in _nodes_in(row.resources):
            draw[node, int(row.started_at) : int(row.ended_at)] = 200.0
    attempts = record.attempts.set_index(["job_id", "attempt"])
    watts = {"off": 10.0, "shutdown": 40.0, "boot": 200.0 if boot_w is None else boot_w}
    for row in record.power_states.itertuples():
        end = min(row.end, horizon)
        if row.job_id >= 0:  # held by a job: no longer than its attempt
            end = min(end, attempts.loc[(row.job_id, row.attempt), "ended_at"])
        unheld_boot = 100.0 if boot_w is None else boot_w
        draw[row.node, int(row.start) : int(end)] = unheld_boot if row.state == "boot" and row.job_id < 0 else watts[row.state]
    for time, node, until in down:
        draw[node, int(time) : int(until)] = 0.0
    states = result.model.power_states  # its count of nodes finishing a transition unheld gates every check of them
    assert states._settling == int(np.count_nonzero(states._settle[0] > -math.inf))
    summary = result.summary
    assert summary["energy_kwh"] == pytest.approx(draw.sum() / JOULES_PER_KWH, rel=1e-12)
    parts = ["busy_energy_kwh", "idle_energy_kwh", "down_energy_kwh", "off_energy_kwh", "shutdown_energy_kwh"]
    assert sum(summary.get(key, 0.0) for key in parts) == pytest.approx(summary["energy_kwh"], rel=1e-9, abs=1e-12)


def _nodes_in(resources: str) -> list[int]:
    """The node ids of an interval set such as ``"0-2 5"`` (the attempts' ``resources``)."""
    nodes = []
    for part in resources.split():
        low, _, high = part.partition("-")
        nodes.extend(range(int(low), int(high or low) + 1))
    return nodes


@pytest.mark.parametrize("shutdown", [{}, {"shutdown_time": 900, "node_shutdown_w": 2000}], ids=["at-once", "15-min-switch-off"])
def test_the_power_reporter_counts_off_and_booting_nodes_as_the_accounting_does(shutdown):
    """The ``power_kw`` reporter (the browser's power plot) at each step equals the accounting's timeline with the
    off and boot intervals (BG/L's torus, NASA's first 400 jobs, off after 10 min at 500 W, boots at 8 kW; with a
    switch-off of 15 min at 2 kW, midplanes switching off and jobs waiting for them too)."""
    scenario = Scenario.make(
        "reporter", **POWER, max_jobs=400, idle_off_after=600, boot_time=300, node_off_w=500, node_boot_w=8000, **shutdown
    )
    model = build_model(scenario)
    for _ in range(300):
        model.step()
    series = model.datacollector.get_model_vars_dataframe()
    model.run()
    record = model.record()
    attempts = record.attempts
    watts = attempts["job_id"].map(model.power.job_watts).to_numpy(float)
    node = model.power.node
    horizon = float(max(attempts["ended_at"].max(), record.makespan))
    changes = state_changes(record.power_states, attempts, watts, node.idle_w, model.power.switch_off, horizon)["changes"]
    down = down_intervals(record.failures, horizon)
    times, draw = power_timeline(attempts, watts, down, 128, node.idle_w, node.down_w, changes)
    stepped = series[(series["time"] > 0) & (series["time"] < horizon)]
    at = np.searchsorted(times, stepped["time"].to_numpy(), side="right") - 1
    assert np.allclose(draw[at] / 1000.0, stepped["power_kw"].to_numpy(), rtol=1e-12, atol=1e-9)
    assert stepped["power_kw"].min() < 128 * 5.6  # some midplanes off: under the all-idle draw
    if shutdown:
        held = record.power_states[(record.power_states["state"] == "shutdown") & (record.power_states["job_id"] >= 0)]
        assert len(held) > 10  # jobs did wait for switch-offs (the held rows' draw is in the comparison)


def test_refusals_are_sentences():
    """Switching off without power accounting, its settings without idle_off_after, an off draw above idle, a boot draw
    or a switch-off time under power-cap, a negative switch-off time, PV-EASY's suspend mode: each refused with a
    sentence that names the setting."""
    with pytest.raises(ConfigurationError, match="set power = true"):
        Scenario.make("x", idle_off_after=600)
    with pytest.raises(ConfigurationError, match="boot_time: only for switched-off nodes"):
        run(Scenario.make("x", power=True, boot_time=60, max_jobs=10))
    with pytest.raises(ConfigurationError, match="node_off_w 6000 W is above the idle draw"):
        run(Scenario.make("x", power=True, idle_off_after=60, node_off_w=6000, max_jobs=10))
    with pytest.raises(ConfigurationError, match="leave node_boot_w unset"):
        run(Scenario.make("x", **POWER, idle_off_after=60, node_boot_w=9000, policy="power-cap", power_cap=0.9, max_jobs=10))
    with pytest.raises(ConfigurationError, match="shutdown_time, node_shutdown_w: only for switched-off nodes"):
        run(Scenario.make("x", power=True, shutdown_time=60, node_shutdown_w=100, max_jobs=10))
    with pytest.raises(ConfigurationError, match="leave shutdown_time unset"):
        run(Scenario.make("x", **POWER, idle_off_after=60, shutdown_time=60, policy="power-cap", power_cap=0.9, max_jobs=10))
    with pytest.raises(ConfigurationError, match="shutdown_time"):
        Scenario.make("x", power=True, idle_off_after=60, shutdown_time=-1)
    with pytest.raises(ConfigurationError, match="suspend mode: not modelled"):
        run(
            Scenario.make(
                "x", power=True, idle_off_after=60, platform="cluster", policy="PV-EASY", preemption="suspend", max_jobs=10
            )
        )


def test_a_held_interval_of_no_attempt_is_refused():
    """A record whose switch-off wait names an attempt its attempt table lacks is refused (not accounted at 0 W)."""
    from torus_sim.inputs.energy.switch_off import SwitchOff

    states = pd.DataFrame({"node": [0], "state": ["shutdown"], "start": [10.0], "end": [20.0], "job_id": [7], "attempt": [0]})
    attempts = pd.DataFrame({"job_id": [1], "attempt": [0], "started_at": [0.0], "ended_at": [50.0], "nodes": [1]})
    with pytest.raises(ValueError, match="names no attempt"):
        state_changes(states, attempts, np.array([200.0]), 100.0, SwitchOff(60.0, 30.0, 0.0, None, 20.0), 50.0)


def test_account_energy_needs_the_rule_for_a_record_with_switched_off_nodes():
    """A record with off / boot intervals is refused without the rule (its off and boot draws)."""
    result = run(Scenario.make("x", power=True, idle_off_after=60, max_jobs=50))
    watts = np.full(len(result.record.attempts), 11200.0)
    with pytest.raises(ValueError, match="switch_off rule"):
        account_energy(result.record, watts, _node(), _flat())


def _node():
    from torus_sim.inputs.energy.node_power import NodePower

    return NodePower(5600.0, 11200.0, 0.0)


def _flat():
    from torus_sim.inputs.energy.tariffs import tariff

    return tariff("flat:0.1")


def test_each_node_agent_reports_its_power_state(tmp_path):
    """The supernode / node agents (a cluster keeping node ids) carry their power state (the mission's "its own
    failure, downtime and power state"): in the hand-made run at t = 520, nodes 0-1 run job 1, nodes 2-3 boot for job 2; at t = 1,020 nodes 0-1
    are idle (free for 20 s) and 2-3 off (idle since 750, off from 850); job 3 (t = 5,000) keeps the run going."""
    trace = tmp_path / "trace.swf"
    trace.write_text(
        "; MaxProcs: 4\n"
        + "".join(
            f"{j} {s} 0 {r} {p} -1 -1 {p} {r} -1 1 1 1 -1 1 -1 -1 -1\n"
            for j, s, r, p in [(1, 0, 1000, 2), (2, 500, 200, 2), (3, 5000, 10, 1)]
        )
    )
    from torus_sim.experiments.runner import ConfiguredModel

    fields = {"workload": str(trace), "platform": "cluster", "nodes": 4, "power": True, "policy": "FCFS-EASY"}
    model = ConfiguredModel(step_seconds=10.0, node_identities=True, **fields, idle_off_after=100, boot_time=50)
    seen = _power_states_at(model, (520.0, 1020.0))
    assert seen[520.0] == ["busy", "busy", "booting", "booting"]
    assert seen[1020.0] == ["idle", "idle", "off", "off"]
    trace.write_text(  # job 3 (2 nodes at 880) gets nodes 2-3 while they switch off (850-910), boots 910-960
        "; MaxProcs: 4\n"
        + "".join(
            f"{j} {s} 0 {r} {p} -1 -1 {p} {r} -1 1 1 1 -1 1 -1 -1 -1\n"
            for j, s, r, p in [(1, 0, 1000, 2), (2, 500, 200, 2), (3, 880, 100, 2), (4, 5000, 10, 1)]
        )
    )
    model = ConfiguredModel(step_seconds=10.0, node_identities=True, **fields, idle_off_after=100, boot_time=50, shutdown_time=60)
    seen = _power_states_at(model, (120.0, 870.0, 900.0, 930.0))
    assert seen[120.0] == ["busy", "busy", "switching off", "switching off"]
    assert seen[870.0] == ["busy", "busy", "switching off", "switching off"]
    assert seen[900.0] == ["busy", "busy", "switching off", "switching off"]  # job 3 holds them: they end their switch-off
    assert seen[930.0] == ["busy", "busy", "booting", "booting"]


def _power_states_at(model, times) -> dict:
    """Each node agent's ``power_state`` at each of ``times`` (the model stepped there)."""
    seen = {}
    for at in times:
        for _ in range(200):  # bounded: a model with nothing left to run would not move its clock
            if model.now >= at:
                break
            model.step()
        assert model.now == at
        seen[at] = [agent.power_state for agent in model.node_agents]
    return seen


def test_the_warm_placement_gives_a_job_the_nodes_that_are_on(tmp_path):
    """4 nodes: job 1 (nodes 0-1) ends at 100, job 2 (nodes 2-3) at 1,000; job 3 (2 nodes at 1,050) finds 0-1 off
    (since 200) and 2-3 on. The lowest ids boot 0-1 (it ends at 1,050 + 50 + 100); the warm placement gives it
    2-3, which need no boot (it ends at 1,150)."""
    rows = [(1, 0, 100, 2), (2, 0, 1000, 2), (3, 1050, 100, 2)]
    settings = {"idle_off_after": 100.0, "boot_time": 50.0}
    lowest = _cluster(tmp_path, rows, **settings)
    warm = _cluster(tmp_path, rows, **settings, placement="warm")
    assert lowest.jobs.set_index("job_id").loc[3, "finished_at"] == 1200.0
    assert warm.jobs.set_index("job_id").loc[3, "finished_at"] == 1150.0
    assert warm.record.attempts.set_index("job_id").loc[3, "resources"] == "2-3"
    assert warm.summary["boot_node_hours"] == 0.0 and lowest.summary["boot_node_hours"] == pytest.approx(100 / 3600)


def test_the_warm_placement_picks_the_partition_with_fewest_off_midplanes_then_mfp():
    """On BG/L's 4x4x8 torus with supernodes 0-63 off: among the free 32-supernode partitions it picks one with no
    off supernode (MFP's choice among those); with none off it is MFP's choice exactly."""
    from torus_sim.core.job import Job
    from torus_sim.engine.power_states import NodePowerStates
    from torus_sim.inputs.energy.switch_off import SwitchOff
    from torus_sim.machine.platforms.kinds import partition_table
    from torus_sim.machine.topology import BGL_SUPERNODE_TORUS
    from torus_sim.policies.placement import MFP
    from torus_sim.policies.warm_placement import WarmPlacement

    table = partition_table(BGL_SUPERNODE_TORUS)
    words = table.pack(np.zeros(128, dtype=bool))
    candidates = table.free_ids_of_size(words, 32)
    job = Job(job_id=1, submitted_at=0.0, runtime=10.0, size=32 * 512, walltime=10.0)
    job.partition_size = 32
    placement = WarmPlacement()
    placement.power_states = NodePowerStates(128, SwitchOff(after_s=600.0))
    now = 1000.0
    assert placement.choose(table, job, candidates, words, now) == MFP.choose(table, job, candidates, words, now)
    placement.power_states.idle_since[128 - 64 :] = now  # supernodes 64-127 on, 0-63 off since 600
    chosen = placement.choose(table, job, candidates, words, now)
    off = placement.power_states.off(now)
    assert not off[table.members[chosen]].any()
    cool = candidates[[not off[table.members[int(pid)]].any() for pid in candidates]]
    assert len(cool) < len(candidates) and chosen == MFP.choose(table, job, cool, words, now)


def test_without_switched_off_nodes_the_warm_placement_is_mfp_start_for_start():
    """Krevat with migrations on BG/L (SDSC-SP2's first 1,500 jobs, the bundled RAS failures, power accounting on):
    the warm placement without ``idle_off_after`` gives MFP's schedule."""
    settings = {**POWER, "workload": SDSC, "max_jobs": 1500}
    mfp = run(Scenario.make("mfp", **settings))
    warm = run(Scenario.make("warm", **settings, placement="warm"))
    pd.testing.assert_frame_equal(
        warm.jobs[["job_id", "started_at", "finished_at"]], mfp.jobs[["job_id", "started_at", "finished_at"]]
    )
    assert warm.summary["migrations"] == mfp.summary["migrations"] > 0


def test_a_count_only_cluster_switches_off_the_nodes_a_node_id_cluster_would():
    """Without failures a cluster keeps node counts only (its fast path); switching off then gives each allocation
    the lowest free ids of the power states' own mask, the node-id cluster's choice: CTC-SP2's first 3,000 jobs on
    430 nodes give the same starts, the same off and boot intervals and the same energy as with node ids kept."""
    from torus_sim.experiments.runner import ConfiguredModel

    fields = {
        **POWER,
        "workload": "../shared/data/swf/CTC-SP2-1996-3.1-cln.swf.gz",
        "platform": "cluster",
        "nodes": 430,
        "job_power": "uniform:100:300",
        "failures": "none",
        "policy": "FCFS-EASY",
        "max_jobs": 3000,
        "idle_off_after": 600,
        "boot_time": 300,
    }
    counts = build_model(Scenario.make("counts", **fields))
    assert not counts.platform.identities
    counts.run()
    ids = ConfiguredModel(node_identities=True, **fields)
    assert ids.platform.identities
    ids.run()
    first, second = counts.record(), ids.record()
    assert (first.attempts["started_at"].to_numpy() == second.attempts["started_at"].to_numpy()).all()
    order = ["node", "state", "start", "end", "job_id", "attempt"]
    pd.testing.assert_frame_equal(
        first.power_states.sort_values(order).reset_index(drop=True),
        second.power_states.sort_values(order).reset_index(drop=True),
    )
    assert (first.power_states["state"] == "boot").sum() > 100
