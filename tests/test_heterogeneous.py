"""A heterogeneous cluster (issue 76 §6): node types with cores, memory and GPUs; a job on the first type that holds its
processors and its memory (SWF field 10), on whole nodes; every cluster policy runs on it; its module touches no
engine or policy file (a registry entry)."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from torus_sim.core.errors import ConfigurationError
from torus_sim.core.job import Job
from torus_sim.experiments.runner import run
from torus_sim.experiments.scenario import Scenario
from torus_sim.machine.platforms.heterogeneous import NodeType, node_router, parse_node_types, resource_gpus
from torus_sim.machine.platforms.kinds import PLATFORMS
from torus_sim.policies.catalog import ONLINE_POLICIES

CLUSTER_POLICIES = [name for name in ONLINE_POLICIES if name not in ("krevat", "balancing", "tiebreak")]
ROOT = Path(__file__).resolve().parents[1]


def test_node_types_are_read_with_their_units_and_a_bad_one_is_named():
    assert parse_node_types("thin:224:8:16, gpu:8:8:64:4") == (
        NodeType("thin", 224, 8, 16.0, 0),
        NodeType("gpu", 8, 8, 64.0, 4),
    )
    for bad in ("thin:224:8", "thin:0:8:16", "thin:2:8:-1", ":2:8:16", "thin:2:8:16:x"):
        with pytest.raises(ConfigurationError, match="is not NAME:NODES:CORES:MEMORY_GIB"):
            parse_node_types(bad)
    with pytest.raises(ConfigurationError, match="its own name"):
        parse_node_types("a:1:1:1,a:2:2:2")


def test_a_job_takes_whole_nodes_of_the_first_type_that_holds_its_processors_memory_and_gpus():
    types = parse_node_types("thin:4:8:16,fat:2:8:128,gpu:2:8:64:2")
    kib = 2**20  # KB per GiB
    # job id -> (requested memory in KB per processor, GPUs)
    demands = {1: (1 * kib, 0), 2: (4 * kib, 0), 3: (64 * kib, 0), 4: (-1, 3), 5: (200 * kib, 0)}
    ids = list(demands)
    route = node_router(types, ids, [memory for memory, _ in demands.values()], [gpus for _, gpus in demands.values()])

    def job(job_id, processors):
        return Job(job_id, 0.0, runtime=1.0, walltime=1.0, size=processors)

    assert route(job(1, 12)) == (0, 16)  # 12 processors, 12 GiB: 2 thin nodes (16 processors)
    assert route(job(2, 8)) == (0, 16)  # 8 processors, 32 GiB: 2 thin nodes for the memory
    assert route(job(3, 4)) == (1, 16)  # 256 GiB: no thin type holds it (4 x 16 GiB), 2 fat nodes do
    assert route(job(4, 1)) == (2, 16)  # 3 GPUs: 2 GPU nodes; unknown memory (-1) asks none
    with pytest.raises(ConfigurationError, match="job 5 asks 8 processors, 1.6e\\+03 GiB and 0 GPUs, which no node type"):
        route(job(5, 8))


def _log(path: Path, rows) -> Path:
    """An SWF log of (submit, runtime, processors, requested memory KB per processor) rows."""
    lines = ["; MaxProcs: 48", "; MaxNodes: 6"]
    for number, (submit, runtime, processors, memory) in enumerate(rows, start=1):
        fields = [
            number,
            submit,
            0,
            runtime,
            processors,
            -1,
            -1,
            processors,
            2 * runtime,
            memory,
            1,
            1 + number % 3,
            1,
            1,
            1,
            -1,
            -1,
            -1,
        ]
        lines.append(" ".join(str(value) for value in fields))
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("policy", CLUSTER_POLICIES)
def test_every_cluster_policy_runs_on_node_types_from_a_log_with_memory(tmp_path, policy):
    rng = np.random.default_rng(7)
    kib = 2**20
    rows = [
        (int(at), int(rng.integers(60, 4000)), int(rng.integers(1, 17)), int(rng.choice([-1, kib // 2, 2 * kib, 6 * kib])))
        for at in np.cumsum(rng.integers(0, 400, size=80))
    ]
    log = _log(tmp_path / "memory.swf", rows)
    scenario = Scenario.make(
        platform="heterogeneous", node_types="thin:4:8:16,fat:2:8:64", workload=str(log), policy=policy, failures="none"
    )
    result = run(scenario)
    thin, fat = parse_node_types(scenario.node_types)
    assert len(result.jobs) == len(rows)
    assert 0 < result.summary["omega_util"] <= 1 and result.summary["omega_lost"] >= -1e-9
    attempts = result.record.attempts
    assert set(attempts["job_id"]) == set(range(1, len(rows) + 1))
    routed = result.jobs.set_index("job_id")["partition"]  # jobs.csv's column, declared once (core/job_columns.py)
    for job_id, (_, _, processors, memory) in enumerate(rows, start=1):
        total = processors * max(memory, 0) / kib
        assert routed[job_id] == (0 if thin.nodes_for(processors, total, 0) <= thin.nodes else 1)
    for attempt in attempts.itertuples():  # PV-EASY's preempted jobs start again: every attempt is checked
        _, _, processors, memory = rows[attempt.job_id - 1]
        total = processors * max(memory, 0) / kib
        first = next(kind for kind in (thin, fat) if kind.nodes_for(processors, total, 0) <= kind.nodes)
        held = []
        for piece in attempt.resources.split():
            low, _, high = piece.partition("-")
            held += range(int(low), int(high or low) + 1)
        offset = 0 if first is thin else thin.nodes * thin.cores
        assert len(held) == first.nodes_for(processors, total, 0) * first.cores
        assert all(offset <= slot < offset + first.nodes * first.cores for slot in held)
        whole = {slot // first.cores for slot in held}  # every node it touches, it holds whole
        assert len(whole) * first.cores == len(held)


def test_only_a_platform_of_partitions_adds_the_partition_column():
    plain = run(Scenario.make(platform="cluster", nodes=128, max_jobs=200, failures="none", policy="FCFS-EASY"))
    assert "partition" not in plain.jobs.columns


def test_node_failures_on_a_heterogeneous_cluster_are_refused_with_a_sentence(tmp_path):
    log = _log(tmp_path / "small.swf", [(0, 100, 4, -1), (10, 100, 4, -1)])
    scenario = Scenario.make(
        platform="heterogeneous", node_types="thin:4:8:16", workload=str(log), failures="mtbf", node_mtbf=10.0, policy="FCFS"
    )
    with pytest.raises(ConfigurationError, match="not modelled"):
        run(scenario)


def test_the_heterogeneous_cluster_is_a_registry_entry_whose_module_imports_no_engine_or_policy():
    assert PLATFORMS.resolve("heterogeneous")[0].__name__ == "HeterogeneousKind"
    tree = ast.parse((ROOT / "torus_sim" / "machine" / "platforms" / "heterogeneous.py").read_text())
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    assert not [name for name in imported if name.startswith(("torus_sim.engine", "torus_sim.policies", "agents"))]


def test_a_converted_pbs_log_runs_its_gpu_jobs_on_the_gpu_nodes(tmp_path):
    """A real accounting log (XDMoD's PBS test data, examples/accounting): `torus-sim convert` writes the SWF and, beside
    it, the GPUs SWF has no field for; the heterogeneous cluster reads both (memory from field 10, GPUs from the table)."""
    from torus_sim.interfaces.cli import main

    log = tmp_path / "pbs.swf"
    assert main(["convert", str(ROOT / "examples" / "accounting" / "xdmod-pbs-accounting-logs.log"), "--out", str(log)]) in (
        0,
        None,
    )
    assert resource_gpus(log, [6, 8, 9, 1]).tolist() == [1, 2, 4, 0]
    scenario = Scenario.make(
        platform="heterogeneous", node_types="cpu:8:32:128,gpu:2:48:192:4", workload=str(log), policy="FCFS-EASY", failures="none"
    )
    jobs = run(scenario).jobs.set_index("job_id")
    assert jobs["partition"].to_dict() == {1: 0, 2: 0, 3: 0, 4: 0, 5: 0, 6: 1, 7: 0, 8: 1, 9: 1}  # the three GPU jobs
    assert jobs.loc[4, "partition_size"] == 96  # 65 processors: three whole 32-core nodes
    assert jobs.loc[9, "partition_size"] == 48  # 48 processors, 181 GiB and 4 GPUs: one GPU node
    (tmp_path / "pbs.resources.csv").write_text("job_id,gpus\n6,1.5\n")
    with pytest.raises(ConfigurationError, match="gpus must be whole numbers"):
        resource_gpus(log, [6])
