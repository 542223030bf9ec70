"""Sweeps from Python: executors give identical rows, interrupted sweeps resume, batch_run works."""

import json

import mesa
import pandas as pd
import pytest

import torus_sim
from torus_sim.core.errors import ConfigurationError
from torus_sim.experiments import sweep
from torus_sim.experiments.runner import ConfiguredTorusModel, RunConfig
from torus_sim.interfaces.cli import main

BASE = {"max_jobs": 200, "failures": "synthetic:25", "scheduler": "balancing"}
GRID = {"confidence": [0.0, 0.5, 0.9]}
SEEDS = (0, 1)


@pytest.fixture(scope="module")
def serial_rows():
    return sweep(BASE, GRID, SEEDS, executor="serial", progress=False)


def comparable(table: pd.DataFrame) -> pd.DataFrame:
    return table.drop(columns=["wall_time"]).reset_index(drop=True)


def test_sweep_returns_one_row_per_run_with_every_parameter_the_seed_and_every_metric(serial_rows):
    assert len(serial_rows) == 6
    assert serial_rows[["confidence", "seed"]].values.tolist() == [[0.0, 0], [0.0, 1], [0.5, 0], [0.5, 1], [0.9, 0], [0.9, 1]]
    for column in ("avg_bounded_slowdown", "omega_util", "omega_lost", "job_kills", "wall_time", "policy", "max_jobs", "key"):
        assert column in serial_rows
    assert serial_rows["key"].is_unique
    # seeds matter: the synthetic failures differ
    assert (
        serial_rows.loc[0, "job_kills"] != serial_rows.loc[1, "job_kills"]
        or serial_rows.loc[0, "avg_bounded_slowdown"] != serial_rows.loc[1, "avg_bounded_slowdown"]
    )


def test_process_executor_gives_identical_rows(serial_rows):
    parallel = sweep(BASE, GRID, SEEDS, executor="process", workers=2, progress=False)
    pd.testing.assert_frame_equal(comparable(serial_rows), comparable(parallel))


def test_dask_local_cluster_gives_identical_rows(serial_rows):
    pytest.importorskip("dask.distributed", reason='the Dask executor is the optional extra: pip install ".[distributed]"')
    distributed = sweep(BASE, GRID, SEEDS, executor="dask", workers=2, progress=False)
    pd.testing.assert_frame_equal(comparable(serial_rows), comparable(distributed))


def test_an_interrupted_sweep_resumes_with_no_lost_and_no_duplicated_run(tmp_path, serial_rows, capsys):
    finished = []

    def stop_after_three(record):
        finished.append(record["key"])
        if len(finished) == 3:
            raise KeyboardInterrupt  # as a user's Ctrl-C after the third run is stored

    with pytest.raises(KeyboardInterrupt):
        sweep(BASE, GRID, SEEDS, results_dir=tmp_path, progress=False, on_result=stop_after_three)
    stored = sorted(path.stem for path in (tmp_path / "runs").glob("*.json"))
    assert stored == sorted(finished) and len(stored) == 3
    assert not list((tmp_path / "runs").glob(".*.tmp"))  # no half-written result
    resumed = []
    capsys.readouterr()
    table = sweep(BASE, GRID, SEEDS, results_dir=tmp_path, progress=True, on_result=lambda r: resumed.append(r["key"]))
    assert len(resumed) == 3 and not set(resumed) & set(finished)
    # no terminal here: a plain line per finished run (issue 44 section 6), naming what varies
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "3 of 6 runs found stored; running the other 3"
    assert [line.split(" done")[0] for line in lines[1:]] == ["[4/6]", "[5/6]", "[6/6]"]
    assert lines[-1].endswith(": confidence=0.9 seed=1") and " s: " in lines[-1]
    assert len(table) == 6 and table["key"].is_unique
    # a run stored by other code (an older version, an edited checkout) is run again, with a sentence
    path = tmp_path / "runs" / f"{finished[0]}.json"
    record = json.loads(path.read_text())
    record["code"], record["row"]["avg_wait_time"] = "0000000000000000", -1.0
    path.write_text(json.dumps(record))
    again = []
    table = sweep(BASE, GRID, SEEDS, results_dir=tmp_path, progress=False, on_result=lambda r: again.append(r["key"]))
    assert again == [finished[0]] and (table["avg_wait_time"] >= 0).all()
    assert "1 stored run(s) in" in capsys.readouterr().err
    pd.testing.assert_frame_equal(comparable(table), comparable(serial_rows))
    manifest = json.loads((tmp_path / "runs" / f"{table.loc[0, 'key']}.json").read_text())["manifest"]
    assert manifest["config"]["seed"] == 0 and manifest["torus_sim_version"] == torus_sim.__version__
    assert manifest["inputs"]["workload"]["sha256"] == "5589ae9b2fb78e3bf92de097497cf33a91607de1ad54563e43533f7827597f29"


