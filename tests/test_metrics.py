import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from torus_sim.core.errors import ConfigurationError
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


@settings(max_examples=200, deadline=None)
@given(
    values=st.lists(
        st.one_of(st.floats(allow_infinity=False, allow_nan=False, width=64), st.just(float("nan")), st.just(0.1)),
        max_size=3000,
    ),
    piece=st.sampled_from([1, 128, 200, 1000, 1 << 16]),
)
def test_sums_and_means_by_pieces_have_the_bits_of_the_whole_arrays(values, piece):
    """Issue 61 §1: the summary sums a piece at a time where numpy's pairwise sum splits: the same bits as one sum."""
    import torus_sim.metrics.pieces as summary
    from torus_sim.metrics.online import series_mean

    array = np.array(values, dtype=np.float64)
    saved, summary.PIECE_ROWS = summary.PIECE_ROWS, piece
    try:
        finite = np.where(np.isnan(array), 0.0, array)
        total = summary.pairwise_sum(len(finite), lambda first, last: finite[first:last])
        mean = summary.mean_by_pieces(len(array), lambda first, last: array[first:last])
        flipped = array[::-1].copy()
        both = (
            summary.means_by_pieces(len(array), lambda first, last: (array[first:last], flipped[first:last]))
            if len(array)
            else None
        )
    finally:
        summary.PIECE_ROWS = saved
    assert np.float64(total).tobytes() == finite.sum().tobytes() or (np.isnan(total) and np.isnan(finite.sum()))
    expected = series_mean(array)
    assert np.float64(mean).tobytes() == np.float64(expected).tobytes() or (np.isnan(mean) and np.isnan(expected))
    if both is not None:  # several series from one read of each piece: each its own mean
        for found, values in zip(both, (array, flipped), strict=True):
            own = series_mean(values)
            assert np.float64(found).tobytes() == np.float64(own).tobytes() or (np.isnan(found) and np.isnan(own))


def test_a_long_sum_by_pieces_has_the_bits_of_numpys():
    rng = np.random.default_rng(3)
    import torus_sim.metrics.pieces as summary

    for count in (129, 65_537, 1_000_003):
        array = rng.standard_normal(count) * 10.0 ** rng.integers(-5, 12, count)
        assert summary.pairwise_sum(count, lambda first, last, values=array: values[first:last]) == array.sum()
