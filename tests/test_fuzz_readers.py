"""Every input reader either parses or raises the project's input error naming the file; never anything else.

Each reader is fed random bytes, a real sample compressed and cut short, and a real sample with
one line mutated (a field replaced, characters dropped or inserted). Any exception other than a
:class:`~torus_sim.core.errors.TorusSimError` whose message names the file fails the test, and so does a
file left behind in the reader's folder. Examples are bounded (the whole module runs in well under
a minute).
"""

from __future__ import annotations

import bz2
import functools
import gzip
import lzma
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from failure_logs.bgl_ras import read_bgl_ras
from failure_logs.fta import read_fta
from failure_logs.lanl import read_lanl
from torus_sim.core.errors import TorusSimError
from torus_sim.experiments.experiment import load_experiment
from torus_sim.inputs.workload.batch import generate_rigid_set
from torus_sim.inputs.workload.batsim import read_batsim_workload
from torus_sim.inputs.workload.jobs import jobs_from_swf
from torus_sim.inputs.workload.refcode import (
    RefcodeHeader,
    read_failure_scenarios,
    read_rigid_jobs,
    write_failure_scenarios,
    write_rigid_jobs,
)
from torus_sim.inputs.workload.speedup import read_time_table
from torus_sim.inputs.workload.swf import read_swf

from .conftest import SHARED_DATA
from .test_input_errors import LANL, lanl_as_fta

FUZZ = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
BUNDLED_SWF = Path(__file__).resolve().parents[1] / "torus_sim" / "inputs" / "data" / "NASA-iPSC-1993-3.1-cln.swf.gz"


def _head(text: str, lines: int) -> str:
    return "".join(text.splitlines(keepends=True)[:lines])


def _refcode_files() -> tuple[str, str]:
    folder = Path(tempfile.mkdtemp())
    jobs = generate_rigid_set(np.random.default_rng(0), 12)
    write_rigid_jobs(folder / "jobs", RefcodeHeader(1e-8, 500, 0.0, "LPT"), jobs)
    write_failure_scenarios(folder / "failures", np.random.default_rng(1).integers(0, 3, size=(4, 12)))
    return (folder / "jobs").read_text(), (folder / "failures").read_text()


def _lanl_sample() -> str:
    text = lzma.decompress(LANL.read_bytes()).decode()
    lines = text.splitlines(keepends=True)
    return lines[0] + "".join(line for line in lines[1:] if line.startswith("20,"))[:6000]


def _fta_sample() -> str:
    path = Path(tempfile.mkdtemp()) / "trace.tab"
    lanl_as_fta(path, up_every=5)
    return _head(path.read_text(), 40)


SCENARIO = """title = "fuzz"
reference = "none"
[platform]
platform = "cluster"
nodes = 64
[workload]
workload = "rigid"
jobs = 20
[silent_errors]
mean_failure_probability = 0.3
scenarios = 2
[policy]
policy = "R-LIST-0"
priority = "LPT"
[grid]
priority = ["LPT", "SPT"]
"""

BATSIM_WORKLOAD = """{
  "nb_res": 16,
  "jobs": [
    {"id": 1, "subtime": 0, "walltime": 200, "res": 8, "profile": "p100"},
    {"id": "2", "subtime": 10, "walltime": 60, "res": 16, "profile": "p50"},
    {"id": "w0!3", "subtime": 20, "res": 4, "profile": "p50"}
  ],
  "profiles": {"p100": {"type": "delay", "delay": 100}, "p50": {"type": "delay", "delay": 50.5}}
}
"""

# name -> (file suffix, the real sample's text, the reader)
READERS = {
    "swf": (
        ".swf",
        lambda: _head(gzip.decompress(BUNDLED_SWF.read_bytes()).decode(), 60),
        lambda p: jobs_from_swf(read_swf(p), 128),
    ),
    "bgl_ras": (
        ".log",
        lambda: _head((SHARED_DATA / "failures" / "bgl" / "BGL_2k.log").read_text(errors="replace"), 40),
        read_bgl_ras,
    ),
    "lanl": (".csv", _lanl_sample, lambda p: read_lanl(p, system=20, n_supernodes=128)),
    "fta": (".tab", _fta_sample, lambda p: read_fta(p, 128)),
    "refcode_jobs": (".txt", lambda: _refcode_files()[0], read_rigid_jobs),
    "refcode_failures": (".txt", lambda: _refcode_files()[1], lambda p: read_failure_scenarios(p, 12)),
    "time_table": (".txt", lambda: "# t(1) t(2) t(3) t(4)\n100 60 45 40\n80, 50, 40, 35\n300 150 100 75\n", read_time_table),
    "scenario": (".toml", lambda: SCENARIO, load_experiment),
    "batsim_workload": (".json", lambda: BATSIM_WORKLOAD, lambda p: jobs_from_swf(read_batsim_workload(p), 16)),
}


@functools.cache
def sample(name: str) -> str:
    return READERS[name][1]()


def check(name: str, data: bytes) -> None:
    """Feed ``data`` to reader ``name`` as a file; it must parse or raise a TorusSimError naming the file."""
    suffix, _, read = READERS[name]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"input{suffix}"
        path.write_bytes(data)
        try:
            read(path)
        except TorusSimError as error:
            assert str(path) in str(error), f"the error does not name the file: {error}"
        assert sorted(Path(folder).iterdir()) == [path], "the reader left a file behind"


@pytest.mark.parametrize("name", READERS)
@FUZZ
@given(data=st.binary(max_size=600))
def test_random_bytes(name, data):
    check(name, data)


COMPRESSORS = {"gzip": gzip.compress, "xz": lzma.compress, "bzip2": bz2.compress}


@pytest.mark.parametrize("name", READERS)
@FUZZ
@given(compression=st.sampled_from(sorted(COMPRESSORS)), cut=st.floats(0.0, 1.0), flip=st.integers(0, 10_000))
def test_compressed_cut_short_or_corrupted(name, compression, cut, flip):
    data = bytearray(COMPRESSORS[compression](sample(name).encode()))
    data = data[: int(len(data) * cut)] if cut < 1 else data
    if cut == 1.0 and data:  # a whole file with one byte changed
        data[flip % len(data)] ^= 0x55
    check(name, bytes(data))


MUTATIONS = ("replace_field", "drop_chars", "insert_text", "duplicate_line", "delete_line")


@pytest.mark.parametrize("name", READERS)
@FUZZ
@given(
    mutation=st.sampled_from(MUTATIONS),
    line=st.integers(0, 10_000),
    position=st.integers(0, 10_000),
    text=st.text(max_size=12) | st.sampled_from(["-1", "1e300", "nan", "inf", "-0", "99999999999999999999", "", "\t", ",", '"']),
)
def test_mutated_real_lines(name, mutation, line, position, text):
    lines = sample(name).splitlines(keepends=True)
    index = line % len(lines)
    target = lines[index]
    if mutation == "replace_field":
        separator = "," if name == "lanl" else ("\t" if "\t" in target else " ")
        fields = target.rstrip("\n").split(separator)
        fields[position % len(fields)] = text
        lines[index] = separator.join(fields) + "\n"
    elif mutation == "drop_chars":
        lines[index] = target[: position % (len(target) + 1)] + target[position % (len(target) + 1) + len(text) + 1 :]
    elif mutation == "insert_text":
        cut = position % (len(target) + 1)
        lines[index] = target[:cut] + text + target[cut:]
    elif mutation == "duplicate_line":
        lines.insert(index, target)
    else:
        del lines[index]
    check(name, "".join(lines).encode())
