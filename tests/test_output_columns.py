"""Every column a run writes is described, with its unit, in torus_sim/outputs/output_columns.py, and docs/outputs.md is made from it."""

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from torus_sim.experiments.runner import Scenario, run
from torus_sim.outputs.output_columns import (
    JOB_COLUMNS,
    POWER_COLUMNS,
    SCENARIO_COLUMNS,
    SUMMARY_METRICS,
    describe,
    float_texts,
    outputs_markdown,
    shortest_float,
)

RUNS = {
    "torus": {"max_jobs": 150, "failures": "synthetic:20"},
    "torus, tie-break": {"max_jobs": 150, "failures": "synthetic:20", "policy": "tiebreak"},
    "cluster with fairness": {"platform": "cluster", "policy": "PV-EASY", "fairness": True, "max_jobs": 150},
    "torus with power accounting": {
        "max_jobs": 150,
        "failures": "synthetic:20",
        "power": True,
        "price": "tou:0.05:3",
        "power_cap": 0.8,
    },
    "torus with idle nodes switched off": {
        "max_jobs": 150,
        "failures": "synthetic:20",
        "power": True,
        "idle_off_after": 600,
        "boot_time": 120,
    },
    "rigid batch": {
        "platform": "cluster",
        "workload": "rigid",
        "mean_failure_probability": 0.3,
        "scenarios": 2,
        "policy": "R-LIST-0",
    },
    "rigid batch with power accounting": {
        "platform": "cluster",
        "workload": "rigid",
        "mean_failure_probability": 0.3,
        "scenarios": 2,
        "policy": "R-LIST-0",
        "power": True,
    },
}


@pytest.mark.parametrize("name", list(RUNS))
def test_every_column_and_metric_written_is_described(name):
    result = run(Scenario.make(name, **RUNS[name]))
    undocumented = [column for column in result.jobs.columns if describe(column, JOB_COLUMNS) is None]
    undocumented += [column for column in result.scenarios.columns if describe(column, SCENARIO_COLUMNS) is None]
    undocumented += [key for key in result.summary if describe(key, SUMMARY_METRICS) is None]
    undocumented += [column for column in result.power.columns if describe(column, POWER_COLUMNS) is None]
    assert not undocumented, f"{name}: describe these in torus_sim/outputs/output_columns.py: {undocumented}"
    for unit, meaning in [*JOB_COLUMNS.values(), *SCENARIO_COLUMNS.values(), *SUMMARY_METRICS.values(), *POWER_COLUMNS.values()]:
        assert meaning and isinstance(unit, str)


def test_docs_outputs_is_the_schemas_text():
    committed = (Path(__file__).resolve().parents[1] / "docs" / "outputs.md").read_text()
    assert committed == outputs_markdown(), "regenerate: python -m torus_sim.outputs.output_columns > docs/outputs.md"
    assert describe("tie_changed", SUMMARY_METRICS) is not None and describe("no_such_metric", SUMMARY_METRICS) is None


def test_a_table_written_piece_by_piece_is_the_same_bytes_as_written_whole():
    # issue 61: jobs.csv is written CSV_ROWS rows at a time (no whole text, no rounded copy of the table)
    import io

    import pandas as pd

    from torus_sim.outputs.output_columns import csv_writer

    table = pd.DataFrame(
        {
            "job_id": [3, 1, 2, 7, 5],
            "submitted_at": [0.0, 1.23456, 2.5, 1e9 + 0.0004, 7.0],
            "bounded_slowdown": [1.0, 1 / 3, 2.0, 10.5, 1.25],
            "resources": ["0-3", "", "4 7", "1", "2-5"],
        }
    )

    def written(rows, frame=table):
        buffer = io.BytesIO()
        csv_writer("jobs", frame, rows)(buffer)
        return buffer.getvalue()

    whole = written(10**6)
    assert whole.splitlines()[0] == b"job_id,submitted_at,bounded_slowdown,resources"
    assert b"1.235" in whole and b"0.3333333333333333" in whole  # times to the millisecond, the rest exact
    assert all(written(rows) == whole for rows in (1, 2, 3, 5))
    assert written(2, table.iloc[:0]) == whole.splitlines(keepends=True)[0]  # an empty table: its header


