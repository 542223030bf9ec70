"""Power-aware window scheduling: the jobs of a window of the queue chosen by their power and the price.

After the schedulers of Yang, Zhou, Wallace, Lan, Tang, Coghlan and Papka, "Integrating dynamic pricing
of electricity into energy aware scheduling for HPC systems" (SC'13) and Zhou, Lan, Tang and Desai,
"Reducing energy costs for IBM Blue Gene/P via power-aware job scheduling" (JSSPP'13): rather than
starting jobs one by one from the front of the queue, each pass looks at a *window* of the first
``window`` waiting jobs (FCFS order: a job enters the window only after every job ahead of it, the
papers' fairness rule) and starts a subset of them:

* ``selection="knapsack"`` (JSSPP'13's 0-1 knapsack): the subset that uses the most nodes without
  exceeding the free nodes and, in on-peak hours, the power budget (``budget`` x the machine's busy
  draw N x busy_w, less what is drawn now); exact over the subsets of the window (2^window, window <= 16),
  ties broken by lower power, then by the earlier jobs.
* ``selection="greedy"`` (SC'13's greedy): the window's jobs in order of power per node, lowest first in
  on-peak hours and highest first off-peak, each started when it fits (nodes, and the budget on-peak).

On-peak means the price now is above the lowest price of the next 24 hours (the tariff's
:meth:`~torus_sim.inputs.energy.tariffs.Tariff.breakpoints`); off-peak the budget does not apply. The machine is
never left idle with work that fits: when nothing runs and nothing was chosen, the first window job that
fits starts whatever the budget. Passes happen at arrivals and ends, and, while jobs wait, at each change
of price (``passes_at_price_changes``: a job held by the on-peak budget starts when off-peak hours begin,
not at the next arrival or end). The draw now is
N x idle_w plus each running job's allocated nodes x (its watts per node - idle_w): down nodes are counted
at the idle draw (an upper bound when ``node_down_w`` <= idle). A job whose own draw exceeds the whole
budget still starts off-peak. The policy needs power accounting (``power = true``): the job powers, the
node figures and the tariff are the run's (:class:`torus_sim.experiments.run_inputs.PowerInputs`).

What is ours, not the papers': their text is not in ../shared/seeds; the window, the knapsack's objective
(nodes) and the budget follow JSSPP'13's abstract and summaries of it; the defaults (window 10, budget
0.75) are ours until the reproduction (issue 45 §5) reads theirs. The budget must exceed the idle share
(idle_w / busy_w, 0.5 with the machines' assumed idle draw), else nothing could start on-peak (refused).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from torus_sim.core.errors import ConfigurationError
from torus_sim.policies.base import Policy, Start
from torus_sim.policies.power_cap import BudgetBackfill
from torus_sim.policies.power_draw import added_draw, job_watts, machine_draw, on_peak, run_power

__all__ = [
    "SELECTIONS",
    "PowerWindowPolicy",
    "added_draw",
    "job_watts",
    "knapsack_subset",
    "machine_draw",
    "on_peak",
    "run_power",
]

SELECTIONS = ("knapsack", "greedy")
"""How a window's jobs are chosen (module docstring)."""

MAX_WINDOW = 16
"""The largest window the exact knapsack enumerates (2^16 subsets)."""


@lru_cache(maxsize=MAX_WINDOW + 1)
def _subset_bits(count: int) -> np.ndarray:
    """Every subset of ``count`` jobs as a row of 0/1 (``2^count x count``), job 0 the highest bit (made once per count)."""
    masks = np.arange(1 << count, dtype=np.int64)
    return ((masks[:, None] >> np.arange(count - 1, -1, -1)) & 1).astype(float)


def knapsack_subset(sizes: list[int], powers: list[float], free: int, headroom: float) -> tuple[int, ...]:
    """The 0-1 knapsack of JSSPP'13: which jobs use the most nodes within the free nodes and the power headroom.

    Args:
        sizes: nodes of each job of the window, in queue order (at most :data:`MAX_WINDOW` jobs).
        powers: what each job adds to the machine's draw, watts, same order.
        free: free nodes now.
        headroom: watts the budget leaves (infinite off-peak).

    Returns:
        Indices of the chosen jobs, in queue order: the most nodes; among those, the least power; then
        the subset that holds the earliest jobs (job 0 weighs more than all later ones together).
        Exact: every subset is evaluated (vectorized).
    """
    count = len(sizes)
    if count == 0:
        return ()
    bits = _subset_bits(count)
    nodes = bits @ np.asarray(sizes, dtype=float)
    power = bits @ np.asarray(powers, dtype=float)
    feasible = (nodes <= free) & (power <= headroom)
    if not feasible[1:].any():
        return ()
    candidates = np.flatnonzero(feasible)
    best_nodes = nodes[candidates].max()
    candidates = candidates[nodes[candidates] == best_nodes]
    candidates = candidates[power[candidates] == power[candidates].min()]
    chosen = int(candidates.max())  # the largest mask holds the earliest jobs
    return tuple(i for i in range(count) if (chosen >> (count - 1 - i)) & 1)


