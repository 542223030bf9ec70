"""Failure predictors for fault-aware scheduling (BGL-FAULT §4).

Key components:
    FailurePredictor: base class (``attach``, ``observe_failure``, ``supernode_probabilities``,
        ``supernode_alarms``).
    NullPredictor: predicts nothing; the scheduler without prediction.
    OracleConfidencePredictor: the balancing predictor, confidence a (BGL-FAULT §4.1).
    OracleAccuracyPredictor: the tie-break predictor, accuracy a, optional p_f+ (BGL-FAULT §4.2).
    HistoryPredictor: learns per-supernode rates from past failures only.
    PREDICTORS: selection by name (``PREDICTORS.make("oracle-confidence", confidence=0.1)``).
"""

from predictors.base import PREDICTORS, FailurePredictor, NullPredictor
from predictors.history import HistoryPredictor
from predictors.oracle import OracleAccuracyPredictor, OracleConfidencePredictor

__all__ = [
    "PREDICTORS",
    "FailurePredictor",
    "HistoryPredictor",
    "NullPredictor",
    "OracleAccuracyPredictor",
    "OracleConfidencePredictor",
]
