import gzip
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from torus_sim.core.errors import ConfigurationError, WorkloadFormatError
from torus_sim.inputs.workload.jobs import SWF_RULES, jobs_from_swf
from torus_sim.inputs.workload.sources import BUNDLED_NASA_LOG
from torus_sim.inputs.workload.swf import SWF_FIELDS, read_swf
from torus_sim.machine.partitions import round_up_to_feasible_size

HEADER = "; Version: 2.2\n; MaxNodes: 128\n; Acknowledge: someone\n;\n"
# Real lines from SDSC-SP2-1998-4.2-cln (jobs 11-13) and NASA-iPSC-1993-3.1-cln (job 57).
SDSC_LINES = (
    "   11   566129      5  28826    1  27758    -1    1  28800    -1  5 153  75 18180  3 -1 -1 -1\n"
    "   12   566290    532  26171    1  24666    -1    1  28800    -1  1 153  75 18184  3 -1 -1 -1\n"
    "   13   567314  15757   8071    8   7334    -1    8  64800    -1  1 150   6 13592  4 -1 -1 -1\n"
)
NASA_LINE = "   57    25574     -1     10    1     -1    -1   -1     -1    -1 -1   4   1   2 -1 -1 -1 -1\n"


def write(tmp_path, text, name="trace.swf"):
    path = tmp_path / name
    path.write_text(text)
    return path


def bgl_round(size):
    return round_up_to_feasible_size((4, 4, 8), size)


def test_real_sdsc_lines_parse_into_all_18_fields(tmp_path):
    trace = read_swf(write(tmp_path, HEADER + SDSC_LINES))
    assert len(trace.records) == 3
    first = trace.records[0]
    assert len(first) == len(SWF_FIELDS) == 18
    assert (first.job_id, first.submit_time, first.wait_time, first.run_time) == (11, 566129, 5, 28826)
    assert (first.allocated_processors, first.requested_time, first.status, first.user_id) == (1, 28800, 5, 153)
    assert trace.header_int("MaxNodes") == 128
    assert trace.header["Acknowledge"] == "someone"


def test_bundled_nasa_log_reads_18239_jobs_with_its_header(tmp_path):
    trace = read_swf(BUNDLED_NASA_LOG)
    assert len(trace.records) == 18239
    assert trace.header_int("MaxNodes") == 128
    assert trace.sha256 == "5589ae9b2fb78e3bf92de097497cf33a91607de1ad54563e43533f7827597f29"
    workload = jobs_from_swf(trace, 128, bgl_round)
    assert len(workload.jobs) == 18239
    assert workload.cleaning["walltime_from_runtime"] == 18239  # NASA records no requested time


def test_gzip_and_plain_files_read_the_same(tmp_path):
    plain = write(tmp_path, HEADER + SDSC_LINES)
    packed = tmp_path / "trace.swf.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    assert read_swf(plain).records == read_swf(packed).records


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("1 0 -1 10 1 -1 -1 -1 -1 -1 -1 4 1 2 -1 -1 -1\n", "expected 18 fields, found 17"),
        ("1 0 -1 ten 1 -1 -1 -1 -1 -1 -1 4 1 2 -1 -1 -1 -1\n", "field 'run_time' is not a number: 'ten'"),
        ("1 0 -1 10 1.5 -1 -1 -1 -1 -1 -1 4 1 2 -1 -1 -1 -1\n", "field 'allocated_processors' must be an integer"),
        ("1 0 -1 nan 1 -1 -1 -1 -1 -1 -1 4 1 2 -1 -1 -1 -1\n", "field 'run_time' is not finite"),
    ],
)
def test_a_malformed_line_names_the_file_the_line_and_what_is_wrong(tmp_path, line, reason):
    path = write(tmp_path, HEADER + NASA_LINE + line)
    with pytest.raises(WorkloadFormatError) as caught:
        read_swf(path)
    assert caught.value.line_no == 6
    assert caught.value.path == str(path)
    assert reason in str(caught.value)
    assert f"{path}:6:" in str(caught.value)


