"""Golden values: today's outputs on real inputs, pinned before the one-engine refactor (issue 13).

``tests/golden/values.json`` was written by the code at the commit it names (``captured_at_commit``),
before any of the refactor: the torus replays (``torus-sim run`` and its variants), the online
CTC-SP2 replays, the rigid reference-code set in ``tests/golden/rigid/`` (written by ``torus-sim flat
generate-rigid --seed 13``) and reduced RIGID / MOLDABLE experiment sets. Every number must come out
identical (floats compared exactly); a change believed to be a fix is its own commit, with the old and
new values in its message. Never regenerate the file to make a failing test pass.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from .conftest import SHARED_DATA

GOLDEN = json.loads((Path(__file__).parent / "golden" / "values.json").read_text())
RIGID_FILES = Path(__file__).parent / "golden" / "rigid"
SDSC = SHARED_DATA / "swf" / "SDSC-SP2-1998-4.2-cln.swf.gz"
CTC = SHARED_DATA / "swf" / "CTC-SP2-1996-3.1-cln.swf.gz"
LANL = SHARED_DATA / "failures" / "lanl" / "LA-UR-05-7318-failure-data-1996-2005.csv.xz"

needs_shared = pytest.mark.skipif(not (SDSC.exists() and CTC.exists()), reason=f"needs the logs under {SHARED_DATA}")


def digest(rows) -> str:
    """SHA-256 of the rows written one per line, values by repr (so every bit of every float counts)."""
    text = "\n".join(" ".join(repr(value) for value in row) for row in rows)
    return hashlib.sha256(text.encode()).hexdigest()


def same_summary(ours: dict, pinned: dict) -> None:
    """Every pinned key has exactly the pinned value (NaN equal to NaN)."""
    different = {
        key: (ours.get(key), value)
        for key, value in pinned.items()
        if not (ours.get(key) == value or (value != value and ours.get(key) != ours.get(key)))
    }
    assert not different, f"changed (ours, pinned): {different}"


def torus_run(**fields):
    from torus_sim.experiments.runner import Scenario, run

    result = run(Scenario(**fields))
    jobs = result.jobs.sort_values("job_id")
    rows = ((int(r.job_id), float(r.started_at), float(r.finished_at), int(r.kills)) for r in jobs.itertuples())
    return result.summary, digest(rows)


def test_torus_sim_run_default_is_unchanged():
    summary, jobs_digest = torus_run()
    same_summary(summary, GOLDEN["torus_default"]["summary"])
    assert jobs_digest == GOLDEN["torus_default"]["jobs_digest"]


@needs_shared
def test_sdsc_with_4000_synthetic_failures_seed_1_is_unchanged():
    summary, jobs_digest = torus_run(workload=str(SDSC), failures="synthetic:4000", seed=1)
    pinned = GOLDEN["torus_sdsc_synthetic4000_seed1"]
    same_summary(summary, pinned["summary"])
    assert jobs_digest == pinned["jobs_digest"]


def _resolve(fields: dict) -> dict:
    """Input paths are stored as ``shared-data:<path under ../shared/data>``."""
    return {
        key: str(SHARED_DATA / value.removeprefix("shared-data:")) if str(value).startswith("shared-data:") else value
        for key, value in fields.items()
    }


@needs_shared
@pytest.mark.parametrize("name", sorted(GOLDEN["torus_variants"]))
def test_torus_variants_are_unchanged(name):
    pinned = GOLDEN["torus_variants"][name]
    # pinned before reduced runs kept the failure rate (2026-11-25): their 8,000-job prefixes met every failure
    summary, jobs_digest = torus_run(reduced_failures="count", **_resolve(pinned["config"]))
    same_summary(summary, pinned["summary"])
    assert jobs_digest == pinned["jobs_digest"]


ONLINE_KEYS = sorted(key for key in GOLDEN if key.startswith("ctc_"))


@needs_shared
@pytest.mark.parametrize("name", ONLINE_KEYS)
def test_online_ctc_replays_are_unchanged(name):
    from torus_sim.experiments.runner import Scenario, run

    pinned = GOLDEN[name]
    scenario = Scenario(
        platform="cluster",
        nodes=pinned["processors"],
        workload=str(CTC),
        max_jobs=pinned["max_jobs"],
        policy=pinned["policy"],
        runtime_predictor=None if pinned["predictor"] == "estimate" else pinned["predictor"],
        preemption=pinned["preemption"],
        time_cost=pinned["time_cost"],
        seed=pinned["seed"],
        **({"easy_extra": pinned["easy_extra"]} if "easy_extra" in pinned else {}),
    )
    result = run(scenario)
    same_summary(result.summary, pinned["summary"])
    # the shadow-load reading of strict fairness, the default before, still gives the values pinned then
    from torus_sim.metrics import summarize_record

    same_summary(summarize_record(result.record, None, scenario.gamma, scenario.bsld_form, "shadow"), pinned["summary_shadow"])
    table = result.jobs.sort_values("job_id")
    rows = ((int(r.job_id), float(r.first_started_at), float(r.finished_at), int(r.preemptions)) for r in table.itertuples())
    assert digest(rows) == pinned["jobs_digest"]


def test_rigid_reference_code_set_makespans_are_unchanged():
    from torus_sim.experiments.runner import Scenario, run

    for key, pinned in GOLDEN["rigid_refcode"].items():
        heuristic, priority = key.split("/")
        scenario = Scenario(
            platform="cluster",
            workload=f"refcode:{RIGID_FILES / 'jobs.txt'}",
            silent_errors=str(RIGID_FILES / "failures.txt"),
            policy=heuristic,
            priority=priority,
        )
        assert run(scenario).scenarios.makespan.tolist() == pinned, key


@pytest.mark.parametrize("kind", ["rigid", "moldable"])
def test_reduced_rigid_and_moldable_sets_are_unchanged(kind):
    from torus_sim.experiments.batch import run_set

    pinned = GOLDEN[f"{kind}_reduced"]
    rows = run_set(kind, pinned["grid"], pinned["scenarios"], pinned["seed"], pinned["set"])
    keys = list(pinned["rows"][0])
    assert [{key: row[key] for key in keys} for row in rows] == pinned["rows"]


def test_the_tight_batch_allotment_still_gives_the_values_pinned_before_0_3():
    from torus_sim.experiments.batch import run_set

    pinned = GOLDEN["moldable_reduced"]
    grid = {**pinned["grid"], "algorithm": ["BATCH"]}
    rows = run_set(
        "moldable", grid, pinned["scenarios"], pinned["seed"], pinned["set"], {"allotment": "exact", "area_slack": 1.0}
    )
    expected = GOLDEN["moldable_reduced_tight_batch"]["rows"]
    assert [{key: row[key] for key in expected[0]} for row in rows] == expected
