"""A cluster partitioned by the log's queues (issue 77 §1, queues and partitions): each queue's jobs run only on its
partition's processors, under every cluster policy; bad partitions are one sentence."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from torus_sim.core.errors import ConfigurationError
from torus_sim.core.job import Job
from torus_sim.experiments.runner import run
from torus_sim.experiments.scenario import Scenario
from torus_sim.machine.platforms.queue_partitions import QueuePartition, parse_partitions, queue_router, rule_router
from torus_sim.policies.catalog import ONLINE_POLICIES

CLUSTER_POLICIES = [name for name in ONLINE_POLICIES if name not in ("krevat", "balancing", "tiebreak")]
ROOT = Path(__file__).resolve().parents[1]


def _log(path: Path, rows, field: int = 15, machine: int = 16) -> Path:
    """An SWF log of (submit, runtime, processors, queue) rows; the queue in field 15 (or 16: the partition)."""
    lines = [f"; MaxProcs: {machine}"]
    for number, (submit, runtime, processors, queue) in enumerate(rows, start=1):
        fields = [number, submit, 0, runtime, processors, -1, -1, processors, runtime, -1, 1, 1, 1, 1, -1, -1, -1, -1]
        fields[field - 1] = queue
        lines.append(" ".join(str(value) for value in fields))
    path.write_text("\n".join(lines) + "\n")
    return path


def test_partitions_are_read_and_a_bad_one_is_named():
    assert parse_partitions("express:13:1, batch:115:*") == (
        QueuePartition("express", 13, frozenset({1})),
        QueuePartition("batch", 115, None),
    )
    assert parse_partitions("a:4:1+2+3").__getitem__(0).queues == frozenset({1, 2, 3})
    for bad, words in (
        ("batch:115", "expected NAME:PROCESSORS:QUEUES"),
        ("batch:0:1", "whole number in"),
        ("batch:8:x", "numbers joined by \\+ or \\*"),
        ("a:4:1,a:4:2", "a name given twice"),
        ("a:4:*,b:4:*", "only one partition may take every other queue"),
        ("a:4:1+2,b:4:2", "queue 2 is routed to two partitions"),
    ):
        with pytest.raises(ConfigurationError, match=words):
            parse_partitions(bad)
    with pytest.raises(ConfigurationError, match="expected NAME:PROCESSORS:QUEUES"):
        Scenario.make(platform="partitions", partitions="batch")


def test_partitions_over_the_logs_machine_are_refused(tmp_path):
    log = _log(tmp_path / "q.swf", [(0, 10, 2, 1), (5, 10, 4, 2)], machine=8)
    with pytest.raises(ConfigurationError, match=r"they hold 10 processors, more than the workload's machine \(8"):
        run(Scenario.make(workload=str(log), platform="partitions", partitions="a:4:1,b:6:*", policy="FCFS-EASY"))
    assert run(Scenario.make(workload=str(log), platform="partitions", partitions="a:4:1,b:4:*", policy="FCFS-EASY")).summary


def test_a_job_goes_to_its_queues_partition_and_no_further():
    route = queue_router(parse_partitions("small:4:1,big:8:*"), [1, 2, 3, 4], [1, 2, -1, 1])

    def job(job_id, processors):
        return Job(job_id, 0.0, runtime=1.0, walltime=1.0, size=processors)

    assert route(job(1, 4)) == (0, 4)
    assert route(job(2, 8)) == (1, 8)
    assert route(job(3, 2)) == (1, 2)  # no queue (-1): every other queue's partition
    with pytest.raises(ConfigurationError, match="job 4 \\(queue 1\\) asks 6 processors; partition 'small' has 4"):
        route(job(4, 6))
    strict = queue_router(parse_partitions("small:4:1"), [5], [2])
    with pytest.raises(ConfigurationError, match="job 5 is in queue 2, which no partition takes"):
        strict(job(5, 1))


def test_a_queues_jobs_wait_for_their_partition_while_another_is_free(tmp_path):
    # two partitions of 2 processors: A takes queue 1, B every other. Job 1 (queue 1, 2 processors, 0-100) fills A;
    # job 2 (queue 1, 1 processor, at 10) waits for A until 100 though B is free; job 3 (queue 2, 2 processors, at 20)
    # starts at once on B. On one cluster of 4, job 2 starts at 10 and job 3 waits for job 2's end (60).
    log = _log(tmp_path / "queues.swf", [(0, 100, 2, 1), (10, 50, 1, 1), (20, 50, 2, 2)])
    parted = run(
        Scenario.make(platform="partitions", partitions="A:2:1,B:2:*", workload=str(log), policy="FCFS-EASY", failures="none")
    )
    table = parted.jobs.set_index("job_id")
    assert table["started_at"].to_dict() == {1: 0.0, 2: 100.0, 3: 20.0}
    assert table["partition"].to_dict() == {1: 0, 2: 0, 3: 1}
    whole = run(Scenario.make(platform="cluster", nodes=4, workload=str(log), policy="FCFS-EASY", failures="none"))
    assert whole.jobs.set_index("job_id")["started_at"].to_dict() == {1: 0.0, 2: 10.0, 3: 60.0}
    # routed by the partition field (SWF field 16) instead
    by_partition = _log(tmp_path / "parts.swf", [(0, 100, 2, 1), (10, 50, 1, 1), (20, 50, 2, 2)], field=16)
    again = run(
        Scenario.make(
            platform="partitions",
            partitions="A:2:1,B:2:2",
            partition_field="partition",
            workload=str(by_partition),
            policy="FCFS-EASY",
            failures="none",
        )
    )
    assert again.jobs.set_index("job_id")["started_at"].to_dict() == {1: 0.0, 2: 100.0, 3: 20.0}


@pytest.mark.parametrize("policy", CLUSTER_POLICIES)
def test_every_cluster_policy_keeps_each_queue_on_its_partition(tmp_path, policy):
    rng = np.random.default_rng(11)
    rows = [
        (int(at), int(rng.integers(60, 3000)), int(rng.integers(1, 5)), int(rng.choice([1, 2, 3])))
        for at in np.cumsum(rng.integers(0, 300, size=80))
    ]
    log = _log(tmp_path / "mixed.swf", rows)
    result = run(
        Scenario.make(platform="partitions", partitions="one:4:1,rest:6:2+3", workload=str(log), policy=policy, failures="none")
    )
    assert len(result.jobs) == len(rows) and result.jobs["finished_at"].notna().all()
    routed = result.jobs.set_index("job_id")["partition"]
    for attempt in result.record.attempts.itertuples():
        queue = rows[attempt.job_id - 1][3]
        assert routed[attempt.job_id] == (0 if queue == 1 else 1)
        held = []
        for piece in attempt.resources.split():
            low, _, high = piece.partition("-")
            held += range(int(low), int(high or low) + 1)
        low, high = (0, 4) if queue == 1 else (4, 10)
        assert all(low <= slot < high for slot in held), (attempt.job_id, held)


def test_a_queue_the_log_lacks_is_one_sentence(tmp_path):
    log = _log(tmp_path / "queues.swf", [(0, 100, 2, 1), (10, 50, 1, 2)])
    scenario = Scenario.make(platform="partitions", partitions="A:2:1+7,B:2:*", workload=str(log), failures="none", policy="FCFS")
    with pytest.raises(ConfigurationError, match="A names queue 7, which queues.swf does not have \\(its queues: 1, 2\\)"):
        run(scenario)
    named = log.read_text().replace("; MaxProcs", "; Queue: 7 interactive\n; MaxProcs", 1)
    log.write_text(named)  # the header names queue 7: a partition may name it, though no line uses it
    assert len(run(scenario).jobs) == 2


def test_a_site_file_naming_a_queue_the_log_lacks_is_named_with_the_file_and_section(tmp_path, capsys):
    """Issue 77's bad input: a site file naming a queue the log does not have is one sentence naming the file and
    the setting (the check needs the log, so it comes after the file is read), exit 2, nothing written."""
    from torus_sim.interfaces.cli import main

    log = _log(tmp_path / "queues.swf", [(0, 100, 2, 1), (10, 50, 1, 2)])
    site = tmp_path / "site.toml"
    head = f'[workload]\nworkload = "{log}"\n[failures]\nfailures = "none"\n[policy]\npolicy = "FCFS"\n'
    for section, setting, said in (
        ("platform", 'platform = "partitions"\npartitions = "A:2:1+7,B:2:*"', "partitions: A names queue 7"),
        ("priority", 'priority_weight_queue = 1.0\npriority_queue_tiers = "1:2,9:1"', "priority_queue_tiers names queue 9"),
    ):
        site.write_text(
            head + ("" if section == "platform" else '[platform]\nplatform = "cluster"\n') + f"[{section}]\n{setting}\n"
        )
        code = main(["run", str(site), "--out", str(tmp_path / "out")])
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1 and not (tmp_path / "out").exists(), err
        assert err.startswith(f"torus-sim: error: {site}: [{section}] {said}, which queues.swf does not have"), err
    code = main(["run", str(site), "--priority-queue-tiers", "1:2,8:1", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err  # the option's value, not the file's: the file is not named
    assert code == 2 and err.startswith("torus-sim: error: priority_queue_tiers names queue 8"), err


def _job(job_id, processors, walltime):
    return Job(job_id, 0.0, runtime=walltime, walltime=walltime, size=processors)


def test_a_partitions_limits_are_read_and_a_bad_one_is_named():
    assert parse_partitions("short:4:*:max_time=3600:max_nodes=2, long:8:*", by_rules=True) == (
        QueuePartition("short", 4, None, 3600.0, 2),
        QueuePartition("long", 8, None),
    )
    assert parse_partitions("a:4:1:max_nodes=3")[0].max_nodes == 3
    for bad, words, by_rules in (
        ("a:4:1:max_time=0", "a's max_time must be a number of seconds above 0, got '0'", False),
        ("a:4:1:max_time=inf", "a's max_time must be a number of seconds above 0", False),
        ("a:4:1:max_nodes=x", "a's max_nodes must be a whole number in \\[1, 4,194,304\\], got 'x'", False),
        ("a:4:1:walltime=3", "a's limits are max_time=SECONDS and max_nodes=N", False),
        ("a:4:1:max_time=5:max_time=6", "a gives max_time twice", False),
        ("a:4:1,b:4:*", "routed by rules \\(partition_field = \"rules\"\\), a's queues are \\*, got '1'", True),
    ):
        with pytest.raises(ConfigurationError, match=words):
            parse_partitions(bad, by_rules=by_rules)
    assert Scenario.make(platform="partitions", partitions="a:4:*,b:4:*", partition_field="rules").partition_field == "rules"
    with pytest.raises(ConfigurationError, match="only one partition may take every other queue"):
        Scenario.make(platform="partitions", partitions="a:4:*,b:4:*")


def test_by_rules_a_job_goes_to_the_first_partition_that_admits_it():
    route = rule_router(parse_partitions("short:4:*:max_time=100:max_nodes=3,long:8:*", by_rules=True))
    assert route(_job(1, 2, 50.0)) == (0, 2)
    assert route(_job(2, 2, 200.0)) == (1, 2)  # over short's max_time
    assert route(_job(3, 4, 50.0)) == (1, 4)  # over short's max_nodes (3), though its 4 processors would hold it
    with pytest.raises(ConfigurationError, match="job 4 fits no partition: it asks 10 processors; partition 'long' has 8"):
        route(_job(4, 10, 50.0))
    only_short = rule_router(parse_partitions("short:4:*:max_time=100", by_rules=True))
    with pytest.raises(
        ConfigurationError, match="job 5 fits no partition: it asks 200 s; partition 'short' allows at most 100 s"
    ):
        only_short(_job(5, 1, 200.0))


def test_a_job_over_its_queues_partition_limits_is_one_sentence():
    route = queue_router(parse_partitions("small:4:1:max_time=100,big:8:*"), [1, 2], [1, 2])
    assert route(_job(2, 4, 500.0)) == (1, 4)
    with pytest.raises(
        ConfigurationError, match="job 1 \\(queue 1\\) asks 200 s; partition 'small' allows at most 100 s \\(max_time\\)"
    ):
        route(_job(1, 1, 200.0))


def _timed_log(path: Path, rows) -> Path:
    """An SWF log of (submit, runtime, processors, requested time) rows, every job in queue 1."""
    lines = ["; MaxProcs: 16"]
    for number, (submit, runtime, processors, requested) in enumerate(rows, start=1):
        fields = [number, submit, 0, runtime, processors, -1, -1, processors, requested, -1, 1, 1, 1, 1, 1, -1, -1, -1]
        lines.append(" ".join(str(value) for value in fields))
    path.write_text("\n".join(lines) + "\n")
    return path


def test_by_rules_a_long_job_waits_for_the_long_partition_while_the_short_one_is_free(tmp_path):
    # short: 2 processors, at most 60 s asked; long: 2 processors. Job 1 (2 processors, 100 s asked) runs on long from 0;
    # job 2 (2 processors, 50 s asked, at 10) on short from 10; job 3 (1 processor, 200 s asked, runs 30 s, at 20) is
    # long's and waits for job 1's end at 100. On one cluster of 4 it starts when job 2 ends, at 60.
    log = _timed_log(tmp_path / "timed.swf", [(0, 100, 2, 100), (10, 50, 2, 50), (20, 30, 1, 200)])
    parted = run(
        Scenario.make(
            platform="partitions",
            partitions="short:2:*:max_time=60,long:2:*",
            partition_field="rules",
            workload=str(log),
            policy="FCFS-EASY",
            failures="none",
        )
    )
    table = parted.jobs.set_index("job_id")
    assert table["started_at"].to_dict() == {1: 0.0, 2: 10.0, 3: 100.0}
    assert table["partition"].to_dict() == {1: 1, 2: 0, 3: 1}
    whole = run(Scenario.make(platform="cluster", nodes=4, workload=str(log), policy="FCFS-EASY", failures="none"))
    assert whole.jobs.set_index("job_id")["started_at"].to_dict() == {1: 0.0, 2: 10.0, 3: 60.0}


@pytest.mark.parametrize("policy", CLUSTER_POLICIES)
def test_by_rules_every_cluster_policy_runs_each_job_on_the_first_partition_that_admits_it(tmp_path, policy):
    rng = np.random.default_rng(5)
    rows = []
    for at in np.cumsum(rng.integers(0, 200, size=80)):
        runtime = int(rng.integers(30, 2000))
        rows.append((int(at), runtime, int(rng.integers(1, 7)), runtime + int(rng.integers(0, 600))))
    log = _timed_log(tmp_path / "mixed.swf", rows)
    partitions = "small:3:*:max_time=900:max_nodes=2,medium:4:*:max_time=1800,big:6:*"
    result = run(
        Scenario.make(
            platform="partitions",
            partitions=partitions,
            partition_field="rules",
            workload=str(log),
            policy=policy,
            failures="none",
        )
    )
    assert len(result.jobs) == len(rows) and result.jobs["finished_at"].notna().all()
    routed = result.jobs.set_index("job_id")["partition"]
    for number, (_, _, processors, requested) in enumerate(rows, start=1):
        if processors <= 2 and requested <= 900:
            first = 0
        elif processors <= 4 and requested <= 1800:
            first = 1
        else:
            first = 2
        assert routed[number] == first, (number, processors, requested)


def test_the_partitions_module_imports_no_engine_or_policy():
    tree = ast.parse((ROOT / "torus_sim/machine/platforms/queue_partitions.py").read_text())
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert not any(name.startswith(("torus_sim.engine", "torus_sim.policies")) for name in imported if name)
