"""Your own scheduler: registries, import paths, parameters, the engine's checks, and the shipped examples.

The examples package (``examples/``, installed by the README's test command) is found through its
entry points; the same classes are also selected by import path.
"""

from __future__ import annotations

import hashlib
import json
import sys
import textwrap

import numpy as np
import pytest
from torus_sim.api import POLICIES, Policy

from torus_sim.core.errors import ConfigurationError, PolicyError
from torus_sim.experiments.runner import Scenario, run
from torus_sim.interfaces.cli import main

from .conftest import SHARED_DATA

try:
    import torus_sim_examples as examples
except ImportError as error:  # the README's test command installs it
    raise ImportError("tests/test_plugins.py needs the examples package: pip install ./examples") from error

CTC = SHARED_DATA / "swf" / "CTC-SP2-1996-3.1-cln.swf.gz"
LANL = SHARED_DATA / "failures" / "lanl" / "LA-UR-05-7318-failure-data-1996-2005.csv.xz"
needs_ctc = pytest.mark.skipif(not (CTC.exists() and LANL.exists()), reason=f"needs CTC-SP2 and LANL under {SHARED_DATA}")

# the bundled real inputs: NASA iPSC/860 (SWF) and the BG/L RAS sample (real failures)
# every bundled BG/L failure inside the 1,500 jobs (reduced_failures = "count"): a hard test for a plug-in
TORUS = {"platform": "torus", "max_jobs": 1500, "failures": "bundled", "reduced_failures": "count"}
CLUSTER = {"platform": "cluster", "nodes": 128, "max_jobs": 1500, "failures": "bundled", "reduced_failures": "count"}


def record_digest(result) -> str:
    jobs = result.jobs.sort_values("job_id")
    return hashlib.sha256(jobs.to_csv(index=False).encode()).hexdigest()


@pytest.fixture
def plugin_module(tmp_path, monkeypatch):
    """Write a module of (mis)behaving policies into an importable folder."""

    def write(source: str, name: str = "my_policies") -> str:
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(source))
        monkeypatch.syspath_prepend(str(tmp_path))
        sys.modules.pop(name, None)
        return name

    return write


# -- registries --------------------------------------------------------------------------------


def test_installed_examples_appear_in_the_registries_by_entry_point_name():
    from torus_sim.api import PLACEMENTS, RUNTIME_PREDICTORS

    assert {"example-sjf-easy", "example-fcfs-easy"} <= set(POLICIES.names())
    assert "example-avoid-flagged" in PLACEMENTS.names()
    assert "example-user-median" in RUNTIME_PREDICTORS.names()
    info = POLICIES.info("example-sjf-easy")
    assert (info.origin, info.import_path, info.package) == (
        "entry point",
        "torus_sim_examples.sjf_easy:FirstFitSjfEasy",
        "torus-sim-examples",
    )
    assert len(info.source_sha256) == 64


def test_an_unknown_policy_is_a_sentence_listing_builtins_and_plugins():
    with pytest.raises(ConfigurationError, match="unknown policy 'nope'.*krevat.*installed plug-ins: .*example-sjf-easy"):
        Scenario.make(policy="nope")


@pytest.mark.parametrize("platform", [TORUS, CLUSTER], ids=["torus", "cluster"])
def test_the_plugin_fcfs_easy_reproduces_the_builtin_bit_for_bit(platform):
    builtin = run(Scenario(policy="FCFS-EASY", **platform))
    by_name = run(Scenario(policy="example-fcfs-easy", **platform))
    by_path = run(Scenario(policy="torus_sim_examples.fcfs_easy:PluginFcfsEasy", **platform))
    by_class = run(Scenario(policy=examples.PluginFcfsEasy, **platform))
    assert builtin.summary["failures"] > 0
    assert record_digest(builtin) == record_digest(by_name) == record_digest(by_path) == record_digest(by_class)


@needs_ctc
def test_the_plugin_fcfs_easy_reproduces_the_builtin_on_ctc_with_lanl_failures():
    fields = {"platform": "cluster", "nodes": 430, "workload": str(CTC), "max_jobs": 4000, "failures": str(LANL)}
    builtin = run(Scenario(policy="FCFS-EASY", **fields))
    plugin = run(Scenario(policy="example-fcfs-easy", **fields))
    assert builtin.summary["job_kills"] > 0
    assert record_digest(builtin) == record_digest(plugin)