def test_top_level_run_and_sweep_work_from_python():
    result = torus_sim.run(torus_sim.RunConfig(max_jobs=100, failures="none"))
    assert result.summary["jobs"] == 100 and result.summary["job_kills"] == 0
    table = torus_sim.sweep({"max_jobs": 100}, {"load_scale": [1.0, 1.5]}, progress=False)
    assert table["load_scale"].tolist() == [1.0, 1.5]


def test_bad_sweeps_are_refused():
    with pytest.raises(ConfigurationError, match="unknown executor"):
        sweep(BASE, GRID, executor="slurm", progress=False)
    with pytest.raises(ConfigurationError, match="unknown key 'confidance'"):
        sweep(BASE, {"confidance": [0.1]}, progress=False)
    with pytest.raises(ConfigurationError, match=r"\[predictors\] confidence: Input should be less than or equal to 1"):
        sweep(BASE, {"confidence": [1.5]}, progress=False)


def test_mesa_batch_run_over_the_one_model_returns_a_row_per_step_ending_at_the_finished_run():
    rows = pd.DataFrame(
        mesa.batch_run(
            ConfiguredTorusModel,
            {"max_jobs": 300, "failures": "synthetic:20", "seed": [0, 1], "step_seconds": 86400.0},
            iterations=1,
            max_steps=10_000,
            number_processes=1,
            data_collection_period=1,
            display_progress=False,
        )
    )
    for seed in (0, 1):
        mine = rows[rows["seed"] == seed]
        assert mine["Step"].tolist() == list(range(len(mine)))
        assert mine["time"].is_monotonic_increasing and mine["completed_jobs"].is_monotonic_increasing
        final = mine.iloc[-1]
        expected = torus_sim.run(RunConfig(max_jobs=300, failures="synthetic:20", seed=seed)).summary
        assert final["completed_jobs"] == 300 and final["queued_jobs"] == 0
        assert (
            final["job_kills"] == expected["job_kills"]
            and final["failures_so_far"] == expected["failures"]
            and final["failures"] == "synthetic:20"
        )
        assert final["time"] == pytest.approx(expected["makespan"])  # the trace starts at t = 0


def test_sweep_and_figure_commands_resume_and_redraw(tmp_path, capsys):
    scenario = tmp_path / "tiny.toml"
    scenario.write_text(
        'seeds = [0, 1]\n[workload]\nmax_jobs = 120\n[policy]\npolicy = "balancing"\n[grid]\nfailures = [0, 20]\n'
        '[[figure]]\nname = "tiny_bsld"\nx = "failures"\nseries = "seed"\ny = ["avg_bounded_slowdown"]\n'
    )
    out = tmp_path / "out"
    assert main(["sweep", str(scenario), "--out", str(out), "--no-progress"]) == 0
    assert len(pd.read_csv(out / "results.csv")) == 4 and len(list((out / "runs").glob("*.json"))) == 4
    (out / "tiny_bsld.png").unlink()
    assert main(["figure", "tiny_bsld", "--experiments", str(tmp_path), "--results", str(out), "--out", str(out)]) == 0
    assert (out / "tiny_bsld.png").exists()
    assert main(["figure", "no_such_figure", "--experiments", str(tmp_path)]) == 2
    assert "defines a figure named 'no_such_figure'" in capsys.readouterr().err


def test_dask_executor_reaches_a_running_cluster_by_its_scheduler_address(serial_rows):
    distributed = pytest.importorskip(
        "dask.distributed", reason='the Dask executor is the optional extra: pip install ".[distributed]"'
    )
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        table = sweep(
            BASE, {"confidence": [0.5]}, (1,), executor="dask", scheduler_address=cluster.scheduler_address, progress=False
        )
    expected = serial_rows[(serial_rows["confidence"] == 0.5) & (serial_rows["seed"] == 1)]
    pd.testing.assert_frame_equal(comparable(table), comparable(expected))


def test_a_scenario_file_names_its_output_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.toml").write_text('output = "my-results"\n[workload]\nmax_jobs = 60\n[grid]\nseed = [0]\n')
    assert main(["sweep", "s.toml", "--no-progress"]) == 0
    assert (tmp_path / "my-results" / "results.csv").exists()


