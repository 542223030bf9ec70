"""Example 3: a runtime predictor from the median accuracy of a user's last jobs."""

from collections import defaultdict, deque
from statistics import median

from torus_sim.api import RuntimePredictor


class UserMedianRatio(RuntimePredictor):
    """Predicted runtime = walltime x the median runtime / walltime of the user's last ``history`` jobs.

    A user with no finished job yet gets the walltime (the user estimate). The engine caps every
    prediction at the walltime (the kill time).

    Args:
        history: how many of a user's last finished jobs count, >= 1.

    References:
        Tsafrir, Etsion, Feitelson, IEEE TPDS 18(6), 2007 (predictions from a user's recent jobs).
    """

    name = "user-median"

    def __init__(self, history: int = 5) -> None:
        if history < 1:
            raise ValueError(f"history must be >= 1, got {history}")
        self.ratios = defaultdict(lambda: deque(maxlen=history))

    def predict(self, job) -> float:
        """Walltime x the user's median accuracy, seconds."""
        ratios = self.ratios.get(job.user_id)
        return job.walltime if not ratios else job.walltime * median(ratios)

    def observe_end(self, job) -> None:
        """Remember the finished job's runtime / walltime."""
        if job.walltime > 0:
            self.ratios[job.user_id].append(job.runtime / job.walltime)
