"""The analytic yield model of preventive checkpointing versus preventive migration (CKPT-MIG).

Cappello, Casanova, Robert, *Checkpointing versus migration for post-petascale machines*
(CCGSC 2010 slides). One function per formula, each citing its slide. Times may be in any one unit,
the same for every argument (the slides' tables use minutes): C checkpoint, R recovery, D downtime,
M migration, μ the mean time to failure of one node. N is the number of nodes, n the number of
spare nodes held back for migration.

Reading of the garbled parameters (as issue 6 fixes it): scenario "2015" is C = 0.21, R = C / 10 =
0.021, D = 0.25, M = 0.33 minutes; "today" C = R = 10, D = 1, M = 0.33; "2011" C = R = 5, D = 1,
M = 0.33; a month is 30 days, a year 365 days.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import gamma
from scipy.stats import binom

from torus_sim.core.errors import ConfigurationError

__all__ = [
    "MINUTES",
    "SCENARIOS",
    "Scenario",
    "improvement_parallel",
    "improvement_sequential",
    "job_size_probabilities",
    "mean_time_to_failure_of_jobs",
    "node_activity_checkpoint",
    "node_activity_migration",
    "periodic_waste",
    "periodic_waste_capped",
    "spares_needed",
    "steady_state_job_counts",
    "success_probability",
    "throughput_checkpoint",
    "throughput_checkpoint_parallel",
    "throughput_migration",
    "throughput_migration_parallel",
    "throughput_periodic_parallel",
    "viable_mtbf",
    "young_period",
]

MINUTES = {"day": 24 * 60.0, "week": 7 * 24 * 60.0, "month": 30 * 24 * 60.0, "year": 365 * 24 * 60.0}
"""The slides' MTTF values μ in minutes (a month is 30 days)."""


@dataclass(frozen=True)
class Scenario:
    """Resilience costs of one technology scenario, in minutes (CKPT-MIG, "Scenarios" slides).

    Attributes:
        name: the slide's label.
        checkpoint: C.
        recovery: R.
        downtime: D.
        migration: M.
    """

    name: str
    checkpoint: float
    recovery: float
    downtime: float
    migration: float


SCENARIOS = {
    "today": Scenario("today", 10.0, 10.0, 1.0, 0.33),
    "2011": Scenario("2011", 5.0, 5.0, 1.0, 0.33),
    "2015": Scenario("2015", 0.21, 0.021, 0.25, 0.33),
}
"""The three scenarios of the slides (see the module docstring for the reading of "2015")."""


def _positive(**values: float) -> None:
    for name, value in values.items():
        if not value > 0 or not math.isfinite(value):
            raise ConfigurationError(f"{name} must be a positive number, got {value}")


def node_activity_checkpoint(mu: float, recovery: float, checkpoint: float, downtime: float) -> float:
    """Probability that a node is doing useful work under preventive checkpointing.

    Args:
        mu: mean time to failure μ > 0.
        recovery: R > 0.
        checkpoint: C > 0.
        downtime: D > 0.

    Returns:
        u_c = max(0, (μ - R - C) / (μ + D)).

    Raises:
        ConfigurationError: a non-positive argument.

    References:
        CKPT-MIG, "Checkpointing" slide (sequential jobs).
    """
    _positive(mu=mu, recovery=recovery, checkpoint=checkpoint, downtime=downtime)
    return max(0.0, (mu - recovery - checkpoint) / (mu + downtime))


def node_activity_migration(mu: float, migration: float, downtime: float) -> float:
    """Probability that a node is doing useful work under preventive migration.

    Args:
        mu: μ > 0.
        migration: M > 0.
        downtime: D > 0.

    Returns:
        u_m = max(0, (μ - M) / (μ + D)).

    Raises:
        ConfigurationError: a non-positive argument.

    References:
        CKPT-MIG, "Migration (1/2)" slide.
    """
    _positive(mu=mu, migration=migration, downtime=downtime)
    return max(0.0, (mu - migration) / (mu + downtime))


