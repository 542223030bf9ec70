import pandas as pd
import pytest

from torus_sim.core.errors import ConfigurationError
from torus_sim.experiments import FigureSpec, load_experiment, run_experiment
from torus_sim.experiments.scenario import SECTIONS
from torus_sim.interfaces.cli import main
from torus_sim.outputs.figures import draw_figure


def test_every_bundled_experiment_file_is_in_the_one_format_and_validates():
    from pathlib import Path

    files = sorted((Path(__file__).resolve().parents[1] / "experiments").glob("**/*.toml"))
    folders = {path.parent.name for path in files}
    assert {"bgl_fault", "rigid", "moldable", "pv_easy", "cross", "ckpt_migration"} <= folders
    for path in files:
        experiment = load_experiment(path)
        if path.parent.name == "sites":  # a site file is one run's scenario (torus-sim run FILE), not a sweep
            assert experiment.run_count() == 1, path
            experiment.scenario({})
            continue
        assert experiment.points() and experiment.figures, path
        for point in experiment.points()[:3] + experiment.points()[-3:]:
            experiment.scenario(point)  # every key validated


def test_every_bundled_experiment_file_names_its_data_so_that_a_clone_finds_it():
    """Issue 78 §3: an experiment file names a log by its registry name (``pwa:SDSC-SP2``, ``cfdr:LANL``: found in the
    user's cache or the mirror TORUS_SIM_DATA names) or a file inside the repository, never a path that leaves the
    clone (``../../../shared/data/...`` worked only beside this checkout)."""
    import tomllib
    from pathlib import Path

    from torus_sim.inputs.datasets import is_reference

    def values(node, key=None):  # every (key, text) of a TOML document, in tables, arrays and inline tables
        if isinstance(node, dict):
            for name, value in node.items():
                yield from values(value, name)
        elif isinstance(node, list):
            for value in node:
                yield from values(value, key)
        elif isinstance(node, str):
            yield key, node

    root = Path(__file__).resolve().parents[1]
    outside = []
    for path in sorted((root / "experiments").glob("**/*.toml")):
        for key, value in values(tomllib.loads(path.read_text())):
            if key not in ("workload", "failures") or is_reference(value) or "/" not in value:
                continue
            if not (path.parent / value.split(":", 1)[-1]).resolve().is_relative_to(root):
                outside.append(f"{path.relative_to(root)}: {key} = {value}")
    assert outside == []


def test_an_experiment_runs_its_grid_and_draws_its_figures(tmp_path):
    spec = tmp_path / "tiny.toml"
    spec.write_text(
        'title = "tiny"\n[policy]\npolicy = "balancing"\n[workload]\nmax_jobs = 150\n[grid]\nfailures = [0, 30]\nconfidence = [0.0, 0.5]\n'
        '[[figure]]\nname = "bsld"\nx = "failures"\nseries = "confidence"\ny = ["avg_bounded_slowdown"]\n'
        '[[figure]]\nname = "capacity"\nx = "failures"\ny = ["omega_util", "omega_unused", "omega_lost"]\nwhere = { confidence = 0.5 }\n'
    )
    out = tmp_path / "out"
    assert main(["experiment", str(spec), "--out", str(out)]) == 0
    table = pd.read_csv(out / "results.csv")
    assert len(table) == 4 and set(table["failures"]) == {0, 30} and set(table["confidence"]) == {0.0, 0.5}
    assert (out / "bsld.png").stat().st_size > 1000 and (out / "capacity.png").stat().st_size > 1000
    assert main(["sweep", str(spec), "--out", str(out), "--replot"]) == 0