def test_cleaning_rules_skip_and_count_unusable_jobs(tmp_path):
    lines = (
        "1 0 -1 100 4 -1 -1 4 200 -1 1 1 1 -1 -1 -1 -1 -1\n"  # fine
        "2 5 -1 100 -1 -1 -1 8 200 -1 1 1 1 -1 -1 -1 -1 -1\n"  # size from requested processors
        "3 6 -1 100 -1 -1 -1 -1 200 -1 1 1 1 -1 -1 -1 -1 -1\n"  # unknown size
        "4 7 -1 -1 4 -1 -1 4 200 -1 1 1 1 -1 -1 -1 -1 -1\n"  # unknown runtime
        "5 8 -1 100 11 -1 -1 11 -1 -1 1 1 1 -1 -1 -1 -1 -1\n"  # no walltime
        "6 9 -1 100 300 -1 -1 300 300 -1 1 1 1 -1 -1 -1 -1 -1\n"  # 150 supernodes: larger than the machine
        "7 -1 -1 100 4 -1 -1 4 200 -1 1 1 1 -1 -1 -1 -1 -1\n"  # unknown submit time
    )
    workload = jobs_from_swf(read_swf(write(tmp_path, "; MaxNodes: 256\n" + lines)), 128, bgl_round)
    assert [job.job_id for job in workload.jobs] == [1, 2, 5]
    assert dict(workload.cleaning) == {
        "size_from_request": 1,
        "skipped_unknown_size": 1,
        "skipped_unknown_runtime": 1,
        "walltime_from_runtime": 1,
        "size_scaled": 4,  # jobs 1, 2, 5, 6: MaxNodes 256 on 128 supernodes
        "skipped_too_large": 1,
        "skipped_unknown_submit": 1,
    }
    assert [job.size for job in workload.jobs] == [2, 4, 6]  # 4, 8, 11 processors halved, rounded up
    assert workload.jobs[2].walltime == 100


def test_one_log_node_is_one_supernode_for_128_node_logs_and_odd_sizes_round_up(tmp_path):
    lines = "1 0 -1 100 11 -1 -1 11 150 -1 1 1 1 -1 -1 -1 -1 -1\n9 1 -1 50 300 -1 -1 300 150 -1 1 1 1 -1 -1 -1 -1 -1\n"
    workload = jobs_from_swf(read_swf(write(tmp_path, HEADER + lines)), 128, bgl_round)
    (job,) = workload.jobs
    assert (job.size, job.partition_size) == (11, 12)
    assert workload.cleaning["size_rounded_up"] == 1
    assert workload.cleaning["skipped_too_large"] == 1


def test_load_scale_multiplies_runtime_and_walltime(tmp_path):
    workload = jobs_from_swf(read_swf(write(tmp_path, HEADER + SDSC_LINES)), 128, bgl_round, load_scale=1.2)
    assert [job.runtime for job in workload.jobs] == pytest.approx([28826 * 1.2, 26171 * 1.2, 8071 * 1.2])
    assert workload.jobs[0].walltime == pytest.approx(28800 * 1.2)
    with pytest.raises(ConfigurationError):
        jobs_from_swf(read_swf(write(tmp_path, HEADER + SDSC_LINES)), 128, bgl_round, load_scale=0)


def test_out_of_order_submit_times_are_sorted_and_counted(tmp_path):
    lines = (
        "1 50 -1 10 1 -1 -1 1 20 -1 1 1 1 -1 -1 -1 -1 -1\n"
        "2 10 -1 10 1 -1 -1 1 20 -1 1 1 1 -1 -1 -1 -1 -1\n"
        "3 60 -1 10 1 -1 -1 1 20 -1 1 1 1 -1 -1 -1 -1 -1\n"
    )
    workload = jobs_from_swf(read_swf(write(tmp_path, HEADER + lines)), 128, bgl_round)
    assert [job.job_id for job in workload.jobs] == [2, 1, 3]
    assert workload.cleaning["reordered"] == 1


# -- the column-wise reader and cleaning against their line-at-a-time references ----------------

_TOKENS = ["0", "1", "-1", "7", "128", "3600", "2.5", "1e3", "-0", "+4", "1e11", "9007199254740993", "nan", "inf", "x", "0x10"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    lines=st.lists(
        st.one_of(
            st.lists(st.sampled_from(_TOKENS[:8]), min_size=18, max_size=18),  # valid lines
            st.lists(st.sampled_from(_TOKENS), min_size=16, max_size=19),  # maybe not
        ),
        max_size=12,
    ),
    chunk=st.sampled_from([50_000, 1, 3, 5]),
)
def test_reading_at_once_gives_the_line_by_line_table_or_the_same_error(tmp_path, lines, chunk):
    # chunk: job lines parsed at a time (issue 61: a chunk's text is all the reader holds); the table, the
    # line numbers and the first bad line named are the same whatever the chunk
    from torus_sim.inputs.workload import swf
    from torus_sim.inputs.workload.swf import _parse_line

    text = HEADER + "".join(" ".join(tokens) + "\n" for tokens in lines)
    path = write(tmp_path, text)
    numbered = [(HEADER.count("\n") + index + 1, " ".join(tokens)) for index, tokens in enumerate(lines)]
    kept, swf.CHUNK_LINES = swf.CHUNK_LINES, chunk
    try:
        try:
            expected = [_parse_line(path, line_no, line) for line_no, line in numbered]
        except WorkloadFormatError as error:
            with pytest.raises(WorkloadFormatError) as raised:
                read_swf(path)
            assert str(raised.value) == str(error)
            return
        trace = read_swf(path)
    finally:
        swf.CHUNK_LINES = kept
    assert trace.records == expected
    assert trace.line_numbers.tolist() == [line_no for line_no, _ in numbered]