def throughput_checkpoint(mu: float, recovery: float, checkpoint: float, downtime: float, nodes: int) -> float:
    """Platform throughput of sequential jobs with preventive checkpointing: ρ_c = u_c N.

    Args:
        mu: node MTTF μ > 0 (any time unit, the same for every argument).
        recovery: R > 0.
        checkpoint: C > 0.
        downtime: D > 0.
        nodes: N, a positive integer.

    Returns:
        Nodes doing useful work on average.

    Raises:
        ConfigurationError: a non-positive argument.

    References:
        CKPT-MIG, "Checkpointing" slide.
    """
    return node_activity_checkpoint(mu, recovery, checkpoint, downtime) * _nodes(nodes)


def throughput_migration(mu: float, migration: float, downtime: float, nodes: int, spares: int) -> float:
    """Platform throughput of sequential jobs with preventive migration: ρ_m = u_m (N - n).

    Args:
        mu: node MTTF μ > 0.
        migration: M > 0.
        downtime: D > 0.
        nodes: N.
        spares: n, the nodes held back as migration targets.

    Returns:
        Nodes doing useful work on average.

    Raises:
        ConfigurationError: a non-positive time or N.
        ConfigurationError: ``spares`` outside [0, N].

    References:
        CKPT-MIG, "Migration (1/2)" slide.
    """
    nodes = _nodes(nodes)
    if not 0 <= spares <= nodes:
        raise ConfigurationError(f"spares must lie in [0, N = {nodes}], got {spares}")
    return node_activity_migration(mu, migration, downtime) * (nodes - spares)


def _nodes(nodes: int) -> int:
    if int(nodes) != nodes or nodes < 1:
        raise ConfigurationError(f"N must be a positive integer, got {nodes}")
    return int(nodes)


def success_probability(spares: int, nodes: int, activity: float) -> float:
    """Probability that at most ``spares`` of N nodes are down at once: success(n).

    Args:
        spares: n >= 0.
        nodes: N.
        activity: u_m, the probability that a node is up.

    Returns:
        sum_{k=0}^{n} C(N, k) u_m^(N-k) (1 - u_m)^k, the binomial CDF.

    References:
        CKPT-MIG, "Migration (2/2)" slide.
    """
    return float(binom.cdf(spares, _nodes(nodes), 1.0 - activity))


def spares_needed(epsilon: float, nodes: int, activity: float) -> int:
    """The number of spares n = α(ε, N): the smallest n with success(n) >= 1 - ε.

    Args:
        epsilon: ε in (0, 1).
        nodes: N.
        activity: u_m in [0, 1].

    Returns:
        n, solved numerically (the binomial quantile, checked against the CDF).

    Raises:
        ConfigurationError: ε outside (0, 1) or u_m outside [0, 1].

    References:
        CKPT-MIG, "Migration (2/2)" slide ("Solve numerically").
    """
    if not 0.0 < epsilon < 1.0:
        raise ConfigurationError(f"ε must lie in (0, 1), got {epsilon}")
    if not 0.0 <= activity <= 1.0:
        raise ConfigurationError(f"u_m must lie in [0, 1], got {activity}")
    nodes = _nodes(nodes)
    spares = int(binom.ppf(1.0 - epsilon, nodes, 1.0 - activity))
    while spares > 0 and success_probability(spares - 1, nodes, activity) >= 1.0 - epsilon:
        spares -= 1
    while success_probability(spares, nodes, activity) < 1.0 - epsilon:
        spares += 1
    return spares


def _levels(nodes: int) -> int:
    nodes = _nodes(nodes)
    levels = nodes.bit_length() - 1
    if 1 << levels != nodes or levels < 1:
        raise ConfigurationError(f"the job-size distribution needs N = 2^Z with Z >= 1, got N = {nodes}")
    return levels