def test_mesa_batch_run_runs_the_one_model_on_every_platform_and_workload():
    parameters = {
        "platform": "cluster",
        "workload": ["bundled", "rigid"],
        "nodes": 128,
        "jobs": 20,
        "max_jobs": 120,
        "mean_failure_probability": None,
        "policy": "R-LIST-0",
        "seed": [0],
        "step_seconds": 86400.0,
    }
    rows = pd.DataFrame(
        mesa.batch_run(
            ConfiguredTorusModel, parameters, iterations=1, max_steps=10_000, number_processes=1, display_progress=False
        )
    )
    for workload, group in rows.groupby("workload"):
        final = group.sort_values("Step").iloc[-1]
        assert final["completed_jobs"] == (120 if workload == "bundled" else 20) and final["queued_jobs"] == 0
    moldable = pd.DataFrame(
        mesa.batch_run(
            ConfiguredTorusModel,
            {
                "platform": "cluster",
                "nodes": 64,
                "workload": "moldable:amdahl",
                "jobs": 10,
                "error_rate": 1e-6,
                "scenarios": 3,
                "scenario_index": [0, 2],
                "policy": "BATCH",
                "step_seconds": 86400.0,
            },
            iterations=1,
            max_steps=10_000,
            number_processes=1,
            display_progress=False,
        )
    )
    assert set(moldable.groupby("scenario_index").completed_jobs.max()) == {10}


def test_a_finished_run_frees_its_models_so_a_serial_sweep_does_not_grow():
    # Mesa 3.3.1 holds every model as a key of Agent._ids (mesa#3179); a serial sweep of BATCH runs grew
    # by ~80 MB a run until the engine dropped that key.
    import gc
    import weakref

    from torus_sim.engine.model import SchedulingModel

    gc.collect()
    before = {id(o) for o in gc.get_objects() if isinstance(o, SchedulingModel)}
    result = torus_sim.run(
        torus_sim.Scenario(
            platform="cluster", nodes=50, workload="moldable:amdahl", jobs=20, error_rate=1e-7, scenarios=3, policy="BATCH"
        )
    )
    assert result.summary["scenarios"] == 3
    gc.collect()
    alive = [o for o in gc.get_objects() if isinstance(o, SchedulingModel) and id(o) not in before]
    assert len(alive) <= 1  # the result's record may keep the first scenario's model; the others are gone
    model = torus_sim.experiments.runner.build_model(torus_sim.Scenario(max_jobs=20, failures="none"))
    watch = weakref.ref(model)
    model.run()
    assert model not in mesa.Agent._ids
    del model
    gc.collect()
    assert watch() is None


def test_results_csv_puts_what_varies_and_the_metrics_before_what_every_run_shares(tmp_path, capsys):
    """Issue 44 section 7: 70 shared scenario columns buried the metrics; bundled failures showed only their count."""
    scenario = tmp_path / "probe.toml"
    scenario.write_text('title = "probe"\nseeds = [0, 1]\n[workload]\nmax_jobs = 120\n[grid]\npolicy = ["FCFS-EASY", "krevat"]\n')
    assert main(["sweep", str(scenario), "--out", str(tmp_path / "out")]) == 0
    assert "[4/4] done in " in capsys.readouterr().err  # no terminal here: a line per finished run
    table = pd.read_csv(tmp_path / "out" / "results.csv")
    assert list(table.columns[:5]) == ["policy", "seed", "failures_given", "failures", "avg_wait_time"]
    assert set(table["failures_given"]) == {"bundled"} and (table["failures"] > 0).all()  # the source, and the count met
    assert table.columns.get_loc("wall_time") < table.columns.get_loc("max_jobs")  # shared fields come last


