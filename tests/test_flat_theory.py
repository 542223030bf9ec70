"""Theory checks on random instances (Hypothesis): capacity, precedence and the proven ratios.

- every heuristic: never more than P processors busy, attempts of a job never overlap, each job
  runs f_j + 1 times, and the makespan is at least L(f) (RIGID Eq. 3-6);
- GREEDY (R-LIST-0) never exceeds (2 - 1/P) L(f) (RIGID Proposition 2, whose proof bounds the
  makespan by the lower bound L(f), not only by the optimum);
- LPA-LIST never exceeds r L'(J, f) with r = 2 (roofline), 3 (communication), 4 (Amdahl),
  6 (mix) (MOLDABLE Theorems 1-4; Lemma 2's proof uses only A(f, p) <= α A' and
  t_max(f, p) <= β t'_max, so the bound holds against L').
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from torus_sim.experiments.batch import run_moldable, run_rigid
from torus_sim.experiments.scenario import RIGID_POLICIES as RIGID_HEURISTICS
from torus_sim.inputs.workload.batch import RigidJobSet
from torus_sim.inputs.workload.speedup import AmdahlModel, CommunicationModel, MixModel, RooflineModel
from torus_sim.metrics.bounds import moldable_lower_bound, rigid_lower_bound
from torus_sim.policies.rigid import PRIORITY_RULES


@st.composite
def rigid_instances(draw):
    total = draw(st.integers(1, 12))
    count = draw(st.integers(1, 8))
    runtimes = draw(st.lists(st.integers(1, 20), min_size=count, max_size=count))
    processors = draw(st.lists(st.integers(1, total), min_size=count, max_size=count))
    failures = draw(st.lists(st.integers(0, 3), min_size=count, max_size=count))
    return RigidJobSet(np.array(runtimes, dtype=float), np.array(processors)), total, np.array(failures)


def check_schedule(table, total: int, failures: np.ndarray) -> None:
    assert table.groupby("job_id").size().reindex(range(len(failures))).tolist() == (failures + 1).tolist()
    dates = sorted(set(table.started_at))
    for date in dates:
        running = table[(table.started_at <= date) & (table.ended_at > date)]
        assert running.nodes.sum() <= total
    for _, attempts in table.sort_values("started_at").groupby("job_id"):
        assert np.all(attempts.started_at.to_numpy()[1:] >= attempts.ended_at.to_numpy()[:-1])
        assert (attempts.outcome == "silent_error").tolist() == [True] * (len(attempts) - 1) + [False]


@settings(max_examples=60, deadline=None)
@given(rigid_instances(), st.sampled_from(RIGID_HEURISTICS), st.sampled_from(PRIORITY_RULES))
def test_every_heuristic_respects_capacity_precedence_and_the_lower_bound(instance, heuristic, priority):
    jobs, total, failures = instance
    result = run_rigid(jobs, total, failures, heuristic, priority, record_attempts=True)
    check_schedule(result.attempt_table, total, failures)
    assert result.makespan >= rigid_lower_bound(jobs.runtimes, jobs.processors, failures, total) * (1 - 1e-12)


@settings(max_examples=150, deadline=None)
@given(rigid_instances(), st.sampled_from(PRIORITY_RULES))
def test_greedy_is_within_two_minus_one_over_p_of_the_lower_bound(instance, priority):
    jobs, total, failures = instance
    makespan = run_rigid(jobs, total, failures, "R-LIST-0", priority).makespan
    assert makespan <= (2 - 1 / total) * rigid_lower_bound(jobs.runtimes, jobs.processors, failures, total) * (1 + 1e-12)


RATIOS = {"roofline": 2, "communication": 3, "amdahl": 4, "mix": 6}


@st.composite
def moldable_instances(draw):
    name = draw(st.sampled_from(sorted(RATIOS)))
    total = draw(st.integers(2, 48))
    count = draw(st.integers(1, 6))
    work = np.array(draw(st.lists(st.floats(10, 1e4), min_size=count, max_size=count)))
    bar_p = np.array(draw(st.lists(st.integers(1, total), min_size=count, max_size=count)), dtype=float)
    gamma = np.array(draw(st.lists(st.floats(0, 0.5), min_size=count, max_size=count)))
    overhead = np.array(draw(st.lists(st.floats(0, 5), min_size=count, max_size=count)))
    model = {
        "roofline": lambda: RooflineModel(work, bar_p),
        "communication": lambda: CommunicationModel(work, overhead),
        "amdahl": lambda: AmdahlModel(work, gamma),
        "mix": lambda: MixModel(work, gamma, bar_p, overhead),
    }[name]()
    failures = np.array(draw(st.lists(st.integers(0, 3), min_size=count, max_size=count)))
    return name, model.times(total), failures


@settings(max_examples=150, deadline=None)
@given(moldable_instances(), st.sampled_from(["LPT", "HPA", "LA"]))
def test_lpa_list_is_within_its_proven_ratio_of_the_loose_lower_bound(instance, priority):
    name, times, failures = instance
    makespan = run_moldable(times, failures, "LPA", priority).makespan
    assert makespan <= RATIOS[name] * moldable_lower_bound(times, failures) * (1 + 1e-9)


@settings(max_examples=40, deadline=None)
@given(moldable_instances(), st.sampled_from(["LPA", "BATCH", "MINTIME", "MINAREA"]))
def test_every_moldable_algorithm_respects_capacity_and_precedence(instance, algorithm):
    _, times, failures = instance
    result = run_moldable(times, failures, algorithm, record_attempts=True)
    check_schedule(result.attempt_table, times.shape[1], failures)
    assert result.makespan >= moldable_lower_bound(times, failures) * (1 - 1e-12)
