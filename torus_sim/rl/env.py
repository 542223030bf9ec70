"""A Gymnasium environment over the engine: a learning agent picks which waiting job starts next.

There is no second simulator: :class:`SchedulingEnv` builds the same
:class:`~torus_sim.engine.model.SchedulingModel` a run builds (platform, workload window, failures), sets
it to pause at every scheduling pass (``pause_at_passes``), and applies the agent's choices as the
pass's actions through the engine's own checks (:meth:`~torus_sim.engine.model.SchedulingModel.apply_action`).

Decision points: a pass where at least one of the first K waiting jobs can be placed now. The agent
sees the observation below and answers with an action in ``Discrete(K * M + 1)``: ``slot * M + m``
starts the waiting job in queue slot ``slot`` (FCFS order) on its m-th best allocation (m = 0: the
platform's default placement, MFP on the torus; m > 0 on the torus: the m-th partition by largest
free partition left, then id); ``K * M`` waits for the next event. A choice that names an empty slot,
a job that does not fit, or a missing allocation is a wait. After a start the agent is asked again
at the same instant while something still fits. Waiting while nothing runs would stall the machine
(no event would come): the environment then starts the first waiting job itself, as FCFS would
(``info["forced_starts"]``). ``info["action_mask"]`` marks the actions that start a job.

Observation (float32 in [0, 1], shape ``(K * 6 + 5 + S,)``): per slot, [present, size / capacity,
log-scaled walltime, time waited (1 - exp(-waited / 4 h)), fits now, predicted failure risk of its
default placement over its walltime (P_f = 1 - prod(1 - p_n), BGL-FAULT §5.2.1, from the scenario's
failure predictor: ``history`` by default, which learns from past failures only, so nothing leaks
the future)]; then [free nodes, down nodes, waiting beyond K / (K + waiting), time into the window,
largest free partition] as fractions; then S values: on the torus, the fraction of the partitions of
each feasible size that are free (S = number of sizes), on a cluster S = 0.

Reward (:mod:`torus_sim.rl.rewards`): ``bsld`` (default): minus the bounded slowdowns of the jobs that
completed since the last decision, divided by the window's job count (an episode's return is minus its
mean bounded slowdown); ``wait``, ``turnaround``; ``utilization``: the work (size x runtime) of the jobs
that completed since the last decision over capacity x the window's submission span (BGL-FAULT §6.1's
ω_util, credited as jobs complete); ``energy_cost``: minus the electricity cost of the attempts that
ended (with power accounting).

Episodes: a window of ``window`` consecutive jobs of the scenario's workload (an SWF log), starting
at a job drawn uniformly from the fraction ``start_range`` of the log (RLScheduler's sampling; keep
two disjoint ranges for training and held-back evaluation). Failures follow the scenario: none, a real
log fitted onto the whole workload's span once (each window meets the failures of its own period),
or ``synthetic:N`` (N failures drawn over each window's span with the episode's generator).

References:
    Zhang et al., "RLScheduler: an automated HPC batch job scheduler using reinforcement learning",
    SC'20 (windows of SWF logs, job-slot observations); Fan et al., "DRAS", IPDPS'21; BGL-FAULT §5.1-5.2, §6.
"""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from failure_logs.events import FailureLog
from torus_sim.core.errors import ConfigurationError
from torus_sim.engine import SchedulingModel  # the type of what window_model returns
from torus_sim.experiments.scenario import Scenario
from torus_sim.inputs.workload.jobs import JobColumns, Workload
from torus_sim.policies.agent_observation import (
    JOB_FEATURES,
    ObservationShape,
    feasible_size_counts,
    fitting_slots,
    job_feature,
    observe,
)
from torus_sim.policies.base import Policy, Start
from torus_sim.policies.placement import MFP
from torus_sim.policies.priority import BACKFILLING, PriorityPolicy
from torus_sim.rl.arguments import fractions as _fractions
from torus_sim.rl.arguments import integer as _integer
from torus_sim.rl.arguments import shown as _shown
from torus_sim.rl.arguments import whole as _whole
from torus_sim.rl.rewards import REWARD_FORMS

__all__ = ["INVALID_ACTIONS", "JOB_FEATURES", "REWARDS", "SchedulingEnv"]