@pytest.mark.parametrize("platform", [TORUS, CLUSTER], ids=["torus", "cluster"])
def test_each_example_runs_on_both_platforms_with_real_failures(platform):
    sjf = run(Scenario(policy="example-sjf-easy", **platform))
    fcfs = run(Scenario(policy="FCFS", **platform))
    assert sjf.summary["jobs"] == fcfs.summary["jobs"] == 1500
    assert sjf.summary["avg_wait_time"] < fcfs.summary["avg_wait_time"]  # SJF + backfilling beats plain FCFS
    assert sjf.inputs["extensions"]["policy"]["origin"] == "entry point"
    placed = run(Scenario(policy="FCFS-EASY", placement="example-avoid-flagged", predictor="history", **platform))
    assert placed.inputs["extensions"]["placement"]["import_path"] == "torus_sim_examples.avoid_flagged:AvoidFlagged"
    assert placed.inputs["predictor"] == "history"
    assert record_digest(placed) != record_digest(run(Scenario(policy="FCFS-EASY", **platform)))  # it moved jobs
    predicted = run(
        Scenario(policy="FCFS-EASY", runtime_predictor="example-user-median", runtime_predictor_params={"history": 3}, **platform)
    )
    assert predicted.inputs["extensions"]["runtime_predictor"]["origin"] == "entry point"
    assert (predicted.jobs["prediction"] <= predicted.jobs["walltime"]).all()


def test_avoid_flagged_keeps_jobs_off_flagged_nodes_on_a_cluster():
    from torus_sim.api import FailurePredictor
    from torus_sim_examples import AvoidFlagged

    class FlagsEven(FailurePredictor):
        def supernode_probabilities(self, start, window):
            probabilities = np.zeros(self.n_supernodes)
            probabilities[::2] = 1.0
            return probabilities

    predictor = FlagsEven()
    predictor.attach(None, np.random.default_rng(0), 10)
    placement = AvoidFlagged(predictor)

    class Job:
        partition_size, walltime = 4, 100.0

    assert placement.choose_nodes(np.arange(10), Job(), 0.0).tolist() == [1, 3, 5, 7]
    Job.partition_size = 7
    assert placement.choose_nodes(np.arange(10), Job(), 0.0).tolist() == [0, 1, 2, 3, 5, 7, 9]


# -- parameters ---------------------------------------------------------------------------------


def test_policy_parameters_are_checked_against_the_constructor():
    plain = run(Scenario(policy="example-sjf-easy", policy_params={"backfill": False}, max_jobs=300, failures="none"))
    assert plain.summary["jobs"] == 300
    with pytest.raises(ConfigurationError, match="policy 'example-sjf-easy' has no parameter 'backfil' .*backfill"):
        Scenario.make(policy="example-sjf-easy", policy_params={"backfil": False})
    with pytest.raises(ConfigurationError, match="parameter 'backfill' = 'maybe'"):
        Scenario.make(policy="example-sjf-easy", policy_params={"backfill": "maybe"})
    with pytest.raises(ConfigurationError, match="runtime predictor 'example-user-median'.*'history' = 'x'"):
        Scenario.make(runtime_predictor="example-user-median", runtime_predictor_params={"history": "x"})
    with pytest.raises(ConfigurationError, match="could not be built: ValueError: history must be >= 1"):
        run(
            Scenario(policy="FCFS", runtime_predictor="example-user-median", runtime_predictor_params={"history": 0}, max_jobs=10)
        )


def test_policy_params_come_from_the_toml_table_and_the_command_line(tmp_path, capsys):
    scenario = tmp_path / "sjf.toml"
    scenario.write_text(
        '[workload]\nmax_jobs = 200\n[failures]\nfailures = "none"\n[policy]\npolicy = "example-sjf-easy"\n[policy.params]\nbackfill = false\n'
    )
    assert main(["run", str(scenario), "--out", str(tmp_path / "a"), "--no-progress"]) == 0
    header = capsys.readouterr().out
    assert "example-sjf-easy (plug-in torus-sim-examples 0.1.0, torus_sim_examples.sjf_easy:FirstFitSjfEasy" in header
    manifest = json.loads((tmp_path / "a" / "summary.json").read_text())
    assert manifest["config"]["policy_params"] == {"backfill": False}
    assert manifest["inputs"]["extensions"]["policy"]["version"] == "0.1.0"
    assert main(["run", str(scenario), "--policy-param", "backfill=true", "--out", str(tmp_path / "b"), "--no-progress"]) == 0
    assert json.loads((tmp_path / "b" / "summary.json").read_text())["config"]["policy_params"] == {"backfill": True}
    assert main(["run", str(scenario), "--policy-param", "bakfill=true", "--out", str(tmp_path / "c")]) == 2
    assert "has no parameter 'bakfill'" in capsys.readouterr().err
    assert not (tmp_path / "c").exists()


