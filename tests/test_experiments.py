import pandas as pd
import pytest

from torus_sim.cli import main
from torus_sim.errors import ConfigurationError
from torus_sim.experiments import load_experiment, run_experiment
from torus_sim.figures import draw_figure


def test_every_bundled_experiment_file_parses_and_names_known_parameters():
    from pathlib import Path

    from torus_sim.flat.experiments import load_flat_experiment

    files = sorted((Path(__file__).resolve().parents[1] / "experiments").glob("**/*.toml"))
    from torus_sim.online.experiments import load_online_experiment

    flat = [path for path in files if path.parent.name in ("rigid", "moldable")]
    online = [path for path in files if path.parent.name == "pv_easy"]
    assert len(files) - len(flat) - len(online) >= 3 and len(flat) >= 6 and len(online) >= 4
    for path in online:
        experiment = load_online_experiment(path)
        assert experiment.runs and experiment.figures and experiment.workload.name.startswith("CTC")
        with pytest.raises(ConfigurationError, match="torus-sim online experiment"):
            load_experiment(path)
    for path in [path for path in files if path not in online]:
        if path in flat:
            experiment = load_flat_experiment(path)
            assert experiment.points() and experiment.figures
            with pytest.raises(ConfigurationError, match="torus-sim flat experiment"):
                load_experiment(path)
            continue
        experiment = load_experiment(path)
        assert experiment.points() and experiment.figures
        experiment.config(experiment.points()[0]).validate()


def test_an_experiment_runs_its_grid_and_draws_its_figures(tmp_path):
    spec = tmp_path / "tiny.toml"
    spec.write_text(
        'title = "tiny"\n[base]\nscheduler = "balancing"\nmax_jobs = 150\n[grid]\nfailures = [0, 30]\nconfidence = [0.0, 0.5]\n'
        '[[figure]]\nname = "bsld"\nx = "failures"\nseries = "confidence"\ny = ["avg_bounded_slowdown"]\n'
        '[[figure]]\nname = "capacity"\nx = "failures"\ny = ["omega_util", "omega_unused", "omega_lost"]\nwhere = { confidence = 0.5 }\n'
    )
    out = tmp_path / "out"
    assert main(["experiment", str(spec), "--out", str(out)]) == 0
    table = pd.read_csv(out / "results.csv")
    assert len(table) == 4 and set(table["failures"]) == {0, 30} and set(table["confidence"]) == {0.0, 0.5}
    assert (out / "bsld.png").stat().st_size > 1000 and (out / "capacity.png").stat().st_size > 1000
    assert main(["experiment", str(spec), "--out", str(out), "--replot"]) == 0


def test_process_workers_give_the_same_rows_as_serial(tmp_path):
    spec = tmp_path / "tiny.toml"
    spec.write_text("[base]\nmax_jobs = 120\n[grid]\nfailures = [0, 20]\nseed = [0, 1]\n")
    experiment = load_experiment(spec)
    serial = run_experiment(experiment, "serial", progress=False).drop(columns="wall_time")
    parallel = run_experiment(experiment, "process", workers=2, progress=False).drop(columns="wall_time")
    pd.testing.assert_frame_equal(serial, parallel)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[grid]\nconfidance = [0.1]\n", "unknown run parameter 'confidance'"),
        ("[grid]\nfailures = []\n", "has no values"),
        ('[grid]\nfailures = [0]\n[[figure]]\nname = "f"\nx = "confidence"\ny = ["omega_util"]\n', "names 'confidence'"),
        ("[grid\n", "not valid TOML"),
    ],
)
def test_bad_experiment_files_are_refused(tmp_path, text, message):
    spec = tmp_path / "bad.toml"
    spec.write_text(text)
    with pytest.raises(ConfigurationError, match=message):
        load_experiment(spec)


def test_draw_figure_refuses_an_empty_selection(tmp_path):
    from torus_sim.experiments.scenario import FigureSpec

    table = pd.DataFrame({"failures": [0], "avg_bounded_slowdown": [1.0], "confidence": [0.1]})
    with pytest.raises(ValueError, match="no results match"):
        draw_figure(table, FigureSpec("f", "failures", "", ("avg_bounded_slowdown",), {"confidence": 0.9}), tmp_path / "f.png")


def test_cases_vary_parameters_together_and_cross_the_grid(tmp_path):
    spec = tmp_path / "cases.toml"
    spec.write_text(
        "[base]\nmax_jobs = 100\n[grid]\nconfidence = [0.0, 0.5]\n"
        "[[case]]\nfailures = 10\nload_scale = 1.0\n[[case]]\nfailures = 20\nload_scale = 1.2\n"
    )
    experiment = load_experiment(spec)
    assert experiment.points() == [
        {"failures": 10, "load_scale": 1.0, "confidence": 0.0},
        {"failures": 10, "load_scale": 1.0, "confidence": 0.5},
        {"failures": 20, "load_scale": 1.2, "confidence": 0.0},
        {"failures": 20, "load_scale": 1.2, "confidence": 0.5},
    ]
    assert experiment.config(experiment.points()[2]).failures == "synthetic:20"