INVALID_ACTIONS = ("wait", "raise", "penalty")
"""What a step does with an action its mask forbids: ``wait`` (the default: the agent waits for the next
event, as RLScheduler treats it), ``raise`` (a :class:`ConfigurationError` naming it: for debugging an agent)
or ``penalty`` (a wait, and ``invalid_penalty`` taken off the step's reward)."""

REWARDS = tuple(REWARD_FORMS)
"""The reward forms :class:`SchedulingEnv` offers (:mod:`torus_sim.rl.rewards`)."""


class _AgentSeat(Policy):
    """The policy seat the agent takes: the engine pauses at its passes; ``plan`` is never asked.

    It feeds the failure predictor of the risk feature with the failures as they happen.
    """

    name = "agent"

    def __init__(self, predictor) -> None:
        self.predictor = predictor

    def attach(self, context) -> None:
        """Attach the risk predictor to the run's failure log and generator (the policy's context)."""
        if self.predictor is not None:
            self.predictor.attach(context.failure_log, context.rng, context.platform.capacity)

    def observe_failure(self, at: float, node: int) -> None:
        """Pass a failure on to the risk predictor."""
        if self.predictor is not None:
            self.predictor.observe_failure(at, node)

    def plan(self, view):  # pragma: no cover - the engine pauses instead of asking
        """Never called: the environment applies the agent's actions."""
        raise RuntimeError("the agent's passes are driven by SchedulingEnv.step")