class _Pieces:
    """A table given as numpy pieces (what the record's job rows are: JobTableRows)."""

    def __init__(self, frame):
        self.frame_ = frame
        self.columns = list(frame.columns)
        self.dtypes = frame.dtypes

    def __len__(self):
        return len(self.frame_)

    def arrays(self, start, stop):
        return {name: self.frame_[name].to_numpy()[start:stop] for name in self.columns}


_FLOATS = st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from([-0.0, 0.0004, -0.0004, 1e16, 2.5e-7, 1460.0])


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(st.tuples(st.integers(-(2**63), 2**63 - 1), _FLOATS, _FLOATS, st.booleans()), max_size=25),
    piece=st.integers(1, 30),
)
def test_numeric_pieces_are_written_without_pandas_as_pandas_writes_them(rows, piece):
    # issue 61: jobs.csv from the record's columns, no DataFrame: the same bytes as pandas' to_csv of the table
    import io

    import pandas as pd

    from torus_sim.outputs.output_columns import csv_writer

    frame = pd.DataFrame(
        {
            "job_id": pd.array([row[0] for row in rows], dtype="int64"),
            "submitted_at": pd.array([row[1] for row in rows], dtype="float64"),  # seconds: to the millisecond
            "bounded_slowdown": pd.array([row[2] for row in rows], dtype="float64"),
            "flag": pd.array([row[3] for row in rows], dtype="bool"),
        }
    )

    def written(table, rows_at_a_time):
        buffer = io.BytesIO()
        csv_writer("jobs", table, rows_at_a_time)(buffer)
        return buffer.getvalue()

    assert written(_Pieces(frame), piece) == written(frame, 10**6)
    alone = frame[["bounded_slowdown"]]  # one column: an empty field alone on its line is quoted ("")
    assert written(_Pieces(alone), piece) == written(alone, 10**6)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.floats(allow_nan=True, allow_infinity=True),
            st.integers(-(10**16), 10**16).map(float),
            st.sampled_from([0.0, -0.0, 1e15, -1e15, 1e15 - 1, 0.5, 1460.0]),
        ),
        max_size=40,
    )
)
def test_float_texts_are_each_values_shortest_text(values):
    """The jobs.csv writer's column form: whole numbers in one numpy call, the same text as one value at a time."""
    array = np.array(values, dtype=np.float64)
    assert float_texts(array) == [shortest_float(value) if value == value else "" for value in array.tolist()]


def test_the_job_table_columns_are_declared_once_and_everything_else_is_made_from_them():
    """Issue 76: a jobs.csv column is one Column in torus_sim/core/job_columns.py; the engine's row, the record's order and
    types, the schema docs/outputs.md is made from and the rounding of times all come from it."""
    from torus_sim.core.job import Job
    from torus_sim.core.job_columns import (
        DERIVED,
        JOB_TABLE,
        PLATFORM,
        POWER,
        RECORDED,
        column_types,
        described,
        names,
        row_of,
    )
    from torus_sim.engine.record import COLUMN_TYPES
    from torus_sim.engine.record import JOB_COLUMNS as RECORD_ORDER

    assert len(set(names(JOB_TABLE))) == len(JOB_TABLE)
    assert RECORD_ORDER == names(RECORDED) and COLUMN_TYPES["jobs"] == column_types(RECORDED)
    assert JOB_COLUMNS == described(JOB_TABLE)
    assert all(column.attribute is None for column in DERIVED + POWER + PLATFORM)
    job = Job(7, 3.0, runtime=20.0, walltime=60.0, size=4, partition_size=8, user_id=2)
    job.arrive()
    job.start(5.0, 8)
    job.finish(25.0)
    row = row_of(job)
    assert row == tuple(getattr(job, column.attribute) for column in RECORDED)
    assert dict(zip(names(RECORDED), row, strict=True))["prediction"] == 60.0  # no predictor: the walltime
    job.prediction = 30.0
    assert dict(zip(names(RECORDED), row_of(job), strict=True))["prediction"] == 30.0
    result = run(Scenario(max_jobs=40, failures="none"))
    assert list(result.jobs.columns) == names(RECORDED) + names(DERIVED)
    powered = run(Scenario(max_jobs=40, failures="none", power=True))
    assert list(powered.jobs.columns) == names(RECORDED + DERIVED + POWER)
    divided = run(Scenario(platform="heterogeneous", node_types="a:128:1:1,b:16:1:1", max_jobs=40, failures="none", power=True))
    assert list(divided.jobs.columns) == names(JOB_TABLE)  # a platform of partitions adds its declared column
