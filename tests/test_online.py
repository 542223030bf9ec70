"""Online replay (PV-EASY's set-up) on a slice of the real CTC-SP2 trace: the qualitative results CI asserts."""

from __future__ import annotations

import pytest

from tests.conftest import SHARED_DATA
from torus_sim.online import Preemption, load_online_workload, run_online
from torus_sim.online.model import Preemption as _Preemption

CTC = SHARED_DATA / "swf" / "CTC-SP2-1996-3.1-cln.swf.gz"


@pytest.fixture(scope="module")
def ctc_slice():
    if not CTC.exists():
        pytest.skip("CTC-SP2 trace not found")
    return load_online_workload(CTC, processors=430, max_jobs=3000)


@pytest.fixture(scope="module")
def results(ctc_slice):
    runs = {
        "EASY": ("FCFS-EASY", "estimate"),
        "EASY-Last": ("FCFS-EASY", "last"),
        "SJF-EASY": ("SJF-EASY", "estimate"),
        "PV-EASY": ("PV-EASY", "last"),
        "FCFS": ("FCFS", "estimate"),
    }
    return {name: run_online(ctc_slice, policy, predictor).summary for name, (policy, predictor) in runs.items()}


def test_pv_easy_is_strictly_fair_and_easy_is_not(results):
    assert results["PV-EASY"]["delayed_jobs"] == 0 and results["PV-EASY"]["blocked_jobs"] > 0
    assert results["EASY"]["delayed_jobs"] > 0


def test_easy_last_violates_reservations_and_neither_easy_nor_pv_easy_does(results):
    assert results["EASY-Last"]["violations"] > 0 and results["EASY-Last"]["mean_dtr_min"] > 0
    assert results["EASY"]["violations"] == 0  # estimates are kill times: a backfilled job cannot overrun
    assert results["PV-EASY"]["violations"] == 0


def test_pv_easy_wastes_little_and_preempts(results):
    assert 0 < results["PV-EASY"]["wasted_load"] < 0.10
    assert results["PV-EASY"]["preempted_jobs"] > 0 and results["PV-EASY"]["mkt"] >= 1


def test_backfilling_beats_plain_fcfs(results):
    assert results["EASY"]["mbs"] < results["FCFS"]["mbs"]
    assert results["FCFS"]["wasted_load"] == 0 and results["EASY"]["total_load"] == pytest.approx(
        results["FCFS"]["total_load"], rel=0.05
    )


def test_preemption_modes_keep_work_as_documented():
    kill, checkpoint, suspend = (_Preemption(mode, 3600.0, 60.0, 0.05) for mode in ("kill", "checkpoint", "suspend"))
    assert kill.segment_time(7200.0, True) == 7200.0 and kill.kept_work(5000.0, 7200.0, False) == 0.0
    assert checkpoint.segment_time(7200.0, False) == 7260.0  # one checkpoint between two hours of work
    assert checkpoint.kept_work(3700.0, 7200.0, False) == 3600.0 and checkpoint.kept_work(3600.0, 7200.0, False) == 0.0
    assert suspend.segment_time(1000.0, True) == pytest.approx(60.0 + 1050.0)
    assert suspend.kept_work(60.0 + 525.0, 1000.0, True) == pytest.approx(500.0)
    with pytest.raises(ValueError, match="preemption mode"):
        Preemption("pause")
