"""Power accounting (issue 45 §1-§3): exact energy and bill against a per-second sum, invariants on real runs, inputs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from torus_sim.core.errors import ConfigurationError, InputFileError
from torus_sim.engine.record import SimulationRecord
from torus_sim.experiments.runner import Scenario, run
from torus_sim.inputs.energy.caps import PowerCap
from torus_sim.inputs.energy.job_power import job_power_source
from torus_sim.inputs.energy.node_power import NodePower, node_power
from torus_sim.inputs.energy.tariffs import tariff
from torus_sim.metrics.energy import account_energy


@st.composite
def small_runs(draw):
    """A record of a few attempts and failures on integer seconds, node draws and a tariff."""
    nodes = draw(st.integers(14, 20))  # room for every attempt (6 x 2 nodes) and two down nodes at once
    horizon = draw(st.integers(20, 400))
    rows = []
    for job in range(draw(st.integers(0, 6))):
        start = draw(st.integers(0, horizon - 1))
        end = draw(st.integers(start, horizon))
        outcome = draw(st.sampled_from(["completed", "killed", "preempted", "silent_error"]))
        rows.append((job + 1, 1, float(start), float(end), draw(st.integers(1, 2)), outcome, ""))
    attempts = pd.DataFrame(rows, columns=["job_id", "attempt", "started_at", "ended_at", "nodes", "outcome", "resources"])
    failures = []
    for _ in range(draw(st.integers(0, 4))):
        at = draw(st.integers(0, horizon))
        failures.append((float(at), draw(st.integers(0, 1)), -1, float(at + draw(st.integers(0, 60)))))
    failures = pd.DataFrame(failures, columns=["time", "node", "killed_job", "down_until"])
    watts = np.array([draw(st.integers(100, 900)) for _ in range(len(attempts))], dtype=float)
    node = NodePower(float(draw(st.integers(0, 100))), 500.0, float(draw(st.integers(0, 50))))
    spec = draw(st.sampled_from(["flat:0.2", "tou:0.1:3", "tou:0.05:2:22-6"]))
    clock = float(draw(st.integers(0, 23)))
    record = SimulationRecord(None, attempts, None, failures, nodes, {}, float(horizon), "cluster")
    cap = None
    if draw(st.booleans()):  # a level of k + 0.5 W never equals a draw (whole watts): no tie to round either way
        share = (draw(st.integers(500, 9000)) + 0.5) / (nodes * 500.0)
        cap = PowerCap.of(share, draw(st.sampled_from([None, "8-20", "22-6"])))
    return record, watts, node, tariff(spec), clock, cap


def per_second(record, watts, node, price, clock):
    """Energy (J), bill and wasted bill from a second-by-second walk of the machine (the definition)."""
    seconds = np.arange(int(record.makespan), dtype=float)
    attempts, failures = record.attempts, record.failures
    active = (attempts["started_at"].to_numpy()[:, None] <= seconds) & (seconds < attempts["ended_at"].to_numpy()[:, None])
    size = attempts["nodes"].to_numpy(float)[:, None]
    busy_nodes = (active * size).sum(axis=0)
    job_draw = (active * size * watts[:, None]).sum(axis=0)
    wasted = (attempts["outcome"] != "completed").to_numpy()[:, None]
    wasted_draw = (active * size * watts[:, None] * wasted).sum(axis=0)
    down_nodes = np.zeros(len(seconds))
    for node_id in failures["node"].unique() if len(failures) else ():
        rows = failures[failures["node"] == node_id]
        down = ((rows["time"].to_numpy()[:, None] <= seconds) & (seconds < rows["down_until"].to_numpy()[:, None])).any(axis=0)
        down_nodes += down
    draw = job_draw + down_nodes * node.down_w + (record.capacity_total - busy_nodes - down_nodes) * node.idle_w
    rate = price.price_at(seconds, clock)
    return float(draw.sum()), float((draw * rate).sum() / 3.6e6), float((wasted_draw * rate).sum() / 3.6e6), draw


@settings(max_examples=80, deadline=None)
@given(small_runs())
def test_energy_bill_and_time_over_the_cap_equal_a_per_second_sum(case):
    record, watts, node, price, clock, cap = case
    account = account_energy(record, watts, node, price, clock, cap=cap)
    energy, bill, wasted_bill, draw = per_second(record, watts, node, price, clock)
    summary = account.summary
    if cap is None:
        assert "hours_over_cap" not in summary
    else:  # the time and the energy above the cap's line, second by second
        level = cap.at(np.arange(len(draw), dtype=float), record.capacity_total, node.busy_w, clock)
        over = draw > level
        assert summary["hours_over_cap"] * 3600.0 == pytest.approx(float(over.sum()), rel=1e-9, abs=1e-9)
        assert summary["energy_over_cap_kwh"] * 3.6e6 == pytest.approx(float((draw - level)[over].sum()), rel=1e-9, abs=1e-6)
    assert summary["energy_kwh"] * 3.6e6 == pytest.approx(energy, rel=1e-9, abs=1e-6)
    assert summary["bill"] == pytest.approx(bill, rel=1e-9, abs=1e-9)
    assert summary["wasted_bill"] == pytest.approx(wasted_bill, rel=1e-9, abs=1e-9)
    parts = summary["busy_energy_kwh"] + summary["idle_energy_kwh"] + summary["down_energy_kwh"]
    assert parts == pytest.approx(summary["energy_kwh"], rel=1e-9, abs=1e-9)  # the machine = the sum of its node states
    assert account.job_energy_kwh.sum() == pytest.approx(summary["busy_energy_kwh"], rel=1e-9, abs=1e-12)
    assert account.hourly["energy_kwh"].sum() == pytest.approx(summary["energy_kwh"], rel=1e-9, abs=1e-9)


def test_power_accounting_changes_no_schedule_and_its_parts_add_up():
    base = {"max_jobs": 400, "failures": "synthetic:1000", "downtime": 3600.0}
    plain = run(Scenario.make("plain", **base))
    powered = run(
        Scenario.make("powered", **base, power=True, price="tou:0.05:3", job_power="uniform:6000:14000", node_down_w=1000.0)
    )
    assert powered.jobs.drop(columns=["power_w", "energy_kwh"]).equals(plain.jobs)
    assert {key: value for key, value in powered.summary.items() if key in plain.summary} == plain.summary
    summary = powered.summary
    assert summary["down_energy_kwh"] > 0 and summary["wasted_energy_kwh"] > 0 and summary["job_kills"] > 0
    parts = summary["busy_energy_kwh"] + summary["idle_energy_kwh"] + summary["down_energy_kwh"]
    assert parts == pytest.approx(summary["energy_kwh"], rel=1e-9)
    assert powered.jobs["energy_kwh"].sum() == pytest.approx(summary["busy_energy_kwh"], rel=1e-9)  # every job ran to its end
    assert 0.05 < summary["mean_price"] < 0.15 and summary["peak_power_kw"] >= summary["mean_power_kw"]
    assert powered.power["energy_kwh"].sum() == pytest.approx(summary["energy_kwh"], rel=1e-9)
    assert len(powered.power) == int(np.ceil(summary["makespan"] / 3600.0))
    # a flat price: the bill is the energy times the price; every node at one draw: N x draw x T
    flat = run(Scenario.make("flat", **base, power=True, price="flat:0.2", node_idle_w=11200.0, node_down_w=11200.0))
    assert flat.summary["bill"] == pytest.approx(0.2 * flat.summary["energy_kwh"], rel=1e-12)
    assert flat.summary["energy_kwh"] == pytest.approx(128 * 11200.0 * flat.summary["makespan"] / 3.6e6, rel=1e-12)


def test_a_job_has_the_same_drawn_power_under_every_policy():
    runs = [
        run(
            Scenario.make(
                policy, max_jobs=200, failures="none", power=True, job_power="uniform:5000:15000", policy=policy, seed=3
            )
        )
        for policy in ("krevat", "FCFS-EASY")
    ]
    first, second = (result.jobs.set_index("job_id")["power_w"] for result in runs)
    assert first.equals(second.loc[first.index]) and first.between(5000, 15000).all() and first.nunique() > 100
    other = job_power_source("uniform:5000:15000").watts(np.array(sorted(first.index)), 0.0, 4)
    assert not np.allclose(other, first.sort_index().to_numpy())  # another seed, other draws


def test_node_figures_carry_their_sources_and_the_inputs_are_checked(tmp_path):
    from torus_sim.machine.machines import load_machine

    mira = node_power(Scenario.make(), load_machine("mira"))
    assert mira.busy_w == pytest.approx(3_945_000 / 96) and "TOP500 June 2012" in mira.sources["busy"]
    assert mira.idle_w == mira.busy_w / 2 and "assumption" in mira.sources["idle"]
    assert node_power(Scenario.make(node_idle_w=80.0)).idle_w == 80.0
    with pytest.raises(ConfigurationError, match="above the busy draw"):
        node_power(Scenario.make(node_idle_w=300.0))
    for spec, message in (("tou:0.05", "expected tou"), ("tou:0.05:3:20-20", "on-peak hours"), ("flat:-1", "not a number")):
        with pytest.raises(ConfigurationError, match=message):
            tariff(spec)
    with pytest.raises(ConfigurationError, match="uniform:LOW:HIGH"):
        job_power_source("uniform:9:3")
    prices = tmp_path / "prices.csv"
    prices.write_text("time,price\n0,0.1\n3600,abc\n")
    with pytest.raises(InputFileError, match=r"prices.csv:3: malformed"):
        tariff(str(prices))
    prices.write_text("time,price\n")
    with pytest.raises(InputFileError, match="empty"):
        tariff(str(prices))
    prices.write_text("time,price\n# a comment\n0,0.1\n\n0,0.3\n")
    with pytest.raises(InputFileError, match=r"prices.csv:5: malformed .*times must increase"):
        tariff(str(prices))
    prices.write_text("time,price\n0,0.1\n7200,0.3\n")
    assert tariff(str(prices)).price_at(np.array([0.0, 7199.0, 7200.0, 9e9]), 0.0).tolist() == [0.1, 0.1, 0.3, 0.3]
    watts = tmp_path / "watts.csv"
    watts.write_text("job_id,watts_per_node\n1,9000\n2,7000\n")
    source = job_power_source(str(watts))
    assert source.watts(np.array([2, 1, 3]), 500.0, 0).tolist() == [7000.0, 9000.0, 500.0] and "1 not listed" in source.describe()


def test_the_command_line_prints_energy_and_refuses_bad_power_input(tmp_path, capsys):
    """Energy lines on a run and a batch; a malformed price is a sentence, exit 2, nothing written."""
    from torus_sim.interfaces.cli import main

    out = tmp_path / "out"
    code = main(["run", "--max-jobs", "150", "--power", "--price", "tou:0.05:3", "--out", str(out), "--batsim"])
    text = capsys.readouterr().out
    assert code == 0 and "energy (kWh)" in text and "electricity bill" in text and "power     midplane idle 5,600 W" in text
    assert (out / "power.csv").exists()
    batsim = pd.read_csv(out / "batsim_jobs.csv")
    jobs = pd.read_csv(out / "jobs.csv")
    assert (batsim["consumed_energy"] > 0).all()
    assert batsim["consumed_energy"].sum() / 3.6e6 == pytest.approx(jobs["energy_kwh"].sum(), rel=1e-6)
    assert main(["run", "--max-jobs", "50", "--power", "--price", "tou:abc:3", "--out", str(tmp_path / "bad")]) == 2
    assert "tou:abc:3" in capsys.readouterr().err and not (tmp_path / "bad").exists()
    batch = [
        "run",
        "--platform",
        "cluster",
        "--workload",
        "rigid",
        "--policy",
        "R-LIST-0",
        "--power",
        "--out",
        str(tmp_path / "b"),
    ]
    assert main(batch) == 0  # a batch with power accounting: its scenarios' means (refused before 2026-11-27)
    assert "mean energy (kWh)" in capsys.readouterr().out and (tmp_path / "b" / "scenarios.csv").exists()
    plain = main(["run", "--max-jobs", "50", "--out", str(tmp_path / "plain")])
    assert plain == 0 and "energy" not in capsys.readouterr().out and not (tmp_path / "plain" / "power.csv").exists()


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(1, 8), st.integers(-50, 500).map(float)), min_size=0, max_size=8
    ),  # whole watts: sums exact in any order
    st.integers(0, 20),
    st.one_of(st.just(float("inf")), st.integers(-10, 2000).map(float)),
)
def test_the_window_knapsack_is_the_best_subset(jobs, free, headroom):
    """JSSPP'13's 0-1 knapsack: the most nodes within the free nodes and the power headroom, least power on ties."""
    import itertools

    from torus_sim.policies.power_aware import knapsack_subset

    sizes, powers = [size for size, _ in jobs], [power for _, power in jobs]
    chosen = knapsack_subset(sizes, powers, free, headroom)
    feasible = [
        subset
        for k in range(1, len(jobs) + 1)
        for subset in itertools.combinations(range(len(jobs)), k)
        if sum(sizes[i] for i in subset) <= free and sum(powers[i] for i in subset) <= headroom
    ]
    if not feasible:
        assert chosen == ()
        return
    best = max(sum(sizes[i] for i in subset) for subset in feasible)
    assert sum(sizes[i] for i in chosen) == best
    least = min(sum(powers[i] for i in subset) for subset in feasible if sum(sizes[i] for i in subset) == best)
    assert sum(powers[i] for i in chosen) == pytest.approx(least, abs=1e-9)


POWER_WINDOW = {"max_jobs": 3000, "failures": "none", "power": True, "job_power": "uniform:5600:16800"}


def test_the_power_window_policy_keeps_on_peak_starts_within_its_budget_and_lowers_the_bill():
    from torus_sim.metrics.energy import power_timeline

    fcfs = {ratio: run(Scenario.make("FCFS", **POWER_WINDOW, price=f"tou:0.05:{ratio}", policy="FCFS")) for ratio in (2, 5)}
    window = {
        ratio: run(Scenario.make("window", **POWER_WINDOW, price=f"tou:0.05:{ratio}", policy="power-window")) for ratio in (2, 5)
    }
    savings = {ratio: 1 - window[ratio].summary["bill"] / fcfs[ratio].summary["bill"] for ratio in (2, 5)}
    assert 0 < savings[2] < savings[5]  # the papers' trend: the larger the on-/off-peak ratio, the larger the saving
    assert window[5].summary["jobs"] == fcfs[5].summary["jobs"]
    # every start in on-peak hours (8:00-20:00) leaves the draw within 0.75 x N x busy, unless it was the only job running
    record = window[5].record
    attempts = record.attempts
    watts = attempts["job_id"].map(window[5].jobs.set_index("job_id")["power_w"]).to_numpy(float)
    times, draw = power_timeline(attempts, watts, (np.empty(0), np.empty(0)), 128, 5600.0, 0.0)
    budget = 0.75 * 128 * 11200.0
    for start in attempts["started_at"].unique():
        if not 8 <= (start / 3600.0) % 24 < 20:
            continue
        after = draw[np.searchsorted(times, start, side="right") - 1]
        alone = ((attempts["started_at"] <= start) & (attempts["ended_at"] > start)).sum() == 1  # the rule: never idle
        assert after <= budget + 1e-6 or alone, (start, after)


def test_the_power_window_policy_reads_the_clock_of_the_run():
    """t = 0 at 12:00 is on-peak under tou 8-20; at 0:00 it is not (the policy sees clock_start_hour)."""
    from torus_sim.experiments.runner import build_model
    from torus_sim.policies.power_aware import PowerWindowPolicy

    for hour, on_peak in ((12.0, True), (0.0, False)):
        scenario = Scenario.make(
            "clock", max_jobs=20, power=True, price="tou:0.05:3", clock_start_hour=hour, policy="power-window"
        )
        model = build_model(scenario)
        assert isinstance(model.policy, PowerWindowPolicy) and model.power.clock_start_hour == hour
        assert model.policy.on_peak(0.0, model.power.clock_start_hour) is on_peak


def test_the_power_window_policy_refuses_a_run_without_power_and_a_budget_below_the_idle_draw():
    with pytest.raises(ConfigurationError, match="needs power accounting"):
        run(Scenario.make("no power", max_jobs=50, policy="power-window"))
    with pytest.raises(ConfigurationError, match="not above the idle draw"):
        run(Scenario.make("low", max_jobs=50, policy="power-window", power=True, policy_params={"budget": 0.4}))
    with pytest.raises(ConfigurationError, match="selection must be one of knapsack, greedy"):
        run(Scenario.make("bad", max_jobs=50, policy="power-window", power=True, policy_params={"selection": "best"}))


def test_a_job_the_on_peak_budget_holds_starts_when_off_peak_hours_begin(tmp_path):
    """The power-window policy's pass at a price change (passes_at_price_changes).

    A 4-node cluster (100 W idle, 200 W busy per node, budget 0.75 x 800 = 600 W), t = 0 at 12:00 under
    tou 8-20: job 1 (1 node at 150 W, 100,000 s) starts at once (never idle with work that fits: 450 W);
    job 2 (2 nodes at 300 W each: 850 W) is held on-peak. Off-peak starts at 20:00, t = 28,800 s: job 2
    starts then, not when job 1 ends (no arrival or end comes between).
    """
    trace = tmp_path / "trace.swf"
    rows = [(1, 0, 100_000, 1, 100_000), (2, 10, 100, 2, 100)]
    trace.write_text(
        "; MaxProcs: 4\n" + "".join(f"{j} {s} 0 {r} {p} -1 -1 {p} {q} -1 1 1 1 -1 1 -1 -1 -1\n" for j, s, r, p, q in rows)
    )
    watts = tmp_path / "watts.csv"
    watts.write_text("job_id,watts_per_node\n1,150\n2,300\n")
    result = run(
        Scenario.make(
            "held",
            workload=str(trace),
            platform="cluster",
            nodes=4,
            power=True,
            job_power=str(watts),
            price="tou:0.05:3",
            clock_start_hour=12.0,
            policy="power-window",
        )
    )
    started = result.jobs.set_index("job_id")["started_at"]
    assert started[1] == 0.0
    assert started[2] == 28_800.0


def test_the_power_window_policy_with_backfilling_keeps_the_budget_and_cuts_the_slowdown():
    """backfill = true: after the window's starts, EASY inside the on-peak budget. NASA's first 3,000 jobs on BG/L, ratio 3:
    the bill stays below FCFS's, the bounded slowdown falls below the window alone's, and every on-peak start leaves
    the draw within 0.75 x N x busy unless one job runs alone (the same rule as without backfilling)."""
    from torus_sim.metrics.energy import power_timeline

    settings = {**POWER_WINDOW, "price": "tou:0.05:3"}
    fcfs = run(Scenario.make("FCFS", **settings, policy="FCFS"))
    alone = run(Scenario.make("window", **settings, policy="power-window"))
    behind = run(Scenario.make("backfill", **settings, policy="power-window", policy_params={"backfill": True}))
    assert behind.summary["jobs"] == fcfs.summary["jobs"]
    assert behind.summary["bill"] < fcfs.summary["bill"]
    assert behind.summary["avg_bounded_slowdown"] < alone.summary["avg_bounded_slowdown"]
    attempts = behind.record.attempts
    watts = attempts["job_id"].map(behind.jobs.set_index("job_id")["power_w"]).to_numpy(float)
    times, draw = power_timeline(attempts, watts, (np.empty(0), np.empty(0)), 128, 5600.0, 0.0)
    for start in attempts["started_at"].unique():
        if not 8 <= (start / 3600.0) % 24 < 20:
            continue
        after = draw[np.searchsorted(times, start, side="right") - 1]
        running = ((attempts["started_at"] <= start) & (attempts["ended_at"] > start)).sum()
        assert after <= 0.75 * 128 * 11200.0 + 1e-6 or running == 1, (start, after)
    with pytest.raises(ConfigurationError, match="parameter 'backfill'"):
        run(Scenario.make("bad", max_jobs=20, policy="power-window", power=True, policy_params={"backfill": "maybe"}))


def test_the_window_backfills_budget_is_on_where_on_peak_says_at_every_time(tmp_path):
    """BudgetBackfill.cap_levels asks on_peak only at price changes and 24 h before them; every time gets on_peak's
    answer (a time-of-use day and an irregular price file, whose 24-hour look-ahead matters)."""
    from types import SimpleNamespace

    from torus_sim.inputs.energy.node_power import NodePower
    from torus_sim.policies.power_aware import on_peak
    from torus_sim.policies.power_cap import BudgetBackfill

    prices = tmp_path / "prices.csv"
    prices.write_text("time,price\n0,0.1\n30000,0.3\n50000,0.05\n200000,0.2\n260000,0.2\n400000,0.1\n")
    rng = np.random.default_rng(1)
    for spec, clock in (("tou:0.05:3:8-20", 5.0), (str(prices), 0.0)):
        backfill = BudgetBackfill(0.75)
        backfill._power = SimpleNamespace(tariff=tariff(spec), clock_start_hour=clock, node=NodePower(5600.0, 11200.0, 0.0))
        backfill._nodes = 128
        times = np.sort(np.concatenate([rng.uniform(0, 500_000, 300), [30000.0, 50000.0, 113600.0, 313600.0]]))
        levels = backfill.cap_levels(times)
        expected = [0.75 * 128 * 11200.0 if on_peak(backfill._power.tariff, t, clock) else np.inf for t in times]
        assert levels.tolist() == expected


def test_a_batch_with_power_accounting_prices_each_failure_scenario_and_its_spoiled_attempts():
    """Issue 45 §6: a rigid batch (RIGID §5 set-up) with silent errors: each scenario's energy, the energy of the attempts
    silent errors spoiled (re-executed) and its bill, their means in the summary; no makespan moves; one scenario's
    account equals power accounting of its own record."""
    from torus_sim.metrics.energy import account_energy

    base = {"platform": "cluster", "nodes": 200, "workload": "rigid", "jobs": 40, "mean_failure_probability": 0.3}
    base |= {"scenarios": 4, "policy": "R-LIST-0"}
    plain = run(Scenario(**base))
    powered = run(Scenario(**base, power=True, price="tou:0.05:3", job_power="uniform:150:250"))
    table = powered.scenarios
    assert table["makespan"].tolist() == plain.scenarios["makespan"].tolist()  # no schedule moved
    assert (table["wasted_energy_kwh"] > 0).any() and (table["wasted_energy_kwh"] < table["energy_kwh"]).all()
    for column in ("energy_kwh", "wasted_energy_kwh", "bill"):
        assert powered.summary[f"mean_{column}"] == pytest.approx(table[column].mean())
    assert "energy_kwh" not in powered.summary and "power_w" in powered.jobs.columns  # scenario 0's jobs
    record = powered.record  # scenario 0's
    watts = record.attempts["job_id"].map(powered.jobs.set_index("job_id")["power_w"]).to_numpy(float)
    node = NodePower(100.0, 200.0, 0.0)
    assert account_energy(record, watts, node, tariff("tou:0.05:3")).summary["energy_kwh"] == pytest.approx(
        table["energy_kwh"][0]
    )
    single = run(Scenario(**{**base, "scenarios": 1}, power=True, price="tou:0.05:3", job_power="uniform:150:250"))
    assert single.summary["energy_kwh"] == pytest.approx(single.summary["mean_energy_kwh"])
