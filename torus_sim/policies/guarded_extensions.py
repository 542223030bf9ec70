"""A plug-in placement or failure predictor behind the guard: its failures named, its answers checked.

A placement and a failure predictor are called from inside a policy's pass (Krevat's scheduler asks
its placement; a fault-aware placement asks its predictor), so what they raise would otherwise be
reported as the policy's. The runner wraps a plug-in's (never a built-in's) in
:class:`GuardedPlacement` / :class:`GuardedPredictor`: each call is made through the guard, so a failure
ends the run with a sentence naming the placement or the predictor and the call
(:class:`~torus_sim.inputs.untrusted.ExtensionFailure`, turned into the run's PolicyError), and each answer is
checked where it enters the engine: a partition that is not one of the free candidates, nodes that
are not free, probabilities of the wrong shape, NaN or outside [0, 1].

References:
    BGL-FAULT §3.2 (a predictor's probability per node and window), §5.2 (placements);
    docs/policies/README.md ("What a plug-in may do").
"""

from __future__ import annotations

import math

import numpy as np

from predictors.base import FailurePredictor
from torus_sim.inputs.untrusted import ExtensionFailure, PassTimeout, extension_name, is_builtin_extension, raised_text
from torus_sim.policies.placement import PlacementPolicy

__all__ = ["GuardedPlacement", "GuardedPredictor", "guard_placement", "guard_predictor"]


def _call(kind: str, call: str, function, *args):
    """``function(*args)``, any failure an :class:`ExtensionFailure` naming ``kind`` and ``call``."""
    try:
        return function(*args)
    except (KeyboardInterrupt, PassTimeout, ExtensionFailure):
        raise
    except BaseException as error:  # noqa: BLE001 - plug-in code: SystemExit and bare BaseException too
        raise ExtensionFailure(kind, f"{call} {raised_text(error)}") from None


def _integer(value) -> int | None:
    """``value`` as an int when it is an integer (Python or numpy, not a bool), else None."""
    if isinstance(value, (bool, np.bool_)):
        return None
    if isinstance(value, (int, np.integer)):
        return int(value)
    return None


class GuardedPlacement(PlacementPolicy):
    """A plug-in placement, each call guarded and each answer checked.

    Args:
        inner: the plug-in's placement.

    Raises:
        ExtensionFailure: from every method, when the plug-in raised or answered out of its contract.
    """

    guards_plugin = True  # the run counts as one with a plug-in (torus_sim.inputs.untrusted.is_builtin_extension)

    def __init__(self, inner: PlacementPolicy) -> None:
        self.inner = inner
        self.name = extension_name(inner)
        self.occupancy_only = getattr(inner, "occupancy_only", False) is True

    @property
    def predictor(self):
        """The placement's failure predictor (guarded too when it is a plug-in's)."""
        return getattr(self.inner, "predictor", None)

    def attach(self, log, rng, n_supernodes: int) -> None:  # noqa: D102
        _call("placement", "attach", self.inner.attach, log, rng, n_supernodes)

    def observe_failure(self, at: float, supernode: int) -> None:  # noqa: D102
        _call("placement", "observe_failure", self.inner.observe_failure, at, supernode)

    def choose(self, table, job, candidate_ids: np.ndarray, words: np.ndarray, now: float) -> int:  # noqa: D102
        chosen = _call("placement", "choose", self.inner.choose, table, job, candidate_ids, words, now)
        partition = _integer(chosen)
        if partition is None or not np.any(candidate_ids == partition):
            raise ExtensionFailure(
                "placement",
                f"choose returned {chosen!r} for job {job.job_id}, not one of the {len(candidate_ids)} free candidates",
            )
        return partition

    def place_in_order(self, table, jobs: list, words: np.ndarray, now: float) -> list[int]:  # noqa: D102
        placed = _call("placement", "place_in_order", self.inner.place_in_order, table, jobs, words, now)
        try:
            placed = list(placed)
        except TypeError:
            raise ExtensionFailure("placement", f"place_in_order returned {placed!r}, not a list of partition ids") from None
        if len(placed) > len(jobs):
            raise ExtensionFailure("placement", f"place_in_order returned {len(placed)} partitions for {len(jobs)} jobs")
        checked = []
        for job, chosen in zip(jobs, placed, strict=False):
            partition = _integer(chosen)
            if partition is None or not 0 <= partition < len(table.partitions) or table.sizes[partition] != job.partition_size:
                raise ExtensionFailure(
                    "placement",
                    f"place_in_order gave job {job.job_id} {chosen!r}, not a partition of its size {job.partition_size}",
                )
            checked.append(partition)
        return checked

    def choose_nodes(self, free_nodes: np.ndarray, job, now: float) -> np.ndarray:  # noqa: D102
        chosen = _call("placement", "choose_nodes", self.inner.choose_nodes, free_nodes, job, now)
        try:
            nodes = np.asarray(chosen)
        except Exception:  # noqa: BLE001 - anything that is no array is refused below
            nodes = np.asarray([])
        if (
            nodes.ndim != 1
            or nodes.dtype.kind not in "iu"
            or len(nodes) != job.partition_size
            or len(np.unique(nodes)) != len(nodes)
            or not np.all(np.isin(nodes, free_nodes))
        ):
            raise ExtensionFailure(
                "placement",
                f"choose_nodes returned {chosen!r} for job {job.job_id}: expected {job.partition_size} distinct free node ids",
            )
        return nodes.astype(np.int64, copy=False)


