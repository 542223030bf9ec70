"""The field's logs by name (issue 62): the registry matches the files, a fetch checks the hash, every command takes a name."""

from __future__ import annotations

import functools
import http.server
import json
import threading
from pathlib import Path

import pytest

import torus_sim.inputs.datasets as datasets
from torus_sim.core.errors import ConfigurationError, InputFileError
from torus_sim.core.files import file_sha256
from torus_sim.inputs.datasets import DATASETS, MIRROR_VARIABLE, Dataset, fetch
from torus_sim.interfaces.cli import main

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
needs_data = pytest.mark.skipif(not SHARED_DATA.is_dir(), reason="../shared/data is not beside the repository")


@needs_data
@pytest.mark.parametrize("name", list(DATASETS))
def test_every_registered_file_is_the_one_in_shared_data_byte_for_byte(name):
    entry = DATASETS[name]
    local = SHARED_DATA / entry.path
    assert local.stat().st_size == entry.size
    assert file_sha256(local) == entry.sha256
    assert entry.url.startswith("https://") and entry.licence and entry.citation and entry.home.startswith("https://")


@needs_data
def test_the_mirror_variable_serves_a_name_from_a_local_folder(monkeypatch):
    monkeypatch.setenv(MIRROR_VARIABLE, str(SHARED_DATA))
    assert fetch("pwa:SDSC-SP2") == SHARED_DATA / "swf" / "SDSC-SP2-1998-4.2-cln.swf.gz"
    assert fetch("PWA:sdsc-sp2") == fetch("pwa:SDSC-SP2")  # case does not matter
    with pytest.raises(ConfigurationError, match="no registered data file 'pwa:KTH'"):
        fetch("pwa:KTH")


@pytest.fixture
def served(tmp_path, monkeypatch):
    """A file served over HTTP on this machine and registered as ``test:log``; the cache in a scratch folder."""
    folder = tmp_path / "served"
    folder.mkdir()
    (folder / "log.swf").write_text("; MaxProcs: 4\n1 0 0 10 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1\n")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(folder))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    body = (folder / "log.swf").read_bytes()
    entry = Dataset(
        "test:log",
        "swf/log.swf",
        f"http://127.0.0.1:{server.server_address[1]}/log.swf",
        len(body),
        file_sha256(folder / "log.swf"),
        "workload",
        "a one-job log",
        "https://example.org",
        "none",
        "none",
    )
    monkeypatch.setitem(DATASETS, "test:log", entry)
    monkeypatch.setenv(MIRROR_VARIABLE, str(tmp_path / "cache"))
    yield folder, tmp_path / "cache"
    server.shutdown()


def test_a_name_is_downloaded_once_into_the_cache_and_checked_against_its_hash(served):
    folder, cache = served
    path = fetch("test:log")
    assert path == cache / "swf" / "log.swf" and path.read_bytes() == (folder / "log.swf").read_bytes()
    (folder / "log.swf").unlink()  # the second fetch finds it in the cache: no download
    assert fetch("test:log") == path


def test_a_file_that_does_not_match_its_hash_is_refused_with_its_name(served):
    folder, cache = served
    (folder / "log.swf").write_text("; MaxProcs: 4\n1 0 0 99 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1\n")  # changed at its origin
    with pytest.raises(InputFileError, match="does not match test:log's SHA-256"):
        fetch("test:log")
    assert not (cache / "swf" / "log.swf").exists()  # nothing half-written left in the cache


def test_an_unreachable_origin_is_one_sentence(served, monkeypatch):
    folder, _ = served
    (folder / "log.swf").unlink()
    with pytest.raises(InputFileError) as raised:
        fetch("test:log")
    text = str(raised.value)
    assert "test:log is not in the mirror" in text and "could not be downloaded (HTTPError" in text
    assert "copy the file there (as swf/log.swf; from http://127.0.0.1:" in text and MIRROR_VARIABLE in text
    assert "\n" not in text and "Traceback" not in text


def test_offline_the_sentence_says_so_and_what_to_do(served, monkeypatch):
    """Issue 78 §3: without network the reason is a few words and the sentence says what to do (a copy, the mirror)."""
    import requests

    def offline(*args, **kwargs):
        raise requests.exceptions.ConnectionError(
            "HTTPSConnectionPool(host='example.org', port=443): Max retries exceeded (Caused by NameResolutionError(...))"
        )

    monkeypatch.setattr(requests, "get", offline)
    with pytest.raises(InputFileError) as raised:
        fetch("test:log")
    text = str(raised.value)
    assert "could not be downloaded (no network: the host's name did not resolve): without network, copy the file" in text
    assert "NameResolutionError" not in text and len(text) < 500