def job_size_probabilities(nodes: int, sequential: float = 0.25, max_job_size: int | None = None) -> np.ndarray:
    """The two-stage log-uniform job-size distribution biased to powers of two.

    Args:
        nodes: N = 2^Z.
        sequential: p_1, the probability that a job is sequential, in [0, 1].
        max_job_size: cap the job size at 2^Zmax <= N (the slides' "capped job sizes"); N when None.

    Returns:
        α_j for j = 0..Zmax, float64 ``(Zmax + 1,)``: α_0 = p_1, α_j = (1 - p_1) / Zmax.

    Raises:
        ConfigurationError: N or the cap not a power of two (>= 2), the cap above N, or p_1
            outside [0, 1].

    References:
        CKPT-MIG, "Distribution (1/3)" slide; Feitelson's two-stage log-uniform model.
    """
    levels = _levels(nodes)
    if max_job_size is not None:
        cap = _levels(max_job_size)
        if cap > levels:
            raise ConfigurationError(f"the job-size cap {max_job_size} exceeds N = {nodes}")
        levels = cap
    if not 0.0 <= sequential <= 1.0:
        raise ConfigurationError(f"p_1 must lie in [0, 1], got {sequential}")
    return np.r_[sequential, np.full(levels, (1.0 - sequential) / levels)]


def steady_state_job_counts(nodes: int, sequential: float = 0.25, max_job_size: int | None = None) -> tuple[float, np.ndarray]:
    """Expected number of running jobs in steady state (every processor busy).

    Args:
        nodes: N = 2^Z.
        sequential: p_1.
        max_job_size: cap on job sizes (see :func:`job_size_probabilities`).

    Returns:
        ``(K, beta)``: K total jobs and β_j = α_j K jobs of 2^j processors, with sum 2^j β_j = N.

    References:
        CKPT-MIG, "Distribution (2/3)" and "(3/3)" slides: N / K = p_1 + (1 - p_1)(2N - 2) / Z.
    """
    alpha = job_size_probabilities(nodes, sequential, max_job_size)
    sizes = 2.0 ** np.arange(len(alpha))
    total = nodes / float(np.dot(sizes, alpha))
    return total, alpha * total


def mean_time_to_failure_of_jobs(mu: float, nodes: int, distribution: str = "exponential", shape: float = 1.0) -> np.ndarray:
    """μ_j, the mean time to the first failure of a job on 2^j nodes, j = 0..Z.

    Args:
        mu: node MTTF μ > 0 (for Weibull, the node's mean, from which the scale follows).
        nodes: N = 2^Z.
        distribution: ``exponential`` or ``weibull``.
        shape: Weibull shape a > 0.

    Returns:
        float64 ``(Z + 1,)``. Exponential: μ / 2^j. Weibull with shape a and mean μ (scale
        λ = μ / Γ(1 + 1/a)): the minimum of 2^j such variables is Weibull with scale λ 2^(-j/a),
        so μ_j = μ 2^(-j/a).

    Raises:
        ConfigurationError: unknown distribution or non-positive μ or shape.

    References:
        CKPT-MIG, "Failures" slide. The slide prints μ_j = λ Γ(1 + 1/(a 2^j)) for Weibull, which
        is not the mean of a minimum of Weibull variables; the standard result is used here.
    """
    _positive(mu=mu, shape=shape)
    levels = _levels(nodes)
    j = np.arange(levels + 1)
    if distribution == "exponential":
        return mu / 2.0**j
    if distribution == "weibull":
        scale = mu / gamma(1.0 + 1.0 / shape)
        return scale * 2.0 ** (-j / shape) * gamma(1.0 + 1.0 / shape)
    raise ConfigurationError(f"distribution must be exponential or weibull, got {distribution!r}")


