import numpy as np
import pandas as pd
import pytest

from torus_sim.errors import ConfigurationError
from torus_sim.metrics import bounded_slowdown, capacity_fractions


def test_standard_bounded_slowdown_is_max_over_max_with_gamma_10_seconds():
    response = np.array([140.0, 5.0, 30.0, 100.0])
    runtime = np.array([50.0, 2.0, 3.0, 100.0])
    assert bounded_slowdown(response, runtime).tolist() == [2.8, 1.0, 3.0, 1.0]


def test_printed_form_divides_by_the_min_as_bgl_fault_prints_it():
    response = np.array([140.0, 5.0, 30.0, 20.0])
    runtime = np.array([50.0, 2.0, 3.0, 0.0])
    assert bounded_slowdown(response, runtime, form="printed").tolist() == [14.0, 5.0, 10.0, 20.0]


def test_bad_bounded_slowdown_arguments_are_refused():
    with pytest.raises(ConfigurationError):
        bounded_slowdown(np.ones(1), np.ones(1), form="mean")
    with pytest.raises(ConfigurationError):
        bounded_slowdown(np.ones(1), np.ones(1), gamma=0)


def test_unused_capacity_integrates_free_minus_requested_over_the_piecewise_record():
    jobs = pd.DataFrame({"submitted_at": [0.0, 0.0], "finished_at": [10.0, 20.0], "size": [2, 1], "runtime": [10.0, 5.0]})
    capacity = pd.DataFrame(
        {
            "time": [0.0, 0.0, 10.0, 15.0, 20.0],  # two rows at t=0: only the last one holds
            "free": [4, 1, 2, 3, 4],
            "queued_demand": [0, 1, 3, 0, 0],
        }
    )
    fractions = capacity_fractions(jobs, capacity, n_supernodes=4)
    # [0,10): max(0, 1-1)=0; [10,15): max(0, 2-3)=0; [15,20): 3 -> 15 supernode-seconds of 80.
    assert fractions["span"] == 20
    assert fractions["omega_unused"] == pytest.approx(15 / 80)
    assert fractions["omega_util"] == pytest.approx((2 * 10 + 1 * 5) / 80)
    assert fractions["omega_lost"] == pytest.approx(1 - 25 / 80 - 15 / 80)