# -- bad plug-ins: one sentence, exit 2, nothing written -----------------------------------------

BAD_POLICIES = """
from torus_sim.api import Policy, Preempt, Repack, Reserve, Start

class Raises(Policy):
    def plan(self, view):
        raise ZeroDivisionError("oops")

class StartsRunning(Policy):
    def plan(self, view):
        for job in view.running.values():
            yield Start(job, job.allocation)
        for job in view.queue.jobs()[:1]:
            allocation = view.place(job)
            if allocation is not None:
                yield Start(job, allocation)

class WrongSize(Policy):
    def plan(self, view):
        if not view.queue:
            return
        need = view.queue.head.partition_size
        if view.platform.kind == "cluster":
            yield Start(view.queue.head, list(range(need + 1)))
        else:  # a free partition of another size
            members = view.platform.table.members
            yield Start(view.queue.head, next(i for i in range(len(members)) if len(members[i]) != need))

class BusyNodes(Policy):
    def plan(self, view):
        if view.queue and view.running:
            head = view.queue.head
            need = head.partition_size
            platform = view.platform
            if platform.kind == "cluster":
                busy = next(iter(view.running.values())).allocation
                nodes = [*busy.tolist(), *platform.free_nodes().tolist()][:need]
                yield Start(head, nodes)
                return
            taken = [i for i in range(len(platform.table.members))
                     if len(platform.table.members[i]) == need and platform.allocation_refusal(i, need)]
            if taken:
                yield Start(head, taken[0])
                return
        yield from StartsRunning().plan(view)

class PreemptsWaiting(Policy):
    def plan(self, view):
        if view.queue:
            yield Preempt(view.queue.head)

class RepacksWaiting(Policy):
    def plan(self, view):
        if view.queue:
            yield Repack(((view.queue.head, 0),))

class ReservesThePast(Policy):
    def plan(self, view):
        from torus_sim.api import start_in_order

        yield from start_in_order(view)
        if view.queue:
            yield Reserve(view.queue.head, view.now - 100.0)

class NotAnAction(Policy):
    def plan(self, view):
        yield ("start", 1)

class Loops(Policy):
    def plan(self, view):
        while view.queue:
            yield Reserve(view.queue.head, view.now)

class Idles(Policy):
    def plan(self, view):
        return []

class Refuses(Policy):
    platforms = ("cluster",)
    def plan(self, view):
        return []

class NotAPolicy:
    def plan(self, view):
        return []

class BadInit(Policy):
    def __init__(self, threshold: float):
        raise RuntimeError("cannot start")
    def plan(self, view):
        return []
"""