def _busy_nodes_and_mttf(mu, nodes, sequential, mu_jobs, max_job_size) -> tuple[np.ndarray, np.ndarray]:
    """Nodes held by jobs of each size in steady state (β_j 2^j) and those jobs' MTTF μ_j, j = 0..Zmax."""
    _, beta = steady_state_job_counts(nodes, sequential, max_job_size)
    mu_j = mean_time_to_failure_of_jobs(mu, nodes) if mu_jobs is None else np.asarray(mu_jobs, dtype=np.float64)
    return beta * 2.0 ** np.arange(len(beta)), mu_j[: len(beta)]


def throughput_checkpoint_parallel(
    mu: float,
    recovery: float,
    checkpoint: float,
    downtime: float,
    nodes: int,
    sequential: float = 0.25,
    mu_jobs: np.ndarray | None = None,
    max_job_size: int | None = None,
) -> float:
    """Platform throughput of parallel jobs with preventive checkpointing.

    Args:
        mu: node MTTF μ.
        recovery: R.
        checkpoint: C.
        downtime: D.
        nodes: N = 2^Z.
        sequential: p_1.
        mu_jobs: μ_j per level (exponential μ / 2^j when None).
        max_job_size: cap on job sizes (the slides' "capped job sizes" table).

    Returns:
        ρ_cp = sum_j β_j 2^j max(0, (μ_j - R - C) / (μ_j + D)).

    References:
        CKPT-MIG, "Checkpointing" slide of "Parallel jobs".
    """
    _positive(recovery=recovery, checkpoint=checkpoint, downtime=downtime)
    busy, mu_j = _busy_nodes_and_mttf(mu, nodes, sequential, mu_jobs, max_job_size)
    activity = np.maximum(0.0, (mu_j - recovery - checkpoint) / (mu_j + downtime))
    return float(np.sum(busy * activity))


def throughput_migration_parallel(
    mu: float,
    migration: float,
    downtime: float,
    nodes: int,
    spares: int,
    sequential: float = 0.25,
    mu_jobs: np.ndarray | None = None,
    max_job_size: int | None = None,
) -> float:
    """Platform throughput of parallel jobs with preventive migration and n spares.

    Returns:
        ρ_mp = (sum_j β_j 2^j max(0, (μ_j - M) / (μ_j + D))) x (N - n) / N.

    References:
        CKPT-MIG, "Migration" slide of "Parallel jobs".
    """
    _positive(migration=migration, downtime=downtime)
    nodes = _nodes(nodes)
    if not 0 <= spares <= nodes:
        raise ConfigurationError(f"spares must lie in [0, N = {nodes}], got {spares}")
    busy, mu_j = _busy_nodes_and_mttf(mu, nodes, sequential, mu_jobs, max_job_size)
    activity = np.maximum(0.0, (mu_j - migration) / (mu_j + downtime))
    return float(np.sum(busy * activity)) * (nodes - spares) / nodes


def improvement_sequential(mu: float, nodes: int, epsilon: float, scenario: Scenario) -> tuple[float, int]:
    """Percentage improvement of preventive migration over preventive checkpointing, sequential jobs.

    Returns:
        ``(100 (ρ_m / ρ_c - 1), n)`` with n = α(ε, N) spares.

    References:
        CKPT-MIG, "Scenarios" and scenario tables (sequential columns).
    """
    activity = node_activity_migration(mu, scenario.migration, scenario.downtime)
    spares = spares_needed(epsilon, nodes, activity)
    checkpoint = throughput_checkpoint(mu, scenario.recovery, scenario.checkpoint, scenario.downtime, nodes)
    migration = throughput_migration(mu, scenario.migration, scenario.downtime, nodes, spares)
    return 100.0 * (migration / checkpoint - 1.0), spares