class PowerWindowPolicy(Policy):
    """Start a subset of a window of the queue chosen by job power and the electricity price (module docstring).

    Args:
        backfill: after the window's starts, EASY backfilling inside the on-peak budget (the first waiting
            job gets a reservation where its nodes and its watts are free; others start only where they
            leave both: :class:`~torus_sim.policies.power_cap.BudgetBackfill`); False (the default): only
            the window's choice starts.
        window: how many jobs from the front of the queue are considered at each pass (1 to 16).
        selection: ``knapsack`` or ``greedy``.
        budget: the on-peak power budget as a share of the machine's busy draw N x busy_w, in (0, 1], above
            the idle share idle_w / busy_w.
        placement: which nodes a job gets (MFP on a torus, lowest free ids on a cluster when None).

    Raises:
        ConfigurationError: a parameter out of its domain; at the run's start, a run without power accounting.

    References:
        SC'13 (Yang et al.), JSSPP'13 (Zhou et al.); see the module docstring for what is ours.
    """

    workloads = ("online",)
    passes_at_price_changes = True

    def __init__(
        self, window: int = 10, selection: str = "knapsack", budget: float = 0.75, placement=None, backfill: bool = False
    ) -> None:
        if not isinstance(window, int) or isinstance(window, bool) or not 1 <= window <= MAX_WINDOW:
            raise ConfigurationError(f"power-window: window must be a whole number from 1 to {MAX_WINDOW}, got {window!r}")
        if selection not in SELECTIONS:
            raise ConfigurationError(f"power-window: selection must be one of {', '.join(SELECTIONS)}, got {selection!r}")
        if not isinstance(budget, (int, float)) or isinstance(budget, bool) or not 0 < budget <= 1:
            raise ConfigurationError(f"power-window: budget must be a share in (0, 1] of the machine's busy draw, got {budget!r}")
        if not isinstance(backfill, bool):
            raise ConfigurationError(f"power-window: backfill must be true or false, got {backfill!r}")
        self.window, self.selection, self.budget = window, selection, float(budget)
        self.placement = placement
        self.backfill = backfill
        self._backfiller = None
        self.name = f"power-window-{selection}"
        self._power = None
        self._nodes = 0

    def settings(self) -> str:
        """Window, selection and budget in words (a run's header)."""
        behind = ", EASY backfilling inside the budget behind the window" if self.backfill else ""
        return f"window {self.window}, {self.selection}, on-peak budget {self.budget:g} x the busy draw{behind}"

    def attach(self, context) -> None:
        """Take the run's power inputs (job watts, node figures, tariff); refuse a run without them."""
        super().attach(context)
        self._power = run_power(context, "power-window")
        self._nodes = context.platform.capacity
        node = self._power.node
        if self.budget * node.busy_w <= node.idle_w:
            raise ConfigurationError(
                f"power-window: the on-peak budget {self.budget:g} x {node.busy_w:,.0f} W per node is not above the idle draw "
                f"({node.idle_w:,.0f} W): nothing could start on-peak; give a larger budget (policy parameter budget)"
            )
        if self.backfill:
            self._backfiller = BudgetBackfill(self.budget, self.placement)
            self._backfiller.attach(context)

    def on_peak(self, now: float, clock_start_hour: float) -> bool:
        """Whether the price at ``now`` is above the lowest price of the next 24 hours (:func:`on_peak`)."""
        return on_peak(self._power.tariff, now, clock_start_hour)

    def draw(self, view) -> float:
        """The machine's draw now, watts (down nodes at the idle draw)."""
        return machine_draw(self._power, self._nodes, view.running.values())

    def plan(self, view):
        """Choose within the window (module docstring) and start the chosen jobs that the platform can place."""
        window = view.queue.jobs()[: self.window]
        if not window:
            return
        peak = self.on_peak(view.now, self._power.clock_start_hour)
        headroom = self.budget * self._nodes * self._power.node.busy_w - self.draw(view) if peak else float("inf")
        watts = [job_watts(self._power, job) for job in window]
        powers = [added_draw(self._power, job, job.partition_size) for job in window]
        if self.selection == "knapsack":
            chosen = [
                window[i] for i in knapsack_subset([job.partition_size for job in window], powers, view.free_count(), headroom)
            ]
        else:
            order = sorted(range(len(window)), key=lambda i: (watts[i] if peak else -watts[i], i))
            chosen, free = [], view.free_count()
            for i in order:
                if window[i].partition_size <= free and powers[i] <= headroom:
                    chosen.append(window[i])
                    free -= window[i].partition_size
                    headroom -= powers[i]
        started = False
        for job in chosen:
            allocation = view.place(job, placement=self.placement)
            if allocation is not None:
                started = True
                yield Start(job, allocation)
        if not started and not view.running:  # never idle with work that fits: the first job that fits starts
            for job in window:
                allocation = view.place(job, placement=self.placement)
                if allocation is not None:
                    yield Start(job, allocation)
                    break
        if self._backfiller is not None:  # EASY inside the budget behind the window
            yield from self._backfiller.plan(view)
