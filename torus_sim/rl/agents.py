"""Reference agents for :class:`~torus_sim.rl.env.SchedulingEnv`: FCFS, SJF, and a small policy-gradient learner.

The learner scores every visible job with one linear function of its slot features and the
platform's features (shared weights, as RLScheduler's kernel network scores jobs one by one) and
picks among the jobs that fit by a softmax of the scores; it never waits while something fits.
Trained with REINFORCE (Williams 1992) on whole episodes, with the mean return of the batch as
baseline. Plain numpy: no learning library is needed.

References:
    Williams, "Simple statistical gradient-following algorithms for connectionist reinforcement
    learning", Machine Learning 8, 1992; Zhang et al., RLScheduler, SC'20 (job-wise scoring).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from torus_sim.policies.learned import linear_probabilities
from torus_sim.rl.env import JOB_FEATURES, SchedulingEnv

__all__ = ["LinearSoftmaxAgent", "evaluate", "fcfs_agent", "sjf_agent", "train_reinforce"]


def fcfs_agent(observation: np.ndarray, mask: np.ndarray, env: SchedulingEnv) -> int:
    """Always the first waiting job (the FCFS policy: a wait when it does not fit)."""
    return 0


def sjf_agent(observation: np.ndarray, mask: np.ndarray, env: SchedulingEnv) -> int:
    """The visible job with the shortest walltime among those that fit (SJF with first-fit backfilling)."""
    jobs = _slots(observation, env)
    fits = mask[: env.queue_slots * env.placements : env.placements].astype(bool)
    if not fits.any():
        return env.action_space.n - 1
    walltimes = np.where(fits, jobs[:, JOB_FEATURES.index("walltime")], np.inf)
    return int(np.argmin(walltimes)) * env.placements


def _slots(observation: np.ndarray, env: SchedulingEnv) -> np.ndarray:
    per_slot = env.shape.per_slot
    return observation[: env.queue_slots * per_slot].reshape(env.queue_slots, per_slot)


@dataclass
class LinearSoftmaxAgent:
    """Scores each fitting job by ``w . [its features, the platform's features, 1]``; softmax over them.

    Attributes:
        weights: float ``(F + G + 1,)``.
        rng: the agent's generator (sampling while training).
    """

    weights: np.ndarray
    rng: np.random.Generator = field(default_factory=lambda: np.random.default_rng(0))

    @classmethod
    def for_env(cls, env: SchedulingEnv, seed: int = 0) -> LinearSoftmaxAgent:
        """A fresh agent sized for ``env`` (small random weights)."""
        per_slot = env.shape.per_slot
        size = per_slot + (env.observation_space.shape[0] - env.queue_slots * per_slot) + 1
        rng = np.random.default_rng(seed)
        return cls(rng.normal(0.0, 0.01, size), rng)

    def inputs(self, observation: np.ndarray, env: SchedulingEnv) -> np.ndarray:
        """Per slot: [job features, platform features, 1], float ``(K, F + G + 1)``."""
        return linear_probabilities(
            observation, np.ones(env.queue_slots, dtype=bool), self.weights, env.queue_slots, env.shape.per_slot
        )[1]

    def probabilities(self, observation: np.ndarray, mask: np.ndarray, env: SchedulingEnv) -> tuple[np.ndarray, np.ndarray]:
        """(probabilities over the K slots, zero where a job does not fit; the inputs).

        The scorer a saved agent runs with as a policy (:func:`torus_sim.policies.learned.linear_probabilities`).
        """
        fits = mask[: env.queue_slots * env.placements : env.placements].astype(bool)
        return linear_probabilities(observation, fits, self.weights, env.queue_slots, env.shape.per_slot)

    def act(self, observation: np.ndarray, mask: np.ndarray, env: SchedulingEnv, greedy: bool = True) -> int:
        """The chosen action (the best-scored fitting job, or a sample when not greedy); wait when nothing fits."""
        if not mask[:-1].any():
            return env.action_space.n - 1
        probabilities, _ = self.probabilities(observation, mask, env)
        slot = int(np.argmax(probabilities)) if greedy else int(self.rng.choice(len(probabilities), p=probabilities))
        return slot * env.placements


def evaluate(env: SchedulingEnv, agent, starts: list[int], seed: int = 0) -> list[float]:
    """Mean bounded slowdown of ``agent`` (a function ``(observation, mask, env) -> action``) on each window start."""
    results = []
    for start in starts:
        observation, info = env.reset(seed=seed, options={"start": start})
        done = False
        episode_return = 0.0
        while not done:
            observation, reward, terminated, truncated, info = env.step(agent(observation, info["action_mask"], env))
            episode_return += reward
            done = terminated or truncated
        results.append(-episode_return)
    return results


def train_reinforce(
    env: SchedulingEnv,
    agent: LinearSoftmaxAgent,
    epochs: int = 20,
    episodes_per_epoch: int = 8,
    learning_rate: float = 0.05,
    seed: int = 0,
    on_epoch=None,
) -> list[float]:
    """Train ``agent`` with REINFORCE on windows drawn by ``env`` (its ``start_range``).

    Args:
        env: the environment (``bsld`` reward).
        agent: the learner, changed in place.
        epochs: gradient steps.
        episodes_per_epoch: episodes per gradient step (their mean return is the baseline).
        learning_rate: step size on the normalized gradient.
        seed: seeds the episodes' windows.
        on_epoch: called with ``(epoch, mean bounded slowdown of the epoch's episodes)``.

    Returns:
        The mean bounded slowdown of each epoch's training episodes.
    """
    history = []
    episode_seed = seed
    for epoch in range(epochs):
        gradients, returns = [], []
        for _ in range(episodes_per_epoch):
            observation, info = env.reset(seed=episode_seed)
            episode_seed += 1
            gradient = np.zeros_like(agent.weights)
            total = 0.0
            done = False
            while not done:
                mask = info["action_mask"]
                if mask[:-1].any():
                    probabilities, x = agent.probabilities(observation, mask, env)
                    slot = int(agent.rng.choice(len(probabilities), p=probabilities))
                    gradient += x[slot] - probabilities @ x  # d log softmax / d w
                    action = slot * env.placements
                else:
                    action = env.action_space.n - 1
                observation, reward, terminated, truncated, info = env.step(action)
                total += reward
                done = terminated or truncated
            gradients.append(gradient)
            returns.append(total)
        baseline = float(np.mean(returns))
        step = sum((ret - baseline) * grad for ret, grad in zip(returns, gradients, strict=True)) / len(returns)
        norm = float(np.linalg.norm(step))
        if norm > 0:
            agent.weights += learning_rate * step / norm
        history.append(-baseline)
        if on_epoch is not None:
            on_epoch(epoch, -baseline)
    return history
