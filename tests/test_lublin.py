"""The Lublin-Feitelson model as a built-in workload: seeded, the same jobs whatever reads them, the model's shapes."""

from __future__ import annotations

import numpy as np
import pytest

from torus_sim.core.errors import ConfigurationError
from torus_sim.experiments.runner import Scenario, run
from torus_sim.inputs.workload import lublin
from torus_sim.inputs.workload.jobs import CLEANING_FIELDS
from torus_sim.inputs.workload.lublin import BATCH, INTERACTIVE, lublin_chunks, lublin_table

COLUMN = {name: index for index, name in enumerate(CLEANING_FIELDS)}


def test_the_jobs_come_from_the_seed_and_a_prefix_is_the_shorter_run(monkeypatch):
    monkeypatch.setattr(lublin, "CHUNK_JOBS", 1000)  # several chunks, the last one partial
    long = lublin_table(3500, 256, seed=5)
    assert long.shape == (3500, len(CLEANING_FIELDS))
    np.testing.assert_array_equal(lublin_table(2345, 256, seed=5), long[:2345])
    np.testing.assert_array_equal(lublin_table(3500, 256, seed=5), long)
    assert not np.array_equal(lublin_table(3500, 256, seed=6), long)
    pieces = list(lublin_chunks(3500, 256, seed=5))
    assert [len(piece) for piece in pieces] == [1000, 1000, 1000, 500]


def test_the_jobs_have_the_models_shapes():
    processors = 128
    table = lublin_table(60_000, processors, seed=1)
    ids, submit = table[:, COLUMN["job_id"]], table[:, COLUMN["submit_time"]]
    sizes, runtimes = table[:, COLUMN["allocated_processors"]], table[:, COLUMN["run_time"]]
    assert np.array_equal(ids, np.arange(1, 60_001)) and (np.diff(submit) >= 0).all() and submit[0] > 0
    assert sizes.min() == 1 and sizes.max() <= processors and (sizes == np.round(sizes)).all()
    assert runtimes.min() >= 1 and runtimes.max() <= np.exp(12) and (runtimes == np.floor(runtimes)).all()
    # serial jobs: between the interactive and the batch jobs' probabilities (both types arrive)
    serial = np.mean(sizes == 1)
    assert INTERACTIVE.serial - 0.02 < serial < BATCH.serial + 0.02
    parallel = sizes[sizes > 1]
    power_of_two = np.mean(np.log2(parallel) == np.round(np.log2(parallel)))
    assert 0.6 < power_of_two < 0.9  # the pow2 share of the parallel jobs, plus the non-powers that round to one
    # the daily cycle: more arrivals in the day's busiest half than in its quietest
    hours = (submit % 86_400) // 3600
    per_hour = np.bincount(hours.astype(int), minlength=24)
    assert per_hour.max() > 2 * per_hour.min()
    # larger jobs run longer (the first gamma's share falls with the size)
    assert np.median(runtimes[sizes >= 32]) > np.median(runtimes[sizes == 1])


def test_it_runs_as_a_workload_with_its_parameters():
    scenario = Scenario(platform="cluster", nodes=64, workload="lublin", workload_params={"jobs": 800}, policy="FCFS-EASY")
    result = run(scenario.model_copy(update={"failures": "none"}))
    assert result.summary["jobs"] == 800 and result.inputs["workload"]["jobs"] == 800
    typeless = run(scenario.model_copy(update={"failures": "none", "workload_params": {"jobs": 800, "typed": False}}))
    assert typeless.summary["avg_wait_time"] != result.summary["avg_wait_time"]
    with pytest.raises(ConfigurationError, match="jobs must be a whole number"):
        run(scenario.model_copy(update={"failures": "none", "workload_params": {"jobs": 0}}))
