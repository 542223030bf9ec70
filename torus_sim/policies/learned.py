"""A trained agent as a policy: at every pass of any run, the choices it makes in SchedulingEnv.

``torus-sim run --policy learned --policy-param agent=PATH`` (or ``[policy] policy = "learned"`` with
``[policy.params] agent = "PATH"``) runs an agent saved by ``python -m torus_sim.rl.train``
(``weights.json``: the linear softmax scorer) or exported from Stable-Baselines3 by
``python -m torus_sim.rl.sb3`` (``policy.npz``: the actor network's layers). An agent file is data:
JSON numbers, or NumPy arrays read with ``allow_pickle=False``; nothing in it is called. (SB3's own
``model.zip`` holds pickled objects and is never read here.)

At each pass :class:`LearnedPolicy` does what the environment does around the agent (one placement per
job, the platform's default: MFP on the torus): while one of the first K waiting jobs fits, it computes
the observation (:mod:`torus_sim.policies.agent_observation`, the same code as the environment) and
starts the job the agent picks; the agent waits, or picks a job that does not fit, and the pass ends,
unless nothing runs, in which case the first waiting job starts if it fits (never a stalled machine).
The agent must have been trained with the observation this platform gives (same K, same number of
feasible torus sizes); otherwise the run is refused with a sentence.

References:
    Zhang et al., RLScheduler, SC'20 (a trained scheduler deployed on held-back traces); BGL-FAULT §5.2.1 (P_f).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from failure_logs.events import FailureLog
from torus_sim.core.errors import ConfigurationError
from torus_sim.policies.agent_observation import (
    JOB_FEATURES,
    ObservationShape,
    feasible_size_counts,
    fitting_slots,
    job_feature,
    observe,
)
from torus_sim.policies.base import Policy, Start

__all__ = ["AGENT_KINDS", "LearnedPolicy", "SavedAgent", "linear_probabilities", "read_agent", "write_linear_agent"]

AGENT_KINDS = ("linear-softmax", "mlp")
"""The agent files :func:`read_agent` reads: JSON of a linear scorer, NPZ of a multilayer perceptron."""

_ACTIVATIONS = {"tanh": np.tanh, "relu": lambda x: np.maximum(x, 0.0)}


def linear_probabilities(
    observation: np.ndarray, fits: np.ndarray, weights: np.ndarray, queue_slots: int, per_slot: int = len(JOB_FEATURES)
) -> tuple[np.ndarray, np.ndarray]:
    """The linear softmax scorer: each slot's score is ``w . [its features, the platform's features, 1]``.

    Args:
        observation: float ``(L,)``.
        fits: bool ``(K,)``, the slots that can start (at least one True).
        weights: float ``(F + G + 1,)``.
        queue_slots: K.
        per_slot: F, values per slot (the base features and any extra ones).

    Returns:
        ``(probabilities over the K slots, zero where a job does not fit; the inputs (K, F + G + 1))``.
    """
    features = per_slot
    jobs = observation[: queue_slots * features].reshape(queue_slots, features)
    rest = observation[queue_slots * features :]
    x = np.hstack([jobs, np.tile(rest, (queue_slots, 1)), np.ones((queue_slots, 1))])
    scores = np.where(fits, x @ weights, -np.inf)
    scores -= scores[fits].max()
    exponentials = np.where(fits, np.exp(scores), 0.0)
    return exponentials / exponentials.sum(), x


@dataclass(frozen=True)
class SavedAgent:
    """A trained agent read from its file.

    Attributes:
        kind: one of :data:`AGENT_KINDS`.
        queue_slots: K it was trained with.
        max_walltime: seconds, its observation's walltime scale (the training log's largest).
        observation_length: values in the observations it was trained on.
        layers: ``((weight (out, in), bias (out,)), ...)``: the linear scorer's weights as one ``(1, L')``
            layer, or the perceptron's hidden layers followed by its action layer.
        activation: the hidden layers' activation (``tanh`` or ``relu``; unused by the linear scorer).
        source: the file.
        backfill: the backfilling around it in training (``SchedulingEnv(backfill=...)``), the policy's default.
        features: its extra per-job features (``SchedulingEnv(job_features=...)``), by name.
        max_user: the ``user`` feature's scale.
    """

    kind: str
    queue_slots: int
    max_walltime: float
    observation_length: int
    layers: tuple
    activation: str = "tanh"
    source: str = ""
    backfill: str = "none"
    features: tuple = ()
    max_user: int = 1

    @property
    def per_slot(self) -> int:
        """Values per queue slot in its observations."""
        return len(JOB_FEATURES) + len(self.features)

    def choose(self, observation: np.ndarray, fits: list[bool]) -> int | None:
        """The slot the agent starts, or None (it waits).

        The linear scorer takes the best-scored fitting job (its greedy choice in the environment); the
        perceptron takes the best of its logits over the fitting slots and the wait (MaskablePPO's
        deterministic choice, invalid actions masked).
        """
        slots = self.queue_slots
        mask = np.zeros(slots, dtype=bool)
        mask[: len(fits)] = fits
        if self.kind == "linear-softmax":
            probabilities, _ = linear_probabilities(observation, mask, self.layers[0][0][0], slots, self.per_slot)
            return int(np.argmax(probabilities))
        x = observation.astype(np.float32)
        activation = _ACTIVATIONS[self.activation]
        for weight, bias in self.layers[:-1]:
            x = activation(weight @ x + bias)
        weight, bias = self.layers[-1]
        logits = weight @ x + bias
        logits = np.where(np.append(mask, True), logits, -np.inf)
        action = int(np.argmax(logits))
        return None if action == slots else action


def _whole(value, what: str, path: str) -> int:
    number = int(value) if isinstance(value, (int, np.integer)) or (isinstance(value, float) and value.is_integer()) else None
    if number is None or isinstance(value, bool) or number < 1:
        raise ConfigurationError(f"agent file {path}: {what} must be a whole number >= 1, got {value!r}")
    return number


def _positive(value, what: str, path: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)) or not 0 < float(value) < math.inf:
        raise ConfigurationError(f"agent file {path}: {what} must be a positive number, got {value!r}")
    return float(value)


def read_agent(path: str | Path) -> SavedAgent:
    """Read an agent file (data only: JSON, or NPZ with ``allow_pickle=False``).

    Args:
        path: ``.json`` (``kind`` linear-softmax: ``weights``, ``queue_slots``, ``max_walltime``,
            ``observation_length``) or ``.npz`` (``kind`` mlp: ``layer_<i>_weight``/``layer_<i>_bias``,
            ``action_weight``/``action_bias``, ``activation``, the same three numbers).

    Returns:
        The agent.

    Raises:
        ConfigurationError: a missing file, another format, or a field missing or of the wrong shape (named,
            with the file).
    """
    path = Path(path)
    if not path.is_file():
        raise ConfigurationError(f"agent file {path} not found (python -m torus_sim.rl.train or torus_sim.rl.sb3 write one)")
    if path.suffix == ".json":
        try:
            data = json.loads(path.read_text())
        except (ValueError, UnicodeDecodeError) as error:
            raise ConfigurationError(f"agent file {path}: not JSON ({error})") from None
        if not isinstance(data, dict) or data.get("kind") != "linear-softmax":
            raise ConfigurationError(
                f"agent file {path}: kind must be 'linear-softmax' (written by python -m torus_sim.rl.train); re-run the training to add it"
            )
        arrays = {"weights": data.get("weights")}
        numbers = data
    elif path.suffix == ".npz":
        try:
            with np.load(path, allow_pickle=False) as loaded:
                arrays = {name: loaded[name] for name in loaded.files}
        except (OSError, ValueError) as error:
            raise ConfigurationError(f"agent file {path}: not a NumPy .npz of arrays ({error})") from None
        if str(arrays.get("kind", "")) != "mlp":
            raise ConfigurationError(f"agent file {path}: kind must be 'mlp' (written by torus_sim.rl.sb3.export_policy)")
        numbers = {name: arrays[name].item() for name in ("queue_slots", "max_walltime", "observation_length") if name in arrays}
    else:
        raise ConfigurationError(
            f"agent file {path}: expected .json (torus_sim.rl.train) or .npz (torus_sim.rl.sb3), got {path.suffix!r}"
        )
    for name in ("queue_slots", "max_walltime", "observation_length"):
        if name not in numbers:
            raise ConfigurationError(f"agent file {path}: {name} is missing")
    slots = _whole(numbers["queue_slots"], "queue_slots", str(path))
    length = _whole(numbers["observation_length"], "observation_length", str(path))
    scale = _positive(numbers["max_walltime"], "max_walltime", str(path))
    features = numbers.get("job_features", arrays.get("job_features", []))
    if isinstance(features, np.ndarray) and features.dtype.kind == "U":
        features = features.reshape(-1).tolist()
    if not isinstance(features, list) or not all(isinstance(name, str) for name in features):
        raise ConfigurationError(f"agent file {path}: job_features must be a list of feature names")
    features = tuple(features)
    for name in features:
        job_feature(name)  # a sentence for a feature this installation does not offer
    max_user = numbers.get("max_user", arrays.get("max_user", 1))
    max_user = _whole(max_user.item() if isinstance(max_user, np.ndarray) else max_user, "max_user", str(path))
    common = {"source": str(path), "features": features, "max_user": max_user}
    per_slot = len(JOB_FEATURES) + len(features)
    if path.suffix == ".json":
        try:
            weights = np.asarray(arrays["weights"], dtype=np.float64)
        except (TypeError, ValueError):
            raise ConfigurationError(f"agent file {path}: weights must be a list of numbers") from None
        expected = per_slot + length - slots * per_slot + 1
        if weights.shape != (expected,) or not np.all(np.isfinite(weights)):
            raise ConfigurationError(f"agent file {path}: weights must be {expected} finite numbers, got shape {weights.shape}")
        backfill = str(numbers.get("backfill", "none"))
        return SavedAgent(
            "linear-softmax", slots, scale, length, ((weights.reshape(1, -1), np.zeros(1)),), backfill=backfill, **common
        )
    activation = str(arrays.get("activation", "tanh"))
    if activation not in _ACTIVATIONS:
        raise ConfigurationError(f"agent file {path}: activation must be one of {', '.join(_ACTIVATIONS)}, got {activation!r}")
    names = []
    while f"layer_{len(names)}_weight" in arrays:
        names.append(f"layer_{len(names)}")
    layers, width = [], length
    for name in [*names, "action"]:
        weight, bias = arrays.get(f"{name}_weight"), arrays.get(f"{name}_bias")
        if weight is None or bias is None or weight.ndim != 2 or weight.shape[1] != width or bias.shape != (weight.shape[0],):
            raise ConfigurationError(f"agent file {path}: {name}_weight / {name}_bias missing or of the wrong shape")
        layers.append((weight.astype(np.float32), bias.astype(np.float32)))
        width = weight.shape[0]
    if width != slots + 1:
        raise ConfigurationError(
            f"agent file {path}: the action layer has {width} outputs, K + 1 = {slots + 1} expected (one placement per job)"
        )
    return SavedAgent(
        "mlp", slots, scale, length, tuple(layers), activation, backfill=str(arrays.get("backfill", "none")), **common
    )


def write_linear_agent(
    path: Path, weights: np.ndarray, shape: ObservationShape, trained_on: dict, backfill: str = "none"
) -> None:
    """Write a linear softmax agent's file (JSON: its weights, the observation's constants, its backfilling).

    ``trained_on`` (the training scenario's fields as a dict) is kept under the file's ``scenario`` key.
    """
    record = {
        "kind": "linear-softmax",
        "backfill": backfill,
        "queue_slots": shape.queue_slots,
        "max_walltime": shape.max_walltime,
        "observation_length": shape.length,
        "job_features": list(shape.extra_features),
        "max_user": shape.max_user,
        "weights": np.asarray(weights).tolist(),
        "scenario": trained_on,
    }
    path.write_text(json.dumps(record, indent=1))


class LearnedPolicy(Policy):
    """A saved agent's choices at every pass (module docstring).

    Args:
        agent: the agent file (:func:`read_agent`), relative to the working directory.
        risk_predictor: the failure-risk feature's predictor, not yet attached (offered by the wiring:
            :func:`torus_sim.experiments.extensions.build_risk_predictor`, the scenario's predictor or ``history``, as the
            environment's); None: every risk is 0.
        backfill: ``none``, or ``easy`` / ``rlscheduler``: the agent may pick a job that does not fit, which
            is then kept and backfilled around until it starts; None: the agent file's (what it was trained with).

    Raises:
        ConfigurationError: see :func:`read_agent`; at the start of a run, an observation of another
            length than the agent's.
    """

    name = "learned"
    workloads = ("online",)

    def __init__(self, agent: str, risk_predictor=None, backfill: str | None = None) -> None:
        from torus_sim.policies.priority import BACKFILLING, PriorityPolicy

        if not isinstance(agent, (str, Path)):
            raise ConfigurationError(f"learned policy: agent must be a file path, got {agent!r}")
        self.agent = read_agent(agent)
        backfill = self.agent.backfill if backfill is None else backfill
        if not isinstance(backfill, str) or backfill not in BACKFILLING:
            raise ConfigurationError(f"learned policy: backfill must be one of {', '.join(BACKFILLING)}; got {backfill!r}")
        self.backfill = backfill
        self._backfiller = PriorityPolicy("fcfs", backfill) if backfill != "none" else None
        self._committed = None
        self._risk_predictor = risk_predictor
        self._predictor = None
        self._shape: ObservationShape | None = None
        self._span = (0.0, 0.0)

    def settings(self) -> str:
        """The agent file and its kind."""
        return f"agent {self.agent.source} ({self.agent.kind}, K = {self.agent.queue_slots}), backfilling {self.backfill}"

    def attach(self, context) -> None:
        """Size the observation for the platform (refuse another length), take the workload's span, build the risk predictor."""
        super().attach(context)
        platform = context.platform
        agent = self.agent
        shape = ObservationShape(
            agent.queue_slots,
            platform.capacity,
            agent.max_walltime,
            feasible_size_counts(platform),
            agent.features,
            agent.max_user,
        )
        if shape.length != self.agent.observation_length:
            raise ConfigurationError(
                f"agent {self.agent.source} was trained on observations of {self.agent.observation_length} values; this "
                f"{platform.kind} gives {shape.length} (K = {shape.queue_slots}, {len(shape.sizes)} torus sizes): train it on this platform"
            )
        self._shape = shape
        self._span = context.workload.span
        log = context.failure_log
        if self._risk_predictor is not None and not (
            isinstance(log, FailureLog) and len(log) == 0
        ):  # no failures: every risk is 0
            self._predictor = self._risk_predictor
            self._predictor.attach(log, context.rng, platform.capacity)

    def observe_failure(self, at: float, node: int) -> None:
        """Pass a failure on to the risk predictor."""
        if self._predictor is not None:
            self._predictor.observe_failure(at, node)

    def plan(self, view):
        """Start the agent's picks while a visible job fits; never leave the machine stalled."""
        queue = view.queue
        slots = self.agent.queue_slots
        while queue:
            job = self._committed
            if job is not None:  # the agent's pick that did not fit: start it when it fits, backfill around it till then
                if job in queue:
                    allocation = view.place(job)
                    if allocation is None:
                        yield from self._backfiller.backfill_around(view, job)
                        return
                    yield Start(job, allocation)
                self._committed = None
                continue
            fits = fitting_slots(queue, slots, view.free_count(), view.open_sizes())
            choices = fits if self._backfiller is None else [True] * len(fits)
            if any(choices):
                observation = observe(
                    self._shape, view.now, queue, view.platform, view.down_count(), fits, view.place, self._predictor, self._span
                )
                slot = self.agent.choose(observation, choices)
                if slot is not None and slot < len(fits) and choices[slot]:
                    job = queue[slot]
                    if fits[slot]:
                        yield Start(job, view.place(job))
                    else:
                        self._committed = job
                    continue
            if view.running:
                return
            allocation = view.place(queue.head)  # nothing runs: start the first job, as the environment does
            if allocation is None:
                return
            yield Start(queue.head, allocation)