def test_check_inputs_reads_an_input_again_when_any_field_its_reader_declares_differs(monkeypatch):
    """Issue 76: the preflight's keys come from the fields each reader declares (``from_scenario``), not a hand-made
    list: two runs that differ only in Mira's reader settings (left out of the old list) read the log twice, and
    every field a failure source or a workload source declares changes its key."""
    from failure_logs.sources import failure_source
    from torus_sim.experiments.sweep import check_inputs, input_key
    from torus_sim.inputs.workload.sources import workload_source

    loads = []
    original = type(failure_source("logaider:Mira")).load

    def counted(self, context):
        loads.append(context.settings.as_dict())
        return original(self, context)

    monkeypatch.setattr(type(failure_source("logaider:Mira")), "load", counted)
    base = {"machine": "mira", "failures": "logaider:Mira", "max_jobs": 20}
    configs = [torus_sim.Scenario(**base), torus_sim.Scenario(**base, mira_io_drawers=False), torus_sim.Scenario(**base)]
    check_inputs(configs)
    assert loads == [
        {"mira_io_drawers": True, "mira_maintenance": True},
        {"mira_io_drawers": False, "mira_maintenance": True},
    ]
    defaults = torus_sim.Scenario()
    changed = {
        "mira_io_drawers": False,
        "mira_maintenance": False,
        "lanl_system": 7,
        "fta_system": 3,
        "fta_platform": "x",
        "fta_nodes": 64,
        "synthetic_model": "weibull",
        "node_mtbf": 1e6,
        "max_jobs": 5,
        "load_scale": 1.5,
        "offered_load": 0.5,
        "swf_rules": "pv-easy",
        "cancelled": "skip",
        "failed": "skip",
        "kill_at_walltime": True,
        "nodes": 64,
    }
    for spec in ("logaider:Mira", "cfdr:LANL", "synthetic:10"):
        source = failure_source(spec)
        for name in source.from_scenario:
            before = input_key(spec, None, defaults.fields_for(source, "failures"))
            after = input_key(spec, None, defaults.model_copy(update={name: changed[name]}).fields_for(source, "failures"))
            assert before != after, name
    source = workload_source(defaults.workload, None)
    for name in source.from_scenario:
        before = input_key("w", defaults.fields_for(source, "workload"))
        after = input_key("w", defaults.model_copy(update={name: changed[name]}).fields_for(source, "workload"))
        assert before != after, name


def test_changing_any_scenario_field_changes_the_run_key_but_the_documented_few():
    """A sweep's cached result is found by run_key (issue 76 §3): made from every declared field, so two scenarios
    that differ in any field (a reader's setting, a platform's, a policy's) are two runs. The exceptions are
    documented in run_key: how a run is executed (plan_timeout) and, for an online run, the batch-only job set and
    scenario count. Each field gets a value of its type (set without validation: the key reads values, not rules)."""
    import typing
    import warnings

    from torus_sim.experiments.scenario import Scenario
    from torus_sim.experiments.sweep import run_key

    base = Scenario()
    key = run_key(base)
    params = {"workload_params": ("lublin", {"jobs": 10})}  # a table its source must accept: a generator's
    same = []
    for name, field in Scenario.model_fields.items():
        value = getattr(base, name)
        if name in params:
            workload, table = params[name]
            before = base.model_copy(update={"workload": workload})
            changed, key_before = before.model_copy(update={name: table}), run_key(before)
        else:
            if isinstance(value, bool):
                new = not value
            elif isinstance(value, int | float):
                new = value * 2 + 1
            elif isinstance(value, str):
                new = value + "x"
            elif isinstance(value, dict):
                new = {**value, "x": 1}
            elif isinstance(value, tuple | list):
                new = [*value, 1]
            else:  # None: a value of the first type the field takes
                kinds = typing.get_args(field.annotation) or (field.annotation,)
                new = 7 if int in kinds else 7.5 if float in kinds else "x"
            changed, key_before = base.model_copy(update={name: new}), key
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # pydantic's serializer notes a value of another type than declared
            if run_key(changed) == key_before:
                same.append(name)
    assert len(Scenario.model_fields) > 80
    assert sorted(same) == ["job_set", "plan_timeout", "scenarios"], same


def test_no_two_sections_of_the_scenario_share_the_name_of_a_check():
    """The scenario mixes its parts' sections (issue 76 §3): a validator or serializer of one section named as another
    section's would shadow it in the mixed model (the second never runs). Every section's checks keep their own."""
    from collections import Counter

    from torus_sim.experiments.scenario import SECTION_MODELS, Scenario

    names = Counter()
    for section in SECTION_MODELS:
        decorators = section.__pydantic_decorators__
        for kind in (
            "validators",
            "field_validators",
            "root_validators",
            "field_serializers",
            "model_serializers",
            "model_validators",
        ):
            names.update(list(getattr(decorators, kind)))
    assert [name for name, count in names.items() if count > 1] == []
    mixed = Scenario.__pydantic_decorators__
    assert sum(len(getattr(mixed, kind)) for kind in ("field_validators", "field_serializers", "model_validators")) >= sum(
        names.values()
    )