def improvement_parallel(
    mu: float, nodes: int, epsilon: float, scenario: Scenario, sequential: float = 0.25
) -> tuple[float, int]:
    """Percentage improvement of preventive migration over preventive checkpointing, parallel jobs.

    The spares are those of sequential jobs ("Probability of success: same as for independent jobs").

    Returns:
        ``(100 (ρ_mp / ρ_cp - 1), n)``.

    References:
        CKPT-MIG, scenario tables (parallel columns).
    """
    activity = node_activity_migration(mu, scenario.migration, scenario.downtime)
    spares = spares_needed(epsilon, nodes, activity)
    checkpoint = throughput_checkpoint_parallel(mu, scenario.recovery, scenario.checkpoint, scenario.downtime, nodes, sequential)
    migration = throughput_migration_parallel(mu, scenario.migration, scenario.downtime, nodes, spares, sequential)
    return 100.0 * (migration / checkpoint - 1.0), spares


def young_period(checkpoint: float, mu: float) -> float:
    """Young's checkpoint period T_opt = sqrt(2 C μ).

    Args:
        checkpoint: C > 0.
        mu: μ > 0, in the same unit.

    Returns:
        The period, in that unit.

    Raises:
        ConfigurationError: a non-positive argument.

    References:
        CKPT-MIG, "Optimal period T (1/3)" slide; Young, CACM 1974.
    """
    _positive(checkpoint=checkpoint, mu=mu)
    return math.sqrt(2.0 * checkpoint * mu)


def periodic_waste(mu: float, checkpoint: float, recovery: float, downtime: float) -> float:
    """Minimum expected fraction of time wasted by periodic checkpointing at Young's period.

    Returns:
        W_min = (R + D) / μ + sqrt(2 C / μ) (may exceed 1).

    References:
        CKPT-MIG, "Optimal period T (2/3)" slide, Eq. (2).
    """
    _positive(mu=mu, checkpoint=checkpoint, recovery=recovery, downtime=downtime)
    return (recovery + downtime) / mu + math.sqrt(2.0 * checkpoint / mu)


def periodic_waste_capped(mu: float, checkpoint: float, recovery: float, downtime: float) -> float:
    """W*_min = min(W_min, 1), the wasted fraction capped at everything.

    Args:
        mu: μ > 0.
        checkpoint: C > 0.
        recovery: R > 0.
        downtime: D > 0.

    Returns:
        A fraction in (0, 1].

    References:
        CKPT-MIG, "Optimal period T (3/3)" slide.
    """
    return min(periodic_waste(mu, checkpoint, recovery, downtime), 1.0)


def viable_mtbf(checkpoint: float, recovery: float, downtime: float) -> float:
    """The smallest μ with W_min <= 1: 1 / ν_b², ν_b = (-sqrt(2C) + sqrt(2C + 4(R + D))) / (2 (R + D)).

    Args:
        checkpoint: C > 0.
        recovery: R > 0.
        downtime: D > 0.

    Returns:
        μ in the unit of the arguments.

    Raises:
        ConfigurationError: a non-positive argument.

    References:
        CKPT-MIG, "Optimal period T (3/3)" slide.
    """
    _positive(checkpoint=checkpoint, recovery=recovery, downtime=downtime)
    nu = (-math.sqrt(2.0 * checkpoint) + math.sqrt(2.0 * checkpoint + 4.0 * (recovery + downtime))) / (
        2.0 * (recovery + downtime)
    )
    return 1.0 / nu**2


def throughput_periodic_parallel(
    mu: float,
    checkpoint: float,
    recovery: float,
    downtime: float,
    nodes: int,
    sequential: float = 0.25,
    mu_jobs: np.ndarray | None = None,
    max_job_size: int | None = None,
) -> float:
    """Platform throughput of parallel jobs with periodic checkpointing: sum_j (1 - W*_min(j)) 2^j β_j.

    References:
        CKPT-MIG, "Platform throughput" slide (μ_j in Eq. (2) gives W*_min(j)).
    """
    busy, mu_j = _busy_nodes_and_mttf(mu, nodes, sequential, mu_jobs, max_job_size)
    kept = np.array([1.0 - periodic_waste_capped(m, checkpoint, recovery, downtime) for m in mu_j])
    return float(np.sum(kept * busy))