class SchedulingEnv(gym.Env):
    """Pick the next job to start on a torus or a cluster, over windows of a real SWF log, with failures.

    Args:
        scenario: the run's configuration (a :class:`~torus_sim.experiments.scenario.Scenario` or its fields as a
            dict): platform, SWF workload, failures, ``gamma`` of the bounded slowdown. Its policy is
            ignored (the agent is the policy).
        window: jobs per episode, >= 1.
        queue_slots: K, the waiting jobs the agent sees and chooses among, >= 1.
        placements: M, allocations offered per job (M > 1 only on the torus), >= 1.
        reward: the objective (:data:`REWARDS`): ``bsld`` (minus the completed jobs' bounded slowdowns over the
            window's job count: the return is minus the window's mean bounded slowdown), ``wait`` and
            ``turnaround`` (minus their waits, or submission-to-end times, in seconds over the job count),
            ``utilization`` (their size x runtime over capacity x the window's submission span),
            ``energy_cost`` (minus the ended attempts' energy cost under the run's tariff over the job count;
            needs ``power = true``; :mod:`torus_sim.rl.rewards`).
        job_features: extra per-job features appended to each slot, by name (built in: ``user``,
            ``predicted_runtime`` from the scenario's runtime predictor; more with
            :func:`~torus_sim.policies.agent_observation.register_job_feature`).
        reward_timing: ``step`` (each decision is rewarded for the jobs completed since the last) or
            ``episode`` (0 until the episode ends, then its whole return: RLScheduler's trajectory reward).
        start_range: ``(low, high)``, fractions of the log where a window may start, 0 <= low < high <= 1.
        max_decisions: an episode is truncated after this many decisions, >= 1 (default 50 x window).
        invalid_action: what an action the mask forbids does, one of :data:`INVALID_ACTIONS` (``wait``).
        invalid_penalty: taken off the reward of such a step under ``penalty``, >= 0.
        backfill: ``none`` (the agent's starts are the only ones, and only jobs that fit can be picked),
            ``easy`` or ``rlscheduler``: any visible job can be picked; one that does not fit is kept as the
            reserved job and the environment backfills around it (EASY's rule, or RLScheduler's: no extra
            nodes) at every pass until it starts, without asking the agent
            (:data:`~torus_sim.policies.priority.BACKFILLING`; RLScheduler and DRAS evaluate agents so).

    The valid actions are ``info["action_mask"]`` and :meth:`action_masks` (sb3-contrib's MaskablePPO
    calls the latter on the environment itself: no wrapper).

    Raises:
        ConfigurationError: a bad argument (named: a float or a bool where a whole number is expected,
            a number out of range), a batch workload, a window larger than the log, or the ``energy_cost``
            reward without power accounting.

    References:
        See the module docstring.
    """

    metadata = {"render_modes": []}

    def __init__(
        self,
        scenario: Scenario | dict | None = None,
        window: int = 256,
        queue_slots: int = 16,
        placements: int = 1,
        reward: str = "bsld",
        start_range: tuple[float, float] = (0.0, 1.0),
        max_decisions: int | None = None,
        invalid_action: str = "wait",
        invalid_penalty: float = 1.0,
        backfill: str = "none",
        reward_timing: str = "step",
        job_features: tuple = (),
    ) -> None:
        from failure_logs.sources import failure_source
        from torus_sim.experiments.model_builder import build_platform
        from torus_sim.experiments.run_inputs import load_failures, load_workload

        if isinstance(scenario, dict) or scenario is None:
            scenario = Scenario.make("SchedulingEnv", **(scenario or {}))
        if scenario.batch:
            raise ConfigurationError("SchedulingEnv replays windows of an online workload (an SWF log), not a batch")
        if not isinstance(reward, str) or reward not in REWARDS:
            raise ConfigurationError(f"reward must be one of {REWARDS}, got {reward!r}")
        if not isinstance(reward_timing, str) or reward_timing not in ("step", "episode"):
            raise ConfigurationError(f"reward_timing must be 'step' or 'episode', got {_shown(reward_timing)}")
        self.reward_timing = reward_timing
        self._pending = 0.0
        if not isinstance(invalid_action, str) or invalid_action not in INVALID_ACTIONS:
            raise ConfigurationError(f"invalid_action must be one of {INVALID_ACTIONS}, got {_shown(invalid_action)}")
        if (
            isinstance(invalid_penalty, bool)
            or not isinstance(invalid_penalty, (int, float))
            or not 0 <= invalid_penalty < math.inf
        ):
            raise ConfigurationError(f"invalid_penalty must be a number >= 0, got {_shown(invalid_penalty)}")
        self.invalid_action = invalid_action
        self.invalid_penalty = float(invalid_penalty)
        if not isinstance(backfill, str) or backfill not in BACKFILLING:
            raise ConfigurationError(f"backfill must be one of {BACKFILLING}, got {_shown(backfill)}")
        if backfill != "none" and placements != 1:
            raise ConfigurationError("backfill around the agent offers one placement per job: placements must be 1")
        self.backfill = backfill
        self._backfiller = PriorityPolicy("fcfs", backfill) if backfill != "none" else None
        self._committed = None
        window = _whole("window", window)
        queue_slots = _whole("queue_slots", queue_slots)
        placements = _whole("placements", placements)
        max_decisions = None if max_decisions is None else _whole("max_decisions", max_decisions)
        low, high = _fractions("start_range", start_range)
        self.scenario = scenario
        self.start_range = (low, high)
        self.workload = load_workload(scenario)
        jobs = self.workload.jobs
        if len(jobs) < window:
            raise ConfigurationError(f"the workload has {len(jobs)} jobs, fewer than a window of {window}")
        self.window = window
        self.queue_slots = queue_slots
        self.placements = placements if scenario.platform == "torus" else 1
        self.reward_form = reward
        self.max_decisions = max_decisions or 50 * window
        last_start = len(jobs) - window
        self._starts = (
            int(math.floor(low * last_start)),
            max(int(math.floor(low * last_start)) + 1, int(math.ceil(high * last_start))),
        )
        platform = build_platform(scenario, scenario.nodes or self.workload.processors or 1)
        self._capacity = platform if isinstance(platform, int) else platform.capacity
        self.power = None  # the power inputs (job watts, tariff) where the scenario accounts for power
        if getattr(REWARD_FORMS[reward], "needs_power", False) and not scenario.power:
            raise ConfigurationError(f"reward {reward} needs power accounting: power = true with a price (tou:0.05:3)")
        if scenario.power:
            from torus_sim.experiments.run_inputs import load_power

            ids = jobs.column("job_id") if isinstance(jobs, JobColumns) else [job.job_id for job in jobs]
            self.power = load_power(scenario, ids, self._capacity)
        spec = scenario.failure_spec
        self._failures_per_window = failure_source(spec, scenario.failures_params).generated
        self._failures = None if self._failures_per_window else load_failures(scenario, self._capacity, self.workload)[0]
        walltimes = jobs.column("walltime") if isinstance(jobs, JobColumns) else [job.walltime for job in jobs]
        if isinstance(job_features, str) or not all(callable(job_feature(name)) for name in job_features):
            raise ConfigurationError(f"job_features must be a sequence of feature names, got {_shown(job_features)}")
        users = jobs.column("user_id") if isinstance(jobs, JobColumns) else [job.user_id for job in jobs]
        self.shape = ObservationShape(
            queue_slots,
            self._capacity,
            max(float(np.max(walltimes)), 1.0),
            feasible_size_counts(platform),
            tuple(job_features),
            max(int(np.max(users)), 1),
        )
        self.observation_space = spaces.Box(0.0, 1.0, shape=(self.shape.length,), dtype=np.float32)
        self.action_space = spaces.Discrete(queue_slots * self.placements + 1)
        self.model: SchedulingModel | None = None
        self._mask_key: tuple | None = None
        self._mask_value: np.ndarray | None = None

    # -- gymnasium API ---------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Start an episode on a new window.

        Args:
            seed: seeds the environment's generator (window start, the model's seed): a whole number >= 0, or None.
            options: ``{"start": i}`` starts the window at job i of the log instead of drawing it; None.

        Returns:
            ``(observation, info)``; info has ``action_mask``, ``window_start``, ``time``.

        Raises:
            ConfigurationError: a seed, options or start of the wrong type or out of range (named).
        """
        if seed is not None and (_integer(seed) is None or _integer(seed) < 0):
            raise ConfigurationError(f"reset: seed must be a whole number >= 0 or None, got {seed!r}")
        if options is not None and not isinstance(options, dict):
            raise ConfigurationError(f"reset: options must be a dict such as {{'start': 0}} or None, got {options!r}")
        unknown = sorted(str(key) for key in (options or {}) if key != "start")
        if unknown:
            raise ConfigurationError(f"reset: unknown option {unknown[0]!r}; the options are: start")
        super().reset(seed=None if seed is None else _integer(seed))
        if options and "start" in options:
            start = _integer(options["start"])
            last = len(self.workload.jobs) - self.window
            if start is None or not 0 <= start <= last:
                raise ConfigurationError(f"reset: options['start'] must be a whole number in 0..{last}, got {options['start']!r}")
        else:
            start = int(self.np_random.integers(*self._starts))
        self.window_start = start
        self.model_seed = int(self.np_random.integers(2**31 - 1))
        self.model = self.window_model(start, self.model_seed)
        self._rows_seen = self._attempts_seen = 0
        self._mask_key = None
        self._fits_key = self._fits_value = None
        self._decisions = 0
        self._forced = 0
        self._committed = None
        self._backfilled = 0
        self._pending = 0.0
        self._span = self.model.workload.span
        self._advance()
        return self._observe(), self._info()

    def step(self, action):
        """Apply the agent's choice, then run the engine to the next decision point.

        Args:
            action: a whole number in ``0 .. K * M`` (Python or numpy integer; not a bool, a float or text).

        Returns:
            ``(observation, reward, terminated, truncated, info)``: terminated when every job of the
            window has completed; truncated after ``max_decisions``.

        Raises:
            ConfigurationError: before :meth:`reset`, or an action outside the action space (named).
        """
        model = self.model
        if model is None:
            raise ConfigurationError("call reset() before step()")
        number = _integer(action)
        if number is None or not 0 <= number < self.action_space.n:
            raise ConfigurationError(
                f"step: action must be a whole number in 0..{self.action_space.n - 1} (the action space "
                f"Discrete({self.action_space.n})), got {_shown(action)}"
            )
        action = number
        invalid = not self._mask()[action]
        if invalid and self.invalid_action == "raise":
            raise ConfigurationError(
                f"step: action {action} is not valid now (action_masks() / info['action_mask'] mark the valid ones; "
                f"invalid_action='raise')"
            )
        self._decisions += 1
        started = False
        if model.pass_open and action < self.action_space.n - 1:
            slot, choice = divmod(action, self.placements)
            queue = model.queue
            if slot < len(queue):
                job = queue[slot]
                allocation = self._allocation(job, choice)
                if allocation is not None:
                    model.apply_action(Start(job, allocation))
                    started = True
                elif self._backfiller is not None:  # kept until it fits; the environment backfills around it
                    self._committed = job
                    self._backfill()
                    started = True
        if model.pass_open and not started:
            self._wait()
        self._advance()
        reward = self._reward()
        terminated = not self._unfinished()
        truncated = not terminated and self._decisions >= self.max_decisions
        if self.reward_timing == "episode":  # held back until the episode ends
            self._pending += reward
            reward, self._pending = (self._pending, 0.0) if terminated or truncated else (0.0, self._pending)
        if invalid and self.invalid_action == "penalty":
            reward -= self.invalid_penalty
        return self._observe(), reward, terminated, truncated, {**self._info(), "invalid_action": invalid}

    def action_masks(self) -> np.ndarray:
        """The actions valid now, as booleans of shape ``(K * M + 1,)`` (the last, wait, always valid).

        The same as ``info["action_mask"]``; sb3-contrib's ``MaskablePPO`` reads it from the environment.

        Raises:
            ConfigurationError: before :meth:`reset`.
        """
        if self.model is None:
            raise ConfigurationError("call reset() before action_masks()")
        return self._mask().astype(bool)

    # -- engine ----------------------------------------------------------------------------

    def window_model(self, start: int, seed: int, policy: Policy | None = None) -> SchedulingModel:
        """The engine for the window of jobs ``start .. start + window - 1``, with the window's failures.

        Args:
            start: index of the window's first job in the log.
            seed: the model's seed (``model_seed`` of an episode).
            policy: None: the agent's seat (the engine pauses at every pass; what :meth:`reset` builds);
                a built policy: that policy schedules the same window with the same failures (baselines,
                :mod:`torus_sim.rl.baselines`), with the scenario's runtime predictor and event order.

        Returns:
            The model, not yet run.
        """
        from torus_sim.experiments.extensions import build_risk_predictor
        from torus_sim.experiments.model_builder import build_model
        from torus_sim.experiments.run_inputs import load_failures

        scenario = self.scenario
        jobs = [self.workload.jobs[i] for i in range(start, start + self.window)]
        workload = Workload(
            jobs,
            f"{self.workload.source} jobs {start}..{start + self.window - 1}",
            self.workload.sha256,
            self.workload.load_scale,
            header=self.workload.header,
            kind="online",
            processors=self.workload.processors or self._capacity,
        )
        if self._failures_per_window:
            failures = load_failures(scenario, self._capacity, workload)[0]
        else:
            failures = self._failures_in(workload.span)
        predictor = None
        if failures is not None and policy is None:
            predictor = build_risk_predictor(scenario)
        # the power inputs: power-aware baselines read them; idle nodes switched off boot in the window too
        inputs = {"workload": workload, "failures": failures, "uncovered": None, "power": self.power}
        # the agent's seat plans at every instant; a baseline policy keeps the scenario's event order
        own = {} if policy is not None else {"event_order": "instant"}
        model = build_model(
            scenario,
            inputs,
            policy=_AgentSeat(predictor) if policy is None else policy,
            seed=seed,
            record_fairness=False,
            **own,
        )
        model.pause_at_passes = policy is None
        if model.power_states is not None and policy is None:
            model.power_states.boots = {}  # the energy_cost reward reads each ended attempt's boot from it
        return model

    def _failures_in(self, span: tuple[float, float]):
        """The real log's failures from the window's first submission on (its own period), or None."""
        log = self._failures
        if not isinstance(log, FailureLog):
            return log
        keep = log.failed_at >= span[0]
        return FailureLog(log.failed_at[keep], log.supernodes[keep], log.repair_at[keep], log.source, log.sha256, log.counts)

    def _unfinished(self) -> bool:
        model = self.model
        return model.completed < len(model.run_jobs)

    def _advance(self) -> None:
        """Run events until a decision point (an open pass where a visible job fits) or the end."""
        model = self.model
        while True:
            if model.pass_open and self._committed is not None:
                job = self._committed
                allocation = model.view.place(job) if job in model.queue else None
                if allocation is not None:
                    model.apply_action(Start(job, allocation))
                if allocation is not None or job not in model.queue:
                    self._committed = None
                    continue
                self._backfill()
            if model.pass_open:
                if self._choices_exist():
                    return
                self._close()
                if model.pass_open:  # a forced start left the pass open: look at it again
                    continue
            if not model.step_event():
                return

    def _wait(self) -> None:
        """The agent waits: close the pass, unless nothing runs and the head fits (then start it, as FCFS)."""
        model = self.model
        queue = model.queue
        if queue and not model.running_jobs:
            allocation = model.view.place(queue.head)
            if allocation is not None:
                model.apply_action(Start(queue.head, allocation))
                self._forced += 1
                return
        self._close()

    def _close(self) -> None:
        model = self.model
        if model.queue and not model.running_jobs:
            allocation = model.view.place(model.queue.head)
            if allocation is not None:  # never leave the machine stalled
                model.apply_action(Start(model.queue.head, allocation))
                self._forced += 1
                if self._choices_exist():
                    return
        model.close_pass()

    def _backfill(self) -> None:
        """Backfill around the kept job (each start applied before the next is looked at), then close the pass."""
        model = self.model
        for action in self._backfiller.backfill_around(model.view, self._committed):
            model.apply_action(action)
            self._backfilled += 1
        model.close_pass()

    def _choices_exist(self) -> bool:
        return bool(self._mask()[:-1].any())

    def _allocation(self, job, choice: int):
        view = self.model.view
        if choice == 0:
            return view.place(job)
        candidates = self._ranked_partitions(job)
        return int(candidates[choice]) if choice < len(candidates) else None

    def _ranked_partitions(self, job) -> np.ndarray:
        """Free partitions of the job's size on the torus, MFP's choice first, then by largest free partition left."""
        platform = self.model.platform
        table = platform.table
        words = platform.words()
        candidates = table.free_ids_of_size(words, job.partition_size)
        if len(candidates) <= 1:
            return candidates
        first = MFP.choose(table, job, candidates, words, self.model.now)
        blocked = platform.blocked()
        scores = []
        for partition_id in candidates[: 4 * self.placements]:
            trial = blocked.copy()
            trial[table.members[partition_id]] = True
            scores.append((-table.mfp(table.pack(trial)), int(partition_id)))
        ordered = [first] + [pid for _, pid in sorted(scores) if pid != first]
        return np.asarray(ordered[: self.placements], dtype=np.int64)

    # -- observation, mask, reward ------------------------------------------------------------

    def _mask(self) -> np.ndarray:
        """The actions that start a job now (and the wait), cached until the engine moves."""
        model = self.model
        key = (model.moves, model.pass_open)
        if key == self._mask_key:
            return self._mask_value
        mask = self._compute_mask()
        self._mask_key, self._mask_value = key, mask
        return mask

    def _compute_mask(self) -> np.ndarray:
        model = self.model
        mask = np.zeros(self.action_space.n, dtype=np.int8)
        mask[-1] = 1
        if not model.pass_open:
            return mask
        fits = self._fits()
        if self._backfiller is not None:  # any visible job may be picked: one that does not fit is reserved for
            mask[: len(fits)] = 1
            return mask
        for slot, fit in enumerate(fits):
            if not fit:
                continue
            if self.placements == 1:
                mask[slot] = 1
            else:
                job = model.queue[slot]
                mask[slot * self.placements : slot * self.placements + len(self._ranked_partitions(job))] = 1
        return mask

    def _fits(self) -> list[bool]:
        """Whether each visible waiting job fits now (an open pass), cached like the mask until the engine moves."""
        model = self.model
        key = model.moves
        if key != self._fits_key:
            self._fits_key = key
            self._fits_value = fitting_slots(model.queue, self.queue_slots, model.platform.free_count(), model.view.open_sizes())
        return self._fits_value

    def _observe(self) -> np.ndarray:
        model = self.model
        fits = self._fits() if model.pass_open else [False] * min(len(model.queue), self.queue_slots)
        return observe(
            self.shape,
            model.now,
            model.queue,
            model.platform,
            model.down_count(),
            fits,
            model.view.place,
            model.policy.predictor,
            self._span,
        )

    def _info(self) -> dict:
        model = self.model
        return {
            "action_mask": self._mask(),
            "window_start": self.window_start,
            "time": model.now,
            "completed": model.completed,
            "waiting": len(model.queue),
            "decisions": self._decisions,
            "forced_starts": self._forced,
            "backfilled": self._backfilled,
        }

    def _reward(self) -> float:
        """The objective's share (the ``reward`` argument, :data:`~torus_sim.rl.rewards.REWARD_FORMS`) since the last decision."""
        return REWARD_FORMS[self.reward_form](self)