_FIELD = st.sampled_from([-1, 0, 1, 2, 3, 5, 8, 100, 127, 128, 129, 300, 1000])
_TIME = st.sampled_from([-1.0, 0.0, 0.5, 1.0, 10.0, 59.5, 60.0, 3600.0, 7200.0])


@settings(max_examples=200, deadline=None)
@given(
    rows=st.lists(st.tuples(st.integers(1, 40), _TIME, _TIME, _FIELD, _FIELD, _TIME, st.integers(-1, 5)), max_size=30),
    max_nodes=st.sampled_from([None, 64, 128, 500]),
    capacity=st.sampled_from([64, 128, 300]),
    rules=st.sampled_from(sorted(SWF_RULES)),
    rounded=st.booleans(),
    load_scale=st.sampled_from([1.0, 0.7, 1.3]),
    max_jobs=st.sampled_from([None, 1, 5]),
    piece=st.sampled_from([None, 1, 3, 7]),
)
def test_column_cleaning_equals_the_line_by_line_rules(rows, max_nodes, capacity, rules, rounded, load_scale, max_jobs, piece):
    # piece: lines cleaned at a time, rows kept in memory before disk, rows read at a time (issue 61 §1: a long log is
    # cleaned piece by piece into columns on disk); None: the defaults. The jobs, ranks, counts and errors are the same
    from tests.reference import jobs_by_lines
    from torus_sim.core.errors import InputFileError
    from torus_sim.inputs.workload.jobs import SWF_RULES
    from torus_sim.inputs.workload.swf import SwfRecord, SwfTrace

    records = [
        SwfRecord(job, submit, -1.0, run, alloc, -1.0, -1.0, requested, wall, -1.0, 1, user, -1, -1, -1, -1, -1, -1.0)
        for job, submit, run, alloc, requested, wall, user in rows
    ]
    header = {} if max_nodes is None else {"MaxNodes": str(max_nodes)}
    trace = SwfTrace.from_records(Path("t.swf"), "", header, records)
    round_size = (lambda size: 1 << (size - 1).bit_length()) if rounded else None  # noqa: E731 (a stand-in rounding)
    usable, cleaning = jobs_by_lines(trace, capacity, round_size, load_scale, SWF_RULES[rules])
    ranked = sorted(range(len(usable)), key=lambda index: (usable[index][1], usable[index][0]))  # stable: file order in ties
    expected = [usable[index] for index in ranked][:max_jobs]
    if max_jobs is not None and max_jobs < len(usable):
        # the counts describe the lines read up to the last job kept (issue 30 row 22)
        last = max(ranked[:max_jobs])
        length = next(
            n
            for n in range(len(records) + 1)
            if len(
                jobs_by_lines(
                    SwfTrace.from_records(Path("t.swf"), "", header, records[:n]),
                    capacity,
                    round_size,
                    load_scale,
                    SWF_RULES[rules],
                )[0]
            )
            == last + 1
        )
        cleaning = jobs_by_lines(
            SwfTrace.from_records(Path("t.swf"), "", header, records[:length]), capacity, round_size, load_scale, SWF_RULES[rules]
        )[1]
    from torus_sim.core import disk_tables
    from torus_sim.inputs.workload import jobs as jobs_module

    saved = (jobs_module.PIECE_ROWS, jobs_module.CHUNK_ROWS, disk_tables.SPILL_ROWS)
    if piece is not None:
        jobs_module.PIECE_ROWS, jobs_module.CHUNK_ROWS, disk_tables.SPILL_ROWS = piece, piece + 1, piece
    try:
        workload = jobs_from_swf(trace, capacity, round_size, load_scale, max_jobs, SWF_RULES[rules])
        found = [(j.job_id, j.submitted_at, j.runtime, j.walltime, j.size, j.partition_size, j.user_id) for j in workload.jobs]
    except InputFileError as error:
        ids = [row[0] for row in expected]
        assert not expected or (len(set(ids)) < len(ids) and "appears again" in str(error))  # a run's job ids are unique
        return
    finally:
        jobs_module.PIECE_ROWS, jobs_module.CHUNK_ROWS, disk_tables.SPILL_ROWS = saved
    assert found == expected
    assert [job.rank for job in workload.jobs] == list(range(len(found)))
    assert workload.cleaning == cleaning