def test_results_name_input_files_as_the_scenario_file_does_and_a_replot_filters_on_them(tmp_path):
    """The committed tables of a sweep are the same on every checkout: a workload given relative to the scenario file
    is written so (not as this machine's absolute path); ``--replot`` reads it back for a figure that filters on it,
    and ``--check`` compares the fresh runs with the table."""
    import shutil
    from pathlib import Path

    data = tmp_path / "data"
    data.mkdir()
    source = Path(__file__).resolve().parents[1] / "torus_sim" / "inputs" / "data"
    log = next(iter(sorted(source.glob("*.swf*"))))
    shutil.copy(log, data / log.name)
    (tmp_path / "exp").mkdir()
    spec = tmp_path / "exp" / "paths.toml"
    spec.write_text(
        f'[workload]\nmax_jobs = 80\n[grid]\nworkload = ["../data/{log.name}", "bundled"]\n'
        f'[[figure]]\nname = "one"\nx = "workload"\ny = ["avg_wait_time"]\nwhere = {{ workload = "../data/{log.name}" }}\n'
    )
    out = tmp_path / "out"
    assert main(["sweep", str(spec), "--out", str(out), "--no-progress"]) == 0
    table = pd.read_csv(out / "results.csv")
    assert table["workload"].tolist() == [f"../data/{log.name}", "bundled"]
    (out / "one.png").unlink()
    assert main(["sweep", str(spec), "--out", str(out), "--replot"]) == 0
    assert (out / "one.png").stat().st_size > 1000  # the filter found its row
    assert main(["sweep", str(spec), "--out", str(out), "--check", "--no-progress"]) == 0
    from torus_sim.experiments.experiment import file_fields_absolute, file_fields_relative

    read_back = pd.DataFrame(
        {"workload": ["no_such_package_x.module:Reader", f"table:../data/{log.name}", "synthetic:40:bursty"]}
    )
    back = file_fields_absolute(read_back, spec.parent)  # a value from a CSV is compared with files, never imported
    assert back["workload"].tolist() == [
        "no_such_package_x.module:Reader",
        f"table:{data / log.name}",
        "synthetic:40:bursty",
    ]
    assert file_fields_relative(back, spec.parent)["workload"].tolist() == read_back["workload"].tolist()


def test_process_workers_give_the_same_rows_as_serial(tmp_path):
    spec = tmp_path / "tiny.toml"
    spec.write_text("[workload]\nmax_jobs = 120\n[grid]\nfailures = [0, 20]\nseed = [0, 1]\n")
    experiment = load_experiment(spec)
    serial = run_experiment(experiment, "serial", progress=False).drop(columns="wall_time")
    parallel = run_experiment(experiment, "process", workers=2, progress=False).drop(columns="wall_time")
    pd.testing.assert_frame_equal(serial, parallel)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[grid]\nconfidance = [0.1]\n", r"unknown key\(s\) \['confidance'\] in \[grid\]"),
        ("[predictors]\nconfidance = 0.1\n", r"unknown key\(s\) \['confidance'\] in \[predictors\]"),
        ("[workload]\nconfidence = 0.1\n", r"unknown key\(s\) \['confidence'\] in \[workload\]"),
        ("[grid]\nfailures = []\n", "has no values"),
        ('[grid]\nfailures = [0]\n[[figure]]\nname = "f"\nx = "confidence"\ny = ["omega_util"]\n', "names 'confidence'"),
        ("[grid\n", "not valid TOML"),
        ('[workload]\nmax_jobs = "lots"\n', r"\[workload\] max_jobs: Input should be a valid integer.*got 'lots'"),
        ("[platform]\nplatform = 3\n", r"\[platform\] platform"),
        ('[policy]\nbackfill = "maybe"\n', r"\[policy\] backfill"),
    ],
)
def test_bad_experiment_files_are_refused_naming_the_file_and_the_key(tmp_path, text, message):
    spec = tmp_path / "bad.toml"
    spec.write_text(text)
    with pytest.raises(ConfigurationError, match=message) as caught:
        load_experiment(spec)
    assert str(spec) in str(caught.value)


def test_a_bad_scenario_file_exits_with_code_2_and_a_sentence(tmp_path, capsys):
    spec = tmp_path / "bad.toml"
    spec.write_text('[workload]\nmax_jobs = "lots"\n')
    assert main(["run", str(spec), "--out", str(tmp_path / "out")]) == 2
    error = capsys.readouterr().err
    assert error.startswith("torus-sim: error: ") and "max_jobs" in error and "Traceback" not in error
    assert not (tmp_path / "out").exists()
    assert main(["sweep", str(tmp_path / "missing.toml")]) == 2


