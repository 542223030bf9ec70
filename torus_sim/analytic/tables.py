"""The CKPT-MIG slides' tables, recomputed and printed in the slides' layout."""

from __future__ import annotations

from torus_sim.analytic.ckpt_migration import (
    MINUTES,
    SCENARIOS,
    improvement_parallel,
    improvement_sequential,
    node_activity_migration,
    spares_needed,
    throughput_checkpoint_parallel,
    throughput_migration_parallel,
    throughput_periodic_parallel,
)

__all__ = ["capped_table", "scenario_table", "yield_table"]


def scenario_table(name: str) -> str:
    """One scenario table: % improvement of migration over checkpointing (spares), as the slides.

    Args:
        name: ``today``, ``2011`` or ``2015``.

    Returns:
        The table as aligned text.
    """
    scenario = SCENARIOS[name]
    lines = [
        f'Scenario "{name}" - C = {scenario.checkpoint:g}, R = {scenario.recovery:g}, D = {scenario.downtime:g}, M = {scenario.migration:g} (minutes)',
        f"{'mu':<8}{'N':<6}{'Sequential eps=1e-4':>22}{'eps=1e-6':>16}{'Parallel eps=1e-4':>22}{'eps=1e-6':>18}",
    ]
    for mu in ("day", "week", "month", "year"):
        for log_n in (14, 17, 20):
            cells = []
            for function in (improvement_sequential, improvement_parallel):
                for epsilon in (1e-4, 1e-6):
                    value, spares = function(MINUTES[mu], 2**log_n, epsilon, scenario)
                    cells.append(f"{value:.2f} ({spares})")
            label = f"1 {mu}" if log_n == 14 else ""
            lines.append(f"{label:<8}{'2^' + str(log_n):<6}{cells[0]:>22}{cells[1]:>16}{cells[2]:>22}{cells[3]:>18}")
    return "\n".join(lines)


def _yields(mu: float, nodes: int, max_job_size: int | None, epsilon: float) -> tuple[float, float, float]:
    scenario = SCENARIOS["2015"]
    spares = spares_needed(epsilon, nodes, node_activity_migration(mu, scenario.migration, scenario.downtime))
    values = (
        throughput_periodic_parallel(
            mu, scenario.checkpoint, scenario.recovery, scenario.downtime, nodes, max_job_size=max_job_size
        ),
        throughput_checkpoint_parallel(
            mu, scenario.recovery, scenario.checkpoint, scenario.downtime, nodes, max_job_size=max_job_size
        ),
        throughput_migration_parallel(mu, scenario.migration, scenario.downtime, nodes, spares, max_job_size=max_job_size),
    )
    return tuple(100.0 * value / nodes for value in values)


def yield_table(mu: str, epsilon: float = 1e-6) -> str:
    """Yield ρ/N of periodic checkpointing, preventive checkpointing and preventive migration, scenario 2015.

    Args:
        mu: ``month`` or ``year`` (any key of :data:`MINUTES`).
        epsilon: ε of the spares (1e-6 reproduces the slides).

    Returns:
        The table as aligned text.
    """
    lines = [f"mu = 1 {mu}", f"{'N':<8}{'per. chkpt.':>14}{'prev. chkpt.':>14}{'prev. mig.':>14}"]
    for log_n in (8, 11, 14, 17, 20):
        periodic, preventive, migration = _yields(MINUTES[mu], 2**log_n, None, epsilon)
        lines.append(f"{'2^' + str(log_n):<8}{periodic:>13.2f}%{preventive:>13.2f}%{migration:>13.2f}%")
    return "\n".join(lines)


def capped_table(mu: str, epsilon: float = 1e-6) -> str:
    """Yield ρ/N with job sizes capped at 2^20 .. 2^15 on N = 2^20, scenario 2015.

    Args:
        mu: ``month`` or ``year``.
        epsilon: ε of the spares.

    Returns:
        The table as aligned text.
    """
    lines = [f"N = 2^20, mu = 1 {mu}", f"{'max job size':<14}{'per. chkpt.':>14}{'prev. chkpt.':>14}{'prev. mig.':>14}"]
    for log_cap in (20, 19, 18, 17, 16, 15):
        periodic, preventive, migration = _yields(MINUTES[mu], 2**20, 2**log_cap, epsilon)
        lines.append(f"{'2^' + str(log_cap):<14}{periodic:>13.2f}%{preventive:>13.2f}%{migration:>13.2f}%")
    return "\n".join(lines)