def test_a_log_read_with_the_cleanings_fields_gives_the_same_columns_and_workload():
    # issue 61 §1: a run keeps the 7 fields the cleaning reads (56 bytes a job, not 144); the same workload
    import numpy as np

    from torus_sim.inputs.workload.jobs import CLEANING_FIELDS

    whole = read_swf(BUNDLED_NASA_LOG)
    some = read_swf(BUNDLED_NASA_LOG, CLEANING_FIELDS)
    assert some.table.shape == (len(whole), len(CLEANING_FIELDS)) and some.header == whole.header
    assert np.array_equal(some.line_numbers, whole.line_numbers) and some.sha256 == whole.sha256
    for name in CLEANING_FIELDS:
        assert np.array_equal(some.column(name), whole.column(name)), name
    with pytest.raises(KeyError, match="read with the fields"):
        some.column("wait_time")
    with pytest.raises(ValueError, match="records need every one"):
        _ = some.records
    with pytest.raises(KeyError, match="not SWF fields"):
        read_swf(BUNDLED_NASA_LOG, ("job_id", "colour"))
    capacity, rules = 128, SWF_RULES["bgl-fault"]
    expected, got = jobs_from_swf(whole, capacity, rules=rules), jobs_from_swf(some, capacity, rules=rules)
    assert got.cleaning == expected.cleaning and got.header == expected.header
    for name in ("job_id", "submitted_at", "runtime", "walltime", "size", "partition_size", "user_id"):
        assert np.array_equal(got.jobs.column(name), expected.jobs.column(name)), name


def test_a_file_read_again_in_the_process_is_built_from_its_kept_columns_and_each_trace_is_its_own(tmp_path, monkeypatch):
    """read_swf keeps a file's parsed columns from its second read on (a sweep's worker, the tests); later reads of
    the same bytes parse nothing, and an edited file (the same size, written within the same clock tick) is read anew."""
    from torus_sim.inputs.workload import swf

    path = write(tmp_path, HEADER + SDSC_LINES)
    first, second = read_swf(path), read_swf(path)  # the second read keeps the columns
    parsed = []
    monkeypatch.setattr(swf, "_parse_table", lambda lines: parsed.append(len(lines)))  # None: the line by line parse
    third = read_swf(path)
    assert parsed == []  # built from the kept columns: nothing parsed
    for trace in (second, third):
        assert trace.records == first.records and trace.header == first.header and trace.sha256 == first.sha256
        assert trace.line_numbers.tolist() == first.line_numbers.tolist() == [5, 6, 7]
        assert trace.header_lines == first.header_lines
    third.header.pop("MaxNodes")  # a reader drops a header value (an impossible UnixStartTime): the next read has it
    assert read_swf(path).header_int("MaxNodes") == 128
    edited = SDSC_LINES.replace("28826", "28827")  # the same size, the same second: other bytes
    path.write_text(HEADER + edited)
    assert read_swf(path).records[0].run_time == 28827 and parsed == [3]
    assert len(swf._PARSED) <= swf.KEPT_LOGS


def test_the_kept_logs_are_few_and_small(tmp_path):
    from torus_sim.inputs.workload import swf

    for index in range(swf.KEPT_LOGS + 2):
        path = write(tmp_path, HEADER + SDSC_LINES.replace("   11 ", f"{index + 20:5d} "), name=f"log{index}.swf")
        read_swf(path), read_swf(path)
    assert len(swf._PARSED) == swf.KEPT_LOGS  # the least recently read left
    assert read_swf(path).records[0].job_id == swf.KEPT_LOGS + 21  # the last one is kept
    from torus_sim.inputs.workload.jobs import CLEANING_FIELDS

    assert swf.KEPT_LINES * (len(CLEANING_FIELDS) + 1) * 8 <= 16_000_000  # a kept log of a run's fields: 16 MB at most


def test_a_file_longer_than_the_kept_lines_is_parsed_each_time(tmp_path, monkeypatch):
    from torus_sim.inputs.workload import swf

    monkeypatch.setattr(swf, "KEPT_LINES", 2)
    path = write(tmp_path, HEADER + SDSC_LINES.replace("   11 ", "   91 "), name="long.swf")  # 3 job lines
    first = [read_swf(path) for _ in range(3)]
    assert all(trace.records == first[0].records for trace in first)
    assert not any(kept.chunks and kept.chunks[0]["job_id"][0] == 91 for kept in swf._PARSED.values())