def test_every_section_field_is_a_scenario_field_once():
    names = [name for members in SECTIONS.values() for name in members]
    assert len(names) == len(set(names))
    from torus_sim.experiments.scenario import Scenario

    assert set(names) == set(Scenario.model_fields)


def test_draw_figure_refuses_an_empty_selection(tmp_path):
    table = pd.DataFrame({"failures": [0], "avg_bounded_slowdown": [1.0], "confidence": [0.1]})
    with pytest.raises(ValueError, match="no results match"):
        draw_figure(table, FigureSpec("f", "failures", "", ("avg_bounded_slowdown",), {"confidence": 0.9}), tmp_path / "f.png")


def test_cases_vary_parameters_together_and_cross_the_grid(tmp_path):
    spec = tmp_path / "cases.toml"
    spec.write_text(
        "[workload]\nmax_jobs = 100\n[grid]\nconfidence = [0.0, 0.5]\n"
        "[[case]]\nfailures = 10\nload_scale = 1.0\n[[case]]\nfailures = 20\nload_scale = 1.2\n"
    )
    experiment = load_experiment(spec)
    assert experiment.points() == [
        {"failures": 10, "load_scale": 1.0, "confidence": 0.0},
        {"failures": 10, "load_scale": 1.0, "confidence": 0.5},
        {"failures": 20, "load_scale": 1.2, "confidence": 0.0},
        {"failures": 20, "load_scale": 1.2, "confidence": 0.5},
    ]
    assert experiment.scenario(experiment.points()[2]).failures == "synthetic:20"


def test_a_scenario_file_without_a_grid_runs_with_torus_sim_run_and_options_win(tmp_path):
    import json

    spec = tmp_path / "one.toml"
    spec.write_text('[platform]\nplatform = "cluster"\n[workload]\nmax_jobs = 200\n[policy]\npolicy = "FCFS-EASY"\n')
    out = tmp_path / "out"
    assert main(["run", str(spec), "--max-jobs", "150", "--out", str(out)]) == 0
    manifest = json.loads((out / "summary.json").read_text())
    assert manifest["config"]["max_jobs"] == 150 and manifest["config"]["policy"] == "FCFS-EASY"
    assert manifest["inputs"]["platform"] == {"kind": "cluster", "nodes": 128}
    spec.write_text("[grid]\nseed = [0, 1]\n")
    assert main(["run", str(spec), "--out", str(out)]) == 2


def test_energy_files_in_a_scenario_file_are_read_from_its_folder(tmp_path):
    """A job-power, price or power cap CSV named relative to the scenario file is found from any directory; the
    names with arguments (uniform:..., tou:...) stay as they are."""
    (tmp_path / "caps.csv").write_text("time,share\n0,0.9\n")
    spec = tmp_path / "energy.toml"
    spec.write_text(
        '[power]\npower = true\nprice = "prices.csv"\njob_power = "uniform:50:300"\npower_cap_file = "caps.csv"\n'
        "[grid]\nseed = [0]\n"
    )
    experiment = load_experiment(spec)
    scenario = experiment.scenario(experiment.points()[0])
    assert scenario.power_cap_file == str(tmp_path / "caps.csv")
    assert scenario.price == str(tmp_path / "prices.csv") and scenario.job_power == "uniform:50:300"


def test_every_log_of_the_data_mirror_has_a_site_file_that_names_its_sources():
    """Issue 77 §2: a site file for every log under ../shared/data, its header's facts named in it."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    sites = {path.stem: path.read_text() for path in (root / "experiments" / "sites").glob("*.toml")}
    for name in ("CTC-SP2", "SDSC-SP2", "HPC2N", "RICC", "NASA-iPSC"):
        assert name in sites, name
        assert f'workload = "pwa:{name}"' in sites[name] and "Header" in sites[name], name
        experiment = load_experiment(root / "experiments" / "sites" / f"{name}.toml")
        assert experiment.scenario({}).workload == f"pwa:{name}"
