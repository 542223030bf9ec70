"""Judging a failure predictor on a failure log, window by window, as the schedulers would ask it.

At the start t of each window [t, t + w) the predictor has seen every failure before t (through
``observe_failure``, as in a run) and is asked for each supernode's probability and alarm over the
window; the answer is compared with the supernodes that do fail in the window. Per window:

* precision = alarmed supernodes that fail / alarmed supernodes (NaN with no alarm);
* recall = alarmed supernodes that fail / supernodes that fail (NaN with no failure);
* precision at k = the share of the k most probable supernodes that fail, k = the supernodes that
  fail (the ranking's quality whatever the threshold; a random ranking scores the base rate);
* AUC = the probability that a failing supernode is ranked above a non-failing one (ties count
  half; 0.5 is a random ranking).

References:
    BGL-FAULT §3.2, §4 (a predictor answers "will this node fail within this window?"); Salfner,
    Lenk, Malek, "A survey of online failure prediction methods", ACM CSUR 42(3), 2010 (precision,
    recall, AUC for failure predictors).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from failure_logs.events import FailureLog
from predictors.base import FailurePredictor
from torus_sim.core.errors import ConfigurationError

__all__ = ["WEEK", "score_predictor", "summarize_scores"]

WEEK = 7 * 86400.0
"""One week, seconds: the default window."""


def score_predictor(
    predictor: FailurePredictor,
    log: FailureLog,
    n_supernodes: int,
    window: float = WEEK,
    start: float | None = None,
    end: float | None = None,
    rng: np.random.Generator | None = None,
) -> pd.DataFrame:
    """Score a predictor's alarms and ranking on consecutive windows of a failure log.

    Args:
        predictor: a fresh predictor (it is attached to ``log`` here; an oracle reads its future).
        log: the failures, supernode indices in ``[0, n_supernodes)``.
        n_supernodes: N.
        window: w > 0, seconds.
        start: first window start, seconds (the log's first failure when None).
        end: no window starts at or after it (the log's last failure when None).
        rng: the generator an oracle draws from (a fixed seed-0 generator when None).

    Returns:
        One row per window: ``start`` (seconds), ``failing`` (supernodes that fail in it),
        ``alarms``, ``hits`` (alarmed and failing), ``precision``, ``recall``, ``precision_at_k``,
        ``auc`` (NaN where undefined: no alarm, no failure, or every supernode failing).

    Raises:
        ConfigurationError: ``window`` <= 0 or an empty log.
    """
    if not window > 0:
        raise ConfigurationError(f"the scoring window must be positive seconds, got {window}")
    if not len(log):
        raise ConfigurationError("a predictor cannot be scored on an empty failure log")
    first, last = log.span
    start = first if start is None else float(start)
    end = last if end is None else float(end)
    predictor.attach(log, rng if rng is not None else np.random.default_rng(0), n_supernodes)
    seen = 0
    rows = []
    for at in np.arange(start, end, window):
        while seen < len(log) and log.failed_at[seen] < at:
            predictor.observe_failure(float(log.failed_at[seen]), int(log.supernodes[seen]))
            seen += 1
        inside = (log.failed_at >= at) & (log.failed_at < at + window)
        failing = np.zeros(n_supernodes, dtype=bool)
        failing[log.supernodes[inside]] = True
        probabilities = predictor.supernode_probabilities(float(at), window)
        alarms = predictor.supernode_alarms(float(at), window)
        count, alarmed, hits = int(failing.sum()), int(alarms.sum()), int((alarms & failing).sum())
        rows.append(
            {
                "start": float(at),
                "failing": count,
                "alarms": alarmed,
                "hits": hits,
                "precision": hits / alarmed if alarmed else np.nan,
                "recall": hits / count if count else np.nan,
                "precision_at_k": _precision_at_k(probabilities, failing),
                "auc": _auc(probabilities, failing),
            }
        )
    return pd.DataFrame(rows)


def _precision_at_k(probabilities: np.ndarray, failing: np.ndarray) -> float:
    """Share of the k most probable supernodes that fail (k = failing count; ties broken by index)."""
    k = int(failing.sum())
    if k == 0:
        return np.nan
    top = np.argsort(-probabilities, kind="stable")[:k]
    return float(failing[top].mean())


def _auc(probabilities: np.ndarray, failing: np.ndarray) -> float:
    """Mann-Whitney AUC of the probabilities for the failing supernodes (ties count half)."""
    positives, negatives = int(failing.sum()), int((~failing).sum())
    if positives == 0 or negatives == 0:
        return np.nan
    ranks = rankdata(probabilities)
    return float((ranks[failing].sum() - positives * (positives + 1) / 2) / (positives * negatives))


def summarize_scores(scores: pd.DataFrame, n_supernodes: int) -> dict[str, float]:
    """Means over the windows of a :func:`score_predictor` table (NaNs left out), and pooled precision / recall.

    Args:
        scores: the table.
        n_supernodes: N (for the base rate).

    Returns:
        ``windows``, ``mean_failing``, ``mean_alarms``, ``precision`` (pooled: hits / alarms over all
        windows), ``recall`` (pooled), ``precision_at_k``, ``auc`` (means over the windows where defined),
        and ``base_rate`` (mean share of supernodes failing in a window: a random ranking's precision at k).
    """
    alarms, hits, failing = scores["alarms"].sum(), scores["hits"].sum(), scores["failing"].sum()
    return {
        "windows": float(len(scores)),
        "mean_failing": float(scores["failing"].mean()),
        "mean_alarms": float(scores["alarms"].mean()),
        "precision": float(hits / alarms) if alarms else np.nan,
        "recall": float(hits / failing) if failing else np.nan,
        "precision_at_k": float(scores["precision_at_k"].mean()),
        "auc": float(scores["auc"].mean()),
        "base_rate": float(scores["failing"].mean() / n_supernodes),
    }
