import json
import subprocess
import sys
from pathlib import Path

import pytest

from torus_sim.experiments.runner import RunConfig, run
from torus_sim.interfaces.cli import main

from .conftest import SHARED_DATA


def test_run_writes_jobs_csv_and_summary_json_with_the_configuration_and_input_hashes(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["run", "--max-jobs", "400", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "average bounded slowdown" in printed and "capacity lost" in printed
    summary = json.loads((out / "summary.json").read_text())
    assert summary["config"]["max_jobs"] == 400 and summary["inputs"]["failures"]["spec"] == "bundled"
    assert summary["config"]["failures"] == "bundled"  # what ran, not null (issue 44 section 7)
    header = printed.splitlines()
    assert header[2].startswith("failures  bundled: ") and header[2].split("  (")[0].endswith("BGL_2k.log")  # no fitting spec
    assert "cleaning walltime from runtime 400;" in header[0] and "{" not in header[0]
    assert summary["inputs"]["workload"]["sha256"] == "5589ae9b2fb78e3bf92de097497cf33a91607de1ad54563e43533f7827597f29"
    assert summary["inputs"]["failures"]["count"] == 64  # the whole run's 347 fitted failures that fall in these 400 jobs' span
    assert summary["summary"]["jobs"] == 400
    lines = (out / "jobs.csv").read_text().splitlines()
    assert len(lines) == 401 and lines[0].startswith("job_id,")


def test_same_seed_writes_identical_bytes(tmp_path):
    for name in ("a", "b"):
        assert main(["run", "--max-jobs", "300", "--failures", "synthetic:40", "--seed", "3", "--out", str(tmp_path / name)]) == 0
    for file in ("jobs.csv", "summary.json"):
        assert (tmp_path / "a" / file).read_bytes() == (tmp_path / "b" / file).read_bytes()


def test_a_malformed_workload_stops_with_file_and_line_and_writes_nothing(tmp_path, capsys):
    bad = tmp_path / "bad.swf"
    bad.write_text(
        "; MaxNodes: 128\n1 0 -1 10 1 -1 -1 1 20 -1 1 1 1 -1 -1 -1 -1 -1\n2 5 -1 10 x -1 -1 1 20 -1 1 1 1 -1 -1 -1 -1 -1\n"
    )
    out = tmp_path / "out"
    assert main(["run", "--workload", str(bad), "--out", str(out)]) == 2
    assert f"{bad}:3: malformed SWF line: field 'allocated_processors' is not a number" in capsys.readouterr().err
    assert not out.exists()


def test_flags_reach_the_scheduler_and_the_metrics():
    base = dict(max_jobs=500, failures="synthetic:30", seed=1)
    plain = run(RunConfig(**base))
    scaled = run(RunConfig(**base, load_scale=1.5, backfill=False, migration=False))
    assert scaled.summary["migrations"] == 0
    assert scaled.jobs["runtime"].sum() == pytest.approx(1.5 * plain.jobs["runtime"].sum())
    printed = run(RunConfig(**base, bsld_form="printed"))
    assert printed.summary["avg_bounded_slowdown"] >= plain.summary["avg_bounded_slowdown"]


def test_sdsc_slice_with_lanl_failures_and_their_downtime_runs(tmp_path):
    sdsc = SHARED_DATA / "swf" / "SDSC-SP2-1998-4.2-cln.swf.gz"
    lanl = SHARED_DATA / "failures" / "lanl" / "LA-UR-05-7318-failure-data-1996-2005.csv.xz"
    if not sdsc.exists() or not lanl.exists():
        pytest.skip("shared data not present")
    result = run(RunConfig(workload=str(sdsc), failures=str(lanl), downtime="log", max_jobs=1500))
    assert result.summary["jobs"] == 1500
    # the prefix meets the whole run's failures of its span (rate kept), not all 2,478 squeezed into it
    from failure_logs.lanl import read_lanl
    from failure_logs.transform import fit_to_span
    from torus_sim.experiments.runner import load_workload

    whole = load_workload(RunConfig(workload=str(sdsc))).span
    prefix = load_workload(RunConfig(workload=str(sdsc), max_jobs=1500)).span
    fitted = fit_to_span(read_lanl(lanl, 20, 128), *whole)
    expected = int(((fitted.failed_at >= prefix[0]) & (fitted.failed_at <= prefix[1])).sum())
    assert result.inputs["failures"]["count"] == expected == 195
    assert result.summary["failures"] > 0


def test_atomic_write_leaves_no_partial_file_when_writing_fails(tmp_path):
    from torus_sim.core.files import atomic_write

    target = tmp_path / "summary.json"
    target.write_text("old")

    def half_then_fail(handle):
        handle.write("half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        atomic_write(target, half_then_fail)
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["summary.json"]


def test_registries_select_extensions_by_name_and_refuse_unknown_ones():
    from predictors import PREDICTORS, NullPredictor
    from torus_sim.core.errors import ConfigurationError
    from torus_sim.policies import PLACEMENTS, MfpPlacement

    assert isinstance(PLACEMENTS.make("mfp"), MfpPlacement)
    predictor = PREDICTORS.make("null")
    assert isinstance(predictor, NullPredictor)
    assert predictor.partition_failure_probability([1, 2, 3], start=0.0, window=100.0) == 0.0
    with pytest.raises(ConfigurationError, match="unknown failure predictor 'oracle'"):
        PREDICTORS.make("oracle")


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (
            ["--scheduler", "balancing", "--confidence", "0.9", "--pf-form", "max"],
            {"policy": "balancing", "confidence": 0.9, "pf_form": "max"},
        ),
        (["--policy", "tiebreak", "--predictor", "history"], {"policy": "tiebreak", "predictor": "history"}),
        (["--no-backfill", "--load-scale", "1.2", "--downtime", "60"], {"backfill": False, "load_scale": 1.2, "downtime": 60.0}),
    ],
)
def test_every_cli_flag_reaches_the_run_configuration(tmp_path, flags, expected):
    out = tmp_path / "out"
    assert main(["run", "--max-jobs", "50", "--out", str(out), *flags]) == 0
    config = json.loads((out / "summary.json").read_text())["config"]
    assert {key: config[key] for key in expected} == expected


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--scheduler", "balancing", "--confidence", "1.5"], "[predictors] confidence: Input should be less than or equal to 1"),
        (["--scheduler", "tiebreak", "--accuracy", "-0.1"], "[predictors] accuracy: Input should be greater than or equal to 0"),
        (["--predictor", "history"], "the krevat policy uses no predictor"),
        (["--max-jobs", "lots"], "[workload] max_jobs: Input should be a valid integer"),
    ],
)
def test_bad_scheduler_parameters_are_refused_with_a_clear_error(tmp_path, capsys, flags, message):
    assert main(["run", "--max-jobs", "50", "--out", str(tmp_path / "out"), *flags]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_failure_log_that_does_not_cover_the_trace_warns_with_the_uncovered_span(tmp_path):
    ras = tmp_path / "ras.log"
    line = "- {t} 2005.06.11 R30-M0-N9-C:J16-U01 x R30-M0-N9-C:J16-U01 RAS KERNEL FATAL boom\n"
    ras.write_text(line.format(t=100) + line.format(t=200))
    with pytest.warns(UserWarning, match=r"does not cover the workload's span: no failures in \[0, 100\] s, \[200, \d+\] s"):
        result = run(RunConfig(max_jobs=300, failures=str(ras), fit_failures=False))
    assert result.inputs["failures"]["uncovered_span"][0] == (0.0, 100.0)


def test_an_unknown_choice_exits_with_code_2_and_names_the_choices(capsys):
    with pytest.raises(SystemExit) as caught:
        main(["run", "--preemption", "mesh"])
    assert (
        caught.value.code == 2
        and "invalid choice: 'mesh' (choose from 'kill', 'checkpoint', 'suspend')" in capsys.readouterr().err
    )
    # a platform is a registry's name (plug-ins included): the registry names the choices
    assert main(["run", "--platform", "mesh"]) == 2
    assert "unknown platform 'mesh'; choose from cluster, heterogeneous, partitions, torus" in capsys.readouterr().err


def _subcommands(parser, path=()):
    import argparse

    yield path
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _subcommands(sub, (*path, name))


HEAVY_LIBRARIES = ("pandas", "mesa", "scipy", "networkx", "matplotlib", "pyarrow", "solara", "dask", "torch")


@pytest.mark.parametrize("arguments", [["--help"], ["run", "--help"], ["sweep", "--help"], ["run", "--no-such-option"]])
def test_help_and_argument_errors_import_no_heavy_library(arguments):
    # issue 44 section 5: --help and argument errors start in under 0.5 s (benchmarks/startup.py measures
    # it); what keeps them there is that no library a run needs is imported before the arguments are read.
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "from torus_sim.interfaces.cli import main\n"
        "try:\n"
        f"    main({arguments!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print(sorted(name for name in {HEAVY_LIBRARIES!r} if name in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout[-400:]


def test_viz_on_a_port_in_use_says_so_in_one_sentence_and_exits_2(capsys):
    # issue 44 section 4: it printed "serving ...", then Errno 98, and ran on for 42 s before exit 3
    import socket

    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        assert main(["viz", "--port", str(port)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert f"cannot serve on 127.0.0.1:{port}" in captured.err and "choose another --port" in captured.err
    with pytest.raises(SystemExit) as caught:
        main(["viz", "--cull-timeout", "soon"])
    assert caught.value.code == 2 and "expected a duration" in capsys.readouterr().err


def test_every_subcommand_prints_its_help(capsys):
    # a '%' in a scenario field's description once made `torus-sim run --help` raise TypeError
    from torus_sim.interfaces.cli import build_parser

    paths = list(_subcommands(build_parser()))
    assert ("run",) in paths and ("sweep",) in paths
    for path in paths:
        if path[:1] in (("flat",), ("online",)):  # removed in 0.2: --help too gets the new form
            assert main([*path, "--help"]) == 2 and "use: torus-sim" in capsys.readouterr().err
            continue
        with pytest.raises(SystemExit) as caught:
            main([*path, "--help"])
        assert caught.value.code == 0, path
        assert "usage: torus-sim" in capsys.readouterr().out


@pytest.mark.parametrize(
    "case, options, said",
    [
        ('policy = "nope"', [], "unknown policy 'nope'"),
        ('policy = "FCFS"', ["--workers", "0"], "workers must be >= 1"),
    ],
    ids=["unknown-policy", "no-workers"],
)
def test_a_sweep_checks_its_file_and_options_before_it_announces_its_runs(tmp_path, capsys, case, options, said):
    """Issue 64: the "N runs on serial" line came before the error, as if the runs had begun."""
    spec = tmp_path / "s.toml"
    spec.write_text(f'title = "t"\n[workload]\nmax_jobs = 20\n[failures]\nfailures = "none"\n[[case]]\n{case}\n')
    code = main(["sweep", str(spec), "--out", str(tmp_path / "o"), "--no-progress", *options])
    err = capsys.readouterr().err
    assert code == 2 and said in err
    assert "runs on" not in err


def _probe_lines(source: str) -> tuple[dict[str, str], object]:
    """Run ``source`` in a fresh interpreter; its ``name: value`` lines as a dict, and the finished process."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, check=True)
    return dict(line.split(": ", 1) for line in done.stdout.splitlines() if ": " in line), done


def test_a_run_imports_no_table_library_before_its_first_job_and_leaves_no_child():
    # issue 61 section 3: a run imported Mesa's whole package (pandas, scipy.spatial, networkx, tqdm:
    # 128 MiB) before its first job, and its progress bar's multiprocessing lock started the resource
    # tracker (a second process) wherever the start method is not fork. Under "spawn" (macOS, Windows,
    # Python 3.14's Linux default) the probe fails on the code before this change.
    probe = (
        "import multiprocessing, multiprocessing.resource_tracker as tracker, sys\n"
        "multiprocessing.set_start_method('spawn')\n"
        "from torus_sim.engine import model as engine_model\n"
        "from torus_sim.experiments.runner import Scenario, run\n"
        "original = engine_model.SchedulingModel.run\n"
        "def first_job(self, *args, **kwargs):\n"
        f"    print('before:', sorted(name for name in {HEAVY_LIBRARIES!r} + ('tqdm', 'mesa.datacollection') if name in sys.modules and name != 'mesa'))\n"
        "    return original(self, *args, **kwargs)\n"
        "engine_model.SchedulingModel.run = first_job\n"
        "result = run(Scenario(max_jobs=300), progress=True)\n"
        "import mesa\n"
        "print('mesa whole:', hasattr(mesa, 'DataCollector') and callable(mesa.batch_run))\n"
        "print('tracker:', tracker._resource_tracker._pid)\n"
        "print('jobs:', len(result.jobs))\n"
    )
    lines, done = _probe_lines(probe)
    assert lines["before"] == "[]", done.stdout[-600:]
    assert lines["mesa whole"] == "True"  # the package is whole for whoever imports it afterwards
    assert lines["tracker"] == "None"  # no resource tracker: no second process
    assert int(lines["jobs"]) > 0


def test_mesa_model_names_its_logger_without_reading_the_stack():
    # issue 61 section 3: mesa.model's create_module_logger() called inspect.stack(), which reads the source of
    # every frame of the import chain (40-70 ms of the README's main job); the engine's import names it from the
    # caller's frame: the same logger, Mesa's function left as it was, inspect.stack never called
    probe = (
        "import inspect, logging, sys\n"
        "def refuse(*args, **kwargs):\n"
        "    raise AssertionError('inspect.stack called')\n"
        "inspect.stack = refuse\n"
        "import torus_sim.engine.mesa_core\n"
        "import mesa.mesa_logging as ml\n"
        "print('same:', ml._module_loggers['mesa.model'] is logging.getLogger('MESA.mesa.model'))\n"
        "print('restored:', ml.create_module_logger.__module__, ml.create_module_logger.__qualname__)\n"
        "print('tables:', sorted(name for name in ('pandas', 'networkx', 'scipy.spatial') if name in sys.modules))\n"
    )
    lines, done = _probe_lines(probe)
    assert lines == {"same": "True", "restored": "mesa.mesa_logging create_module_logger", "tables": "[]"}, done.stdout


@pytest.mark.parametrize(
    "arguments",
    [
        [],  # the README's main job: Krevat on the torus with BG/L's failures
        ["--platform", "cluster", "--nodes", "128", "--policy", "PV-EASY", "--failures", "none"],  # fairness columns
    ],
)
def test_a_whole_run_with_its_summary_and_jobs_csv_imports_no_pandas(tmp_path, arguments):
    # issue 61 sections 1 and 3: the summary's metrics are read from the record's columns with numpy and jobs.csv
    # is written from them a piece at a time; pandas (and pyarrow, which pandas imports: ~80 MiB and ~0.3 s) is
    # imported only where a DataFrame is asked for (a format that needs one, result.jobs from Python)
    out = tmp_path / "out"
    probe = (
        "import sys\n"
        "from torus_sim.interfaces.cli import main\n"
        f"code = main(['run', '--no-progress', '--max-jobs', '400', '--out', {str(out)!r}, *{arguments!r}])\n"
        "print('code:', code)\n"
        "print('tables:', sorted(name for name in ('pandas', 'pyarrow') if name in sys.modules))\n"
    )
    lines, done = _probe_lines(probe)
    assert lines["code"] == "0" and lines["tables"] == "[]", done.stdout[-600:]
    written = (out / "jobs.csv").read_text().splitlines()
    assert written[0].startswith("job_id,user_id,size,") and len(written) == 401


def test_the_installed_command_runs_main_then_freezes_the_objects_left_for_the_exit(tmp_path):
    # torus-sim's entry point (pyproject's [project.scripts]) is command(): main's status, then gc.freeze() so the
    # interpreter's last collections skip the objects left (~50 ms of the README's main job); main() leaves gc alone
    import tomllib

    scripts = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["torus-sim"] == "torus_sim.interfaces.cli:command"
    probe = (
        "import gc, sys\n"
        "from torus_sim.interfaces.cli import command, main\n"
        f"sys.argv = ['torus-sim', 'run', '--max-jobs', '40', '--no-progress', '--out', {str(tmp_path / 'a')!r}]\n"
        "seen = [main(), gc.get_freeze_count()]\n"
        f"sys.argv[-1] = {str(tmp_path / 'b')!r}\n"
        "seen += [command(), gc.get_freeze_count() > 0]\n"
        "sys.argv[-1] = '/proc/refused'\n"
        "seen.append(command())\n"
        "print('SEEN', *seen)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120)
    assert done.stdout.splitlines()[-1] == "SEEN 0 0 0 True 2"
    assert (tmp_path / "a" / "jobs.csv").read_bytes() == (tmp_path / "b" / "jobs.csv").read_bytes()


def test_a_yes_or_no_field_is_a_flag_and_its_negation():
    from torus_sim.interfaces.cli import build_parser
    from torus_sim.interfaces.commands.scenario_options import scenario_from

    parser = build_parser()
    args = parser.parse_args(
        ["run", "--priority-favor-small", "--no-kill-at-walltime", "--maintenance-drain", "--maintenance", "x.csv"]
    )
    scenario = scenario_from(args)
    assert scenario.priority_favor_small is True and scenario.kill_at_walltime is False and scenario.maintenance_drain is True
    plain = scenario_from(parser.parse_args(["run"]))
    assert plain.kill_at_walltime is None and plain.maintenance_drain is None and plain.priority_favor_small is False