def test_a_bundled_name_is_the_shipped_copy_offline_and_never_downloaded(tmp_path, monkeypatch, capsys):
    """Issue 78 §3: pwa:NASA-iPSC, loghub:BGL-2k and Mira's logs ship with the package: with an empty cache they are
    found (listed as bundled), and nothing is downloaded for them."""
    import pooch

    monkeypatch.setenv(MIRROR_VARIABLE, str(tmp_path / "empty"))
    monkeypatch.setattr(pooch, "create", lambda *args, **kwargs: pytest.fail("a bundled file was downloaded"))
    for name in ("pwa:NASA-iPSC", "loghub:BGL-2k", "logaider:Mira", "logaider:Mira-maintenance", "logaider:Mira-reservations"):
        shipped = datasets.bundled_copy(name)
        assert shipped is not None and fetch(name) == shipped == datasets.local_copy(name)
    assert file_sha256(datasets.bundled_copy("pwa:NASA-iPSC")) == DATASETS["pwa:NASA-iPSC"].sha256
    assert file_sha256(datasets.bundled_copy("loghub:BGL-2k")) == DATASETS["loghub:BGL-2k"].sha256
    assert datasets.bundled_copy("pwa:SDSC-SP2") is None and datasets.local_copy("pwa:SDSC-SP2") is None
    assert main(["data", "list"]) == 0
    listed = {line.split()[0]: line.split()[4] for line in capsys.readouterr().out.splitlines()[1:]}
    assert listed["pwa:NASA-iPSC"] == "bundled" and listed["pwa:SDSC-SP2"] == "missing"
    out = tmp_path / "out"
    assert main(["run", "--workload", "pwa:NASA-iPSC", "--failures", "loghub:BGL-2k", "--max-jobs", "50", "--out", str(out)]) == 0


def test_an_unknown_name_of_a_known_collection_lists_the_names(tmp_path, capsys):
    """Issue 78 §3: ``--workload pwa:NOPE`` is a name of no registered file, not an import path to try."""
    assert main(["run", "--workload", "pwa:NOPE", "--max-jobs", "5", "--out", str(tmp_path / "out")]) == 2
    error = capsys.readouterr().err
    assert "no registered data file 'pwa:NOPE'; known: pwa:NASA-iPSC, pwa:SDSC-SP2" in error and "import" not in error
    assert not (tmp_path / "out").exists()


@needs_data
def test_every_command_takes_a_name_and_records_it_not_a_path(tmp_path, capsys):
    out = tmp_path / "out"
    arguments = ["run", "--platform", "cluster", "--workload", "pwa:SDSC-SP2", "--failures", "cfdr:LANL", "--max-jobs", "300"]
    assert main([*arguments, "--out", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("workload  pwa:SDSC-SP2  (the first 300 jobs") and "failures  cfdr:LANL#system=20" in printed
    summary = json.loads((out / "summary.json").read_text())
    assert summary["inputs"]["workload"]["path"] == "pwa:SDSC-SP2"
    assert summary["inputs"]["workload"]["sha256"] == DATASETS["pwa:SDSC-SP2"].sha256
    assert str(SHARED_DATA) not in (out / "summary.json").read_text()
    sweep_file = tmp_path / "names.toml"
    sweep_file.write_text(
        '[platform]\nplatform = "cluster"\n[workload]\nworkload = "pwa:CTC-SP2"\nmax_jobs = 100\n[grid]\npolicy = ["FCFS", "FCFS-EASY"]\n'
    )
    assert main(["sweep", str(sweep_file), "--out", str(tmp_path / "sweep"), "--no-progress"]) == 0
    assert "pwa:CTC-SP2" in (tmp_path / "sweep" / "results.csv").read_text()


@needs_data
def test_the_data_command_lists_fetches_and_cites(capsys):
    assert main(["data", "list"]) == 0
    listed = capsys.readouterr().out
    assert all(name in listed for name in DATASETS) and "here" in listed
    assert main(["data", "path", "loghub:BGL-2k"]) == 0
    assert capsys.readouterr().out.strip() == str(SHARED_DATA / "failures" / "bgl" / "BGL_2k.log")
    assert main(["data", "cite", "cfdr:LANL"]) == 0
    assert "B. Schroeder and G. Gibson" in capsys.readouterr().out
    assert main(["data", "path", "pwa:nothing"]) == 2
    assert "no registered data file 'pwa:nothing'" in capsys.readouterr().err


def test_the_cache_is_the_users_without_the_mirror_variable(monkeypatch):
    monkeypatch.delenv(MIRROR_VARIABLE, raising=False)
    assert datasets.cache_folder().name == "torus-sim"
