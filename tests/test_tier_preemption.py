"""Preemption by tier (issue 77 §1): a waiting job of a higher queue tier that does not fit takes the nodes of running
jobs of lower tiers (Slurm's preempt/partition_prio), under every cluster policy; what the preempted keep is the
preemption mode's."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from torus_sim.core.errors import ConfigurationError
from torus_sim.experiments.runner import run
from torus_sim.experiments.scenario import Scenario
from torus_sim.experiments.sweep import run_key
from torus_sim.policies.catalog import ONLINE_POLICIES

CLUSTER_POLICIES = [name for name in ONLINE_POLICIES if name not in ("krevat", "balancing", "tiebreak")]


def _log(path: Path, rows) -> Path:
    """An SWF log of (submit, runtime, processors, queue) rows on 4 processors."""
    lines = ["; MaxProcs: 4"]
    for number, (submit, runtime, processors, queue) in enumerate(rows, start=1):
        fields = [number, submit, 0, runtime, processors, -1, -1, processors, runtime, -1, 1, 1, 1, 1, queue, -1, -1, -1]
        lines.append(" ".join(str(value) for value in fields))
    path.write_text("\n".join(lines) + "\n")
    return path


def _tiered(log: Path, **settings) -> Scenario:
    chosen = {"platform": "cluster", "policy": "FCFS-EASY", "priority_queue_tiers": "1:1,2:2", "preempt_by_tier": True}
    return Scenario.make(workload=str(log), failures="none", **{**chosen, **settings})


def test_a_higher_tiers_job_takes_the_nodes_of_the_lower_tier_and_the_victim_starts_again(tmp_path):
    # job 1 (queue 1, 4 processors, 0-1,000) holds the machine; job 2 (queue 2, the higher tier, 2 processors, 100 s)
    # arrives at 100: it preempts job 1 and starts at once; job 1, killed and requeued (its 100 s lost), starts again
    # when job 2 ends (200) and runs its 1,000 s. Job 3 (queue 2, 4 processors, at 1,300) cannot be helped by its own
    # tier's job 4 (queue 2, 2 processors, 1,250-1,450): it waits for it
    log = _log(tmp_path / "tiers.swf", [(0, 1000, 4, 1), (100, 100, 2, 2), (1250, 200, 2, 2), (1300, 50, 4, 2)])
    result = run(_tiered(log))
    table = result.jobs.set_index("job_id")
    assert table["started_at"].to_dict() == {1: 200.0, 2: 100.0, 3: 1250.0, 4: 1450.0}
    assert table["first_started_at"][1] == 0.0 and table["finished_at"][1] == 1200.0
    attempts = result.record.attempts
    assert attempts[attempts["outcome"] == "preempted"]["job_id"].tolist() == [1]
    assert result.summary["preemptions"] == 1 and result.summary["jobs_started_by_preemption"] == 1
    plain = run(_tiered(log, preempt_by_tier=None))
    assert plain.jobs.set_index("job_id")["started_at"].to_dict() == {1: 0.0, 2: 1000.0, 3: 1250.0, 4: 1450.0}
    assert run_key(_tiered(log)) != run_key(_tiered(log, preempt_by_tier=None))


def test_suspended_victims_keep_their_work(tmp_path):
    # as above in PV-EASY's suspend mode (work kept, a 60 s resume, every job 5% slower): job 1 resumes at 200 with
    # 900 s of work left
    log = _log(tmp_path / "tiers.swf", [(0, 1000, 4, 1), (100, 100, 2, 2)])
    table = run(_tiered(log, preemption="suspend")).jobs.set_index("job_id")
    assert table["started_at"][2] == 100.0 and table["started_at"][1] == pytest.approx(100 * 1.05 + 100)
    assert table["finished_at"][1] == pytest.approx(table["started_at"][1] + 60 + 900 * 1.05, rel=0.01)


@pytest.mark.parametrize("policy", CLUSTER_POLICIES)
def test_only_lower_tiers_are_preempted_under_every_cluster_policy(tmp_path, policy):
    rng = np.random.default_rng(5)
    rows = [
        (int(at), int(rng.integers(60, 2000)), int(rng.integers(1, 5)), int(rng.choice([1, 1, 2])))
        for at in np.cumsum(rng.integers(0, 300, size=60))
    ]
    log = _log(tmp_path / "mixed.swf", rows)
    result = run(_tiered(log, policy=policy))
    assert len(result.jobs) == len(rows) and result.jobs["finished_at"].notna().all()
    preempted = result.record.attempts.query("outcome == 'preempted'")["job_id"]
    queues = {number: row[3] for number, row in enumerate(rows, start=1)}
    if policy != "PV-EASY":  # PV-EASY preempts by its own rule too
        assert all(queues[job_id] == 1 for job_id in preempted)
        assert result.summary["preemptions"] >= result.summary["jobs_started_by_preemption"] > 0


def test_preemption_by_tier_is_refused_where_it_means_nothing(tmp_path):
    log = _log(tmp_path / "tiers.swf", [(0, 1000, 4, 1), (100, 100, 2, 2)])
    with pytest.raises(ConfigurationError, match="preempt_by_tier needs priority_queue_tiers"):
        run(_tiered(log, priority_queue_tiers=None))
    with pytest.raises(ConfigurationError, match="preempt_by_tier: R-LIST-0 plans after each attempt end"):
        run(_tiered(log, policy="R-LIST-0"))
    with pytest.raises(ConfigurationError, match="preempt_by_tier: on a cluster of interchangeable nodes only"):
        run(_tiered(log, platform="torus"))