@pytest.mark.parametrize(
    "name, expected",
    [
        ("Raises", r"policy 'Raises' at t = [\d,.]+ s: plan raised ZeroDivisionError: oops \(at .*my_policies.py:\d+\)"),
        ("StartsRunning", r"job \d+: Start of job \d+, which is not waiting \(it is running\)"),
        (
            "WrongSize",
            r"job \d+: (allocation of \d+ nodes, the job occupies \d+|partition .* has \d+ supernodes, the job occupies \d+)",
        ),
        ("BusyNodes", r"job \d+: (nodes \[.*\] are busy|partition .* is not free)"),
        ("PreemptsWaiting", r"Preempt of .*, which is not running"),
        ("RepacksWaiting", r"Repack moves .*, which is not running"),
        ("ReservesThePast", r"Reserve at [\d.]+ s, before now"),
        ("NotAnAction", r"returned \('start', 1\), which is not an action"),
        ("Loops", r"returned more than \d+ actions in one pass"),
        ("Idles", r"nothing runs and the first waiting job fits .* yet the pass started nothing"),
    ],
)
@pytest.mark.parametrize("platform", ["torus", "cluster"])
def test_a_misbehaving_policy_ends_the_run_with_one_sentence_and_exit_2(
    plugin_module, tmp_path, capsys, name, expected, platform
):
    module = plugin_module(BAD_POLICIES)
    out = tmp_path / "out"
    nodes = ["--nodes", "128"] if platform == "cluster" else []
    arguments = [
        "--platform",
        platform,
        *nodes,
        "--failures",
        "bundled",
        "--reduced-failures",
        "count",
        "--policy",
        f"{module}:{name}",
        "--max-jobs",
        "200",
    ]
    code = main(["run", *arguments, "--out", str(out), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith(f"torus-sim: error: policy '{name}' at t = ") and err.count("\n") == 1, err
    assert __import__("re").search(expected, err), err
    assert "Traceback" not in err
    assert not out.exists()


@pytest.mark.parametrize(
    "spec, expected",
    [
        (
            "no_such_module:Policy",
            "cannot import policy 'no_such_module:Policy': importing 'no_such_module' failed: ModuleNotFoundError",
        ),
        ("{module}:Missing", "cannot import policy '{module}:Missing': '{module}' has no attribute 'Missing'"),
        ("{module}:NotAPolicy", "is not a Policy: {module}:NotAPolicy must subclass torus_sim.policies.base.Policy"),
        ("{module}:Refuses", "Refuses runs on cluster platforms, not on a torus"),
        ("{module}:BadInit", "policy '{module}:BadInit' needs parameter 'threshold'"),
    ],
)
def test_a_plugin_that_cannot_load_or_refuses_the_platform_is_a_sentence(plugin_module, tmp_path, capsys, spec, expected):
    module = plugin_module(BAD_POLICIES)
    out = tmp_path / "out"
    assert main(["run", "--policy", spec.format(module=module), "--max-jobs", "50", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert expected.format(module=module) in err and err.count("\n") == 1 and "Traceback" not in err, err
    assert not out.exists()
    assert (
        main(["run", "--policy", f"{module}:BadInit", "--policy-param", "threshold=0.5", "--max-jobs", "5", "--out", str(out)])
        == 2
    )
    assert "could not be built: RuntimeError: cannot start" in capsys.readouterr().err


def test_a_refused_action_changes_nothing(plugin_module):
    """The engine checks before it applies: the rejected Start left the queue, the platform and the job as they were."""
    from torus_sim.experiments.runner import build_model

    module = plugin_module(BAD_POLICIES)
    model = build_model(Scenario(platform="cluster", nodes=128, policy=f"{module}:BusyNodes", max_jobs=200, failures="bundled"))
    with pytest.raises(PolicyError) as caught:
        model.run()
    job = model.run_jobs.live[caught.value.job]
    assert job.state.value == "queued" and job in model.queue
    held = sum(len(running.allocation) for running in model.running_jobs.values())
    assert model.platform.free_count() == 128 - held
    assert int(np.count_nonzero(model.platform.job_at >= 0)) == held


def test_policy_instances_and_factories_from_python():
    class Counting(Policy):
        name = "counting FCFS"

        def __init__(self, limit: int = 10**9) -> None:
            self.passes = 0
            self.limit = limit

        def plan(self, view):
            self.passes += 1
            from torus_sim.api import start_in_order

            return start_in_order(view)

    instance = Counting()
    result = run(Scenario(policy=instance, max_jobs=100, failures="none"))
    assert instance.passes > 0 and result.inputs["policy"] == "counting FCFS"
    assert result.inputs["extensions"]["policy"]["origin"] == "python object"
    assert result.manifest()["config"]["policy"].endswith(":test_policy_instances_and_factories_from_python.<locals>.Counting")
    built = run(Scenario(policy=Counting, policy_params={"limit": "7"}, max_jobs=100, failures="none"))
    assert record_digest(built) == record_digest(run(Scenario(policy="FCFS", max_jobs=100, failures="none")))
    with pytest.raises(ConfigurationError, match="was given as an instance: it takes no parameters"):
        Scenario.make(policy=instance, policy_params={"limit": 3})


@pytest.mark.parametrize(
    "platform",
    [TORUS, CLUSTER, {**CLUSTER, "failures": "none"}],
    ids=["torus", "cluster-with-node-ids", "cluster-counts"],
)
def test_start_in_order_collected_as_a_list_gives_the_same_starts_as_fcfs(platform):
    """Issue 64: a plan that returns ``[Reserve(...)] + list(start_in_order(view))`` looped on the same head until the
    pass watchdog stopped it; the helper now places each next job around the starts it has handed out."""

    class Collects(Policy):
        name = "collects"

        def plan(self, view):
            from torus_sim.api import start_in_order

            starts = list(start_in_order(view))
            assert len({start.job.job_id for start in starts}) == len(starts)  # never the same head twice
            return starts

    fields = {**platform, "max_jobs": 400, "plan_timeout": 20}
    collected = run(Scenario(policy=Collects, **fields))
    assert record_digest(collected) == record_digest(run(Scenario(policy="FCFS", **fields)))


# -- everywhere a built-in runs -------------------------------------------------------------------


@pytest.mark.parametrize("executor", ["process", "dask"])
def test_plugins_run_in_process_and_dask_sweeps(tmp_path, executor):
    pytest.importorskip("dask.distributed") if executor == "dask" else None
    from torus_sim.experiments import load_experiment, run_experiment

    file = tmp_path / "plugins.toml"
    file.write_text(
        textwrap.dedent(
            """
            title = "plug-ins in a sweep"
            [workload]
            max_jobs = 150
            [failures]
            failures = "bundled"
            [grid]
            platform = ["torus", "cluster"]
            policy = ["example-sjf-easy", "torus_sim_examples.fcfs_easy:PluginFcfsEasy", "FCFS-EASY"]
            """
        )
    )
    experiment = load_experiment(file)
    table = run_experiment(experiment, executor, 2, tmp_path / "out", progress=False)
    assert len(table) == 6 and (table["jobs"] == 150).all()
    builtin = table[table["policy"] == "FCFS-EASY"].set_index("platform")["avg_bounded_slowdown"]
    plugin = table[table["policy"] == "torus_sim_examples.fcfs_easy:PluginFcfsEasy"].set_index("platform")["avg_bounded_slowdown"]
    assert builtin.to_dict() == plugin.to_dict()
    manifests = [json.loads(path.read_text()) for path in (tmp_path / "out" / "runs").glob("*.json")]
    origins = {m["manifest"]["inputs"]["extensions"]["policy"]["origin"] for m in manifests}
    assert origins == {"built-in", "entry point", "import path"}


def test_plugins_run_in_mesa_batch_run():
    import mesa

    from torus_sim.experiments.runner import ConfiguredModel

    rows = mesa.batch_run(
        ConfiguredModel,
        parameters={
            "policy": ["example-sjf-easy", "FCFS"],
            "max_jobs": 60,
            "failures": "bundled",
            "seed": [0],
            "step_seconds": 86400.0,
        },
        iterations=1,
        max_steps=400,
        number_processes=1,
        display_progress=False,
    )
    finished = {row["policy"]: row for row in rows if row["Step"] == max(r["Step"] for r in rows if r["policy"] == row["policy"])}
    assert set(finished) == {"example-sjf-easy", "FCFS"}


def test_the_readme_plugin_runs_as_written_in_any_directory(tmp_path):
    """The "Your own scheduler" page's block (the README's before), run by bash in an empty folder with the installed command."""
    import re
    import shutil
    import subprocess
    from pathlib import Path

    if shutil.which("torus-sim") is None:
        pytest.skip("the torus-sim command is not on PATH (install the package)")
    readme = (Path(__file__).parents[1] / "docs" / "guide" / "own-scheduler.md").read_text()
    block = re.search(r"```bash\n(cat > my_sjf.py <<'PY'\n.*?)```", readme, re.S).group(1)
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", block], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "ShortestFirst (plug-in my_sjf:ShortestFirst" in done.stdout
    for folder in ("my-sjf", "my-sjf-cluster"):
        manifest = json.loads((tmp_path / "runs" / folder / "summary.json").read_text())
        assert manifest["inputs"]["extensions"]["policy"]["origin"] == "import path"


def test_the_browser_menu_lists_installed_plugins():
    from torus_sim.interfaces.viz.app import model_params

    assert "example-sjf-easy" in model_params["policy"]["values"]
    assert "example-fcfs-easy" in model_params["policy"]["values"]


# -- issue 42: every input kind is a registry; a user's failure source and workload generator run everywhere ----------


def test_the_examples_failure_source_and_workload_generator_are_found_by_entry_point():
    from failure_logs.sources import FAILURE_SOURCES
    from torus_sim.inputs.workload.sources import WORKLOADS

    assert "example-weibull" in FAILURE_SOURCES.names() and "example-lublin" in WORKLOADS.names()
    assert FAILURE_SOURCES.info("example-weibull").import_path == "torus_sim_examples.weibull_failures:WeibullPerNode"


def test_a_user_failure_source_and_workload_generator_run_from_the_command_line(tmp_path, capsys):
    out = tmp_path / "out"
    arguments = ["--platform", "cluster", "--nodes", "128", "--policy", "FCFS-EASY", "--workload", "example-lublin"]
    arguments += ["--workload-param", "jobs=600", "--failures", "example-weibull", "--failures-param", "mtbf_days=30"]
    assert main(["run", *arguments, "--out", str(out)]) == 0
    header = capsys.readouterr().out
    assert "example-lublin(jobs=600,nodes=128,load=0.7,seed=0)" in header and "WeibullRenewal(shape=0.7" in header
    manifest = json.loads((out / "summary.json").read_text())
    assert manifest["inputs"]["workload"]["entry"]["origin"] == "entry point"
    assert manifest["inputs"]["failures"]["entry"]["import_path"] == "torus_sim_examples.weibull_failures:WeibullPerNode"
    assert manifest["summary"]["jobs"] == 600 and manifest["inputs"]["failures"]["count"] > 0
    # by import path too, and the same bytes for the same seed
    again = tmp_path / "again"
    by_path = [a.replace("example-lublin", "torus_sim_examples.lublin:LublinFeitelson") for a in arguments]
    by_path = [a.replace("example-weibull", "torus_sim_examples.weibull_failures:WeibullPerNode") for a in by_path]
    assert main(["run", *by_path, "--out", str(again)]) == 0
    assert (again / "jobs.csv").read_bytes() == (out / "jobs.csv").read_bytes()


def test_a_user_source_refuses_bad_parameters_before_anything_runs(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["run", "--failures", "example-weibull", "--failures-param", "scale=3", "--out", str(out)]) == 2
    assert (
        "failure source 'example-weibull' has no parameter 'scale' (its parameters: shape, mtbf_days)" in capsys.readouterr().err
    )
    assert main(["run", "--workload", "example-lublin", "--workload-param", "jobs=-1", "--out", str(out)]) == 2
    assert "could not be built: ValueError: jobs and nodes >= 1" in capsys.readouterr().err and not out.exists()


def test_a_user_failure_source_and_workload_generator_run_in_a_sweep(tmp_path):
    from torus_sim.experiments import load_experiment, run_experiment

    path = tmp_path / "sweep.toml"
    path.write_text(
        'title = "user inputs"\nseeds = [0, 1]\n[platform]\nplatform = "cluster"\nnodes = 128\n'
        '[workload]\nworkload = "example-lublin"\n[workload.params]\njobs = 300\n'
        '[failures]\nfailures = "example-weibull"\n[failures.params]\nmtbf_days = 20\n[grid]\npolicy = ["FCFS-EASY", "conservative"]\n'
    )
    table = run_experiment(load_experiment(path), "serial", 1, tmp_path / "out", progress=False)
    assert len(table) == 4 and set(table["jobs"]) == {300}
    assert table.groupby("seed")["job_kills"].sum().min() >= 0 and table["workload_params"].nunique() == 1


def test_a_user_failure_source_and_workload_generator_are_offered_in_the_browser():
    from torus_sim.interfaces.viz import app

    assert "example-lublin" in app.model_params["workload"]["values"]
    assert "example-weibull" in app.model_params["failures"]["values"]
    model = app.VizModel(platform="cluster", workload="example-lublin", failures="example-weibull", policy="FCFS-EASY")
    for _ in range(5):
        model.step()
    assert not model.notice and model.scenario.workload == "example-lublin" and len(model.run_jobs) == 2000


def test_a_file_no_suffix_names_is_read_by_its_content(tmp_path):
    """A failure log or a workload saved under another name is read by its first bytes, not refused."""
    from failure_logs.sources import BUNDLED_BGL_RAS, failure_source
    from torus_sim.inputs.workload.sources import BUNDLED_NASA_LOG, workload_source

    ras = tmp_path / "ras-events.txt"
    ras.write_bytes(BUNDLED_BGL_RAS.read_bytes())
    assert type(failure_source(str(ras))).__name__ == "BglRasFile"
    batsim = tmp_path / "workload.txt"
    batsim.write_text('{"nb_res": 4, "jobs": [], "profiles": {}}')
    assert type(workload_source(str(batsim))).__name__ == "BatsimFile"
    swf = tmp_path / "log.data"
    swf.write_bytes(__import__("gzip").decompress(BUNDLED_NASA_LOG.read_bytes()))
    assert type(workload_source(str(swf))).__name__ == "SwfFile"


def test_an_output_format_is_a_registry_entry(tmp_path, capsys, plugin_module):
    module = plugin_module(
        """
        from torus_sim.api import OutputFormat

        class WaitsOnly(OutputFormat):
            name = "waits"

            def files(self, result, tables):
                return {"waits.txt": "\\n".join(f"{w:g}" for w in tables["jobs"]["wait_time"]).encode()}
        """,
        name="my_formats",
    )
    out = tmp_path / "out"
    assert main(["run", "--max-jobs", "40", "--format", f"{module}:WaitsOnly", "--format", "swf", "--out", str(out)]) == 0
    assert (out / "waits.txt").read_text().count("\n") == 39 and (out / "schedule.swf").exists()
    assert main(["run", "--max-jobs", "40", "--format", "os:system", "--out", str(tmp_path / "o2")]) == 2
    assert "nothing was called" in capsys.readouterr().err and not (tmp_path / "o2").exists()


def test_a_machine_and_a_platform_kind_of_your_own_are_selected_by_import_path(tmp_path, capsys, plugin_module):
    module = plugin_module(
        """
        from torus_sim.api import PlatformKind
        from torus_sim.machine.machines import Machine
        from torus_sim.machine.platforms.kinds import ClusterKind

        TINY = Machine("tiny", "a 2x2x4 torus of midplanes", (2, 2, 4), failures="none")

        class HalfCluster(ClusterKind):
            '''A cluster that gives the run half the nodes the workload names.'''

            name = "half-cluster"
            from_scenario = ("nodes",)

            def capacity(self, fields, named):
                return max(1, super().capacity(fields, named) // 2)
        """,
        name="my_machines",
    )
    out = tmp_path / "out"
    assert main(["run", "--machine", f"{module}:TINY", "--max-jobs", "60", "--out", str(out)]) == 0
    assert "torus 2x2x4 of 16 midplanes" in capsys.readouterr().out
    assert main(["run", "--platform", f"{module}:HalfCluster", "--max-jobs", "60", "--failures", "none", "--out", str(out)]) == 0
    assert "platform  cluster of 64 nodes" in capsys.readouterr().out  # the kind's capacity: half of NASA's 128


def test_a_policy_is_attached_with_its_context_not_the_engine():
    """Issue 64: attach gets a PolicyContext (the names the plug-in guide documented) and nothing else of the engine."""
    from torus_sim.api import PolicyContext

    seen = {}

    class Looks(Policy):
        name = "looks"

        def attach(self, context):
            super().attach(context)
            seen["context"] = context
            seen["jobs"] = (len(context.jobs), context.jobs[0].rank, context.workload.kind, context.platform.capacity)
            try:
                context.queue  # noqa: B018 (the attribute access is the test)
            except AttributeError as error:
                seen["refused"] = str(error)
            try:
                context.jobs[0] = None
            except TypeError:
                seen["read_only"] = True

        def plan(self, view):
            from torus_sim.api import start_in_order

            return start_in_order(view)

    run(Scenario(policy=Looks, max_jobs=50, failures="none"))
    assert isinstance(seen["context"], PolicyContext) and seen["jobs"] == (50, 0, "online", 128)
    assert "not the engine: 'queue' is not part of it" in seen["refused"] and seen["read_only"]


def test_a_factory_gets_the_scenario_fields_it_declares_and_a_params_value_wins():
    """Issue 64: from_scenario = {parameter: field} is offered by the wiring; the Scenario itself is not."""
    from torus_sim.experiments.extensions import build_policy

    seen = {}

    def make(priority: str, backfill: bool = True) -> Policy:
        seen["args"] = (priority, backfill)
        return Policy()

    make.from_scenario = {"priority": "priority", "backfill": "backfill"}
    build_policy(Scenario(policy=make, priority="SPT", backfill=False, max_jobs=10, failures="none"))
    assert seen["args"] == ("SPT", False)
    build_policy(Scenario(policy=make, priority="SPT", policy_params={"priority": "LPT"}, max_jobs=10, failures="none"))
    assert seen["args"] == ("LPT", True)


def test_a_plugin_that_still_takes_the_whole_scenario_gets_it_with_a_warning():
    """The deprecation path: a plug-in naming ``scenario`` keeps working and is told to declare its fields."""
    from torus_sim.experiments.extensions import build_policy

    seen = {}

    class Old(Policy):
        name = "old"

        def __init__(self, scenario=None) -> None:
            seen["seed"] = scenario.seed

    with pytest.warns(FutureWarning, match="takes the whole scenario: declare the fields it reads"):
        build_policy(Scenario(policy=Old, seed=7, max_jobs=10, failures="none"))
    assert seen["seed"] == 7


def test_a_platform_kind_is_given_only_the_scenario_fields_it_declares():
    """Issue 64: TorusKind declares ("torus", "machine"), ClusterKind ("nodes",); a kind reading another field is told
    which it declared; a plug-in kind that declares none still gets the scenario, with a FutureWarning."""
    from torus_sim.experiments.scenario import ScenarioFields
    from torus_sim.machine.platforms.kinds import platform_kind

    torus = Scenario(max_jobs=10, machine="mira").platform_fields()
    assert isinstance(torus, ScenarioFields) and torus.torus.dims == (2, 3, 4, 4) and torus.machine == "mira"
    with pytest.raises(
        AttributeError, match=r"platform kind 'torus' is given no 'seed' of the scenario, only \['machine', 'torus'\]"
    ):
        torus.seed  # noqa: B018 (the attribute access is the test)
    assert platform_kind("cluster").capacity(Scenario(platform="cluster", nodes=64).platform_fields(), None) == 64

    class Undeclared:
        from_scenario = None

    scenario = Scenario(max_jobs=10)
    with pytest.warns(FutureWarning, match="declares no from_scenario"):
        assert scenario.fields_for(Undeclared(), "platform kind 'mine'") is scenario


def test_a_scenario_section_is_a_read_only_view_of_its_flat_fields():
    scenario = Scenario(platform="cluster", nodes=64, seed=5, policy="FCFS-EASY")
    platform, run_section = scenario.section("platform"), scenario.section("run")
    assert (platform.platform, platform.nodes, run_section.seed) == ("cluster", 64, 5)
    with pytest.raises(
        AttributeError,
        match=r"the \[run\] section is given no 'nodes' of the scenario, only \['event_order', 'plan_timeout', 'seed'\]",
    ):
        run_section.nodes  # noqa: B018 (the attribute access is the test)
    with pytest.raises(AttributeError, match="read-only"):
        run_section.seed = 3
    with pytest.raises(ConfigurationError, match="no scenario section 'plaform'; the sections are platform, workload"):
        scenario.section("plaform")


@pytest.mark.parametrize("policy", ["FCFS", "FCFS-EASY", "conservative"])
def test_the_example_platform_runs_a_real_log_by_name_and_by_path_with_each_job_on_its_partition(policy):
    """The examples package's platform (issue 76 §6): a plug-in kind that builds a partitioned cluster from outside."""
    by_name = run(
        Scenario(platform="example-small-jobs-partition", workload="bundled", policy=policy, failures="none", max_jobs=2000)
    )
    by_path = run(
        Scenario(
            platform="torus_sim_examples.small_jobs_partition:SmallJobsPartition",
            workload="bundled",
            policy=policy,
            failures="none",
            max_jobs=2000,
        )
    )
    assert by_name.summary["jobs"] == 2000 and by_name.jobs["finished_at"].notna().all()
    assert by_name.jobs["started_at"].tolist() == by_path.jobs["started_at"].tolist()
    assert by_name.inputs["platform"]["kind"] == "example-small-jobs-partition"
    small = 128 // 8  # NASA-iPSC: 128 large nodes and 16 small ones (ids 0-15), for jobs of at most 4
    for attempt in by_name.record.attempts.itertuples():
        first = int(attempt.resources.split()[0].split("-")[0])
        assert (first < small) == (attempt.nodes <= small // 4)
