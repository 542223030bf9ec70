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
from torus_sim.machine.platforms.queue_partitions import QueuePartition, parse_partitions, queue_router
from torus_sim.policies.catalog import ONLINE_POLICIES

CLUSTER_POLICIES = [name for name in ONLINE_POLICIES if name not in ("krevat", "balancing", "tiebreak")]
ROOT = Path(__file__).resolve().parents[1]


def _log(path: Path, rows, field: int = 15) -> Path:
    """An SWF log of (submit, runtime, processors, queue) rows; the queue in field 15 (or 16: the partition)."""
    lines = ["; MaxProcs: 8"]
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


def test_a_job_goes_to_its_queues_partition_and_no_further():
    route = queue_router(parse_partitions("small:4:1,big:8:*"), [1, 2, 3, 4], [1, 2, -1, 1])

    def job(job_id, processors):
        return Job(job_id, 0.0, runtime=1.0, walltime=1.0, size=processors)

    assert route(job(1, 4)) == (0, 4)
    assert route(job(2, 8)) == (1, 8)
    assert route(job(3, 2)) == (1, 2)  # no queue (-1): every other queue's partition
    with pytest.raises(ConfigurationError, match="job 4 asks 6 processors; its partition 'small' \\(queue 1\\) has 4"):
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


def test_the_partitions_module_imports_no_engine_or_policy():
    tree = ast.parse((ROOT / "torus_sim/machine/platforms/queue_partitions.py").read_text())
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert not any(name.startswith(("torus_sim.engine", "torus_sim.policies")) for name in imported if name)