class GuardedPredictor(FailurePredictor):
    """A plug-in failure predictor, each call guarded and each answer checked (shape, NaN, [0, 1]).

    Args:
        inner: the plug-in's predictor.

    Raises:
        ExtensionFailure: from every method, when the plug-in raised or answered out of its contract.
    """

    guards_plugin = True

    def __init__(self, inner: FailurePredictor) -> None:
        super().__init__()
        self.inner = inner
        self.name = extension_name(inner)

    def attach(self, log, rng, n_supernodes: int) -> None:  # noqa: D102
        super().attach(log, rng, n_supernodes)
        _call("failure predictor", "attach", self.inner.attach, log, rng, n_supernodes)

    def observe_failure(self, at: float, supernode: int) -> None:  # noqa: D102
        _call("failure predictor", "observe_failure", self.inner.observe_failure, at, supernode)

    def _checked(self, call: str, values, length: int, boolean: bool = False) -> np.ndarray:
        try:
            array = np.asarray(values, dtype=float)
        except (TypeError, ValueError):
            array = None
        if array is None or array.shape != (length,):
            shape = getattr(array, "shape", None)
            raise ExtensionFailure(
                "failure predictor", f"{call} returned {type(values).__name__} of shape {shape}, expected ({length},)"
            )
        bad = ~np.isfinite(array) | (array < 0) | (array > 1)
        if boolean:
            bad |= (array != 0) & (array != 1)
        if np.any(bad):
            first = int(np.flatnonzero(bad)[0])
            kind = "true or false" if boolean else "a probability in [0, 1]"
            raise ExtensionFailure("failure predictor", f"{call} gave node {first} {array[first]!r}; each must be {kind}")
        return array.astype(bool) if boolean else array

    def supernode_probabilities(self, start: float, window: float) -> np.ndarray:  # noqa: D102
        values = _call("failure predictor", "supernode_probabilities", self.inner.supernode_probabilities, start, window)
        return self._checked("supernode_probabilities", values, self.n_supernodes)

    def supernode_alarms(self, start: float, window: float) -> np.ndarray:  # noqa: D102
        values = _call("failure predictor", "supernode_alarms", self.inner.supernode_alarms, start, window)
        return self._checked("supernode_alarms", values, self.n_supernodes, boolean=True)

    def failure_probabilities(self, supernodes: np.ndarray, start: float, window: float) -> np.ndarray:  # noqa: D102
        values = _call("failure predictor", "failure_probabilities", self.inner.failure_probabilities, supernodes, start, window)
        return self._checked("failure_probabilities", values, len(supernodes))

    def partition_failure_probability(self, supernodes: np.ndarray, start: float, window: float) -> float:  # noqa: D102
        value = _call(
            "failure predictor",
            "partition_failure_probability",
            self.inner.partition_failure_probability,
            supernodes,
            start,
            window,
        )
        try:
            probability = float(value)
        except (TypeError, ValueError):
            probability = math.nan
        if not 0.0 <= probability <= 1.0:
            raise ExtensionFailure(
                "failure predictor", f"partition_failure_probability returned {value!r}, not a probability in [0, 1]"
            )
        return probability


def guard_placement(placement):
    """A plug-in placement wrapped in :class:`GuardedPlacement`; a built-in one (or None) as it is."""
    if placement is None or is_builtin_extension(placement) or isinstance(placement, GuardedPlacement):
        return placement
    return GuardedPlacement(placement)


def guard_predictor(predictor):
    """A plug-in failure predictor wrapped in :class:`GuardedPredictor`; a built-in one (or None) as it is."""
    if predictor is None or is_builtin_extension(predictor) or isinstance(predictor, GuardedPredictor):
        return predictor
    return GuardedPredictor(predictor)
